"""The server's own SQLite files (A2A tasks, the replay guard) are 0600 in a 0700 folder."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openmolt_serve._rows import SqliteTasks
from openmolt_serve._seen import SqliteSeen
from openmolt_serve._sqlite import SqliteFile

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
	"""A permissive umask, as on many desktops: the files must not depend on it."""
	old = os.umask(0o002)
	try:
		yield
	finally:
		os.umask(old)


def mode(path: Path) -> int:
	return stat.S_IMODE(path.stat().st_mode)


def test_a_file_made_in_a_new_folder_is_private(tmp_path: Path) -> None:
	"""The A2A task file in a durable store's new folder: folder 0700, file and sidecars 0600."""
	folder = tmp_path / "files" / "more"
	store = SqliteFile(folder / "a2a-tasks.sqlite", "CREATE TABLE IF NOT EXISTS t (x TEXT);")
	with store.transaction() as db:
		db.execute("INSERT INTO t VALUES ('a caller asked for the payroll')")
	made = list(folder.iterdir())
	assert {p.name for p in made} >= {"a2a-tasks.sqlite", "a2a-tasks.sqlite-wal"}
	assert mode(folder) == 0o700 and mode(folder.parent) == 0o700
	assert {p.name: mode(p) for p in made} == {p.name: 0o600 for p in made}
	store.close()


def test_a_file_made_before_with_a_wider_mode_is_narrowed(tmp_path: Path) -> None:
	"""A replay guard file left 0664 by an earlier version is 0600 once the server opens it."""
	path = tmp_path / "webhook-seen.sqlite"
	path.touch()
	os.chmod(path, 0o664)
	seen = SqliteSeen(path, "hook:Helper")
	seen.add(["k"], None)
	assert seen.seen(["k"], 0.0)
	assert mode(path) == 0o600
	assert all(mode(p) == 0o600 for p in tmp_path.iterdir() if p.name.startswith(path.name))
	seen.close()


WORDS = "CANARY-deleted-words-of-a-person-"


def test_a_forgotten_a2a_task_leaves_no_words(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A served surface's rows (A2A tasks, AG-UI threads, chats' parked runs) share the run
	store's file: a task deleted, taken or pruned is erased, once the server closes its file."""
	connect = sqlite3.connect  # as on a SQLite built with its default: secure_delete off

	def plain(*args: Any, **kwargs: Any) -> sqlite3.Connection:
		conn = connect(*args, **kwargs)
		conn.execute("PRAGMA secure_delete = OFF")
		return conn

	monkeypatch.setattr(sqlite3, "connect", plain)
	path = tmp_path / "runs.db"
	rows = SqliteTasks(path, "a2a:Helper")
	rows.put("bob", "t1", (WORDS + "1" + "x" * 40).encode())
	rows.put("bob", "t2", (WORDS + "2" + "x" * 40).encode())
	rows.put("bob", "t3", b"kept-task-3" + b"x" * 40)
	rows.delete("bob", "t1")
	assert rows.take("bob", "t2", (WORDS + "2" + "x" * 40).encode())
	rows.close()
	found = path.read_bytes() + (
		Path(f"{path}-wal").read_bytes() if Path(f"{path}-wal").exists() else b""
	)
	assert WORDS.encode() not in found
	assert b"kept-task-3" in found
