"""Leases and clocks: a worker's lease is judged by the store's clock, never by a worker's own.

Each worker wrote its beat with its own wall clock and judged the others' beats against its own
wall clock too, so a worker whose clock ran ahead took live workers over (their runs then ran
in two places), one whose clock ran behind was taken over while alive, and one behind could not
see a dead worker's lease end. The skew here is the process's: ``time.time`` of the module is
moved, as a machine with a wrong clock would have it; the store's clock is the database's.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from openmolt_dbos import _workers
from openmolt_dbos._workers import Heartbeat, list_workers

SKEW = 300.0  # five minutes
LAPSE = 2.0


def _worker(engine: Any, executor_id: str) -> Heartbeat:
	heartbeat = Heartbeat(
		engine,
		executor_id=executor_id,
		app_version="v1",
		heartbeat=0.1,
		lapse=LAPSE,
		recover=lambda dead: None,
	)
	heartbeat.claim()
	return heartbeat


def _skewed(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
	"""This process's wall clock is off by ``seconds`` (the monotonic clock is not)."""
	real = time.time
	clock = SimpleNamespace(
		time=lambda: real() + seconds,
		monotonic=time.monotonic,
		clock_gettime=time.clock_gettime,
		sleep=time.sleep,
	)
	monkeypatch.setattr(_workers, "time", clock)


def _elsewhere(engine: Any) -> None:
	"""The workers run on another machine (no process id of theirs to look up here)."""
	with engine.begin() as conn:
		conn.execute(_workers.WORKERS.update().values(host="elsewhere"))


def _state(engine: Any, executor_id: str) -> str:
	return str(next(r["state"] for r in list_workers(engine) if r["executor_id"] == executor_id))


def test_a_worker_whose_clock_runs_ahead_takes_no_live_worker_over(
	tables: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""B's clock is 5 min ahead: A, which beat a moment ago, is not taken for dead by B."""
	a = _worker(tables, "a")
	b = _worker(tables, "b")
	a.beat()
	_skewed(monkeypatch, SKEW)
	assert b.take_over() == []
	assert _state(tables, "a") == "live"
	# Nor does it take A's id for a new process of its own.
	_elsewhere(tables)
	again = Heartbeat(
		tables, executor_id="a", app_version="v1", heartbeat=0.1, lapse=LAPSE, recover=print
	)
	assert not again._try_claim()


def test_a_worker_whose_clock_runs_behind_is_not_taken_over_while_it_beats(
	tables: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A's clock is 5 min behind: its beats still count as beats, and B takes nothing over."""
	b = _worker(tables, "b")
	with monkeypatch.context() as patch:
		_skewed(patch, -SKEW)
		a = _worker(tables, "a")
		a.beat()
	assert b.take_over() == []
	assert _state(tables, "a") == "live"
	# Nor does a second process under A's id take it while A beats.
	_elsewhere(tables)
	with monkeypatch.context() as patch:
		_skewed(patch, SKEW)
		again = Heartbeat(
			tables,
			executor_id="a",
			app_version="v1",
			heartbeat=0.1,
			lapse=LAPSE,
			recover=lambda dead: None,
		)
		assert not again._try_claim()


def test_a_worker_whose_clock_runs_behind_still_takes_a_dead_worker_over(
	tables: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""B's clock is 5 min behind: A, silent for longer than the lapse, is taken over by B."""
	a = _worker(tables, "a")
	b = _worker(tables, "b")
	a.beat()
	time.sleep(LAPSE + 0.3)  # A beats no more
	b.beat()
	_skewed(monkeypatch, -SKEW)
	assert b.take_over() == ["a"]
	assert _state(tables, "a") == "taken"


def test_a_worker_times_its_own_lease_by_a_clock_that_counts_a_suspend() -> None:
	"""On Linux the lease clock is CLOCK_BOOTTIME: a laptop asleep past its lease finds it ended."""
	import sys

	if not sys.platform.startswith("linux"):
		pytest.skip("Linux's clocks")
	assert _workers._SUSPEND_AWARE == time.CLOCK_BOOTTIME
	assert abs(_workers._lease_clock() - time.clock_gettime(time.CLOCK_BOOTTIME)) < 1


def test_a_beat_measures_how_far_the_store_clock_is_from_the_workers(
	tables: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A worker 5 min ahead reads an offset of about -5 min at its beat; a right one about 0."""
	a = _worker(tables, "a")
	a.beat()
	assert abs(a.offset) < 1.0
	_skewed(monkeypatch, SKEW)
	a.beat()
	assert abs(a.offset + SKEW) < 1.0


def test_an_execution_records_its_offset_only_when_another_is_in_effect(tables: Any) -> None:
	"""Rows say from which step which offset holds; a right clock after none writes nothing, and a
	dead execution's row past the journal is replaced by the one that writes those steps."""
	import sqlalchemy as sa

	from openmolt_dbos._workers import CLOCKS, execution_clock

	def rows() -> list[tuple[int, float]]:
		with tables.connect() as conn:
			found = conn.execute(
				sa.select(CLOCKS.c.from_step, CLOCKS.c.offset).order_by("from_step")
			)
			return [(int(r[0]), float(r[1])) for r in found]

	assert execution_clock(tables, "w", 0, 0.0) == [] and rows() == []
	assert execution_clock(tables, "w", 0, -SKEW) == [] and rows() == [(0, -SKEW)]
	assert execution_clock(tables, "w", 3, -SKEW) == [(0, -SKEW)] and rows() == [(0, -SKEW)]
	assert execution_clock(tables, "w", 5, 0.0) == [(0, -SKEW)]
	assert rows() == [(0, -SKEW), (5, 0.0)]
	assert execution_clock(tables, "w", 2, 0.0) == [(0, -SKEW)]  # steps 2+ are this one's
	assert rows() == [(0, -SKEW), (2, 0.0)]
