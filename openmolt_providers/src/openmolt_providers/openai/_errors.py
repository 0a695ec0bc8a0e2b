"""An error an OpenAI-compatible server sends in place of a reply, streamed or whole.

OpenRouter documents that an error met while the model writes its answer comes with status 200
and the error in the body (``{"error": {"code": 502, "message": ...}}``), in a stream's event or
in the whole reply; vLLM and LiteLLM do the same. Read as a reply, it was an empty answer: the
model was told it answered nothing, a step was spent, and no retry or fallback model was tried.
`reply_error` makes it the `ProviderError` the status it names would have been. vLLM's own
error shape (``ErrorResponse``) is the body itself, marked ``"object": "error"`` (`body_error`);
an error that names no status in numbers but a rate limit or a server error in words (OpenAI's
``type`` and ``code``, vLLM's ``type``) stands for that status, retried (`RETRY_WORDS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_providers._common import (
	reply_failure,
)

if TYPE_CHECKING:
	from openmolt_core.llm import Usage
	from openmolt_providers.openai import OpenAIProvider

__all__ = ["RETRY_WORDS", "body_error", "reply_error"]


def reply_error(
	provider: OpenAIProvider, model: str, error: Any, what: str, usage: Usage | None = None
) -> ProviderError:
	"""The error a body's ``error`` stands for (a window error when it says the input is too long).

	Args:
		provider: The provider (its `scrub` masks the key in the message).
		model: The model.
		error: The body's ``error`` (an object with ``code``/``message``, or text).
		what: What failed, for the message (``the stream``, ``the reply``).
		usage: What the body reports it was billed for (its ``usage`` beside the error); None
			when it reports nothing.
	"""
	status = _status(error)
	why = provider.scrub(_message(error))
	return reply_failure(provider, model, what, why, status, _code(error), usage=usage)


def body_error(data: dict[str, Any]) -> Any:
	"""The error a body holds in place of a reply, or None.

	Its ``error``, or the body itself when it is one (vLLM's ``{"object": "error", "message":
	..., "type": ..., "code": 404}``).

	Args:
		data: The reply's body, or a stream's chunk.
	"""
	error = data.get("error")
	if error:
		return error
	return data if data.get("object") == "error" else None


RETRY_WORDS = {
	"rate_limit_exceeded": 429,
	"rate_limit_error": 429,
	"too_many_requests": 429,
	"server_error": 500,
	"internalservererror": 500,
	"service_unavailable": 503,
	"serviceunavailableerror": 503,
}
"""The statuses an error's ``code`` or ``type`` names in words when another try may pass: a
rate limit or the server's trouble. OpenAI's (API reference, "Error codes": ``server_error``,
``rate_limit_exceeded``; ``too_many_requests`` is a Responses stream's rate-limit event,
openai/openai-dotnet#881) and vLLM's (``InternalServerError``...). ``insufficient_quota`` (a 429
no retry passes) is not one; neither is a request's own fault, which fails as it is."""


def _status(error: Any) -> int | None:
	"""The HTTP status an error names (OpenRouter, vLLM: ``error.code``), or None."""
	if not isinstance(error, dict):
		return None
	code = error.get("code")
	if isinstance(code, int) and not isinstance(code, bool) and 400 <= code < 600:
		return code
	if isinstance(code, str) and code.isascii() and code.isdigit() and 400 <= int(code) < 600:
		return int(code)
	words = (w.lower() for w in (error.get("code"), error.get("type")) if isinstance(w, str))
	return next((RETRY_WORDS[w] for w in words if w in RETRY_WORDS), None)


def _code(error: Any) -> str:
	"""The machine-readable code and type of an error (``context_length_exceeded``)."""
	if not isinstance(error, dict):
		return ""
	return " ".join(str(error.get(k) or "") for k in ("code", "type"))


def _message(error: Any) -> str:
	if isinstance(error, dict):
		return str(error.get("message") or error.get("type") or "no reason given")
	return str(error)
