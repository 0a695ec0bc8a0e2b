"""Workers: stable executor ids, heartbeats, and the takeover of a dead worker's runs.

Open-source DBOS does not fail over by itself: the unfinished workflows of an executor resume only
when that executor id launches again. Each OpenMolt process that runs durable work therefore
holds a row in ``openmolt_workers`` (in the same database as DBOS's tables) and beats it every
``heartbeat`` seconds from a thread. Every live process also looks for rows of its application
version whose beat is older than ``lapse``: it claims such a row with one conditional ``UPDATE``
(only one process can win it) and hands the dead executor's pending workflows to DBOS's recovery,
which puts them back on DBOS's internal queue; the queue's dequeue admits exactly one runner per
workflow, so each run is taken over by one worker, never two. A process that stops cleanly marks
its row stopped, so its parked runs are taken over at once.

A worker's beat is also its lease (fencing): a worker that could not renew it for
``Heartbeat.fence_after`` seconds (less than ``lapse``) stops every run it executes, and no step
begins without a valid lease, so the owner has stopped before another worker may take it over
(``lapse`` after its last beat). When its beats go through again, it resumes its own runs; if
another worker took its row meanwhile (the runs went there), it holds the id again and resumes what
is still pending under it (runs its queue dequeued while it was fenced, which stopped at their
first step). A worker without a lease takes nothing over.

Every beat is written, and every beat judged, by the store's clock (`store_now`), never a
worker's own: machines' clocks may be minutes apart. A worker times its own lease by a clock
that counts a suspend (`_lease_clock`). Each beat also measures how far the store's clock is
from the worker's wall clock (`Heartbeat.offset`), so a run's time budget is judged on the
store's clock too, without asking the store at each step (`openmolt_dbos._port`).

An executor id is held by one process at a time: a process that starts under an id whose row
still beats waits up to ``lapse`` for it to stop (a predecessor that just crashed), then refuses;
a holder on the same machine whose process is gone is known dead at once.

The table is plain SQL through SQLAlchemy (which DBOS itself uses), in a thread: the event loop
never waits on it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from openmolt_core.errors import ConfigurationError

__all__ = [
	"ANSWERS",
	"CALLS",
	"CANCELS",
	"CLOCKS",
	"SCHEDULE_OWNERS",
	"STOPS",
	"WORKERS",
	"Heartbeat",
	"answered",
	"answered_in_run",
	"call_age",
	"cancelled_runs",
	"claim_answer",
	"claim_schedule",
	"claimed",
	"create_tables",
	"ensure_database",
	"execution_clock",
	"list_workers",
	"live_workers",
	"make_engine",
	"record_cancel",
	"record_start",
	"record_stop",
	"stopped",
	"store_now",
	"take_over_schedule",
]

log: logging.Logger = logging.getLogger("openmolt")

_META = sa.MetaData()

WORKERS = sa.Table(
	"openmolt_workers",
	_META,
	sa.Column("executor_id", sa.String(200), primary_key=True),
	sa.Column("token", sa.String(64), nullable=False),
	sa.Column("app_version", sa.String(200), nullable=False),
	sa.Column("host", sa.String(200)),
	sa.Column("pid", sa.Integer),
	sa.Column("started_at", sa.Float, nullable=False),
	sa.Column("beat_at", sa.Float, nullable=False),
	sa.Column("state", sa.String(16), nullable=False),  # live | stopped | taken
	sa.Column("taken_by", sa.String(200)),
)
"""One row per executor id that ever ran durable work in this database."""

SCHEDULES = sa.Table(
	"openmolt_schedules",
	_META,
	sa.Column("schedule_id", sa.String(400), primary_key=True),
	sa.Column("anchor", sa.Float, nullable=False),
	sa.Column("last_due", sa.Float),
)
"""Per schedule: the instant interval counts start from, and the last due time handled."""

SCHEDULE_OWNERS = sa.Table(
	"openmolt_schedule_owners",
	_META,
	sa.Column("schedule_key", sa.String(400), primary_key=True),
	sa.Column("agent", sa.String(400), nullable=False),
	sa.Column("claimed_at", sa.Float, nullable=False),
)
"""The agent each schedule key of the store belongs to: the first agent that served it.

A schedule's key names its due times' workflows (``<key>@<due>``) and its row in `SCHEDULES`.
Schedule ids are chosen per instance (or derived from the agent's name), so two agents (two
workers' files, two instances) can give one id: the first keeps it as its key, the other gets a
key of its own (`claim_schedule`), and neither run is taken for the other's.
"""


def claim_schedule(engine: sa.Engine, schedule_id: str, agent: str) -> str:
	"""The key of an agent's schedule in the store: its id, unless another agent holds the id.

	The first agent to serve a schedule id holds it (its due times stay ``<id>@<due>``, as
	before keys were owned, so runs and cursors of a store from an earlier version keep their
	ids). Another agent serving a schedule of that id gets ``<its name's slug>-<hash of its
	name>:<id>``, held the same way (the hash tells apart names of one slug, "Helper" and
	"helper").

	Args:
		engine: The engine on OpenMolt's tables.
		schedule_id: The schedule's id (as `openmolt_core.scheduler.Schedule` has it).
		agent: The agent's exact name.

	Raises:
		ConfigurationError: The agent's own key is held by yet another agent (names and ids
			that spell one key); the message names both agents and the fix.
	"""
	owner = _claim(engine, schedule_id, agent)
	if owner == agent:
		return schedule_id
	key = _own_key(schedule_id, agent)
	held = _claim(engine, key, agent)
	if held != agent:
		raise ConfigurationError(
			f"schedule {schedule_id!r} of agent {agent!r}: its id belongs to agent {owner!r} "
			f"in this store, and its own key {key!r} to agent {held!r}; give the schedule an "
			'id of its own ("id": "...")'
		)
	log.info(
		"durable: schedule id %r belongs to agent %r in this store; agent %r's schedule of that "
		"id runs as %s@<due time>",
		schedule_id,
		owner,
		agent,
		key,
	)
	return key


def _own_key(schedule_id: str, agent: str) -> str:
	"""An agent's own key for a schedule id another agent holds (`claim_schedule`)."""
	import hashlib
	import re

	slug = re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-") or "agent"
	return f"{slug}-{hashlib.sha256(agent.encode()).hexdigest()[:8]}:{schedule_id}"


def take_over_schedule(engine: sa.Engine, key: str, former: str, agent: str) -> bool:
	"""Give a schedule's key the cursor the agent kept under its former id, once.

	For a schedule whose derived id changed (`openmolt_core.scheduler.Schedule.former_id`):
	the anchor and last due time of the key the agent held for ``former`` (the id itself, or
	its own key for it) are copied to ``key``'s row, unless ``key`` has a row already. The due
	times that ran stay under their old workflow ids; the cursor says they were handled.

	Args:
		engine: The engine on OpenMolt's tables.
		key: The schedule's key now (`claim_schedule`).
		former: Its former id.
		agent: The agent's exact name.

	Returns:
		Whether a cursor was taken over.
	"""
	candidates = [former, _own_key(former, agent)]
	with engine.begin() as conn:
		mine = sa.select(SCHEDULES.c.schedule_id).where(SCHEDULES.c.schedule_id == key)
		if conn.execute(mine).first() is not None:
			return False
		held = dict(
			conn.execute(
				sa.select(SCHEDULE_OWNERS.c.schedule_key, SCHEDULE_OWNERS.c.agent).where(
					SCHEDULE_OWNERS.c.schedule_key.in_(candidates)
				)
			).all()
		)
		source = next((k for k in candidates if held.get(k) == agent), None)
		if source is None:
			return False
		row = conn.execute(
			sa.select(SCHEDULES.c.anchor, SCHEDULES.c.last_due).where(
				SCHEDULES.c.schedule_id == source
			)
		).first()
		if row is None:
			return False
		try:
			with conn.begin_nested():
				conn.execute(
					sa.insert(SCHEDULES).values(schedule_id=key, anchor=row[0], last_due=row[1])
				)
		except sa.exc.IntegrityError:  # another worker made the key's row first
			return False
	return True


def _claim(engine: sa.Engine, key: str, agent: str) -> str:
	"""Hold ``key`` for ``agent`` unless an agent holds it; the agent that holds it."""
	try:
		with engine.begin() as conn:
			conn.execute(
				sa.insert(SCHEDULE_OWNERS).values(
					schedule_key=key, agent=agent, claimed_at=time.time()
				)
			)
		return agent
	except sa.exc.IntegrityError:
		pass  # held: by this agent (another worker of it, a restart) or by another
	with engine.connect() as conn:
		held = conn.execute(
			sa.select(SCHEDULE_OWNERS.c.agent).where(SCHEDULE_OWNERS.c.schedule_key == key)
		).scalar()
	return str(held)


ANSWERS = sa.Table(
	"openmolt_answers",
	_META,
	sa.Column("workflow_id", sa.String(400), primary_key=True),
	sa.Column("question", sa.String(64), primary_key=True),
	sa.Column("text", sa.Text, nullable=False),
	sa.Column("answered_at", sa.Float, nullable=False),
)
"""The answer that won each parked question: one row, inserted by the first answer only."""

CALLS = sa.Table(
	"openmolt_call_starts",
	_META,
	sa.Column("run_id", sa.String(400), primary_key=True),
	sa.Column("step", sa.String(400), primary_key=True),
	sa.Column("workflow_id", sa.String(400)),
	sa.Column("executor_id", sa.String(200)),
	sa.Column("started_at", sa.Float, nullable=False),
)
"""The start of each tool call that must not silently run twice (`openmolt_core.capabilities.indoubt`).

Keyed by the run and the call's step key (step, index, tool), not by the workflow: a run goes on
in workflows of its own (``<run>+<steps>`` after a park, ``~<n>`` for the retry of a failed
one), and a call that one of them started is in doubt in every later one. ``workflow_id`` says
which started it.
"""


def record_start(
	engine: sa.Engine, run_id: str, step: str, workflow_id: str, executor_id: str
) -> bool:
	"""Record that a tool call of a run starts; True if it had started before (it is in doubt).

	Args:
		engine: The engine on OpenMolt's tables.
		run_id: The run's id (shared by all its workflows).
		step: The call's step key (`openmolt_core.durability.step_key`).
		workflow_id: The workflow that starts it now.
		executor_id: The worker that starts it now.
	"""
	try:
		with engine.begin() as conn:
			conn.execute(
				sa.insert(CALLS).values(
					run_id=run_id,
					step=step,
					workflow_id=workflow_id,
					executor_id=executor_id,
					started_at=store_now(engine),  # the store's clock, as `call_age` reads it
				)
			)
	except sa.exc.IntegrityError:
		return True
	return _started_before_upgrade(engine, workflow_id, step)


def call_age(engine: sa.Engine, run_id: str, step: str) -> float | None:
	"""Seconds since a tool call's start was first recorded (`record_start`), on the store's clock.

	Read by a call found in doubt whose idempotency key the service keeps for a while only
	(`openmolt_core.capabilities.indoubt.key_outlived`). None when no start is recorded for it.

	A call an older version started (`_LEGACY_CALLS`, found in doubt by `record_start` after
	the upgrade) is as old as that start, not as the row the upgraded worker wrote then: taken
	from the upgrade, a charge begun a day before it was sent again with a key the service had
	pruned. The older version wrote its worker's wall clock, the best time there is.

	Args:
		engine: The engine on OpenMolt's tables.
		run_id: The run's id.
		step: The call's step key.
	"""
	with engine.connect() as conn:
		row = conn.execute(
			sa.select(store_now(engine), CALLS.c.started_at, CALLS.c.workflow_id).where(
				CALLS.c.run_id == run_id, CALLS.c.step == step
			)
		).first()
		if row is None:
			return None
		now, started, workflow_id = float(row[0]), float(row[1]), row[2]
		if _has_legacy(engine, conn):
			legacy = _legacy_table()
			before = conn.execute(
				sa.select(legacy.c.started_at).where(
					legacy.c.workflow_id == workflow_id, legacy.c.step == step
				)
			).scalar()
			if before is not None:
				started = min(started, float(before))
	return max(0.0, now - started)


_LEGACY_CALLS = "openmolt_calls"
"""Where versions before `CALLS` recorded a call's start, by workflow id and step key."""

_LEGACY: dict[int, bool] = {}
"""Whether each engine's store has `_LEGACY_CALLS` (looked up once: old versions made it)."""


def _started_before_upgrade(engine: sa.Engine, workflow_id: str, step: str) -> bool:
	"""Whether an older version recorded this call's start (a call in flight at the upgrade).

	A store written by a version that kept starts per workflow (`_LEGACY_CALLS`) may hold the
	start of a call its worker died in; the upgraded worker that recovers the workflow must find
	it in doubt too, not run it again.
	"""
	if _LEGACY.get(id(engine)) is False:
		return False
	with engine.connect() as conn:
		if not _has_legacy(engine, conn):
			return False
		legacy = _legacy_table()
		found = conn.execute(
			sa.select(legacy.c.step).where(
				legacy.c.workflow_id == workflow_id, legacy.c.step == step
			)
		).first()
	return found is not None


def _has_legacy(engine: sa.Engine, conn: sa.Connection) -> bool:
	"""Whether the store has `_LEGACY_CALLS` (looked up once per engine)."""
	known = _LEGACY.get(id(engine))
	if known is None:
		known = _LEGACY[id(engine)] = sa.inspect(conn).has_table(_LEGACY_CALLS)
	return known


def _legacy_table() -> sa.TableClause:
	"""The columns of `_LEGACY_CALLS` that are read."""
	return sa.table(
		_LEGACY_CALLS, sa.column("workflow_id"), sa.column("step"), sa.column("started_at")
	)


STOPS = sa.Table(
	"openmolt_stops",
	_META,
	sa.Column("workflow_id", sa.String(400), primary_key=True),
	sa.Column("executor_id", sa.String(200)),
	sa.Column("stopped_at", sa.Float, nullable=False),
)
"""The workflows whose execution stopped because they were cancelled, and the worker it was in.

``DBOSBackend.cancel`` in another process waits for the row: then nothing of the run runs any
more anywhere (see `openmolt_dbos._backend.DBOSBackend.cancel`).
"""


def record_stop(engine: sa.Engine, workflow_id: str, executor_id: str) -> None:
	"""Record that a cancelled workflow's execution stopped in this worker (once).

	Args:
		engine: The engine on OpenMolt's tables.
		workflow_id: The workflow.
		executor_id: The worker it ran in.
	"""
	try:
		with engine.begin() as conn:
			conn.execute(
				sa.insert(STOPS).values(
					workflow_id=workflow_id, executor_id=executor_id, stopped_at=time.time()
				)
			)
	except sa.exc.IntegrityError:
		pass


def stopped(engine: sa.Engine, workflow_id: str) -> bool:
	"""Whether a cancelled workflow's execution has stopped (`record_stop`).

	Args:
		engine: The engine on OpenMolt's tables.
		workflow_id: The workflow.
	"""
	with engine.connect() as conn:
		found = conn.execute(
			sa.select(STOPS.c.workflow_id).where(STOPS.c.workflow_id == workflow_id)
		).first()
	return found is not None


CLOCKS = sa.Table(
	"openmolt_clocks",
	_META,
	sa.Column("workflow_id", sa.String(400), primary_key=True),
	sa.Column("from_step", sa.Integer, primary_key=True),
	sa.Column("offset", sa.Float, nullable=False),
)
"""How far the store's clock was from the wall clock of the worker that wrote a run's steps.

A row says: the steps of the workflow from ``from_step`` on were written by an execution whose
worker read the store's clock as its wall clock plus ``offset`` seconds (`Heartbeat.offset`).
DBOS stamps each step with the writing worker's wall clock; a replay reads those stamps as the
run's clock (`openmolt_dbos._port.DBOSPort.now`) and adds the offset to read them on the store's
clock, as the budget's deadline is. No row: no offset (a worker whose clock was right, or a
version before the rows).
"""


def execution_clock(
	engine: sa.Engine, workflow_id: str, from_step: int, offset: float
) -> list[tuple[int, float]]:
	"""Record the offset of an execution that writes a workflow's steps from ``from_step`` on.

	The rows of earlier executions that wrote nothing from there (they died first) are dropped:
	those steps are this execution's. A row is written only when the offset in effect at
	``from_step`` is another.

	Args:
		engine: The engine on OpenMolt's tables.
		workflow_id: The workflow.
		from_step: The first step id this execution may write (one past its journal's end).
		offset: The offset it reads the store's clock by.

	Returns:
		The rows before ``from_step``, ``(from_step, offset)`` in order: how to read the steps
		the journal holds on the store's clock.
	"""
	where = CLOCKS.c.workflow_id == workflow_id
	with engine.begin() as conn:
		rows = [
			(int(r[0]), float(r[1]))
			for r in conn.execute(
				sa.select(CLOCKS.c.from_step, CLOCKS.c.offset)
				.where(where)
				.order_by(CLOCKS.c.from_step)
			)
		]
		earlier = [r for r in rows if r[0] < from_step]
		if len(earlier) < len(rows):
			conn.execute(sa.delete(CLOCKS).where(where).where(CLOCKS.c.from_step >= from_step))
		if offset != (earlier[-1][1] if earlier else 0.0):
			conn.execute(
				sa.insert(CLOCKS).values(
					workflow_id=workflow_id, from_step=from_step, offset=offset
				)
			)
	return earlier


def make_engine(url: str, *, lapse: float | None = None) -> sa.Engine:
	"""A small SQLAlchemy engine on the store (SQLite waits for locks instead of failing).

	A process can stop at any instant (SIGSTOP, a long pause, a machine asleep), also between
	a statement of a transaction and its commit, still holding the locks it took: the row of
	its beat, the start of a call. On PostgreSQL, ``lapse`` bounds that: the server ends a
	session of this engine left idle in a transaction for ``lapse`` seconds, which drops its
	locks (``idle_in_transaction_session_timeout``), and a statement of it waits for a lock at
	most ``lapse`` seconds (``lock_timeout``). Otherwise a worker paused mid-beat held its row
	until it went on, and the worker taking it over waited there, in its heartbeat thread: it
	stopped beating, lost its own lease, and no run went on anywhere. The lapse is the bound
	because a takeover comes ``lapse`` after the paused worker's last beat: its locks are gone
	by then, or a moment later. SQLite has no such bound (see docs/durability.md).

	Args:
		url: The store's URL.
		lapse: Seconds after which a worker without a beat counts as dead (`Heartbeat`); None
			keeps the server's settings (a process that runs no worker: the command line).
	"""
	if url.startswith("sqlite"):
		engine = sa.create_engine(url, connect_args={"timeout": 30}, pool_size=2, max_overflow=2)

		@sa.event.listens_for(engine, "connect")
		def _wait_for_locks(dbapi_conn: Any, record: Any) -> None:
			dbapi_conn.execute("PRAGMA busy_timeout=30000")

		return engine
	engine = sa.create_engine(
		url.replace("postgresql://", "postgresql+psycopg://", 1),
		pool_size=2,
		max_overflow=2,
		pool_pre_ping=True,
	)
	if lapse is not None:
		bound = max(1, int(lapse * 1000))  # milliseconds; 0 would mean no bound

		@sa.event.listens_for(engine, "connect")
		def _bound_locks(dbapi_conn: Any, record: Any) -> None:
			with dbapi_conn.cursor() as cursor:
				cursor.execute(f"SET idle_in_transaction_session_timeout = {bound}")
				cursor.execute(f"SET lock_timeout = {bound}")
			dbapi_conn.commit()  # the pool rolls back on check-in, which would undo a bare SET

	return engine


def ensure_database(url: str) -> None:
	"""Create a PostgreSQL store's database if it does not exist yet (as DBOS does).

	The check and the ``CREATE DATABASE`` go through the server's ``postgres`` database. A role
	that may not create databases gets an error naming the database and the fix; so does a
	server that cannot be reached. SQLite creates its file itself: nothing to do.

	Args:
		url: The store's URL.

	Raises:
		ConfigurationError: The database is missing and cannot be created, or the server is
			unreachable.
	"""
	if not url.startswith("postgres"):
		return
	target = sa.engine.make_url(url.replace("postgresql://", "postgresql+psycopg://", 1))
	name = str(target.database or "")
	where = f"postgresql://{target.username or ''}@{target.host or ''}:{target.port or 5432}/{name}"
	if not name:
		raise ConfigurationError(
			f"durability: the PostgreSQL URL {where} names no database; end it with /DBNAME"
		)
	admin = sa.create_engine(target.set(database="postgres"), poolclass=sa.pool.NullPool)
	try:
		with admin.connect() as conn:
			conn = conn.execution_options(isolation_level="AUTOCOMMIT")
			exists = conn.execute(
				sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
			).scalar()
			if exists:
				return
			quoted = '"' + name.replace('"', '""') + '"'
			try:
				conn.execute(sa.text(f"CREATE DATABASE {quoted}"))
			except sa.exc.ProgrammingError as exc:
				if "already exists" in str(exc):  # another process created it a moment ago
					return
				raise ConfigurationError(
					f"durability: the PostgreSQL database {name!r} does not exist and role "
					f"{target.username!r} may not create it ({_first_line(exc)}); create it "
					f"(createdb {name}, or CREATE DATABASE {quoted} as an administrator), grant "
					"the role CREATEDB, or point durability at an existing database"
				) from None
			log.info("durable: created the PostgreSQL database %s", name)
	except sa.exc.OperationalError as exc:
		_probe(target, name, where, exc)
	finally:
		admin.dispose()


def _probe(target: sa.URL, name: str, where: str, exc: Exception) -> None:
	# The server's `postgres` database is not reachable for this role: the store's own may be.
	direct = sa.create_engine(target, poolclass=sa.pool.NullPool)
	try:
		with direct.connect():
			return
	except sa.exc.OperationalError as again:
		text = _first_line(again)
		if "does not exist" in text:
			raise ConfigurationError(
				f"durability: the PostgreSQL database {name!r} does not exist, and the server's "
				f"'postgres' database is not open to role {target.username!r} to create it; "
				f"create it (createdb {name}) or point durability at an existing database"
			) from None
		raise ConfigurationError(
			f"durability: cannot reach the store {where}: {text}; check the host, port, role "
			"and password of the URL, and that the server runs"
		) from None
	finally:
		direct.dispose()


def _first_line(exc: BaseException) -> str:
	orig = getattr(exc, "orig", None) or exc
	return (str(orig).strip().splitlines() or [type(orig).__name__])[0]


CANCELS = sa.Table(
	"openmolt_cancels",
	_META,
	sa.Column("run_id", sa.String(400), primary_key=True),
	sa.Column("cancelled_at", sa.Float, nullable=False),
)
"""The runs cancelled while parked on an approval or an account, or after their latest workflow
failed: that workflow has ended (it returned the park, or raised; the state either kept may go on
in a new segment), so DBOS has nothing to cancel; a row here refuses their next delivery."""


def record_cancel(engine: sa.Engine, run_id: str) -> None:
	"""Record that a run parked in an ended workflow, or failed, is cancelled (again: nothing changes)."""
	try:
		with engine.begin() as conn:
			conn.execute(sa.insert(CANCELS).values(run_id=run_id, cancelled_at=time.time()))
	except sa.exc.IntegrityError:
		pass  # cancelled before


def cancelled_runs(engine: sa.Engine, run_ids: list[str]) -> set[str]:
	"""Which of ``run_ids`` were cancelled while parked, or failed (`record_cancel`)."""
	if not run_ids:
		return set()
	with engine.connect() as conn:
		rows = conn.execute(sa.select(CANCELS.c.run_id).where(CANCELS.c.run_id.in_(run_ids)))
		return {str(r[0]) for r in rows}


def create_tables(engine: sa.Engine) -> None:
	"""Create the workers and schedules tables if they are missing (safe to call concurrently)."""
	from openmolt_dbos._tables import create

	create(_META, engine)


def claim_answer(engine: sa.Engine, workflow_id: str, question: str, text: str) -> str | None:
	"""Record the answer to a question unless one is recorded: None if this one won, else the text.

	The primary key admits one row per question, so of two processes answering at once exactly
	one inserts it; the other reads the winner's text (to send it again, idempotently, should the
	winner have died between recording and sending).
	"""
	try:
		with engine.begin() as conn:
			conn.execute(
				sa.insert(ANSWERS).values(
					workflow_id=workflow_id, question=question, text=text, answered_at=time.time()
				)
			)
		return None
	except sa.exc.IntegrityError:
		pass
	with engine.connect() as conn:
		won = conn.execute(
			sa.select(ANSWERS.c.text)
			.where(ANSWERS.c.workflow_id == workflow_id)
			.where(ANSWERS.c.question == question)
		).scalar()
	return str(won or "")


def claimed(engine: sa.Engine, workflow_id: str, question: str) -> bool:
	"""Whether an answer to this question of the workflow is recorded."""
	with engine.connect() as conn:
		found = conn.execute(
			sa.select(ANSWERS.c.question)
			.where(ANSWERS.c.workflow_id == workflow_id)
			.where(ANSWERS.c.question == question)
		).first()
	return found is not None


def answered(engine: sa.Engine, workflow_id: str) -> bool:
	"""Whether any question of the workflow has a recorded answer."""
	with engine.connect() as conn:
		found = conn.execute(
			sa.select(ANSWERS.c.question).where(ANSWERS.c.workflow_id == workflow_id).limit(1)
		).first()
	return found is not None


def answered_in_run(engine: sa.Engine, run_id: str, question: str) -> bool:
	"""Whether an answer to this question is recorded for the run (its workflow or a segment)."""
	ids = ANSWERS.c.workflow_id
	with engine.connect() as conn:
		found = conn.execute(
			sa.select(ANSWERS.c.question)
			.where(sa.or_(ids == run_id, ids.startswith(f"{run_id}+", autoescape=True)))
			.where(ANSWERS.c.question == question)
			.limit(1)
		).first()
	return found is not None


def list_workers(engine: sa.Engine) -> list[dict[str, Any]]:
	"""Every worker row, newest beat first."""
	with engine.connect() as conn:
		rows = conn.execute(sa.select(WORKERS).order_by(WORKERS.c.beat_at.desc())).mappings()
		return [dict(r) for r in rows]


def store_now(engine: sa.Engine) -> sa.ColumnElement[float]:
	"""The store's wall clock, in seconds since the epoch, as an SQL expression.

	Every lease of the workers' table is written and judged by this one clock, the database's,
	never by a worker's own: two machines' clocks may be minutes apart, and a worker whose clock
	ran ahead would take live workers over (their runs then ran in two places), one whose clock
	ran behind would be taken over while it beats, or would not see a dead worker's lease end.
	SQLite's clock is its host's (the file's processes share one machine).

	Args:
		engine: The engine on OpenMolt's tables.
	"""
	if engine.dialect.name == "postgresql":
		return sa.cast(sa.extract("epoch", sa.func.clock_timestamp()), sa.Float)
	return sa.cast((sa.func.julianday("now") - 2440587.5) * 86400.0, sa.Float)


def live_workers(engine: sa.Engine, lapse: float) -> list[dict[str, Any]]:
	"""The worker rows whose beat is at most ``lapse`` old by the store's clock (`store_now`).

	Args:
		engine: The engine on OpenMolt's tables.
		lapse: Seconds without a beat after which a worker counts as dead.
	"""
	with engine.connect() as conn:
		rows = conn.execute(
			sa.select(WORKERS)
			.where(WORKERS.c.state == "live")
			.where(WORKERS.c.beat_at >= store_now(engine) - lapse)
		).mappings()
		return [dict(r) for r in rows]


def _lease_clock() -> float:
	"""Seconds on the clock a worker's own lease is timed by: one that counts a suspend.

	``time.monotonic`` stands still while the machine sleeps (Linux's ``CLOCK_MONOTONIC``,
	macOS's ``mach_absolute_time``): a laptop that slept past its lease found it still valid
	on waking, and went on with runs another worker had taken over. ``CLOCK_BOOTTIME`` (Linux)
	and macOS's ``CLOCK_MONOTONIC`` count the sleep; elsewhere the monotonic clock is the best
	there is (the store's ownership check still refuses such a worker's writes).
	"""
	return time.clock_gettime(_SUSPEND_AWARE) if _SUSPEND_AWARE is not None else time.monotonic()


def _suspend_aware() -> int | None:
	import sys

	if sys.platform.startswith("linux"):
		return getattr(time, "CLOCK_BOOTTIME", None)
	if sys.platform == "darwin":
		return getattr(time, "CLOCK_MONOTONIC", None)
	return None


_SUSPEND_AWARE: int | None = _suspend_aware()


def _gone(row: Any) -> bool:
	# A holder on this machine whose process no longer exists is dead, whatever its last beat.
	if row["host"] != socket.gethostname() or not row["pid"]:
		return False
	try:
		os.kill(int(row["pid"]), 0)
	except ProcessLookupError:
		return True
	except OSError:
		return False
	return int(row["pid"]) == os.getpid()  # the id's holder was this process (a restart)


class Heartbeat:
	"""Holds this process's executor id, beats it, and takes over dead workers' runs.

	Args:
		engine: The store's engine.
		executor_id: This process's executor id.
		app_version: Its application version (only workers of the same version take over).
		heartbeat: Seconds between beats.
		lapse: Seconds without a beat after which a worker counts as dead.
		recover: Called in the recovery thread (never the beating one: a slow recovery must
			not cost this process its lease) with the id of each dead worker this process
			claimed, and with its own id when its lease came back (or `owe` was called); it
			hands that worker's pending workflows to DBOS's recovery. For its own id, it
			returns False (or raises) while runs are still to be handed on: it is called again
			at the next look.
		fence: Called from a thread when this process's lease runs out (it could not beat for
			`fence_after` seconds): it must stop every run executing here, before any other
			worker may take them over (`lapse` after the last beat).
	"""

	def __init__(
		self,
		engine: sa.Engine,
		*,
		executor_id: str,
		app_version: str,
		heartbeat: float,
		lapse: float,
		recover: Callable[[str], bool | None],
		fence: Callable[[], None] | None = None,
	) -> None:
		self.engine = engine
		self.executor_id = executor_id
		self.app_version = app_version
		self.heartbeat = heartbeat
		self.lapse = lapse
		self.recover = recover
		self.fence = fence
		self.token = uuid.uuid4().hex
		self.taken: list[tuple[str, float]] = []  # (executor id, when claimed), for reports
		# The lease: valid until `fence_after` seconds after the last beat began (this process's
		# own clock, `_lease_clock`, which counts a suspend), which is before any other worker's
		# takeover (`lapse` after the beat, on the store's clock, `store_now`, read as the beat
		# was written, after it began): the margin covers stopping the runs. No two machines'
		# wall clocks are compared.
		self.fence_after = max(lapse - max(heartbeat, lapse * 0.2), lapse * 0.5)
		self.renewed = _lease_clock()
		self.offset = 0.0
		"""The store's clock less this process's wall clock, in seconds, as the last beat read
		it: ``time.time() + offset`` is the store's clock without asking it (`store_now`)."""
		self.fenced = False
		self.fences = 0  # how often the lease ran out (for reports and tests)
		self._owed = False  # the lease came back and this id's own runs are still to resume
		self._stop = threading.Event()
		self._thread: threading.Thread | None = None
		self._watch: threading.Thread | None = None
		self._recovery: threading.Thread | None = None
		self._fencing = threading.Lock()

	# holding the id -----------------------------------------------------------------------

	def claim(self) -> None:
		"""Hold the executor id (waiting up to ``lapse`` for a crashed predecessor's beat to lapse).

		Raises:
			ConfigurationError: Another live process holds the id.
		"""
		deadline = _lease_clock() + self.lapse + self.heartbeat
		while True:
			if self._try_claim():
				return
			if _lease_clock() > deadline:
				raise ConfigurationError(
					f"worker id {self.executor_id!r} is held by another live process; give each "
					"worker its own id (openmolt worker --id NAME, or durability={'worker_id': ...})"
				)
			time.sleep(min(self.heartbeat, 0.5))

	def lease_valid(self) -> bool:
		"""Whether this process may execute its runs now (it beat recently, and is not fenced)."""
		return not self.fenced and _lease_clock() - self.renewed < self.fence_after

	def check(self) -> bool:
		"""`lease_valid`, fencing at once when it ran out (so its runs resume once it is back)."""
		if self.lease_valid():
			return True
		self._fence(f"could not beat for {_lease_clock() - self.renewed:.1f} s")
		return False

	def _measured(self, store: Any, before: float) -> None:
		"""Take the offset from the store's clock read between ``before`` and now (wall clocks)."""
		if store is not None:
			self.offset = float(store) - (before + time.time()) / 2

	def _try_claim(self) -> bool:
		began = _lease_clock()
		wall = time.time()
		now = store_now(self.engine)
		row = {
			"token": self.token,
			"app_version": self.app_version,
			"host": socket.gethostname(),
			"pid": os.getpid(),
			"started_at": now,
			"beat_at": now,
			"state": "live",
			"taken_by": None,
		}
		with self.engine.begin() as conn:
			current = (
				conn.execute(
					sa.select(WORKERS, now.label("store_now")).where(
						WORKERS.c.executor_id == self.executor_id
					)
				)
				.mappings()
				.first()
			)
			self._measured(
				conn.execute(sa.select(now)).scalar() if current is None else current["store_now"],
				wall,
			)
			if current is None:
				try:
					conn.execute(sa.insert(WORKERS).values(executor_id=self.executor_id, **row))
				except sa.exc.IntegrityError:
					return False  # another process inserted it first
				self.renewed = began
				return True
			held = (
				current["state"] == "live"
				and current["beat_at"] >= current["store_now"] - self.lapse
			)
			if held and not _gone(current):
				return False
			done = conn.execute(
				sa.update(WORKERS)
				.where(WORKERS.c.executor_id == self.executor_id)
				.where(WORKERS.c.token == current["token"])
				.values(**row)
			)
			if done.rowcount == 1:
				self.renewed = began
			return done.rowcount == 1

	# the thread ---------------------------------------------------------------------------

	def start(self) -> None:
		"""Beat once (the lease starts now), then beat, watch and recover in daemon threads."""
		try:
			self._renew()
		except Exception as exc:
			log.warning("durable: heartbeat of %s failed: %s", self.executor_id, exc)
		self._thread = threading.Thread(
			target=self._run, name=f"openmolt heartbeat {self.executor_id}", daemon=True
		)
		self._thread.start()
		# The watch fences on time even while a beat hangs on an unreachable database.
		self._watch = threading.Thread(
			target=self._watch_lease, name=f"openmolt lease {self.executor_id}", daemon=True
		)
		self._watch.start()
		# Recoveries in a thread of their own: one that takes longer than the lease (DBOS
		# re-enqueues a dead worker's runs one statement each) must not hold the beats back.
		self._recovery = threading.Thread(
			target=self._recover_loop, name=f"openmolt recovery {self.executor_id}", daemon=True
		)
		self._recovery.start()

	def stop(self) -> None:
		"""Stop the thread and mark the id stopped, so live workers take over its runs at once."""
		self._stop.set()
		if self._thread is not None:
			self._thread.join(timeout=10)
		if self._watch is not None:
			self._watch.join(timeout=10)
		if self._recovery is not None:
			self._recovery.join(timeout=10)
		try:
			with self.engine.begin() as conn:
				conn.execute(
					sa.update(WORKERS)
					.where(WORKERS.c.executor_id == self.executor_id)
					.where(WORKERS.c.token == self.token)
					.values(state="stopped", beat_at=0.0)
				)
		except Exception:
			log.warning(
				"durable: could not mark worker %s stopped", self.executor_id, exc_info=True
			)

	def _run(self) -> None:
		while not self._stop.is_set():
			try:
				self._renew()
			except Exception as exc:
				log.warning("durable: heartbeat of %s failed: %s", self.executor_id, exc)
			self._stop.wait(self.heartbeat)

	def _recover_loop(self) -> None:
		while not self._stop.wait(self.heartbeat):
			try:
				if self.lease_valid():  # a worker without a lease takes nothing over
					self._resume_own()
					self.take_over()
			except Exception as exc:
				log.warning("durable: recovery of %s failed: %s", self.executor_id, exc)

	def _watch_lease(self) -> None:
		step = min(self.heartbeat, self.fence_after / 4, 0.25)
		while not self._stop.wait(step):
			self.check()

	def _fence(self, why: str) -> None:
		with self._fencing:
			if self.fenced:
				return
			self.fenced = True
			self.fences += 1
		log.error(
			"durable: worker %s lost its lease (%s): it stops its runs now, before another "
			"worker may take them over; they resume here or elsewhere once the store answers",
			self.executor_id,
			why,
		)
		if self.fence is not None:
			try:
				self.fence()
			except Exception:
				log.exception("durable: could not stop the runs of %s", self.executor_id)

	def beat(self) -> None:
		"""Record that this process is alive, renewing its lease.

		A process that was fenced (its lease ran out) and still holds its row resumes its own
		runs. One whose row another worker took meanwhile holds the id again and resumes what is
		still pending under it: the takeover handed the runs on, but this process's queue may
		have dequeued some of them while it was fenced, and stopped them at their first step. A
		recovery that fails is tried again at the next beat (the started process's recovery
		thread does it, not its beats: `start`).
		"""
		self._renew()
		self._resume_own()

	def _renew(self) -> None:
		"""Write the beat (renewing the lease), or hold the id again if it was taken over."""
		began = _lease_clock()
		wall = time.time()
		with self.engine.begin() as conn:
			done = conn.execute(
				sa.update(WORKERS)
				.where(WORKERS.c.executor_id == self.executor_id)
				.where(WORKERS.c.token == self.token)
				.where(WORKERS.c.state == "live")
				.values(beat_at=store_now(self.engine))
				.returning(WORKERS.c.beat_at)
			)
			written = done.first()  # the store's clock as it wrote the beat: the offset
		if written is not None:
			self._measured(written[0], wall)
			self.renewed = began
			if self.fenced:
				self._lease_back("it resumes its runs")
			return
		self._fence("another worker took over its id")
		log.error(
			"durable: worker id %s was taken over by another worker (its runs went there); "
			"this process holds the id again, with no runs",
			self.executor_id,
		)
		if self._try_claim():
			self._lease_back("it resumes any run it stopped after the takeover")

	def _lease_back(self, what: str) -> None:
		# Unfenced before the recovery: a run it hands back may be dequeued here at once, and
		# must find the lease valid.
		self.fenced = False
		self._owed = True
		log.warning("durable: worker %s has its lease again; %s", self.executor_id, what)

	def owe(self) -> None:
		"""Look at this id's own pending runs from the next look on, until none is left.

		For a launch: DBOS's recovery of the id at its start logs a run it could not re-enqueue
		and goes on, and nothing else would look at that run until the process restarts.
		"""
		self._owed = True

	def _resume_own(self) -> None:
		# Cleared first: a lease that comes back again (in the beating thread) while this
		# recovery goes on owes another one.
		if self._owed:
			self._owed = False
			try:
				done = self.recover(self.executor_id)
			except BaseException:
				self._owed = True  # still owed: tried again at the next look
				raise
			if done is False:
				self._owed = True  # runs still to be handed on: the next look

	def take_over(self) -> list[str]:
		"""Claim the dead workers of this version and hand their runs to recovery; their ids."""
		cutoff = store_now(self.engine) - self.lapse  # the store's clock, read in each statement
		with self.engine.connect() as conn:
			dead = [
				row[0]
				for row in conn.execute(
					sa.select(WORKERS.c.executor_id)
					.where(WORKERS.c.executor_id != self.executor_id)
					.where(WORKERS.c.app_version == self.app_version)
					.where(WORKERS.c.state.in_(("live", "stopped")))
					.where(WORKERS.c.beat_at < cutoff)
				)
			]
		claimed = []
		for executor_id in dead:
			with self.engine.begin() as conn:
				done = conn.execute(
					sa.update(WORKERS)
					.where(WORKERS.c.executor_id == executor_id)
					.where(WORKERS.c.state.in_(("live", "stopped")))
					.where(WORKERS.c.beat_at < cutoff)
					.values(state="taken", taken_by=self.executor_id)
				)
			if done.rowcount != 1:
				continue  # another worker claimed it first, or it came back
			log.warning(
				"durable: worker %s stopped beating; %s takes over its unfinished runs",
				executor_id,
				self.executor_id,
			)
			try:
				self.recover(executor_id)
			except Exception:
				log.exception("durable: could not take over the runs of %s", executor_id)
				with self.engine.begin() as conn:  # let the next look (or another worker) retry
					conn.execute(
						sa.update(WORKERS)
						.where(WORKERS.c.executor_id == executor_id)
						.where(WORKERS.c.taken_by == self.executor_id)
						.values(state="stopped", taken_by=None)
					)
				continue
			self.taken.append((executor_id, time.time()))
			claimed.append(executor_id)
		return claimed
