"""The runs of one session take turns across processes, not only within one.

Two processes sharing a session store (two ``openmolt serve`` workers, a CLI and a server) run
turns of one session one after another: each run reads the turns appended before it. The stores
processes share (`SQLiteSession`, `SQLAlchemySession`) hold a session while a run of it goes on
(``turn()``): a lock file per session beside a SQLite database, an advisory lock on PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import InMemorySession, OpenMolt, SQLiteSession
from openmolt_core.conversation import SharedSession
from openmolt_core.llm import ModelRequest, ModelResponse, Usage
from openmolt_core.sessions import SQLAlchemySession
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


async def _waits(session: Any, seconds: float = 0.4) -> bool:
	"""Whether taking the session's turn is still waiting after ``seconds``."""
	with anyio.move_on_after(seconds) as scope:
		async with session.turn():
			pass
	return scope.cancelled_caught


def test_the_stores_processes_share_take_turns() -> None:
	assert isinstance(SQLiteSession("s", "/tmp/x.db"), SharedSession)
	assert not isinstance(InMemorySession("s"), SharedSession)


async def test_a_sqlite_session_held_by_another_process_waits_until_it_lets_go(
	tmp_path: Path,
) -> None:
	"""A process holds session ``s``: ``s`` waits (the wait can be cancelled), ``t`` does not;
	the process dies holding it, and the lock goes with it."""
	db = tmp_path / "sessions.db"
	holder = textwrap.dedent(
		f"""
		import anyio, sys
		from openmolt import SQLiteSession

		async def main():
			async with SQLiteSession("s", {str(db)!r}).turn():
				open({str(tmp_path / "held")!r}, "w").close()
				await anyio.sleep(60)

		anyio.run(main)
		"""
	)
	proc = await anyio.open_process([sys.executable, "-c", holder], stdout=None, stderr=None)
	try:
		await _appears(tmp_path / "held")
		assert await _waits(SQLiteSession("s", db))
		assert not await _waits(SQLiteSession("t", db))
		assert stat_mode(db.with_name("sessions.db.turns")) == 0o700
	finally:
		proc.kill()
		await proc.wait()
	with anyio.fail_after(5):  # the dead process's lock is gone
		async with SQLiteSession("s", db).turn():
			pass


@pytest.mark.parametrize("store", ["sqlite", "sqlalchemy"])
async def test_clear_removes_the_session_s_lock_file_unless_a_run_holds_it(
	tmp_path: Path, store: str
) -> None:
	"""One empty lock file per session used stayed after ``clear()``; a held one stays."""
	db = tmp_path / "sessions.db"

	def session(sid: str) -> Any:
		if store == "sqlite":
			return SQLiteSession(sid, db)
		return SQLAlchemySession(sid, f"sqlite:///{db}")

	turns = db.with_name("sessions.db.turns")
	async with session("s").turn():
		pass
	async with session("t").turn():
		pass
	assert len(list(turns.iterdir())) == 2
	await session("s").clear()
	assert len(list(turns.iterdir())) == 1
	async with _held_elsewhere(session("t")):
		await session("t").clear()
		assert len(list(turns.iterdir())) == 1  # held: kept
	await session("t").clear()
	assert list(turns.iterdir()) == []
	await session("t").clear()  # nothing to remove


async def test_a_run_waiting_on_a_lock_file_that_clear_removes_takes_turns_with_the_next(
	tmp_path: Path,
) -> None:
	"""B opened the lock file and waits; A lets go and ``clear()`` removes the file at once; C
	makes a new file. B, holding the removed file, would run beside C: it checks and retakes."""
	from openmolt_core.sessions import _drop_turn_file, _turn_file

	db = tmp_path / "sessions.db"
	inside: list[str] = []
	overlaps: list[tuple[str, str]] = []
	a_in, dropped, c_in = anyio.Event(), anyio.Event(), anyio.Event()

	async def run(name: str, after: anyio.Event) -> None:
		await after.wait()
		async with SQLiteSession("s", db).turn():
			if inside:
				overlaps.append((inside[0], name))
			inside.append(name)
			if name == "c":
				c_in.set()
			await anyio.sleep(0.3)
			inside.remove(name)

	async def a() -> None:
		async with SQLiteSession("s", db).turn():
			a_in.set()
			await anyio.sleep(0.1)  # B has opened the file and polls
		_drop_turn_file(_turn_file(db, "s"))  # before B's next try
		dropped.set()

	async with anyio.create_task_group() as tg:
		tg.start_soon(a)
		tg.start_soon(run, "b", a_in)
		tg.start_soon(run, "c", dropped)
	assert c_in.is_set()
	assert overlaps == []


@asynccontextmanager
async def _held_elsewhere(session: Any) -> AsyncIterator[None]:
	"""``session``'s turn held by another task, as another process would hold it (this task's
	own turns are refused when taken again: it would wait for itself)."""
	taken, done = anyio.Event(), anyio.Event()

	async def hold() -> None:
		async with session.turn():
			taken.set()
			await done.wait()

	async with anyio.create_task_group() as tg:
		tg.start_soon(hold)
		await taken.wait()
		try:
			yield
		finally:
			done.set()


async def _appears(path: Path) -> None:
	"""Wait for the other process to say where it is (it makes a file)."""

	def wait() -> None:
		deadline = time.monotonic() + 30
		while not path.exists():
			assert time.monotonic() < deadline, f"{path.name} never appeared"
			time.sleep(0.02)

	await anyio.to_thread.run_sync(wait)


def stat_mode(path: Path) -> int:
	return path.stat().st_mode & 0o777


class _Slow:
	"""A model that says when it is called, waits, and answers; it keeps what it was shown."""

	name = "slow"

	def __init__(self, answer: str, pause: float = 0.0) -> None:
		self.answer = answer
		self.pause = pause
		self.shown: list[Any] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.shown.append(json.loads(request.messages[0].content).get("earlier"))
		await anyio.sleep(self.pause)
		text = json.dumps({"commands": [finish(self.answer)]})
		return ModelResponse(text=text, usage=Usage(10, 5, calls=1))


async def test_a_run_in_another_process_reads_the_turn_the_first_one_appends(
	tmp_path: Path,
) -> None:
	"""Process A's run of session ``s`` is under way when this process starts one: this one
	waits for A's turn, and its model is shown it."""
	db = tmp_path / "sessions.db"
	first = textwrap.dedent(
		f"""
		import anyio, json
		from openmolt import OpenMolt, SQLiteSession
		from openmolt_core.llm import ModelResponse, Usage

		class Slow:
			name = "slow"
			async def generate(self, request):
				open({str(tmp_path / "asked")!r}, "w").close()
				await anyio.sleep(1.0)
				text = json.dumps({{"commands": [{{"type": "finish", "status": "success",
					"output": "from A", "human_message": ""}}]}})
				return ModelResponse(text=text, usage=Usage(10, 5, calls=1))

		async def main():
			agent = OpenMolt(entry_points=False).create_agent(name="A", model=Slow())
			await agent.run("question A", session=SQLiteSession("s", {str(db)!r}))

		anyio.run(main)
		"""
	)
	proc = await anyio.open_process([sys.executable, "-c", first], stdout=None, stderr=None)
	try:
		await _appears(tmp_path / "asked")
		model = _Slow("from B")
		agent = OpenMolt(entry_points=False).create_agent(name="A", model=model)
		with anyio.fail_after(30):
			result = await agent.run("question B", session=SQLiteSession("s", db))
		assert result.status == "success"
	finally:
		with anyio.fail_after(30):
			assert await proc.wait() == 0
	(earlier,) = model.shown
	assert [e.get("content") for e in earlier] == ["question A", "from A"]
	items = await SQLiteSession("s", db).get_items()
	assert [i["content"] for i in items if i["role"] in ("user", "agent")] == [
		"question A",
		"from A",
		"question B",
		"from B",
	]


async def test_a_sqlalchemy_session_on_a_sqlite_file_takes_turns_too(tmp_path: Path) -> None:
	url = f"sqlite:///{tmp_path / 'sessions.db'}"
	one, two = SQLAlchemySession("s", url), SQLAlchemySession("s", url)
	async with _held_elsewhere(one):
		assert await _waits(two)
		assert not await _waits(SQLAlchemySession("t", url))
		await one.add_items([{"role": "user", "content": "written while held"}])
	assert not await _waits(two)
	assert [i["content"] for i in await two.get_items()] == ["written while held"]


class _Recorded(InMemorySession):
	"""A shared store that records when the loop takes and leaves its turn."""

	def __init__(self, session_id: str, log: list[str]) -> None:
		super().__init__(session_id)
		self.log = log

	@asynccontextmanager
	async def turn(self) -> AsyncIterator[None]:
		self.log.append("take")
		yield
		self.log.append("leave")

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		self.log.append("read")
		return await super().get_items(limit)

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		self.log.append("read")
		return await super().get_latest(limit)

	async def add_items(self, items: Any) -> None:
		self.log.append("append")
		await super().add_items(items)


async def test_a_run_holds_its_store_s_turn_from_reading_to_appending() -> None:
	log: list[str] = []

	class Model(_Slow):
		async def generate(self, request: ModelRequest) -> ModelResponse:
			log.append("model")
			return await super().generate(request)

	agent = OpenMolt(entry_points=False).create_agent(name="A", model=Model("hi"))
	session = _Recorded("s", log)
	assert isinstance(session, SharedSession)
	await agent.run("hello", session=session)
	assert log[0] == "take" and log[-1] == "leave"
	assert "read" in log and "model" in log and "append" in log
	assert log.index("read") < log.index("model") < log.index("append")


def _asking(om: OpenMolt, session: Any) -> Any:
	"""An agent whose tool asks another agent (of ``om``) in ``session``."""

	async def ask(question: str) -> str:
		"""Ask the other agent.

		Args:
			question: The question.
		"""
		inner = om.create_agent(name="B", model=ScriptedModel([finish("b")]))
		return str((await inner.run(question, session=session)).output)

	return ask


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("instance", ["same", "other"])
async def test_a_tool_that_runs_its_own_session_again_is_refused_not_left_waiting(
	tmp_path: Path, store: str, instance: str
) -> None:
	"""A tool of session ``s``'s run starts another run of ``s``: it would wait for its own
	caller's turn forever; it is refused (the tool's error), and the outer run goes on."""
	db = tmp_path / "sessions.db"

	def session() -> Any:
		return InMemorySession("s") if store == "memory" else SQLiteSession("s", db)

	outer_om = OpenMolt(entry_points=False)
	inner_om = outer_om if instance == "same" else OpenMolt(entry_points=False)
	if store == "memory":
		shared = InMemorySession("s")  # one store object (two would be two conversations)
		outer_session: Any = shared
		inner_session: Any = shared
	else:
		outer_session, inner_session = session(), session()
	model = ScriptedModel([call_tool("local.ask", question="q"), finish("a")])
	outer = outer_om.create_agent(name="A", model=model, tools=[_asking(inner_om, inner_session)])
	with anyio.fail_after(10):
		result = await outer.run("hi", session=outer_session)
	assert result.status == "success"
	(entry,) = json.loads(model.requests[1].messages[-1].content)["results"]
	# Through another instance too: the queues of a session are the process's, not an instance's.
	assert entry["ok"] is False and "already under way in this call chain" in entry["error"]


@pytest.mark.skipif(not POSTGRES_URL, reason="PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
async def test_postgres_turns_take_no_connection_of_the_sessions_pool() -> None:
	"""More runs of different sessions at once than the sessions' pool has connections: each
	holds its lock on a connection of its own, never idle in a transaction; and a lock
	connection that dies (a restart) does not replace the run's result with its error."""
	import uuid

	import sqlalchemy as sa

	assert POSTGRES_URL is not None
	tag = uuid.uuid4().hex
	engine = sa.create_engine(POSTGRES_URL, pool_size=2, max_overflow=0, pool_timeout=3)
	probe = sa.create_engine(POSTGRES_URL)
	agent = OpenMolt(entry_points=False).create_agent(name="A", model=_Slow("ok", pause=0.3))
	states: list[str] = []

	async def watch() -> None:
		await anyio.sleep(0.15)
		query = (
			"SELECT state FROM pg_stat_activity WHERE query LIKE '%pg_try_advisory_lock%' "
			"AND pid <> pg_backend_pid()"
		)
		with probe.connect() as conn:
			states.extend(r[0] for r in conn.execute(sa.text(query)))

	try:
		results: list[Any] = []

		async def one(i: int) -> None:
			session = SQLAlchemySession(f"c{i}-{tag}", engine=engine)
			results.append(await agent.run("hi", session=session))

		with anyio.fail_after(20):
			async with anyio.create_task_group() as tg:
				for i in range(5):
					tg.start_soon(one, i)
				tg.start_soon(watch)
		assert [r.status for r in results] == ["success"] * 5
		# Autocommit: a lock's connection is never "idle in transaction" (the cluster is shared
		# with other tests: a lock asked at that instant reads "active").
		assert states and set(states) <= {"idle", "active"}, states

		session = SQLAlchemySession(f"d-{tag}", engine=engine)
		# The connection that holds this session's lock, and no other test's: its key in pg_locks.
		digest = hashlib.sha256(b"turn:" + session.session_id.encode()).digest()[:8]
		key = int.from_bytes(digest, "big")
		kill = (
			"SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND "
			"classid::bigint = :high AND objid::bigint = :low AND objsubid = 1 AND granted"
		)
		async with session.turn():
			with probe.begin() as conn:
				killed = conn.execute(sa.text(kill), {"high": key >> 32, "low": key & 0xFFFFFFFF})
				assert [r[0] for r in killed] == [True]
		async with session.turn():  # the lock went with the connection
			pass
		for i in range(5):
			await SQLAlchemySession(f"c{i}-{tag}", engine=engine).clear()
	finally:
		engine.dispose()
		probe.dispose()


@pytest.mark.skipif(not POSTGRES_URL, reason="PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
async def test_postgres_sessions_take_turns_across_connections() -> None:
	"""Two engines (two processes' pools): one waits for the other's turn of the session; the
	holder still writes (its writes' lock is another key); a cancelled wait leaves nothing held."""
	import uuid

	import sqlalchemy as sa

	assert POSTGRES_URL is not None
	tag = uuid.uuid4().hex
	engines = [sa.create_engine(POSTGRES_URL), sa.create_engine(POSTGRES_URL)]
	try:
		one = SQLAlchemySession(f"s-{tag}", engine=engines[0])
		two = SQLAlchemySession(f"s-{tag}", engine=engines[1])
		async with _held_elsewhere(one):
			assert await _waits(two)
			assert not await _waits(SQLAlchemySession(f"t-{tag}", engine=engines[1]))
			with anyio.fail_after(10):
				await one.add_items([{"role": "user", "content": "held"}])
		with anyio.fail_after(10):
			async with two.turn():
				assert [i["content"] for i in await two.get_items()] == ["held"]
		await one.clear()
	finally:
		for engine in engines:
			engine.dispose()


@pytest.mark.skipif(not POSTGRES_URL, reason="PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP")
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the lapse is the server's: one is enough
async def test_a_postgres_turn_a_paused_process_holds_ends_with_its_lapse(tmp_path: Path) -> None:
	"""A process paused (SIGSTOP) while it holds a session's turn, alive but never continuing, held
	it forever: the session's lock connection is idle outside a transaction, which no timeout
	ended, so every later run of the session (a durable run another worker took over, too) waited
	for good. The holder now renews the turn, and PostgreSQL ends a session idle past the turn's
	lapse; a process that continues has its turn still while it is on time."""
	import signal
	import uuid

	import sqlalchemy as sa

	assert POSTGRES_URL is not None
	tag = uuid.uuid4().hex
	holder = textwrap.dedent(
		f"""
		import anyio, sqlalchemy as sa
		from openmolt_core import sessions
		from openmolt_core.sessions import SQLAlchemySession

		sessions._TURN_LAPSE = 2.0

		async def main():
			session = SQLAlchemySession("s-{tag}", engine=sa.create_engine({POSTGRES_URL!r}))
			async with session.turn():
				open({str(tmp_path / "held")!r}, "w").close()
				await anyio.sleep(60)

		anyio.run(main)
		"""
	)
	engine = sa.create_engine(POSTGRES_URL)
	proc = await anyio.open_process([sys.executable, "-c", holder], stdout=None, stderr=None)
	try:
		await _appears(tmp_path / "held")
		session = SQLAlchemySession(f"s-{tag}", engine=engine)
		assert await _waits(session, 3.0)  # beyond the lapse: a live holder keeps its turn
		proc.send_signal(signal.SIGSTOP)
		began = time.monotonic()
		with anyio.fail_after(20):  # before: forever
			async with session.turn():
				pass
		assert time.monotonic() - began < 15
	finally:
		proc.kill()
		await proc.wait()
		engine.dispose()
