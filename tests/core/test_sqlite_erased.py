"""What a store deletes is erased from its SQLite file, not left in its free pages.

SQLite's own default keeps a deleted row's bytes in the file until the page is reused
(``secure_delete`` off); some builds (Debian's) turn it on, others (SQLite's own default, which
python.org's and many others' builds keep) do not. A cleared or pruned session, a forgotten A2A
task: a person's words, gone from every reader, were still in the file for anyone who reads its
bytes (a copied backup, a disk image). Every store sets it on its connections, whatever the
build: these tests run on a build whose default is off.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openmolt_core._history import SqliteHistory
from openmolt_core.runstore import RunStore
from openmolt_core.sessions import SQLiteSession

pytestmark = pytest.mark.anyio

WORDS = "CANARY-deleted-words-of-a-person-"


@pytest.fixture(autouse=True)
def build_without_secure_delete(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
	"""Every connection starts as on a SQLite built with its default (``secure_delete`` off)."""
	connect = sqlite3.connect

	def plain(*args: Any, **kwargs: Any) -> sqlite3.Connection:
		conn = connect(*args, **kwargs)
		conn.execute("PRAGMA secure_delete = OFF")
		return conn

	monkeypatch.setattr(sqlite3, "connect", plain)
	yield


def left(path: Path, text: str) -> bool:
	"""Whether ``text`` is still in the database file (or its ``-wal``), bytes read as they are."""
	found = b""
	for name in (path, Path(f"{path}-wal"), Path(f"{path}-journal")):
		if name.is_file():
			found += name.read_bytes()
	return text.encode() in found


def turn(n: int, words: str) -> list[dict[str, Any]]:
	return [
		{"role": "user", "content": f"{words}{n}" + "x" * 40, "run_id": f"r{n}"},
		{"role": "agent", "content": "ok", "run_id": f"r{n}", "status": "success"},
	]


async def test_a_cleared_session_leaves_no_words_in_the_file(tmp_path: Path) -> None:
	"""`clear`: the session's items are gone from the file's bytes, the other sessions kept."""
	path = tmp_path / "sessions.db"
	alice, bob = SQLiteSession("alice", path), SQLiteSession("bob", path)
	await alice.add_items(turn(1, WORDS))
	await bob.add_items(turn(2, "kept-words-of-bob-"))
	await alice.clear()
	assert await alice.get_items() == []
	assert not left(path, WORDS)
	assert left(path, "kept-words-of-bob-2")


async def test_a_pruned_session_leaves_no_pruned_turn_in_the_file(tmp_path: Path) -> None:
	"""`prune`: the turns the latest summary covers are gone from the file's bytes."""
	path = tmp_path / "sessions.db"
	session = SQLiteSession("alice", path)
	await session.add_items(
		[*turn(1, WORDS), {"role": "summary", "content": "asked once", "through": 2, "notes": []}]
	)
	await session.add_items(turn(2, "kept-latest-turn-"))
	assert await session.prune() == 2
	assert not left(path, WORDS)
	assert left(path, "kept-latest-turn-2")


async def test_an_idle_session_deleted_by_prune_store_leaves_no_words(tmp_path: Path) -> None:
	"""``prune_store(idle_days=0)``: a session idle past the limit is deleted, bytes and all."""
	path = tmp_path / "sessions.db"
	await SQLiteSession("alice", path).add_items(turn(1, WORDS))
	pruned = await SQLiteSession.prune_store(path, idle_days=0)
	assert pruned.deleted == ("alice",)
	assert not left(path, WORDS)


async def test_a_popped_item_leaves_no_words(tmp_path: Path) -> None:
	"""`pop_item` (a turn taken back): its words leave the file too."""
	path = tmp_path / "sessions.db"
	session = SQLiteSession("alice", path)
	await session.add_items([{"role": "user", "content": WORDS + "x" * 40, "run_id": "r1"}])
	assert (await session.pop_item() or {}).get("content", "").startswith(WORDS)
	assert not left(path, WORDS)


@pytest.mark.parametrize("store", ["sessions", "run store", "schedule history"])
def test_every_core_sqlite_store_erases_what_it_deletes(tmp_path: Path, store: str) -> None:
	"""Each store of the core that keeps a SQLite file opens its connections erasing (the
	sources, enumerated: a store added later without it fails here)."""
	path = tmp_path / "store.db"
	opened = {
		"sessions": lambda: SQLiteSession("alice", path)._connect(),
		"run store": lambda: RunStore(path)._connect(),
		"schedule history": lambda: SqliteHistory(path)._connect(),
	}[store]
	conn = opened()
	try:
		assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
	finally:
		conn.close()


async def test_a_sqlalchemy_session_on_sqlite_erases_what_it_deletes(tmp_path: Path) -> None:
	"""`SQLAlchemySession` on a SQLite file, with the application's engine whose connections
	start with ``secure_delete`` off: a cleared session leaves the file's bytes too."""
	sa = pytest.importorskip("sqlalchemy")
	from openmolt_core.sessions import SQLAlchemySession

	path = tmp_path / "sessions.db"
	engine = sa.create_engine(f"sqlite:///{path}")

	@sa.event.listens_for(engine, "connect")
	def plain(dbapi: Any, record: Any) -> None:
		dbapi.execute("PRAGMA secure_delete = OFF")

	alice = SQLAlchemySession("alice", engine=engine)
	await alice.add_items(turn(1, WORDS))
	await SQLAlchemySession("bob", engine=engine).add_items(turn(2, "kept-words-of-bob-"))
	await alice.clear()
	assert await alice.get_items() == []
	engine.dispose()  # its connections closed: the file checkpointed
	assert not left(path, WORDS)
	assert left(path, "kept-words-of-bob-2")


async def test_a_pruned_run_leaves_no_words_while_the_store_stays_open(tmp_path: Path) -> None:
	"""`RunStore.prune` with the store's connection still open: the pruned run's input is in
	neither the file nor its write-ahead log (whose older frames held the row as written)."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, finish

	path = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=path)
	agent = om.create_agent(name="A", model=ScriptedModel([finish(answer="ok")]))
	await agent.run(WORDS + "in-a-run")
	assert om.run_store is not None
	assert left(path, WORDS)
	assert await om.run_store.prune("9999-01-01") == 1
	assert not left(path, WORDS)
	assert await om.run_store.runs() == []
	await om.aclose()
