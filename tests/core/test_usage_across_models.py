"""Each model call's usage counts under the model that made it, also when one step takes several.

The fallback capability may move a step past a model: one that blocked the conversation (its
reply was billed), or one whose failed call was billed (`ProviderError.usage`). The step's usage
was the sum, and all of it went under the answering model in ``usage_by_model`` (and the run's
``context_tokens`` was the sum of both prompts, so compaction read a prompt twice its size); a
blocked reply before a model that then failed was not counted at all. Now the step's response
says each model's part (``ModelResponse.usage_by_model``), the run counts each under its model
(a step's call, a compaction summary, a sub-agent's run, a replay from the journal), and the
error of a chain that failed carries what it was billed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from openmolt import OpenMolt, RunError, RunState
from openmolt_core.compaction import SUMMARY_PROMPT, CompactionConfig, estimate_tokens
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelRequest, ModelResponse, Usage
from openmolt_core.testing import call_tool, finish

from .test_durability import JournalPort

pytestmark = pytest.mark.anyio

DONE = json.dumps({"commands": [finish("done")]})


def blocked(request: ModelRequest) -> ModelResponse:
	"""A reply whose provider blocked the conversation, its tokens billed."""
	return ModelResponse(
		text="", usage=Usage(900, 12, cost_usd=0.009, calls=1), finish_reason="blocked"
	)


def answer(text: str = DONE) -> Callable[[ModelRequest], ModelResponse]:
	"""A reply that runs."""
	return lambda request: ModelResponse(
		text=text, usage=Usage(100, 10, cost_usd=0.0001, calls=1), finish_reason="stop"
	)


class Model:
	"""A provider object of one model: each request answered by ``reply(request)``."""

	def __init__(self, name: str, reply: Callable[[ModelRequest], ModelResponse]) -> None:
		self.name, self.model, self.reply = name, "m", reply
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		return self.reply(request)


def _parts(usage_by_model: dict[str, Usage], usage: Usage) -> dict[str, tuple[int, int, int]]:
	"""(input, output, calls) per model; and the check that the parts add up to the total."""
	summed = Usage()
	for part in usage_by_model.values():
		summed.add(part)
	assert summed.to_dict() == pytest.approx(usage.to_dict())
	return {m: (u.input_tokens, u.output_tokens, u.calls) for m, u in usage_by_model.items()}


def _fallback(first: Model, second: Model, **options: Any) -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="F", model=[first, second], **options)


async def test_a_blocked_reply_counts_under_the_model_that_blocked() -> None:
	"""Blocked by the first model, answered by the second: each call under its own model, each
	at its own cost; the run's context is the answering call's prompt, not the sum."""
	result = await _fallback(Model("a", blocked), Model("b", answer())).run("go")
	assert result.status == "success", result.error
	assert _parts(result.usage_by_model, result.usage) == {
		"a:m": (900, 12, 1),
		"b:m": (100, 10, 1),
	}
	assert result.usage_by_model["a:m"].cost_usd == pytest.approx(0.009)
	assert result.usage_by_model["b:m"].cost_usd == pytest.approx(0.0001)
	assert result.state.context_tokens == 100
	assert result.state.models == ["b:m"]  # the step was answered by b


async def test_a_replay_reads_each_models_part_from_the_journal() -> None:
	"""The journaled step keeps the parts: a recovered run counts them as the first run did."""
	agent = _fallback(Model("a", blocked), Model("b", answer()))
	state = agent.new_state("go")
	saved = state.to_dict()
	port = JournalPort()
	first = await agent.execute(state, port=port)
	again_models = Model("a", blocked), Model("b", answer())
	again = await _fallback(*again_models).execute(
		RunState.from_dict(saved), port=JournalPort(port.recorded)
	)
	assert again_models[0].calls == again_models[1].calls == 0  # answered by the journal
	assert _parts(again.usage_by_model, again.usage) == _parts(first.usage_by_model, first.usage)
	assert again.state.context_tokens == 100


def test_a_response_of_one_model_journals_as_before() -> None:
	"""``usage_by_model`` is in the journaled dict only when several models made the response."""
	one = ModelResponse(text="x", usage=Usage(1, 2, calls=1), model="a:m")
	assert "usage_by_model" not in one.to_dict()
	assert ModelResponse.from_dict(one.to_dict()) == one
	two = ModelResponse(
		text="x",
		usage=Usage(3, 4, calls=2),
		model="b:m",
		usage_by_model={"a:m": Usage(1, 2, calls=1), "b:m": Usage(2, 2, calls=1)},
	)
	assert ModelResponse.from_dict(json.loads(json.dumps(two.to_dict()))) == two


def _overloaded(request: ModelRequest) -> ModelResponse:
	raise ProviderError(
		"overloaded (529)", provider="a", model="m", status_code=529, retryable=True
	)


def _billed_failure(request: ModelRequest) -> ModelResponse:
	raise ProviderError(
		"the reply filled the context window",
		provider="b",
		model="m",
		context_exceeded=True,
		usage=Usage(5000, 100, cost_usd=0.05, calls=1),
	)


async def test_a_billed_failure_after_a_fallback_counts_under_its_model() -> None:
	"""The first model is overloaded, the second's reply filled its window (billed): the run ends
	on the window error, and that call's tokens count, under the second model."""
	agent = _fallback(Model("a", _overloaded), Model("b", _billed_failure), compaction=False)
	with pytest.raises(RunError, match="every model failed") as caught:
		await agent.run("go")
	state = caught.value.result.state
	assert _parts(state.usage_by_model, state.usage) == {"b:m": (5000, 100, 1)}


async def test_a_blocked_reply_before_a_model_that_fails_still_counts() -> None:
	"""Blocked by the first model, the second refuses the request: the blocked call's tokens
	count in the run, under the first model (they were lost with the chain's error)."""

	def refused(request: ModelRequest) -> ModelResponse:
		raise ProviderError("bad request (400)", provider="b", model="m", status_code=400)

	with pytest.raises(RunError, match="every model failed") as caught:
		await _fallback(Model("a", blocked), Model("b", refused)).run("go")
	state = caught.value.result.state
	assert _parts(state.usage_by_model, state.usage) == {"a:m": (900, 12, 1)}


async def test_a_billed_failure_the_fallback_moves_past_counts_under_its_model() -> None:
	"""A failed call that was billed and falls back: its tokens ride with the next model's
	answer, under the model that failed."""

	def billed_overload(request: ModelRequest) -> ModelResponse:
		raise ProviderError(
			"overloaded (529)",
			provider="a",
			model="m",
			status_code=529,
			retryable=True,
			usage=Usage(300, 0, cost_usd=0.003, calls=1),
		)

	result = await _fallback(Model("a", billed_overload), Model("b", answer())).run("go")
	assert result.status == "success", result.error
	assert _parts(result.usage_by_model, result.usage) == {
		"a:m": (300, 0, 1),
		"b:m": (100, 10, 1),
	}


def echo(pad: str) -> str:
	"""Echo.

	Args:
		pad: Text.
	"""
	return pad


async def test_a_summary_the_fallback_wrote_counts_under_each_model() -> None:
	"""The agent's own models write the summary: the first blocks it, the second writes it; each
	call counts under its model."""
	answered: list[Usage] = []

	def first(request: ModelRequest) -> ModelResponse:
		if request.system.startswith(SUMMARY_PROMPT[:40]):
			return blocked(request)
		done = len(answered) >= 11
		command = finish("done") if done else call_tool("local.echo", pad="x" * 400)
		# its prompt's size as its input tokens, so that compaction triggers
		usage = Usage(estimate_tokens(request.messages, request.system), 10, calls=1)
		answered.append(usage)
		return ModelResponse(text=json.dumps({"commands": [command]}), usage=usage)

	second = Model("b", answer("the steps so far"))
	om = OpenMolt(entry_points=False, max_steps=100)
	agent = om.create_agent(
		name="Long",
		model=[Model("a", first), second],
		tools=[echo],
		compaction=CompactionConfig(threshold_tokens=1500, keep_steps=2),
	)
	result = await agent.run("go")
	assert result.status == "success", result.error
	parts = _parts(result.usage_by_model, result.usage)
	summaries = second.calls
	assert summaries >= 1
	assert parts["b:m"] == (100 * summaries, 10 * summaries, summaries)
	# a's calls: every step, and one blocked call per summary
	steps_in = sum(u.input_tokens for u in answered)
	assert len(answered) == result.steps
	assert parts["a:m"] == (
		steps_in + 900 * summaries,
		10 * result.steps + 12 * summaries,
		result.steps + summaries,
	)


async def test_a_sub_agents_fallback_counts_under_each_model_in_the_caller() -> None:
	"""A sub-agent whose first model blocks: the calling run counts each of the sub-run's calls
	under the model that made it."""
	om = OpenMolt(entry_points=False)
	sub = om.create_agent(
		name="sub", model=[Model("a", blocked), Model("b", answer())], instructions="x"
	)
	replies = iter([json.dumps({"commands": [call_tool("local.sub", task="t")]}), DONE])
	top = om.create_agent(
		name="top",
		model=Model("top", lambda request: answer(next(replies))(request)),
		instructions="x",
		tools=[sub],
	)
	result = await top.run("go")
	assert result.status == "success", result.error
	assert _parts(result.usage_by_model, result.usage) == {
		"top:m": (200, 20, 2),
		"a:m": (900, 12, 1),
		"b:m": (100, 10, 1),
	}


class PricedModel(Model):
	"""`Model` with a price per million tokens (its provider reports no cost)."""

	def __init__(
		self, name: str, reply: Callable[[ModelRequest], ModelResponse], price: float
	) -> None:
		super().__init__(name, reply)
		self._price = price

	def price(self, model: str) -> tuple[float, float, float, None]:
		return (self._price, self._price, self._price, None)


async def test_a_blocked_reply_reporting_no_token_is_counted_from_its_size() -> None:
	"""A reply the fallback moves past whose provider reports no token is not free: its prompt
	is counted from its size (as an answering reply's is) and priced at its own model's price."""

	def silent_block(request: ModelRequest) -> ModelResponse:
		return ModelResponse(text="", usage=Usage(calls=1), finish_reason="blocked")

	def done(request: ModelRequest) -> ModelResponse:
		return ModelResponse(text=DONE, usage=Usage(100, 10, calls=1), finish_reason="stop")

	first, second = PricedModel("a", silent_block, 10.0), PricedModel("b", done, 1.0)
	result = await _fallback(first, second).run("go")
	assert result.status == "success", result.error
	blocked_part = result.usage_by_model["a:m"]
	assert blocked_part.input_tokens > 0 and blocked_part.calls == 1
	assert blocked_part.cost_usd == pytest.approx(blocked_part.input_tokens * 10.0 / 1e6)
	assert result.usage_by_model["b:m"].cost_usd == pytest.approx(110 * 1.0 / 1e6)
	assert result.usage.cost_usd == pytest.approx((blocked_part.cost_usd or 0) + 110 * 1.0 / 1e6)


@pytest.mark.parametrize("own", [False, True], ids=["compactor", "own-models"])
async def test_a_summary_reporting_no_token_is_counted_from_its_size(own: bool) -> None:
	"""A compaction summary whose provider reports no token counts its prompt and text."""
	step_replies: list[ModelResponse] = []

	def main(request: ModelRequest) -> ModelResponse:
		if SUMMARY_PROMPT.split("{", 1)[0][:40] in request.system:
			return ModelResponse(text="the summary", usage=Usage(calls=1), finish_reason="stop")
		n = len(step_replies)
		command = finish("done") if n >= 8 else call_tool("local.echo", pad="x" * 800)
		tokens = estimate_tokens(request.messages, request.system)
		reply = ModelResponse(
			text=json.dumps({"commands": [command]}), usage=Usage(tokens, 10, calls=1)
		)
		step_replies.append(reply)
		return reply

	summariser = Model("s", lambda request: ModelResponse(text="sum", usage=Usage(calls=1)))
	om = OpenMolt(entry_points=False, max_steps=100)
	agent = om.create_agent(
		name="Long",
		model=Model("a", main),
		tools=[echo],
		compaction=CompactionConfig(threshold_tokens=1500, keep_steps=2),
	)
	if not own:
		agent.compactor = lambda: (summariser, "m")
	result = await agent.run("go")
	assert result.status == "success", result.error
	summaries = result.usage.calls - result.steps
	assert summaries >= 1
	steps_in = sum(r.usage.input_tokens for r in step_replies)
	assert len(step_replies) == result.steps
	# Each summary's prompt (the older steps, several hundred tokens) and text count too.
	assert result.usage.input_tokens - steps_in > 200 * summaries
	text = "the summary" if own else "sum"
	assert result.usage.output_tokens - 10 * result.steps == summaries * ((len(text) + 3) // 4)
