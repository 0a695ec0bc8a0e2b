"""The tasks of one agent's A2A server: at most `MAX_TASKS`, in memory or in shared rows.

The a2a-sdk's `InMemoryTaskStore` keeps every task for the process's life: a caller could grow
it without limit. `A2ATaskStore` keeps the newest ``max_tasks`` (the oldest is forgotten: a
``GetTask`` for it is "task not found").

With a run store (``OpenMolt(run_store=...)``) or a durable store the tasks are kept in rows
beyond the process instead (`task_rows`), so a task, and the question it waits for, survives a
restart (``GetTask`` finds it, the caller's answer resumes the run: `openmolt_serve.a2a`, and
``ListTasks`` lists it), and every server on those rows serves it: the rows are the truth each
read takes, never a copy a server kept of a task another server has moved on since. On a
PostgreSQL durable store, which servers on several machines share, they are a table of its
database (the backend's ``task_rows``: `openmolt_dbos._a2a_tasks.StoreTasks`); else a table in a
SQLite file (`SqliteTasks`): the run store's, or one in the durable store's file folder.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio.to_thread
from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task

from openmolt_core.openmolt import OpenMolt
from openmolt_serve._a2a_parts import screened_task
from openmolt_serve._sqlite import SqliteFile

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["MAX_TASKS", "A2ATaskStore", "SqliteTasks", "TaskRows", "task_file", "task_rows"]

MAX_TASKS = 10_000
"""The most tasks one agent's A2A server keeps (in memory, and in its rows): the oldest goes
first (the rows may hold up to 100 more for a while)."""

_PRUNE_EVERY = 100
"""The rows drop their older tasks once every this many saves (so they hold a few more for a while)."""


class TaskRows(Protocol):
	"""Where an agent's A2A tasks are kept beyond a process: one row per owner and task id.

	The calls are short transactions, made in a worker thread. ``owner`` is the a2a-sdk's
	owner of the task (its caller: `openmolt_serve.a2a.Caller`); a task is the SDK's protobuf
	bytes.
	"""

	def put(self, owner: str, task_id: str, task: bytes) -> None:
		"""Keep a task (a new one, or a newer state of one kept: the last save wins)."""
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

	def prune(self, keep: int) -> None:
		"""Keep the newest ``keep`` tasks (of every owner); drop the older ones."""
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
	PRIMARY KEY (scope, owner, task_id)
);
CREATE INDEX IF NOT EXISTS openmolt_a2a_tasks_by_time ON openmolt_a2a_tasks (scope, updated);
"""


class SqliteTasks(SqliteFile):
	"""An agent's A2A task rows (`TaskRows`) in a table of a SQLite file.

	Args:
		path: The SQLite file (the run store's, or one in the durable store's file folder).
		scope: Whose tasks these are (``a2a:<agent>``): each agent has its own.
	"""

	def __init__(self, path: str | Path, scope: str) -> None:
		super().__init__(path, _SCHEMA)
		self.scope = scope

	def __repr__(self) -> str:
		return f"SqliteTasks({str(self.path)!r}, scope={self.scope!r})"

	def put(self, owner: str, task_id: str, task: bytes) -> None:
		"""Keep a task (a new one, or a newer state of one kept: the last save wins)."""
		with self.transaction() as db:
			db.execute(
				"INSERT OR REPLACE INTO openmolt_a2a_tasks (scope, owner, task_id, task, updated)"
				" VALUES (?, ?, ?, ?, ?)",
				(self.scope, owner, task_id, task, time.time()),
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

	def prune(self, keep: int) -> None:
		"""Keep the newest ``keep`` tasks (of every owner); drop the older ones."""
		with self.transaction() as db:
			db.execute(
				"DELETE FROM openmolt_a2a_tasks WHERE scope = ? AND updated < (SELECT updated"
				" FROM openmolt_a2a_tasks WHERE scope = ? ORDER BY updated DESC LIMIT 1"
				" OFFSET ?)",
				(self.scope, self.scope, keep - 1),
			)


def task_file(agent: Agent) -> Path | None:
	"""The SQLite file an agent's A2A tasks are kept in on this machine (as `openmolt_serve._seen`).

	The run store's file (``OpenMolt(run_store=...)``), else a SQLite file in the durable
	store's file folder (``OpenMolt(durability=...)``), else None (memory only).

	Args:
		agent: The agent.
	"""
	om = OpenMolt.of(agent)
	if om.run_store is not None:
		return om.run_store.path
	if om.durability is not None:
		return Path(om.durability.files_dir) / "a2a-tasks.sqlite"
	return None


def task_rows(agent: Agent) -> TaskRows | None:
	"""Where an agent's A2A tasks are kept beyond the process (None: in memory only).

	A durable store that servers on several machines share (PostgreSQL: the backend's
	``task_rows``, a table in its database), so a task one server started is read, answered and
	cancelled on another; else the SQLite file of `task_file`.

	Args:
		agent: The agent.
	"""
	scope = f"a2a:{agent.name}"
	shared = getattr(OpenMolt.of(agent).durability, "task_rows", None)
	if shared is not None:
		found: TaskRows | None = shared(scope)
		if found is not None:
			return found
	path = task_file(agent)
	return SqliteTasks(path, scope) if path is not None else None


class A2ATaskStore(TaskStore):
	"""An a2a-sdk task store: the newest ``max_tasks`` tasks, in memory or in rows.

	With rows (`TaskRows`) every read takes the task from them, so servers sharing the rows
	read each other's latest; without, the tasks are kept in this process's memory.

	Args:
		max_tasks: The most tasks kept.
		rows: Where the tasks are kept beyond the process (`task_rows`; None: memory only).
		path: A SQLite file to keep them in, when no ``rows`` are given (`SqliteTasks`).
		scope: Whose tasks these are (``a2a:<agent>``), for ``path``.
		settle: Brings a task read from the store up to date with its run (a run the operator
			decided elsewhere): the task changed, which is saved and given instead, or None
			when nothing changed.
	"""

	def __init__(
		self,
		*,
		max_tasks: int = MAX_TASKS,
		rows: TaskRows | None = None,
		path: str | Path | None = None,
		scope: str = "",
		settle: Callable[[Task, ServerCallContext], Awaitable[Task | None]] | None = None,
	) -> None:
		self.max_tasks = max_tasks
		self.settle = settle
		self.rows: TaskRows | None = rows
		if rows is None and path is not None:
			self.rows = SqliteTasks(path, scope)
		self.memory = InMemoryTaskStore()
		self._order: OrderedDict[tuple[str, str], ServerCallContext] = OrderedDict()
		self._saves = 0

	async def save(self, task: Task, context: ServerCallContext) -> None:
		"""Keep a task; past ``max_tasks`` the oldest goes.

		What is kept is screened first (`openmolt_serve._a2a_parts.screened_task`): a secret
		in a text or data part is masked, a file's bytes that show one are withheld (a note
		stands in the part's place), never masked as base64 text.
		"""
		task = await anyio.to_thread.run_sync(screened_task, task)
		owner = resolve_user_scope(context)
		rows = self.rows
		if rows is None:
			await self.memory.save(task, context)
			self._order[(owner, task.id)] = context
			self._order.move_to_end((owner, task.id))
			while len(self._order) > self.max_tasks:
				(_, old), old_context = self._order.popitem(last=False)
				await self.memory.delete(old, old_context)
			return
		await anyio.to_thread.run_sync(rows.put, owner, task.id, task.SerializeToString())
		self._saves += 1
		if self._saves % _PRUNE_EVERY == 0:  # a scan of the index: not at every save
			await anyio.to_thread.run_sync(rows.prune, self.max_tasks)

	async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
		"""A task as kept (in the rows, else in memory), settled."""
		found = await self._get(task_id, context)
		if found is None:
			return None
		return await self._settled(found, context)

	async def _get(self, task_id: str, context: ServerCallContext) -> Task | None:
		rows = self.rows
		if rows is None:
			return await self.memory.get(task_id, context)
		kept = await anyio.to_thread.run_sync(rows.get, resolve_user_scope(context), task_id)
		return None if kept is None else Task.FromString(kept)

	async def _settled(self, task: Task, context: ServerCallContext) -> Task:
		if self.settle is None:
			return task
		settled = await self.settle(task, context)
		if settled is None:  # most reads: the task waits for nothing its run decided elsewhere
			return task
		await self.save(settled, context)
		return settled

	async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
		"""The caller's tasks, listed (filtered, paged) as the a2a-sdk's store lists them.

		Each is read as `get` reads it (settled), so a list never shows a task behind its run,
		and its filters (a status) see the task as it is; with rows, the caller's newest
		``max_tasks`` as the rows hold them now (those other servers saved, or this one before
		a restart, among them).
		"""
		rows = self.rows
		if rows is None:
			owner = resolve_user_scope(context)
			for task_id in [task for scope, task in self._order if scope == owner]:
				await self.get(task_id, context)  # settles it, saving what changed
			return await self.memory.list(params, context)
		kept = await anyio.to_thread.run_sync(
			rows.newest, resolve_user_scope(context), self.max_tasks
		)
		listed = InMemoryTaskStore()  # the SDK's filters and pages over the tasks read now
		for blob in kept:
			await listed.save(await self._settled(Task.FromString(blob), context), context)
		return await listed.list(params, context)

	async def delete(self, task_id: str, context: ServerCallContext) -> None:
		"""Forget a task."""
		owner = resolve_user_scope(context)
		rows = self.rows
		if rows is not None:
			await anyio.to_thread.run_sync(rows.delete, owner, task_id)
			return
		self._order.pop((owner, task_id), None)
		await self.memory.delete(task_id, context)

	def close(self) -> None:
		"""Close the rows (the server does when it stops)."""
		if self.rows is not None:
			self.rows.close()
