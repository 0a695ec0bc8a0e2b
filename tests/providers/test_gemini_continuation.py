"""Gemini's ``CONTINUATION``: a reply stopped at the per-request token limit goes on, as the API says.

``FinishReason.CONTINUATION`` (google-genai 3.6 types): "the response reached the per-request token
limit, but generation is not yet complete. The model response can be continued via a subsequent
request using the returned ``continuation_token``" (``Candidate.continuation_token``; the request's
top-level ``continuationToken``, as the SDK's Gemini API converter writes it). The SDK follows it
by default (``automatic_continuation``): the same request with the token, the hops' parts joined
and their token counts added. Read as an incomplete reply, the loop told the model to send its
whole answer again, which stopped at the same limit again, every step billed, until max_steps.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_core.testing import finish
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.gemini._convert import MAX_CONTINUATIONS
from tests.providers.conftest import make_request

# The official SDKs' types (anthropic, google-genai, google-ads) are imported by these tests
# only: in one xdist group, one worker imports them, not each of the four (noxfile.py).
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("sdk-types")]

TEXT = json.dumps({"commands": [finish("Oslo")]})
HALF = len(TEXT) // 2


def _reply(
	text: str, finish_reason: str, inp: int, out: int, token: str | None = None
) -> dict[str, Any]:
	candidate: dict[str, Any] = {
		"content": {"role": "model", "parts": [{"text": text}]},
		"finishReason": finish_reason,
		"index": 0,
	}
	if token is not None:
		candidate["continuationToken"] = token
	usage = {"promptTokenCount": inp, "candidatesTokenCount": out, "totalTokenCount": inp + out}
	return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}


FIRST = _reply(TEXT[:HALF], "CONTINUATION", 1000, 30, token="Y2hlY2twb2ludC0x")
LAST = _reply(TEXT[HALF:], "STOP", 1000, 25)


class Api:
	"""Answers the calls in turn (the last again after them), streamed or whole; keeps bodies."""

	def __init__(self, *replies: dict[str, Any]) -> None:
		self.replies = replies
		self.bodies: list[dict[str, Any]] = []
		self.urls: list[str] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.bodies.append(json.loads(request.content))
		self.urls.append(str(request.url))
		reply = self.replies[min(len(self.bodies), len(self.replies)) - 1]
		if ":streamGenerateContent" not in str(request.url):
			return httpx.Response(200, json=reply)
		# Streamed: the text in two events, the finish reason and usage on the last.
		candidate = reply["candidates"][0]
		text = candidate["content"]["parts"][0]["text"]
		head = {"content": {"role": "model", "parts": [{"text": text[:5]}]}, "index": 0}
		tail = {**candidate, "content": {"role": "model", "parts": [{"text": text[5:]}]}}
		events = [{"candidates": [head]}, {**reply, "candidates": [tail]}]
		sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=sse)


def _provider(api: Api) -> GeminiProvider:
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))

	async def sleep(_: float) -> None:
		return None

	return GeminiProvider({"api_key": "AIza-test"}, lambda: client, sleep=sleep)


async def _ask(api: Api, streamed: bool) -> Any:
	provider = _provider(api)
	request = make_request("gemini-2.5-flash")
	if not streamed:
		return await provider.generate(request)
	deltas, final = [], None
	async for chunk in provider.stream(request):
		if hasattr(chunk, "finish_reason"):
			final = chunk
		else:
			deltas.append(chunk.text)
	assert final is not None and "".join(deltas) == final.text
	return final


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_continued_reply_goes_on_with_its_token_and_is_one_reply(streamed: bool) -> None:
	"""The same request goes again with the token; the call's reply is the whole text."""
	api = Api(FIRST, LAST)
	response = await _ask(api, streamed)
	assert len(api.bodies) == 2
	first, second = api.bodies
	assert "continuationToken" not in first
	assert second["continuationToken"] == "Y2hlY2twb2ludC0x"
	assert {k: v for k, v in second.items() if k != "continuationToken"} == first
	assert list(second)[-1] == "contents"  # the growing part stays last (the cached prefix)
	assert api.urls[0] == api.urls[1]
	assert response.text == TEXT and response.finish_reason == "stop"
	assert (response.usage.input_tokens, response.usage.output_tokens) == (2000, 55)
	assert response.usage.calls == 2
	alone = _provider(Api(LAST)).cost("gemini-2.5-flash", input_tokens=2000, output_tokens=55)
	assert response.usage.cost_usd == pytest.approx(alone)


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_reply_that_never_ends_is_incomplete_after_the_bound(streamed: bool) -> None:
	"""Continued again and again: at most ``MAX_CONTINUATIONS`` more requests, then incomplete."""
	api = Api(FIRST)
	response = await _ask(api, streamed)
	assert len(api.bodies) == MAX_CONTINUATIONS + 1
	assert response.finish_reason == "incomplete"
	assert response.usage.calls == MAX_CONTINUATIONS + 1


@pytest.mark.parametrize("streamed", [False, True])
async def test_continuation_without_a_token_is_incomplete(streamed: bool) -> None:
	"""``CONTINUATION`` with no token to go on with: nothing to send, so the reply is incomplete."""
	api = Api(_reply(TEXT[:HALF], "CONTINUATION", 1000, 30))
	response = await _ask(api, streamed)
	assert len(api.bodies) == 1 and response.finish_reason == "incomplete"


async def test_an_agent_run_takes_one_step() -> None:
	"""Through the loop: the continued reply is one model step of the run, which succeeds."""
	api = Api(FIRST, LAST)
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt({"google": {"api_key": "AIza-test"}}, http_client=client)
	agent = om.create_agent(name="Finder", model="google:gemini-2.5-flash")
	result = await agent.run("Capital of Norway?")
	assert result.status == "success" and result.output == "Oslo"
	assert result.steps == 1 and len(api.bodies) == 2
	assert result.usage.calls == 2 and result.usage.input_tokens == 2000
	# The prompt's size is the last request's: billed twice, it is not twice as long (the
	# compaction threshold reads it).
	assert result.state.context_tokens == 1000
	await om.aclose()


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_continued_reply_that_fills_the_window_carries_every_requests_tokens(
	streamed: bool,
) -> None:
	"""The last request fills the context window: the window error bills every request."""
	full = _reply(TEXT[HALF:], "MAX_TOKENS", 1_048_000, 576)
	api = Api(FIRST, full)
	with pytest.raises(ProviderError) as caught:
		await _ask(api, streamed)
	assert caught.value.context_exceeded and caught.value.usage is not None
	assert caught.value.usage.calls == 2
	assert caught.value.usage.input_tokens == 1_049_000


def test_the_token_goes_where_the_sdk_puts_it() -> None:
	"""google-genai reads the reply's base64 token as bytes, and its Gemini API converter writes
	the request's token at the top level, as `go_on` does (bytes travel as base64 in JSON)."""
	import base64
	from unittest import mock

	from google.genai import models, types

	from openmolt_providers.gemini._convert import continued, go_on

	reply = types.GenerateContentResponse._from_response(response=FIRST, kwargs={})
	assert reply.candidates
	token = reply.candidates[0].continuation_token
	assert token == base64.b64decode(FIRST["candidates"][0]["continuationToken"])
	config = types.GenerateContentConfig(continuation_token=token)
	params = types._GenerateContentParameters(
		model="gemini-2.5-flash",
		contents=[types.Content(role="user", parts=[types.Part(text="q")])],
		config=config,
	)
	client = mock.Mock(vertexai=False)
	sdk = models._GenerateContentParameters_to_mldev(client, params)
	ours = go_on({"contents": [{"role": "user", "parts": [{"text": "q"}]}]}, continued(FIRST) or "")
	assert set(sdk) - {"_url", "generationConfig"} == set(ours)
	assert base64.b64decode(ours["continuationToken"]) == sdk["continuationToken"]
