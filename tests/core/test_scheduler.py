import json
import time
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core import ModelResponse, ProviderError, Usage
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import FakeClock, ScriptedModel, finish

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 3, 9, 12, tzinfo=UTC)


class GatedModel:
	"""Finishes only once its gate opens; counts calls."""

	name = "gated"
	model = "gated"

	def __init__(self) -> None:
		self.gate = anyio.Event()
		self.calls = 0
		self.fail_first = False

	async def generate(self, request):
		self.calls += 1
		if self.fail_first and self.calls == 1:
			raise ProviderError("boom", provider="gated")
		await self.gate.wait()
		text = json.dumps({"commands": [{"type": "finish", "output": {"n": self.calls}}]})
		return ModelResponse(text=text, usage=Usage(input_tokens=3, output_tokens=2, calls=1))


def setup(model, *, start=T0, **om_options):
	clock = FakeClock(start)
	om = OpenMolt(entry_points=False, clock=clock, **om_options)
	agent = om.create_agent(name="Ticker", model=model)
	return clock, om, agent


def finishes(n: int) -> ScriptedModel:
	return ScriptedModel([finish({"ok": True}) for _ in range(n)])


async def test_interval_runs_fire_at_each_due_time() -> None:
	"""An interval of 60 s runs five times in five minutes, each at its due time."""
	clock, om, agent = setup(finishes(5))
	sid = agent.schedule({"type": "interval", "value": 60, "input": "tick"})
	async with om:
		await clock.advance(minutes=5)
		history = om.scheduler.get(sid).history
	assert [r.due for r in history] == [T0 + timedelta(seconds=60 * k) for k in range(1, 6)]
	assert [r.started for r in history] == [r.due for r in history]
	assert {r.status for r in history} == {"success"}
	assert history[0].usage["input_tokens"] == 10
	assert history[0].result.output == {"ok": True}


async def test_daily_runs_follow_dst_in_the_scheduler() -> None:
	"""A daily 02:30 New York schedule runs once per day across the spring-forward day."""
	clock, om, agent = setup(finishes(3))
	sid = agent.schedule({"type": "daily", "hour": 2, "minute": 30, "timeZone": "America/New_York"})
	async with om:
		await clock.advance(days=3)
	dues = [r.due for r in om.scheduler.get(sid).history]
	assert dues == [
		datetime(2024, 3, 10, 7, 30, tzinfo=UTC),
		datetime(2024, 3, 11, 6, 30, tzinfo=UTC),
		datetime(2024, 3, 12, 6, 30, tzinfo=UTC),
	]


async def test_a_run_still_going_makes_the_next_one_skip() -> None:
	"""Runs of one agent never overlap: due times during a run are skipped and reported."""
	model = GatedModel()
	clock, om, agent = setup(model)
	skipped = []
	agent.on("schedule:skip", lambda e: skipped.append(e.record.note))
	sid = agent.schedule({"type": "interval", "value": 60})
	async with om:
		await clock.advance(minutes=3)
		assert om.scheduler.get(sid).running is not None
		model.gate.set()
		await clock.advance(seconds=1)
		history = om.scheduler.get(sid).history
	assert [r.status for r in history] == ["skipped", "skipped", "success"]
	assert model.calls == 1
	assert skipped == ["overlap: a run of agent 'Ticker' is still going"] * 2


async def test_two_schedules_of_one_agent_do_not_overlap() -> None:
	"""The overlap rule is per agent, so a second schedule due at the same time is skipped."""
	model = GatedModel()
	clock, om, agent = setup(model)
	a = agent.schedule({"type": "interval", "value": 60})
	b = agent.schedule({"type": "interval", "value": 60, "id": "second"})
	async with om:
		await clock.advance(minutes=1)
		model.gate.set()
		await clock.advance(seconds=1)
	statuses = sorted(r.status for s in (a, b) for r in om.scheduler.get(s).history)
	assert statuses == ["skipped", "success"]


async def test_a_failing_run_is_reported_and_the_schedule_goes_on() -> None:
	"""A provider failure ends that run with status error; the next run succeeds."""
	model = GatedModel()
	model.fail_first = True
	model.gate.set()
	clock, om, agent = setup(model)
	ended = []
	agent.on("schedule:end", lambda e: ended.append((e.record.status, e.record.error)))
	sid = agent.schedule({"type": "interval", "value": 60})
	async with om:
		await clock.advance(minutes=2)
	assert [s for s, _ in ended] == ["error", "success"]
	assert "boom" in ended[0][1]
	assert [r.status for r in om.scheduler.get(sid).history] == ["error", "success"]


async def test_a_backend_that_fails_to_start_a_run_does_not_stop_the_schedules() -> None:
	"""The backend raises for one due time (its database is down): the next due time runs.

	The error left the schedule's loop and ended the scheduler, every schedule with it.
	"""
	from openmolt_core.scheduler import LocalScheduleBackend

	class Flaky(LocalScheduleBackend):
		failed = False

		async def fire(self, scheduler, schedule, due, *, note=None, wait=False):
			if not self.failed:
				self.failed = True
				raise ConnectionError("the database is down")
			return await super().fire(scheduler, schedule, due, note=note, wait=wait)

	clock, om, agent = setup(finishes(2))
	om.scheduler.backend = Flaky()
	sid = agent.schedule({"type": "interval", "value": 60})
	async with om:
		await clock.advance(minutes=3)
	history = om.scheduler.get(sid).history
	assert [(r.due, r.status) for r in history] == [
		(T0 + timedelta(minutes=2), "success"),
		(T0 + timedelta(minutes=3), "success"),
	]


async def test_schedule_events_carry_the_run_id_of_the_run_they_report() -> None:
	"""schedule:run and schedule:end name the scheduled run's id (its result's state.run_id)."""
	clock, om, agent = setup(finishes(2))
	runs: list[str] = []
	ends: list[tuple[str, str]] = []
	agent.on("schedule:run", lambda e: runs.append(e.run_id))
	agent.on("schedule:end", lambda e: ends.append((e.run_id, e.record.result.state.run_id)))
	agent.schedule({"type": "interval", "value": 60})
	async with om:
		await clock.advance(minutes=2)
	assert len(runs) == 2 and all(runs) and runs[0] != runs[1]
	assert [a for a, _ in ends] == runs and all(a == b for a, b in ends)


async def test_cancel_while_a_run_is_in_flight_lets_it_finish() -> None:
	"""Cancelling a schedule stops future runs; the run in flight still finishes."""
	model = GatedModel()
	clock, om, agent = setup(model)
	sid = agent.schedule({"type": "interval", "value": 60})
	schedule = om.scheduler.get(sid)
	async with om:
		await clock.advance(minutes=1)
		agent.cancel_schedule(sid)
		model.gate.set()
		await clock.advance(minutes=5)
	assert [r.status for r in schedule.history] == ["success"]
	assert om.schedules == []
	with pytest.raises(ConfigurationError, match="no schedule with id"):
		agent.cancel_schedule(sid)


def test_an_agent_cancels_only_its_own_schedules() -> None:
	"""agent.cancel_schedule refuses another agent's schedule and leaves it; the scheduler's own
	cancel takes any, or, given an agent, only that agent's."""
	_, om, agent = setup(finishes(1))
	other = om.create_agent(name="Other", model=ScriptedModel([finish()]), instructions="x")
	sid = other.schedule({"type": "interval", "value": 60})
	with pytest.raises(ConfigurationError, match="belongs to agent 'Other'"):
		agent.cancel_schedule(sid)
	with pytest.raises(ConfigurationError, match="belongs to agent 'Other'"):
		om.scheduler.cancel(sid, agent=agent)
	assert [s.id for s in om.schedules] == [sid]
	om.scheduler.cancel(sid)
	assert om.schedules == []


async def test_cancel_with_cancel_running_cancels_the_run_in_flight() -> None:
	"""cancel_running=True stops the run in flight and records it as cancelled."""
	model = GatedModel()
	clock, om, agent = setup(model)
	sid = agent.schedule({"type": "interval", "value": 60})
	schedule = om.scheduler.get(sid)
	async with om:
		await clock.advance(minutes=1)
		agent.cancel_schedule(sid, cancel_running=True)
		await clock.advance(minutes=5)
	assert [r.status for r in schedule.history] == ["cancelled"]
	assert model.calls == 1


async def test_leaving_the_block_cancels_the_run_of_a_schedule_cancelled_before() -> None:
	"""A cancelled schedule's run goes on, until the block ends: then it is cancelled too.

	The scheduler looked for runs to cancel among its schedules only, so leaving the block
	waited for that run to end by itself (here, never).
	"""
	model = GatedModel()
	clock, om, agent = setup(model)
	sid = agent.schedule({"type": "interval", "value": 60})
	schedule = om.scheduler.get(sid)
	with anyio.fail_after(5):
		async with om:
			await clock.advance(minutes=1)
			agent.cancel_schedule(sid)  # the run in flight goes on
			assert schedule.running is not None
	assert [r.status for r in schedule.history] == ["cancelled"]


async def test_a_cancelled_schedule_cannot_be_resumed() -> None:
	"""resume() after cancel() is refused, and nothing more runs.

	It started a loop nobody stopped: the runs went on, and leaving the block waited forever.
	"""
	clock, om, agent = setup(finishes(1))
	sid = agent.schedule({"type": "interval", "value": 60})
	schedule = om.scheduler.get(sid)
	with anyio.fail_after(5):
		async with om:
			await clock.advance(minutes=1)
			schedule.cancel()
			with pytest.raises(ConfigurationError, match="was cancelled"):
				schedule.resume()
			await clock.advance(minutes=3)
	assert [r.status for r in schedule.history] == ["success"]


@pytest.mark.parametrize(
	("policy", "status", "calls"), [("skip", "skipped", 0), ("run_once", "success", 1)]
)
async def test_missed_runs_follow_the_policy(policy, status, calls) -> None:
	"""After the machine sleeps through 18 runs, 'skip' skips them and 'run_once' runs once."""
	model = finishes(2)
	clock, om, agent = setup(model)
	sid = agent.schedule({"type": "interval", "value": 600, "missedRuns": policy})
	async with om:
		await clock.advance(seconds=1)
		clock.jump(hours=3, minutes=5)
		await clock.advance(seconds=1)
		first = list(om.scheduler.get(sid).history)
		await clock.advance(minutes=10)
	assert [r.status for r in first] == [status]
	assert "18 runs missed" in first[0].note
	assert first[0].due == T0 + timedelta(hours=3)
	assert model.calls == calls + 1  # plus the next on-time run
	assert om.scheduler.get(sid).history[-1].due == T0 + timedelta(hours=3, minutes=10)


@pytest.mark.parametrize("policy", ["skip", "run_once"])
async def test_a_due_time_within_grace_runs_and_covers_the_missed_ones(policy) -> None:
	"""Waking just after a due time runs it on time and reports the earlier ones as missed."""
	model = finishes(1)
	clock, om, agent = setup(model)
	sid = agent.schedule({"type": "interval", "value": 60, "missedRuns": policy})
	async with om:
		await clock.advance(seconds=1)
		clock.jump(hours=3)
		await clock.advance(seconds=1)
	history = om.scheduler.get(sid).history
	assert [r.status for r in history] == ["skipped", "success"]
	assert history[0].note.startswith("179 runs missed")
	assert history[1].due == T0 + timedelta(hours=3)
	assert model.calls == 1


@pytest.mark.parametrize(
	("spec", "missed"),
	[
		({"type": "cron", "expression": "* * * * *", "timeZone": "Europe/Berlin"}, "more than"),
		({"type": "interval", "value": 0.5}, "5,183,999 runs missed"),
	],
)
async def test_a_clock_jump_of_a_month_skips_once_and_quickly(spec, missed) -> None:
	"""30 days behind on a fine schedule: one skip record, found without walking every due time.

	Walked one by one, 43,200 minutes of cron took minutes of the event loop and were skipped
	in batches of 10,000 (five records).
	"""
	clock, om, agent = setup(finishes(2))
	sid = agent.schedule({**spec, "missedRuns": "run_once"})
	async with om:
		await clock.advance(seconds=0.5)
		clock.jump(days=30)
		began = time.perf_counter()
		await clock.advance(seconds=0.1)
		took = time.perf_counter() - began
	history = om.scheduler.get(sid).history
	[skipped] = [r for r in history if r.status == "skipped"]
	assert missed in (skipped.note or "") and history[-1].status == "success"
	assert history[-1].due > clock.now() - timedelta(seconds=60)
	assert took < 5


async def test_pause_and_resume() -> None:
	"""A paused schedule does not fire and has no next run; resumed, it fires again."""
	clock, om, agent = setup(finishes(2))
	sid = agent.schedule({"type": "interval", "value": 60})
	schedule = om.scheduler.get(sid)
	async with om:
		await clock.advance(minutes=1)
		schedule.pause()
		assert schedule.next_run is None
		await clock.advance(minutes=10)
		assert len(schedule.history) == 1
		schedule.resume()
		await clock.advance(seconds=1)
		assert schedule.next_run == T0 + timedelta(minutes=12)
		await clock.advance(minutes=1)
	assert [r.due for r in schedule.history] == [
		T0 + timedelta(minutes=1),
		T0 + timedelta(minutes=12),
	]


async def test_run_now_runs_at_once_and_skips_when_busy() -> None:
	"""run_now returns a finished record, or a skipped one while the agent is running."""
	model = GatedModel()
	model.gate.set()
	_, om, agent = setup(model)
	schedule = om.scheduler.get(agent.schedule({"type": "daily", "hour": 9, "timeZone": "UTC"}))
	record = await schedule.run_now()
	assert record.status == "success"
	assert record.result.output == {"n": 1}
	model.gate = anyio.Event()
	async with anyio.create_task_group() as tg:
		tg.start_soon(schedule.run_now)
		await anyio.wait_all_tasks_blocked()
		busy = await schedule.run_now()
		model.gate.set()
	assert busy.status == "skipped"
	assert [r.status for r in schedule.history] == ["success", "skipped", "success"]


async def test_next_run_is_exposed() -> None:
	"""next_run previews before serving and tracks the due time while serving."""
	clock, om, agent = setup(finishes(1))
	schedule = om.scheduler.get(
		agent.schedule({"type": "cron", "expression": "0 * * * *", "timeZone": "UTC"})
	)
	assert schedule.next_run == datetime(2024, 3, 9, 13, tzinfo=UTC)
	async with om:
		await clock.advance(minutes=90)
		assert schedule.next_run == datetime(2024, 3, 9, 14, tzinfo=UTC)


async def test_start_and_stop_in_the_callers_task_group() -> None:
	"""om.start(tg) runs schedules in the app's task group; om.stop() ends them."""
	clock, om, agent = setup(finishes(2))
	sid = agent.schedule({"type": "interval", "value": 60})
	async with anyio.create_task_group() as tg:
		await om.start(tg)
		assert om.scheduler.serving
		await clock.advance(minutes=2)
		await om.stop()
	assert not om.scheduler.serving
	assert len(om.scheduler.get(sid).history) == 2


async def test_stop_lets_the_run_in_flight_finish_unless_told() -> None:
	"""stop() waits for the run in flight; stop(cancel_running=True) cancels it."""
	for cancel, expected in ((False, "success"), (True, "cancelled")):
		model = GatedModel()
		clock, om, agent = setup(model)
		sid = agent.schedule({"type": "interval", "value": 60})
		async with anyio.create_task_group() as tg:
			await om.start(tg)
			await clock.advance(minutes=1)
			om.scheduler.stop(cancel_running=cancel)
			await anyio.wait_all_tasks_blocked()
			model.gate.set()
			await om.scheduler.wait_closed()
		assert [r.status for r in om.scheduler.get(sid).history] == [expected]


async def until(condition) -> None:
	# The SQLite store works in a thread, which the fake clock cannot see; poll briefly for it.
	with anyio.fail_after(5):
		for _ in range(1000):
			if condition():
				return
			await anyio.sleep(0.005)


async def test_sqlite_history_survives_a_restart_and_catches_up(tmp_path) -> None:
	"""With a SQLite file, a new process sees the old runs and catches up once on missed ones."""
	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 600, "missedRuns": "run_once"}
	clock, om, agent = setup(finishes(2), schedule_store=db)
	sid = agent.schedule(spec)
	async with om:
		for n in (1, 2):
			await until(lambda: clock.sleeping)  # the loop read the store and waits
			await clock.advance(seconds=600)
			await until(lambda n=n: len(om.scheduler.get(sid).history) == n)
	stored = await om.scheduler.get(sid).stored_history()
	assert [(r.due, r.status) for r in stored] == [
		(T0 + timedelta(seconds=600), "success"),
		(T0 + timedelta(seconds=1200), "success"),
	]
	assert stored[0].usage["calls"] == 1

	later = T0 + timedelta(hours=1, minutes=5)
	_, om2, agent2 = setup(finishes(1), start=later, schedule_store=db)
	sid2 = agent2.schedule(spec)
	assert sid2 == sid  # derived ids are stable across restarts
	schedule = om2.scheduler.get(sid2)
	async with om2:
		await until(lambda: len(schedule.history) == 1)
	record = schedule.history[0]
	assert record.status == "success"
	assert "4 runs missed" in record.note
	assert record.due == T0 + timedelta(hours=1)
	assert len(await schedule.stored_history()) == 3


async def test_the_sqlite_history_keeps_the_latest_records_of_each_schedule(tmp_path) -> None:
	"""The file is bounded per schedule, the oldest go first; the last due time stays known."""
	from openmolt_core._history import KEEP, RunRecord, SqliteHistory

	assert KEEP == 1000
	history = SqliteHistory(tmp_path / "runs.sqlite", keep=3)
	for sid in ("a", "b"):
		for k in range(5):
			due = T0 + timedelta(minutes=k)
			await history.add(RunRecord(sid, "Ticker", due, due, due, "success"))
	for sid in ("a", "b"):
		kept = await history.records(sid, limit=10)
		assert [r.due for r in kept] == [T0 + timedelta(minutes=k) for k in (2, 3, 4)]
		assert await history.last_due(sid) == T0 + timedelta(minutes=4)


async def test_explicit_ids_must_be_unique_and_derived_ones_are_made_unique() -> None:
	"""An explicit id is refused twice; identical specs get -2 suffixed ids."""
	_, _, agent = setup(finishes(0))
	a = agent.schedule({"type": "interval", "value": 5})
	b = agent.schedule({"type": "interval", "value": 5})
	assert b == f"{a}-2"
	agent.schedule({"type": "interval", "value": 5, "id": "mine"})
	with pytest.raises(ConfigurationError, match="already exists"):
		agent.schedule({"type": "interval", "value": 6, "id": "mine"})
	for schedule in agent.om.schedules:
		schedule.cancel()  # never meant to be served


def test_a_durability_backend_fires_schedules_only_when_it_says_so() -> None:
	"""Scheduling asks the durability backend for its schedule backend through a protocol."""
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.scheduler import (
		DurableSchedules,
		LocalScheduleBackend,
		schedule_backend_of,
	)
	from openmolt_dbos import DBOSBackend

	class Firing:
		def __init__(self) -> None:
			self.backend = LocalScheduleBackend()

		def schedule_backend(self) -> LocalScheduleBackend:
			return self.backend

	class RunsOnly:
		pass

	firing = Firing()
	assert schedule_backend_of(None) is None
	assert schedule_backend_of(firing) is firing.backend
	with pytest.raises(ConfigurationError, match="RunsOnly cannot fire schedules"):
		schedule_backend_of(RunsOnly())
	assert issubclass(DBOSBackend, DurableSchedules)


async def test_a_run_that_raises_records_its_error_masked(tmp_path) -> None:
	"""An error that is not a RunError (the loop masks those) is masked before it is recorded:
	the history, its SQLite store and the schedule:end event show no secret."""
	secret = "sk-SCHEDULEDsecret0042"

	class Broken:
		name = "broken"
		model = "broken"

		async def generate(self, request):
			raise ConfigurationError(f"the key {secret} was refused")

	store = tmp_path / "history.db"
	_, om, agent = setup(Broken(), schedule_store=store)
	om.secrets.add(secret)
	ended = []
	agent.on("schedule:end", lambda e: ended.append(repr(e)))
	sid = agent.schedule({"type": "interval", "value": 60, "input": "tick"})
	async with om:
		record = await om.scheduler.get(sid).run_now()
	assert record.status == "error" and "refused" in (record.error or "")
	assert secret not in (record.error or "") and ended and secret not in ended[0]
	assert secret.encode() not in store.read_bytes()


async def test_a_schedule_whose_next_time_fails_stops_alone(monkeypatch, caplog) -> None:
	"""next_run raising for one schedule logs it and pauses that schedule; the others go on.

	The error left the schedule's loop and ended the scheduler, every schedule with it.
	"""
	import openmolt_core.scheduler as scheduler_module

	real = scheduler_module.next_run

	def next_run(spec, after, *, anchor=None):
		if spec.id == "broken":
			raise OverflowError("date value out of range")
		return real(spec, after, anchor=anchor)

	monkeypatch.setattr(scheduler_module, "next_run", next_run)
	clock, om, agent = setup(finishes(3))
	other = om.create_agent(name="Other", model=finishes(0))
	other.schedule({"type": "interval", "value": 60, "id": "broken"})
	sid = agent.schedule({"type": "interval", "value": 60})
	with caplog.at_level("ERROR", logger="openmolt"):
		async with om:
			await clock.advance(minutes=3)
	assert [r.status for r in om.scheduler.get(sid).history] == ["success"] * 3
	broken = om.scheduler.get("broken")
	assert broken.paused and broken.next_run is None and broken.history == []
	assert any("broken" in r.getMessage() and "stops" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
	("given", "fragment"),
	[("", "empty"), ("   ", "empty"), ("a\nb", "control"), ("x" * 201, "200")],
	ids=["empty", "blank", "newline", "long"],
)
async def test_an_explicit_id_must_be_a_short_line_of_text(given: str, fragment: str) -> None:
	"""A blank id, one with a line break (it forged log lines) or a huge one is refused."""
	_, _, agent = setup(finishes(0))
	with pytest.raises(ConfigurationError, match=r"id") as info:
		agent.schedule({"type": "interval", "value": 5, "id": given})
	assert fragment in str(info.value)
	assert agent.om.scheduler.schedules == []


@pytest.mark.parametrize("store", [False, True])
async def test_stored_history_returns_at_most_limit_records(tmp_path, store: bool) -> None:
	"""limit=1 is the latest record, with or without a file; a limit under 1 is refused.

	In memory, limit=0 returned every record and -1 all but the first; the file took -1 as all.
	"""
	options = {"schedule_store": tmp_path / "runs.sqlite"} if store else {}
	clock, om, agent = setup(finishes(3), **options)
	sid = agent.schedule({"type": "interval", "value": 60})
	schedule = om.scheduler.get(sid)
	async with om:
		for n in (1, 2, 3):  # the store is read and written in threads: one due time at a time
			await until(lambda: clock.sleeping)
			await clock.advance(seconds=60)
			await until(lambda n=n: len(schedule.history) == n)
	assert [r.due for r in await schedule.stored_history(1)] == [T0 + timedelta(minutes=3)]
	assert len(await schedule.stored_history()) == 3
	for limit in (0, -1):
		with pytest.raises(ConfigurationError, match="limit"):
			await schedule.stored_history(limit)


async def test_run_now_does_not_move_an_intervals_grid_across_a_restart(tmp_path) -> None:
	"""An hourly interval on the hour stays on the hour after a run_now at half past and a restart.

	The restarted schedule counted from the run_now's time: 09:30, 10:30... instead of 09:00.
	"""
	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 3600}
	clock, om, agent = setup(finishes(2), schedule_store=db)
	schedule = om.scheduler.get(agent.schedule(spec))
	async with om:
		await until(lambda: clock.sleeping)
		await clock.advance(hours=1)
		await until(lambda: len(schedule.history) == 1)
		await clock.advance(minutes=30)
		await schedule.run_now()
		assert schedule.next_run == T0 + timedelta(hours=2)
	clock2, om2, agent2 = setup(
		finishes(0), start=T0 + timedelta(hours=1, minutes=40), schedule_store=db
	)
	restarted = om2.scheduler.get(agent2.schedule(spec))
	async with om2:
		await until(lambda: clock2.sleeping)
		assert restarted.next_run == T0 + timedelta(hours=2)


async def _one_due(om, clock, sid) -> None:
	async with om:
		await until(lambda: clock.sleeping)
		await clock.advance(seconds=600)
		await until(lambda: len(om.scheduler.get(sid).history) == 1)


async def test_pausing_a_schedule_in_its_file_keeps_its_id_and_cursor(tmp_path) -> None:
	"""Paused, then unpaused (or its missed-run policy changed): one id, one cursor, no catch-up."""
	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 600, "input": "tick"}
	clock, om, agent = setup(finishes(1), schedule_store=db)
	sid = agent.schedule(spec)
	await _one_due(om, clock, sid)
	for changed in (
		{"paused": True},
		{"missedRuns": "run_once"},
		{"paused": True, "missedRuns": "run_once"},
	):
		_, other, again = setup(finishes(0), schedule_store=db)
		assert again.schedule({**spec, **changed}) == sid  # what it is, not how it is served
		other.scheduler.get(sid).cancel()
	_, other, again = setup(finishes(0), schedule_store=db)
	assert again.schedule({**spec, "input": "tock"}) != sid  # another input: another schedule
	other.scheduler.get(again.om.schedules[0].id).cancel()
	# Unpaused an hour later: the count goes on from the cursor the file kept.
	later = T0 + timedelta(hours=1, minutes=5)
	_, om2, agent2 = setup(finishes(0), start=later, schedule_store=db)
	assert agent2.schedule(spec) == sid
	schedule = om2.scheduler.get(sid)
	async with om2:
		await until(lambda: len(schedule.history) == 1)
	assert schedule.history[0].status == "skipped"
	assert schedule.history[0].due == T0 + timedelta(hours=1)
	assert "5 runs missed" in (schedule.history[0].note or "")
	assert len(await schedule.stored_history()) == 2


async def test_a_cursor_kept_under_an_id_derived_with_the_pause_is_read_once(tmp_path) -> None:
	"""A store from before: the schedule's row under its former id is taken over by its id."""
	from openmolt_core.scheduler import _former_id

	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 600, "missedRuns": "run_once"}
	clock, om, agent = setup(finishes(1), schedule_store=db)
	sid = agent.schedule(spec)
	former = _former_id("Ticker", om.scheduler.get(sid).spec)
	assert former is not None and former != sid
	# As an earlier version kept it: its row and history under the id it derived then.
	first = om.scheduler.get(sid)
	first.id, first._former_id, om.scheduler._schedules = former, None, {former: first}
	await _one_due(om, clock, former)
	later = T0 + timedelta(hours=1, minutes=5)
	_, om2, agent2 = setup(finishes(1), start=later, schedule_store=db)
	assert agent2.schedule(spec) == sid
	schedule = om2.scheduler.get(sid)
	async with om2:
		await until(lambda: len(schedule.history) == 1)
	assert schedule.history[0].due == T0 + timedelta(hours=1)
	assert "5 runs missed" in (schedule.history[0].note or "")  # caught up from the old cursor
	assert [r.schedule_id for r in await schedule.stored_history()] == [sid, sid]


@pytest.mark.parametrize("policy", ["skip", "run_once"])
async def test_waking_after_a_short_interval_runs_once_not_a_burst(policy) -> None:
	"""A 3 s interval woken 30 s late runs its latest due time once: no catch-up burst, no overlaps.

	With a 60 s grace, each of the ten due times of the last 30 s counted as on time: the first
	ran and the nine others were each skipped as an overlap, even with ``missedRuns: skip``.
	"""
	model = GatedModel()
	clock, om, agent = setup(model)
	sid = agent.schedule({"type": "interval", "value": 3, "missedRuns": policy})
	async with om:
		await clock.advance(seconds=1)
		clock.jump(seconds=30)  # due times 3 … 30 passed while asleep; now is T0 + 31
		await clock.advance(seconds=0.5)
		history = list(om.scheduler.get(sid).history)
		model.gate.set()
		await clock.advance(seconds=0.1)
	assert [r.status for r in history] == ["skipped"]
	assert history[0].note.startswith("9 runs missed")
	assert "overlap" not in (history[0].note or "")
	assert model.calls == 1
	[ran] = [r for r in om.scheduler.get(sid).history if r.status == "success"]
	assert ran.due == T0 + timedelta(seconds=30)


@pytest.mark.parametrize(
	("after", "expected", "note"),
	[
		(43, [("skipped", 6), ("success", 42)], "12 runs missed"),  # 1 s late: on time
		(44, [("skipped", 42)], "13 runs missed"),  # 2 s late: over half the 3 s period
	],
)
async def test_sqlite_restart_of_a_short_interval_applies_skip_once(
	tmp_path, after, expected, note
) -> None:
	"""A 3 s interval restarted with 'skip' records one skip, and runs its latest due time only if on time."""
	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 3, "missedRuns": "skip"}
	clock, om, agent = setup(finishes(1), schedule_store=db)
	sid = agent.schedule(spec)
	async with om:
		await until(lambda: clock.sleeping)
		await clock.advance(seconds=3)
		await until(lambda: len(om.scheduler.get(sid).history) == 1)
	_, om2, agent2 = setup(finishes(1), start=T0 + timedelta(seconds=after), schedule_store=db)
	schedule = om2.scheduler.get(agent2.schedule(spec))
	async with om2:
		await until(lambda: len(schedule.history) == len(expected))
		await anyio.sleep(0.05)
	got = [(r.status, int((r.due - T0).total_seconds())) for r in schedule.history]
	assert got == expected
	assert schedule.history[0].note.startswith(note)


async def test_a_due_time_with_none_after_it_still_runs(monkeypatch, caplog) -> None:
	"""A due time whose next one cannot be computed runs on time; the schedule stops after it."""
	import logging

	from openmolt_core import scheduler as module

	real = module.next_run

	def next_run(spec, after, *, anchor=None):
		if after >= T0 + timedelta(seconds=60):
			raise ValueError("no time after this one")
		return real(spec, after, anchor=anchor)

	monkeypatch.setattr(module, "next_run", next_run)
	model = finishes(1)
	clock, om, agent = setup(model)
	sid = agent.schedule({"type": "interval", "value": 60})
	with caplog.at_level(logging.ERROR, logger="openmolt"):
		async with om:
			await clock.advance(minutes=3)
	assert [(r.status, r.due) for r in om.scheduler.get(sid).history] == [
		("success", T0 + timedelta(seconds=60))
	]
	assert any("cannot be computed" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
	("after", "policy", "expected"),
	[
		(610, "skip", [("success", 600)]),  # 10 s late: on time, within the grace
		(1900, "skip", [("skipped", 1800)]),  # three due times slept through: one record
		(1900, "run_once", [("success", 1800)]),  # caught up once
	],
)
async def test_a_schedule_stopped_before_its_first_due_time_counts_it_after_a_restart(
	tmp_path, after, policy, expected
) -> None:
	"""A schedule served, stopped before it first fired, and served again after that due time
	counted from the second start: the due times between were lost without a record (no skip,
	no catch-up under 'run_once', none run late within the grace: a worker that took longer
	to come up than the time left to the due time never ran it). The anchor the first start
	kept is the count's start, as the last due time handled is once there is one."""
	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 600, "missedRuns": policy}
	clock, om, agent = setup(finishes(0), schedule_store=db)
	sid = agent.schedule(spec)
	async with om:
		await until(lambda: clock.sleeping)  # the loop read the store (the anchor kept) and waits
		await clock.advance(seconds=300)
	_, om2, agent2 = setup(finishes(1), start=T0 + timedelta(seconds=after), schedule_store=db)
	schedule = om2.scheduler.get(agent2.schedule(spec))
	assert schedule.id == sid
	async with om2:
		await until(lambda: len(schedule.history) == len(expected))
		await anyio.sleep(0.05)
	got = [(r.status, int((r.due - T0).total_seconds())) for r in schedule.history]
	assert got == expected
