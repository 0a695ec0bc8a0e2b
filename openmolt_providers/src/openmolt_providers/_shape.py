"""Reading a reply whose shape is not the API's: one clear `ProviderError`, never a crash.

A server that speaks an API almost (a compatible server, a gateway, a proxy that rewrites
replies) can send a reply with a field of another type: ``"choices": {}``, a finish reason that
is a list, a token count of ``"12k"`` or ``-5``. Read as it came, such a field raised
``TypeError: 'int' object is not subscriptable`` from inside a parser, which names neither the
field nor the fix. The readers here check each field they read (`fields`, `items`, `word`,
`tokens`) and raise `BadReply` naming it; `reads_replies` turns that, and any other slip of a
parser on a reply it did not expect, into a `ProviderError` that names the provider, the model,
the API and the field.

A token count must be a whole, non-negative number: a negative one would lower what a run has
spent, and so lift its budget (``max_cost``, ``max_tokens``).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from openmolt_core.errors import ProviderError

if TYPE_CHECKING:
	from openmolt_providers._common import HTTPProvider
	from openmolt_providers._sse import SSEvent

__all__ = [
	"BadReply",
	"TooDeep",
	"decoded",
	"event_data",
	"fields",
	"items",
	"not_json",
	"position",
	"reads_replies",
	"reads_stream",
	"tokens",
	"word",
]

_P = ParamSpec("_P")
_T = TypeVar("_T")

_SLIPS = (TypeError, AttributeError, KeyError, IndexError, ValueError)
"""What a parser raises when a field has another type than it reads (a list for a dict...;
``dict("abc")`` raises ValueError)."""

_EMPTY: Mapping[str, Any] = {}


class BadReply(Exception):
	"""A field of a reply that is not what the API sends.

	Args:
		where: The field's path in the reply (``usage.prompt_tokens``, ``choices[0]``).
		value: What it held.
		expected: What the API sends there (``a JSON object``, ``a whole number of tokens``).
	"""

	def __init__(self, where: str, value: Any, expected: str) -> None:
		super().__init__(where)
		self.where = where
		self.value = value
		self.expected = expected


class TooDeep(ValueError):
	"""JSON text nested too deeply to decode (`decoded`): JSON, yet not readable here."""


def not_json(exc: ValueError) -> str:
	"""What an error says of text `decoded` refused: ``nested too deeply to read`` or ``not JSON``.

	Args:
		exc: The error `decoded` raised.
	"""
	return "JSON nested too deeply to read" if isinstance(exc, TooDeep) else "not JSON"


def decoded(text: str | bytes) -> Any:
	"""JSON text of a reply (a body, a stream's event, a streamed tool input) decoded.

	Python's decoder recurses per level of nesting: text nested thousands of levels deep
	(``[[[[...]]]]``) raised `RecursionError`, which no reader of replies expects. It is text
	that cannot be read as JSON here, as a syntax error is.

	Raises:
		ValueError: The text is not JSON; `TooDeep` when it nests too deeply to decode.
	"""
	try:
		return json.loads(text)
	except RecursionError:
		raise TooDeep("JSON nested too deeply to decode") from None


def event_data(provider: HTTPProvider, model: str, event: SSEvent) -> Any:
	"""A stream event's data, decoded (`decoded`).

	Raises:
		ProviderError: It is not JSON. The event's name, the server's text, is quoted masked
			(`HTTPProvider.scrub`) and short.
	"""
	try:
		return decoded(event.data)
	except ValueError as exc:
		name = _cut(provider.scrub(event.event), 60)
		raise ProviderError(
			f"the stream sent an event that is {not_json(exc)} ({name!r}); is `base_url` a server that "
			"speaks this API, or is a proxy in between changing what it sends?",
			provider=provider.name,
			model=model,
		) from exc


def fields(value: Any, where: str) -> Mapping[str, Any]:
	"""A JSON object of a reply; none (``null`` or absent): an empty one.

	Raises:
		BadReply: It is something else.
	"""
	if value is None:
		return _EMPTY
	if not isinstance(value, dict):
		raise BadReply(where, value, "a JSON object")
	return value


def items(value: Any, where: str) -> list[Any]:
	"""A JSON array of a reply; none: an empty one.

	Raises:
		BadReply: It is something else.
	"""
	if value is None:
		return []
	if not isinstance(value, list):
		raise BadReply(where, value, "a JSON array")
	return value


def word(value: Any, where: str) -> str | None:
	"""A string of a reply (a finish reason, a type); none: None.

	Raises:
		BadReply: It is something else.
	"""
	if value is None or isinstance(value, str):
		return value
	raise BadReply(where, value, "a string")


def tokens(usage: Mapping[str, Any], key: str, where: str) -> int:
	"""A token count of a usage object; none (``null`` or absent): 0.

	A whole number written as a float (``12.0``) or a string of digits (``"12"``, some servers)
	is read as the number it writes.

	Args:
		usage: The usage object (or one of its details).
		key: The count's field.
		where: The object's path in the reply, for the error (``usage``).

	Raises:
		BadReply: It is no whole number, or it is negative.
	"""
	value = usage.get(key)
	if value is None:
		return 0
	count: int | None = None
	if isinstance(value, int) and not isinstance(value, bool):
		count = value
	elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
		count = int(value)
	elif isinstance(value, str) and value.isascii() and value.isdigit():
		count = int(value)
	if count is None or count < 0:
		raise BadReply(f"{where}.{key}", value, "a whole, non-negative number of tokens")
	return count


def position(value: Any, where: str = "index") -> int:
	"""A content block's index in a stream's event (a whole, non-negative number).

	Raises:
		BadReply: It is something else.
	"""
	if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
		return value
	raise BadReply(where, value, "a whole, non-negative number")


def shape_error(
	provider: HTTPProvider, model: str, api: str, exc: Exception, what: str = "reply"
) -> ProviderError:
	"""The `ProviderError` of a reply (or stream) that is not the API's shape.

	Args:
		provider: The provider that was asked (its ``scrub`` masks the key in what is quoted).
		model: The model asked.
		api: The API's name (``Chat Completions``).
		exc: The `BadReply`, or the error a parser raised on a field of another type.
		what: ``reply`` or ``stream``.
	"""
	if isinstance(exc, BadReply):
		why = f"{exc.where} is {_cut(provider.scrub(repr(exc.value)), 80)}, not {exc.expected}"
	else:
		why = _cut(provider.scrub(f"{type(exc).__name__}: {exc}"), 200)
	return ProviderError(
		f"the {what} does not have the shape of the {api} API ({why}). Is `base_url` a server "
		"that speaks another API, or is a proxy in between changing what it sends?",
		provider=provider.name,
		model=model,
	)


def _cut(text: str, limit: int) -> str:
	# Masked first (`HTTPProvider.scrub`), then cut: no secret is left as a prefix at the cut.
	return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def reads_replies(
	api: str,
) -> Callable[[Callable[_P, _T]], Callable[_P, _T]]:
	"""Decorate a parser ``(provider, model, ...)`` of an ``api`` reply: see `shape_error`."""

	def decorate(parse: Callable[_P, _T]) -> Callable[_P, _T]:
		@functools.wraps(parse)
		def read(*args: _P.args, **kwargs: _P.kwargs) -> _T:
			try:
				return parse(*args, **kwargs)
			except (BadReply, *_SLIPS) as exc:
				provider, model = args[0], args[1]
				raise shape_error(provider, model, api, exc) from exc  # type: ignore[arg-type]

		return read

	return decorate


def reads_stream(
	api: str,
) -> Callable[[Callable[_P, AsyncIterator[_T]]], Callable[_P, AsyncIterator[_T]]]:
	"""Decorate a stream reader ``(provider, request)`` of an ``api``: see `shape_error`."""

	def decorate(stream: Callable[_P, AsyncIterator[_T]]) -> Callable[_P, AsyncIterator[_T]]:
		@functools.wraps(stream)
		async def read(*args: _P.args, **kwargs: _P.kwargs) -> AsyncIterator[_T]:
			try:
				async for chunk in stream(*args, **kwargs):
					yield chunk
			except (BadReply, *_SLIPS) as exc:
				provider, request = args[0], args[1]
				model = str(getattr(request, "model", ""))
				raise shape_error(provider, model, api, exc, "stream") from exc  # type: ignore[arg-type]

		return read

	return decorate
