"""What a nested run (a sub-agent's, a guardrail agent's) spent counts in its caller, once.

A nested run hands its usage up in its result, or, when it ends without one (cut off, or failed
with an error that carries no result), to the calling run as it ends; either way every billed
call counts once in the caller's usage, per model, and in its budget.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from openmolt import OpenMolt, RunState, Usage
from openmolt_core.durability import ForwardingPort
from openmolt_core.errors import ConfigurationError
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.observe import RunObserver
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

from .test_durability import JournalPort

pytestmark = pytest.mark.anyio

PRICED = Usage(input_tokens=100, output_tokens=20, cost_usd=0.01)


class BreaksAfter(ScriptedModel):
	"""A scripted model whose call after ``good`` answers raises a configuration error (a key
	revoked, a setting gone), which ends its run without a result."""

	def __init__(self, replies: list[Any], good: int, name: str) -> None:
		super().__init__(replies, usage=PRICED, name=name)
		self.good = good

	async def generate(self, request: ModelRequest) -> ModelResponse:
		if len(self.requests) >= self.good:
			self.requests.append(request)
			raise ConfigurationError("the key was revoked")
		return await super().generate(request)


async def test_a_sub_agent_that_fails_without_a_result_still_counts_what_it_spent() -> None:
	"""A sub-agent's first call is billed, then its run raises (no result): the caller reads the
	tool's failure and counts the billed call, under the sub-agent's model."""
	om = OpenMolt(entry_points=False)
	sub_model = BreaksAfter(
		[call_tool("local.noop"), call_tool("local.noop"), finish("ok")], good=1, name="sub"
	)

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	sub = om.create_agent(name="sub", model=sub_model, instructions="x", tools=[noop])
	top = om.create_agent(
		name="top",
		model=ScriptedModel(
			[call_tool("local.sub", task="t"), finish("done")], usage=PRICED, name="top"
		),
		instructions="x",
		tools=[sub],
	)
	result = await top.run("go")
	assert result.status == "success", result.error
	assert sub_model.calls == 2  # one answered (billed), one raised
	assert {m: u.calls for m, u in result.usage_by_model.items()} == {
		"top:scripted": 2,
		"sub:scripted": 1,
	}
	assert result.usage.calls == 3
	assert result.usage.cost_usd == pytest.approx(0.03)


async def test_a_guardrail_agent_that_fails_without_a_result_still_counts() -> None:
	"""A guardrail agent's billed call counts in the judged run when its run then raises."""
	om = OpenMolt(entry_points=False)
	judge_model = BreaksAfter([call_tool("local.noop"), finish("x")], good=1, name="judge")

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	judge = om.create_agent(
		name="judge",
		model=judge_model,
		instructions="x",
		tools=[noop],
		output_schema=VERDICT_SCHEMA,
	)
	top = om.create_agent(
		name="top",
		model=ScriptedModel([finish("done")], usage=PRICED, name="top"),
		instructions="x",
		guardrails=[Guardrail(judge, on="output")],
	)
	with pytest.raises(ConfigurationError, match="revoked"):
		await top.run("go")
	state = top.last_state
	assert state is not None
	assert judge_model.calls == 2
	assert state.usage_by_model.get("judge:scripted", Usage()).calls == 1


class Crash(BaseException):
	"""The worker dies: nothing of the step under way is journaled."""


class KeepingPort(JournalPort):
	"""`JournalPort` that keeps what a tool call's nested runs spent, as a durable store does
	(``kept`` outlives a crash: the recovered execution gets the same dict)."""

	def __init__(self, journal: Any = None, kept: dict[str, Any] | None = None) -> None:
		super().__init__(journal)
		self.kept: dict[str, Any] = {} if kept is None else kept

	async def spent_before(self, key: str) -> dict[str, Any] | None:
		return self.kept.get(key)

	async def record_spent(self, key: str, entry: Mapping[str, Any]) -> None:
		self.kept[key] = json.loads(json.dumps(dict(entry)))


def _crashing_pair(crash: bool, recovered: bool = False) -> Any:
	"""top calls sub; sub's second call crashes the worker. Recovered: top's first step is the
	journal's, so its model is asked for the rest only."""
	om = OpenMolt(entry_points=False)

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	def dies(request: ModelRequest) -> Any:
		raise Crash

	second: Any = dies if crash else finish("sub done")
	sub = om.create_agent(
		name="sub",
		model=ScriptedModel([call_tool("local.noop"), second], usage=PRICED, name="sub"),
		instructions="x",
		tools=[noop],
	)
	return om.create_agent(
		name="top",
		model=ScriptedModel(
			[finish("done")] if recovered else [call_tool("local.sub", task="t"), finish("done")],
			usage=PRICED,
			name="top",
		),
		instructions="x",
		tools=[sub],
	)


async def test_a_sub_agent_call_a_crash_interrupted_counts_its_first_attempt_once() -> None:
	"""A durable run's worker dies inside a sub-agent's run, after one billed call: the
	recovered run runs the call again and counts both attempts' calls, once; a replay of the
	finished run from its journal counts them the same, never twice."""
	state = _crashing_pair(crash=True).new_state("go")
	saved = state.to_dict()
	first = KeepingPort()
	with pytest.raises(Crash):
		await _crashing_pair(crash=True).execute(state, port=first)
	assert first.kept  # the billed call was kept as it was made
	again = KeepingPort(first.recorded, first.kept)
	result = await _crashing_pair(crash=False, recovered=True).execute(
		RunState.from_dict(saved), port=again
	)
	assert result.status == "success", result.error
	calls = {m: u.calls for m, u in result.usage_by_model.items()}
	assert calls == {"top:scripted": 2, "sub:scripted": 3}  # 1 before the crash, 2 after
	assert result.usage.calls == 5
	assert result.usage.cost_usd == pytest.approx(0.05)
	replayed = await _crashing_pair(crash=False).execute(
		RunState.from_dict(saved), port=KeepingPort(again.recorded, again.kept)
	)
	assert {m: u.calls for m, u in replayed.usage_by_model.items()} == calls
	assert replayed.usage.calls == 5


def _crashing_judge(crash: bool) -> Any:
	"""top's output is judged by a guardrail agent whose second call crashes the worker."""
	om = OpenMolt(entry_points=False)

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	def dies(request: ModelRequest) -> Any:
		raise Crash

	second: Any = dies if crash else finish(action="allow", reason="ok")
	judge = om.create_agent(
		name="judge",
		model=ScriptedModel([call_tool("local.noop"), second], usage=PRICED, name="judge"),
		instructions="x",
		tools=[noop],
		output_schema=VERDICT_SCHEMA,
	)
	return om.create_agent(
		name="top",
		model=ScriptedModel([finish("done")], usage=PRICED, name="top"),
		instructions="x",
		guardrails=[Guardrail(judge, on="output")],
	)


async def test_a_guardrail_check_a_crash_interrupted_counts_its_first_attempt_once() -> None:
	"""A durable run's worker dies while a guardrail agent judges, after one billed call: the
	recovered run judges again and counts both attempts' calls once, a replay the same."""
	state = _crashing_judge(crash=True).new_state("go")
	saved = state.to_dict()
	first = KeepingPort()
	with pytest.raises(Crash):
		await _crashing_judge(crash=True).execute(state, port=first)
	assert first.kept  # the judge's billed call was kept as it was made
	again = KeepingPort(first.recorded, first.kept)
	result = await _crashing_judge(crash=False).execute(RunState.from_dict(saved), port=again)
	assert result.status == "success", result.error
	calls = {m: u.calls for m, u in result.usage_by_model.items()}
	assert calls == {"top:scripted": 1, "judge:scripted": 3}  # 1 before the crash, 2 after
	assert result.usage.calls == 4
	assert result.usage.cost_usd == pytest.approx(0.04)
	replayed = await _crashing_judge(crash=False).execute(
		RunState.from_dict(saved), port=KeepingPort(again.recorded, again.kept)
	)
	assert {m: u.calls for m, u in replayed.usage_by_model.items()} == calls
	assert replayed.usage.calls == 4


class StartingPort(KeepingPort):
	"""`KeepingPort` that records each call's start as a durable store does (``starts``
	outlives a crash): a call found started is in doubt."""

	def __init__(self, journal: Any = None, kept: Any = None, starts: Any = None) -> None:
		super().__init__(journal, kept)
		self.starts: set[str] = set() if starts is None else starts

	async def call_started(self, key: str) -> bool:
		before = key in self.starts
		self.starts.add(key)
		return before


async def test_a_guardrail_check_found_in_doubt_counts_what_its_agent_spent() -> None:
	"""A guardrail agent that may send is not run again after a crash: its verdict fails closed,
	and the call it was billed for before the crash still counts in the judged run, once."""
	om = OpenMolt(entry_points=False)

	@tool(labels=["outbound"])
	def send(text: str) -> str:
		"""Send.

		Args:
			text: The text.
		"""
		raise Crash  # the worker dies while the guardrail agent's call is under way

	judge = om.create_agent(
		name="judge",
		model=ScriptedModel([call_tool("local.send", text="hi")], usage=PRICED, name="judge"),
		instructions="x",
		tools=[send],
		output_schema=VERDICT_SCHEMA,
	)
	top = om.create_agent(
		name="top",
		model=ScriptedModel([finish("done")], usage=PRICED, name="top"),
		instructions="x",
		guardrails=[Guardrail(judge, on="output")],
	)
	state = top.new_state("go")
	saved = state.to_dict()
	first = StartingPort()
	with pytest.raises(Crash):
		await top.execute(state, port=first)
	again = StartingPort(first.recorded, first.kept, first.starts)
	result = await top.execute(RunState.from_dict(saved), port=again)
	assert result.status == "guardrail_tripped"
	assert "in doubt" in (result.error or "")
	assert {m: u.calls for m, u in result.usage_by_model.items()} == {
		"top:scripted": 1,
		"judge:scripted": 1,
	}
	assert result.usage.cost_usd == pytest.approx(0.02)


class StoreDown(KeepingPort):
	"""A keeping port whose store refuses the spend record (its database went away)."""

	async def record_spent(self, key: str, entry: Mapping[str, Any]) -> None:
		raise OSError("the store is unreachable")


async def test_a_port_that_cannot_keep_spend_fails_as_itself_not_as_the_model() -> None:
	"""A port's failure to keep a nested run's spend is the port's: the sub-agent's model
	answered, so the error does not say the model failed, and the caller's state is kept."""
	agent = _crashing_pair(crash=False)
	(sub,) = agent.sub_agents
	kinds: list[str] = []
	sub.on("error", lambda event: kinds.append(event.kind))
	result = await agent.execute(agent.new_state("go"), port=StoreDown())
	assert result.status == "success", result.error  # the caller goes on with the tool's error
	said = json.dumps(result.state.to_dict())
	assert "the store is unreachable" in said
	assert "provider" not in kinds  # the model answered; the port failed
	assert sub.last_state is not None and sub.last_state.usage.calls == 1  # its call counted


class Timing(RunObserver):
	"""An observer that wraps each run's port, as telemetry does (`ForwardingPort`)."""

	def wrap_port(self, run: Any, port: Any) -> Any:
		return ForwardingPort(port)


class OwnPort:
	"""An observer's port of its own: `RunPort`'s members only, none of the optional ones."""

	def __init__(self, port: Any) -> None:
		self.port = port

	@property
	def replaying(self) -> bool:
		return bool(self.port.replaying)

	@property
	def deliver_replayed(self) -> bool:
		return bool(self.port.deliver_replayed)

	def now(self) -> float:
		return float(self.port.now())

	async def deadline(self, seconds: float) -> float:
		return float(await self.port.deadline(seconds))

	async def sleep(self, seconds: float) -> None:
		await self.port.sleep(seconds)

	def reserve(self, keys: Any) -> None:
		self.port.reserve(keys)

	async def step(self, key: str, fn: Any, *, encode: Any = None, decode: Any = None) -> Any:
		return await self.port.step(key, fn, encode=encode, decode=decode)


class OwnTiming(RunObserver):
	"""An observer that wraps each run's port in one of its own (`OwnPort`)."""

	def wrap_port(self, run: Any, port: Any) -> Any:
		return OwnPort(port)


def _crashing_chain(crash: bool, recovered: bool = False, observed: str = "") -> Any:
	"""top calls mid, mid calls leaf; leaf's second call crashes the worker."""
	observers = {"": (), "forwarding": (Timing(),), "own": (OwnTiming(),)}[observed]
	om = OpenMolt(entry_points=False, observers=observers)

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	def dies(request: ModelRequest) -> Any:
		raise Crash

	second: Any = dies if crash else finish("leaf done")
	leaf = om.create_agent(
		name="leaf",
		model=ScriptedModel([call_tool("local.noop"), second], usage=PRICED, name="leaf"),
		instructions="x",
		tools=[noop],
	)
	mid = om.create_agent(
		name="mid",
		model=ScriptedModel(
			[call_tool("local.leaf", task="t"), finish("mid done")], usage=PRICED, name="mid"
		),
		instructions="x",
		tools=[leaf],
	)
	return om.create_agent(
		name="top",
		model=ScriptedModel(
			[finish("done")] if recovered else [call_tool("local.mid", task="t"), finish("done")],
			usage=PRICED,
			name="top",
		),
		instructions="x",
		tools=[mid],
	)


@pytest.mark.parametrize(
	"observed", ["", "forwarding", "own"], ids=["plain", "ports-wrapped", "own-ports"]
)
async def test_a_sub_agents_own_sub_agent_a_crash_interrupted_counts_its_calls_once(
	observed: str,
) -> None:
	"""The worker dies inside a sub-agent's sub-agent, after the leaf's billed call: the spend
	kept for the top call includes it (a nested run's port keeps nothing, so the nested run
	hands its running spend up), and the recovered run counts every call once. An observer
	wrapping each run's port (`ForwardingPort`) does not make a nested port look as if it kept;
	one wrapping it in a port of its own (no optional members) does not hide the durable
	port's keeping (the top call's spend was lost: ``kept`` stayed empty)."""
	state = _crashing_chain(crash=True).new_state("go")
	saved = state.to_dict()
	first = KeepingPort()
	with pytest.raises(Crash):
		await _crashing_chain(crash=True, observed=observed).execute(state, port=first)
	(kept,) = first.kept.values()
	assert {m: u["calls"] for m, u in kept["_usage_by_model"].items()} == {
		"mid:scripted": 1,
		"leaf:scripted": 1,
	}
	again = KeepingPort(first.recorded, first.kept)
	result = await _crashing_chain(crash=False, recovered=True).execute(
		RunState.from_dict(saved), port=again
	)
	assert result.status == "success", result.error
	calls = {m: u.calls for m, u in result.usage_by_model.items()}
	# top: 1 before, 1 after; mid: 1 before, 2 after; leaf: 1 before, 2 after
	assert calls == {"top:scripted": 2, "mid:scripted": 3, "leaf:scripted": 3}


async def test_a_sub_agents_guardrail_check_a_crash_interrupted_is_kept_by_the_top_call() -> None:
	"""The worker dies inside the guardrail agent judging a sub-agent's output: the spend kept
	for the top call includes the judge's billed call, handed up through the sub-agent."""
	om = OpenMolt(entry_points=False)

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	def dies(request: ModelRequest) -> Any:
		raise Crash

	judge = om.create_agent(
		name="judge",
		model=ScriptedModel([call_tool("local.noop"), dies], usage=PRICED, name="judge"),
		instructions="x",
		tools=[noop],
		output_schema=VERDICT_SCHEMA,
	)
	sub = om.create_agent(
		name="sub",
		model=ScriptedModel([finish("sub done")], usage=PRICED, name="sub"),
		instructions="x",
		guardrails=[Guardrail(judge, on="output")],
	)
	top = om.create_agent(
		name="top",
		model=ScriptedModel([call_tool("local.sub", task="t")], usage=PRICED, name="top"),
		instructions="x",
		tools=[sub],
	)
	port = KeepingPort()
	with pytest.raises(Crash):
		await top.execute(top.new_state("go"), port=port)
	(kept,) = port.kept.values()
	assert {m: u["calls"] for m, u in kept["_usage_by_model"].items()} == {
		"sub:scripted": 1,
		"judge:scripted": 1,
	}
