"""A conversation the vendor blocks fails the run at once, with its tokens counted.

Anthropic answers ``stop_reason: "refusal"`` when its safety classifiers stop a reply, and
documents that the conversation must be reset: "Attempting to continue without resetting will
result in continued refusals" (platform.claude.com, handle streaming refusals). Gemini answers a
prompt it blocks with no candidate and ``promptFeedback.blockReason``: the prompt itself was
refused, before any model wrote anything. Both were read as the model's refusal or its safety
stop: the model was told "you refused to answer" (or "rephrase"), the same prompt went out again,
and every later step was refused and billed until ``max_steps``. The providers now say
``blocked``, and the loop ends the run with a `RunError` that keeps the state and says what to
change, after one call.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt, RunError
from tests.providers._replies import CMD, generate, stream

pytestmark = pytest.mark.anyio

REFUSED = {
	"type": "message",
	"role": "assistant",
	"content": [{"type": "text", "text": '{"commands":[{"type":"fin'}],
	"stop_reason": "refusal",
	"stop_details": {"type": "refusal", "category": "cyber", "explanation": "Declined."},
	"usage": {"input_tokens": 900, "output_tokens": 12},
}
BLOCKED = {
	"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
	"usageMetadata": {"promptTokenCount": 900, "totalTokenCount": 900},
	"modelVersion": "gemini-2.5-flash",
}
CASES = [("anthropic", REFUSED), ("google", BLOCKED)]


@pytest.mark.parametrize(("vendor", "reply"), CASES)
async def test_the_provider_says_blocked_and_keeps_the_usage(vendor: str, reply: Any) -> None:
	"""Asked whole or streamed: finish reason ``blocked``, the tokens billed counted."""
	for response in (await generate(vendor, reply), await stream(vendor, reply)):
		assert response.finish_reason == "blocked"
		assert response.usage.input_tokens and response.usage.cost_usd


async def test_a_candidate_with_no_finish_beside_a_blocked_prompt_is_blocked() -> None:
	"""A Gemini reply with a candidate (a call it began) and no ``finishReason``, whose
	``promptFeedback`` says the prompt was blocked, is ``blocked``: nothing of it runs (it was
	read as a finished reply, and its function call as one to make)."""
	call = {"functionCall": {"name": "local__send", "args": {"to": "x"}}}
	reply = {"candidates": [{"content": {"parts": [call]}}], **BLOCKED}
	for response in (await generate("google", reply), await stream("google", reply)):
		assert response.finish_reason == "blocked"
	whole = {"candidates": [{"content": {"parts": [call]}}]}  # no feedback: a call to make
	assert (await generate("google", whole)).finish_reason == "tool_calls"


@pytest.mark.parametrize(
	("vendor", "reply"),
	[
		(
			"google",
			{"candidates": [{"content": {"parts": [{"text": CMD}]}, "finishReason": "SAFETY"}]},
		),
		("chat", {"choices": [{"message": {"content": None}, "finish_reason": "content_filter"}]}),
		(
			"chat",
			{
				"choices": [
					{"message": {"content": None, "refusal": "No."}, "finish_reason": "stop"}
				]
			},
		),
	],
)
async def test_a_reply_the_model_may_write_again_is_not_blocked(vendor: str, reply: Any) -> None:
	"""An answer stopped by a filter, or the model's own refusal, is the model's to redo."""
	assert (await generate(vendor, reply)).finish_reason in ("safety", "refusal")


def _wire(vendor: str, reply: dict[str, Any]) -> tuple[str, dict[str, Any]]:
	model = {"anthropic": "anthropic:claude-sonnet-4-5", "google": "google:gemini-2.5-flash"}
	key = {"anthropic": "sk-ant-test", "google": "AIza-test"}
	return model[vendor], {vendor: {"api_key": key[vendor]}}


@pytest.mark.parametrize(("vendor", "reply"), CASES)
async def test_the_run_ends_after_one_call_with_its_state(vendor: str, reply: Any) -> None:
	"""A RunError naming the block and the fix; one call, counted; no turn of the model kept."""
	bodies: list[Any] = []

	def handle(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		return httpx.Response(200, json=reply)

	model, settings = _wire(vendor, reply)
	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	om = OpenMolt(settings, http_client=client)
	agent = om.create_agent(name="Asker", model=model, max_steps=6)
	errors: list[Any] = []
	agent.on("error", errors.append)
	with pytest.raises(RunError) as caught:
		await agent.run("go")
	message = str(caught.value)
	assert "blocked" in message and "another model" in message
	assert "you refused" not in message
	assert len(bodies) == 1
	state = caught.value.result.state
	assert state.usage.input_tokens == 900 and state.usage.calls == 1
	assert [m.role for m in state.messages] == ["user"]
	assert [(e.kind, e.fatal) for e in errors] == [("provider", True)]
	await om.aclose()


SPENT = [
	(
		"anthropic",
		{
			"type": "message",
			"role": "assistant",
			"content": [{"type": "thinking", "thinking": "Let me think...", "signature": "s"}],
			"stop_reason": "max_tokens",
			"usage": {"input_tokens": 900, "output_tokens": 1024},
		},
	),
	(
		"google",
		{
			"candidates": [
				{"content": {"role": "model", "parts": []}, "finishReason": "MAX_TOKENS"}
			],
			"usageMetadata": {
				"promptTokenCount": 900,
				"thoughtsTokenCount": 1024,
				"totalTokenCount": 1924,
			},
			"modelVersion": "gemini-2.5-flash",
		},
	),
]


@pytest.mark.parametrize(("vendor", "reply"), SPENT)
async def test_an_output_limit_spent_before_any_text_ends_the_run(vendor: str, reply: Any) -> None:
	"""Reasoning took every output token: one call, a RunError naming max_output_tokens, no loop.

	Telling the model to "send fewer commands" changed nothing (it wrote none): every step was
	cut off the same way and billed until max_steps.
	"""
	bodies: list[Any] = []

	def handle(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		return httpx.Response(200, json=reply)

	model, settings = _wire(vendor, reply)
	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	om = OpenMolt(settings, http_client=client)
	agent = om.create_agent(name="Thinker", model=model, max_steps=6)
	with pytest.raises(RunError) as caught:
		await agent.run("go")
	message = str(caught.value)
	assert "max_output_tokens" in message and "send fewer" not in message
	assert len(bodies) == 1
	state = caught.value.result.state
	assert state.usage.input_tokens == 900 and state.usage.calls == 1
	await om.aclose()


async def test_an_answer_cut_off_mid_text_is_still_the_models_to_shorten() -> None:
	"""Some text before the limit: the model is told its answer was cut off, and goes on."""
	cut = {
		"type": "message",
		"role": "assistant",
		"content": [{"type": "text", "text": '{"commands":[{"type":"fin'}],
		"stop_reason": "max_tokens",
		"usage": {"input_tokens": 900, "output_tokens": 10},
	}
	replies = [cut, {**cut, "content": [{"type": "text", "text": CMD}], "stop_reason": "end_turn"}]
	bodies: list[Any] = []

	def handle(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		return httpx.Response(200, json=replies[len(bodies) - 1])

	model, settings = _wire("anthropic", cut)
	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	om = OpenMolt(settings, http_client=client)
	result = await om.create_agent(name="Writer", model=model, max_steps=6).run("go")
	assert result.status == "success" and len(bodies) == 2
	assert "cut off at the output token limit" in json.dumps(bodies[1])
	await om.aclose()


async def test_a_blocked_conversation_goes_to_the_agents_next_model() -> None:
	"""Claude blocks, the fallback model answers: success, model:fallback says 'blocked', and the
	blocked call's tokens are counted in the run (Anthropic suggests another model)."""
	seen: list[str] = []

	def handle(request: httpx.Request) -> httpx.Response:
		seen.append(request.url.host)
		if request.url.host == "api.anthropic.com":
			return httpx.Response(200, json=REFUSED)
		text = '{"commands":[{"type":"finish","status":"success","output":"Oslo"}]}'
		return httpx.Response(
			200,
			json={
				"output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}],
				"usage": {"input_tokens": 100, "output_tokens": 10},
			},
		)

	settings = {"anthropic": {"api_key": "sk-ant-test"}, "openai": {"api_key": "sk-test"}}
	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	om = OpenMolt(settings, http_client=client)
	agent = om.create_agent(
		name="Asker", model=["anthropic:claude-sonnet-4-5", "openai:gpt-5-mini"], max_steps=3
	)
	moves: list[Any] = []
	agent.on("model:fallback", moves.append)
	result = await agent.run("go")
	assert result.status == "success" and result.output == "Oslo"
	assert seen == ["api.anthropic.com", "api.openai.com"]
	assert [(m.from_model, m.to_model, m.reason) for m in moves] == [
		("anthropic:claude-sonnet-4-5", "openai:gpt-5-mini", "blocked")
	]
	assert result.usage.input_tokens == 1000 and result.usage.output_tokens == 22
	assert result.usage.cost_usd is not None and result.usage.cost_usd > 0
	await om.aclose()


async def test_every_model_blocking_ends_the_run_with_all_tokens_counted() -> None:
	"""The last model blocks too: the RunError of a blocked conversation, both calls counted."""
	client = httpx.AsyncClient(
		transport=httpx.MockTransport(lambda r: httpx.Response(200, json=REFUSED))
	)
	om = OpenMolt({"anthropic": {"api_key": "sk-ant-test"}}, http_client=client)
	agent = om.create_agent(
		name="Asker", model=["anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5"]
	)
	with pytest.raises(RunError) as caught:
		await agent.run("go")
	assert "blocked" in str(caught.value)
	assert caught.value.result.state.usage.input_tokens == 1800
	await om.aclose()
