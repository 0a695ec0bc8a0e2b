"""The durable store's task rows prune what waits last, on SQLite and PostgreSQL.

As `tests/serve/test_serve_rows_waiting_pruned_last.py` for the SQLite file: many owners'
finished tasks pushed out bob's waiting one (the rows had no state column). A table an older
version made gets the column.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from _harness import STORES, make_store

from openmolt_dbos._a2a_tasks import StoreTasks


@pytest.fixture(params=STORES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
	from openmolt_dbos._workers import make_engine

	stores = make_store(request.param, tmp_path)
	made = make_engine(next(stores))
	yield made
	made.dispose()
	for _ in stores:
		pass


def test_many_owners_finished_tasks_never_push_out_a_waiting_one(engine: sa.Engine) -> None:
	rows = StoreTasks(engine, "a2a:Helper")
	rows.put("bob", "b1", b"bob waits", waits=True)
	for n in range(10):
		rows.put(f"id{n}", f"t{n}", b"done")
	rows.prune(3)
	assert rows.get("bob", "b1") == b"bob waits"
	assert rows.get("id9", "t9") == b"done" and rows.get("id0", "t0") is None


def test_an_added_mark_is_held_and_pruned_last(engine: sa.Engine) -> None:
	rows = StoreTasks(engine, "chat:telegram:Helper")
	assert rows.add("", "going:c1", b"lease")
	for n in range(5):
		rows.put(f"id{n}", f"t{n}", b"done")
	rows.prune(2)
	assert rows.get("", "going:c1") == b"lease"


def test_a_table_made_before_the_column_gets_it(engine: sa.Engine) -> None:
	with engine.begin() as conn:
		conn.execute(
			sa.text(
				"CREATE TABLE openmolt_a2a_tasks (scope TEXT NOT NULL, owner TEXT NOT NULL,"
				" task_id TEXT NOT NULL, task BYTEA NOT NULL, updated FLOAT NOT NULL,"
				" PRIMARY KEY (scope, owner, task_id))".replace(
					"BYTEA", "BYTEA" if engine.dialect.name == "postgresql" else "BLOB"
				)
			)
		)
	rows = StoreTasks(engine, "a2a:Helper")
	rows.put("bob", "b1", b"bob waits", waits=True)
	rows.put("eve", "e1", b"done")
	rows.prune(1)
	assert rows.get("bob", "b1") == b"bob waits" and rows.get("eve", "e1") is None
