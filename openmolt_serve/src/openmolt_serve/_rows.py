"""Rows a served surface keeps beyond a process: A2A tasks, AG-UI threads' and chats' parked runs.

With a run store (``OpenMolt(run_store=...)``) or a durable store, `openmolt serve` keeps an
agent's A2A tasks (`openmolt_serve._a2a_store`) and the run each of its AG-UI threads and chats
waits with (`openmolt_serve._parks`) in rows beyond the process, so a restart forgets neither, and
every server on those rows reads what the others wrote: the rows are the truth each read takes.
On a PostgreSQL durable store, which servers on several machines share, they are a table of its
database (the backend's ``task_rows``: `openmolt_dbos._a2a_tasks.StoreTasks`); else a table in a
SQLite file (`SqliteTasks`): the run store's, or one in the durable store's file folder. Each
surface and agent has a scope of its own (``a2a:<agent>``, ``agui:<agent>``,
``chat:<channel>:<agent>``), each caller (or chat user) its rows in it.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from openmolt_core.openmolt import OpenMolt
from openmolt_serve._sqlite import SqliteFile, local_file

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["SqliteTasks", "TaskRows", "task_file", "task_rows"]


class TaskRows(Protocol):
	"""Where an agent's A2A tasks (or AG-UI threads) are kept beyond a process: a row per owner and id.

	The calls are short transactions, made in a worker thread. ``owner`` is the caller: the
	a2a-sdk's owner of a task (`openmolt_serve.a2a.Caller`), an AG-UI thread's caller; a task
	is the SDK's protobuf bytes, a thread's row what it waits with
	(`openmolt_serve._agui_threads`).
	"""

	def put(self, owner: str, task_id: str, task: bytes, *, waits: bool = False) -> None:
		"""Keep a task (a new one, or a newer state of one kept: the last save wins).

		Args:
			owner: Whose task it is.
			task_id: Its id.
			task: Its bytes.
			waits: Whether it waits for its owner (a question, an approval, a park): such a
				row is pruned last (`prune`).
		"""
		...

	def get(self, owner: str, task_id: str) -> bytes | None:
		"""A task's bytes, or None when none is kept (or it is another owner's)."""
		...

	def newest(self, owner: str, limit: int) -> list[bytes]:
		"""The owner's newest ``limit`` tasks, newest first."""
		...

	def delete(self, owner: str, task_id: str) -> None:
		"""Forget a task."""
		...

	def take(self, owner: str, task_id: str, task: bytes) -> bool:
		"""Forget a task if it is still kept as ``task``: whether this call did.

		One statement: of several callers (on several servers) taking one row at once, one
		does; a row saved again since (another state) is not taken.
		"""
		...

	def add(self, owner: str, task_id: str, task: bytes) -> bool:
		"""Keep a task only if none is kept under its id: whether this call did.

		One statement: of several callers (on several servers) adding one row at once, one
		does (a chat's mark that a message of it is being handled: `openmolt_serve._parks`).
		What is added is held (a lease in use): it is pruned as a row that waits.
		"""
		...

	def swap(self, owner: str, task_id: str, old: bytes, new: bytes) -> bool:
		"""Replace a task still kept as ``old`` by ``new``: whether this call did (one statement)."""
		...

	def prune(self, keep: int) -> None:
		"""Keep ``keep`` tasks, each owner's newest first; drop the others.

		A row that waits (``put(..., waits=True)``, an added mark) goes last: many owners'
		finished tasks never push out one that waits for its owner's answer. Within each kind,
		the rows kept are every owner's newest, then every owner's second newest, and so on: an
		owner (a caller, a chat's user) who fills the rows drops its own oldest first.
		"""
		...

	def close(self) -> None:
		"""Release what the rows hold open (the server does when it stops)."""
		...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS openmolt_a2a_tasks (
	scope TEXT NOT NULL,
	owner TEXT NOT NULL,
	task_id TEXT NOT NULL,
	task BLOB NOT NULL,
	updated REAL NOT NULL,
	waits INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scope, owner, task_id)
);
CREATE INDEX IF NOT EXISTS openmolt_a2a_tasks_by_time ON openmolt_a2a_tasks (scope, updated);
"""


def _add_waits(db: sqlite3.Connection) -> None:
	"""A table made before rows said whether they wait gets the column (each row: no)."""
	columns = {row[1] for row in db.execute("PRAGMA table_info(openmolt_a2a_tasks)")}
	if "waits" not in columns:
		db.execute("ALTER TABLE openmolt_a2a_tasks ADD COLUMN waits INTEGER NOT NULL DEFAULT 0")


class SqliteTasks(SqliteFile):
	"""An agent's A2A task rows, or AG-UI thread rows (`TaskRows`), in a table of a SQLite file.

	Args:
		path: The SQLite file (the run store's, or one in the durable store's file folder).
		scope: Whose rows these are (``a2a:<agent>``, ``agui:<agent>``): each has its own.
	"""

	def __init__(self, path: str | Path, scope: str) -> None:
		super().__init__(path, _SCHEMA, migrate=_add_waits)
		self.scope = scope

	def __repr__(self) -> str:
		return f"SqliteTasks({str(self.path)!r}, scope={self.scope!r})"

	def put(self, owner: str, task_id: str, task: bytes, *, waits: bool = False) -> None:
		"""Keep a task (`TaskRows.put`)."""
		with self.transaction() as db:
			db.execute(
				"INSERT OR REPLACE INTO openmolt_a2a_tasks"
				" (scope, owner, task_id, task, updated, waits) VALUES (?, ?, ?, ?, ?, ?)",
				(self.scope, owner, task_id, task, time.time(), int(waits)),
			)

	def get(self, owner: str, task_id: str) -> bytes | None:
		"""A task's bytes, or None when none is kept (or it is another owner's)."""
		with self.transaction() as db:
			row = db.execute(
				"SELECT task FROM openmolt_a2a_tasks WHERE scope = ? AND owner = ? AND task_id = ?",
				(self.scope, owner, task_id),
			).fetchone()
		return None if row is None else bytes(row[0])

	def newest(self, owner: str, limit: int) -> list[bytes]:
		"""The owner's newest ``limit`` tasks, newest first."""
		with self.transaction() as db:
			rows = db.execute(
				"SELECT task FROM openmolt_a2a_tasks WHERE scope = ? AND owner = ?"
				" ORDER BY updated DESC LIMIT ?",
				(self.scope, owner, limit),
			).fetchall()
		return [bytes(row[0]) for row in rows]

	def delete(self, owner: str, task_id: str) -> None:
		"""Forget a task."""
		with self.transaction() as db:
			db.execute(
				"DELETE FROM openmolt_a2a_tasks WHERE scope = ? AND owner = ? AND task_id = ?",
				(self.scope, owner, task_id),
			)

	def take(self, owner: str, task_id: str, task: bytes) -> bool:
		"""Forget a task if it is still kept as ``task``: whether this call did (one DELETE)."""
		with self.transaction() as db:
			gone = db.execute(
				"DELETE FROM openmolt_a2a_tasks WHERE scope = ? AND owner = ? AND task_id = ?"
				" AND task = ?",
				(self.scope, owner, task_id, task),
			)
			return gone.rowcount == 1

	def add(self, owner: str, task_id: str, task: bytes) -> bool:
		"""Keep a task only if none is kept under its id: whether this call did (one INSERT)."""
		with self.transaction() as db:
			made = db.execute(
				"INSERT INTO openmolt_a2a_tasks (scope, owner, task_id, task, updated, waits)"
				" VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT DO NOTHING",
				(self.scope, owner, task_id, task, time.time()),
			)
			return made.rowcount == 1

	def swap(self, owner: str, task_id: str, old: bytes, new: bytes) -> bool:
		"""Replace a task still kept as ``old`` by ``new``: whether this call did (one UPDATE)."""
		with self.transaction() as db:
			changed = db.execute(
				"UPDATE openmolt_a2a_tasks SET task = ?, updated = ?"
				" WHERE scope = ? AND owner = ? AND task_id = ? AND task = ?",
				(new, time.time(), self.scope, owner, task_id, old),
			)
			return changed.rowcount == 1

	def prune(self, keep: int) -> None:
		"""Keep ``keep`` tasks, each owner's newest first (`TaskRows.prune`); drop the others."""
		with self.transaction() as db:
			db.execute(
				"DELETE FROM openmolt_a2a_tasks WHERE rowid IN (SELECT rowid FROM (SELECT rowid,"
				" updated, waits, ROW_NUMBER() OVER (PARTITION BY owner, waits"
				" ORDER BY updated DESC) AS rank FROM openmolt_a2a_tasks WHERE scope = ?)"
				" ORDER BY waits DESC, rank, updated DESC LIMIT -1 OFFSET ?)",
				(self.scope, keep),
			)


def task_file(agent: Agent) -> Path | None:
	"""The SQLite file an agent's A2A tasks and AG-UI threads are kept in on this machine.

	The run store's file (``OpenMolt(run_store=...)``), else a SQLite file in the durable
	store's file folder (``OpenMolt(durability=...)``: ``a2a-tasks.sqlite``, its name since
	it held A2A tasks only), else None (memory only), as `openmolt_serve._seen` finds its own.

	Args:
		agent: The agent.
	"""
	return local_file(agent, "a2a-tasks.sqlite")


def task_rows(agent: Agent, kind: str = "a2a") -> TaskRows | None:
	"""Where an agent's A2A tasks (or AG-UI threads) are kept beyond the process (None: in memory).

	A durable store that servers on several machines share (PostgreSQL: the backend's
	``task_rows``, a table in its database), so a task one server started is read, answered and
	cancelled on another (a thread's parked run resumed there); else the SQLite file of
	`task_file`.

	Args:
		agent: The agent.
		kind: Whose rows: its A2A server's tasks (``a2a``), its AG-UI endpoint's threads
			(``agui``) or a chat channel's chats (``chat:telegram``, ``chat:slack``); each kind
			has its scope (``<kind>:<agent>``).
	"""
	scope = f"{kind}:{agent.name}"
	shared = getattr(OpenMolt.of(agent).durability, "task_rows", None)
	if shared is not None:
		found: TaskRows | None = shared(scope)
		if found is not None:
			return found
	path = task_file(agent)
	return SqliteTasks(path, scope) if path is not None else None
