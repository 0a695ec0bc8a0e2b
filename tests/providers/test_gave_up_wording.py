"""A failure the retry policy gave up on says how many attempts were made, in one wording.

An HTTP status the policy retried said "(gave up after N attempts)"; the same failure sent as an
error in a 200 body (`HTTPProvider.again`) or as a stream's error event before any text
(`HTTPProvider.streamed`) was retried as many times and then said nothing of it, so a user could
not tell a failure tried once from one tried four times. Every give-up now reads the same.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import MODELS, provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

BODIES = {
	"chat": {"error": {"code": 502, "message": "Upstream provider returned an invalid response"}},
	"openai": {"status": "failed", "error": {"code": "server_error", "message": "oops"}},
	"anthropic": {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}},
	"google": {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}},
}
EVENTS = {
	"chat": [BODIES["chat"]],
	"openai": [{"type": "error", "error": {"type": "too_many_requests", "message": "Slow"}}],
	"anthropic": [
		{"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 3}}},
		BODIES["anthropic"],
	],
	"google": [BODIES["google"]],
}


class Api:
	"""Answers every call the same way; keeps the requests."""

	def __init__(self, answer: httpx.Response | dict[str, Any] | list[dict[str, Any]]) -> None:
		self.answer = answer
		self.requests: list[httpx.Request] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.requests.append(request)
		if isinstance(self.answer, httpx.Response):
			return self.answer
		if isinstance(self.answer, list):
			text = "".join(f"data: {json.dumps(e)}\n\n" for e in self.answer)
			return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=text)
		return httpx.Response(200, json=self.answer)


async def _fail(vendor: str, api: Api, streamed: bool, **settings: Any) -> ProviderError:
	p = provider(vendor, api, **settings)
	request = make_request(MODELS[vendor])
	with pytest.raises(ProviderError) as caught:
		if streamed:
			async for _ in p.stream(request):
				pass
		else:
			await p.generate(request)
	assert caught.value.retryable
	bodies = {r.content for r in api.requests}
	assert len(bodies) == 1  # each attempt sent the same request
	return caught.value


@pytest.mark.parametrize("vendor", list(BODIES))
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_reply_error_given_up_on_says_its_attempts(vendor: str, streamed: bool) -> None:
	"""A 200 body's error, or a stream's, tried three times: the message says so, as HTTP does."""
	api = Api(EVENTS[vendor] if streamed else BODIES[vendor])
	error = await _fail(vendor, api, streamed, max_retries=2)
	assert len(api.requests) == 3
	assert str(error).endswith("(gave up after 3 attempts)"), str(error)
	assert str(error).count("gave up") == 1


async def test_http_and_a_reply_error_read_the_same() -> None:
	"""The same overload as a 529 and as a 200 body: the same words after the message."""
	body = BODIES["anthropic"]
	http = await _fail("anthropic", Api(httpx.Response(529, json=body)), False, max_retries=1)
	reply = await _fail("anthropic", Api(body), False, max_retries=1)
	assert str(http).endswith("(gave up after 2 attempts)")
	assert str(reply).endswith("(gave up after 2 attempts)")


async def test_without_retries_one_attempt_is_said() -> None:
	"""``max_retries: 0``: a retryable failure says it gave up after one attempt, as HTTP does."""
	error = await _fail("openai", Api(BODIES["openai"]), False, max_retries=0)
	assert str(error).endswith("(gave up after 1 attempt)")


async def test_an_error_not_worth_retrying_says_nothing_of_attempts() -> None:
	"""A refusal tried once, as it should be: no "gave up" (the policy had nothing to give up)."""
	bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
	api = Api(bad)
	p = provider("anthropic", api)
	with pytest.raises(ProviderError) as caught:
		await p.generate(make_request(MODELS["anthropic"]))
	assert "gave up" not in str(caught.value) and len(api.requests) == 1
