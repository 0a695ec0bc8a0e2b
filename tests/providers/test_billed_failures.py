"""A failed call the API billed carries what it was billed for (``ProviderError.usage``).

The run counts a failure's usage (``_chain.spend_failed``), but the providers set it only for a
reply that filled the context window. A Responses reply that failed (``status: "failed"``, or an
error beside an ``incomplete`` status) with its ``usage``, a Chat or Gemini error body that
reports usage, a stream whose snapshot reported usage before its ``error`` event, the earlier
requests of an Anthropic paused turn or a Gemini continuation before a later one failed, and the
earlier attempts a retry made: each was billed, and each was lost from the run's usage. Each now
counts; a failure that reports nothing stays without usage.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse
from tests.providers._replies import MODELS, provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

RESPONSES_USAGE = {"input_tokens": 1000, "output_tokens": 50}
DONE = {
	"status": "completed",
	"output": [{"type": "message", "content": [{"type": "output_text", "text": "hi"}]}],
	"usage": {"input_tokens": 10, "output_tokens": 1},
}


class Api:
	"""Answers each call with the next body (the last again after them); keeps the requests."""

	def __init__(self, *bodies: Any) -> None:
		self.bodies = bodies
		self.requests: list[httpx.Request] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.requests.append(request)
		body = self.bodies[min(len(self.requests), len(self.bodies)) - 1]
		if isinstance(body, list):  # a stream's events
			text = "".join(f"data: {json.dumps(e)}\n\n" for e in body)
			return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=text)
		return httpx.Response(200, json=body)

	def body(self, i: int) -> dict[str, Any]:
		return json.loads(self.requests[i].content)


async def _generate(vendor: str, api: Api, **settings: Any) -> ModelResponse:
	p = provider(vendor, api, **settings)
	response: ModelResponse = await p.generate(make_request(MODELS[vendor]))
	return response


async def _stream(vendor: str, api: Api, **settings: Any) -> ModelResponse:
	p = provider(vendor, api, **settings)
	final = None
	async for chunk in p.stream(make_request(MODELS[vendor])):
		final = chunk
	assert isinstance(final, ModelResponse)
	return final


@pytest.mark.parametrize(
	"reply",
	[
		{"status": "failed", "error": {"code": "invalid_prompt", "message": "flagged"}},
		{"status": "failed", "error": {"code": "server_error", "message": "boom"}},
		{"status": "incomplete", "error": {"code": "server_error", "message": "boom"}},
	],
)
async def test_a_failed_responses_reply_carries_its_usage(reply: dict[str, Any]) -> None:
	"""A failed (or errored incomplete) reply with usage: the error carries every billed try."""
	api = Api({**reply, "output": [], "usage": RESPONSES_USAGE})
	with pytest.raises(ProviderError) as caught:
		await _generate("openai", api, max_retries=1)
	tries = len(api.requests)
	assert tries == (2 if reply["error"]["code"] == "server_error" else 1)
	usage = caught.value.usage
	assert usage is not None
	assert (usage.input_tokens, usage.output_tokens, usage.calls) == (
		1000 * tries,
		50 * tries,
		tries,
	)
	assert usage.cost_usd is not None and usage.cost_usd > 0
	assert api.body(0) == api.body(tries - 1)  # the same request asked again


async def test_a_failed_reply_without_usage_carries_none() -> None:
	"""Nothing reported, nothing counted: the error says no usage."""
	api = Api({"status": "failed", "error": {"code": "invalid_prompt", "message": "x"}})
	with pytest.raises(ProviderError) as caught:
		await _generate("openai", api)
	assert caught.value.usage is None


async def test_a_billed_failure_retried_counts_in_the_reply() -> None:
	"""A failed try the retry moved past is billed: the reply that answered counts it too."""
	failed = {"status": "failed", "error": {"code": "server_error", "message": "boom"}}
	api = Api({**failed, "output": [], "usage": RESPONSES_USAGE}, DONE)
	response = await _generate("openai", api)
	assert len(api.requests) == 2
	usage = response.usage
	assert (usage.input_tokens, usage.output_tokens, usage.calls) == (1010, 51, 2)
	assert response.prompt_tokens == 10  # the prompt's size: the answering request's


async def test_a_streamed_failed_response_carries_its_usage() -> None:
	"""``response.failed`` streamed: its response's usage, on the error."""
	failed = {
		"status": "failed",
		"error": {"code": "invalid_prompt", "message": "x"},
		"output": [],
		"usage": RESPONSES_USAGE,
	}
	api = Api([{"type": "response.failed", "response": failed}])
	with pytest.raises(ProviderError) as caught:
		await _stream("openai", api)
	assert caught.value.usage is not None and caught.value.usage.input_tokens == 1000
	assert api.body(0)["stream"] is True


async def test_a_billed_stream_failure_retried_counts_in_the_reply() -> None:
	"""A stream that failed before any text, billed, then asked again: the reply counts both."""
	failed = {
		"status": "failed",
		"error": {"code": "server_error", "message": "boom"},
		"output": [],
		"usage": RESPONSES_USAGE,
	}
	done = [
		{"type": "response.output_text.delta", "delta": "hi"},
		{"type": "response.completed", "response": DONE},
	]
	api = Api([{"type": "response.failed", "response": failed}], done)
	response = await _stream("openai", api)
	assert len(api.requests) == 2 and api.body(0) == api.body(1)
	usage = response.usage
	assert (usage.input_tokens, usage.output_tokens, usage.calls) == (1010, 51, 2)
	assert response.prompt_tokens == 10  # the prompt's size: the answering request's


async def test_a_stream_error_event_carries_the_usage_its_snapshot_reported() -> None:
	"""An ``error`` event after a snapshot that reported usage: that usage; none before it."""
	snapshot = {"status": "in_progress", "output": [], "usage": RESPONSES_USAGE}
	error = {"type": "error", "code": "invalid_prompt", "message": "x"}
	api = Api([{"type": "response.in_progress", "response": snapshot}, error])
	with pytest.raises(ProviderError) as caught:
		await _stream("openai", api)
	assert caught.value.usage is not None and caught.value.usage.output_tokens == 50
	bare = Api([{"type": "response.created", "response": {"status": "in_progress"}}, error])
	with pytest.raises(ProviderError) as caught:
		await _stream("openai", bare)
	assert caught.value.usage is None


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_chat_error_with_usage_carries_it(streamed: bool) -> None:
	"""A gateway's error body (or chunk) that reports usage: the error carries it."""
	error = {"error": {"code": 400, "message": "bad"}, "usage": {"prompt_tokens": 700}}
	api = Api([error] if streamed else error)
	with pytest.raises(ProviderError) as caught:
		await (_stream if streamed else _generate)("chat", api)
	assert caught.value.usage is not None and caught.value.usage.input_tokens == 700


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_anthropic_paused_turn_that_fails_later_counts_its_requests(
	streamed: bool,
) -> None:
	"""The paused requests were billed: a later request's failure carries their usage."""
	paused = {
		"type": "message",
		"role": "assistant",
		"content": [{"type": "text", "text": "Searching."}],
		"stop_reason": "pause_turn",
		"usage": {"input_tokens": 1000, "output_tokens": 50},
	}
	error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
	if streamed:
		start = {**paused, "content": [], "stop_reason": None}
		first = [
			{"type": "message_start", "message": start},
			{
				"type": "content_block_start",
				"index": 0,
				"content_block": {"type": "text", "text": ""},
			},
			{
				"type": "content_block_delta",
				"index": 0,
				"delta": {"type": "text_delta", "text": "Searching."},
			},
			{"type": "content_block_stop", "index": 0},
			{
				"type": "message_delta",
				"delta": {"stop_reason": "pause_turn"},
				"usage": {"output_tokens": 50},
			},
			{"type": "message_stop"},
		]
		api = Api(first, [error])
	else:
		api = Api(paused, error)
	with pytest.raises(ProviderError) as caught:
		await (_stream if streamed else _generate)("anthropic", api)
	assert len(api.requests) == 2
	turn = api.body(1)["messages"][-1]
	assert turn == {"role": "assistant", "content": [{"type": "text", "text": "Searching."}]}
	usage = caught.value.usage
	assert usage is not None and (usage.input_tokens, usage.output_tokens) == (1000, 50)


HOP = {
	"candidates": [
		{
			"content": {"parts": [{"text": "Part one."}], "role": "model"},
			"finishReason": "CONTINUATION",
			"continuationToken": "dG9rZW4=",
		}
	],
	"usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 50},
}
GEMINI_ERROR = {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_gemini_continuation_that_fails_later_is_an_error_with_its_usage(
	streamed: bool,
) -> None:
	"""An error body after a continued reply is the call's error (it was read as the reply's
	end, its text the first part's), carrying the billed parts' usage."""
	api = Api([HOP], [GEMINI_ERROR]) if streamed else Api(HOP, GEMINI_ERROR)
	with pytest.raises(ProviderError) as caught:
		await (_stream if streamed else _generate)("google", api)
	assert len(api.requests) == 2 and api.body(1)["continuationToken"] == "dG9rZW4="
	assert "bad" in str(caught.value)
	usage = caught.value.usage
	assert usage is not None and (usage.input_tokens, usage.output_tokens) == (1000, 50)


async def test_a_gemini_error_body_that_reports_usage_carries_it() -> None:
	"""``usageMetadata`` beside the error: counted."""
	api = Api({**GEMINI_ERROR, "usageMetadata": {"promptTokenCount": 300}})
	with pytest.raises(ProviderError) as caught:
		await _generate("google", api)
	assert caught.value.usage is not None and caught.value.usage.input_tokens == 300


async def test_a_run_ended_by_a_billed_failure_counts_it() -> None:
	"""The run that a failed, billed reply ends has that reply's tokens and cost in its usage."""
	from openmolt import OpenMolt
	from openmolt_core.errors import RunError

	failed = {
		"status": "failed",
		"error": {"code": "invalid_prompt", "message": "flagged"},
		"output": [],
		"usage": RESPONSES_USAGE,
	}
	api = Api(failed)
	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers={"openai": {"api_key": "sk-a"}}, http_client=http)
	agent = om.create_agent(name="Clerk", model="openai:gpt-5-mini")
	with pytest.raises(RunError) as caught:
		await agent.run("Where?")
	usage = caught.value.result.usage
	assert (usage.input_tokens, usage.output_tokens, usage.calls) == (1000, 50, 1)
	assert usage.cost_usd is not None and usage.cost_usd > 0
	assert len(api.requests) == 1 and api.body(0)["model"] == "gpt-5-mini"
	await om.aclose()
