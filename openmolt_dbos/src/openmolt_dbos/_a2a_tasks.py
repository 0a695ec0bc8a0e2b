"""The A2A servers' tasks (and AG-UI threads, chats) in the durable store's database, for machines.

``openmolt serve`` keeps an agent's A2A tasks (`openmolt_serve._a2a_store`) beyond its process:
in a SQLite file of its own, beside the run store or in the durable store's file folder. Servers
on several machines behind one address share a PostgreSQL durable store and nothing else: each
kept its own file, so a task one server started was "task not found" on the other, and a
caller's answer to its question, or its ``CancelTask``, reached nothing. On PostgreSQL the tasks
are kept in the store's database instead (`DBOSBackend.task_rows
<openmolt_dbos._backend.DBOSBackend.task_rows>`), in the table ``openmolt_a2a_tasks``: one row per
agent, owner (the caller) and task, the task as the a2a-sdk's protobuf bytes, which every server
on the store reads as the truth. An agent's AG-UI endpoint keeps the run each of its threads
waits with in the same table, in a scope of its own (``agui:<agent>``; `openmolt_serve._agui_threads`),
so a thread's ``resume`` reaches its parked run from any server on the store; its chat channels
keep their chats' parked runs, and the mark of a chat whose message a server handles, in theirs
(``chat:<channel>:<agent>``; `openmolt_serve._parks`).

The calls are one short transaction each; the task store makes them in a worker thread.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import sqlalchemy as sa

from openmolt_dbos._tables import ready

__all__ = ["TASKS", "StoreTasks"]

_META = sa.MetaData()

TASKS = sa.Table(
	"openmolt_a2a_tasks",
	_META,
	sa.Column("scope", sa.Text, primary_key=True),
	sa.Column("owner", sa.Text, primary_key=True),
	sa.Column("task_id", sa.Text, primary_key=True),
	sa.Column("task", sa.LargeBinary, nullable=False),
	sa.Column("updated", sa.Float, nullable=False),
	sa.Column("waits", sa.Integer, nullable=False, server_default="0"),
	sa.Index("openmolt_a2a_tasks_by_time", "scope", "updated"),
)
"""Each task of each agent's A2A server: whose server (``a2a:<agent>``), whose task (its caller,
``""`` for the default one), its id, the task's bytes, when it was saved last, whether it waits
for its owner (1: pruned last)."""

_MIGRATED: weakref.WeakSet[sa.Engine] = weakref.WeakSet()
"""The engines whose table has the ``waits`` column (added to one an older version made)."""


def _add_waits(engine: sa.Engine) -> None:
	"""A table made before rows said whether they wait gets the column (each row: no)."""
	if engine in _MIGRATED:
		return
	columns = {c["name"] for c in sa.inspect(engine).get_columns(TASKS.name)}
	if "waits" not in columns:
		maybe = " IF NOT EXISTS" if engine.dialect.name == "postgresql" else ""
		with engine.begin() as conn:  # PostgreSQL's IF NOT EXISTS: two servers at once
			conn.execute(
				sa.text(
					f"ALTER TABLE {TASKS.name} ADD COLUMN{maybe} waits INTEGER NOT NULL DEFAULT 0"
				)
			)
	_MIGRATED.add(engine)


class StoreTasks:
	"""An agent's A2A task rows, or AG-UI thread rows, in a database (`openmolt_serve._rows.TaskRows`).

	Args:
		engine: The engine on OpenMolt's tables (`openmolt_dbos._engine.Engine.tables`).
		scope: Whose rows these are (``a2a:<agent>``, ``agui:<agent>``): each has its own.
	"""

	def __init__(self, engine: sa.Engine, scope: str) -> None:
		self.engine = engine
		self.scope = scope

	def __repr__(self) -> str:
		return f"StoreTasks({self.engine.url.render_as_string()!r}, scope={self.scope!r})"

	def _ready(self) -> sa.Engine:
		engine = ready(_META, self.engine)
		_add_waits(engine)
		return engine

	def _one(self, owner: str, task_id: str) -> sa.ColumnElement[bool]:
		return sa.and_(
			TASKS.c.scope == self.scope, TASKS.c.owner == owner, TASKS.c.task_id == task_id
		)

	def put(self, owner: str, task_id: str, task: bytes, *, waits: bool = False) -> None:
		"""Keep a task (a new one, or a newer state of one kept: the last save wins).

		``waits``: it waits for its owner, pruned last (`openmolt_serve._rows.TaskRows.put`).

		Raises:
			ValueError: The owner or the id holds a NUL character (no row can).
		"""
		_keepable(owner, task_id)
		row = {"scope": self.scope, "owner": owner, "task_id": task_id}
		values = {"task": task, "updated": time.time(), "waits": int(waits)}
		engine = self._ready()
		insert: Any = _insert(engine)
		with engine.begin() as conn:
			conn.execute(
				insert(TASKS)
				.values(**row, **values)
				.on_conflict_do_update(index_elements=list(row), set_=values)
			)

	def get(self, owner: str, task_id: str) -> bytes | None:
		"""A task's bytes, or None when none is kept (or it is another owner's)."""
		if not _keyable(owner, task_id):
			return None
		with self._ready().connect() as conn:
			found = conn.execute(sa.select(TASKS.c.task).where(self._one(owner, task_id))).first()
		return None if found is None else bytes(found[0])

	def newest(self, owner: str, limit: int) -> list[bytes]:
		"""The owner's newest ``limit`` tasks, newest first."""
		if not _keyable(owner):
			return []
		with self._ready().connect() as conn:
			rows = conn.execute(
				sa.select(TASKS.c.task)
				.where(TASKS.c.scope == self.scope, TASKS.c.owner == owner)
				.order_by(TASKS.c.updated.desc())
				.limit(limit)
			).all()
		return [bytes(row[0]) for row in rows]

	def delete(self, owner: str, task_id: str) -> None:
		"""Forget a task."""
		if not _keyable(owner, task_id):
			return
		with self._ready().begin() as conn:
			conn.execute(sa.delete(TASKS).where(self._one(owner, task_id)))

	def take(self, owner: str, task_id: str, task: bytes) -> bool:
		"""Forget a task if it is still kept as ``task``: whether this call did.

		One DELETE: of several servers taking one row at once, one deletes it (PostgreSQL's
		second waits for the first's commit, then finds no row).
		"""
		if not _keyable(owner, task_id):
			return False
		with self._ready().begin() as conn:
			gone = conn.execute(
				sa.delete(TASKS).where(self._one(owner, task_id), TASKS.c.task == task)
			)
			return bool(gone.rowcount == 1)

	def add(self, owner: str, task_id: str, task: bytes) -> bool:
		"""Keep a task only if none is kept under its id: whether this call did.

		One INSERT ... ON CONFLICT DO NOTHING: of several servers adding one row at once, one
		does (PostgreSQL's others wait for its commit, then find the row). The row it returns
		says so (the drivers' row count of such an INSERT is not to be trusted: psycopg's -1).

		Raises:
			ValueError: The owner or the id holds a NUL character (no row can).
		"""
		_keepable(owner, task_id)
		row = {"scope": self.scope, "owner": owner, "task_id": task_id}
		engine = self._ready()
		insert: Any = _insert(engine)
		with engine.begin() as conn:
			made = conn.execute(
				insert(TASKS)
				.values(**row, task=task, updated=time.time(), waits=1)  # held: pruned last
				.on_conflict_do_nothing(index_elements=list(row))
				.returning(TASKS.c.task_id)
			)
			return made.first() is not None

	def swap(self, owner: str, task_id: str, old: bytes, new: bytes) -> bool:
		"""Replace a task still kept as ``old`` by ``new``: whether this call did (one UPDATE)."""
		if not _keyable(owner, task_id):
			return False
		with self._ready().begin() as conn:
			changed = conn.execute(
				sa.update(TASKS)
				.where(self._one(owner, task_id), TASKS.c.task == old)
				.values(task=new, updated=time.time())
			)
			return bool(changed.rowcount == 1)

	def prune(self, keep: int) -> None:
		"""Keep ``keep`` of the scope's tasks, each owner's newest first; drop the others.

		A row that waits goes last (`openmolt_serve._rows.TaskRows.prune`); within each kind,
		every owner's newest, then every owner's second newest, and so on: an owner who fills
		the rows drops its own oldest first.
		"""
		rank = sa.func.row_number().over(
			partition_by=(TASKS.c.owner, TASKS.c.waits), order_by=TASKS.c.updated.desc()
		)
		ranked = (
			sa.select(
				TASKS.c.owner, TASKS.c.task_id, TASKS.c.updated, TASKS.c.waits, rank.label("rank")
			)
			.where(TASKS.c.scope == self.scope)
			.subquery()
		)
		dropped = (
			sa.select(ranked.c.owner, ranked.c.task_id)
			.order_by(ranked.c.waits.desc(), ranked.c.rank, ranked.c.updated.desc())
			.offset(keep)
		)
		with self._ready().begin() as conn:
			conn.execute(
				sa.delete(TASKS).where(
					TASKS.c.scope == self.scope,
					sa.tuple_(TASKS.c.owner, TASKS.c.task_id).in_(dropped),
				)
			)

	def close(self) -> None:
		"""Nothing to close: the engine is the store's."""


def _keyable(*keys: str) -> bool:
	"""Whether a row can be kept under these keys: PostgreSQL's text holds no NUL character.

	A caller's id that holds one (a ``threadId``, a task id) names no row: a read finds none
	rather than failing on the driver's error (a store that seems down, for ever).
	"""
	return not any("\x00" in key for key in keys)


def _keepable(*keys: str) -> None:
	if not _keyable(*keys):
		raise ValueError(
			"a row's owner or id holds a NUL character, which the store's text cannot hold"
		)


def _insert(engine: sa.Engine) -> Any:
	"""The dialect's INSERT, which takes ``ON CONFLICT`` (PostgreSQL's, SQLite's)."""
	from sqlalchemy.dialects import postgresql, sqlite

	return postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
