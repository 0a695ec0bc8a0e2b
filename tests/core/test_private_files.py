"""Every store keeps its files 0600 in folders 0700, whatever the umask, also files made before."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core._history import RunRecord, SqliteHistory
from openmolt_core._support.private import private_dir, private_file
from openmolt_core.approvals import SQLiteLedger
from openmolt_core.files import FileStore
from openmolt_core.runstore import RunStore
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
	"""A permissive umask, as on many desktops: the stores must not depend on it."""
	old = os.umask(0o002)
	try:
		yield
	finally:
		os.umask(old)


def mode(path: Path) -> int:
	return stat.S_IMODE(path.stat().st_mode)


def assert_private(folder: Path) -> None:
	"""Every file below the folder is 0600 and every folder 0700."""
	assert mode(folder) == 0o700, folder
	for root, dirs, files in os.walk(folder):
		for name in dirs:
			assert mode(Path(root) / name) == 0o700, name
		for name in files:
			assert mode(Path(root) / name) == 0o600, name


async def test_the_run_store_makes_its_folders_0700_and_its_files_0600(tmp_path: Path) -> None:
	"""runs.db, its WAL files and the folders made for it are the user's only."""
	state = tmp_path / "state" / "openmolt"
	om = OpenMolt(entry_points=False, run_store=state / "runs.db")
	agent = om.create_agent(name="A", model=ScriptedModel([finish(ok=True)]))
	await agent.run("go")
	await om.aclose()
	assert (state / "runs.db").exists()
	assert mode(tmp_path / "state") == 0o700
	assert_private(state)


async def test_a_store_made_before_with_a_wide_mode_is_narrowed(tmp_path: Path) -> None:
	"""A runs.db and a history made 0644 by an older version become 0600 when opened."""
	for name in ("runs.db", "history.db", "ledger.db"):
		sqlite3.connect(tmp_path / name).close()
		os.chmod(tmp_path / name, 0o644)
	store = RunStore(tmp_path / "runs.db")
	await store.runs()
	history = SqliteHistory(tmp_path / "history.db")
	now = datetime.now(UTC)
	await history.add(RunRecord(schedule_id="s", agent="a", due=now, started=now))
	await SQLiteLedger(tmp_path / "ledger.db").claim("call-1", "approve")
	for name in ("runs.db", "history.db", "ledger.db"):
		assert mode(tmp_path / name) == 0o600, name


async def test_the_history_and_the_ledger_make_private_files(tmp_path: Path) -> None:
	"""The schedules' history and the approval ledger: new folders 0700, files 0600."""
	history = SqliteHistory(tmp_path / "h" / "history.db")
	now = datetime.now(UTC)
	await history.add(RunRecord(schedule_id="s", agent="a", due=now, started=now))
	await SQLiteLedger(tmp_path / "l" / "ledger.db").claim("call-1", "approve")
	assert_private(tmp_path / "h")
	assert_private(tmp_path / "l")


async def test_the_file_store_keeps_its_files_private(tmp_path: Path) -> None:
	"""Saved tool results (and their metadata) are 0600 in a 0700 folder, given or temporary."""
	for store in (FileStore(tmp_path / "files" / "deep"), FileStore()):
		await store.save(b"secret bytes", media_type="text/plain", name="a.txt")
		root = store._dir()
		assert_private(root)
		store.close()


def test_the_default_state_folder_is_narrowed_when_the_cli_records_runs(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""~/.local/state/openmolt made 0755 earlier becomes 0700 when `openmolt` records runs."""
	from openmolt_core.cli._ui import record_runs

	monkeypatch.delenv("OPENMOLT_RUN_STORE", raising=False)
	monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
	(tmp_path / "xdg" / "openmolt").mkdir(parents=True)
	os.chmod(tmp_path / "xdg" / "openmolt", 0o755)
	om = OpenMolt(entry_points=False)
	record_runs(om)
	assert om.run_store is not None
	assert mode(tmp_path / "xdg" / "openmolt") == 0o700


def test_the_default_state_folder_is_narrowed_by_openmolt_logs_too(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A 0755 folder with a 0644 runs.db, -wal and -shm is 0700/0600 once `openmolt logs` reads it.

	Only a run narrowed the folder (`record_runs`): `openmolt logs`, the viewer and the other
	readers of the default store left an older version's 0755 folder as it was.
	"""
	from openmolt_core.cli import main

	monkeypatch.delenv("OPENMOLT_RUN_STORE", raising=False)
	monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
	folder = tmp_path / "xdg" / "openmolt"
	folder.mkdir(parents=True)
	sqlite3.connect(folder / "runs.db").close()
	for name in ("runs.db", "runs.db-wal", "runs.db-shm"):
		(folder / name).touch()
		os.chmod(folder / name, 0o644)
	os.chmod(folder, 0o755)
	assert main(["logs"]) == 0
	assert mode(folder) == 0o700
	assert_private(folder)


def test_a_folder_the_user_named_keeps_its_mode(tmp_path: Path) -> None:
	"""run_store='./runs.db' does not narrow the working folder; only folders made are 0700."""
	os.chmod(tmp_path, 0o755)
	private_file(tmp_path / "runs.db")
	assert mode(tmp_path) == 0o755 and mode(tmp_path / "runs.db") == 0o600
	private_dir(tmp_path / "a" / "b")
	assert mode(tmp_path / "a") == 0o700 and mode(tmp_path / "a" / "b") == 0o700


def test_making_an_open_store_private_keeps_sqlites_locks(tmp_path) -> None:
	"""private_file on a database this process holds open must not drop SQLite's POSIX locks
	(closing any descriptor of a file drops them all): another process stays locked out."""
	import sqlite3
	import subprocess
	import sys

	from openmolt_core._support.private import private_file

	path = tmp_path / "store.sqlite"
	conn = sqlite3.connect(path, isolation_level=None, timeout=0.1)
	conn.execute("CREATE TABLE t (x)")
	conn.execute("BEGIN EXCLUSIVE")  # this process holds the write lock
	conn.execute("INSERT INTO t VALUES (1)")
	private_file(path)  # as a second store of the same file in this process would
	other = (
		"import sqlite3, sys\n"
		"c = sqlite3.connect(sys.argv[1], timeout=0.2)\n"
		"try:\n"
		"    c.execute('INSERT INTO t VALUES (2)'); c.commit(); print('wrote')\n"
		"except sqlite3.OperationalError as e:\n"
		"    print('locked' if 'locked' in str(e) else e)\n"
	)
	done = subprocess.run(
		[sys.executable, "-c", other, str(path)], capture_output=True, text=True, timeout=60
	)
	conn.execute("COMMIT")
	conn.close()
	assert done.stdout.strip() == "locked", done.stdout + done.stderr
