"""A reply (sent with 200) that stopped at the context window is the window error, not the output limit.

Anthropic answers ``stop_reason: "model_context_window_exceeded"`` when "the response filled the
model's context window" (platform.claude.com, stop reasons), and Mistral's OpenAI-compatible Chat
``finish_reason: "model_length"`` when "the context length of the model was exceeded" (its
``length`` is the request's ``max_tokens``). Both were read as ``max_tokens``: the model was told
its answer was cut off and asked the same full window again at every step, so the run never
compacted and paid a full window per step until ``max_steps``. They are now the window error the
providers raise for a 400 (``context_exceeded``), with the reply's billed tokens on it: a run that
compacts summarises and asks again, one that cannot ends with the error that names the cure, and
the tokens count in the run's usage either way.

OpenAI's own APIs and Gemini have no such reason in a 200 reply (their window errors are 400s,
tested in ``test_error_kinds``): their output-limit reasons stay ``max_tokens``, unless the prompt
and the reply reach the model's known window: OpenAI-compatible servers (vLLM, llama.cpp, Ollama,
OpenRouter) say the output limit for both.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt, RunError
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.errors import ProviderError
from openmolt_core.testing import call_tool, finish
from tests.providers._replies import generate, stream

pytestmark = pytest.mark.anyio

CUT = '{"commands":[{"type":"fin'

FILLED = {
	"anthropic": {
		"type": "message",
		"role": "assistant",
		"content": [{"type": "text", "text": CUT}],
		"stop_reason": "model_context_window_exceeded",
		"usage": {"input_tokens": 199_000, "output_tokens": 1000},
	},
	"chat": {
		"choices": [{"message": {"content": CUT}, "finish_reason": "model_length"}],
		"usage": {"prompt_tokens": 127_000, "completion_tokens": 1000},
	},
}


@pytest.mark.parametrize("vendor", sorted(FILLED))
async def test_a_reply_that_filled_the_window_is_the_window_error(vendor: str) -> None:
	"""Asked whole or streamed: ``context_exceeded``, the cure named, the billed tokens on it."""
	for ask in (generate, stream):
		with pytest.raises(ProviderError) as caught:
			await ask(vendor, FILLED[vendor])
		error = caught.value
		assert error.context_exceeded and not error.retryable
		assert "context window" in str(error) and "compaction" in str(error)
		assert "max_output_tokens (" not in str(error)  # not the output limit's cure
		assert error.usage is not None and error.usage.output_tokens == 1000
		assert error.usage.calls == 1


OUTPUT_LIMIT = [
	(
		"anthropic",
		{
			**FILLED["anthropic"],
			"stop_reason": "max_tokens",
			"usage": {"input_tokens": 20_000, "output_tokens": 1000},  # well inside the window
		},
	),
	(
		"chat",
		{**FILLED["chat"], "choices": [{"message": {"content": CUT}, "finish_reason": "length"}]},
	),
	(
		"openai",
		{
			"status": "incomplete",
			"incomplete_details": {"reason": "max_output_tokens"},
			"output": [{"type": "message", "content": [{"type": "output_text", "text": CUT}]}],
		},
	),
	(
		"google",
		{"candidates": [{"content": {"parts": [{"text": CUT}]}, "finishReason": "MAX_TOKENS"}]},
	),
]


@pytest.mark.parametrize(("vendor", "reply"), OUTPUT_LIMIT)
async def test_the_output_limit_stays_max_tokens(vendor: str, reply: Any) -> None:
	"""Each API's output-limit reason is still ``max_tokens`` (the model is told to answer shorter)."""
	assert (await generate(vendor, reply)).finish_reason == "max_tokens"


class Summariser:
	"""A compactor model: one short summary per call."""

	name = "summariser"

	def __init__(self) -> None:
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		return ModelResponse(text="the steps so far, summarised", usage=Usage(50, 5, calls=1))


def echo(i: int, pad: str) -> dict[str, Any]:
	"""Echo a step."""
	return {"i": i, "pad": pad}


def _message(text: str) -> dict[str, Any]:
	return {
		"type": "message",
		"role": "assistant",
		"content": [{"type": "text", "text": text}],
		"stop_reason": "end_turn",
		"usage": {"input_tokens": 1000, "output_tokens": 20},
	}


class Claude:
	"""The Messages API: tool calls, the window filled at ``full`` (a 1-based call number), then
	a finish; each request body is kept."""

	def __init__(self, full: int, steps: int) -> None:
		self.full, self.steps = full, steps
		self.bodies: list[dict[str, Any]] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.bodies.append(json.loads(request.content))
		n = len(self.bodies)
		if n == self.full:
			return httpx.Response(200, json=FILLED["anthropic"])
		if n >= self.steps + 1:  # one call more than the steps: the refused one
			return httpx.Response(200, json=_message(json.dumps({"commands": [finish("done")]})))
		command = call_tool("local.echo", i=n, pad="x" * 200)
		return httpx.Response(200, json=_message(json.dumps({"commands": [command]})))


def _agent(transport: Claude, **options: Any) -> tuple[OpenMolt, Any]:
	client = httpx.AsyncClient(transport=httpx.MockTransport(transport))
	om = OpenMolt({"anthropic": {"api_key": "sk-ant-test"}}, http_client=client, max_steps=40)
	agent = om.create_agent(
		name="Long", model="anthropic:claude-sonnet-4-5", tools=[echo], **options
	)
	return om, agent


async def test_a_run_that_compacts_summarises_and_asks_again() -> None:
	"""The window filled at step 7: older steps summarised, step 7 asked again, the run succeeds;
	the refused reply's tokens count in the run's usage and under its model."""
	transport, summariser = Claude(full=7, steps=9), Summariser()
	# The estimate never fires (the threshold is far above the prompt): only the reply does.
	om, agent = _agent(transport, compaction={"threshold_tokens": 1_000_000, "keep_steps": 2})
	agent.compactor = lambda: (summariser, "cheap")
	errors: list[Any] = []
	agent.on("error", errors.append)
	result = await agent.run("work long")
	assert result.status == "success", result.error
	# The refused size is remembered: later steps compact before they reach it again.
	assert result.steps == 9 and len(transport.bodies) == 10 and summariser.calls >= 1
	refused, again = transport.bodies[6], transport.bodies[7]
	summary = "the steps so far, summarised"
	assert summary in json.dumps(again) and summary not in json.dumps(refused)
	assert again["messages"][-1] == refused["messages"][-1]  # the same step, asked again
	assert [(e.kind, e.fatal) for e in errors] == [("context_exceeded", False)]
	# 9 answered steps of 1000 input tokens, the refused reply's 199000, the summaries' 50 each
	summaries = summariser.calls
	assert result.usage.input_tokens == 9 * 1000 + 199_000 + 50 * summaries
	assert result.usage.calls == 10 + summaries
	claude = result.usage_by_model["anthropic:claude-sonnet-4-5"]
	assert claude.input_tokens == 9 * 1000 + 199_000 and claude.calls == 10
	assert claude.cost_usd is not None and claude.cost_usd > 0.597  # 199k at $3 a million
	await om.aclose()


async def test_without_compaction_the_run_ends_with_the_window_error() -> None:
	"""compaction=False: one call, a RunError naming the window and its cure, the tokens counted."""
	transport = Claude(full=1, steps=9)
	om, agent = _agent(transport, compaction=False)
	with pytest.raises(RunError) as caught:
		await agent.run("work long")
	message = str(caught.value)
	assert "context window" in message and "compaction" in message
	assert "cut off at the output token limit" not in json.dumps(transport.bodies)
	assert len(transport.bodies) == 1
	state = caught.value.result.state
	assert state.usage.input_tokens == 199_000 and state.usage.calls == 1
	assert state.usage_by_model["anthropic:claude-sonnet-4-5"].input_tokens == 199_000
	await om.aclose()


async def test_a_window_error_survives_a_pickle_with_its_usage() -> None:
	"""A durable engine journals the error: its usage comes back, and an older one has none."""
	import pickle

	with pytest.raises(ProviderError) as caught:
		await generate("anthropic", FILLED["anthropic"])
	back = pickle.loads(pickle.dumps(caught.value))
	assert back.usage == caught.value.usage and back.context_exceeded
	assert back.to_dict()["usage"]["input_tokens"] == 199_000
	old = ProviderError("x", provider="p")
	del old.__dict__["usage"], old.__dict__["usage_by_model"]  # as pickled before they existed
	old = pickle.loads(pickle.dumps(old))
	assert old.usage is None and not old.usage_by_model


async def test_a_summary_that_filled_the_window_counts_too() -> None:
	"""The compactor's own reply filled its window: the run ends, both billed replies counted,
	each under the model that made it."""

	class Small(Summariser):
		async def generate(self, request: ModelRequest) -> ModelResponse:
			self.calls += 1
			raise ProviderError(
				"filled", provider="summariser", model="cheap", usage=Usage(5000, 100, calls=1)
			)

	transport, summariser = Claude(full=7, steps=9), Small()
	om, agent = _agent(transport, compaction={"threshold_tokens": 1_000_000, "keep_steps": 2})
	agent.compactor = lambda: (summariser, "cheap")
	with pytest.raises(RunError) as caught:
		await agent.run("work long")
	assert summariser.calls == 1 and len(transport.bodies) == 7
	state = caught.value.result.state
	assert state.usage.input_tokens == 6 * 1000 + 199_000 + 5000 and state.usage.calls == 8
	assert state.usage_by_model["summariser:cheap"].input_tokens == 5000
	claude = state.usage_by_model["anthropic:claude-sonnet-4-5"]
	assert claude.input_tokens == 6 * 1000 + 199_000 and claude.calls == 7
	await om.aclose()


def _cut(vendor: str, prompt: int, completion: int) -> dict[str, Any]:
	"""A reply of ``vendor`` cut off at what its API calls the output limit."""
	reply: dict[str, Any] = dict(OUTPUT[vendor])
	if vendor == "anthropic":
		reply["usage"] = {"input_tokens": prompt, "output_tokens": completion}
	elif vendor == "chat":
		reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion}
	elif vendor == "openai":
		reply["usage"] = {"input_tokens": prompt, "output_tokens": completion}
	else:
		reply["usageMetadata"] = {"promptTokenCount": prompt, "candidatesTokenCount": completion}
	return reply


OUTPUT = dict(OUTPUT_LIMIT)


@pytest.mark.parametrize("vendor", sorted(OUTPUT))
@pytest.mark.parametrize(
	("window", "prompt", "completion", "filled"),
	[
		(32_768, 31_000, 1_768, True),  # vLLM without max_tokens: the reply ran to the window's end
		(32_768, 32_000, 900, True),  # past it (a server that counts a few tokens more)
		(32_768, 20_000, 1_024, False),  # the request's output limit, well inside the window
		(None, 31_000, 1_768, False),  # no window configured: the vendor's (far larger) one
	],
)
async def test_an_output_limit_that_filled_a_known_window_is_the_window_error(
	vendor: str, window: int | None, prompt: int, completion: int, filled: bool
) -> None:
	"""An output-limit reason (vLLM, llama.cpp, Ollama and OpenRouter say it for both) is the
	window error when the prompt and the reply reach the model's known window, asked whole or
	streamed, and the output limit otherwise."""
	settings = {"context_window": window} if window else {}
	reply = _cut(vendor, prompt, completion)
	for ask in (generate, stream):
		if filled:
			with pytest.raises(ProviderError) as caught:
				await ask(vendor, reply, **settings)
			assert caught.value.context_exceeded, ask
			assert caught.value.usage is not None
			assert caught.value.usage.input_tokens == prompt
		else:
			assert (await ask(vendor, reply, **settings)).finish_reason == "max_tokens", ask
