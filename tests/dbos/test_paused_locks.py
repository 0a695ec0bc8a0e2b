"""A worker paused inside a transaction holds its locks: on PostgreSQL, not past its lapse.

A process can stop anywhere (SIGSTOP, a long pause, a machine asleep), also between a statement
of a transaction and its commit. A worker stopped so in a beat held its row of
``openmolt_workers`` locked; the worker taking its runs over waited on that row in its heartbeat
thread, stopped beating, lost its own lease, and no run went on anywhere until the paused one
was continued (`test_paused_worker` timed out waiting for the finishing turn). The same held for
DBOS's own sessions, which PostgreSQL ended only after DBOS's default of 60 s. Every session of a
worker now ends once idle in a transaction for the lapse, dropping its locks. SQLite has no such
bound (no server can take a lock from a process): docs/guides/durable.md says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from _harness import make_store

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_dbos import _engine
from openmolt_dbos._engine import Engine
from openmolt_dbos._settings import Settings
from openmolt_dbos._workers import WORKERS, Heartbeat

LAPSE = 1.5


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[str]:
	"""A fresh PostgreSQL database (the case skips without one)."""
	yield from make_store("postgres", tmp_path)


def _worker(engine: sa.Engine, executor_id: str) -> Heartbeat:
	heartbeat = Heartbeat(
		engine,
		executor_id=executor_id,
		app_version="v1",
		heartbeat=0.2,
		lapse=LAPSE,
		recover=lambda dead: None,
	)
	heartbeat.claim()
	return heartbeat


def _ended_by_the_server(conn: sa.Connection) -> bool:
	"""Whether PostgreSQL ended this connection's session, idle in its transaction."""
	try:
		conn.execute(sa.text("SELECT 1"))
	except sa.exc.DBAPIError as exc:  # InternalError (psycopg 3), OperationalError
		orig = getattr(exc, "orig", None)
		return getattr(orig, "sqlstate", None) == "25P03" or "idle-in-transaction" in str(exc)
	return False


def test_a_worker_stopped_mid_beat_holds_up_no_takeover_past_its_lapse(postgres: str) -> None:
	"""a stops between its beat's UPDATE and the commit; b still takes it over."""
	engine = Engine(Settings(url=postgres, heartbeat=0.2, lapse=LAPSE)).tables  # as a worker's
	try:
		_worker(engine, "a")
		b = _worker(engine, "b")
		with engine.begin() as conn:  # another machine's workers: no process id to look up here
			conn.execute(WORKERS.update().values(host="elsewhere"))
		stopped = engine.connect()
		stopped.begin()
		stopped.execute(  # a's beat, never committed: a is stopped right after it
			WORKERS.update().where(WORKERS.c.executor_id == "a").values(beat_at=WORKERS.c.beat_at)
		)
		time.sleep(LAPSE + 0.2)  # a's last committed beat is older than the lapse now
		taken: list[Any] = []
		looker = threading.Thread(target=lambda: taken.append(b.take_over()), daemon=True)
		began = time.monotonic()
		looker.start()
		looker.join(LAPSE * 4)
		assert taken == [["a"]], "b's takeover waited on the row a holds, stopped mid-beat"
		assert time.monotonic() - began < LAPSE * 2
		assert _ended_by_the_server(stopped)
		stopped.close()
	finally:
		engine.dispose()


@pytest.mark.anyio
async def test_the_dbos_sessions_of_a_worker_end_once_idle_in_a_transaction_for_the_lapse(
	postgres: str,
) -> None:
	"""DBOS's sessions (the engine's and the client's) end after the lapse, not DBOS's 60 s."""
	om = OpenMolt(
		durability={"url": postgres, "heartbeat": 0.3, "lapse": LAPSE}, entry_points=False
	)
	agent = om.create_agent(name="Quick", model=ScriptedModel([finish(result="done")]))
	try:
		assert (await agent.run("go")).output == {"result": "done"}
		from dbos._dbos import _get_dbos_instance

		engine = _engine._ENGINE
		assert engine is not None
		engines = [_get_dbos_instance()._sys_db.engine, engine.client()._sys_db.engine]

		def idle(sys_engine: sa.Engine) -> bool:
			with sys_engine.connect() as conn:
				conn.begin()
				conn.execute(sa.text("SELECT 1"))  # a transaction its process never ends
				time.sleep(LAPSE + 1.0)
				return _ended_by_the_server(conn)

		for sys_engine in engines:
			assert await anyio.to_thread.run_sync(idle, sys_engine), sys_engine.url
	finally:
		engine = _engine._ENGINE
		if engine is not None and engine.launched:
			await engine.shutdown()
		from dbos import DBOS

		DBOS.destroy()
		_engine.reset_engine()
