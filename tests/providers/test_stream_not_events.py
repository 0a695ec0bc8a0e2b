"""A streaming request answered with no events at all: an HTML page or a JSON body whose content
type does not say so is read for what it is, not as a stream cut off.

`HTTPProvider._open` knew a page by ``text/html`` and a whole reply by ``application/json``; a
proxy's page sent as ``text/plain`` (or with no type), or a server's whole reply or error body
sent as ``text/plain``, was parsed as server-sent events, held none, and was "the stream ended
before the reply was complete; try again": asked again up to the retry policy's attempts (4
requests, each paid for when it was a reply), then failed naming no page, no reply, no error.
"""

from __future__ import annotations

import json

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_providers._common import NotStreamingWarning
from tests.providers._replies import CMD, MODELS, make_request, provider

pytestmark = pytest.mark.anyio

VENDORS = ["openai", "chat", "anthropic", "google"]
PAGE = "<!DOCTYPE html><html><head><title>Sign in - Corp Proxy</title></head><body></body></html>"
WHOLE = {
	"openai": {
		"status": "completed",
		"output": [{"type": "message", "content": [{"type": "output_text", "text": CMD}]}],
	},
	"chat": {"choices": [{"index": 0, "message": {"content": CMD}, "finish_reason": "stop"}]},
	"anthropic": {
		"type": "message",
		"stop_reason": "end_turn",
		"content": [{"type": "text", "text": CMD}],
	},
	"google": {"candidates": [{"content": {"parts": [{"text": CMD}]}, "finishReason": "STOP"}]},
}


def _provider(vendor: str, body: str, headers: dict[str, str]) -> tuple[object, list[int]]:
	asked: list[int] = []

	def answer(request: httpx.Request) -> httpx.Response:
		asked.append(1)
		return httpx.Response(200, content=body.encode(), headers=headers)

	p = provider(vendor, answer)
	if vendor == "openai":
		p.may_fall_back = False  # OpenAI's own URL: streams from the first call
	return p, asked


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("kind", ["text/plain", None])
async def test_a_page_without_its_type_to_a_stream_is_named(vendor, kind) -> None:
	"""A page sent as text/plain or untyped: named by its title, asked once, not retryable."""
	p, asked = _provider(vendor, PAGE, {"content-type": kind} if kind else {})
	with pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	message = str(caught.value)
	assert "Corp Proxy" in message and "HTML page" in message and "base_url" in message
	assert "ended before" not in message and not caught.value.retryable
	assert len(asked) == 1


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_whole_reply_as_text_to_a_stream_is_the_reply(vendor) -> None:
	"""A whole reply sent as text/plain answers the request: used, not asked for again."""
	p, asked = _provider(vendor, json.dumps(WHOLE[vendor]), {"content-type": "text/plain"})
	final = None
	with pytest.warns(NotStreamingWarning):
		async for chunk in p.stream(make_request(MODELS[vendor])):
			final = chunk
	assert final is not None and final.text == CMD
	assert len(asked) == 1


@pytest.mark.parametrize("vendor", VENDORS)
async def test_an_error_body_as_text_to_a_stream_is_that_error(vendor) -> None:
	"""An error body sent as text/plain is the request's error, said once."""
	body = {"error": {"code": 400, "message": "Invalid value for 'model'"}}
	p, asked = _provider(vendor, json.dumps(body), {"content-type": "text/plain"})
	with pytest.raises(ProviderError, match="Invalid value for 'model'"):
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	assert len(asked) == 1


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_masked_key_leaves_the_rest_of_the_message(vendor) -> None:
	"""The provider's message is masked whole and nothing after the mask is cut off."""
	key = {
		"openai": "sk-test",
		"chat": "sk-test",
		"anthropic": "sk-ant-test",
		"google": "AIza-test",
	}
	body = {"error": {"message": f"the key {key[vendor]} is wrong, sorry"}}
	p = provider(vendor, lambda request: httpx.Response(400, json=body))
	with pytest.raises(ProviderError) as caught:
		await p.generate(make_request(MODELS[vendor]))
	message = str(caught.value)
	assert "the key [redacted] is wrong, sorry" in message
	assert key[vendor] not in message


_STOPPED = {
	# A turn the API paused (its server tools ran long): the request goes on with it.
	"anthropic": {
		"type": "message",
		"stop_reason": "pause_turn",
		"content": [
			{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
		],
		"usage": {"input_tokens": 10, "output_tokens": 5},
	},
	# A reply the API stopped at its per-request limit: the request goes on with its token.
	"google": {
		"candidates": [
			{
				"content": {"role": "model", "parts": [{"text": CMD[:20]}]},
				"finishReason": "CONTINUATION",
				"continuationToken": "dG9rZW4=",
			}
		],
		"usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
	},
}
_ENDED = {
	"anthropic": {
		"type": "message",
		"stop_reason": "end_turn",
		"content": [{"type": "text", "text": CMD}],
		"usage": {"input_tokens": 20, "output_tokens": 7},
	},
	"google": {
		"candidates": [
			{"content": {"role": "model", "parts": [{"text": CMD[20:]}]}, "finishReason": "STOP"}
		],
		"usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 7},
	},
}


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
async def test_a_whole_reply_the_api_stopped_goes_on_as_asked_whole(vendor) -> None:
	"""A server that answers a stream with a whole reply the API paused (Anthropic's
	``pause_turn``) or stopped at its per-request limit (Gemini's ``CONTINUATION``): the call
	goes on with it as `generate` does; it was "incomplete" (the model told to send its answer
	again), and the paused reply's text and usage were the reply's."""
	bodies: list[dict[str, object]] = []

	def answer(request: httpx.Request) -> httpx.Response:
		body = json.loads(request.content)
		body.pop("stream", None)
		bodies.append(body)
		last = (body.get("messages") or [{}])[-1]
		going_on = "continuationToken" in body or last.get("role") == "assistant"
		reply = _ENDED[vendor] if going_on else _STOPPED[vendor]
		return httpx.Response(200, json=reply)

	p = provider(vendor, answer)
	final = None
	with pytest.warns(NotStreamingWarning):
		async for chunk in p.stream(make_request(MODELS[vendor])):
			final = chunk
	whole = await provider(vendor, answer).generate(make_request(MODELS[vendor]))
	assert len(bodies) == 4  # two requests streamed, two asked whole: the same two
	assert bodies[1] == bodies[3] and bodies[1] != bodies[0]  # the second goes on
	assert (final.text, final.finish_reason) == (whole.text, whole.finish_reason)
	assert (final.text, final.finish_reason) == (CMD, "stop")
	assert (final.usage.input_tokens, final.usage.output_tokens) == (30, 12)
