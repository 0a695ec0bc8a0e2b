"""Which worker each taken-over run came from is kept in the store (SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlalchemy as sa

from openmolt_dbos import _taken
from openmolt_dbos._taken import TAKEN, record_taken, taken_from, was_taken_from
from openmolt_dbos._workers import make_engine


def test_a_takeover_is_read_back_by_any_engine_on_the_store(store: str) -> None:
	"""Another engine (another process, a restart) reads which worker each run was taken from."""
	first, second = make_engine(store), make_engine(store)
	try:
		record_taken(first, ["run-a", "run-b", "run-a"], "dead-1", "taker")
		assert taken_from(second, ["run-a", "run-b", "run-c"]) == {
			"run-a": "dead-1",
			"run-b": "dead-1",
		}
		record_taken(first, ["run-a"], "taker", "third")  # its taker died in turn
		assert taken_from(second, ["run-a"]) == {"run-a": "taker"}  # the latest takeover
		assert taken_from(second, []) == {}
		assert was_taken_from(second, "run-a", "dead-1") and was_taken_from(
			second, "run-a", "taker"
		)
		assert not was_taken_from(second, "run-a", "third")
	finally:
		first.dispose()
		second.dispose()


def test_a_runs_later_workflows_are_its_own_and_no_other_runs(store: str) -> None:
	"""A segment (``<id>+<steps>``) or a retry of one taken over is the run's; a run whose id
	starts the same (``run-1`` and ``run-10``) is another, and so is a ``%`` in an id."""
	engine = make_engine(store)
	try:
		record_taken(engine, ["run-1+4~1", "run-10", "run%+2"], "dead", "taker")
		assert was_taken_from(engine, "run-1", "dead")
		assert not was_taken_from(engine, "run-2", "dead")
		assert not was_taken_from(engine, "run", "dead")  # run%+2 is run%'s
		assert was_taken_from(engine, "run%", "dead")
	finally:
		engine.dispose()


def test_rows_older_than_a_day_are_dropped_at_the_next_takeover(store: str) -> None:
	"""A takeover's row is kept as long as a chat keeps its claim to follow the run, no longer."""
	engine = make_engine(store)
	try:
		record_taken(engine, ["old"], "dead-1", "taker")
		with engine.begin() as conn:
			conn.execute(sa.update(TAKEN).values(taken_at=TAKEN.c.taken_at - _taken.KEEP - 1))
		record_taken(engine, ["new"], "dead-2", "taker")
		assert taken_from(engine, ["old", "new"]) == {"new": "dead-2"}
	finally:
		engine.dispose()
