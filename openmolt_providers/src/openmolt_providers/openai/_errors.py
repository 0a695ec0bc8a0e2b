"""An error an OpenAI-compatible server sends in place of a reply, streamed or whole.

OpenRouter documents that an error met while the model writes its answer comes with status 200
and the error in the body (``{"error": {"code": 502, "message": ...}}``), in a stream's event or
in the whole reply; vLLM and LiteLLM do the same. Read as a reply, it was an empty answer: the
model was told it answered nothing, a step was spent, and no retry or fallback model was tried.
`reply_error` makes it the `ProviderError` the status it names would have been.
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

__all__ = ["reply_error"]


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


def _status(error: Any) -> int | None:
	"""The HTTP status an error names (OpenRouter, vLLM: ``error.code``), or None."""
	code = error.get("code") if isinstance(error, dict) else None
	if isinstance(code, int) and not isinstance(code, bool) and 400 <= code < 600:
		return code
	if isinstance(code, str) and code.isascii() and code.isdigit() and 400 <= int(code) < 600:
		return int(code)
	return None


def _code(error: Any) -> str:
	"""The machine-readable code and type of an error (``context_length_exceeded``)."""
	if not isinstance(error, dict):
		return ""
	return " ".join(str(error.get(k) or "") for k in ("code", "type"))


def _message(error: Any) -> str:
	if isinstance(error, dict):
		return str(error.get("message") or error.get("type") or "no reason given")
	return str(error)
