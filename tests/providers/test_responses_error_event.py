"""A Responses stream's ``error`` event is read in both the shapes OpenAI sends.

The API reference (openai-openapi ``ResponseErrorEvent``) puts ``code`` and ``message`` at the
event's top; the API sends them nested in ``error`` (openai/openai-dotnet#881: ``{"type":
"error", "sequence_number": 2, "error": {"type": "too_many_requests", "code":
"too_many_requests", "message": "Too Many Requests", "param": null}}``), which the ``openai``
SDK's stream reads (``data["error"]["message"]``). The nested event failed as "no reason given",
not retried, and a window refusal in it was not compacted on.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import Chunks, make_request, provider

pytestmark = pytest.mark.anyio


def _nested(code: str, message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
	error = {"type": kind, "code": code, "message": message, "param": None}
	return {"type": "error", "sequence_number": 2, "error": error}


async def _fails(event: dict[str, Any]) -> ProviderError:
	text = f"event: error\ndata: {json.dumps(event)}\n\n"

	def handle(request: httpx.Request) -> httpx.Response:
		kind = {"content-type": "text/event-stream"}
		return httpx.Response(200, headers=kind, stream=Chunks(text.encode(), 16))

	p = provider("openai", handle)
	with pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request("gpt-5-mini")):
			pass
	return caught.value


async def test_a_nested_rate_limit_is_retryable_and_named() -> None:
	"""``too_many_requests`` nested in ``error``: its message is shown and a later try may pass."""
	error = await _fails(_nested("too_many_requests", "Too Many Requests", "too_many_requests"))
	assert "Too Many Requests" in str(error) and "no reason given" not in str(error)
	assert error.retryable


async def test_a_nested_window_refusal_is_marked() -> None:
	"""``context_length_exceeded`` nested in ``error``: the run compacts and asks again."""
	message = "Your input exceeds the context window of this model."
	error = await _fails(_nested("context_length_exceeded", message))
	assert error.context_exceeded and "compaction" in str(error)


async def test_a_nested_error_is_scrubbed() -> None:
	"""The nested message never shows the key."""
	error = await _fails(_nested("invalid_api_key", "Incorrect API key provided: sk-test"))
	assert "sk-test" not in str(error) and "Incorrect API key" in str(error)
	assert not error.retryable


async def test_the_documented_flat_event_still_reads() -> None:
	"""The reference's flat event (``code`` and ``message`` at the top) keeps working."""
	flat = {"type": "error", "code": "server_error", "message": "boom", "param": None}
	error = await _fails({**flat, "sequence_number": 1})
	assert "boom" in str(error) and error.retryable
