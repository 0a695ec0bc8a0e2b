"""The DBOS engine of this process: one per process, shared by every durable `OpenMolt`.

DBOS is a process-wide singleton, so this module is too. It knows the agents of every durable
instance by name (a recovered workflow finds its agent here), the schedules they serve, and the
runs this process waits on. It launches DBOS once, from the event loop's thread (so DBOS runs the
workflows it recovers on that loop), after taking its executor id (`openmolt_dbos._workers`).

The application version is ``openmolt-`` and a hash of the core's version and the definitions of
the agents known at launch (`definition`: `openmolt_core.agent.Agent.fingerprint` and the gates of
the agent's tools): a run is recovered only by a process that built the same agents.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

import anyio

from openmolt_core.errors import ConfigurationError
from openmolt_dbos._settings import Settings

if TYPE_CHECKING:
	import sqlalchemy as sa
	from dbos import DBOSClient, WorkflowStatus

	from openmolt_core.agent import Agent
	from openmolt_core.scheduler import RunRecord, Schedule, Scheduler
	from openmolt_dbos._workers import Heartbeat

__all__ = [
	"APP_NAME",
	"Engine",
	"Outcome",
	"definition",
	"engine_for",
	"require_asyncio",
	"reset_engine",
	"use_wal",
]

log: logging.Logger = logging.getLogger("openmolt")

APP_NAME = "openmolt"
"""The DBOS application name of every OpenMolt process."""

_UNSEEN = object()  # a run `_recover_own` did not see idle at its last look
_LATE_AGENT = 10.0  # seconds a recovered run waits for its agent before the worker says so
_RECORDING = 10.0  # seconds a shutdown waits for the outcomes of runs that ended to be recorded


def use_wal(url: str) -> None:
	"""Put a SQLite store in write-ahead-log mode before DBOS opens it (the file keeps the mode).

	In WAL mode a commit appends to one log instead of writing, syncing and deleting a rollback
	journal, so a journaled step costs less, and other processes (``openmolt runs``, a second
	worker) read the store while a run writes to it. Durability is SQLite's default
	(``synchronous=FULL``): a committed step survives a crash of the process or of the machine.
	A store that cannot be switched now (another process holds it) stays as it is.

	Args:
		url: The store's ``sqlite:///`` URL.
	"""
	import sqlite3

	path = url.split("///", 1)[1].split("?", 1)[0]
	from openmolt_core._support.private import private_file

	try:
		private_file(path)  # 0600 in a 0700 folder: the store holds every step's input and output
	except OSError as exc:
		log.warning("durable: the store %s keeps its mode: %s", path, exc)
	try:
		with closing(sqlite3.connect(path, timeout=30)) as conn:
			mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
	except sqlite3.Error as exc:
		log.warning("durable: the store %s stays in its journal mode: %s", path, exc)
		return
	if str(mode).lower() != "wal":
		log.warning("durable: the store %s stays in journal mode %s", path, mode)


def require_asyncio(what: str) -> None:
	"""Refuse to go on outside asyncio (DBOS runs its workflows on an asyncio loop).

	Raises:
		ConfigurationError: The current event loop is not asyncio's (trio).
	"""
	try:
		asyncio.get_running_loop()
	except RuntimeError:
		raise ConfigurationError(
			f"{what}: durable runs need asyncio, and this code runs on another event loop "
			"(trio?). DBOS runs workflows on asyncio only: run with anyio.run(main) or "
			"asyncio.run(main()), or drop durability=... to run on trio"
		) from None


@dataclass(slots=True)
class Outcome:
	"""What a run this process waits on came to: parked (with its state) or ended."""

	kind: str  # "parked" | "done" | "error" | "cancelled" (the store says how far it got)
	payload: Any


@dataclass(slots=True)
class _Waiter:
	event: anyio.Event = field(default_factory=anyio.Event)
	outcome: Outcome | None = None


class Engine:
	"""The process's durable engine (see the module docstring).

	Args:
		settings: The store and this process's options (the first instance's).
	"""

	def __init__(self, settings: Settings) -> None:
		from openmolt_core.sessions import hold_turns_for

		self.settings = settings
		# A PostgreSQL session's turn held here ends with this worker's lease, once it lapses
		# (a worker paused holding one): not 30 s later, nor while the lease still holds.
		hold_turns_for(settings.lapse)
		self.agents: dict[str, Agent] = {}
		self.awaited: set[str] = set()  # agents a recovered run waits for (`agent_for`)
		self.definitions: dict[str, str] = {}  # each agent's `definition`, by name
		self.schedules: dict[str, tuple[Scheduler, Schedule]] = {}
		self.records: dict[str, RunRecord] = {}  # scheduled runs of this process, by workflow id
		self.launched = False
		self.app_version = ""
		self.executor_id = settings.executor_id()
		self.users = 0
		self.heartbeat: Heartbeat | None = None
		self._beats: Heartbeat | None = None  # measures the clock from its claim on
		self._client: DBOSClient | None = None
		self._table_engine: sa.Engine | None = None
		self._making = threading.Lock()  # worker threads may ask for the tables first
		self._waiters: dict[str, _Waiter] = {}
		self.created: set[str] = set()  # workflows just created here: no journal to read yet
		# workflows that ended in this process, oldest first, with how (`Outcome.kind`)
		self.ended: dict[str, str] = {}
		self._running: dict[asyncio.Task[Any], str] = {}
		# this process's pending runs no execution here ran at the last look (`_recover_own`)
		self._idle: dict[str, Any] = {}
		self._fencing = False  # the fence's cancels are on their way to the loop
		self._lock: anyio.Lock | None = None
		self._loop: asyncio.AbstractEventLoop | None = None

	# agents -------------------------------------------------------------------------------

	def register(self, agent: Agent) -> None:
		"""Know an agent by name (runs find it on recovery).

		Raises:
			ConfigurationError: Another agent with that name but a different definition is known.
		"""
		made = definition(agent)
		known = self.definitions.get(agent.name)
		if known is not None and known != made:
			raise ConfigurationError(
				f"durable: two different agents are named {agent.name!r} in this process; durable "
				"runs find their agent by name, so give each agent its own name"
			)
		self.agents[agent.name] = agent
		self.definitions[agent.name] = made
		if self.launched and known is None:
			log.warning(
				"durable: agent %r was created after durable runs began in this process; its "
				"runs are recovered only by processes that create the same agents (create every "
				"agent before the first run)",
				agent.name,
			)

	def agent(self, name: str) -> Agent:
		"""The agent a workflow runs.

		Raises:
			ConfigurationError: No agent of that name is known in this process.
		"""
		agent = self.agents.get(name)
		if agent is None:
			known = ", ".join(sorted(self.agents)) or "none"
			raise ConfigurationError(
				f"durable: agent {name!r} is not defined in worker {self.executor_id} (agents: "
				f"{known}); start the worker with the file that defines it"
			)
		return agent

	async def agent_for(self, name: str, run_id: str) -> Agent:
		"""The agent a workflow runs, once this process defines it.

		An agent created after the first durable run of a process is not in its application
		version, so the process may recover that agent's runs before it creates the agent: the
		run waits here, pending (this worker's lease keeps it), instead of ending in an error and
		being lost. After `_LATE_AGENT` seconds the worker says which agent it lacks.

		Args:
			name: The agent's name, as the run recorded it.
			run_id: The run's id, named in the warning.
		"""
		waited, warned = 0.0, False
		while (agent := self.agents.get(name)) is None:
			self.awaited.add(name)
			if waited >= _LATE_AGENT and not warned:
				warned = True
				log.warning(
					"durable: run %s waits for agent %r, which worker %s does not define (agents: "
					"%s); create it in this process, or stop the worker so that one that defines "
					"it takes the run over",
					run_id,
					name,
					self.executor_id,
					", ".join(sorted(self.agents)) or "none",
				)
			await anyio.sleep(0.05)
			waited += 0.05
		self.awaited.discard(name)
		return agent

	def version(self) -> str:
		"""The application version for the agents known now."""
		if self.settings.app_version:
			return self.settings.app_version
		from importlib.metadata import version

		digest = hashlib.sha256(version("openmolt-core").encode())
		for name in sorted(self.definitions):
			digest.update(f"\n{name}:{self.definitions[name]}".encode())
		return f"openmolt-{digest.hexdigest()[:16]}"

	# the store ----------------------------------------------------------------------------

	@property
	def tables(self) -> sa.Engine:
		"""The engine on OpenMolt's own tables (workers, schedules), created on first use."""
		with self._making:
			return self._tables()

	def _tables(self) -> sa.Engine:
		if self._table_engine is None:
			from openmolt_dbos._workers import create_tables, ensure_database, make_engine

			ensure_database(self.settings.url)  # a new PostgreSQL database: created first
			engine = make_engine(self.settings.url, lapse=self.settings.lapse)
			try:
				create_tables(engine)
			except _sa_errors() as exc:
				engine.dispose()
				raise ConfigurationError(
					f"durable: cannot open the store {self.settings.describe()}: "
					f"{str(getattr(exc, 'orig', exc)).strip().splitlines()[0]}"
				) from None
			self._table_engine = engine
		return self._table_engine

	def record_start(self, run_id: str, step: str, workflow_id: str) -> bool:
		"""Record a tool call's start; True if it had started before (in a thread: it blocks).

		Args:
			run_id: The run's id: a start is found by every workflow of the run.
			step: The call's step key.
			workflow_id: The workflow starting it.
		"""
		from openmolt_dbos._workers import record_start

		return record_start(self.tables, run_id, step, workflow_id, self.executor_id)

	def call_age(self, run_id: str, step: str) -> float | None:
		"""Seconds since a tool call's start was recorded (in a thread: it blocks).

		See `openmolt_dbos._workers.call_age`.
		"""
		from openmolt_dbos._workers import call_age

		return call_age(self.tables, run_id, step)

	def clock_offset(self) -> float:
		"""The store's clock less this process's wall clock (`Heartbeat.offset`; 0 before a beat)."""
		beats = self._beats
		return 0.0 if beats is None else beats.offset

	def execution_clock(
		self, workflow_id: str, from_step: int, offset: float
	) -> list[tuple[int, float]]:
		"""Record an execution's clock offset; the earlier ones (in a thread: it blocks).

		See `openmolt_dbos._workers.execution_clock`.
		"""
		from openmolt_dbos._workers import execution_clock

		return execution_clock(self.tables, workflow_id, from_step, offset)

	def client(self) -> DBOSClient:
		"""A DBOS client on the store, for reading and answering runs from outside workflows.

		Raises:
			ConfigurationError: The store holds no DBOS tables yet (no durable run ever ran).
		"""
		if self._client is None:
			from dbos import DBOSClient

			if self.settings.is_sqlite and not self.launched and not _has_runs(self.settings.url):
				# SQLite makes a file where it is asked to: an unused or mistyped path would
				# answer with an SQL error on the first query.
				raise ConfigurationError(
					f"durable: the store {self.settings.describe()} holds no durable runs: no "
					"durable run has used it. Check the path, or start a worker (openmolt worker) "
					"or run an agent with durability=... first (it creates the store)"
				)
			try:
				self._client = DBOSClient(
					system_database_url=self.settings.url,
					application_name=APP_NAME,
					sys_db_idle_transaction_timeout_sec=self.settings.lapse,
				)
			except Exception as exc:
				text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
				first = text[0] if text else type(exc).__name__
				if "does not exist" in first and not self.settings.is_sqlite:
					raise ConfigurationError(
						f"durable: the store {self.settings.describe()} has no database yet: no "
						"durable run has used it. Start a worker (openmolt worker) or run an agent "
						"with durability=... first (it creates the database), or check the URL"
					) from None
				raise ConfigurationError(
					f"durable: cannot open the store {self.settings.describe()}: {first}"
				) from None
		return self._client

	# launching ----------------------------------------------------------------------------

	async def launch(self) -> None:
		"""Take the executor id, then launch DBOS on this event loop (once per process).

		Raises:
			ConfigurationError: Not on asyncio, no agents, or the executor id is held elsewhere.
		"""
		require_asyncio("durable runs")
		if self._lock is None:
			self._lock = anyio.Lock()
		async with self._lock:
			if self.launched:
				return
			if not self.agents:
				raise ConfigurationError(
					"durable: no agents are defined in this process; create them before running"
				)
			from openmolt_dbos import _runs  # noqa: F401  # registers the workflow functions
			from openmolt_dbos._workers import Heartbeat

			self.app_version = self.version()
			settings = self.settings
			heartbeat = Heartbeat(
				self.tables,
				executor_id=self.executor_id,
				app_version=self.app_version,
				heartbeat=settings.heartbeat,
				lapse=settings.lapse,
				recover=self._recover,
				fence=self._fence,
			)
			self._loop = asyncio.get_running_loop()
			await anyio.to_thread.run_sync(heartbeat.claim)
			self._beats = heartbeat  # runs DBOS recovers at once read the store's clock by it
			self._start_dbos()
			self.heartbeat = heartbeat
			await anyio.to_thread.run_sync(heartbeat.start)  # beats first: the lease starts now
			heartbeat.owe()  # the runs DBOS's recovery at launch could not hand on are looked at
			self.launched = True
			await self.report_stranded()
			log.info(
				"durable: worker %s launched on %s (version %s, agents: %s)",
				self.executor_id,
				settings.describe(),
				self.app_version,
				", ".join(sorted(self.agents)),
			)

	def live_versions(self) -> set[str]:
		"""The application versions some live worker serves now (this process's, if launched)."""
		from openmolt_dbos._workers import live_workers

		versions = {
			str(row["app_version"]) for row in live_workers(self.tables, self.settings.lapse)
		}
		if self.launched:
			versions.add(self.app_version)
		return versions

	async def stranded(self) -> list[WorkflowStatus]:
		"""Unfinished runs whose application version no live worker serves: nobody resumes them."""
		from openmolt_dbos._runs import WORKFLOW

		versions = await anyio.to_thread.run_sync(self.live_versions)
		going = await self.client().list_workflows_async(
			name=WORKFLOW, status=["PENDING", "ENQUEUED"], load_input=False, load_output=False
		)
		return [s for s in going if s.app_version and s.app_version not in versions]

	async def report_stranded(self) -> None:
		"""Warn about stranded runs at launch, and emit ``run:stranded`` on their agents here."""
		from openmolt_core.events import RunStrandedEvent

		try:
			found = await self.stranded()
		except Exception:
			log.warning("durable: could not look for stranded runs", exc_info=True)
			return
		if not found:
			return
		log.warning(
			"durable: %d unfinished run(s) wait for an agent version no live worker serves "
			"(this worker serves %s): %s. Keep a worker of their definition until they finish, "
			"cancel them (openmolt runs --cancel RUN_ID), or resume them on this definition if "
			"the change is compatible (openmolt runs --migrate RUN_ID); see `openmolt runs --all`",
			len(found),
			self.app_version,
			", ".join(
				f"{_attrs(s).get('openmolt_run', s.workflow_id)} ({s.app_version})"
				for s in found[:20]
			)
			+ (" ..." if len(found) > 20 else ""),
		)
		for status in found:
			agent = self.agents.get(str(_attrs(status).get("openmolt_agent", "")))
			if agent is None or not agent._events.wants("run:stranded"):
				continue
			await agent._events.emit(
				RunStrandedEvent(
					agent=agent.name,
					step=0,
					run_id=str(_attrs(status).get("openmolt_run", status.workflow_id)),
					version=str(status.app_version),
					current=self.app_version,
					worker=str(status.executor_id or ""),
				)
			)

	def _start_dbos(self) -> None:
		from dbos import DBOS, DBOSConfig

		settings = self.settings
		config: DBOSConfig = {
			"name": APP_NAME,
			"system_database_url": settings.url,
			"executor_id": self.executor_id,
			"application_version": self.app_version,
			"log_level": settings.log_level,
			"notification_listener_polling_interval_sec": max(settings.poll, 0.01),
			# PostgreSQL ends a session idle in a transaction this long, dropping its locks: a
			# worker paused mid-transaction blocks no takeover of its runs past its lease (as
			# `openmolt_dbos._workers.make_engine` does for OpenMolt's tables).
			"sys_db_idle_transaction_timeout_sec": settings.lapse,
		}
		if settings.is_sqlite:
			use_wal(settings.url)
		DBOS(config=config)
		# Launched from the event loop's thread: DBOS then runs recovered workflows on this loop.
		DBOS.launch()
		from dbos._dbos import _get_dbos_instance

		from openmolt_dbos._ownership import guard_steps

		guard_steps(_get_dbos_instance()._sys_db)  # no call begins in a stale execution

	def lease_valid(self) -> bool:
		"""Whether this process may execute runs now (its lease holds; see `Heartbeat`)."""
		heartbeat = self.heartbeat
		return heartbeat is None or heartbeat.check()

	def _fence(self) -> None:
		# From the lease's thread: stop every run executing here (they stay pending, and resume
		# here when the lease is back, or in the worker that takes this one over).
		loop = self._loop
		if loop is None or loop.is_closed():
			return

		def cancel_all() -> None:
			for task in list(self._running):
				if not task.done():
					task.cancel()
			self._fencing = False

		self._fencing = True  # until the loop has cancelled them (`_recover_own` waits)
		loop.call_soon_threadsafe(cancel_all)

	def _recover(self, executor_id: str) -> bool:
		"""Hand a worker's pending runs to DBOS's recovery (the heartbeat's ``recover``).

		DBOS logs a run it could not re-enqueue and goes on with the next: that run would stay
		pending under a dead worker's id, which no worker looks at again once it is taken. So
		the runs still pending under a dead worker's id after the recovery make it raise, and
		the takeover is tried again (`openmolt_dbos._workers.Heartbeat.take_over`). This
		process's own id is recovered by `_recover_own`.

		Returns:
			Whether the worker's runs were all handed on (`_recover_own` says for this
			process's own id; a dead worker's recovery raises instead).

		Raises:
			RuntimeError: Runs of a dead worker are still pending after the recovery (the
				takeover is tried again at the next look).
		"""
		if executor_id == self.executor_id:
			return self._recover_own()
		from dbos import DBOS
		from dbos._dbos import _get_dbos_instance

		from openmolt_dbos._taken import record_taken

		sys_db = _get_dbos_instance()._sys_db
		# Who follows a taken run for its caller is decided by the dead worker's id (a chat's
		# reply, `openmolt_serve.chats.Conversations`), kept in the store: after a restart
		# of this process, too.
		pending = sys_db.get_pending_workflows(executor_id, self.app_version)
		record_taken(self.tables, [p.workflow_id for p in pending], executor_id, self.executor_id)
		DBOS._recover_pending_workflows([executor_id])  # the recovery API; re-enqueues them
		left = sys_db.get_pending_workflows(executor_id, self.app_version)
		if left:
			raise RuntimeError(
				f"durable: {len(left)} run(s) of worker {executor_id} could not be handed to "
				f"recovery ({', '.join(w.workflow_id for w in left[:5])}); the takeover is tried "
				"again at the next look (see the errors logged above)"
			)
		return True

	def _recover_own(self) -> bool:
		"""Hand this process's own idle pending runs to recovery (its lease came back, a launch).

		Only a run no execution here is running is handed on, and only once it was seen idle,
		with the same owner, at two looks (`openmolt_dbos._ownership.idle_runs`): DBOS's
		recovery of the id re-enqueued every pending run of it, one this process was running
		too (started after the lease came back, or still ending its call the fence stopped),
		and the execution that dequeued it made that run's call under way again. A run seen
		idle once, one that could not be handed on, and one the fence stopped that still ends
		here (or whose cancel has yet to reach the event loop) make it return False: the heartbeat looks again (before, DBOS's recovery logged a
		run it could not re-enqueue and the recovery counted as done, the run stranded under
		this live worker's id until the process restarted).

		Returns:
			Whether no run of this worker is left to hand on.
		"""
		from dbos._dbos import _get_dbos_instance

		from openmolt_dbos._ownership import hand_back, idle_runs

		dbos = _get_dbos_instance()
		sys_db = dbos._sys_db

		def active() -> set[str]:
			return set(dbos._active_workflows_set.activeList()) | set(self._running.values())

		idle = idle_runs(sys_db, self.executor_id, self.app_version, active)
		seen = self._idle
		stopping = {w for t, w in list(self._running.items()) if not t.done() and t.cancelling()}
		if self._fencing:  # the fence's cancels have yet to reach the loop: they stop runs too
			stopping.add("(runs the fence stops)")
		left = [w for w in idle if seen.get(w, _UNSEEN) != idle[w]] + sorted(stopping)
		failed: list[str] = []
		for wid in (w for w in idle if seen.get(w, _UNSEEN) == idle[w]):
			try:
				hand_back(sys_db, wid, self.executor_id, idle[wid])
			except Exception:
				log.warning(
					"durable: could not hand run %s of worker %s to recovery; the next look "
					"tries again",
					wid,
					self.executor_id,
					exc_info=True,
				)
				failed.append(wid)
		# looked at again: those seen idle now for the first time, and those not handed on
		self._idle = {w: o for w, o in idle.items() if w in failed or seen.get(w, _UNSEEN) != o}
		return not (left or failed)

	async def release(self) -> None:
		"""One durable instance is done; the last one stops the engine (runs stay recoverable)."""
		self.users = max(self.users - 1, 0)
		if self.users or not self.launched:
			return
		await self.shutdown()

	async def shutdown(self) -> None:
		"""Stop this process's runs (they stay pending, to be resumed) and the engine."""
		from dbos import DBOS

		running = [t for t in self._running if not t.done()]
		ending = {t for t in running if self._running.get(t) in self.ended}
		if ending:  # ended here: DBOS is recording their outcome (see `track`); let it land
			with anyio.CancelScope(shield=True), anyio.move_on_after(_RECORDING):
				await asyncio.wait(ending)
			running = [t for t in running if not t.done()]
		quiet = logging.getLogger("dbos")
		level = quiet.level
		quiet.setLevel(logging.ERROR)  # DBOS warns about each cancelled workflow: expected here
		try:
			for task in running:
				task.cancel()
			for task in running:
				with anyio.CancelScope(shield=True):
					try:
						await task
					except BaseException:  # cancelled or failed: stays recoverable
						pass
		finally:
			quiet.setLevel(level)
		heartbeat, self.heartbeat = self.heartbeat, None
		DBOS.destroy()
		self.launched = False
		if heartbeat is not None:
			await anyio.to_thread.run_sync(heartbeat.stop)

	def close_connections(self) -> None:
		"""Dispose of the client and the tables' engine (the end of the process, or tests)."""
		if self._client is not None:
			self._client.destroy()
			self._client = None
		if self._table_engine is not None:
			self._table_engine.dispose()
			self._table_engine = None

	# runs this process waits on -----------------------------------------------------------

	def track(self, wid: str, task: asyncio.Task[Any]) -> Callable[[], None]:
		"""Keep a running workflow's task (shutdown cancels it); returns the untrack function.

		A run that ended here stays tracked until its task is done: DBOS records the outcome in
		a worker thread after the workflow function returns, and a shutdown in that moment must
		let the record land (cancelled, the run would stay pending and be run again elsewhere,
		answering a resume with its old parked result).
		"""
		self._running[task] = wid
		task.add_done_callback(lambda done: self._running.pop(done, None))

		def untrack() -> None:
			if wid not in self.ended:
				self._running.pop(task, None)

		return untrack

	async def stop(self, wid: str, within: float) -> bool:
		"""Stop a cancelled workflow's execution in this process; True once none is left.

		Cancels its task (the call under way ends there, a sub-agent's with it) and waits up to
		``within`` seconds for it to end (the caller's own task, if it is one, is left alone).

		Args:
			wid: The workflow id.
			within: The most seconds to wait.
		"""
		me = asyncio.current_task()
		tasks = [t for t, w in list(self._running.items()) if w == wid and not t.done()]
		tasks = [t for t in tasks if t is not me]
		quiet = logging.getLogger("dbos")
		level = quiet.level
		quiet.setLevel(logging.ERROR)  # DBOS warns about each cancelled task: expected here
		try:
			for task in tasks:
				task.cancel()
			if tasks:
				with anyio.CancelScope(shield=True), anyio.move_on_after(within):
					await asyncio.wait(tasks)
		finally:
			quiet.setLevel(level)
		self.notify(wid, Outcome("cancelled", None))  # its caller here stops waiting now
		return all(t.done() for t in tasks)

	def record_stop(self, wid: str) -> None:
		"""Record that a cancelled workflow stopped here (in a thread: it blocks)."""
		from openmolt_dbos._workers import record_stop

		record_stop(self.tables, wid, self.executor_id)

	def worker_live(self, executor_id: str) -> bool:
		"""Whether the worker ``executor_id`` beats (it may be executing runs); blocks."""
		return executor_id in self.live_workers()

	def live_workers(self) -> set[str]:
		"""The ids of the workers that beat now (this process's, if launched); blocks."""
		from openmolt_dbos._workers import live_workers

		live = {str(row["executor_id"]) for row in live_workers(self.tables, self.settings.lapse)}
		if self.launched:
			live.add(self.executor_id)
		return live

	def runs_here(self, wid: str) -> bool:
		"""Whether the workflow is executing in this process now."""
		return wid in self._running.values()

	def waiter(self, run_id: str) -> _Waiter:
		"""Register interest in a run's next outcome in this process."""
		waiter = self._waiters.get(run_id)
		if waiter is None or waiter.event.is_set():
			waiter = self._waiters[run_id] = _Waiter()
		return waiter

	def forget(self, run_id: str) -> None:
		"""Stop waiting on a run."""
		self._waiters.pop(run_id, None)

	def notify(self, run_id: str, outcome: Outcome) -> None:
		"""A run of this process parked or ended: wake whoever waits on it here."""
		if outcome.kind not in ("parked", "cancelled"):
			# Ended here, a moment before DBOS records it: a run started from its state at once
			# must not take it for still going. (A cancel is in the store already.)
			self.ended[run_id] = outcome.kind
			while len(self.ended) > 1024:
				self.ended.pop(next(iter(self.ended)))
		waiter = self._waiters.get(run_id)
		if waiter is not None and not waiter.event.is_set():
			waiter.outcome = outcome
			waiter.event.set()


def definition(agent: Agent) -> str:
	"""A hash of the agent's definition as its durable runs depend on it.

	`openmolt_core.agent.Agent.fingerprint` (what the journal's steps mean: the model, the
	instructions, the tools' schemas), and the gates of each tool it sees, which the fingerprint
	leaves out and which decide what a call may do: its approval rule (a call waits for a
	person, or runs unasked), its in-doubt policy (a call under way at a crash is asked about,
	failed, or made again), its labels (it reads untrusted data, sends data out), and the
	agent's guardrails and taint policy (a call checked, or an outbound call of a tainted run
	asked about), the gates of the sources that list its tools at run time (an MCP server's
	``inDoubt``, ``labels``, ``scopes``, trust: `openmolt_core.capabilities.sources.source_gates`; and
	the approval rules as written, which select those tools once listed), and the
	definitions of the agents it calls as tools (`Agent.sub_agents`) and of its guardrail
	agents, whose runs go on in its own. A worker whose agent differs there must not go on with
	the run: a call its definition kept for a person, or for a guardrail, would run unasked, or
	one in doubt run twice. The fingerprint's own value is kept as it is (pinned by the goldens); this hash is
	the engine's, in its version and in each run's attributes.

	Args:
		agent: The agent.
	"""
	from openmolt_core.capabilities.approvals import ApprovalRules
	from openmolt_core.capabilities.safety import Safety
	from openmolt_core.capabilities.sources import Sources, source_gates

	gates: dict[str, Any] = {
		# Whether a call waits, not which rule says so (rules reordered change no run).
		"approvals": sorted(h for h, rule in agent.approval_rules.items() if rule is not None),
		"in_doubt": agent.in_doubt,
		"labels": {h: sorted(found) for h, found in agent.labels.items()},
	}
	for cap in agent.capabilities:
		if isinstance(cap, Safety):
			gates.setdefault("guardrails", []).extend(
				[g.on, g.name, list(g.tools), list(g.labels), g.message] for g in cap.guardrails
			)
			gates.setdefault("taint", []).append([cap.policy.on_outbound, cap.policy.only_trifecta])
			# A guardrail agent's tools run in the run's steps, under their own gates.
			judges = [[g.name, definition(g.check)] for g in cap.guardrails if _agent(g.check)]
			if judges:
				gates.setdefault("guardrail_agents", []).extend(judges)
		if isinstance(cap, Sources):  # tools listed at run time: their gates are the source's
			found = gates.setdefault("sources", {})
			found.update({b.id: source_gates(b.source) for b in cap.bindings})
		if isinstance(cap, ApprovalRules) and agent.lists_tools_at_run_time:
			# Which of the tools listed at run time wait is known only once they are: the rules
			# as written (a rule removed would let a call the run kept for a person run unasked).
			gates["approval_rules"] = sorted(cap.policy.rules)
	# The agents it calls as tools run their calls under their own gates, in its run: a sub-agent
	# whose approval rule was removed would make unasked a call the run kept for a person. An
	# agent that calls none keeps the value its runs recorded before (create_agent refuses a
	# cycle, so this ends).
	if agent.sub_agents:
		gates["sub_agents"] = sorted([a.name, definition(a)] for a in agent.sub_agents)
	text = json.dumps([agent.fingerprint(), gates], sort_keys=True, separators=(",", ":"))
	return hashlib.sha256(text.encode()).hexdigest()


def _agent(check: Any) -> TypeGuard[Agent]:
	"""Whether a guardrail's check is an agent (a guardrail agent), not a function."""
	from openmolt_core.agent import Agent

	return isinstance(check, Agent)


def _attrs(status: WorkflowStatus) -> dict[str, Any]:
	"""A workflow's attributes (empty when it has none)."""
	return dict(status.attributes or {})


def _sa_errors() -> type[Exception]:
	"""SQLAlchemy's base error for connections and statements (imported on first use)."""
	import sqlalchemy as sa

	return sa.exc.DBAPIError


_ENGINE: Engine | None = None


def engine_for(settings: Settings) -> Engine:
	"""The process's engine, made with the first settings.

	Raises:
		ConfigurationError: Another store is already in use in this process.
	"""
	global _ENGINE
	if _ENGINE is None:
		_ENGINE = Engine(settings)
		return _ENGINE
	current = _ENGINE.settings
	if current.url != settings.url:
		raise ConfigurationError(
			f"durable: this process already uses the store {current.describe()}; one process "
			f"works with one store (DBOS is one per process), not also {settings.describe()}"
		)
	return _ENGINE


def reset_engine() -> None:
	"""Forget the process's engine (after `Engine.shutdown`; for tests and embedding apps)."""
	global _ENGINE
	if _ENGINE is not None:
		_ENGINE.close_connections()
	_ENGINE = None


def _has_runs(url: str) -> bool:
	"""Whether a SQLite store holds DBOS's tables (read only: a missing file stays missing).

	Raises:
		ConfigurationError: The path is a folder, or a file that is not a SQLite database.
	"""
	import sqlite3
	from pathlib import Path
	from urllib.parse import quote

	path = Path(url.split("///", 1)[1].split("?", 1)[0])
	if path.is_dir():  # `--durability .`: SQLite's "unable to open database file" says less
		raise ConfigurationError(
			f"durable: the store {path} is a folder; give a SQLite file's path"
		)
	if not path.is_file():
		return False
	try:
		with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)) as conn:
			found = conn.execute(
				"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'workflow_status'"
			).fetchone()
	except sqlite3.DatabaseError as exc:
		if "not a database" in str(exc):  # `--durability agent.json`: another program's file
			raise ConfigurationError(
				f"durable: the store {path} is not a SQLite database ({exc}); give the file "
				"durable runs use (runs.sqlite), or a postgresql:// URL"
			) from None
		return True  # not ours to judge: DBOS's own error says what is wrong
	return found is not None
