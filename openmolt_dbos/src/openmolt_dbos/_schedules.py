"""Schedules on the engine: each due time is the workflow ``<schedule key>@<due time>``.

Every worker that serves a schedule runs the core's scheduler loop (`openmolt_core.scheduler`),
which computes due times with OpenMolt's own `openmolt_core.schedule.next_run`: DST-correct daily
and cron times, and intervals of any length in seconds, none of which DBOS's cron schedules can
express exactly. What makes it durable and shared is here:

- **One run per due time.** Firing starts the workflow whose id is ``<schedule key>@<due time>``;
  DBOS keeps one workflow per id, so when several workers fire the same due time, one runs it
  and the others attach to it. A worker that dies mid-run has the run taken over like any
  other (`openmolt_dbos._workers`).
- **One agent per key.** A schedule's key is its id, held in the store by the first agent that
  serves it (``openmolt_schedule_owners``); another agent whose schedule has the same id (two
  workers' files, two instances, two names of one slug) gets a key of its own
  (``<its name's slug>-<hash>:<id>``), so its due times are its runs, not the first agent's
  (`openmolt_dbos._workers.claim_schedule`).
- **One grid.** Interval schedules count from an anchor kept in ``openmolt_schedules``: the first
  worker to serve a schedule writes it, the others read it, so all compute the same due times.
- **Missed runs.** The last due time handled is kept there too, so a restart (of any worker)
  finds the runs missed while every worker was down and applies the schedule's policy; a
  skipped due time is recorded by the one worker that moves the cursor past it. A schedule
  whose derived id changed takes over the cursor kept under its former id, once
  (`openmolt_dbos._workers.take_over_schedule`).
- **One clock.** Due times are judged by the store's clock, as the workers' leases and the runs'
  budgets are: the scheduler's clock is the worker's wall clock plus how far the store's clock
  was from it at the last beat (`StoreClock`, `openmolt_dbos._engine.Engine.clock_offset`), so
  a machine whose clock is minutes off fires no due time early or late.
- **Overlap.** A scheduled run's first step checks for a run of the same agent started before it
  and still going (a parked run does not count): if there is one, it ends as skipped, in
  whichever worker runs it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import sqlalchemy as sa
from dbos import DBOS, SetWorkflowAttributes, SetWorkflowID

from openmolt_core.errors import RunCancelledError, RunError
from openmolt_core.schedule import SystemClock
from openmolt_core.scheduler import RunRecord
from openmolt_dbos import _sealed as sealed
from openmolt_dbos._runs import FINGERPRINT, attrs, find, result_of, run_workflow
from openmolt_dbos._workers import SCHEDULES, claim_schedule, take_over_schedule

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.result import RunResult
	from openmolt_core.scheduler import Schedule, Scheduler
	from openmolt_dbos._backend import DBOSBackend
	from openmolt_dbos._engine import Engine
	from openmolt_dbos._port import DBOSPort

__all__ = ["DBOSScheduleBackend", "StoreClock", "due_id", "scheduled_end", "scheduled_start"]

log: logging.Logger = logging.getLogger("openmolt")


def due_id(key: str, due: datetime) -> str:
	"""The workflow id of one due time: ``<schedule key>@<due time in UTC, ISO 8601>``.

	Args:
		key: The schedule's key in the store (`DBOSScheduleBackend.key`: its id, unless
			another agent holds the id).
		due: The due time.
	"""
	return f"{key}@{due.astimezone(UTC).isoformat().replace('+00:00', 'Z')}"


def _parse_due(text: str) -> datetime:
	return datetime.fromisoformat(text.replace("Z", "+00:00"))


class StoreClock(SystemClock):
	"""The store's clock, read without asking the store: the wall clock plus the beat's offset.

	The offset is the store's clock less this worker's wall clock, measured at each beat
	(`openmolt_dbos._engine.Engine.clock_offset`; 0 before the first). The sleeps go in short
	slices, so a new offset is read within one.

	Args:
		backend: The durable instance's backend (its engine measures the offset).
	"""

	def __init__(self, backend: DBOSBackend) -> None:
		self._backend = backend

	def now(self) -> datetime:
		"""The store's time now, aware, in UTC."""
		return super().now() + timedelta(seconds=self._backend.engine.clock_offset())


class DBOSScheduleBackend:
	"""The durable `openmolt_core.scheduler.ScheduleBackend` (see the module docstring).

	Args:
		backend: The durable instance's backend.
	"""

	def __init__(self, backend: DBOSBackend) -> None:
		self._backend = backend
		self._keys: dict[tuple[str, str], str] = {}
		self.clock: StoreClock = StoreClock(backend)
		"""The clock due times are judged by (the scheduler's, unless it was given one)."""

	async def key(self, schedule: Schedule) -> str:
		"""The schedule's key in the store: its id, or its own if another agent holds the id.

		It names the due times' workflows (``<key>@<due>``) and the shared cursor
		(`openmolt_dbos._workers.claim_schedule`).
		"""
		found = self._keys.get((schedule.id, schedule.agent.name))
		if found is None:
			engine = self._backend.engine
			found = await anyio.to_thread.run_sync(
				claim_schedule, engine.tables, schedule.id, schedule.agent.name
			)
			self._keys[(schedule.id, schedule.agent.name)] = found
		return found

	async def starting_point(
		self, scheduler: Scheduler, schedule: Schedule, now: datetime
	) -> tuple[datetime | None, datetime | None]:
		"""The schedule's shared cursor and anchor (the anchor is written by the first worker)."""
		await self._backend.start()
		engine = self._backend.engine
		key = await self.key(schedule)
		engine.schedules[key] = (scheduler, schedule)
		former = schedule.former_id  # an id derived before: its cursor goes on under the key
		if former is not None and former != key:
			await anyio.to_thread.run_sync(
				take_over_schedule, engine.tables, key, former, schedule.agent.name
			)
		anchor, last = await anyio.to_thread.run_sync(_row, engine, key, now.timestamp())
		return (
			datetime.fromtimestamp(last, UTC) if last is not None else None,
			datetime.fromtimestamp(anchor, UTC),
		)

	async def fire(
		self,
		scheduler: Scheduler,
		schedule: Schedule,
		due: datetime,
		*,
		note: str | None = None,
		wait: bool = False,
	) -> RunRecord:
		"""Start the due time's workflow (or attach to it); with ``wait``, until it ends.

		With ``wait`` (``run_now``), the run is asked for by hand and the shared cursor does not
		move: a start after it still finds the due times missed before it.
		"""
		await self._backend.start()
		engine = self._backend.engine
		key = await self.key(schedule)
		engine.schedules.setdefault(key, (scheduler, schedule))
		wid = due_id(key, due)
		record = RunRecord(
			schedule_id=schedule.id,
			agent=schedule.agent.name,
			due=due,
			started=scheduler.clock.now(),
			note=note,
		)
		info = {
			"id": key,  # finds the schedule in the worker that runs it (`Engine.schedules`)
			"due": due.astimezone(UTC).isoformat(),
			"input": schedule.spec.input,
			"note": note,
		}
		info = sealed.schedule_info(info, schedule.agent.redact)  # the workflow's input: masked
		labels = {
			"openmolt_run": wid,
			"openmolt_agent": schedule.agent.name,
			"openmolt_scheduled": True,
			"openmolt_schedule": schedule.id,
			FINGERPRINT: engine.definitions.get(schedule.agent.name),
		}
		waiter = engine.waiter(wid) if wait else None
		with SetWorkflowID(wid), SetWorkflowAttributes(labels):
			await DBOS.start_workflow_async(run_workflow, schedule.agent.name, None, None, info)
		if waiter is None:  # a due time's run: the shared cursor moves to it
			await anyio.to_thread.run_sync(_advance, engine, key, due.timestamp())
			return record
		# A run by hand (run_now) moves no cursor: the due times before it stay due, and a
		# start after it still finds the ones missed.
		try:
			outcome = await self._backend.wait(wid, waiter)
		finally:
			engine.forget(wid)
		record.ended = scheduler.clock.now()
		if outcome.kind == "cancelled" or isinstance(outcome.payload, RunCancelledError):
			record.status, record.error = "cancelled", f"durable run {wid} was cancelled"
		elif outcome.kind == "error":
			record.status, record.error = "error", str(outcome.payload)
		elif isinstance(outcome.payload, dict) and "skipped" in outcome.payload:
			record.status, record.note = "skipped", str(outcome.payload["skipped"])
		else:
			result = result_of(outcome.payload, schedule.agent)
			record.status, record.result, record.error = result.status, result, result.error
			record.usage = result.usage.to_dict()
		return record

	async def skip(
		self, scheduler: Scheduler, schedule: Schedule, due: datetime, note: str
	) -> RunRecord | None:
		"""Record a missed due time, if this worker is the one that moves the cursor past it."""
		engine = self._backend.engine
		key = await self.key(schedule)
		moved = await anyio.to_thread.run_sync(_advance, engine, key, due.timestamp())
		if not moved:
			return None
		return await scheduler.skipped(schedule, due, note)


def _row(engine: Engine, schedule_id: str, now: float) -> tuple[float, float | None]:
	with engine.tables.begin() as conn:
		row = conn.execute(
			sa.select(SCHEDULES.c.anchor, SCHEDULES.c.last_due).where(
				SCHEDULES.c.schedule_id == schedule_id
			)
		).first()
		if row is not None:
			return float(row[0]), row[1]
		try:
			with conn.begin_nested():
				conn.execute(sa.insert(SCHEDULES).values(schedule_id=schedule_id, anchor=now))
		except sa.exc.IntegrityError:  # another worker wrote it first
			row = conn.execute(
				sa.select(SCHEDULES.c.anchor, SCHEDULES.c.last_due).where(
					SCHEDULES.c.schedule_id == schedule_id
				)
			).first()
			assert row is not None
			return float(row[0]), row[1]
		return now, None


def _advance(engine: Engine, schedule_id: str, due: float) -> bool:
	with engine.tables.begin() as conn:
		done = conn.execute(
			sa.update(SCHEDULES)
			.where(SCHEDULES.c.schedule_id == schedule_id)
			.where(sa.or_(SCHEDULES.c.last_due.is_(None), SCHEDULES.c.last_due < due))
			.values(last_due=due)
		)
		return bool(done.rowcount)


# inside the workflow ------------------------------------------------------------------------


async def scheduled_start(
	engine: Engine, port: DBOSPort, agent: Agent, wid: str, schedule: dict[str, Any]
) -> str | None:
	"""A scheduled run's first step: the overlap check; reports ``schedule:run`` or the skip.

	Returns:
		Why the run is skipped, or None when it runs.
	"""

	async def overlap() -> str | None:
		statuses = await find(
			engine,
			{"openmolt_agent": agent.name, "openmolt_scheduled": True},
			status=["PENDING", "ENQUEUED"],
		)
		mine = next((s.created_at or 0 for s in statuses if s.workflow_id == wid), None)
		for status in statuses:
			if status.workflow_id == wid or attrs(status).get("openmolt_parked"):
				continue
			if status.workflow_id in engine.ended:  # ended here, a moment before DBOS records it
				continue
			if mine is None or (status.created_at or 0, status.workflow_id) < (mine, wid):
				return (
					f"overlap: a run of agent {agent.name!r} is still going ({status.workflow_id})"
				)
		return None

	note: str | None = await port.step("schedule:overlap", overlap)
	found = _served(engine, schedule, agent.name)
	due = _parse_due(str(schedule["due"]))
	if note is not None:
		if found is not None and not port.replaying:
			scheduler, sched = found
			await scheduler.skipped(sched, due, note)
		return note
	if found is not None and not port.replaying:
		scheduler, sched = found
		record = RunRecord(
			schedule_id=sched.id,
			agent=agent.name,
			due=due,
			started=scheduler.clock.now(),
			note=schedule.get("note"),
		)
		engine.records[wid] = record
		await scheduler.report(sched, record, "schedule:run", run_id=wid)
	return None


def _served(
	engine: Engine, schedule: dict[str, Any], agent: str
) -> tuple[Scheduler, Schedule] | None:
	"""The schedule a scheduled run belongs to in this process, if it serves it.

	Found by the key in the run's input; a run started under another agent's key (by a version
	before keys were owned, when two agents gave one id) is reported to neither.
	"""
	found = engine.schedules.get(str(schedule["id"]))
	return found if found is not None and found[1].agent.name == agent else None


async def scheduled_end(
	engine: Engine,
	wid: str,
	schedule: dict[str, Any],
	result: RunResult | None,
	error: RunError | None = None,
	*,
	agent: str,
) -> None:
	"""Report a scheduled run's end (``schedule:end``) to the schedule in this process."""
	found = _served(engine, schedule, agent)
	if found is None:
		return
	scheduler, sched = found
	record = engine.records.pop(wid, None) or RunRecord(
		schedule_id=sched.id,
		agent=sched.agent.name,
		due=_parse_due(str(schedule["due"])),
		started=scheduler.clock.now(),
		note=schedule.get("note"),
	)
	record.ended = scheduler.clock.now()
	if error is not None:
		result = error.result
		record.status, record.error = "error", str(error)
	elif result is not None:
		record.status, record.error = result.status, result.error
	if result is not None:
		record.result = result
		record.usage = result.usage.to_dict()
	await scheduler.report(sched, record, "schedule:end", run_id=wid)
