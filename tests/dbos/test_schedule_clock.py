"""Schedules' due times are judged by the store's clock, as the workers' leases and budgets are.

Each worker judged a due time by its own wall clock: a machine whose clock ran minutes ahead fired
its due times minutes early, one behind fired them late (and the shared cursor moved by whichever
fired first). The skew here is the process's (its wall clock, both ``time.time`` and the
scheduler's ``datetime.now``); the store's clock is the database's.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core import schedule as schedule_module
from openmolt_core.testing import ScriptedModel

pytestmark = pytest.mark.anyio

SKEW = 300.0  # five minutes


def _skewed(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
	"""This machine's wall clock is off by ``seconds``: ``time.time`` and ``datetime.now``."""
	real = time.time
	monkeypatch.setattr(time, "time", lambda: real() + seconds)

	class Skewed(datetime):
		@classmethod
		def now(cls, tz: Any = None) -> Any:
			return datetime.now(tz) + timedelta(seconds=seconds)

	monkeypatch.setattr(schedule_module, "datetime", Skewed)


async def test_a_worker_whose_clock_is_behind_judges_due_times_by_the_stores_clock(
	url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A worker five minutes behind reads the time its schedules are due by on the store's clock."""
	_skewed(monkeypatch, -SKEW)
	om = OpenMolt(entry_points=False, durability={"url": url, "heartbeat": 0.2, "lapse": 2.0})
	om.create_agent(name="Ticker", model=ScriptedModel([]))
	backend = om.durability
	assert backend is not None
	await backend.start()
	with anyio.fail_after(10):
		while abs(backend.engine.clock_offset()) < SKEW / 2:  # noqa: ASYNC110  # the first beat
			await anyio.sleep(0.05)
	judged = om.scheduler.clock.now()
	assert abs((judged - datetime.now(UTC)).total_seconds()) < 5, judged
	await om.aclose()
