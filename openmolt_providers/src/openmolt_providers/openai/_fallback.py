"""Plain JSON for an OpenAI-compatible server that rejects ``response_format``.

Servers that speak Chat Completions differ in what they take: some compile any JSON Schema into a
grammar, some know only ``json_object``, some refuse the field or one of its schemas with a 400
or 422. When a server other than api.openai.com refuses a request that asked for structured
output, the request is sent once more without it, with the system prompt the loop wrote for a
step without structured output (`ModelRequest.plain_system`: the command shapes, and the tools'
input schemas the reply schema carried). If that one succeeds, the provider remembers
it (`OpenAIProvider.plain_json`): from then on it asks that server for no structured output, its
dialect is None (so the loop reports mode ``off``), and a `ModelConfigWarning` says so once.
If the plain request fails too, its error is raised and nothing is remembered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_providers._body import encode

if TYPE_CHECKING:
	from openmolt_providers.openai import OpenAIProvider

__all__ = ["blames_format", "post"]

_REJECTED = frozenset({400, 415, 422, 501})
"""Statuses a server answers a request field it does not take with."""
_HINTS = ("response_format", "json_schema", "json_object", "grammar", "schema", "format")


def _format_key(payload: dict[str, Any]) -> str | None:
	if "response_format" in payload:
		return "response_format"
	if isinstance(payload.get("text"), dict) and "format" in payload["text"]:
		return "text.format"
	return None


def blames_format(exc: ProviderError) -> bool:
	"""Whether a server's refusal may be about the request's structured output.

	Not a prompt past the context window (vLLM's 400 "maximum context length"): asked again
	without the format, it is refused the same; the loop compacts on it instead.
	"""
	if exc.context_exceeded:
		return False
	if exc.status_code in _REJECTED:
		return True
	text = str(exc).lower()
	return exc.status_code is not None and any(hint in text for hint in _HINTS)


async def post(
	provider: OpenAIProvider,
	url: str,
	payload: dict[str, Any],
	model: str,
	plain_body: Callable[[], dict[str, Any]] | None = None,
) -> dict[str, Any]:
	"""Send one request body; without its structured output once more if the server refused it.

	Args:
		provider: The provider.
		url: The endpoint.
		payload: The request body.
		model: The model name.
		plain_body: Builds the body without structured output (called once the provider asks
			for plain JSON), with the prompt for it; None strips the format from ``payload``.

	Raises:
		ProviderError: The request failed (and without structured output too, when retried).
	"""
	body = encode(payload)
	try:
		return await provider.post(url, body, model=model)
	except ProviderError as exc:
		key = _format_key(payload)
		if provider.official or key is None or not blames_format(exc):
			raise
		first = exc
	provider.plain_json = True  # from here on the provider builds bodies without a format
	try:
		plain = plain_body() if plain_body is not None else _stripped(payload, key)
		data = await provider.post(url, encode(plain), model=model)
	except BaseException:
		provider.plain_json = False
		raise
	detail = str(first).split(": ", 1)[-1]
	provider.warn(
		model,
		"response_format",
		f"the server at {provider.base_url} rejected {key} ({detail}); this provider now asks "
		"it for plain JSON (the prompt describes the reply and every reply is checked)",
	)
	return data


def _stripped(payload: dict[str, Any], key: str) -> dict[str, Any]:
	plain = dict(payload)
	if key == "response_format":
		del plain["response_format"]
	else:
		plain["text"] = {k: v for k, v in plain["text"].items() if k != "format"}
		if not plain["text"]:
			del plain["text"]
	return plain
