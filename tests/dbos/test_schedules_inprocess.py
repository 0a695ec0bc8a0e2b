"""Schedules on the engine, in one process with a fake clock: the overlap rule and missed runs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from _harness import make_store

from openmolt import OpenMolt
from openmolt_core import ModelResponse, Usage
from openmolt_core.testing import FakeClock, ScriptedModel, finish
from openmolt_dbos._engine import reset_engine
from openmolt_dbos._schedules import due_id

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 3, 9, 12, tzinfo=UTC)


class Gated:
	"""A model that finishes once its gate opens."""

	name = "gated"
	model = "gated"

	def __init__(self) -> None:
		self.gate = anyio.Event()
		self.calls = 0

	async def generate(self, request: Any) -> ModelResponse:
		self.calls += 1
		await self.gate.wait()
		text = json.dumps({"commands": [{"type": "finish", "output": {"n": self.calls}}]})
		return ModelResponse(text=text, usage=Usage(input_tokens=3, output_tokens=2))


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
	stores = make_store(request.param, tmp_path)
	url = next(stores)
	try:
		yield url
	finally:
		_forget()
		for _ in stores:
			pass


def _forget() -> None:
	from dbos import DBOS

	DBOS.destroy()
	reset_engine()


async def _outputs(url: str, prefix: str) -> dict[str, Any]:
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=url)
	try:
		return {
			s.workflow_id: (s.status, s.output)
			for s in client.list_workflows(workflow_id_prefix=prefix, load_input=False)
		}
	finally:
		client.destroy()


async def _until(what: Any) -> Any:
	with anyio.fail_after(60):
		while True:
			value = await what()
			if value:
				return value
			await anyio.sleep(0.05)


async def test_a_due_time_while_the_previous_run_goes_is_skipped(store: str) -> None:
	"""The second due time's workflow finds the first still running and ends as skipped."""
	clock = FakeClock(T0)
	om = OpenMolt(durability=store, entry_points=False, clock=clock)
	model = Gated()
	agent = om.create_agent(name="Ticker", model=model)
	ends: list[Any] = []
	skips: list[Any] = []
	started: list[Any] = []
	agent.on("schedule:run", started.append)
	agent.on("schedule:end", ends.append)
	agent.on("schedule:skip", skips.append)
	sid = agent.schedule({"type": "interval", "value": 60, "id": "ticker"})
	first, second = (
		due_id(sid, T0 + timedelta(seconds=60)),
		due_id(sid, T0 + timedelta(seconds=120)),
	)
	assert first == "ticker@2024-03-09T12:01:00Z"
	async with om:
		await _until(lambda: _async(clock.sleeping))
		await clock.advance(seconds=60)
		await _until(lambda: _async(model.calls))
		await clock.advance(seconds=60)
		await _until(lambda: _async(skips))
		model.gate.set()
		await _until(lambda: _async(ends))
		runs = await _outputs(store, "ticker@")
		om.scheduler.stop()
	_forget()
	assert runs[first][0] == "SUCCESS" and runs[first][1]["result"]["status"] == "success"
	assert runs[second] == (
		"SUCCESS",
		{"skipped": f"overlap: a run of agent 'Ticker' is still going ({first})"},
	)
	assert [r.status for r in om.scheduler.get(sid).history] == ["skipped", "success"]
	assert ends[0].record.due == T0 + timedelta(seconds=60) and ends[0].record.usage["calls"] == 1
	assert model.calls == 1
	# The events name the run's id, the workflow's: no rebuilding it from the due time.
	assert [e.run_id for e in started] == [first] and [e.run_id for e in ends] == [first]


async def _async(value: Any) -> Any:
	return value


async def _settled(url: str) -> dict[str, Any] | None:
	"""Every workflow of the store with its status and output, once none is still going."""
	runs = await _outputs(url, "")
	going = ("PENDING", "ENQUEUED")
	return None if any(status in going for status, _ in runs.values()) else runs


async def test_runs_missed_while_every_worker_was_down_run_once_on_the_next_start(
	store: str,
) -> None:
	"""The last due time is kept in the store: a later start catches up once (missedRuns)."""
	clock = FakeClock(T0)
	om = OpenMolt(durability=store, entry_points=False, clock=clock)
	agent = om.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	spec = {"type": "interval", "value": 300, "id": "digest", "missedRuns": "run_once"}
	agent.schedule(spec)
	async with om:
		await _until(lambda: _async(clock.sleeping))
		await clock.advance(seconds=300)
		await _until(lambda: _async(om.scheduler.get("digest").history))
		om.scheduler.stop()
	_forget()

	later = FakeClock(T0 + timedelta(minutes=22))
	om2 = OpenMolt(durability=store, entry_points=False, clock=later)
	agent2 = om2.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	agent2.schedule(spec)
	async with om2:
		await _until(lambda: _async(om2.scheduler.get("digest").history))
		runs = await _outputs(store, "digest@")
		om2.scheduler.stop()
	_forget()
	caught_up = due_id("digest", T0 + timedelta(minutes=20))
	assert sorted(runs) == sorted([due_id("digest", T0 + timedelta(minutes=5)), caught_up])
	record = om2.scheduler.get("digest").history[-1]
	assert record.due == T0 + timedelta(minutes=20) and record.status == "success"
	assert record.note == "catching up once: 3 runs missed while the process was down or asleep"


async def test_a_short_interval_restarted_late_starts_one_workflow_not_a_burst(store: str) -> None:
	"""A 3 s interval restarted 40 s later with 'skip' starts the latest due time's workflow only.

	With the 60 s grace, each due time of the last minute counted as on time: each started a
	workflow of its own, all but the first ending as overlaps, even with ``missedRuns: skip``.
	"""
	clock = FakeClock(T0)
	om = OpenMolt(durability=store, entry_points=False, clock=clock)
	agent = om.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	spec = {"type": "interval", "value": 3, "id": "digest", "missedRuns": "skip"}
	agent.schedule(spec)
	async with om:
		await _until(lambda: _async(clock.sleeping))
		await clock.advance(seconds=3)
		await _until(lambda: _async(om.scheduler.get("digest").history))
		om.scheduler.stop()
	_forget()

	later = FakeClock(T0 + timedelta(seconds=43))  # 1 s after the due time 42: on time
	om2 = OpenMolt(durability=store, entry_points=False, clock=later)
	agent2 = om2.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	agent2.schedule(spec)
	schedule = om2.scheduler.get("digest")
	async with om2:
		await _until(lambda: _async([r for r in schedule.history if r.status == "success"]))
		runs = await _until(lambda: _settled(store))
		om2.scheduler.stop()
	_forget()
	assert sorted(w for w in runs if w.startswith("digest@")) == sorted(
		[due_id("digest", T0 + timedelta(seconds=s)) for s in (3, 42)]
	)
	assert [(r.status, r.due) for r in schedule.history] == [
		("skipped", T0 + timedelta(seconds=6)),
		("success", T0 + timedelta(seconds=42)),
	]
	assert (schedule.history[0].note or "").startswith("12 runs missed")


async def test_run_now_moves_no_cursor_so_missed_runs_are_still_caught_up(store: str) -> None:
	"""A run_now while every worker was down is a run of its own: the next start still finds
	the due times missed since the last one and catches up once.

	run_now moved the shared cursor to its own time: the next start found nothing missed."""
	clock = FakeClock(T0)
	om = OpenMolt(durability=store, entry_points=False, clock=clock)
	agent = om.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	spec = {"type": "interval", "value": 300, "id": "digest", "missedRuns": "run_once"}
	agent.schedule(spec)
	async with om:
		await _until(lambda: _async(clock.sleeping))
		await clock.advance(seconds=300)
		await _until(lambda: _async(om.scheduler.get("digest").history))
		om.scheduler.stop()
	_forget()

	later = FakeClock(T0 + timedelta(minutes=22))
	om2 = OpenMolt(durability=store, entry_points=False, clock=later)
	agent2 = om2.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	agent2.schedule(spec)
	schedule = om2.scheduler.get("digest")
	by_hand = await schedule.run_now()
	assert (by_hand.status, by_hand.due) == ("success", later.now())
	async with om2:
		await _until(lambda: _async(len(schedule.history) == 2))
		om2.scheduler.stop()
	_forget()
	record = schedule.history[-1]
	assert record.due == T0 + timedelta(minutes=20) and record.status == "success"
	assert record.note == "catching up once: 3 runs missed while the process was down or asleep"


async def test_a_run_that_ended_here_before_dbos_recorded_it_is_no_overlap(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""DBOS records a workflow's end after its caller got the result: a run by hand that ended a
	moment ago still reads PENDING to the next scheduled run's overlap check, which skipped
	("a run ... is still going") the catch-up it should have made."""
	import openmolt_dbos._schedules as schedules

	real = schedules.find

	async def unrecorded(engine: Any, labels: dict[str, Any], **filters: Any) -> list[Any]:
		# Every run that ended in this process reads as still going, as in the moment before
		# DBOS records its end, and as made before any other (milliseconds may tie).
		found = await real(engine, labels)
		for status in found:
			if status.workflow_id in engine.ended:
				status.status, status.created_at = "PENDING", 0
		wanted = set(filters.get("status") or ())
		return [s for s in found if s.status in wanted]

	monkeypatch.setattr(schedules, "find", unrecorded)
	await test_run_now_moves_no_cursor_so_missed_runs_are_still_caught_up(store)


async def test_a_worker_back_after_another_served_its_absence_catches_up_nothing(
	store: str,
) -> None:
	"""The cursor is shared: due times another worker ran while this one was down are not missed."""
	spec = {"type": "interval", "value": 300, "id": "digest", "missedRuns": "run_once"}

	async def serve(at: datetime, advance: float) -> OpenMolt:
		clock = FakeClock(at)
		om = OpenMolt(durability=store, entry_points=False, clock=clock)
		agent = om.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 5))
		agent.schedule(spec)
		async with om:
			await _until(lambda: _async(clock.sleeping))
			if advance:
				# One due time at a time: the runs go through DBOS's threads, which the fake
				# clock's "every task blocked" does not wait for, so a jump of several due times
				# could find the first run still going and take the next for a missed one.
				for fired in range(1, int(advance // 300) + 1):
					await clock.advance(seconds=300)
					await _until(
						lambda n=fired: _async(len(om.scheduler.get("digest").history) >= n)
					)
			else:  # back: its loop sleeps until the next due time, having fired nothing
				await anyio.sleep(0.5)
			om.scheduler.stop()
		_forget()
		return om

	await serve(T0, 300)  # worker A: the first due time, then A goes down
	await serve(T0 + timedelta(minutes=6), 900)  # worker B serves while A is down
	back = await serve(T0 + timedelta(minutes=22), 0)  # A is back (run_once)
	runs = await _outputs(store, "digest@")
	assert sorted(runs) == sorted(
		due_id("digest", T0 + timedelta(minutes=m)) for m in (5, 10, 15, 20)
	)
	assert back.scheduler.get("digest").history == []
	# It went on from B's cursor: its next due time is the one after B's last.
	assert back.scheduler.get("digest").next_run == T0 + timedelta(minutes=25)


@pytest.mark.parametrize(
	("names", "spec"),
	[
		(("Alpha", "Beta"), {"type": "interval", "value": 60, "id": "daily"}),
		(("Helper", "helper"), {"type": "interval", "value": 60}),  # one derived id: "helper-…"
	],
	ids=["explicit-id", "derived-id"],
)
async def test_two_agents_with_one_schedule_id_each_run_their_own_due_time(
	store: str, names: tuple[str, str], spec: dict[str, Any]
) -> None:
	"""Two agents (two instances, as two workers) whose schedules share an id each run every due
	time, once: the first keeps the id's workflows (``<id>@<due>``), the other's are its own.

	They shared the workflow ``<id>@<due>``: the second agent's firing attached to the first's run,
	and the second agent never ran (and its cursor moved with the first's)."""
	clock = FakeClock(T0)
	ends: dict[str, list[Any]] = {}
	instances, ids = [], []
	for name in names:
		om = OpenMolt(durability=store, entry_points=False, clock=clock)
		agent = om.create_agent(name=name, model=ScriptedModel([finish(result=name)] * 2))
		ends[name] = []
		agent.on("schedule:end", ends[name].append)
		ids.append(agent.schedule(spec))
		instances.append(om)
	assert ids[0] == ids[1]
	first, second = instances
	async with first, second:
		await _until(lambda: _async(clock.sleeping >= 2))
		await clock.advance(seconds=60)
		await _until(lambda: _async(all(ends.values())))
		# A run's end is heard before DBOS marks its workflow done: read once both are.
		runs = await _until(lambda: _settled(store))
		for om in instances:
			om.scheduler.stop()
	_forget()
	due = T0 + timedelta(seconds=60)
	records = {name: [e.record for e in got] for name, got in ends.items()}
	assert {name: [(r.status, r.result.output) for r in got] for name, got in records.items()} == {
		name: [("success", {"result": name})] for name in names
	}
	run_ids = sorted(e.run_id for got in ends.values() for e in got)
	assert len(set(run_ids)) == 2 and due_id(ids[0], due) in run_ids  # the first keeps its ids
	assert sorted(runs) == run_ids
	assert [status for status, _ in runs.values()] == ["SUCCESS", "SUCCESS"]


async def test_a_schedule_key_is_held_by_one_agent_and_a_key_spelled_twice_is_refused(
	store: str,
) -> None:
	"""The first agent keeps the id; the next gets its own key, the same each time; a key that
	another agent's id spells already is refused, naming both agents."""
	import hashlib

	from openmolt_core.errors import ConfigurationError
	from openmolt_dbos._workers import claim_schedule, create_tables, ensure_database, make_engine

	ensure_database(store)
	engine = make_engine(store)
	try:
		create_tables(engine)
		assert claim_schedule(engine, "daily", "Alpha") == "daily"
		beta = claim_schedule(engine, "daily", "Beta")
		assert beta.endswith(":daily") and beta.startswith("beta-")
		assert claim_schedule(engine, "daily", "Beta") == beta
		assert claim_schedule(engine, "daily", "Alpha") == "daily"
		delta = f"delta-{hashlib.sha256(b'Delta').hexdigest()[:8]}:daily"
		assert claim_schedule(engine, delta, "Gamma") == delta  # Delta's key, Gamma's id
		with pytest.raises(ConfigurationError) as err:
			claim_schedule(engine, "daily", "Delta")
	finally:
		engine.dispose()
	assert "belongs to agent 'Alpha'" in str(err.value) and "to agent 'Gamma'" in str(err.value)
	assert "give the schedule an id of its own" in str(err.value)


async def test_a_cursor_kept_under_a_derived_id_of_before_is_taken_over(store: str) -> None:
	"""A run_once schedule of an earlier version's store goes on from its cursor: it catches up."""
	clock = FakeClock(T0)
	om = OpenMolt(durability=store, entry_points=False, clock=clock)
	agent = om.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	spec = {"type": "interval", "value": 300, "missedRuns": "run_once"}
	sid = agent.schedule(spec)
	first = om.scheduler.get(sid)
	former = first.former_id
	assert former is not None and former != sid
	# As an earlier version served it: under the id it derived then.
	first.id, first._former_id, om.scheduler._schedules = former, None, {former: first}
	async with om:
		await _until(lambda: _async(clock.sleeping))
		await clock.advance(seconds=300)
		await _until(lambda: _async(first.history))
		om.scheduler.stop()
	_forget()

	later = FakeClock(T0 + timedelta(minutes=22))
	om2 = OpenMolt(durability=store, entry_points=False, clock=later)
	agent2 = om2.create_agent(name="Digest", model=ScriptedModel([finish(result="ok")] * 3))
	assert agent2.schedule(spec) == sid
	schedule = om2.scheduler.get(sid)
	async with om2:
		with anyio.fail_after(20):
			await _until(lambda: _async(schedule.history))
		om2.scheduler.stop()
	_forget()
	record = schedule.history[-1]
	assert record.due == T0 + timedelta(minutes=20) and record.status == "success"
	assert record.note == "catching up once: 3 runs missed while the process was down or asleep"
