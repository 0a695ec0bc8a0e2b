"""The run store: every run of an instance, with its events, in a SQLite file.

```python
om = OpenMolt(run_store="runs.db")      # every run of every agent of `om` is recorded
...
runs = await om.run_store.runs()        # newest first
events = await om.run_store.events(runs[0].run_id)
```

The ``openmolt`` command records its runs in the default store (`default_path`), and
``openmolt ui`` shows it. A run's row is written when it starts, kept up to date as it runs
(status, steps, tokens and cost), and completed when it ends, with its final state, so a run
parked on a question can be resumed from the store in another process. Events are written as
they happen, redacted (`openmolt_core.observe.event_data`), so another process can follow a run
live by reading them.

The file is plain SQLite (the standard library's ``sqlite3``, in WAL mode so readers never block
the writer). A store keeps one connection, opened at its first use and used by one worker thread
at a time, so the event loop never blocks and several processes can share one file; `close`
(``OpenMolt.aclose`` calls it, and so does the interpreter's exit) checkpoints the file and
removes its write-ahead log.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core._support.masking import mask_url_logins_deep
from openmolt_core._support.private import erasing, private_file
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome, event_data
from openmolt_core.result import PARKED_STATUSES

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.events import Event
	from openmolt_core.result import RunState

__all__ = [
	"ENV_VAR",
	"NESTED_SHOWN",
	"RunStore",
	"StoredEvent",
	"StoredRun",
	"caller_of",
	"default_path",
	"parked_where",
]

log: logging.Logger = logging.getLogger("openmolt")

ENV_VAR = "OPENMOLT_RUN_STORE"
"""The environment variable naming the ``openmolt`` command's run store (``off`` disables it)."""

NESTED_SHOWN = 100
"""How many of a run's nested runs (the newest) ``openmolt logs RUN`` and the run viewer's page
list with it; each says when there are more."""

_SCHEMA = """
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS agent_runs (
	run_id TEXT PRIMARY KEY,
	agent TEXT NOT NULL,
	model TEXT NOT NULL,
	status TEXT NOT NULL,
	started TEXT NOT NULL,
	updated TEXT NOT NULL,
	ended TEXT,
	input TEXT,
	steps INTEGER NOT NULL DEFAULT 0,
	usage TEXT,
	output TEXT,
	error TEXT,
	pending TEXT,
	state TEXT,
	pid INTEGER,
	trigger TEXT,
	session TEXT,
	end_user TEXT
);
CREATE INDEX IF NOT EXISTS agent_runs_by_start ON agent_runs (started);
CREATE TABLE IF NOT EXISTS run_events (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id TEXT NOT NULL,
	seq INTEGER NOT NULL,
	name TEXT NOT NULL,
	step INTEGER NOT NULL,
	time TEXT NOT NULL,
	data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_events_by_run ON run_events (run_id, id);
"""

_RUN_COLUMNS = (
	"run_id, agent, model, status, started, updated, ended, input, steps, usage, output, error,"
	" pending, pid, trigger, session, end_user"
)
_ADDED_COLUMNS = {"trigger": "TEXT", "session": "TEXT", "end_user": "TEXT"}
"""Columns added since the first schema: a store made before them gets them on first use."""

_NESTED = (
	"(instr(run_id, '.') > 0 AND CASE WHEN json_valid(trigger) THEN CASE WHEN"
	" json_type(trigger) = 'object' THEN coalesce(json_extract(trigger, '$.kind') = 'agent', 0)"
	" ELSE 1 END ELSE 1 END)"
)
"""Whether a row is a run nested in another (a tool call's, a guardrail agent's): its id holds a
dot (its caller's id and ``.``: the key's range `RunStore.runs`'s ``nested_in`` reads) and its
trigger says ``agent`` (`openmolt_core.observe.watch_run`), or it was recorded before triggers
were. Another id with a dot (an interval schedule's skipped due time, an id the application
chose) is a run of its own, and so is a run a tool's code went on with under an id of its own
(``agent.run(history=state, parent=context.run)``): no caller's range holds it, so it is listed
on its own rather than nowhere. `caller_of` is the same rule for a row in hand."""


def caller_of(run_id: str, trigger: Any) -> str | None:
	"""The id of the run a nested run was called by, or None for a run of its own.

	The rule `RunStore.runs`'s ``top_level`` and ``nested_in`` read in SQL, for a row in hand
	(``openmolt logs``, the run viewer): a nested run's trigger is ``{"kind": "agent",
	"parent_run_id": ...}`` (`openmolt_core.observe.watch_run`), and its caller is that
	``parent_run_id`` when its id starts with it and a dot (a tool call's run: ``.<step>.
	<index>[.<n>]``; a guardrail agent's: ``.guard.<step>.<stage>.<index>.<n>.<name>``), else the
	id's first part; so is the caller of a row with no trigger (recorded before triggers were)
	whose id holds a dot. Another run whose id holds one (an interval schedule's skipped due
	time, an id the application chose) is a run of its own, and so is one whose trigger says
	``agent`` under an id with no dot (a run a tool's code went on with from a saved state).

	Args:
		run_id: The run's id.
		trigger: Its trigger, as recorded (None for a row recorded before triggers were).
	"""
	if isinstance(trigger, Mapping):
		if trigger.get("kind") != "agent":
			return None
		parent = trigger.get("parent_run_id")
		if isinstance(parent, str) and parent and run_id.startswith(f"{parent}."):
			return parent
	return run_id.split(".")[0] if "." in run_id else None


_PARKED = tuple(sorted(PARKED_STATUSES))
"""The statuses of a parked run (`PARKED_STATUSES`), which `RunStore.cancel_parked` ends."""
_MARKS = ", ".join("?" * len(_PARKED))


def parked_where(pending: Any) -> tuple[Any, ...] | None:
	"""Where a state is parked on calls: the kind, the step, and its commands still to run.

	A resume that decides some of a step's calls runs them and parks again in the same step
	on the others: the step count is the same, the commands still waiting are fewer. None for
	a state parked on no calls (a question, or none).

	Args:
		pending: A state's ``pending`` (`RunState.pending`), as kept or as read back.
	"""
	if not isinstance(pending, Mapping) or not isinstance(pending.get("results"), list):
		return None
	waiting = tuple(i for i, result in enumerate(pending["results"]) if result is None)
	calls = pending.get("calls")
	parked = sorted(
		str(c.get("index"))
		for c in (calls if isinstance(calls, list) else [])
		if isinstance(c, Mapping)
	)
	return (pending.get("kind"), pending.get("step"), waiting, tuple(parked))


def default_path() -> Path | None:
	"""The ``openmolt`` command's run store: ``$OPENMOLT_RUN_STORE``, else the user's state dir.

	That is ``$XDG_STATE_HOME/openmolt/runs.db`` (``~/.local/state/openmolt/runs.db``). Returns
	None when ``OPENMOLT_RUN_STORE`` is ``off`` (or empty): nothing is recorded then.
	"""
	from openmolt_core._support.private import state_file
	from openmolt_core.errors import ConfigurationError

	return state_file(ENV_VAR, "runs.db", refused=ConfigurationError)


def _own_folder() -> Path:
	"""OpenMolt's own state folder (`openmolt_core._support.private.state_folder`)."""
	from openmolt_core._support.private import state_folder

	return state_folder()


def _is_own_folder(folder: Path) -> bool:
	"""Whether ``folder`` is OpenMolt's own state folder, which is narrowed to 0700 if wider."""
	try:
		return folder.resolve() == _own_folder().resolve()
	except (OSError, RuntimeError):
		return False


def _now() -> str:
	return datetime.now(UTC).isoformat()


def _dumps(value: Any) -> str:
	return json.dumps(value, ensure_ascii=False, default=str)


def _loads(text: str | None) -> Any:
	return None if text is None else json.loads(text)


def _event_data(text: str) -> Any:
	"""A stored event's data; one too deeply nested to read (another program wrote it) says so.

	The JSON decoder recurses once per level: a row nested thousands deep would make every read
	of its run fail, not just the one event.
	"""
	try:
		return json.loads(text)
	except RecursionError:
		return {"unreadable": f"its data ({len(text):,} characters) is nested too deep to read"}


@dataclass(slots=True)
class StoredRun:
	"""One run as the store holds it.

	Args:
		run_id: The run's id.
		agent: The agent's name.
		model: The model id.
		status: ``running``, the run's status, ``cancelled``, ``stranded`` (a durable run that
			waits for an agent version no live worker serves) or ``skipped`` (a schedule's due
			time that did not run; its row's id is ``<schedule id>@<due time>:skipped``, and
			``...:skipped:<agent>`` for another agent whose schedule has that id).
		started: When it started (ISO 8601, UTC).
		updated: When its row last changed.
		ended: When it ended; None while running (or if its process died).
		input: The run's input.
		steps: Model calls made so far.
		usage: Tokens and cost so far (``Usage.to_dict()``).
		output: The finish output.
		error: What went wrong, or what stopped it.
		pending: What a parked run waits for (``state.pending``: kind, message...).
		pid: The process that ran it.
		trigger: Where it came from (`openmolt_core.observe.started_by`): ``{"kind":
			"webhook", "where": "Triage"}``; None for a run recorded before triggers were.
		session_id: The session the run is a turn of (`openmolt_core.observe.ObservedRun.
			session_id`); None for a run of no session (or recorded before sessions were).
		user: The end user the run acts for (``RunState.user``, masked like everything else);
			None for the operator's (or a run recorded before users were).
	"""

	run_id: str
	agent: str
	model: str
	status: str
	started: str
	updated: str
	ended: str | None
	input: Any
	steps: int
	usage: dict[str, Any] | None
	output: Any
	error: str | None
	pending: dict[str, Any] | None
	pid: int | None
	trigger: dict[str, Any] | None = None
	session_id: str | None = None
	user: str | None = None

	def to_dict(self) -> dict[str, Any]:
		"""The run as JSON-serializable data."""
		return {
			"run_id": self.run_id,
			"agent": self.agent,
			"model": self.model,
			"status": self.status,
			"started": self.started,
			"updated": self.updated,
			"ended": self.ended,
			"input": self.input,
			"steps": self.steps,
			"usage": self.usage,
			"output": self.output,
			"error": self.error,
			"pending": _public_pending(self.pending),
			"pid": self.pid,
			"trigger": self.trigger,
			"session_id": self.session_id,
			"user": self.user,
		}


def _public_pending(pending: dict[str, Any] | None) -> dict[str, Any] | None:
	# The results of the step's earlier commands are for the model; a person needs the question.
	if pending is None:
		return None
	return {k: v for k, v in pending.items() if k != "results"}


@dataclass(slots=True)
class StoredEvent:
	"""One event of a run.

	Args:
		id: Its position in the store (increasing; use it to read only newer events).
		run_id: The run's id.
		seq: The event's number in its run (`openmolt_core.events.Event.seq`): a resumed run
			numbers its events after those of its earlier drives. A sub-agent's event kept with
			its caller's has the sub-run's number: ``data["sub_run_id"]`` and ``seq`` name it.
		name: The event name (``tool:call``...).
		step: The step it belongs to.
		time: When it was recorded (ISO 8601, UTC).
		data: The event's fields, redacted (`openmolt_core.observe.event_data`).
	"""

	id: int
	run_id: str
	seq: int
	name: str
	step: int
	time: str
	data: dict[str, Any]

	def to_dict(self) -> dict[str, Any]:
		"""The event as JSON-serializable data."""
		return {
			"id": self.id,
			"run_id": self.run_id,
			"seq": self.seq,
			"name": self.name,
			"step": self.step,
			"time": self.time,
			"data": self.data,
		}


class _Shared:
	"""A store's one connection and the lock its users take, apart from the store itself.

	The store's finalizer closes this (`weakref.finalize` must not hold the store). Every open
	one is closed before the process forks (`os.fork`, ``multiprocessing``): SQLite's
	connections must not cross a fork (its own rule: the child would inherit the parent's open
	file and its per-process lock records), so a child starts with none and opens its own.
	"""

	__slots__ = ("__weakref__", "conn", "lock", "pid")

	def __init__(self) -> None:
		self.conn: sqlite3.Connection | None = None
		self.lock = threading.Lock()
		self.pid = os.getpid()

	def after_fork(self) -> None:
		"""Forget the parent's connection and lock in a forked child (never use or close them)."""
		if self.pid != os.getpid():
			self.conn = None
			self.lock = threading.Lock()
			self.pid = os.getpid()

	def close(self) -> None:
		"""Close the connection, if open (in the process that opened it)."""
		if self.pid != os.getpid():
			return
		with self.lock:
			conn, self.conn = self.conn, None
			if conn is not None:
				conn.close()
				_OPEN.discard(self)

	def opened(self, conn: sqlite3.Connection) -> None:
		"""Keep ``conn`` as the connection (the caller holds the lock)."""
		self.conn = conn
		_OPEN.add(self)


_OPEN: weakref.WeakSet[_Shared] = weakref.WeakSet()
"""The stores' connections open in this process, closed before it forks."""


def _close_before_fork() -> None:
	for shared in list(_OPEN):
		shared.close()


if hasattr(os, "register_at_fork"):  # not on Windows
	os.register_at_fork(before=_close_before_fork)


class RunStore(RunObserver):
	"""Records runs and their events in a SQLite file (an observer: see `openmolt_core.observe`).

	Args:
		path: The database file; it and its folder are created on first use.
	"""

	def __init__(self, path: str | Path) -> None:
		from openmolt_core._support.paths import path_problem

		problem = path_problem(path)
		if problem is not None:
			from openmolt_core.errors import ConfigurationError

			raise ConfigurationError(f"RunStore: path must be a file's path {problem}")
		self.path: Path = Path(path)
		self._ready = False
		self._shared = _Shared()
		# Closed when the store is collected, or at the interpreter's exit if still open.
		weakref.finalize(self, self._shared.close)

	def __repr__(self) -> str:
		return f"RunStore({str(self.path)!r})"

	# the connection ---------------------------------------------------------------------

	def check(self) -> None:
		"""Open the store now, making it if missing: a path that cannot hold one is said at once.

		A run's observer that fails is logged and skipped, so a store that cannot be written
		would otherwise record nothing, silently.

		Raises:
			ConfigurationError: The path is a folder or another kind of file (an agent file,
				a corrupt database), or its folder cannot be made or written.
		"""
		try:
			with self._use():
				pass
		except (OSError, sqlite3.Error) as exc:
			from openmolt_core.errors import ConfigurationError

			why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
			raise ConfigurationError(f"{self.path} cannot hold a run store: {why}") from None

	def close(self) -> None:
		"""Close the store's connection (checkpointing the file); a later call opens a new one.

		``OpenMolt.aclose`` calls it for the instance's store, and the interpreter's exit for a
		store still open. Waits for a write in progress (in a worker thread) to end first.
		"""
		self._shared.close()

	def _open(self) -> sqlite3.Connection:
		"""A new connection to the file, erasing; the caller holds the lock.

		The first of a store makes the file (0600) and its tables on the connection it returns.
		"""
		if not self._ready:
			if self.path.is_dir():  # SQLite would say "unable to open database file"
				raise sqlite3.OperationalError("it is a folder")
			# 0600 in a 0700 folder: runs hold inputs, outputs. The default folder is narrowed
			# whoever opens it (a run, `openmolt logs`, the viewer), also when an older version
			# made it wider.
			private_file(self.path, own_dir=_is_own_folder(self.path.parent))
		# Any worker thread may run a call; `_Shared.lock` lets one at a time use it.
		conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
		try:
			if not self._ready:
				conn.executescript(_SCHEMA)
				have = {r[1] for r in conn.execute("PRAGMA table_info(agent_runs)")}
				for column, kind in _ADDED_COLUMNS.items():
					if column not in have:
						conn.execute(f"ALTER TABLE agent_runs ADD COLUMN {column} {kind}")
				conn.commit()
			erasing(conn)  # pruned runs leave the file
			conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints, fast commits
		except BaseException:
			conn.close()
			raise
		self._ready = True
		return conn

	def _connect(self) -> sqlite3.Connection:
		"""A connection of its own (not the store's), for a caller that closes it."""
		with self._shared.lock:
			return self._open()

	@contextmanager
	def _use(self) -> Iterator[sqlite3.Connection]:
		"""The store's connection (opened on first use), this thread's alone until the block ends."""
		shared = self._shared
		shared.after_fork()
		with shared.lock:
			conn = shared.conn
			if conn is None:
				conn = self._open()
				shared.opened(conn)
			try:
				yield conn
			finally:
				if conn.in_transaction:  # a failed commit: the next user starts clean
					conn.rollback()

	def _write(self, sql: str, *rows: tuple[Any, ...]) -> None:
		with self._use() as conn, conn:
			for row in rows:
				conn.execute(sql, row)

	def _read(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
		with self._use() as conn:
			return conn.execute(sql, args).fetchall()

	# recording (the observer) -----------------------------------------------------------

	async def started(self, run: ObservedRun) -> None:
		"""Write the run's row (status ``running``); a resumed run keeps its row, input, trigger.

		A run of a session records the session's id (masked like everything else), also when
		it is resumed: a row made before the column was gets it then; a run for an end user
		records the user (`RunState.user`) the same way.
		"""
		now = _now()
		state = run.state
		session = run.session_id
		user = state.user
		row = (
			run.run_id,
			run.agent_name,
			run.model,
			now,
			now,
			_dumps(run.redact.deep(run.input)),
			state.steps,
			_dumps(state.usage.to_dict()),
			os.getpid(),
			_dumps(run.trigger),
			None if session is None else run.redact(session),
			None if user is None else run.redact(user),
		)
		await anyio.to_thread.run_sync(
			self._write,
			"INSERT INTO agent_runs (run_id, agent, model, status, started, updated, input, steps,"
			" usage, pid, trigger, session, end_user)"
			" VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)"
			" ON CONFLICT(run_id) DO UPDATE"
			" SET status = 'running', updated = excluded.updated, ended = NULL, pending = NULL,"
			" pid = excluded.pid, session = coalesce(excluded.session, session),"
			" end_user = coalesce(excluded.end_user, end_user)",
			row,
		)

	async def event(self, run: ObservedRun, event: Event) -> None:
		"""Append the event (redacted); a model reply also updates the run's steps and usage."""
		now = _now()
		data = event_data(event, run.redact)
		insert = (run.run_id, event.seq, event.name, event.step, now, _dumps(data))
		state = run.state
		update = (state.steps, _dumps(state.usage.to_dict()), now, run.run_id)
		conn_sql = (
			"INSERT INTO run_events (run_id, seq, name, step, time, data) VALUES (?, ?, ?, ?, ?, ?)"
		)

		def write() -> None:
			with self._use() as conn, conn:
				conn.execute(conn_sql, insert)
				conn.execute(
					"UPDATE agent_runs SET steps = ?, usage = ?, updated = ? WHERE run_id = ?",
					update,
				)

		await anyio.to_thread.run_sync(write)

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""Complete the run's row: status, output, usage, error, and the final state."""
		from openmolt_core.filestore import masked_state
		from openmolt_core.result import RunResult

		state = run.state
		result: RunResult | None = outcome.result
		output = None
		if result is not None:
			dumped = result.to_dict()
			output = dumped["output"]
		now = _now()
		row = (
			outcome.status,
			now,
			now,
			state.steps,
			_dumps(state.usage.to_dict()),
			_dumps(mask_url_logins_deep(run.redact.deep(output))),  # a URL's login: a secret
			outcome.error,
			_dumps(run.redact.deep(state.pending)) if state.pending is not None else None,
			_dumps(masked_state(state.to_dict(), run.redact)),  # a file's bytes masked as bytes
			run.run_id,
		)
		await anyio.to_thread.run_sync(
			self._write,
			"UPDATE agent_runs SET status = ?, updated = ?, ended = ?, steps = ?, usage = ?,"
			" output = ?, error = ?, pending = ?, state = ? WHERE run_id = ?",
			row,
		)

	async def outside(self, agent: Agent, event: Event, data: dict[str, Any]) -> None:
		"""Record an event emitted outside a run: with the run it names, and in the run's row.

		``run:stranded`` marks its run ``stranded`` (not ``running``, whose process is gone);
		``schedule:skip`` records the due time as a ``skipped`` run of the schedule (trigger
		``schedule``), so the list of a schedule's runs shows it. Its id is
		``<schedule id>@<due time>:skipped``; another agent's schedule of that id (another
		instance on this store) gets ``...:skipped:<its name>``, a row and events of its own.
		"""
		now = _now()
		name = event.name
		run_id = event.run_id
		rows: list[tuple[str, tuple[Any, ...]]] = []
		if name == "schedule:skip":
			record = data.get("record") or {}
			run_id = f"{data.get('schedule_id')}@{record.get('due')}:skipped"
			trigger = {"kind": "schedule", "where": data.get("schedule_id")}
			rows.append(
				(
					"INSERT OR IGNORE INTO agent_runs (run_id, agent, model, status, started,"
					" updated, ended, error, pid, trigger) VALUES (?, ?, ?, 'skipped', ?, ?, ?, ?,"
					" ?, ?)",
					(
						run_id,
						agent.name,
						_model(agent),
						record.get("started") or now,
						now,
						record.get("ended") or now,
						record.get("note"),
						os.getpid(),
						_dumps(trigger),
					),
				)
			)
		elif name == "run:stranded" and run_id:
			error = (
				f"waits for agent version {data.get('version')!r}, which no live worker serves"
				f" (this worker serves {data.get('current')!r})"
			)
			rows.append(
				(
					"UPDATE agent_runs SET status = 'stranded', updated = ?, error = ?"
					" WHERE run_id = ? AND status = 'running'",
					(now, error, run_id),
				)
			)
		if not run_id:
			return
		rows.append(
			(
				"INSERT INTO run_events (run_id, seq, name, step, time, data)"
				" VALUES (?, ?, ?, ?, ?, ?)",
				(run_id, event.seq, name, event.step, now, _dumps(data)),
			)
		)

		def write() -> None:
			with self._use() as conn, conn:
				mine = run_id
				if name == "schedule:skip":
					conn.execute("BEGIN IMMEDIATE")  # read and insert: one writer at a time
					held = conn.execute(
						"SELECT agent FROM agent_runs WHERE run_id = ?", (run_id,)
					).fetchone()
					if held is not None and held[0] != agent.name:
						mine = f"{run_id}:{agent.name}"
				for sql, row in rows:
					conn.execute(sql, tuple(mine if v is run_id else v for v in row))

		await anyio.to_thread.run_sync(write)

	async def not_started(
		self,
		run_id: str,
		agent: str,
		*,
		input: Any,
		trigger: dict[str, Any] | None,
		error: str,
		model: str = "",
		user: str | None = None,
	) -> bool:
		"""Record a run that failed before it started: a row with status ``error`` and the reason.

		Its observers never heard it start (no row of its own), yet someone was told it would
		run (a webhook's ``202``): `openmolt logs` and the run viewer show it with the reason. A
		run already recorded keeps its row (it started elsewhere). The caller masks ``input``
		and ``error``.

		Args:
			run_id: The run's id.
			agent: The agent's name.
			input: The run's input (masked).
			trigger: What started it (`openmolt_core.observe.started_by`'s kind and details).
			error: Why it did not start (masked).
			model: The agent's model, if known.
			user: The end user it was to act for (masked; `StoredRun.user`), if any.

		Returns:
			Whether a row was written (False: the run had one).
		"""
		now = _now()
		row = (
			run_id,
			agent,
			model,
			now,
			now,
			now,
			_dumps(input),
			error,
			os.getpid(),
			_dumps(trigger),
			user,
		)

		def write() -> bool:
			with self._use() as conn, conn:
				written = conn.execute(
					"INSERT OR IGNORE INTO agent_runs (run_id, agent, model, status, started,"
					" updated, ended, input, error, pid, trigger, end_user) VALUES (?, ?, ?,"
					" 'error', ?, ?, ?, ?, ?, ?, ?, ?)",
					row,
				)
				return written.rowcount == 1

		return await anyio.to_thread.run_sync(write)

	async def cancel_parked(self, run_id: str, reason: str) -> bool:
		"""Mark a parked run ``cancelled``, so nothing answers it later; whether one was.

		A run parked on a question, an approval or an account (its state stays, for the record)
		whose caller gave up on it (an A2A ``CancelTask``): the viewer and the surfaces that
		resume runs from the store then find it waits for nothing.

		Args:
			run_id: The run.
			reason: Why, kept as its error.
		"""

		def update() -> bool:
			with self._use() as conn, conn:
				done = conn.execute(
					"UPDATE agent_runs SET status = 'cancelled', pending = NULL, error = ?,"
					f" updated = ? WHERE run_id = ? AND status IN ({_MARKS})",
					(reason, _now(), run_id, *_PARKED),
				)
				return done.rowcount > 0

		return await anyio.to_thread.run_sync(update)

	async def claim_parked(
		self, run_id: str, steps: int, pending: Mapping[str, Any] | None = None
	) -> str | None:
		"""Take a parked run for one resume; None when another took it (this one is refused).

		The run's row, parked at ``steps`` (on a question, an approval, an account), is marked
		``running`` in one transaction: of two resumes at once, in two processes sharing the
		store (the viewer and ``openmolt serve``, two viewers), one goes on and the other is
		refused, and a run that went on, ended or was cancelled since is refused too. So is a
		copy of a park its run went on from and parked again in, at the same step, once some of
		its calls ran (`parked_where`): resumed, the copy would run them again.

		Args:
			run_id: The run.
			steps: The steps of the parked state resumed (`RunState.steps`).
			pending: What the parked state resumed waits for (`RunState.pending`), when known.

		Returns:
			The status the run was parked with (to give it back: `release_parked`); ``""`` for a
			run the store has no row of (kept by the application, or from before the store),
			which the resume takes as it is; None when the run is not parked there at ``steps``.
		"""

		def update() -> str | None:
			with self._use() as conn, conn:
				conn.execute("BEGIN IMMEDIATE")  # no other claim between the read and the write
				row = conn.execute(
					"SELECT status, steps, pending FROM agent_runs WHERE run_id = ?", (run_id,)
				).fetchone()
				if row is None:
					return ""
				if row[0] not in _PARKED or row[1] != steps:
					return None
				kept = _loads(row[2])  # masked: the indexes and the waiting results are kept
				if pending is not None and kept is not None:
					if parked_where(kept) != parked_where(pending):
						return None  # parked again in the step, on fewer calls than this copy
				conn.execute(
					"UPDATE agent_runs SET status = 'running', updated = ?, pid = ?"
					" WHERE run_id = ?",
					(_now(), os.getpid(), run_id),
				)
				return str(row[0])

		return await anyio.to_thread.run_sync(update)

	async def claim_resume(
		self, run_id: str, steps: int, agent: str, pending: Mapping[str, Any] | None = None
	) -> str:
		"""Take a parked run for ``agent.resume`` (`claim_parked`), or refuse the resume.

		Processes that share a run store (the viewer, ``openmolt serve``) each resume the runs
		parked there: of two resumes of one parked step, the second is refused, as a durable
		backend refuses it, so its calls never run twice.

		Args:
			run_id: The run.
			steps: The steps of the parked state resumed (`RunState.steps`).
			agent: The agent's name, for the log.
			pending: What the parked state resumed waits for (`RunState.pending`), when known:
				a copy of a park its run went on from in place is refused too.

		Returns:
			The status taken, to give back when the resume is refused before the run goes on
			(`release_parked`); ``""`` when the store has no row of the run, or cannot be read
			(a store that fails records nothing: it cannot refuse either).

		Raises:
			ConfigurationError: Another resume took the run, or it went on, ended or was
				cancelled since this state was saved.
		"""
		try:
			claimed = await self.claim_parked(run_id, steps, pending)
		except Exception as exc:
			log.warning("%s: the run store could not be read to resume %s: %s", agent, run_id, exc)
			return ""
		if claimed is None:
			from openmolt_core.errors import ConfigurationError

			raise ConfigurationError(
				f"resume: the run {run_id} waits no longer at step {steps} in the run store: it "
				"was resumed already (by another process or surface), or it was cancelled; read "
				"its latest state from the store (openmolt logs, the viewer)"
			)
		return claimed

	async def release_parked(self, run_id: str, steps: int, status: str) -> None:
		"""Give back a claim (`claim_parked`) whose resume was refused before the run went on.

		Args:
			run_id: The run.
			steps: The steps of the parked state.
			status: The status it was parked with.
		"""
		await anyio.to_thread.run_sync(
			self._write,
			"UPDATE agent_runs SET status = ?, updated = ?"
			" WHERE run_id = ? AND steps = ? AND status = 'running' AND pid = ?",
			(status, _now(), run_id, steps, os.getpid()),
		)

	# reading ----------------------------------------------------------------------------

	async def runs(
		self,
		limit: int = 100,
		*,
		agent: str | None = None,
		status: str | None = None,
		search: str | None = None,
		before: str | None = None,
		since: str | None = None,
		trigger: str | None = None,
		session: str | None = None,
		user: str | None = None,
		top_level: bool = False,
		nested_in: str | None = None,
	) -> list[StoredRun]:
		"""The latest runs, newest first, optionally filtered.

		Args:
			limit: The most runs to return.
			agent: Only this agent's runs.
			status: Only runs with this status (``success``, ``error``, ``running``...).
			search: Only runs whose input, output or error contains this text (any case).
			before: Only runs started before this ISO 8601 time (to page back).
			since: Only runs started at or after this ISO 8601 time.
			trigger: Only runs started by this kind of trigger (``webhook``, ``cli``...).
			session: Only the runs of this session (`StoredRun.session_id`).
			user: Only the runs for this end user (`StoredRun.user`).
			top_level: Leave out the runs nested in others (a tool call's, a guardrail
				agent's: their trigger says ``agent``, and their id is their caller's followed
				by ``.``; `caller_of`), as `totals` does.
			nested_in: Only the runs nested in this run, at any depth (whose id starts with
				its id and ``.``, and which are nested, as ``top_level`` reads it: a run of its
				own whose id the application chose so, ``order.123`` beside ``order``, is not).
		"""
		clauses: list[str] = [f"NOT {_NESTED}"] if top_level else []
		args: list[Any] = []
		if nested_in is not None:  # the ids from "<id>." up to "<id>/": a range of the key's index
			clauses.append(f"run_id >= ? AND run_id < ? AND {_NESTED}")
			args += [f"{nested_in}.", f"{nested_in}/"]
		for column, op, value in (
			("agent", "=", agent),
			("status", "=", status),
			("started", "<", before),
			("started", ">=", since),
			("json_extract(trigger, '$.kind')", "=", trigger),
			("session", "=", session),
			("end_user", "=", user),
		):
			if value is not None:
				clauses.append(f"{column} {op} ?")
				args.append(value)
		if search:
			pattern = (
				"%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
			)
			clauses.append(
				"(input LIKE ? ESCAPE '\\' OR output LIKE ? ESCAPE '\\' OR error LIKE ? ESCAPE '\\')"
			)
			args += [pattern] * 3
		where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
		rows = await anyio.to_thread.run_sync(
			self._read,
			f"SELECT {_RUN_COLUMNS} FROM agent_runs {where} ORDER BY started DESC LIMIT ?",
			(*args, limit),
		)
		return [_run(r) for r in rows]

	async def prune(self, before: str) -> int:
		"""Delete the runs (and their events) that started before a time; returns how many.

		Runs still ``running`` are kept whatever their age.

		Args:
			before: An ISO 8601 time (UTC), e.g. ``(now - 30 days).isoformat()``.
		"""

		def delete() -> int:
			with self._use() as conn:
				with conn:
					ids = [
						r[0]
						for r in conn.execute(
							"SELECT run_id FROM agent_runs WHERE started < ? AND status != 'running'",
							(before,),
						)
					]
					for start in range(0, len(ids), 500):
						chunk = ids[start : start + 500]
						marks = ",".join("?" * len(chunk))
						conn.execute(f"DELETE FROM run_events WHERE run_id IN ({marks})", chunk)
						conn.execute(f"DELETE FROM agent_runs WHERE run_id IN ({marks})", chunk)
				conn.execute("VACUUM")
				# The connection stays open, and so would the write-ahead log's frames that
				# still hold the pruned rows: copy them back (erased) and empty the log now.
				conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
				return len(ids)

		return await anyio.to_thread.run_sync(delete)

	async def totals(self, since: str) -> list[dict[str, Any]]:
		"""Runs, tokens and cost summed per day and agent, for runs started since a time.

		A sub-agent's run is left out: its tokens and cost are in its caller's already.

		Args:
			since: An ISO 8601 time (UTC).

		Returns:
			One row per (day, agent), oldest day first: ``day`` (``YYYY-MM-DD``, UTC),
			``agent``, ``runs``, ``input_tokens``, ``output_tokens``, ``cost_usd`` (None when no
			run of the group knew its cost), ``unpriced_calls`` (the calls that cost leaves out:
			it is a lower bound when they are not 0; a run saved before they were counted and
			without a cost counts all its calls).
		"""
		rows = await anyio.to_thread.run_sync(
			self._read,
			"SELECT substr(started, 1, 10), agent, count(*),"
			" coalesce(sum(json_extract(usage, '$.input_tokens')), 0),"
			" coalesce(sum(json_extract(usage, '$.output_tokens')), 0),"
			" sum(json_extract(usage, '$.cost_usd')),"
			" coalesce(sum(CASE WHEN json_extract(usage, '$.cost_usd') IS NULL"
			" THEN json_extract(usage, '$.calls')"
			" ELSE coalesce(json_extract(usage, '$.unpriced_calls'), 0) END), 0)"
			f" FROM agent_runs WHERE started >= ? AND NOT {_NESTED}"
			" GROUP BY 1, 2 ORDER BY 1, 2",
			(since,),
		)
		keys = (
			"day",
			"agent",
			"runs",
			"input_tokens",
			"output_tokens",
			"cost_usd",
			"unpriced_calls",
		)
		return [dict(zip(keys, r, strict=True)) for r in rows]

	async def run_ids(self, prefix: str, limit: int = 10) -> list[str]:
		"""The ids of the runs whose id starts with ``prefix`` (at most ``limit``), newest first."""
		rows = await anyio.to_thread.run_sync(
			self._read,
			"SELECT run_id FROM agent_runs WHERE substr(run_id, 1, ?) = ? "
			"ORDER BY started DESC LIMIT ?",
			(len(prefix), prefix, limit),
		)
		return [r[0] for r in rows]

	async def run(self, run_id: str) -> StoredRun | None:
		"""One run, or None if the store has no run with that id."""
		rows = await anyio.to_thread.run_sync(
			self._read, f"SELECT {_RUN_COLUMNS} FROM agent_runs WHERE run_id = ?", (run_id,)
		)
		return _run(rows[0]) if rows else None

	async def events(self, run_id: str, *, after: int = 0, limit: int = 1000) -> list[StoredEvent]:
		"""A run's events in the order they happened.

		Args:
			run_id: The run's id.
			after: Only events whose `StoredEvent.id` is greater (to follow a run).
			limit: The most events to return.
		"""
		rows = await anyio.to_thread.run_sync(
			self._read,
			"SELECT id, run_id, seq, name, step, time, data FROM run_events"
			" WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?",
			(run_id, after, limit),
		)
		return [StoredEvent(r[0], r[1], r[2], r[3], r[4], r[5], _event_data(r[6])) for r in rows]

	async def state(self, run_id: str) -> RunState | None:
		"""The state a run ended with (to resume a parked run), or None while it has none."""
		from openmolt_core.result import RunState

		rows = await anyio.to_thread.run_sync(
			self._read, "SELECT state FROM agent_runs WHERE run_id = ?", (run_id,)
		)
		if not rows or rows[0][0] is None:
			return None
		return RunState.from_dict(json.loads(rows[0][0]))


def _model(agent: Agent) -> str:
	# As `openmolt_core.observe.watch_run` names it.
	return f"{agent.provider_name}:{agent.model}" if agent.provider_name else agent.model


def _run(row: tuple[Any, ...]) -> StoredRun:
	return StoredRun(
		run_id=row[0],
		agent=row[1],
		model=row[2],
		status=row[3],
		started=row[4],
		updated=row[5],
		ended=row[6],
		input=_loads(row[7]),
		steps=row[8],
		usage=_loads(row[9]),
		output=_loads(row[10]),
		error=row[11],
		pending=_loads(row[12]),
		pid=row[13],
		trigger=_loads(row[14]),
		session_id=row[15],
		user=row[16],
	)
