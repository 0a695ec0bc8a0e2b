"""A body or event that cannot be read at all is a `ProviderError`, never a raw exception.

A server (a gateway, a proxy, a broken compatible server) may answer with JSON nested deeper than
Python's decoder goes (``[[[[...]]]]``: `RecursionError`), or with a compressed body that does
not decompress (``content-encoding: gzip`` on bytes that are not gzip: httpx's `DecodingError`).
Either escaped the provider as it was: no provider or model named, no fix said, and the fallback
capability, which moves on after a `ProviderError`, did not.
"""

from __future__ import annotations

import json

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_providers._common import NotStreamingWarning
from tests.providers._replies import MODELS, Chunks, make_request, provider

pytestmark = pytest.mark.anyio

VENDORS = ["openai", "chat", "anthropic", "google"]
NAMES = {"openai": "openai", "chat": "openai", "anthropic": "anthropic", "google": "google"}
DEEP = b"[" * 100_000 + b"]" * 100_000
SSE = {"content-type": "text/event-stream"}


def _answer(status: int, body: bytes, **headers: str) -> httpx.Response:
	return httpx.Response(status, headers=headers, stream=Chunks(body, 4096))


async def _fails(vendor: str, answer: httpx.Response, *, streamed: bool) -> ProviderError:
	p = provider(vendor, lambda request: answer)
	p.max_retries = 0
	request = make_request(MODELS[vendor])
	with pytest.raises(ProviderError) as caught:
		if streamed:
			async for _ in p.stream(request):
				pass
		else:
			await p.generate(request)
	error = caught.value
	assert error.provider == NAMES[vendor]
	return error


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("status", [200, 500])
async def test_a_body_nested_too_deeply_is_a_provider_error(vendor, status) -> None:
	"""A reply (or an error body) nested past the decoder's depth names the provider."""
	answer = _answer(status, DEEP, **{"content-type": "application/json"})
	error = await _fails(vendor, answer, streamed=False)
	assert status == 500 or "JSON nested too deeply to read (200)" in str(error)


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_stream_event_nested_too_deeply_is_a_provider_error(vendor) -> None:
	"""An event nested past the decoder's depth is said so (it was called "not JSON")."""
	answer = _answer(200, b"data: " + DEEP + b"\n\n", **SSE)
	error = await _fails(vendor, answer, streamed=True)
	assert "an event that is JSON nested too deeply to read" in str(error)


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_whole_reply_nested_too_deeply_to_a_stream_is_a_provider_error(vendor) -> None:
	"""A JSON body answered to a stream is read as a whole reply; too deep, it is no reply.

	As for any body that is no reply: the server is taken not to stream, and asked whole.
	"""
	answer = _answer(200, DEEP, **{"content-type": "application/json"})
	with pytest.warns(NotStreamingWarning):
		error = await _fails(vendor, answer, streamed=True)
	assert "JSON nested too deeply to read" in str(error)


async def test_a_tool_input_nested_too_deeply_in_a_stream_is_kept_as_text() -> None:
	"""Anthropic's streamed tool input too deep to decode stays text; the reply still reads."""
	deep = "[" * 100_000 + "]" * 100_000
	events = [
		{"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
		{
			"type": "content_block_start",
			"index": 0,
			"content_block": {"type": "tool_use", "id": "t", "name": "x", "input": {}},
		},
		{
			"type": "content_block_delta",
			"index": 0,
			"delta": {"type": "input_json_delta", "partial_json": deep},
		},
		{"type": "content_block_stop", "index": 0},
		{"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
		{"type": "message_stop"},
	]
	body = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()
	p = provider("anthropic", lambda request: _answer(200, body, **SSE))
	final = None
	async for chunk in p.stream(make_request(MODELS["anthropic"])):
		final = chunk
	assert final is not None and final.finish_reason == "tool_calls"


GZIP = {"content-encoding": "gzip"}


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("status", [200, 500])
async def test_a_body_that_does_not_decompress_is_a_provider_error(vendor, status) -> None:
	"""A gzip body that is not gzip names the provider and what to check."""
	answer = _answer(status, b"not gzip at all", **{"content-type": "application/json", **GZIP})
	error = await _fails(vendor, answer, streamed=False)
	assert "decompress" in str(error)


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_stream_that_does_not_decompress_is_a_provider_error(vendor) -> None:
	"""A streamed body that is not the gzip it says is a failed stream, retryable: nothing ran."""
	answer = _answer(200, b"not gzip at all", **{**SSE, **GZIP})
	error = await _fails(vendor, answer, streamed=True)
	assert "decompress" in str(error) and error.retryable
