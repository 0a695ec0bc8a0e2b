"""The tasks of one agent's A2A server: at most `MAX_TASKS`, in memory or in shared rows.

The a2a-sdk's `InMemoryTaskStore` keeps every task for the process's life: a caller could grow
it without limit. `A2ATaskStore` keeps the newest ``max_tasks`` (past them, the oldest task of
the caller holding the most is forgotten: a ``GetTask`` for it is "task not found"; a caller who
sends many tasks pushes out its own, never another caller's; in memory, a done task before one
that waits for an answer, since one token may serve a whole front end).

With a run store (``OpenMolt(run_store=...)``) or a durable store the tasks are kept in rows
beyond the process instead (`task_rows`), so a task, and the question it waits for, survives a
restart (``GetTask`` finds it, the caller's answer resumes the run: `openmolt_serve.a2a`, and
``ListTasks`` lists it), and every server on those rows serves it: the rows are the truth each
read takes, never a copy a server kept of a task another server has moved on since. On a
PostgreSQL durable store, which servers on several machines share, they are a table of its
database (the backend's ``task_rows``: `openmolt_dbos._a2a_tasks.StoreTasks`); else a table in a
SQLite file (`SqliteTasks`): the run store's, or one in the durable store's file folder
(`openmolt_serve._rows`, which the AG-UI endpoint's threads share).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import anyio.to_thread
from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState

from openmolt_serve._a2a_parts import screened_task
from openmolt_serve._recent import crowded
from openmolt_serve._rows import SqliteTasks, TaskRows, task_file, task_rows

log: logging.Logger = logging.getLogger("openmolt")

__all__ = ["MAX_TASKS", "A2ATaskStore", "SqliteTasks", "TaskRows", "task_file", "task_rows"]

MAX_TASKS = 10_000
"""The most tasks one agent's A2A server keeps (in memory, and in its rows): the oldest of the
caller holding the most goes first (the rows may hold up to 100 more for a while)."""

_WAITING = frozenset(
	{
		TaskState.TASK_STATE_INPUT_REQUIRED,
		TaskState.TASK_STATE_AUTH_REQUIRED,
		TaskState.TASK_STATE_WORKING,
		TaskState.TASK_STATE_SUBMITTED,
	}
)
"""The states of a task that is not done: it waits for a person's answer, or its run goes on."""

_PRUNE_EVERY = 100
"""The rows drop their older tasks once every this many saves (so they hold a few more for a while)."""


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
		self._waiting: set[tuple[str, str]] = set()  # the tasks in memory not done (`_WAITING`)
		self._saves = 0

	async def save(self, task: Task, context: ServerCallContext) -> None:
		"""Keep a task; past ``max_tasks`` the oldest of the caller holding the most goes.

		In memory, a task that is not done (it waits for an answer, its run goes on) goes only
		when every other one waits too: a caller's token may serve many people.

		What is kept is screened first (`openmolt_serve._a2a_parts.screened_task`): a secret
		in a text or data part is masked, a file's bytes that show one are withheld (a note
		stands in the part's place), never masked as base64 text.
		"""
		task = await anyio.to_thread.run_sync(screened_task, task)
		owner = resolve_user_scope(context)
		rows = self.rows
		if rows is None:
			await self.memory.save(task, context)
			key = (owner, task.id)
			self._order[key] = context
			self._order.move_to_end(key)
			if task.status.state in _WAITING:
				self._waiting.add(key)
			else:
				self._waiting.discard(key)
			while len(self._order) > self.max_tasks:  # the caller holding the most gives one up
				# A done task first: one token may serve many people, one waiting for an answer.
				oldest = crowded(self._order, lambda k: k[0], spare=self._waiting.__contains__)
				if oldest is None:  # every task waits: the oldest of the caller holding the most
					oldest = crowded(self._order, lambda k: k[0])
				if oldest is None:  # pragma: no cover - a store past its bound holds a task
					break
				self._waiting.discard(oldest)
				await self.memory.delete(oldest[1], self._order.pop(oldest))
			return
		waits = task.status.state in _WAITING  # pruned last (`TaskRows.prune`)
		put = partial(rows.put, waits=waits)
		await anyio.to_thread.run_sync(put, owner, task.id, task.SerializeToString())
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
		return None if kept is None else _read(kept, task_id)

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
			task = _read(blob)
			if task is not None:
				await listed.save(await self._settled(task, context), context)
		return await listed.list(params, context)

	async def delete(self, task_id: str, context: ServerCallContext) -> None:
		"""Forget a task."""
		owner = resolve_user_scope(context)
		rows = self.rows
		if rows is not None:
			await anyio.to_thread.run_sync(rows.delete, owner, task_id)
			return
		self._order.pop((owner, task_id), None)
		self._waiting.discard((owner, task_id))
		await self.memory.delete(task_id, context)

	def close(self) -> None:
		"""Close the rows (the server does when it stops)."""
		if self.rows is not None:
			self.rows.close()


def _read(blob: bytes, task_id: str | None = None) -> Task | None:
	"""A task from its row, or None (logged) when the row holds none (edited by hand, damaged).

	A row that cannot be read is a task not found (``GetTask``, a message to it), and left out
	of a listing: the caller's other tasks are still served.

	Args:
		blob: The row's bytes.
		task_id: The id the row is kept under (None: any).
	"""
	from google.protobuf.message import (  # type: ignore[import-untyped]  # a2a-sdk's
		DecodeError,
	)

	task: Task | None
	try:
		task = Task.FromString(blob)
	except DecodeError:
		task = None
	if task is None or not task.id or (task_id is not None and task.id != task_id):
		named = repr(task_id[:80]) if task_id is not None else "listed"
		log.warning("A2A: a task row (%s) cannot be read; it is taken as no task", named)
		return None
	return task
