"""The tasks of one agent's A2A server: at most `MAX_TASKS`, in memory and in a local file.

The a2a-sdk's `InMemoryTaskStore` keeps every task for the process's life: a caller could grow
it without limit. `A2ATaskStore` keeps the newest ``max_tasks`` (the oldest is forgotten: a
``GetTask`` for it is "task not found"). With a run store (``OpenMolt(run_store=...)``) or a
durable store it also writes each task to a table of its own in a SQLite file (`task_file`; the
newest ``max_tasks`` of the agent are kept there too), so a task, and the question it waits for,
survives a restart:
``GetTask`` finds it and the caller's answer resumes the run (`openmolt_serve.a2a`), and
``ListTasks`` lists it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

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

__all__ = ["MAX_TASKS", "A2ATaskStore", "task_file"]

MAX_TASKS = 10_000
"""The most tasks one agent's A2A server keeps (in memory, and in the run store): the oldest
goes first (the file may hold up to 100 more for a while)."""

_PRUNE_EVERY = 100
"""The file drops its older tasks once every this many saves (so it holds a few more for a while)."""

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


def task_file(agent: Agent) -> Path | None:
	"""Where an agent's A2A tasks are kept beyond the process's life (as `openmolt_serve._seen`).

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


class A2ATaskStore(TaskStore):
	"""An a2a-sdk task store that keeps the newest ``max_tasks`` tasks, and a file's copy.

	Args:
		max_tasks: The most tasks kept.
		path: The run store's SQLite file (None: memory only).
		scope: Whose tasks these are (``a2a:<agent>``): each agent has its own.
		settle: Brings a task read from the store up to date with its run (a run the operator
			decided elsewhere): the task changed, which is saved and given instead, or None
			when nothing changed.
	"""

	def __init__(
		self,
		*,
		max_tasks: int = MAX_TASKS,
		path: str | Path | None = None,
		scope: str = "",
		settle: Callable[[Task, ServerCallContext], Awaitable[Task | None]] | None = None,
	) -> None:
		self.max_tasks = max_tasks
		self.scope = scope
		self.settle = settle
		self.memory = InMemoryTaskStore()
		self.file: SqliteFile | None = SqliteFile(path, _SCHEMA) if path is not None else None
		self._order: OrderedDict[tuple[str, str], ServerCallContext] = OrderedDict()
		self._saves = 0

	async def _keep(self, task: Task, context: ServerCallContext) -> None:
		await self.memory.save(task, context)
		self._order[(resolve_user_scope(context), task.id)] = context
		self._order.move_to_end((resolve_user_scope(context), task.id))
		while len(self._order) > self.max_tasks:
			(_, old), old_context = self._order.popitem(last=False)
			await self.memory.delete(old, old_context)

	async def save(self, task: Task, context: ServerCallContext) -> None:
		"""Keep a task (and write it to the file); past ``max_tasks`` the oldest goes.

		What is kept is screened first (`openmolt_serve._a2a_parts.screened_task`): a secret
		in a text or data part is masked, a file's bytes that show one are withheld (a note
		stands in the part's place), never masked as base64 text.
		"""
		task = await anyio.to_thread.run_sync(screened_task, task)
		await self._keep(task, context)
		if self.file is None:
			return
		row = (self.scope, resolve_user_scope(context), task.id, task.SerializeToString())
		with self.file.transaction() as db:
			db.execute(
				"INSERT OR REPLACE INTO openmolt_a2a_tasks (scope, owner, task_id, task, updated)"
				" VALUES (?, ?, ?, ?, ?)",
				(*row, time.time()),
			)
			self._saves += 1
			if self._saves % _PRUNE_EVERY == 0:  # a scan of the index: not at every save
				db.execute(
					"DELETE FROM openmolt_a2a_tasks WHERE scope = ? AND updated < (SELECT updated"
					" FROM openmolt_a2a_tasks WHERE scope = ? ORDER BY updated DESC LIMIT 1"
					" OFFSET ?)",
					(self.scope, self.scope, self.max_tasks - 1),
				)

	async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
		"""A task kept in memory, else in the file (a task from before a restart), settled."""
		found = await self._get(task_id, context)
		if found is None or self.settle is None:
			return found
		settled = await self.settle(found, context)
		if settled is None:  # most reads: the task waits for nothing its run decided elsewhere
			return found
		await self.save(settled, context)
		return settled

	async def _get(self, task_id: str, context: ServerCallContext) -> Task | None:
		found = await self.memory.get(task_id, context)
		if found is not None or self.file is None:
			return found
		with self.file.transaction() as db:
			row = db.execute(
				"SELECT task FROM openmolt_a2a_tasks WHERE scope = ? AND owner = ? AND task_id = ?",
				(self.scope, resolve_user_scope(context), task_id),
			).fetchone()
		if row is None:
			return None
		task = Task()
		task.ParseFromString(row[0])
		await self._keep(task, context)
		return task

	async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
		"""The caller's tasks, as the a2a-sdk's store lists them: in memory, and in the file.

		A task of the file that this process has not read yet (it was saved before a restart,
		or by another server on the same store) is read first, so a list after a restart is
		the one before it. Each is read as `get` reads it (settled), so a list never shows a
		task behind its run, and its filters (a status) see the task as it is.
		"""
		owner = resolve_user_scope(context)
		if self.file is not None:
			with self.file.transaction() as db:
				stored = db.execute(
					"SELECT task_id FROM openmolt_a2a_tasks WHERE scope = ? AND owner = ?"
					" ORDER BY updated DESC LIMIT ?",
					(self.scope, owner, self.max_tasks),
				).fetchall()
			for (task_id,) in reversed(stored):  # the oldest first: the newest stay in memory
				if (owner, task_id) not in self._order:
					await self._get(task_id, context)
		if self.settle is not None:
			for task_id in [task for scope, task in self._order if scope == owner]:
				await self.get(task_id, context)  # settles it, saving what changed
		return await self.memory.list(params, context)

	async def delete(self, task_id: str, context: ServerCallContext) -> None:
		"""Forget a task, in memory and in the file."""
		self._order.pop((resolve_user_scope(context), task_id), None)
		await self.memory.delete(task_id, context)
		if self.file is not None:
			with self.file.transaction() as db:
				db.execute(
					"DELETE FROM openmolt_a2a_tasks WHERE scope = ? AND owner = ? AND task_id = ?",
					(self.scope, resolve_user_scope(context), task_id),
				)

	def close(self) -> None:
		"""Close the file (the server does when it stops)."""
		if self.file is not None:
			self.file.close()
