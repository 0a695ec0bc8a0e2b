"""Events emitted outside a run (schedules, stranded durable runs) reach the instance's observers.

They went to the agent's handlers only: the run store and the viewer never saw a skipped schedule
fire, and a stranded durable run looked killed.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core._durable import RunStrandedEvent
from openmolt_core.agent import Agent
from openmolt_core.events import Event
from openmolt_core.observe import RunObserver
from openmolt_core.runstore import RunStore
from openmolt_core.testing import FakeClock, ScriptedModel, finish
from openmolt_weather import weather

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 3, 9, 12, tzinfo=UTC)
SECRET = "wx-secret-outside-42"


class Outside(RunObserver):
	def __init__(self) -> None:
		self.seen: list[tuple[str, str, dict[str, Any]]] = []

	async def outside(self, agent: Agent, event: Event, data: dict[str, Any]) -> None:
		self.seen.append((agent.name, event.name, data))


class Gated:
	"""Finishes only once its gate opens, so the next due times overlap and are skipped."""

	name = "gated"
	model = "gated"

	def __init__(self) -> None:
		self.gate = anyio.Event()

	async def generate(self, request: Any) -> Any:
		from openmolt_core import ModelResponse, Usage

		await self.gate.wait()
		text = json.dumps({"commands": [{"type": "finish", "output": {"ok": True}}]})
		return ModelResponse(text=text, usage=Usage(input_tokens=1, output_tokens=1, calls=1))


async def test_schedule_fires_and_skips_reach_the_observers_and_the_run_store(
	tmp_path: Path,
) -> None:
	"""schedule:run, :skip and :end reach an observer; the store lists the skip as a run."""
	model = Gated()
	clock = FakeClock(T0)
	seen = Outside()
	om = OpenMolt(entry_points=False, clock=clock, observers=[seen], run_store=tmp_path / "runs.db")
	agent = om.create_agent(name="Ticker", model=model)
	sid = agent.schedule({"type": "interval", "value": 60})
	async with om:
		await clock.advance(minutes=2)
		model.gate.set()
		await clock.advance(seconds=1)
	names = [name for _, name, _ in seen.seen]
	assert names == ["schedule:run", "schedule:skip", "schedule:end"]
	skip = seen.seen[1][2]
	assert skip["schedule_id"] == sid
	assert skip["record"]["status"] == "skipped"
	assert om.run_store is not None
	skipped = await om.run_store.runs(status="skipped", trigger="schedule")
	assert [(r.agent, r.trigger, r.error) for r in skipped] == [
		("Ticker", {"kind": "schedule", "where": sid}, skip["record"]["note"])
	]
	ran = await om.run_store.runs(status="success", trigger="schedule")
	assert len(ran) == 1
	events = [e.name for e in await om.run_store.events(ran[0].run_id)]
	assert events[0] == "schedule:run" and events[-1] == "schedule:end"


async def test_a_stranded_durable_run_is_stored_as_stranded_and_masked(tmp_path: Path) -> None:
	"""run:stranded (emitted as a durable worker does) marks the run's row, secrets masked."""
	seen = Outside()
	om = OpenMolt(
		entry_points=False,
		observers=[seen],
		run_store=tmp_path / "runs.db",
		integrations={"weather": {"apiKey": SECRET}},
	)
	om.register_integration("weather", weather.WEATHER)
	store = om.run_store
	assert isinstance(store, RunStore)
	agent = om.create_agent(name="Slow", model=ScriptedModel([finish({"ok": True})]))
	await agent.run("x")  # a row to mark, then made to look like a run whose process died
	[row] = await store.runs()
	with sqlite3.connect(store.path) as conn:
		conn.execute(
			"UPDATE agent_runs SET status = 'running', ended = NULL, pid = 999999999"
			" WHERE run_id = ?",
			(row.run_id,),
		)
	assert agent._events.wants("run:stranded")  # the worker checks this before building it
	await agent._events.emit(
		RunStrandedEvent(
			agent="Slow", step=0, run_id=row.run_id, version="v1", current="v2", worker=SECRET
		)
	)
	[(_, name, data)] = seen.seen
	assert name == "run:stranded" and SECRET not in json.dumps(data)
	stored = await store.run(row.run_id)
	assert stored is not None and stored.status == "stranded"
	assert "'v1'" in (stored.error or "")
	[event] = [e for e in await store.events(row.run_id) if e.name == "run:stranded"]
	assert SECRET not in json.dumps(event.data)


async def test_a_run_with_observers_hears_its_events_once() -> None:
	"""A run's own events reach an observer through its drive only, never as outside events."""
	seen = Outside()
	om = OpenMolt(entry_points=False, observers=[seen])
	agent = om.create_agent(name="A", model=ScriptedModel([finish({"ok": True})]))
	heard: list[str] = []
	agent.on("finish", lambda e: heard.append(e.name))
	await agent.run("x")
	assert heard == ["finish"] and seen.seen == []


async def test_observers_alone_do_not_turn_streaming_on() -> None:
	"""With an observer and no ``text:delta`` listener, a step asks the provider's ``generate``.

	Observers never get the streaming previews; counting them as listeners made every run of an
	observed instance stream (a server that streams differently then failed where ``generate``
	had said what to set).
	"""
	from openmolt_core import ModelResponse, Usage

	class Both:
		name = "both"
		model = "both"

		def __init__(self) -> None:
			self.calls: list[str] = []

		async def generate(self, request: Any) -> Any:
			self.calls.append("generate")
			text = json.dumps({"commands": [{"type": "finish", "output": {"ok": True}}]})
			return ModelResponse(text=text, usage=Usage(input_tokens=1, output_tokens=1, calls=1))

		async def stream(self, request: Any) -> Any:
			self.calls.append("stream")
			yield await self.generate(request)

	provider = Both()
	om = OpenMolt(entry_points=False, observers=[Outside()])
	agent = om.create_agent(name="A", model=provider)
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert provider.calls == ["generate"]


async def test_two_agents_skipping_one_schedule_id_and_due_time_get_a_row_each(
	tmp_path: Path,
) -> None:
	"""Two agents whose schedules share an id skip the same due time: the run store lists a
	skipped run of each, with its own events.

	The row's id was ``<schedule id>@<due>:skipped`` for both: the second agent's row was dropped
	and its skip event filed under the first agent's run."""
	clock = FakeClock(T0)
	models = {name: Gated() for name in ("Alpha", "Beta")}
	instances = []
	for name, model in models.items():  # two instances (two files, say) on one run store
		om = OpenMolt(entry_points=False, clock=clock, run_store=tmp_path / "runs.db")
		om.create_agent(name=name, model=model).schedule(
			{"type": "interval", "value": 60, "id": "daily"}
		)
		instances.append(om)
	async with instances[0], instances[1]:
		await clock.advance(minutes=2)
		for model in models.values():
			model.gate.set()
		await clock.advance(seconds=1)
	store = instances[0].run_store
	assert store is not None
	skipped = await store.runs(status="skipped", trigger="schedule")
	assert sorted(r.agent for r in skipped) == ["Alpha", "Beta"]
	for run in skipped:
		events = await store.events(run.run_id)
		assert [e.name for e in events] == ["schedule:skip"]
