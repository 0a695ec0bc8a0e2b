"""Run records of scheduled runs, and their optional SQLite file (stdlib sqlite3, in a thread).

`RunRecord` is what the ``schedule:*`` events (`openmolt_core.scheduler.ScheduleEvent`) carry;
`openmolt_core.result` and `openmolt_core.scheduler` re-export it under their names.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import anyio

from openmolt_core._support.private import erasing, private_file
from openmolt_core.result import RunResult, RunStatus

__all__ = [
	"ENV_VAR",
	"Claim",
	"Owner",
	"RecordStatus",
	"RunRecord",
	"SqliteHistory",
	"default_path",
]

RecordStatus = Literal[RunStatus, "running", "cancelled", "skipped"]
"""A run's status: the run's own (`openmolt_core.result.RunStatus`), or ``running``, ``cancelled``
(stopped before it ended) or ``skipped`` (not started: another run of the agent was going, or the
run was missed while the process was down; ``note`` says which)."""


@dataclass(slots=True)
class RunRecord:
	"""One scheduled run, or one skipped.

	Args:
		schedule_id: The schedule's id.
		agent: The agent's name.
		due: When the run was due (UTC).
		started: When it started (UTC).
		ended: When it ended (UTC), None while running.
		status: See `RecordStatus`.
		usage: Tokens and cost (``Usage.to_dict()``), when the run got that far.
		note: Why it was skipped, or that it caught up on missed runs.
		error: What went wrong.
		result: The run's result (kept in memory only, not in the SQLite file).
	"""

	schedule_id: str
	agent: str
	due: datetime
	started: datetime
	ended: datetime | None = None
	status: RecordStatus = "running"
	usage: dict[str, Any] | None = None
	note: str | None = None
	error: str | None = None
	result: RunResult | None = field(default=None, repr=False)

	def to_dict(self) -> dict[str, Any]:
		"""The record as JSON-serializable data (times in ISO 8601, the result dumped)."""
		return {
			"schedule_id": self.schedule_id,
			"agent": self.agent,
			"due": self.due.isoformat(),
			"started": self.started.isoformat(),
			"ended": self.ended.isoformat() if self.ended else None,
			"status": self.status,
			"usage": self.usage,
			"note": self.note,
			"error": self.error,
			"result": self.result.to_dict() if self.result is not None else None,
		}


_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	schedule_id TEXT NOT NULL,
	agent TEXT NOT NULL,
	due TEXT NOT NULL,
	started TEXT NOT NULL,
	ended TEXT,
	status TEXT NOT NULL,
	usage TEXT,
	note TEXT,
	error TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_schedule ON runs (schedule_id, due);
CREATE TABLE IF NOT EXISTS schedules (
	schedule_id TEXT NOT NULL,
	agent TEXT NOT NULL,
	anchor TEXT NOT NULL,
	last_due TEXT,
	owner TEXT,
	owner_host TEXT,
	owner_pid INTEGER,
	lease_until TEXT,
	running TEXT,
	PRIMARY KEY (schedule_id, agent)
);
"""
"""The file's tables. A schedule's row in ``schedules`` is keyed by its id and its agent's name
(two agents may give one id: two files, two instances, names of one slug): its anchor, the last
due time handled (the cursor, moved before a run starts), the lease of the scheduler that
fires it, and the due time of the run that scheduler has in flight (``running``). Files from
before kept the anchor per id in ``anchors`` and the cursor as the latest record's due time;
`SqliteHistory` moves them into ``schedules`` once (``user_version`` 2), and adds ``running``
(``user_version`` 3)."""

_VERSION = 3


ENV_VAR = "OPENMOLT_SCHEDULE_STORE"
"""Names the ``openmolt`` command's schedule store (a path), or turns it ``off``."""


def default_path() -> Path | None:
	"""The ``openmolt`` command's schedule store (``openmolt agent.json``, ``serve``, ``ui``).

	``$OPENMOLT_SCHEDULE_STORE``, else ``$XDG_STATE_HOME/openmolt/schedules.db``
	(``~/.local/state/openmolt/schedules.db``): missed runs are noticed across restarts, and two
	commands serving one agent's schedules on this machine fire each due time once, in one of
	them (`SqliteHistory`). None when the variable is ``off`` (or empty): the history is then
	kept in memory, and each command fires its schedules itself.
	"""
	from openmolt_core._support.private import state_file
	from openmolt_core.errors import ConfigurationError

	return state_file(ENV_VAR, "schedules.db", refused=ConfigurationError)


KEEP = 1000
"""How many records of each schedule a `SqliteHistory` keeps by default (the oldest go first)."""


@dataclass(frozen=True, slots=True)
class Owner:
	"""The scheduler that fires a schedule from a shared file: one per `Scheduler`.

	Args:
		token: Tells this scheduler from every other (another instance of the same process too).
		host: The machine's name.
		pid: The process id.
	"""

	token: str
	host: str
	pid: int

	@classmethod
	def here(cls) -> Owner:
		"""A new owner for a scheduler of this process."""
		import socket
		import uuid

		owner = cls(uuid.uuid4().hex, socket.gethostname(), os.getpid())
		_MINE.add(owner.token)
		return owner

	def describe(self, host: str | None, pid: int | None, token: str | None = None) -> str:
		"""How a warning names the owner on ``host`` with ``pid``, seen from this one."""
		where = f"pid {pid} on {host}"
		if host == self.host and pid == self.pid and (token is None or token in _MINE):
			return f"{where}: another OpenMolt instance of this process"
		return where

	def gone(self, host: str | None, pid: int | None, token: str | None) -> bool:
		"""Whether the owner ``token`` on ``host`` with ``pid`` is a process of this machine that ended.

		A process of this pid is this one, or an earlier one of the same pid (a container's
		pid 1 restarted, same host name): an owner of it that this process never made is gone.
		"""
		if host != self.host or pid is None:
			return False
		if int(pid) == self.pid:
			return token not in _MINE
		return not _alive(int(pid))


_MINE: set[str] = set()
"""The tokens of the owners this process made (`Owner.here`)."""


@dataclass(frozen=True, slots=True)
class Claim:
	"""A schedule's row as a scheduler found it while taking or keeping its lease.

	Args:
		held: Whether the asking scheduler holds the lease now.
		anchor: The instant interval counts start from.
		last_due: The last due time handled, by any scheduler (None: none yet).
		moved: `SqliteHistory.advance` moved the cursor to the due time (it runs here).
		owner: Who holds the lease when another scheduler does (`Owner.describe`).
		until: When that lease ends, unless its holder renews it.
	"""

	held: bool
	anchor: datetime
	last_due: datetime | None
	moved: bool = False
	owner: str | None = None
	until: datetime | None = None


def _alive(pid: int) -> bool:
	"""Whether a process of this machine runs with ``pid`` (True when it cannot be told)."""
	if os.name != "posix":  # os.kill(pid, 0) is no probe elsewhere
		return True
	try:
		os.kill(pid, 0)
	except ProcessLookupError:
		return False
	except OSError:
		return True
	return True


def _when(text: str | None) -> datetime | None:
	return datetime.fromisoformat(text) if text else None


class SqliteHistory:
	"""Run records in a SQLite file, so history and missed runs survive a restart.

	Every call opens its own connection in a worker thread, so the event loop never blocks. The
	file keeps the latest ``keep`` records of each schedule: a schedule that fires every minute
	for years does not grow it without end.

	Several schedulers may share the file (two processes, two instances of one process): each
	schedule, keyed by its id and its agent's name, is fired by the one scheduler that holds its
	lease (`claim`), and its cursor moves in the transaction that lets a due time run
	(`advance`), so a due time runs once, in one place.

	Args:
		path: The database file; created with its tables on first use.
		keep: The records kept per schedule (at least 1).
	"""

	def __init__(self, path: str | Path, *, keep: int = KEEP) -> None:
		self.path: Path = Path(path)
		self.keep: int = max(int(keep), 1)
		self._ready = False

	def _connect(self) -> sqlite3.Connection:
		if not self._ready:
			private_file(self.path)  # 0600 in a 0700 folder, also a file made before
		conn = erasing(sqlite3.connect(self.path, timeout=10, isolation_level=None))
		if not self._ready:
			try:
				conn.executescript(_SCHEMA)
				_migrate(conn)
			except BaseException:
				conn.close()
				raise
			self._ready = True
		return conn

	def check(self) -> None:
		"""Open the file (made with its tables when missing) and try a write, rolled back.

		Raises:
			OSError: Its folder cannot be made, or the path is no regular file.
			sqlite3.Error: It is no SQLite file, or cannot be written (a read-only file or
				folder): a scheduler on it could claim no schedule, and would fire none.
		"""
		conn = self._connect()
		try:
			conn.execute("BEGIN IMMEDIATE")
			try:
				conn.execute(
					"INSERT INTO schedules (schedule_id, agent, anchor) VALUES ('', '', '')"
				)
			finally:
				conn.execute("ROLLBACK")
		finally:
			conn.close()

	def _add(self, record: RunRecord) -> None:
		conn = self._connect()
		try:
			with _immediate(conn):
				conn.execute(
					"INSERT INTO runs (schedule_id, agent, due, started, ended, status, usage, note, error)"
					" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
					(
						record.schedule_id,
						record.agent,
						record.due.isoformat(),
						record.started.isoformat(),
						record.ended.isoformat() if record.ended else None,
						record.status,
						json.dumps(record.usage) if record.usage is not None else None,
						record.note,
						record.error,
					),
				)
				conn.execute(
					"DELETE FROM runs WHERE schedule_id = ? AND agent = ? AND id <= (SELECT id"
					" FROM runs WHERE schedule_id = ? AND agent = ? ORDER BY id DESC LIMIT 1"
					" OFFSET ?)",
					(record.schedule_id, record.agent) * 2 + (self.keep,),
				)
		finally:
			conn.close()

	def _last_due(self, schedule_id: str, agent: str | None) -> datetime | None:
		conn = self._connect()
		try:
			if agent is None:
				row = conn.execute(
					"SELECT max(due) FROM runs WHERE schedule_id = ?", (schedule_id,)
				).fetchone()
			else:
				row = conn.execute(
					"SELECT max(due) FROM runs WHERE schedule_id = ? AND agent = ?",
					(schedule_id, agent),
				).fetchone()
		finally:
			conn.close()
		return _when(row[0])

	def _row(
		self, conn: sqlite3.Connection, schedule_id: str, agent: str, now: datetime
	) -> tuple[Any, ...]:
		# The schedule's row, made when missing (inside the caller's transaction). A row of a
		# file from before whose agent was unknown (an anchor with no record) goes to the first
		# agent that asks, as the id did.
		query = (
			"SELECT anchor, last_due, owner, owner_host, owner_pid, lease_until FROM schedules"
			" WHERE schedule_id = ? AND agent = ?"
		)
		row = conn.execute(query, (schedule_id, agent)).fetchone()
		if row is not None:
			return tuple(row)
		adopted = conn.execute(
			"UPDATE schedules SET agent = ? WHERE schedule_id = ? AND agent = ''",
			(agent, schedule_id),
		).rowcount
		if not adopted:
			conn.execute(
				"INSERT INTO schedules (schedule_id, agent, anchor) VALUES (?, ?, ?)",
				(schedule_id, agent, now.isoformat()),
			)
		return tuple(conn.execute(query, (schedule_id, agent)).fetchone())

	def _take(
		self,
		schedule_id: str,
		agent: str,
		owner: Owner,
		now: datetime,
		until: datetime,
		due: datetime | None,
	) -> Claim:
		# Take or keep the lease unless another live scheduler holds it; with `due`, move the
		# cursor to it too, unless it is there already. One transaction: two schedulers asking at
		# once are served one after the other.
		conn = self._connect()
		try:
			with _immediate(conn):
				anchor, last, token, host, pid, lease = self._row(conn, schedule_id, agent, now)
				last_due, ends = _when(last), _when(lease)
				free = (
					token is None
					or token == owner.token
					or ends is None
					or ends <= now
					or owner.gone(host, pid, token)
				)
				if not free:
					return Claim(
						False,
						datetime.fromisoformat(anchor),
						last_due,
						owner=owner.describe(host, pid, token),
						until=ends,
					)
				moved = due is not None and (last_due is None or last_due < due)
				if moved:
					assert due is not None
					last_due = due
				# A run in flight is said by its holder only: a new holder's row says none yet.
				conn.execute(
					"UPDATE schedules SET last_due = ?, owner = ?, owner_host = ?, owner_pid = ?,"
					" lease_until = ?, running = CASE WHEN owner = ? THEN running END"
					" WHERE schedule_id = ? AND agent = ?",
					(
						last_due.isoformat() if last_due else None,
						owner.token,
						owner.host,
						owner.pid,
						until.isoformat(),
						owner.token,
						schedule_id,
						agent,
					),
				)
				return Claim(True, datetime.fromisoformat(anchor), last_due, moved=moved)
		finally:
			conn.close()

	def _running(self, schedule_id: str, agent: str, owner: Owner, due: str | None) -> None:
		conn = self._connect()
		try:
			with _immediate(conn):
				conn.execute(
					"UPDATE schedules SET running = ? WHERE schedule_id = ? AND agent = ?"
					" AND owner = ?",
					(due, schedule_id, agent, owner.token),
				)
		finally:
			conn.close()

	def _firing(self, agent: str, owner: Owner, now: datetime) -> str | None:
		conn = self._connect()
		try:
			rows = conn.execute(
				"SELECT schedule_id, owner, owner_host, owner_pid, lease_until, running"
				" FROM schedules WHERE agent = ? AND running IS NOT NULL AND owner IS NOT NULL",
				(agent,),
			).fetchall()
		finally:
			conn.close()
		for schedule_id, token, host, pid, lease, running in rows:
			ends = _when(lease)
			if token == owner.token or ends is None or ends <= now or owner.gone(host, pid, token):
				continue  # this scheduler's own (its runs count in process), or a lease that ended
			return (
				f"{owner.describe(host, pid, token)}, which fires schedule {schedule_id} (its run "
				f"due {running})"
			)
		return None

	def _release(self, schedule_id: str, agent: str, owner: Owner) -> None:
		conn = self._connect()
		try:
			with _immediate(conn):
				conn.execute(
					"UPDATE schedules SET owner = NULL, owner_host = NULL, owner_pid = NULL,"
					" lease_until = NULL, running = NULL WHERE schedule_id = ? AND agent = ?"
					" AND owner = ?",
					(schedule_id, agent, owner.token),
				)
		finally:
			conn.close()

	def _anchor(self, schedule_id: str, default: datetime, agent: str) -> datetime:
		conn = self._connect()
		try:
			with _immediate(conn):
				anchor = self._row(conn, schedule_id, agent, default)[0]
		finally:
			conn.close()
		return datetime.fromisoformat(anchor)

	def _cursor(
		self, schedule_id: str, agent: str, now: datetime
	) -> tuple[datetime | None, datetime]:
		conn = self._connect()
		try:
			with _immediate(conn):
				anchor, last = self._row(conn, schedule_id, agent, now)[:2]
		finally:
			conn.close()
		return _when(last), datetime.fromisoformat(anchor)

	def _records(self, schedule_id: str, limit: int, agent: str | None) -> list[RunRecord]:
		conn = self._connect()
		columns = "schedule_id, agent, due, started, ended, status, usage, note, error"
		try:
			if agent is None:
				rows = conn.execute(
					f"SELECT {columns} FROM runs WHERE schedule_id = ? ORDER BY id DESC LIMIT ?",
					(schedule_id, limit),
				).fetchall()
			else:
				rows = conn.execute(
					f"SELECT {columns} FROM runs WHERE schedule_id = ? AND agent = ?"
					" ORDER BY id DESC LIMIT ?",
					(schedule_id, agent, limit),
				).fetchall()
		finally:
			conn.close()
		return [
			RunRecord(
				schedule_id=r[0],
				agent=r[1],
				due=datetime.fromisoformat(r[2]),
				started=datetime.fromisoformat(r[3]),
				ended=datetime.fromisoformat(r[4]) if r[4] else None,
				status=r[5],
				usage=json.loads(r[6]) if r[6] else None,
				note=r[7],
				error=r[8],
			)
			for r in reversed(rows)
		]

	async def add(self, record: RunRecord) -> None:
		"""Store a finished (or skipped) run."""
		await anyio.to_thread.run_sync(self._add, record)

	async def last_due(self, schedule_id: str, *, agent: str | None = None) -> datetime | None:
		"""The due time of the schedule's latest stored run or skip, if any.

		Args:
			schedule_id: The schedule's id.
			agent: Only the records of this agent (None: of every agent that gave the id).
		"""
		return await anyio.to_thread.run_sync(self._last_due, schedule_id, agent)

	async def anchor(self, schedule_id: str, default: datetime, *, agent: str = "") -> datetime:
		"""The instant the schedule's interval counts from, kept from its first start.

		A ``run_now`` between two due times does not move it, so a restart keeps the grid.

		Args:
			schedule_id: The schedule's id.
			default: The anchor to keep when the file has none for it yet.
			agent: The schedule's agent (each agent's schedule of one id has its own).
		"""
		return await anyio.to_thread.run_sync(self._anchor, schedule_id, default, agent)

	async def cursor(
		self, schedule_id: str, agent: str, now: datetime
	) -> tuple[datetime | None, datetime]:
		"""The last due time handled of an agent's schedule (None: none yet), and its anchor.

		Args:
			schedule_id: The schedule's id.
			agent: The agent's name.
			now: The anchor kept when the file has none for the schedule yet.
		"""
		return await anyio.to_thread.run_sync(self._cursor, schedule_id, agent, now)

	async def claim(
		self, schedule_id: str, agent: str, owner: Owner, now: datetime, until: datetime
	) -> Claim:
		"""Take (or keep) the lease of an agent's schedule until ``until``, unless another holds it.

		A lease held by another scheduler is free once it ended, or at once when its holder was a
		process of this machine that no longer runs (a crash).

		Args:
			schedule_id: The schedule's id.
			agent: The agent's name.
			owner: The asking scheduler.
			now: The current time.
			until: When the lease ends unless renewed.
		"""
		return await anyio.to_thread.run_sync(
			self._take, schedule_id, agent, owner, now, until, None
		)

	async def advance(
		self,
		schedule_id: str,
		agent: str,
		owner: Owner,
		due: datetime,
		now: datetime,
		until: datetime,
	) -> Claim:
		"""Let a due time run here: hold the lease and move the cursor to ``due`` in one transaction.

		The claim's ``moved`` says the due time is this scheduler's to run or skip; it is False
		when the lease is another's (``held`` is False) or the cursor is at ``due`` already.

		Args:
			schedule_id: The schedule's id.
			agent: The agent's name.
			owner: The asking scheduler.
			due: The due time to run (or to skip).
			now: The current time.
			until: When the lease ends unless renewed.
		"""
		return await anyio.to_thread.run_sync(
			self._take, schedule_id, agent, owner, now, until, due
		)

	async def running(
		self, schedule_id: str, agent: str, owner: Owner, due: datetime | None
	) -> None:
		"""Say that the lease's holder runs a due time of the schedule now (None: none any more).

		Written only while ``owner`` holds the lease: a scheduler of another process reads it
		(`firing`) before a run it is asked for, so runs of one agent do not overlap.

		Args:
			schedule_id: The schedule's id.
			agent: The agent's name.
			owner: The scheduler that holds the lease.
			due: The due time of its run in flight, or None when it ended.
		"""
		when = due.isoformat() if due is not None else None
		await anyio.to_thread.run_sync(self._running, schedule_id, agent, owner, when)

	async def firing(self, agent: str, owner: Owner, now: datetime) -> str | None:
		"""Which other scheduler runs one of the agent's schedules now, if one does.

		Args:
			agent: The agent's name.
			owner: The asking scheduler (its own runs are not counted: it knows them).
			now: The current time: a lease that ended, or whose process on this machine is
				gone, counts no run.

		Returns:
			That scheduler, the schedule and the due time, as a note says them; or None.
		"""
		return await anyio.to_thread.run_sync(self._firing, agent, owner, now)

	async def release(self, schedule_id: str, agent: str, owner: Owner) -> None:
		"""Give up the lease (the scheduler stopped serving the schedule), if ``owner`` holds it."""
		await anyio.to_thread.run_sync(self._release, schedule_id, agent, owner)

	async def take_over(self, former: str, schedule_id: str, agent: str) -> bool:
		"""Keep an agent's schedule row and history of ``former`` as ``schedule_id``'s, once.

		For a schedule whose derived id changed (`openmolt_core.scheduler.Schedule.former_id`):
		nothing is done when ``schedule_id`` has a row already.

		Args:
			former: The id the schedule was kept under.
			schedule_id: Its id now.
			agent: The agent's name.

		Returns:
			Whether a row was taken over.
		"""
		return await anyio.to_thread.run_sync(self._take_over, former, schedule_id, agent)

	def _take_over(self, former: str, schedule_id: str, agent: str) -> bool:
		conn = self._connect()
		try:
			with _immediate(conn):
				mine = conn.execute(
					"SELECT 1 FROM schedules WHERE schedule_id = ? AND agent IN (?, '')",
					(schedule_id, agent),
				).fetchone()
				if mine is not None:
					return False
				moved = 0
				for owner in (agent, ""):  # '': a row of a file from before agents were kept
					moved = conn.execute(
						"UPDATE schedules SET schedule_id = ? WHERE schedule_id = ? AND agent = ?",
						(schedule_id, former, owner),
					).rowcount
					if moved:
						break
				conn.execute(
					"UPDATE runs SET schedule_id = ? WHERE schedule_id = ? AND agent = ?",
					(schedule_id, former, agent),
				)
				return bool(moved)
		finally:
			conn.close()

	async def records(
		self, schedule_id: str, limit: int = 100, *, agent: str | None = None
	) -> list[RunRecord]:
		"""The schedule's latest stored records, oldest first.

		Args:
			schedule_id: The schedule's id.
			limit: The most records returned.
			agent: Only this agent's records (None: every agent's that gave the id).
		"""
		return await anyio.to_thread.run_sync(self._records, schedule_id, limit, agent)


class _immediate:
	"""A write transaction taken at once (``BEGIN IMMEDIATE``), committed unless it raised."""

	def __init__(self, conn: sqlite3.Connection) -> None:
		self.conn = conn

	def __enter__(self) -> sqlite3.Connection:
		self.conn.execute("BEGIN IMMEDIATE")
		return self.conn

	def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
		self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _migrate(conn: sqlite3.Connection) -> None:
	"""Bring a file from before to this version: once, whoever opens it first.

	A file of version 2 gains the ``running`` column. In one from before ``schedules``, each
	anchor of the old ``anchors`` table (kept per id) goes to the agent of the id's latest
	record ('' when it has none: the first agent to serve the id adopts it); each agent's
	schedule with records gets its cursor, the latest record's due time (and that as its anchor
	when it had none, as before).
	"""
	if conn.execute("PRAGMA user_version").fetchone()[0] >= _VERSION:
		return
	with _immediate(conn):
		version = conn.execute("PRAGMA user_version").fetchone()[0]
		if version >= _VERSION:
			return  # another process migrated it meanwhile
		columns = {row[1] for row in conn.execute("PRAGMA table_info(schedules)")}
		if "running" not in columns:  # a file of version 2 (a new file has it already)
			conn.execute("ALTER TABLE schedules ADD COLUMN running TEXT")
		if version >= 2:
			conn.execute(f"PRAGMA user_version = {_VERSION}")
			return
		old = conn.execute(
			"SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'anchors'"
		).fetchone()
		if old is not None:
			conn.execute(
				"INSERT OR IGNORE INTO schedules (schedule_id, agent, anchor)"
				" SELECT a.schedule_id, coalesce((SELECT r.agent FROM runs r WHERE r.schedule_id"
				" = a.schedule_id ORDER BY r.id DESC LIMIT 1), ''), a.anchor FROM anchors a"
			)
		conn.execute(
			"INSERT OR IGNORE INTO schedules (schedule_id, agent, anchor)"
			" SELECT schedule_id, agent, max(due) FROM runs GROUP BY schedule_id, agent"
		)
		conn.execute(
			"UPDATE schedules SET last_due = (SELECT max(due) FROM runs r WHERE r.schedule_id"
			" = schedules.schedule_id AND r.agent = schedules.agent) WHERE last_due IS NULL"
		)
		conn.execute(f"PRAGMA user_version = {_VERSION}")
