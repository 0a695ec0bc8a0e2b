"""Schedules that share a SQLite store: keys, cursors and the lease that lets one scheduler fire."""

import logging
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import FakeClock, ScriptedModel, finish

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 3, 9, 12, tzinfo=UTC)


def finishes(n: int) -> ScriptedModel:
	return ScriptedModel([finish({"ok": True}) for _ in range(n)])


def instance(clock: FakeClock, store, name: str = "Digest", n: int = 5):
	om = OpenMolt(entry_points=False, clock=clock, schedule_store=store)
	return om, om.create_agent(name=name, model=finishes(n))


async def until(condition) -> None:
	# The SQLite store works in threads; poll briefly for what they do.
	with anyio.fail_after(5):
		for _ in range(1000):
			if condition():
				return
			await anyio.sleep(0.005)


@pytest.mark.parametrize(
	("names", "spec"),
	[
		(("Alpha", "Beta"), {"type": "interval", "value": 600, "id": "daily"}),
		(("Helper", "helper"), {"type": "interval", "value": 600}),  # one derived id
	],
	ids=["explicit-id", "derived-id"],
)
async def test_two_agents_with_one_schedule_id_keep_their_own_cursor(tmp_path, names, spec) -> None:
	"""A second agent whose schedule has the first's id starts its own count: it catches up
	nothing the first ran, and its stored history holds none of the first's records.

	The cursor was keyed by schedule id only: the second agent read the first's last due time
	and caught up four runs it never had ("4 runs missed"), and listed the first's runs."""
	db = tmp_path / "runs.sqlite"
	spec = {**spec, "missedRuns": "run_once"}
	clock = FakeClock(T0)
	om, first = instance(clock, db, names[0])
	sid = first.schedule(spec)
	async with om:
		for n in (1, 2):
			await until(lambda: clock.sleeping)
			await clock.advance(seconds=600)
			await until(lambda n=n: len(om.scheduler.get(sid).history) == n)

	later = FakeClock(T0 + timedelta(hours=1, minutes=5))
	om2, second = instance(later, db, names[1])
	assert second.schedule(spec) == sid
	schedule = om2.scheduler.get(sid)
	async with om2:
		await until(lambda: later.sleeping)
		assert schedule.history == []
		assert schedule.next_run == later.now() + timedelta(seconds=600)
		assert await schedule.stored_history() == []
	assert [r.agent for r in await om.scheduler.get(sid).stored_history()] == [names[0]] * 2


async def test_two_schedulers_on_one_store_fire_each_due_time_once(tmp_path) -> None:
	"""Two instances serving one agent's schedule on one store (two processes, or two instances
	of one process): the first owns it and runs every due time; the second fires none and warns
	once, naming the scheduler that owns it.

	Both fired every due time: each run ran twice."""
	import os

	from openmolt_core.scheduler import ScheduleWarning

	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0)
	spec = {"type": "interval", "value": 60}
	(om1, a1), (om2, a2) = instance(clock, db), instance(clock, db)
	ids = [a1.schedule(spec), a2.schedule(spec)]
	assert ids[0] == ids[1]
	with pytest.warns(ScheduleWarning) as warned:
		async with om1:
			await until(lambda: clock.sleeping == 1)
			async with om2:
				for n in (1, 2, 3):
					await clock.advance(seconds=60)
					assert len(om1.scheduler.get(ids[0]).history) == n
	assert [r.status for r in om1.scheduler.get(ids[0]).history] == ["success"] * 3
	assert om2.scheduler.get(ids[1]).history == []
	said = [str(w.message) for w in warned]
	assert len(said) == 1 and ids[0] in said[0] and "does not fire here" in said[0]
	assert (
		f"pid {os.getpid()} on " in said[0]
		and "another OpenMolt instance of this process" in said[0]
	)


@pytest.mark.parametrize("policy", ["skip", "run_once"])
async def test_two_schedulers_waking_late_on_a_short_interval_run_once_between_them(
	tmp_path, policy
) -> None:
	"""Both schedulers of a 3 s interval sleep through 30 s: one run (or one skip) between them,
	no due time handled twice and no burst of overlaps."""
	from openmolt_core.scheduler import ScheduleWarning

	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0)
	spec = {"type": "interval", "value": 3, "missedRuns": policy}
	(om1, a1), (om2, a2) = instance(clock, db), instance(clock, db)
	sid = a1.schedule(spec)
	a2.schedule(spec)
	with pytest.warns(ScheduleWarning):
		async with anyio.create_task_group() as tg:
			await om1.start(tg)
			await until(lambda: clock.sleeping == 1)
			await om2.start(tg)
			await until(lambda: clock.sleeping == 2)
			clock.jump(seconds=30)  # due times 3 … 30 passed; now is T0 + 30.5
			await clock.advance(seconds=0.5)
			both = [*om1.scheduler.get(sid).history, *om2.scheduler.get(sid).history]
			await om1.stop()
			await om2.stop()
	assert len([r for r in both if r.status == "success"]) == 1
	assert not any("overlap" in (r.note or "") for r in both)
	assert len({r.due for r in both}) == len(both)
	[ran] = [r for r in both if r.status == "success"]
	assert ran.due == T0 + timedelta(seconds=30)


async def test_a_standby_takes_over_when_the_owner_stops_without_repeat_or_loss(tmp_path) -> None:
	"""The owner stops (its lease given up) after two due times: the other scheduler runs the
	third on time and the ones after, and neither runs a due time the other ran."""
	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0)
	spec = {"type": "interval", "value": 60, "missedRuns": "run_once"}
	(om1, a1), (om2, a2) = instance(clock, db), instance(clock, db)
	sid = a1.schedule(spec)
	a2.schedule(spec)
	owner, standby = om1.scheduler.get(sid), om2.scheduler.get(sid)
	async with anyio.create_task_group() as tg:
		await om1.start(tg)
		await until(lambda: clock.sleeping == 1)
		await om2.start(tg)
		await clock.advance(seconds=120)
		assert owner.held_by is None and standby.held_by is not None
		assert standby.next_run is None
		await om1.stop()
		await clock.advance(seconds=120)
		assert standby.held_by is None
		await om2.stop()
	assert [r.due for r in owner.history] == [T0 + timedelta(seconds=s) for s in (60, 120)]
	assert [(r.due, r.started, r.note) for r in standby.history] == [
		(T0 + timedelta(seconds=s), T0 + timedelta(seconds=s), None) for s in (180, 240)
	]


async def test_a_lease_held_elsewhere_is_respected_until_it_ends(tmp_path, caplog) -> None:
	"""A scheduler on another machine holds the schedule: nothing fires here while its lease
	lasts; once it ends unrenewed, the due time it left runs here, once and within the grace."""
	from openmolt_core._history import Owner, SqliteHistory

	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0)
	om, agent = instance(clock, db)
	sid = agent.schedule({"type": "interval", "value": 60})
	elsewhere = Owner("elsewhere", "host-b", 4321)
	claim = await SqliteHistory(db).claim(sid, "Digest", elsewhere, T0, T0 + timedelta(seconds=90))
	assert claim.held
	schedule = om.scheduler.get(sid)
	with caplog.at_level(logging.WARNING, logger="openmolt"):
		async with om:
			await clock.advance(seconds=89)
			assert schedule.history == [] and schedule.held_by == "pid 4321 on host-b"
			await clock.advance(seconds=1)
			assert [r.due for r in schedule.history] == [T0 + timedelta(seconds=60)]
			await clock.advance(seconds=60)
	assert [(r.due, r.status) for r in schedule.history] == [
		(T0 + timedelta(seconds=60), "success"),
		(T0 + timedelta(seconds=120), "success"),
	]
	said = [r.getMessage() for r in caplog.records]
	assert any("served by" in m and "pid 4321 on host-b" in m for m in said)
	assert any("taken over from pid 4321 on host-b" in m for m in said)


async def test_a_crashed_owner_on_this_machine_is_taken_over_at_once_and_its_run_not_rerun(
	tmp_path,
) -> None:
	"""The owner's process died during the run due at 12:10: a restart takes the schedule at
	once (the process is gone) and does not run 12:10 again, even with ``run_once``.

	The cursor was the latest record's due time, written when a run ended: the run in flight at
	the crash was missed and caught up again."""
	import sys

	from openmolt_core._history import Owner, RunRecord, SqliteHistory

	gone = await anyio.run_process([sys.executable, "-c", "import os; print(os.getpid())"])
	pid = int(gone.stdout)  # a process of this machine that ended
	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 600, "missedRuns": "run_once"}
	clock = FakeClock(T0 + timedelta(minutes=15))
	om, agent = instance(clock, db)
	sid = agent.schedule(spec)
	store = SqliteHistory(db)
	crashed = Owner("crashed", Owner.here().host, pid)
	due = T0 + timedelta(minutes=10)
	await store.claim(sid, "Digest", crashed, T0, T0 + timedelta(minutes=1))
	await store.add(RunRecord(sid, "Digest", T0, T0, T0, "success"))  # an earlier run
	moved = await store.advance(sid, "Digest", crashed, due, due, due + timedelta(minutes=30))
	assert moved.moved  # the 12:10 run started; the process died during it
	schedule = om.scheduler.get(sid)
	async with om:
		await clock.advance(seconds=1)
		assert schedule.held_by is None and schedule.history == []
		assert schedule.next_run == T0 + timedelta(minutes=20)


async def test_an_owner_of_this_pid_from_before_a_restart_is_taken_over_at_once(tmp_path) -> None:
	"""A container's process (pid 1, same host name) died and restarted: the lease its earlier
	self left, which no scheduler of this process holds, is taken at once, not waited out.

	It was taken for "another OpenMolt instance of this process": nothing fired until the dead
	process's lease ended (a day's schedule: its next due time and half the grace later)."""
	import os

	from openmolt_core._history import Owner, SqliteHistory

	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0 + timedelta(minutes=15))
	om, agent = instance(clock, db)
	sid = agent.schedule({"type": "interval", "value": 600})
	before = Owner("before-the-restart", Owner.here().host, os.getpid())
	held = await SqliteHistory(db).claim(sid, "Digest", before, T0, T0 + timedelta(days=1))
	assert held.held
	schedule = om.scheduler.get(sid)
	async with om:
		await clock.advance(seconds=1)
		assert schedule.held_by is None
		await clock.advance(seconds=600)
		# The due time the dead process slept through (12:10) is recorded as missed (its lease
		# kept the grid's anchor, 12:00); the next one runs.
		got = [(r.status, r.due) for r in schedule.history]
		assert got == [
			("skipped", T0 + timedelta(minutes=10)),
			("success", T0 + timedelta(minutes=20)),
		]


async def test_a_store_file_from_before_keeps_its_cursor_and_anchor(tmp_path) -> None:
	"""A file with the old tables (an anchor per id, the cursor as the latest record) is read:
	the agent's schedule catches up from its last record on its old grid."""
	import sqlite3

	db = tmp_path / "runs.sqlite"
	spec = {"type": "interval", "value": 600, "missedRuns": "run_once"}
	clock = FakeClock(T0 + timedelta(hours=1, minutes=5))
	om, agent = instance(clock, db)
	sid = agent.schedule(spec)
	conn = sqlite3.connect(db)
	conn.executescript(
		"""
		CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, schedule_id TEXT NOT NULL,
			agent TEXT NOT NULL, due TEXT NOT NULL, started TEXT NOT NULL, ended TEXT,
			status TEXT NOT NULL, usage TEXT, note TEXT, error TEXT);
		CREATE INDEX runs_by_schedule ON runs (schedule_id, due);
		CREATE TABLE anchors (schedule_id TEXT PRIMARY KEY, anchor TEXT NOT NULL);
		"""
	)
	anchor = T0 - timedelta(minutes=3)  # the grid: 11:57, 12:07, ...
	last = anchor + timedelta(minutes=20)
	with conn:
		conn.execute("INSERT INTO anchors VALUES (?, ?)", (sid, anchor.isoformat()))
		conn.execute(
			"INSERT INTO runs (schedule_id, agent, due, started, ended, status)"
			" VALUES (?, 'Digest', ?, ?, ?, 'success')",
			(sid, last.isoformat(), last.isoformat(), last.isoformat()),
		)
	conn.close()
	schedule = om.scheduler.get(sid)
	async with om:
		await clock.advance(seconds=1)
		assert [(r.due, r.note) for r in schedule.history] == [
			(
				anchor + timedelta(minutes=60),
				"catching up once: 4 runs missed while the process was down or asleep",
			)
		]
		assert schedule.next_run == anchor + timedelta(minutes=70)
	assert len(await schedule.stored_history()) == 2


_SERVE = """
import json, sys
import anyio
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

async def main():
	om = OpenMolt(entry_points=False, schedule_store=sys.argv[1])
	agent = om.create_agent(name="Digest", model=ScriptedModel([finish({"ok": True})] * 50))
	sid = agent.schedule({"type": "interval", "value": 1})
	async with om:
		await anyio.sleep(float(sys.argv[2]))
	print(json.dumps([r.due.isoformat() for r in om.scheduler.get(sid).history]))

anyio.run(main)
"""


async def test_two_processes_on_one_store_never_run_one_due_time_twice(tmp_path) -> None:
	"""Two processes serving one schedule (every second) on one file: no due time runs in both,
	and the one that does not fire says which process does."""
	import json
	import sys

	script = tmp_path / "serve.py"
	script.write_text(_SERVE)
	db = tmp_path / "runs.sqlite"
	done: list[tuple[list[str], str]] = []

	async def serve(seconds: float) -> None:
		got = await anyio.run_process([sys.executable, str(script), str(db), str(seconds)])
		done.append((json.loads(got.stdout), got.stderr.decode()))

	with anyio.fail_after(60):
		async with anyio.create_task_group() as tg:
			tg.start_soon(serve, 4.0)
			tg.start_soon(serve, 4.0)
	dues = [due for ran, _ in done for due in ran]
	assert dues and len(dues) == len(set(dues))
	assert any("served by another scheduler" in said and "pid " in said for _, said in done)


async def test_a_store_that_fails_to_answer_does_not_stop_the_scheduler(
	tmp_path, monkeypatch, caplog
) -> None:
	"""The file cannot be read when the schedule starts: it is logged and tried again, and the
	schedule fires its due times (an error escaping the loop would end every schedule)."""
	from openmolt_core._history import SqliteHistory

	real, calls = SqliteHistory.claim, []

	async def claim(self, *args, **kwargs):
		calls.append(args)
		if len(calls) == 1:
			raise OSError("disk I/O error")
		return await real(self, *args, **kwargs)

	monkeypatch.setattr(SqliteHistory, "claim", claim)
	clock = FakeClock(T0)
	om, agent = instance(clock, tmp_path / "runs.sqlite")
	schedule = om.scheduler.get(agent.schedule({"type": "interval", "value": 60}))
	from openmolt_core.scheduler import ScheduleWarning

	with caplog.at_level(logging.ERROR, logger="openmolt"), pytest.warns(ScheduleWarning) as warned:
		async with om:
			await clock.advance(seconds=150)
	# It counts from when it could read the file, a lease later: half the schedule's grace,
	# which is at most half its 60 s period.
	assert [r.due for r in schedule.history] == [T0 + timedelta(seconds=s) for s in (75, 135)]
	assert any("cannot be read" in r.getMessage() for r in caplog.records)
	# Said once where it shows (the library logs to a NullHandler), naming the file and the fix.
	said = [str(w.message) for w in warned if "cannot be used" in str(w.message)]
	assert len(said) == 1 and "disk I/O error" in said[0] and "runs.sqlite" in said[0]


class Gated:
	"""A model that finishes once its gate opens; counts its calls."""

	name = "gated"
	model = "gated"

	def __init__(self) -> None:
		self.gate = anyio.Event()
		self.calls = 0

	async def generate(self, request):
		import json

		from openmolt_core import ModelResponse, Usage

		self.calls += 1
		await self.gate.wait()
		text = json.dumps({"commands": [{"type": "finish", "output": {"n": self.calls}}]})
		return ModelResponse(text=text, usage=Usage(input_tokens=3, output_tokens=2, calls=1))


async def test_run_now_on_a_standby_runs_there_and_moves_no_cursor(tmp_path) -> None:
	"""run_now where another scheduler fires the schedule runs there at once; it takes no lease
	and moves no cursor, so the holder fires its next due time as planned."""
	from openmolt_core._history import SqliteHistory
	from openmolt_core.scheduler import ScheduleHeldWarning

	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0)
	spec = {"type": "interval", "value": 60}
	(om1, a1), (om2, a2) = instance(clock, db), instance(clock, db, n=1)
	sid = a1.schedule(spec)
	a2.schedule(spec)
	holder, standby = om1.scheduler.get(sid), om2.scheduler.get(sid)
	with pytest.warns(ScheduleHeldWarning):
		async with anyio.create_task_group() as tg:
			await om1.start(tg)
			await until(lambda: clock.sleeping == 1)
			await om2.start(tg)
			await clock.advance(seconds=60)
			await until(lambda: len(holder.history) == 1)
			await clock.advance(seconds=30)
			record = await standby.run_now()
			assert (record.status, record.due) == ("success", T0 + timedelta(seconds=90))
			assert standby.held_by is not None  # the lease stays the holder's
			cursor, _ = await SqliteHistory(db).cursor(sid, "Digest", clock.now())
			assert cursor == T0 + timedelta(seconds=60)
			await clock.advance(seconds=30)
			await until(lambda: len(holder.history) == 2)
			await om2.stop()
			await om1.stop()
	assert [r.due for r in holder.history] == [T0 + timedelta(seconds=s) for s in (60, 120)]
	assert [r.due for r in standby.history] == [T0 + timedelta(seconds=90)]


async def test_run_now_on_a_standby_is_skipped_while_the_holder_runs_a_due_time(tmp_path) -> None:
	"""While the scheduler that holds the schedule runs a due time, run_now elsewhere is skipped
	(runs of one agent never overlap), naming that scheduler; once it ended, run_now runs.

	The standby ran the agent a second time beside the holder's run of the due time."""
	from openmolt_core.scheduler import ScheduleHeldWarning

	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0)
	spec = {"type": "interval", "value": 600}
	model = Gated()
	om1 = OpenMolt(entry_points=False, clock=clock, schedule_store=db)
	a1 = om1.create_agent(name="Digest", model=model)
	om2, a2 = instance(clock, db, n=1)
	sid = a1.schedule(spec)
	a2.schedule(spec)
	holder, standby = om1.scheduler.get(sid), om2.scheduler.get(sid)
	with pytest.warns(ScheduleHeldWarning):
		async with anyio.create_task_group() as tg:
			await om1.start(tg)
			await until(lambda: clock.sleeping == 1)
			await om2.start(tg)
			await clock.advance(seconds=600)
			await until(lambda: model.calls == 1)
			busy = await standby.run_now()
			assert busy.status == "skipped"
			assert "still going" in (busy.note or "") and "another OpenMolt instance" in busy.note
			model.gate.set()
			await until(lambda: len(holder.history) == 1)
			ran = await standby.run_now()
			assert ran.status == "success"
			await om2.stop()
			await om1.stop()
	assert [r.status for r in holder.history] == ["success"]
	assert [r.status for r in standby.history] == ["skipped", "success"]
	assert model.calls == 1


async def test_a_run_in_flight_is_said_by_its_holder_only(tmp_path) -> None:
	"""A file of version 2 gains the ``running`` column; a run in flight counts while its holder's
	lease lasts, and not for the scheduler that takes the schedule over once it ended."""
	import sqlite3

	from openmolt_core._history import Owner, SqliteHistory

	db = tmp_path / "runs.sqlite"
	conn = sqlite3.connect(db)
	conn.executescript(
		"""
		CREATE TABLE schedules (schedule_id TEXT NOT NULL, agent TEXT NOT NULL,
			anchor TEXT NOT NULL, last_due TEXT, owner TEXT, owner_host TEXT, owner_pid INTEGER,
			lease_until TEXT, PRIMARY KEY (schedule_id, agent));
		PRAGMA user_version = 2;
		"""
	)
	conn.execute(
		"INSERT INTO schedules VALUES ('s', 'Digest', ?, ?, NULL, NULL, NULL, NULL)",
		(T0.isoformat(), T0.isoformat()),
	)
	conn.commit()
	conn.close()
	store = SqliteHistory(db)
	a, b, asking = Owner("a", "host-a", 1), Owner("b", "host-b", 2), Owner("c", "host-c", 3)
	assert (await store.cursor("s", "Digest", T0))[0] == T0
	due = T0 + timedelta(minutes=1)
	assert (await store.claim("s", "Digest", a, due, due + timedelta(minutes=5))).held
	await store.running("s", "Digest", a, due)
	said = await store.firing("Digest", asking, due)
	assert said is not None and "pid 1 on host-a" in said and "schedule s" in said
	assert await store.firing("Digest", a, due) is None  # its own run is known in its process
	await store.running("s", "Digest", b, None)  # not the holder: changes nothing
	assert await store.firing("Digest", asking, due) is not None
	later = due + timedelta(minutes=6)  # a's lease ended unrenewed: b takes the schedule over
	assert await store.firing("Digest", asking, later) is None
	assert (await store.claim("s", "Digest", b, later, later + timedelta(minutes=5))).held
	assert await store.firing("Digest", asking, later) is None
