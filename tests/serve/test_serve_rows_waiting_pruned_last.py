"""The shared rows' pruning keeps what waits: a task or park waiting for its answer goes last.

`TaskRows.prune` kept every owner's newest first and knew nothing of a row's state (the rows had
no such column): many identities, each with one finished task, pushed out bob's task waiting
for his answer (``input-required``), the oldest row of an owner holding one. In memory the
A2A store spared a waiting task already (`recent`'s ``waits``). Now a row says whether it waits
(``put(..., waits=True)``; a chat's "being handled" mark too), and pruning drops what waits for
nothing first, fairly by owner; what waits goes only when everything kept waits.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from openmolt_serve._rows import SqliteTasks


def test_many_owners_finished_tasks_never_push_out_a_waiting_one(tmp_path: Path) -> None:
	rows = SqliteTasks(tmp_path / "rows.db", "a2a:Helper")
	rows.put("bob", "b1", b"bob waits", waits=True)
	for n in range(10):
		rows.put(f"id{n}", f"t{n}", b"done")
	rows.prune(3)
	assert rows.get("bob", "b1") == b"bob waits"
	kept = [rows.get(f"id{n}", f"t{n}") for n in range(10)]
	assert sum(k is not None for k in kept) == 2 and kept[9] == b"done"  # the newest stay
	rows.close()


def test_when_all_wait_the_owner_holding_the_most_gives_up_its_oldest(tmp_path: Path) -> None:
	rows = SqliteTasks(tmp_path / "rows.db", "a2a:Helper")
	rows.put("bob", "b1", b"bob's", waits=True)
	for n in range(5):
		rows.put("mallory", f"m{n}", b"hers", waits=True)
	rows.put("eve", "e1", b"done")
	rows.prune(3)
	assert rows.get("bob", "b1") is not None and rows.get("eve", "e1") is None
	assert rows.newest("mallory", 10) == [b"hers", b"hers"]
	rows.close()


def test_a_row_saved_again_says_whether_it_waits_now(tmp_path: Path) -> None:
	rows = SqliteTasks(tmp_path / "rows.db", "a2a:Helper")
	rows.put("bob", "b1", b"asks", waits=True)
	rows.put("bob", "b1", b"answered")  # it ended: it waits no more
	for n in range(3):
		rows.put(f"id{n}", f"t{n}", b"done", waits=True)
	rows.prune(3)
	assert rows.get("bob", "b1") is None
	rows.close()


def test_a_file_made_before_the_column_is_read_and_pruned(tmp_path: Path) -> None:
	"""An older file's table (no ``waits``) gets the column: its rows wait for nothing known."""
	file = tmp_path / "rows.db"
	old = sqlite3.connect(file)
	old.executescript(
		"CREATE TABLE openmolt_a2a_tasks (scope TEXT NOT NULL, owner TEXT NOT NULL,"
		" task_id TEXT NOT NULL, task BLOB NOT NULL, updated REAL NOT NULL,"
		" PRIMARY KEY (scope, owner, task_id));"
		"INSERT INTO openmolt_a2a_tasks VALUES ('a2a:Helper', 'eve', 'e1', x'00', 1.0);"
	)
	old.commit()
	old.close()
	rows = SqliteTasks(file, "a2a:Helper")
	rows.put("bob", "b1", b"bob waits", waits=True)
	rows.prune(1)
	assert rows.get("bob", "b1") == b"bob waits" and rows.get("eve", "e1") is None
	rows.close()


@pytest.mark.anyio
async def test_the_a2a_store_says_a_task_waits(tmp_path: Path) -> None:
	"""The A2A task store marks a task that waits for its caller (``input-required``): many
	callers' finished tasks, past the bound, leave it kept."""
	from a2a.server.context import ServerCallContext
	from a2a.types import Task, TaskState, TaskStatus

	from openmolt_serve._a2a_store import A2ATaskStore
	from openmolt_serve.a2a import Caller

	store = A2ATaskStore(max_tasks=3, path=tmp_path / "rows.db", scope="a2a:Helper")
	waiting = TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED)
	done = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
	bob = ServerCallContext(user=Caller("bob"))
	await store.save(Task(id="b1", context_id="c", status=waiting), bob)
	for n in range(250):
		await store.save(
			Task(id=f"t{n}", context_id="c", status=done), ServerCallContext(user=Caller(f"id{n}"))
		)
	assert await store.get("b1", bob) is not None
	assert store.rows is not None
	store.rows.close()
