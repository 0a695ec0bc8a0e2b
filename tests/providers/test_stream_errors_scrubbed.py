"""An error inside a reply (a failed Responses reply, an error event of a stream) never shows a key.

Errors over plain HTTP were scrubbed (the provider's key and key-like strings masked); those
three paths of the OpenAI provider quoted the server's message as it came.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import MODELS, Chunks, generate, make_request, provider

pytestmark = pytest.mark.anyio

LEAK = "Incorrect API key provided: sk-test and sk-proj-abcdefghijklmnop"


def _sse(events: list[dict[str, Any]], done: bool = False) -> httpx.Response:
	text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + (
		"data: [DONE]\n\n" if done else ""
	)
	kind = {"content-type": "text/event-stream"}
	return httpx.Response(200, headers=kind, stream=Chunks(text.encode(), 16))


async def _fails(vendor: str, answer: httpx.Response) -> str:
	p = provider(vendor, lambda request: answer)
	with pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	return str(caught.value)


async def test_a_failed_response_is_scrubbed() -> None:
	"""``status: failed`` (asked for whole)."""
	with pytest.raises(ProviderError) as caught:
		await generate("openai", {"status": "failed", "error": {"message": LEAK}})
	assert "sk-test" not in str(caught.value) and "sk-proj-abc" not in str(caught.value)
	assert "***" in str(caught.value)


@pytest.mark.parametrize(
	("vendor", "events"),
	[
		("openai", [{"type": "error", "code": "invalid_api_key", "message": LEAK}]),
		("chat", [{"error": {"message": LEAK, "type": "invalid_request_error"}}]),
	],
)
async def test_an_error_event_is_scrubbed(vendor, events) -> None:
	"""The error event of a Responses or Chat Completions stream."""
	message = await _fails(vendor, _sse(events))
	assert "the stream failed" in message
	assert "sk-test" not in message and "sk-proj-abc" not in message
