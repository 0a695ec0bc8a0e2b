"""A store's tables are made on each database it is given, once per engine.

The stores of seen deliveries and of A2A tasks remembered the engines whose tables they had
made by ``id``: a new engine (another database) made where a freed one lived was taken as made,
and its first read failed on a missing table.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from openmolt_dbos import _tables
from openmolt_dbos._a2a_tasks import StoreTasks
from openmolt_dbos._seen import StoreSeen


def _remembered() -> int:
	return sum(len(made) for made in _tables._MADE.values())


@contextmanager
def _collect_only_new() -> Iterator[None]:
	"""Collect everything once, then keep what exists out of later collections (``gc.freeze``):
	a ``gc.collect()`` inside frees what the test made, as before, without walking the whole
	heap of the test process each time (30 full collections took seconds in a full run)."""
	gc.collect()
	gc.freeze()
	try:
		yield
	finally:
		gc.unfreeze()


def test_a_freed_engine_is_forgotten_so_no_new_one_is_taken_for_it(tmp_path: Path) -> None:
	"""Whatever address a new engine gets, no freed engine is remembered as made there: the
	stores remember engines themselves (weakly), not their ``id``."""
	gc.collect()
	before = _remembered()
	engine = sa.create_engine(f"sqlite:///{tmp_path / 'first.db'}")
	assert not StoreSeen(engine, scope="test").seen(["delivery-1"], now=0.0)
	assert StoreTasks(engine, scope="test").get("owner", "task-1") is None
	assert _remembered() == before + 2  # one engine, two stores' tables
	engine.dispose()
	del engine
	gc.collect()
	assert _remembered() == before
	other = sa.create_engine(f"sqlite:///{tmp_path / 'second.db'}")
	assert not StoreSeen(other, scope="test").seen(["delivery-1"], now=0.0)
	assert StoreTasks(other, scope="test").get("owner", "task-1") is None
	other.dispose()


def test_every_new_engine_gets_its_tables_even_at_a_freed_ones_address(tmp_path: Path) -> None:
	"""Databases one after the other, each engine freed before the next, until CPython reuses a
	freed engine's address (it did in about half the tries in one process, in none of 30 in
	another: the test above holds either way): each store finds its table."""
	ids: set[int] = set()
	with _collect_only_new():
		for n in range(30):
			engine = sa.create_engine(f"sqlite:///{tmp_path / f'{n}.db'}")
			reused = id(engine) in ids
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
