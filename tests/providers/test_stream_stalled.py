"""A stream that sends nothing but keep-alives ends after the provider's ``timeout``, not never.

Anthropic sends ``event: ping`` while a reply is under way, and OpenAI-compatible gateways send
SSE comments (``: OPENROUTER PROCESSING``); both keep the connection's read timeout from ever
firing. A server that stalls after its first events but keeps pinging held the model call (and
the run, without a run timeout) for ever, whatever ``timeout`` said ("Seconds one model call may
take"). Now ``timeout`` seconds without an event that is not a keep-alive end the stream with a
retryable `ProviderError` that says what happened and names the setting.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import MODELS, provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

OPENING = {
	"anthropic": {
		"type": "message_start",
		"message": {"content": [], "usage": {"input_tokens": 3}},
	},
	"openai": {"type": "response.created", "response": {"status": "in_progress"}},
	"chat": {"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
	"google": {"candidates": [{"content": {"parts": [{"text": ""}]}}]},
}
KEEPALIVE = {
	"anthropic": b'event: ping\ndata: {"type": "ping"}\n\n',
	"openai": b": keep-alive\n\n",
	"chat": b": OPENROUTER PROCESSING\n\n",
	"google": b":\n\n",
}


class Pinging(httpx.AsyncByteStream):
	"""The opening event, then keep-alives every 20 ms, for ever."""

	def __init__(self, vendor: str) -> None:
		self.vendor = vendor

	async def __aiter__(self) -> AsyncIterator[bytes]:
		yield f"data: {json.dumps(OPENING[self.vendor])}\n\n".encode()
		while True:
			await anyio.sleep(0.02)
			yield KEEPALIVE[self.vendor]


@pytest.mark.parametrize("vendor", sorted(OPENING))
async def test_a_stream_of_keepalives_ends_after_the_timeout(vendor: str) -> None:
	"""Only pings (or comments) after the first event: the call fails after ``timeout`` seconds,
	retryable, saying the stream stalled and how to allow longer."""

	def handle(request: httpx.Request) -> httpx.Response:
		kind = {"content-type": "text/event-stream"}
		return httpx.Response(200, headers=kind, stream=Pinging(vendor))

	p = provider(vendor, handle, timeout=0.3, max_retries=0)
	started = time.monotonic()
	with anyio.fail_after(10), pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	assert time.monotonic() - started < 5
	assert caught.value.retryable
	message = str(caught.value)
	assert "0.3 s" in message and "timeout" in message, message


async def test_a_slow_reader_is_no_stall() -> None:
	"""Time the caller spends between events is not the server's: only waiting counts."""
	events = [
		{"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 3}}},
		{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
		*(
			{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": c}}
			for c in "abcd"
		),
		{"type": "content_block_stop", "index": 0},
		{
			"type": "message_delta",
			"delta": {"stop_reason": "end_turn"},
			"usage": {"output_tokens": 4},
		},
		{"type": "message_stop"},
	]
	body = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()

	def handle(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

	p = provider("anthropic", handle, timeout=0.1, max_retries=0)
	chunks = []
	async for chunk in p.stream(make_request(MODELS["anthropic"])):
		await anyio.sleep(0.05)  # four deltas: longer in all than the timeout
		chunks.append(chunk)
	assert chunks[-1].text == "abcd"
