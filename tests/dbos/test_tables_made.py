"""A store's tables are made on each database it is given, once per engine.

The stores of seen deliveries and of A2A tasks remembered the engines whose tables they had
made by ``id``: a new engine (another database) made where a freed one lived was taken as made,
and its first read failed on a missing table.
"""

from __future__ import annotations

import gc
from pathlib import Path

import sqlalchemy as sa

from openmolt_dbos._a2a_tasks import StoreTasks
from openmolt_dbos._seen import StoreSeen


def test_every_new_engine_gets_its_tables_even_at_a_freed_ones_address(tmp_path: Path) -> None:
	"""Databases one after the other, each engine freed before the next, until CPython reused a
	freed engine's address (it did in about half the tries): each store finds its table."""
	ids: set[int] = set()
	reused = 0
	for n in range(30):
		engine = sa.create_engine(f"sqlite:///{tmp_path / f'{n}.db'}")
		reused += id(engine) in ids
		ids.add(id(engine))
		seen = StoreSeen(engine, scope="test")
		assert not seen.seen(["delivery-1"], now=0.0)
		tasks = StoreTasks(engine, scope="test")
		assert tasks.get("owner", "task-1") is None
		engine.dispose()
		del engine, seen, tasks
		if reused:
			break
		gc.collect()
	assert reused  # the case this test is about happened
