"""The scheduler an `OpenMolt` instance keeps: it fires agents' scheduled runs on time.

```python
om = OpenMolt()
agent = om.create_agent(name="Digest", model="openai:gpt-5-mini", instructions="...")
schedule_id = agent.schedule({"type": "daily", "hour": 8, "timeZone": "Europe/Paris"})
async with om:                      # runs the schedules until the block ends
    await anyio.sleep_forever()
```

Runs of one agent never overlap: a run due while another is going is skipped and reported with a
``schedule:skip`` event. A run that fails is reported (``schedule:end`` with status ``error``, and
the log) and the schedule goes on. Runs missed while the process was down or asleep follow the
schedule's ``missed_runs`` policy: ``skip`` them, or ``run_once`` to catch up, once. Only the
latest due time up to now may still run on time (within the grace, at most half the schedule's
period): a short interval woken late runs once, never a burst of the due times it slept through.

Schedulers that share a ``store`` (two processes, or two instances of one process, serving one
agent's schedule) fire each schedule from one of them: the first to serve it holds its lease in the
file and renews it at each due time; the others log a warning naming it and fire nothing while
the lease lasts. When the holder stops (or its process is gone, or it left a due time unhandled
for half the schedule's grace), another takes the schedule over from the cursor in the file, so no due time
runs twice and none is lost. A schedule is keyed there by its id and its agent's name: two
agents whose schedules share an id keep their own cursor and history.

The scheduler decides when each schedule is due (`openmolt_core.schedule.next_run`); a
`ScheduleBackend` turns due times into runs. `LocalScheduleBackend`, the default, runs them in this
process. A durable instance (``OpenMolt(durability=...)``) uses the engine's backend instead: each
due time becomes a workflow whose id is ``<schedule id>@<due time>``, so several workers serving
the same schedule fire each due time once, and the overlap rule and missed-run handling hold
across all of them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
from anyio.abc import TaskGroup, TaskStatus

from openmolt_core._history import Claim, Owner, RecordStatus, RunRecord, SqliteHistory
from openmolt_core._support.masking import warn
from openmolt_core._support.words import quantity
from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.events import Event
from openmolt_core.observe import started_by
from openmolt_core.result import RunState
from openmolt_core.schedule import (
	Clock,
	CronSchedule,
	DailySchedule,
	IntervalSchedule,
	SystemClock,
	next_run,
	parse_schedule,
)

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = [
	"DurableSchedules",
	"LocalScheduleBackend",
	"RecordStatus",
	"RunRecord",
	"Schedule",
	"ScheduleBackend",
	"ScheduleEvent",
	"ScheduleHeldWarning",
	"ScheduleStoreWarning",
	"ScheduleWarning",
	"Scheduler",
	"SqliteHistory",
	"instance_scheduler",
	"schedule_backend_of",
	"warn_unserved",
]

log: logging.Logger = logging.getLogger("openmolt")

AnySpec = IntervalSchedule | DailySchedule | CronSchedule


class ScheduleWarning(UserWarning):
	"""A schedule does not fire here: never served, or fired by another scheduler of its store.

	Its instance was never served (so none of its schedules ran), or another scheduler sharing
	its SQLite ``schedule_store`` (another process, another instance) holds it
	(`ScheduleHeldWarning`), or that store cannot be used (`ScheduleStoreWarning`).
	"""


class ScheduleStoreWarning(ScheduleWarning):
	"""A schedule's SQLite store cannot be used: it does not fire until the store answers again.

	Said once per schedule, with the file, the error and the fix; the store is tried again every
	lease (half the schedule's grace, at least a second).
	"""


class ScheduleHeldWarning(ScheduleWarning):
	"""A schedule is fired by another scheduler of its SQLite store, which this one names.

	This scheduler fires nothing of it while that one holds it, and takes it over when it stops.
	"""


def warn_unserved(scheduler: Scheduler, *, stacklevel: int = 2) -> None:
	"""Warn (once) when a scheduler holds schedules but never served them.

	`OpenMolt.aclose` calls this, and so does a finalizer when the instance is collected or the
	program exits: ``agent.schedule(...)`` alone runs nothing.
	"""
	if scheduler._warned or scheduler._served or not scheduler.schedules:
		return
	scheduler._warned = True
	ids = ", ".join(s.id for s in scheduler.schedules)
	warn(
		f"schedule(s) {ids} never ran: the OpenMolt instance was never served; run them inside "
		"`async with om:` (or `await om.start(task_group)`, or the `openmolt` command)",
		ScheduleWarning,
		stacklevel=stacklevel + 2,
	)


def instance_scheduler(
	owner: object,
	durability: object | None,
	*,
	clock: Clock | None = None,
	store: str | Path | None = None,
) -> Scheduler:
	"""The scheduler of an OpenMolt instance (``om.scheduler``, made on first use).

	Its schedules fire through the instance's durability backend when it has one. When the
	instance is collected, or the program exits, with schedules it never served, it warns
	(`warn_unserved`): ``agent.schedule(...)`` alone runs nothing.

	Args:
		owner: The instance.
		durability: The instance's durability backend, or None.
		clock: The scheduler's clock (default: the durability backend's ``clock``, when it has
			one, else the system clock).
		store: A SQLite file for the run history.
	"""
	import weakref

	backend = schedule_backend_of(durability)
	# A durable backend's workers judge due times by its store's clock (its ``clock``).
	clock = clock or getattr(backend, "clock", None)
	scheduler = Scheduler(clock=clock, store=store, backend=backend)
	weakref.finalize(owner, _warn_unserved_quietly, scheduler)
	return scheduler


def _warn_unserved_quietly(scheduler: Scheduler) -> None:
	# Runs from a finalizer (collection or interpreter exit): a warning turned into an error
	# there has nobody to reach, so it is dropped.
	try:
		warn_unserved(scheduler)
	except Exception:
		pass


class ScheduleBackend(Protocol):
	"""Turns a scheduler's due times into runs: in this process, or on a durable engine."""

	async def starting_point(
		self, scheduler: Scheduler, schedule: Schedule, now: datetime
	) -> tuple[datetime | None, datetime | None]:
		"""Where a schedule's loop starts: the last due time handled before, and its anchor.

		Returns:
			The last due time that fired or was skipped (None if none: the count starts now),
			and the instant interval counts start from (None: now).
		"""
		...

	async def fire(
		self,
		scheduler: Scheduler,
		schedule: Schedule,
		due: datetime,
		*,
		note: str | None = None,
		wait: bool = False,
	) -> RunRecord:
		"""Run the schedule's agent for one due time (or skip it while a run is going).

		Args:
			scheduler: The scheduler.
			schedule: The schedule.
			due: The due time (UTC).
			note: Why this run is special (catching up on missed runs).
			wait: A run asked for by hand (``run_now``): return only when it ended, and move
				no cursor (``due`` is no due time of the schedule). Otherwise the run is a due
				time's: it runs in the background and the record is ``running``.
		"""
		...

	async def skip(
		self, scheduler: Scheduler, schedule: Schedule, due: datetime, note: str
	) -> RunRecord | None:
		"""Record that a due time does not run (missed); None if another worker recorded it."""
		...


@runtime_checkable
class DurableSchedules(Protocol):
	"""A durability backend that fires schedules too (``openmolt-dbos``'s does).

	The instance's `openmolt_core._durable.DurabilityBackend` knows runs only; scheduling asks its
	backend for this.
	"""

	def schedule_backend(self) -> ScheduleBackend:
		"""Where this instance's schedules fire (one due time runs once across all workers)."""
		...


def schedule_backend_of(durability: object | None) -> ScheduleBackend | None:
	"""The schedule backend of an instance's durability backend (None: schedules run here).

	Args:
		durability: The instance's durability backend, or None when it has none.

	Raises:
		ConfigurationError: The durability backend cannot fire schedules (`DurableSchedules`),
			so each worker would fire every due time.
	"""
	if durability is None:
		return None
	if not isinstance(durability, DurableSchedules):
		raise ConfigurationError(
			f"the durability backend {type(durability).__name__} cannot fire schedules (it has no "
			"schedule_backend()); schedule the agent without durability, or use openmolt-dbos"
		)
	return durability.schedule_backend()


class LocalScheduleBackend:
	"""Runs scheduled runs in this process, as tasks of the scheduler (the default backend).

	The overlap rule is kept per agent in this process; the run history is the scheduler's
	``store`` (a SQLite file) when it has one.
	"""

	async def starting_point(
		self, scheduler: Scheduler, schedule: Schedule, now: datetime
	) -> tuple[datetime | None, datetime | None]:
		"""The last due time in the scheduler's store, and the anchor it keeps (None without one).

		A file from before anchors were kept gives the last due time as the anchor.
		"""
		store = scheduler.store
		if store is None:
			return None, None
		return await store.cursor(schedule.id, schedule.agent.name, now)

	async def fire(
		self,
		scheduler: Scheduler,
		schedule: Schedule,
		due: datetime,
		*,
		note: str | None = None,
		wait: bool = False,
	) -> RunRecord:
		"""Run the agent in a task of the scheduler (in the caller's task with ``wait``)."""
		return await scheduler._fire_here(schedule, due, note=note, wait=wait)

	async def skip(
		self, scheduler: Scheduler, schedule: Schedule, due: datetime, note: str
	) -> RunRecord | None:
		"""Record the skipped due time."""
		return await scheduler.skipped(schedule, due, note)


class Schedule:
	"""One schedule of one agent. Get it with ``om.scheduler.get(schedule_id)``.

	Args:
		scheduler: The scheduler that owns it.
		id: Its id.
		agent: The agent it runs.
		spec: When it runs.
		history_size: How many records to keep in memory.
	"""

	def __init__(
		self, scheduler: Scheduler, id: str, agent: Agent, spec: AnySpec, history_size: int
	) -> None:
		self._scheduler = scheduler
		self.id = id
		self.agent = agent
		self.spec = spec
		self._paused = spec.paused
		self._history: deque[RunRecord] = deque(maxlen=history_size)
		self._next: datetime | None = None
		self._cursor: datetime | None = None
		self._anchor: datetime | None = None
		self._loop_scope: anyio.CancelScope | None = None
		self._run_scope: anyio.CancelScope | None = None
		self._running: RunRecord | None = None
		self._held = False  # this scheduler holds the schedule's lease in the store
		self._store_failed = False  # its store could not be used (said once)
		self._held_by: str | None = None  # who does, while another scheduler holds it
		self._former_id: str | None = None

	@property
	def former_id(self) -> str | None:
		"""The id earlier versions derived for this schedule, when it differs from its id now.

		Derived ids once hashed ``paused`` and ``missedRuns`` too (pausing a schedule in its file
		made it another one). A store that finds nothing under `id` takes over what it kept
		under this one, once (the scheduler's SQLite file; a durable backend's cursor). None
		for an explicit id, or when the two are the same.
		"""
		return self._former_id

	@property
	def held_by(self) -> str | None:
		"""The scheduler that fires this schedule from the shared store, when not this one.

		None when this scheduler fires it (or has no store). Set while another scheduler (another
		process, or another instance of this one) holds its lease: this one fires nothing then.
		"""
		return self._held_by

	@property
	def paused(self) -> bool:
		"""Whether the schedule is paused."""
		return self._paused

	@property
	def next_run(self) -> datetime | None:
		"""When it fires next (UTC); None when paused. Before the scheduler starts: if started now."""
		if self._paused or self._held_by is not None:
			return None
		if self._next is not None:
			return self._next
		now = self._scheduler.clock.now()
		return next_run(self.spec, self._cursor or now, anchor=self._anchor or now)

	@property
	def history(self) -> list[RunRecord]:
		"""Finished and skipped runs of this process, oldest first (see also `stored_history`)."""
		return list(self._history)

	@property
	def running(self) -> RunRecord | None:
		"""The record of the run in flight, if any."""
		return self._running

	async def stored_history(self, limit: int = 100) -> list[RunRecord]:
		"""Records from the SQLite file when there is one, else the in-memory history.

		Args:
			limit: The most records returned, the latest ones (at least 1).

		Raises:
			ConfigurationError: ``limit`` is under 1.
		"""
		if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
			raise ConfigurationError(
				f"stored_history: limit is the most records returned, at least 1; got {limit!r}"
			)
		store = self._scheduler.store
		if store is None:
			return self.history[-limit:]
		return await store.records(self.id, limit, agent=self.agent.name)

	def pause(self) -> None:
		"""Stop firing until `resume`; a run in flight goes on."""
		self._paused = True
		self._next = None
		if self._loop_scope is not None:
			self._loop_scope.cancel()

	def resume(self) -> None:
		"""Fire again from now on; times that passed while paused are not caught up.

		Raises:
			ConfigurationError: The schedule was cancelled (add it again with ``agent.schedule``).
		"""
		if self._scheduler._schedules.get(self.id) is not self:
			raise ConfigurationError(
				f"schedule {self.id!r} was cancelled; add it again with agent.schedule(...)"
			)
		if not self._paused:
			return
		self._paused = False
		self._cursor = self._scheduler.clock.now()
		self._scheduler._start_loop(self)

	async def run_now(self) -> RunRecord:
		"""Run at once, in the caller's task, and return the record (``skipped`` if one is going).

		A run asked for by hand, outside the schedule's times: it runs here, whichever scheduler
		fires the schedule (another process on a shared ``schedule_store``, or a durable
		backend's worker), and its record's ``due`` is the time it was asked for. It takes no
		lease and moves no cursor (here, in the store or in the durable backend), so every due
		time stays due: the scheduler that holds the schedule fires the next one as planned,
		and a restart still finds the ones missed before.

		Runs of one agent never overlap, so it is ``skipped``, its note saying why, while a
		run of the agent goes on in this process, or while another scheduler of the shared
		store runs a due time of one of the agent's schedules (the note names it). A durable
		backend's run checks the overlap across its workers itself.
		"""
		scheduler = self._scheduler
		now = scheduler.clock.now()
		shared = scheduler._shared()
		if shared is not None and self.agent not in scheduler._busy:
			try:
				with scheduler._working():
					holder = await shared.firing(self.agent.name, scheduler._me(), now)
			except Exception:  # the store cannot be read: a run by hand is still a run
				log.exception("schedule %s: could not read %s before run_now", self.id, shared.path)
				holder = None
			if holder is not None:
				note = f"overlap: a run of agent {self.agent.name!r} is still going in {holder}"
				return await scheduler.skipped(self, now, note)
		return await scheduler.backend.fire(scheduler, self, now, wait=True)

	def cancel(self, *, cancel_running: bool = False) -> None:
		"""Remove the schedule; its run in flight finishes unless ``cancel_running``."""
		self._scheduler.cancel(self.id, cancel_running=cancel_running)

	def __repr__(self) -> str:
		return f"Schedule(id={self.id!r}, agent={self.agent.name!r}, type={self.spec.type!r})"


class Scheduler:
	"""Keeps every schedule of an OpenMolt instance and, while serving, fires their runs.

	Args:
		clock: Where time comes from (default: the system clock).
		store: A SQLite file for run history and missed-run detection across restarts.
		grace: Seconds a run may start late and still count as on time (not missed); for each
			schedule at most half the gap to its next due time, and only the latest due time up
			to now is on time (the earlier ones were missed: one record, by ``missedRuns``). With
			a shared ``store``, a scheduler takes over a schedule whose holder left a due time
			unhandled for half of the schedule's grace (at least a second).
		history_size: Records kept in memory per schedule.
		backend: Turns due times into runs (default: `LocalScheduleBackend`, in this process).
	"""

	def __init__(
		self,
		*,
		clock: Clock | None = None,
		store: str | Path | None = None,
		grace: float = 60.0,
		history_size: int = 100,
		backend: ScheduleBackend | None = None,
	) -> None:
		self.clock: Clock = clock or SystemClock()
		self.store: SqliteHistory | None = SqliteHistory(store) if store is not None else None
		self.backend: ScheduleBackend = backend or LocalScheduleBackend()
		self.grace = grace
		self.history_size = history_size
		self._schedules: dict[str, Schedule] = {}
		self._busy: set[Agent] = set()
		self._runs: set[anyio.CancelScope] = set()  # runs in flight, cancelled schedules' too
		self._tg: TaskGroup | None = None
		self._stop: anyio.Event | None = None
		self._closed: anyio.Event | None = None
		self._served = False
		self._warned = False
		self._owner: Owner | None = None

	# managing schedules -------------------------------------------------------------------

	@property
	def schedules(self) -> list[Schedule]:
		"""Every schedule, in the order they were added."""
		return list(self._schedules.values())

	@property
	def serving(self) -> bool:
		"""Whether the scheduler is running (inside `serve`)."""
		return self._tg is not None

	def add(self, agent: Agent, spec: Mapping[str, Any] | AnySpec) -> Schedule:
		"""Add a schedule for an agent (``agent.schedule`` calls this); it starts if serving.

		Raises:
			ConfigurationError: The schedule is invalid, or its explicit id is taken.
		"""
		parsed = parse_schedule(spec)
		former = None
		if parsed.id is not None:
			if parsed.id in self._schedules:
				raise ConfigurationError(f"a schedule with id {parsed.id!r} already exists")
			sid = parsed.id
		else:
			sid = base = _derived_id(agent.name, parsed)
			n = 2
			while sid in self._schedules:
				sid, n = f"{base}-{n}", n + 1
			if sid == base:  # (a -2 is this process's own count: no store kept one before)
				former = _former_id(agent.name, parsed)
		schedule = Schedule(self, sid, agent, parsed, self.history_size)
		schedule._former_id = former
		self._schedules[sid] = schedule
		self._start_loop(schedule)
		return schedule

	def get(self, schedule_id: str) -> Schedule:
		"""The schedule with this id.

		Raises:
			ConfigurationError: No such schedule.
		"""
		try:
			return self._schedules[schedule_id]
		except KeyError:
			known = ", ".join(self._schedules) or "none"
			raise ConfigurationError(
				f"no schedule with id {schedule_id!r} (schedules: {known})"
			) from None

	def cancel(
		self, schedule_id: str, *, cancel_running: bool = False, agent: Agent | None = None
	) -> None:
		"""Remove a schedule; its run in flight finishes unless ``cancel_running``.

		Args:
			schedule_id: The schedule's id.
			cancel_running: Also cancel its run in flight.
			agent: Only a schedule of this agent (``agent.cancel_schedule``); None: any.

		Raises:
			ConfigurationError: No such schedule, or it is another agent's.
		"""
		schedule = self.get(schedule_id)
		if agent is not None and schedule.agent is not agent:
			raise ConfigurationError(
				f"schedule {schedule_id!r} belongs to agent {schedule.agent.name!r}"
			)
		del self._schedules[schedule_id]
		schedule._paused = True
		schedule._next = None
		if schedule._loop_scope is not None:
			schedule._loop_scope.cancel()
		if cancel_running and schedule._run_scope is not None:
			schedule._run_scope.cancel()

	# serving ------------------------------------------------------------------------------

	async def serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
		"""Fire schedules until `stop` is called (or the caller's scope is cancelled).

		Raises:
			RuntimeError: The scheduler is already serving.
		"""
		if self._tg is not None:
			raise RuntimeError("the scheduler is already serving")
		self._stop, self._closed = anyio.Event(), anyio.Event()
		self._served = True
		try:
			async with anyio.create_task_group() as tg:
				self._tg = tg
				for schedule in self.schedules:
					self._start_loop(schedule)
				task_status.started()
				await self._stop.wait()
				for schedule in self.schedules:
					if schedule._loop_scope is not None:
						schedule._loop_scope.cancel()
		finally:
			self._tg = None
			for schedule in self.schedules:
				schedule._next = None
			self._closed.set()

	def expect_serving(self) -> None:
		"""Say that a caller serves this scheduler (an entered ``async with om:``).

		Its schedules then count as served, even if the block ends before the first run.
		"""
		self._served = True

	def stop(self, *, cancel_running: bool = False) -> None:
		"""Ask `serve` to return: no new runs; runs in flight finish unless ``cancel_running``.

		Safe to call again, e.g. with ``cancel_running=True`` on a second Ctrl-C.
		"""
		if self._stop is not None:
			self._stop.set()
		if cancel_running:
			for scope in list(self._runs):
				scope.cancel()

	async def wait_closed(self) -> None:
		"""Wait until `serve` has returned (at once when it is not serving)."""
		if self._closed is not None:
			await self._closed.wait()

	def _start_loop(self, schedule: Schedule) -> None:
		if self._tg is None or schedule._paused or self._stop is None or self._stop.is_set():
			return
		if self._schedules.get(schedule.id) is not schedule:  # cancelled: no loop, ever
			return
		if schedule._loop_scope is not None and not schedule._loop_scope.cancel_called:
			return
		scope = anyio.CancelScope()
		schedule._loop_scope = scope
		self._tg.start_soon(self._loop, schedule, scope, name=f"openmolt schedule {schedule.id}")

	def _shared(self) -> SqliteHistory | None:
		# The file whose leases say which scheduler fires a schedule: the store, when due times
		# run in this process (a durable backend keeps its own cursor and runs each once).
		if self.store is None or not isinstance(self.backend, LocalScheduleBackend):
			return None
		return self.store

	def _grace(self, schedule: Schedule, due: datetime) -> float:
		# Seconds the due time may start late and still run on time: the scheduler's grace, at
		# most half the gap to the schedule's next due time (a 3 s interval woken 50 s late has
		# no due time 50 s old to run on time; a 60 s grace applied to it ran a burst of them).
		try:
			gap = (next_run(schedule.spec, due, anchor=schedule._anchor) - due).total_seconds()
		except Exception:  # its times cannot be computed: the loop says so and stops it
			return self.grace
		return min(self.grace, gap / 2)

	@staticmethod
	def _lease(grace: float) -> timedelta:
		# How long a holder's lease outlasts the due time it waits for: half the schedule's
		# grace (`_grace`, at least a second), so a scheduler that takes over a due time left
		# unhandled still runs it on time.
		return timedelta(seconds=max(grace / 2, 1.0))

	@contextlib.contextmanager
	def _working(self) -> Iterator[None]:
		# The store works in threads, which a fake clock cannot see: it is told (its advance()
		# then waits for the store as for the tasks).
		working = getattr(self.clock, "working", None)
		if working is None:
			yield
			return
		with working():
			yield

	async def _loop(self, schedule: Schedule, scope: anyio.CancelScope) -> None:
		backend = self.backend
		shared = self._shared()
		with scope:
			try:
				if schedule._former_id is not None and self.store is not None:
					await self._take_over_former(schedule, self.store)
				if shared is not None:
					await self._take(schedule, shared)
				elif schedule._cursor is None:
					cursor, anchor = await backend.starting_point(self, schedule, self.clock.now())
					# No due time handled yet: the count starts at the anchor a first start kept
					# (now for a new schedule), so the due times after it a restart slept
					# through are missed (or run, within the grace), not lost without a record.
					schedule._cursor = cursor or anchor
					schedule._anchor = schedule._anchor or anchor
				await self._run_loop(schedule, shared)
			finally:
				if schedule._held and shared is not None:
					schedule._held = False
					with anyio.CancelScope(shield=True), self._working():
						try:
							await shared.release(schedule.id, schedule.agent.name, self._me())
						except Exception:
							log.exception("schedule %s: could not give up its lease", schedule.id)

	async def _run_loop(self, schedule: Schedule, shared: SqliteHistory | None) -> None:
		now = self.clock.now()
		schedule._cursor = schedule._cursor or now
		schedule._anchor = schedule._anchor or now
		while True:
			try:
				due = next_run(schedule.spec, schedule._cursor, anchor=schedule._anchor)
			except Exception:  # its times cannot be computed: it stops, the others go on
				schedule._paused, schedule._next = True, None
				log.exception(
					"schedule %s: its next run cannot be computed after %s; it stops (the "
					"other schedules go on)",
					schedule.id,
					schedule._cursor.isoformat(),
				)
				return
			if shared is not None:
				# The lease outlasts the due time a little: another scheduler waits for it.
				now = self.clock.now()
				until = max(due, now) + self._lease(self._grace(schedule, due))
				held = await self._keep(schedule, shared, until)
				if not held:
					continue  # another held it meanwhile; the count goes on from its cursor
			schedule._next = due
			await self.clock.sleep_until(due)
			now = self.clock.now()
			try:
				await self._due(schedule, due, now)
			except Exception:  # a backend that failed (its database): the next due time runs
				schedule._cursor = max(schedule._cursor or due, due)
				log.exception(
					"schedule %s: the run due %s could not be started; the schedule goes on",
					schedule.id,
					due.isoformat(),
				)

	async def _take_over_former(self, schedule: Schedule, store: SqliteHistory) -> None:
		# The row and history kept under the id an earlier version derived (`former_id`) become
		# the schedule's, once: its cursor goes on, and no due time runs twice.
		former = schedule._former_id
		if former is None:
			return
		try:
			with self._working():
				moved = await store.take_over(former, schedule.id, schedule.agent.name)
		except Exception:
			log.exception("schedule %s: could not read its former id %s", schedule.id, former)
			return
		schedule._former_id = None  # read once
		if moved:
			log.info("schedule %s: its cursor and history were kept as %s", schedule.id, former)

	def _me(self) -> Owner:
		if self._owner is None:
			self._owner = Owner.here()
		return self._owner

	async def _take(self, schedule: Schedule, store: SqliteHistory) -> None:
		# Hold the schedule's lease, waiting while another scheduler holds it; then go on from
		# the cursor and anchor in the file (a takeover starts as a restart would).
		while True:
			now = self.clock.now()
			lease = self._lease(self._grace(schedule, now))
			try:
				with self._working():
					claim = await store.claim(
						schedule.id, schedule.agent.name, self._me(), now, now + lease
					)
			except Exception as exc:  # the file cannot be read (locked, broken): tried again later
				log.exception(
					"schedule %s: its row in %s cannot be read; trying again in %s s",
					schedule.id,
					store.path,
					lease.total_seconds(),
				)
				if not schedule._store_failed:  # shown once (the library logs nowhere by default)
					schedule._store_failed = True
					said = (
						f"schedule {schedule.id} of agent {schedule.agent.name!r} does not fire: "
						f"its store {store.path} cannot be used ({type(exc).__name__}: {exc}); it "
						f"is tried again every {lease.total_seconds():g} s. Give "
						"schedule_store (OPENMOLT_SCHEDULE_STORE for the openmolt command) a file in a folder "
						"this process can write"
					)
					_said(said, ScheduleStoreWarning)
				await self.clock.sleep_until(now + lease)
				continue
			if claim.held:
				self._adopt(schedule, claim)
				return
			await self._wait_for(schedule, store, claim)

	async def _keep(self, schedule: Schedule, store: SqliteHistory, until: datetime) -> bool:
		# Renew the lease until `until`; False when another scheduler took it (this one slept
		# or was held up past its lease), after waiting to hold it again.
		now = self.clock.now()
		try:
			with self._working():
				claim = await store.claim(schedule.id, schedule.agent.name, self._me(), now, until)
		except Exception:  # the due time's own transaction decides whether it runs
			log.exception("schedule %s: could not renew its lease in %s", schedule.id, store.path)
			return True
		if claim.held:
			return True
		await self._wait_for(schedule, store, claim)
		await self._take(schedule, store)
		return False

	def _adopt(self, schedule: Schedule, claim: Claim) -> None:
		if schedule._held_by is not None:
			log.warning(
				"schedule %s of agent %r: taken over from %s; it fires here from now on",
				schedule.id,
				schedule.agent.name,
				schedule._held_by,
			)
		schedule._held, schedule._held_by = True, None
		schedule._anchor = claim.anchor
		# The last due time handled, else the first start (as `_wait_for` and `_loop` count).
		stored = claim.last_due or claim.anchor
		schedule._cursor = max(schedule._cursor or stored, stored)

	async def _wait_for(self, schedule: Schedule, store: SqliteHistory, claim: Claim) -> None:
		# Another scheduler holds the lease: say so once, fire nothing, and look again when its
		# lease ends (its holder renews it at each due time while it serves the schedule).
		schedule._held, schedule._next = False, None
		if claim.owner != schedule._held_by:
			said = (
				f"schedule {schedule.id} of agent {schedule.agent.name!r} is served by another "
				f"scheduler of the store {store.path} ({claim.owner}; its lease runs until "
				f"{claim.until.isoformat() if claim.until else 'now'}): it does not fire here; "
				"this scheduler takes it over if that one stops"
			)
			_said(said, ScheduleHeldWarning)
		schedule._held_by = claim.owner
		# The count follows the file's: the last due time handled, else the first start. It
		# looks again at its next due time too, in case the holder stopped serving it by then.
		stored = claim.last_due or claim.anchor
		schedule._cursor = max(schedule._cursor or stored, stored)
		schedule._anchor = claim.anchor
		now = self.clock.now()
		wake = claim.until or now
		try:
			due = next_run(schedule.spec, schedule._cursor, anchor=schedule._anchor)
		except Exception:  # said when it would run: the loop stops it then
			due = wake
		await self.clock.sleep_until(due if now < due < wake else wake)

	async def _due(self, schedule: Schedule, due: datetime, now: datetime) -> None:
		# One wake-up: the due time runs, or the ones missed are skipped or caught up once.
		# Only the latest due time up to now may run on time: the earlier ones were missed,
		# however short the schedule's period (they were once each run as on time, in a burst
		# of overlaps, whatever the policy).
		backend = self.backend
		count, last = self._dues_until(schedule, due, now)
		grace = self._grace(schedule, last)
		on_time = count == "1" and (now - due).total_seconds() <= grace
		shared = self._shared()
		if shared is not None:
			# The cursor moves to `last` in the transaction that checks the lease: the due times
			# up to it are this scheduler's to run or skip, and no other's.
			with self._working():
				claim = await shared.advance(
					schedule.id,
					schedule.agent.name,
					self._me(),
					last,
					now,
					max(now, last) + self._lease(grace),
				)
			if not claim.held:
				await self._wait_for(schedule, shared, claim)
				await self._take(schedule, shared)
				return
			if not claim.moved:  # handled already, by the scheduler that held it before
				schedule._cursor = max(schedule._cursor or last, claim.last_due or last)
				return
		schedule._cursor = last
		if on_time:
			await backend.fire(self, schedule, due)
			return
		if (now - last).total_seconds() <= grace:
			# The latest due time is on time: it runs, the earlier ones were missed.
			missed = str(int(count) - 1) if count.isdigit() else count
			what = f"{_runs(missed)} missed while the process was down or asleep"
			await backend.skip(self, schedule, due, f"{what}; the run due now covers them")
			await backend.fire(self, schedule, last)
			return
		what = f"{_runs(count)} missed while the process was down or asleep"
		if schedule.spec.missed_runs == "run_once":
			await backend.fire(self, schedule, last, note=f"catching up once: {what}")
		else:
			await backend.skip(self, schedule, last, f"{what}; policy 'skip'")

	def _dues_until(self, schedule: Schedule, due: datetime, now: datetime) -> tuple[str, datetime]:
		# Due times from `due` up to `now`: how many (as the notes say it), and the last one.
		spec, anchor = schedule.spec, schedule._anchor
		count, last = 1, due
		for _ in range(_WALK):
			try:
				following = next_run(spec, last, anchor=anchor)
			except Exception:  # none after it: it is the last (the loop says so next)
				return str(count), last
			if following > now:
				return str(count), last
			count, last = count + 1, following
		# Far behind (a clock jump, a long sleep): the last due time is found from `now`, not
		# walked to, which would hold the event loop for minutes and skip in batches.
		latest = _latest_due(spec, last, now, anchor)
		if isinstance(spec, IntervalSchedule):
			return str(count + round((latest - last).total_seconds() / spec.value)), latest
		return f"more than {count}", latest

	# runs ---------------------------------------------------------------------------------

	async def skipped(self, schedule: Schedule, due: datetime, note: str) -> RunRecord:
		"""Record a due time that does not run, log it and emit ``schedule:skip`` (for backends).

		Args:
			schedule: The schedule.
			due: The due time.
			note: Why it does not run.
		"""
		now = self.clock.now()
		record = RunRecord(
			schedule_id=schedule.id,
			agent=schedule.agent.name,
			due=due,
			started=now,
			ended=now,
			status="skipped",
			note=note,
		)
		log.warning("schedule %s: run due %s skipped: %s", schedule.id, due.isoformat(), note)
		await self.report(schedule, record, "schedule:skip")
		return record

	async def report(
		self, schedule: Schedule, record: RunRecord, event: str, *, run_id: str = ""
	) -> None:
		"""Keep a record in the schedule's history (and store) and emit its event (for backends).

		Args:
			schedule: The schedule.
			record: The run's record.
			event: ``schedule:run``, ``schedule:end`` or ``schedule:skip``; only the last two
				keep the record.
			run_id: The scheduled run's id, carried by the event (empty for a skip).
		"""
		if event != "schedule:run":
			await self._record(schedule, record)
		await self._emit(schedule, record, event, run_id=run_id)

	async def _fire_here(
		self, schedule: Schedule, due: datetime, *, note: str | None = None, wait: bool = False
	) -> RunRecord:
		self._served = True  # a schedule that runs (run_now included) is not forgotten
		agent = schedule.agent
		if agent in self._busy:
			return await self.skipped(
				schedule, due, f"overlap: a run of agent {agent.name!r} is still going"
			)
		self._busy.add(agent)  # claimed before the task starts, so two dues cannot both pass
		record = RunRecord(
			schedule_id=schedule.id,
			agent=agent.name,
			due=due,
			started=self.clock.now(),
			note=note,
		)
		# Its scope too: a cancel (or a stop) before the task starts cancels it all the same.
		scope = anyio.CancelScope()
		schedule._run_scope, schedule._running = scope, record
		self._runs.add(scope)
		if wait or self._tg is None:
			await self._execute(schedule, record, scope)
		else:
			name = f"openmolt run {schedule.id}"
			self._tg.start_soon(self._execute, schedule, record, scope, name=name)
		return record

	async def _execute(
		self, schedule: Schedule, record: RunRecord, scope: anyio.CancelScope
	) -> None:
		state = RunState()  # its id is known before the run starts: the events carry it
		# Where it holds the schedule in a shared store, it says its run there: another
		# scheduler's run_now of the agent is skipped meanwhile (runs of one agent never overlap).
		shared = self._shared() if schedule._held else None
		try:
			if shared is not None:
				await self._say_running(schedule, shared, record.due)
			record.started = self.clock.now()
			log.info("schedule %s: running %s", schedule.id, schedule.agent.name)
			with scope:
				await self._emit(schedule, record, "schedule:run", run_id=state.run_id)
				try:
					with started_by("schedule", where=schedule.id):
						result = await schedule.agent.run(schedule.spec.input, history=state)
					record.status, record.result, record.error = result.status, result, result.error
					record.usage = result.usage.to_dict()
				except RunError as exc:
					record.status, record.result, record.error = "error", exc.result, str(exc)
					record.usage = exc.result.usage.to_dict()
				except Exception as exc:
					# Not a RunError (whose message the loop masked): masked here, since it goes
					# to the history, its store and the schedule:end event.
					said = f"{type(exc).__name__}: {exc}"
					record.status, record.error = "error", schedule.agent.redact(said)
					log.exception("schedule %s: the run raised", schedule.id)
		finally:
			if record.status == "running":
				record.status = "cancelled"
			record.ended = self.clock.now()
			self._busy.discard(schedule.agent)
			self._runs.discard(scope)
			schedule._run_scope = schedule._running = None
			with anyio.CancelScope(shield=True):
				if shared is not None:
					await self._say_running(schedule, shared, None)
				await self._record(schedule, record)
		if record.status == "error":
			log.warning(
				"schedule %s: run failed: %s; the schedule goes on", schedule.id, record.error
			)
		await self._emit(schedule, record, "schedule:end", run_id=state.run_id)

	async def _say_running(
		self, schedule: Schedule, store: SqliteHistory, due: datetime | None
	) -> None:
		try:
			with self._working():
				await store.running(schedule.id, schedule.agent.name, self._me(), due)
		except Exception:  # only another scheduler's run_now reads it
			log.exception("schedule %s: could not say its run in %s", schedule.id, store.path)

	async def _record(self, schedule: Schedule, record: RunRecord) -> None:
		schedule._history.append(record)
		if self.store is not None:
			try:
				with self._working():
					await self.store.add(record)
			except Exception:
				log.exception("schedule %s: could not write the run history", schedule.id)

	async def _emit(
		self, schedule: Schedule, record: RunRecord, name: str, *, run_id: str = ""
	) -> None:
		events = schedule.agent._events
		if events.wants(name):
			await events.emit(
				ScheduleEvent(
					agent=schedule.agent.name,
					step=0,
					run_id=run_id,
					schedule_id=schedule.id,
					record=record,
					name=name,
				)
			)


_WALK = 100
"""Due times walked one by one to count the missed ones; past that, the last is looked up."""


def _said(message: str, category: type[Warning]) -> None:
	"""Say what a schedule's loop found: a warning, or a log line where warnings are errors.

	A warning is shown by default (the library logs to a NullHandler); a background loop has no
	caller to raise one to.
	"""
	try:
		warn(message, category, stacklevel=3)
	except Exception:
		log.warning("%s", message)


def _latest_due(spec: AnySpec, last: datetime, now: datetime, anchor: datetime | None) -> datetime:
	"""The latest due time up to ``now`` (``last`` is one), looked for back from ``now``.

	The window before ``now`` doubles until it holds a due time; the one before it held none,
	so only a few due times remain to walk.
	"""
	window = timedelta(seconds=1)
	while True:
		start = now - window
		if start <= last:
			found = last
			break
		found = next_run(spec, start, anchor=anchor)
		if found <= now:
			break
		window *= 2
	while (following := next_run(spec, found, anchor=anchor)) <= now:
		found = following
	return found


def _derived_id(agent_name: str, spec: AnySpec) -> str:
	"""The id of a schedule that names none: its agent and what it is, stable across restarts.

	What it is: when it runs (its kind, times and time zone) and its input; not how it is
	served. A schedule paused in its file, or given another ``missedRuns`` policy, keeps its id,
	and with it its cursor, lease and history in the store. Those two fields are hashed at their
	defaults, so a schedule that had them so keeps the id earlier versions derived.
	"""
	return _hashed_id(agent_name, spec.model_copy(update={"paused": False, "missed_runs": "skip"}))


def _former_id(agent_name: str, spec: AnySpec) -> str | None:
	"""The id earlier versions derived for a schedule, when it is not its id now (else None).

	They hashed its ``paused`` and ``missedRuns`` too: a schedule with either not at its default
	was kept in the store under this id (`Schedule.former_id`).
	"""
	former = _hashed_id(agent_name, spec)
	return None if former == _derived_id(agent_name, spec) else former


def _hashed_id(agent_name: str, spec: AnySpec) -> str:
	slug = re.sub(r"[^a-z0-9]+", "-", agent_name.lower()).strip("-") or "agent"
	body = json.dumps(spec.model_dump(mode="json", exclude={"id"}), sort_keys=True, default=str)
	return f"{slug}-{hashlib.sha256(body.encode()).hexdigest()[:8]}"


# events ---------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ScheduleEvent(Event):
	"""A scheduled run started, ended or was skipped; ``record`` holds its due time and status."""

	schedule_id: str
	record: RunRecord
	name: str = "schedule:run"


def _runs(count: str) -> str:
	"""``1 run``, ``3 runs`` or ``more than 1000 runs`` (the count `_dues_until` gives)."""
	return quantity(int(count), "run") if count.isdigit() else f"{count} runs"
