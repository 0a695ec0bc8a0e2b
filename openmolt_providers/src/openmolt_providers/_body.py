"""Small helpers to build request bodies from the standard model_config without copying much."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from openmolt_core._support import LazyPattern

__all__ = [
	"EMPTY_TURN",
	"ROLE_CONTENT",
	"Turn",
	"Turns",
	"data_url",
	"encode",
	"keep",
	"last_key",
	"merge_options",
	"owned",
	"turn_text",
]


_SURROGATE = LazyPattern("[\ud800-\udfff]")

_KEPT: dict[int, tuple[Any, str | None]] = {}
"""``id(value)`` -> (the value, its JSON once written): the values `keep` was given."""

_KEPT_SIZE = 32  # values kept at most (a reply schema per tool set and dialect); then cleared

_KEPT_DEPTH = 3  # how deep in a body a kept value may sit: body.text.format.schema


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_dumps = _ENCODER.encode
_string = json.encoder.encode_basestring  # what the encoder writes for a str (ensure_ascii off)


def keep(value: Any) -> Any:
	"""Mark a JSON value that every request of a run sends unchanged: `encode` writes it once.

	The reply schema is the same dict at every step (the loop fits it once per tool set, as
	`openmolt_providers._schema.SchemaCache` relies on too) and the largest part of a body that
	does not grow: written once, it is not encoded again at each step (a 2 KB schema of one tool
	cost about as much as the rest of a 20-step body). The value must not change afterwards; it
	is recognised by identity, and at most `_KEPT_SIZE` values are kept.

	Args:
		value: A JSON value that a body holds at most `_KEPT_DEPTH` dicts deep.

	Returns:
		The value itself.
	"""
	if id(value) not in _KEPT:
		if len(_KEPT) >= _KEPT_SIZE:
			_KEPT.clear()
		_KEPT[id(value)] = (value, None)
	return value


_SHARED = (
	"a kept turn is shared by every request that holds the same turn, in every run of the process: "
	"build a new dict instead (dict(turn), or copy.deepcopy(body))"
)


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
	"""Refuse a change to a kept turn, naming the fix (`_SHARED`)."""
	raise TypeError(f"a request body's kept turn cannot be changed: {_SHARED}")


class Turn(dict[str, Any]):
	"""One plain turn of a conversation in an API's form, with its JSON written once (`Turns`).

	A dict like any other to whoever reads the body; `encode` writes its `text`. It is shared by
	every request that holds the same turn (another run's, another end user's), so it refuses a
	change with a `TypeError` that says to build a new dict, and nothing may change what it holds
	(a provider's public ``build`` hands its caller a copy: `owned`). A copy (`copy.copy`,
	`copy.deepcopy`, pickle) is a plain dict, free to change.

	Args:
		value: The turn as the API's converter built it.
	"""

	__slots__ = ("text",)
	__setitem__ = __delitem__ = __ior__ = _refuse
	clear = pop = popitem = setdefault = update = _refuse

	def __init__(self, value: dict[str, Any]) -> None:
		super().__init__(value)
		self.text = _dumps(value)

	def __copy__(self) -> dict[str, Any]:
		return dict(self)

	def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
		return {k: copy.deepcopy(v, memo) for k, v in self.items()}

	def __reduce__(self) -> Any:
		return (dict, (dict(self),))


def owned(body: dict[str, Any]) -> dict[str, Any]:
	"""A request body its caller may change: nothing in it is shared with another request.

	What a provider's public ``build`` returns (for tests and debugging): the kept turns and the
	kept reply schema are copied, so a change made to the body reaches no other request. The
	providers' own calls send the body they build, and never change it.

	Args:
		body: A body a provider built.
	"""
	return copy.deepcopy(body)


_TURNS_CHARS = 4_000_000
"""The most characters of turns (their text and JSON) every `Turns` together keeps; then they all
start again."""

_KEEPERS: list[Turns] = []
"""Every `Turns` (one or two per API): the characters they keep count together."""

_kept_chars = 0


class Turns:
	"""The API form of the plain turns of a conversation (text only), each built and encoded once.

	Every request re-sends the whole conversation, and its turns are JSON texts (commands,
	results) whose every quote JSON escapes: encoding them again at each step cost more than
	building the rest of the body, and grew with the run (about 1.3 µs a turn). A turn is a pure
	function of its role and text, so it is kept by them, for every run of the process, up to
	`_TURNS_CHARS` characters for all APIs together.

	Args:
		convert: The API's form of a plain turn, from its role and text (a new dict).
	"""

	__slots__ = ("_convert", "_kept")

	def __init__(self, convert: Callable[[str, str], dict[str, Any]]) -> None:
		self._convert = convert
		self._kept: dict[tuple[str, str], Turn] = {}
		_KEEPERS.append(self)

	def __call__(self, role: str, content: str) -> Turn:
		"""The turn of ``role`` with the text ``content``, in the API's form.

		Args:
			role: The message's role (``user``, ``assistant``).
			content: Its text.
		"""
		global _kept_chars
		key = (role, content)
		found = self._kept.get(key)
		if found is None:
			found = Turn(self._convert(role, content))
			size = len(content) + len(found.text)
			if _kept_chars + size > _TURNS_CHARS:
				for keeper in _KEEPERS:
					keeper._kept.clear()
				_kept_chars = 0
			self._kept[key] = found
			_kept_chars += size
		return found


def _role_content(role: str, content: str) -> dict[str, Any]:
	"""A turn of text as both OpenAI APIs hold it: Responses' ``input``, Chat Completions' ``messages``."""
	return {"role": role, "content": content}


ROLE_CONTENT = Turns(_role_content)
"""The plain turns of OpenAI's Responses and Chat Completions APIs: one form, so one keeper.

A turn both APIs send (a server that falls back from Responses to Chat Completions, or two
providers of the process on different APIs) is built, encoded and counted once.
"""


def _text(value: Any, depth: int) -> str:
	"""The JSON of ``value``, byte for byte `_dumps`', with kept values and turns written once."""
	kind = type(value)
	if kind is Turn:
		return value.text  # type: ignore[no-any-return]  # a Turn's text is a str
	kept = _KEPT.get(id(value))
	if kept is not None and kept[0] is value:
		text = kept[1]
		if text is None:
			text = _dumps(value)
			_KEPT[id(value)] = (value, text)
		return text
	if kind is str:
		return _string(value)
	if depth < _KEPT_DEPTH:
		if kind is dict:
			try:
				items = [f"{_string(k)}:{_text(v, depth + 1)}" for k, v in value.items()]
			except TypeError:  # a key that is no str (JSON writes it so) or a value that is no JSON
				return _dumps(value)
			return "{" + ",".join(items) + "}"
		if kind is list and depth == 1 and Turn in map(type, value):  # the conversation
			return "[" + ",".join([_text(v, 2) for v in value]) + "]"
	return _dumps(value)


def encode(body: dict[str, Any]) -> bytes:
	"""Serialize a request body: UTF-8 JSON without the spaces after ``,`` and ``:``.

	`json.dumps`' default separators add two bytes per key and one per list item: about
	170 bytes on an agent's first request, sent again with every step. A lone surrogate (from a
	message a caller built by hand: the loop's own state never holds one) is sent as U+FFFD, so a
	body always encodes. The values given to `keep` (the reply schema) are written once and
	reused, in the same bytes, and so is each `Turn`'s.
	"""
	text = _text(body, 0)
	try:
		return text.encode()
	except UnicodeEncodeError:
		return _SURROGATE().sub("\ufffd", text).encode()


def merge_options(body: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
	"""Merge ``provider_options`` into a body: top-level keys win, nested dicts merge one level.

	So ``{"reasoning": {"summary": "auto"}}`` keeps the effort that ``thinking`` set, and
	``{"temperature": 0.1}`` replaces the mapped value.
	"""
	for key, value in options.items():
		current = body.get(key)
		if isinstance(value, dict) and isinstance(current, dict):
			body[key] = {**current, **value}
		else:
			body[key] = value
	return body


EMPTY_TURN = "(empty answer)"
"""What a turn without text is sent as where the API refuses an empty one (Anthropic, Gemini)."""


def turn_text(text: str) -> str:
	"""A turn's text as sent where an empty one is refused: `EMPTY_TURN` for no text.

	A reply with no text (refused, blocked, only a native call) is kept in the history as it
	came, empty; Anthropic answers the next request 400 ("all messages must have non-empty
	content") and Gemini too (an empty text part has no data), so every later step failed.

	Args:
		text: The turn's text.
	"""
	return text if text and not text.isspace() else EMPTY_TURN  # `strip` without its copy


def data_url(media_type: str, data: str) -> str:
	"""A ``data:`` URL for base64 content."""
	return f"data:{media_type};base64,{data}"


def last_key(body: dict[str, Any], key: str) -> dict[str, Any]:
	"""Move the growing conversation to the end of the body, after every fixed field.

	JSON keeps dict order, so the reply schema, tools and settings then sit in the byte-identical
	prefix that the next request repeats, and only the end of the body changes between steps.
	"""
	if key in body:
		body[key] = body.pop(key)
	return body
