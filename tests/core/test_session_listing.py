"""Listing a sessions store (`list_store`): the latest active first, read without writing."""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openmolt import SQLiteSession
from openmolt_core.errors import ConfigurationError
from openmolt_core.sessions import SQLAlchemySession, StoredSession

pytestmark = pytest.mark.anyio

POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
KINDS = ["sqlite", "sqlalchemy", "postgres"]


@pytest.fixture
def own_database() -> Iterator[str | None]:
	"""A PostgreSQL database of this test's own (a listing reads every session in it)."""
	if not POSTGRES_URL:
		yield None
		return
	psycopg = pytest.importorskip("psycopg")
	name = f"om_list_{uuid.uuid4().hex[:12]}"
	with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
		conn.execute(f'CREATE DATABASE "{name}"')
	try:
		yield f"{POSTGRES_URL.rpartition('/')[0]}/{name}"
	finally:
		with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
			conn.execute(
				"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
			)
			conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def where(kind: str, tmp_path: Path, database: str | None) -> str:
	"""The store of a kind: a SQLite file, a sqlite:// URL, or this test's PostgreSQL database."""
	if kind == "sqlite":
		return str(tmp_path / "sessions.db")
	pytest.importorskip("sqlalchemy")
	if kind == "postgres":
		if database is None:
			pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
		return database
	return f"sqlite:///{tmp_path / 'sa.db'}"


def session_of(kind: str, store: str, session_id: str) -> Any:
	return (
		SQLiteSession(session_id, store)
		if kind == "sqlite"
		else SQLAlchemySession(session_id, store)
	)


async def listing(
	kind: str, store: str, limit: int | None = None, **kw: Any
) -> list[StoredSession]:
	if kind == "sqlite":
		return await SQLiteSession.list_store(store, limit=limit, **kw)
	return await SQLAlchemySession.list_store(store, limit=limit, **kw)


def names(folder: Path) -> list[str]:
	"""The names of the files in a folder (what a read must not have made)."""
	return sorted(p.name for p in folder.iterdir())


def summarised(turns: int) -> list[dict[str, Any]]:
	"""``turns`` turns, then a summary (with notes) of all but the latest two."""
	items: list[dict[str, Any]] = []
	for n in range(turns):
		items.append({"role": "user", "content": f"q{n}", "run_id": f"r{n}"})
		items.append({"role": "agent", "content": f"a{n}", "status": "success", "run_id": f"r{n}"})
	items.append(
		{"role": "summary", "content": "s", "through": len(items) - 4, "notes": [{"content": "n"}]}
	)
	return items


@pytest.mark.parametrize("kind", KINDS)
async def test_the_listing_is_the_latest_active_first_with_kept_and_pruned_counts(
	kind: str, tmp_path: Path, own_database: str | None
) -> None:
	"""Sessions come newest activity first, each with its items kept and pruned and its last
	write's time; ``limit`` keeps the first ones, ``session_ids`` only those (one id alone is
	refused: it is no list)."""
	store = where(kind, tmp_path, own_database)
	began = time.time()
	for name, items in (("ada", summarised(10)), ("bob", summarised(1)), ("cy\u202e", [])):
		await session_of(kind, store, name).add_items(items or summarised(2))
	ada = session_of(kind, store, "ada")
	assert await ada.prune() == 16
	await ada.add_items([{"role": "user", "content": "again", "run_id": "r99"}])
	found = await listing(kind, store)
	assert [(s.session_id, s.items, s.pruned) for s in found] == [
		("ada", 6, 16),
		("cy\u202e", 5, 0),
		("bob", 3, 0),
	]
	assert all(began - 1 <= s.last_active <= time.time() + 1 for s in found)
	assert found[0].last_active >= found[1].last_active >= found[2].last_active
	assert [s.session_id for s in await listing(kind, store, limit=2)] == ["ada", "cy\u202e"]
	only = await listing(kind, store, session_ids=["bob", "nobody", "ada"])
	assert [(s.session_id, s.items) for s in only] == [("ada", 6), ("bob", 3)]
	assert await listing(kind, store, session_ids=[]) == []
	with pytest.raises(ConfigurationError, match="session_ids: expected a list"):
		await listing(kind, store, session_ids="ada")


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "3"])
async def test_a_limit_that_is_no_count_of_sessions_is_refused(limit: Any, tmp_path: Path) -> None:
	"""``limit=0`` (or a fraction, a bool, text) is refused naming ``limit``, before any read."""
	with pytest.raises(ConfigurationError, match="limit: expected a whole number"):
		await SQLiteSession.list_store(tmp_path / "none.db", limit=limit)
	assert names(tmp_path) == []


async def test_a_missing_or_foreign_sqlite_file_is_listed_empty_and_left_as_it_was(
	tmp_path: Path,
) -> None:
	"""No file, table or WAL mode is made by listing or reading a store that holds no sessions:
	a missing file, another program's SQLite file (its journal mode kept), a sqlite:// URL."""
	missing = tmp_path / "missing.db"
	assert await SQLiteSession.list_store(missing) == []
	assert await SQLiteSession("ada", missing).get_items() == []
	foreign = tmp_path / "foreign.db"
	with sqlite3.connect(foreign) as conn:
		conn.execute("CREATE TABLE notes (body TEXT)")
	conn.close()
	assert await SQLiteSession.list_store(foreign) == []
	assert await SQLiteSession("ada", foreign).get_items() == []
	pytest.importorskip("sqlalchemy")
	url = f"sqlite:///{tmp_path / 'missing-sa.db'}"
	assert await SQLAlchemySession.list_store(url) == []
	assert await SQLAlchemySession("ada", url).get_items() == []
	report = await SQLAlchemySession.prune_store(url, dry_run=True)  # made an empty file before
	assert report.sessions == 0
	assert await SQLAlchemySession.list_store(f"sqlite:///{foreign}") == []
	assert await SQLAlchemySession("ada", f"sqlite:///{foreign}").get_items() == []
	assert names(tmp_path) == ["foreign.db"]
	with sqlite3.connect(foreign) as conn:
		tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
		mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
	conn.close()
	assert (tables, mode) == (["notes"], "delete")


async def test_a_postgres_database_without_sessions_gets_no_table(own_database: str | None) -> None:
	"""Listing, and reading a session of, a database without the sessions' table creates none."""
	if own_database is None:
		pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
	sa = pytest.importorskip("sqlalchemy")
	assert await SQLAlchemySession.list_store(own_database) == []
	assert await SQLAlchemySession("ada", own_database).get_items() == []
	engine = sa.create_engine(own_database.replace("postgresql://", "postgresql+psycopg://", 1))
	try:
		assert sa.inspect(engine).get_table_names() == []
	finally:
		engine.dispose()


async def test_a_file_from_before_pruning_counted_lists_nothing_pruned(tmp_path: Path) -> None:
	"""A store without the table of pruned counts lists its sessions with none pruned, and gets
	no such table from the listing."""
	path = tmp_path / "old.db"
	await SQLiteSession("ada", path).add_items(summarised(1))
	with sqlite3.connect(path) as conn:
		conn.execute("DROP TABLE session_pruned")
	conn.close()
	[found] = await SQLiteSession.list_store(path)
	assert (found.session_id, found.items, found.pruned) == ("ada", 3, 0)
	with sqlite3.connect(path) as conn:
		names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
	conn.close()
	assert "session_pruned" not in names
