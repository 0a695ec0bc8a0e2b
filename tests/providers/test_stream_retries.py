"""A stream that fails before any of its reply arrived is retried, as the same call asked whole is.

Anthropic sends an overload as an ``error`` event after a 200 ("When receiving a streaming
response via SSE, it's possible that an error can occur after returning a 200 response", errors
page), OpenAI's Responses API a rate limit as an ``error`` event, OpenRouter a 502 in the body of
a Chat chunk, Gemini a 503 ``UNAVAILABLE`` as an event. Asked whole, the same failure is an HTTP
status the retry policy retries (429, 529, 5xx); streamed, it was raised at once: one overloaded
moment ended a streaming run (a chat, ``agent.stream()``) that the same run without listeners
survived. Nothing of the reply had streamed, so nothing was shown: the stream is asked again under
the same policy. Once text has streamed, a failure is not retried (the text was shown).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_core.streaming import TextDelta
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

DATA = Path(__file__).parent / "data"

FAILURES: dict[str, list[dict[str, Any]]] = {
	"anthropic": [
		{"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 3}}},
		{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
	],
	"openai-responses": [
		{"type": "response.created", "response": {"status": "in_progress"}},
		{"type": "error", "error": {"type": "too_many_requests", "message": "Rate limited"}},
	],
	"openai-chat": [{"error": {"code": 502, "message": "Upstream error"}}],
	"gemini": [{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}],
}
STEMS = {
	"anthropic": ("claude-sonnet-4-5", "anthropic"),
	"openai-responses": ("gpt-5-mini", "openai_responses"),
	"openai-chat": ("gpt-5-mini", "openai_chat"),
	"gemini": ("gemini-2.5-flash", "gemini"),
}


def _sse(events: list[dict[str, Any]]) -> bytes:
	return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()


class Api:
	"""Streams the bodies in turn (the last again after them); counts requests and sleeps."""

	def __init__(self, *bodies: bytes) -> None:
		self.bodies = bodies
		self.requests = 0
		self.sleeps: list[float] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.requests += 1
		body = self.bodies[min(self.requests, len(self.bodies)) - 1]
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

	async def sleep(self, seconds: float) -> None:
		self.sleeps.append(seconds)


def _provider(name: str, api: Api, **settings: Any) -> Any:
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	if name == "anthropic":
		return AnthropicProvider(
			{"api_key": "sk-ant-t", **settings}, lambda: client, sleep=api.sleep
		)
	if name == "gemini":
		return GeminiProvider({"api_key": "AIza-t", **settings}, lambda: client, sleep=api.sleep)
	mode = {"api_mode": "chat"} if name == "openai-chat" else {}
	return OpenAIProvider({"api_key": "sk-t", **mode, **settings}, lambda: client, sleep=api.sleep)


async def _collect(provider: Any, model: str) -> tuple[str, Any]:
	from tests.providers.conftest import make_request

	text, final = "", None
	async for chunk in provider.stream(make_request(model)):
		if isinstance(chunk, TextDelta):
			text += chunk.text
		else:
			final = chunk
	return text, final


@pytest.mark.parametrize("name", list(FAILURES))
async def test_a_stream_that_fails_before_its_reply_is_asked_again(name: str) -> None:
	"""The failure before any text is retried under the policy; the second stream answers."""
	model, stem = STEMS[name]
	good = (DATA / f"{stem}_stream.sse").read_bytes()
	api = Api(_sse(FAILURES[name]), good)
	text, final = await _collect(_provider(name, api), model)
	assert api.requests == 2 and len(api.sleeps) == 1
	assert final is not None and text == final.text and text


@pytest.mark.parametrize("name", list(FAILURES))
async def test_the_retries_are_bounded_by_the_policy(name: str) -> None:
	"""Failing every time: ``max_retries`` more streams, then the failure, still retryable."""
	model, _ = STEMS[name]
	api = Api(_sse(FAILURES[name]))
	with pytest.raises(ProviderError) as caught:
		await _collect(_provider(name, api, max_retries=2), model)
	assert caught.value.retryable and api.requests == 3 and len(api.sleeps) == 2


async def test_a_stream_that_failed_after_its_text_is_not_asked_again() -> None:
	"""Text streamed, then the overload: raised as it came (what streamed was shown)."""
	start = {"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 3}}}
	block = {
		"type": "content_block_start",
		"index": 0,
		"content_block": {"type": "text", "text": ""},
	}
	delta = {
		"type": "content_block_delta",
		"index": 0,
		"delta": {"type": "text_delta", "text": "{"},
	}
	api = Api(_sse([start, block, delta, FAILURES["anthropic"][1]]))
	with pytest.raises(ProviderError, match="Overloaded"):
		await _collect(_provider("anthropic", api), "claude-sonnet-4-5")
	assert api.requests == 1 and api.sleeps == []


async def test_an_error_another_try_would_meet_again_is_not_retried() -> None:
	"""An ``invalid_request_error`` event is the request's fault: raised at once."""
	bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
	api = Api(_sse([FAILURES["anthropic"][0], bad]))
	with pytest.raises(ProviderError) as caught:
		await _collect(_provider("anthropic", api), "claude-sonnet-4-5")
	assert not caught.value.retryable and api.requests == 1


async def test_an_http_failure_is_retried_once_per_attempt_not_again_by_the_stream() -> None:
	"""A 503 answer is retried while opening the stream; the stream's retry does not add more."""
	requests: list[int] = []
	sleeps: list[float] = []

	def handle(request: httpx.Request) -> httpx.Response:
		requests.append(1)
		return httpx.Response(503, json={"type": "error", "error": {"type": "api_error"}})

	async def sleep(seconds: float) -> None:
		sleeps.append(seconds)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	provider = AnthropicProvider(
		{"api_key": "sk-ant-t", "max_retries": 2}, lambda: client, sleep=sleep
	)
	with pytest.raises(ProviderError, match="3 attempts"):
		await _collect(provider, "claude-sonnet-4-5")
	assert len(requests) == 3 and len(sleeps) == 2
