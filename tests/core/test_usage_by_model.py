"""A run's usage per model adds up to its usage, whatever spent it.

Besides its steps' model calls, a run spends through a sub-agent's run (and that one's own
sub-agents), a guardrail agent's run and a compaction summary. Each counts in ``usage`` and, under
the model that spent it, in ``usage_by_model``, also when a durable run is replayed from its
journal.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import InMemorySession, OpenMolt, RunState, Usage
from openmolt_core._cost import estimate_tokens
from openmolt_core.compaction import CompactionConfig
from openmolt_core.errors import ProviderError
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.testing import ScriptedModel, call_tool, finish

from .test_durability import JournalPort

pytestmark = pytest.mark.anyio

PRICED = Usage(input_tokens=100, output_tokens=20, cost_usd=0.01)


def _by_model(result: Any) -> dict[str, int]:
	"""The calls per model; and the check that the per-model usage adds up to the total."""
	total = Usage()
	for usage in result.usage_by_model.values():
		total.add(usage)
	assert total.to_dict() == pytest.approx(result.usage.to_dict())
	return {model: usage.calls for model, usage in result.usage_by_model.items()}


def _agents(om: OpenMolt, *, fails: bool = False) -> Any:
	"""writer -> researcher -> checker, each on a model of its own name."""
	checker = om.create_agent(
		name="checker",
		model=ScriptedModel([finish("checked")], usage=PRICED, name="small"),
		instructions="Check.",
	)
	last = finish(status="failure", result="no") if fails else finish("found")
	researcher = om.create_agent(
		name="researcher",
		model=ScriptedModel(
			[call_tool("local.checker", task="check"), last], usage=PRICED, name="mid"
		),
		instructions="Research.",
		tools=[checker],
	)
	return om.create_agent(
		name="writer",
		model=ScriptedModel(
			[call_tool("local.researcher", task="Oslo"), finish("done")], usage=PRICED, name="big"
		),
		instructions="Write.",
		tools=[researcher],
	)


async def test_nested_sub_agents_count_under_their_own_models() -> None:
	result = await _agents(OpenMolt(entry_points=False)).run("go")
	assert result.status == "success"
	assert _by_model(result) == {"big:scripted": 2, "mid:scripted": 2, "small:scripted": 1}


async def test_a_sub_agent_that_fails_still_counts_under_its_models() -> None:
	result = await _agents(OpenMolt(entry_points=False), fails=True).run("go")
	assert any("ended with status failure" in m.content for m in result.state.messages)
	assert _by_model(result) == {"big:scripted": 2, "mid:scripted": 2, "small:scripted": 1}


async def _journaled() -> tuple[dict[str, Any], dict[int, Any], Any]:
	"""A run of `_agents` journaled: its starting state, its journal, its result."""
	om = OpenMolt(entry_points=False)
	state = _agents(om).new_state("go")
	saved = state.to_dict()
	port = JournalPort()
	result = await _agents(om).execute(state, port=port)
	return saved, port.recorded, result


async def test_a_replay_counts_the_sub_agents_usage_per_model_from_the_journal() -> None:
	saved, journal, first = await _journaled()
	# A recovered run: every step answered by the journal (the sub-agents do not run again).
	again = await _agents(OpenMolt(entry_points=False)).execute(
		RunState.from_dict(saved), port=JournalPort(journal)
	)
	assert _by_model(again) == _by_model(first)
	assert again.usage.to_dict() == first.usage.to_dict()


async def test_a_journal_written_before_usage_per_model_still_counts_the_total() -> None:
	"""A sub-agent's step journaled with ``_usage`` only (an older version): counted in total."""
	saved, journal, first = await _journaled()
	old = {
		n: (k, {f: v for f, v in value.items() if f != "_usage_by_model"})
		if k.startswith("tool:")
		else (k, value)
		for n, (k, value) in journal.items()
	}
	again = await _agents(OpenMolt(entry_points=False)).execute(
		RunState.from_dict(saved), port=JournalPort(old)
	)
	assert again.usage.to_dict() == first.usage.to_dict()
	assert {m: u.calls for m, u in again.usage_by_model.items()} == {"big:scripted": 2}


async def test_a_guardrail_agent_counts_under_its_model() -> None:
	om = OpenMolt(entry_points=False)
	judge = om.create_agent(
		name="Judge",
		model=ScriptedModel([finish(action="allow", reason="fine")], usage=PRICED, name="judge"),
		output_schema=VERDICT_SCHEMA,
	)
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([finish("ok")], usage=PRICED, name="main"),
		guardrails=[Guardrail(judge, on="input")],
	)
	result = await agent.run("hello")
	assert result.status == "success"
	assert _by_model(result) == {"main:scripted": 1, "judge:scripted": 1}


class _Summariser:
	name = "summariser"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		return ModelResponse(text="summary", usage=Usage(100, 10, calls=1, cost_usd=0.001))


class _Counting:
	"""A model that reports its prompt's size as its input tokens (so compaction triggers)."""

	name = "main"

	def __init__(self) -> None:
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		command = finish("done") if self.calls >= 12 else call_tool("local.echo", pad="x" * 400)
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(
			text=json.dumps({"commands": [command]}), usage=Usage(tokens, 20, calls=1)
		)


def echo(pad: str) -> str:
	"""Echo.

	Args:
		pad: Text.
	"""
	return pad


@pytest.mark.parametrize("own", [False, True], ids=["compactor", "own-models"])
async def test_a_compaction_summary_counts_under_the_model_that_wrote_it(own: bool) -> None:
	om = OpenMolt(entry_points=False, max_steps=100)
	agent = om.create_agent(
		name="Long",
		model=_Counting(),
		tools=[echo],
		compaction=CompactionConfig(threshold_tokens=1500, keep_steps=2),
	)
	if not own:
		agent.compactor = lambda: (_Summariser(), "cheap")
	result = await agent.run("go")
	calls = _by_model(result)
	if own:  # the summaries are the agent's own model's calls: more of them than steps
		assert list(calls) == ["main:main"] and calls["main:main"] > result.steps
	else:
		assert calls["main:main"] == result.steps and calls["summariser:cheap"] >= 1


class _Broken:
	"""A model that refuses every request (the sub-agent never gets an answer)."""

	name = "broken"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		raise ProviderError("bad request", provider="broken", model="m", retryable=False)


async def test_a_sub_agent_that_spent_nothing_adds_no_call() -> None:
	"""A sub-run that failed before any model answered spent nothing: no phantom call."""
	om = OpenMolt(entry_points=False)
	sub = om.create_agent(name="sub", model=_Broken(), instructions="x")
	top = om.create_agent(
		name="top",
		model=ScriptedModel(
			[call_tool("local.sub", task="t"), finish("done")], usage=PRICED, name="big"
		),
		instructions="x",
		tools=[sub],
	)
	result = await top.run("go")
	assert _by_model(result) == {"big:scripted": 2}
	assert result.usage.calls == 2


async def test_the_summary_of_a_long_session_counts_in_the_run_that_reads_it() -> None:
	"""A session's older turns are summarised as a run opens: that call counts in the run's
	usage, under the model that wrote it."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([finish("ok")], usage=PRICED, name="main"),
		compaction=CompactionConfig(threshold_tokens=400),
	)
	agent.compactor = lambda: (_Summariser(), "cheap")
	session = InMemorySession("long")
	for i in range(12):
		await session.add_items(
			[
				{"role": "user", "content": f"question {i} " + "x" * 80, "run_id": f"r{i}"},
				{"role": "agent", "content": f"answer {i}", "status": "success", "run_id": f"r{i}"},
			]
		)
	result = await agent.run("and now?", session=session)
	assert any(i["role"] == "summary" for i in await session.get_items())
	assert _by_model(result) == {"summariser:cheap": 1, "main:scripted": 1}
