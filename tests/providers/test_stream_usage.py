"""Usage as the streams report it: counted once, from the event that carries it last."""

from __future__ import annotations

import json

import httpx
import pytest

from openmolt_core.llm import ModelResponse
from tests.providers._replies import CMD, MODELS, provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio


async def _final(vendor: str, events: list[dict]) -> ModelResponse:
	body = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()

	def handle(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

	final = None
	async for chunk in provider(vendor, handle).stream(make_request(MODELS[vendor])):
		if isinstance(chunk, ModelResponse):
			final = chunk
	assert final is not None
	return final


async def test_anthropic_null_counts_in_message_delta_keep_the_start_counts() -> None:
	"""``message_delta``'s usage may leave the input counts null (every field of the SDK's
	MessageDeltaUsage is optional): the counts of ``message_start`` stay (they became 0)."""
	start = {
		"id": "msg_1",
		"type": "message",
		"role": "assistant",
		"model": "claude-sonnet-4-5",
		"content": [],
		"stop_reason": None,
		"usage": {
			"input_tokens": 100,
			"cache_read_input_tokens": 900,
			"cache_creation_input_tokens": 50,
			"output_tokens": 1,
		},
	}
	events = [
		{"type": "message_start", "message": start},
		{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
		{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": CMD}},
		{"type": "content_block_stop", "index": 0},
		{
			"type": "message_delta",
			"delta": {"stop_reason": "end_turn", "stop_sequence": None},
			"usage": {
				"output_tokens": 40,
				"input_tokens": None,
				"cache_read_input_tokens": None,
				"cache_creation_input_tokens": None,
				"server_tool_use": None,
			},
		},
		{"type": "message_stop"},
	]
	final = await _final("anthropic", events)
	assert final.text == CMD and final.finish_reason == "stop"
	usage = final.usage
	assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (1050, 900, 40)
	assert usage.cost_usd is not None and usage.cost_usd > 0


@pytest.mark.parametrize(
	("vendor", "reply"),
	[
		("anthropic", {"content": [{"type": "text", "text": CMD}], "stop_reason": "end_turn"}),
		(
			"google",
			{"candidates": [{"content": {"parts": [{"text": CMD}]}, "finishReason": "STOP"}]},
		),
		(
			"chat",
			{"choices": [{"index": 0, "message": {"content": CMD}, "finish_reason": "stop"}]},
		),
		("openai", {"status": "completed", "output": []}),
	],
)
async def test_a_reply_without_usage_has_an_unknown_cost_not_zero(vendor, reply) -> None:
	"""No usage reported: the cost is unknown (None), not 0.0 (free), on every API."""
	from tests.providers._replies import generate

	response = await generate(vendor, reply)
	assert response.usage.cost_usd is None and response.usage.calls == 1


@pytest.mark.parametrize(
	("vendor", "reply"),
	[
		(
			"chat",
			{
				"choices": [{"index": 0, "message": {"content": CMD}, "finish_reason": "stop"}],
				"usage": {"total_tokens": 420},
			},
		),
		("openai", {"status": "completed", "output": [], "usage": {"total_tokens": 420}}),
		(
			"anthropic",
			{
				"type": "message",
				"stop_reason": "end_turn",
				"content": [{"type": "text", "text": CMD}],
				"usage": {"service_tier": "standard"},
			},
		),
		(
			"google",
			{
				"candidates": [{"content": {"parts": [{"text": CMD}]}, "finishReason": "STOP"}],
				"usageMetadata": {"totalTokenCount": 420},
			},
		),
	],
)
async def test_usage_that_counts_no_input_or_output_has_an_unknown_cost(vendor, reply) -> None:
	"""A usage object with only a total (or no counts): unknown (None), not 0.0 for 420 tokens."""
	from tests.providers._replies import generate

	response = await generate(vendor, reply)
	assert response.usage.cost_usd is None and response.usage.calls == 1


_THINKING_USAGE = {
	"input_tokens": 20,
	"cache_creation_input_tokens": 0,
	"cache_read_input_tokens": 0,
	"output_tokens": 300,
	"output_tokens_details": {"thinking_tokens": 240},
}
"""Messages usage with its thinking tokens (anthropic SDK 2026-05-28, ``OutputTokensDetails``:
``thinking_tokens`` are part of ``output_tokens``, which stays the billed total)."""


async def test_anthropic_thinking_tokens_are_reasoning_tokens_whole() -> None:
	"""A whole reply's ``output_tokens_details.thinking_tokens`` are its reasoning tokens."""
	from tests.providers._replies import generate

	reply = {
		"type": "message",
		"role": "assistant",
		"content": [{"type": "text", "text": CMD}],
		"stop_reason": "end_turn",
		"usage": _THINKING_USAGE,
	}
	usage = (await generate("anthropic", reply)).usage
	assert (usage.output_tokens, usage.reasoning_tokens) == (300, 240)


async def test_anthropic_thinking_tokens_are_reasoning_tokens_streamed() -> None:
	"""``message_delta``'s cumulative usage carries them when streamed: counted once, the same."""
	start = {
		"id": "msg_1",
		"type": "message",
		"role": "assistant",
		"model": "claude-sonnet-4-5",
		"content": [],
		"stop_reason": None,
		"usage": {"input_tokens": 20, "output_tokens": 1},
	}
	events = [
		{"type": "message_start", "message": start},
		{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
		{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": CMD}},
		{"type": "content_block_stop", "index": 0},
		{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": _THINKING_USAGE},
		{"type": "message_stop"},
	]
	usage = (await _final("anthropic", events)).usage
	assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (20, 300, 240)


@pytest.mark.parametrize("streamed", [False, True])
async def test_deepseek_cache_hits_are_cached_tokens(streamed: bool) -> None:
	"""DeepSeek's API reports its cache hits in its own field (``prompt_cache_hit_tokens``,
	beside ``prompt_cache_miss_tokens``), not OpenAI's ``prompt_tokens_details.cached_tokens``:
	a run on it counted no cached token."""
	from tests.providers._replies import generate, stream

	usage = {
		"prompt_tokens": 100,
		"completion_tokens": 10,
		"prompt_cache_hit_tokens": 40,
		"prompt_cache_miss_tokens": 60,
	}
	reply = {
		"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
		"usage": usage,
	}
	response = await (stream("chat", reply) if streamed else generate("chat", reply))
	assert response.usage.cached_tokens == 40
