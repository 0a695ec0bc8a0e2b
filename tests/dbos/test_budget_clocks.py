"""A run's time budget is judged by one clock, the store's, whichever worker's clock is off.

The budget's deadline was written by one worker's wall clock and read by another's: a worker whose
clock ran minutes ahead ended a recovered run at once, one whose clock ran behind let it run
minutes past its budget. The skew here is the process's own (``time.time`` is moved for a phase,
as a machine with a wrong clock would have it); the store's clock is the database's. Each phase is
a process of its own (its own event loop and engine), as in test_cancel_handlers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _durable import stop_process
from _harness import STORES, make_store

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish

SKEW = 300.0  # five minutes
RUN = "budget-clock-run"


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
	"""A fresh store (SQLite and PostgreSQL) and one worker id for both phases.

	The lease lapses after 5 s, not 1: a run here holds a model call for up to 15 s, and a
	loaded machine (CI's ``-n 4``) once kept the beat from the store for 1.1 s, so the worker
	fenced itself mid-call and the run asked its model again.
	"""
	stores = make_store(request.param, tmp_path)
	yield {"url": next(stores), "worker_id": "clock-worker", "heartbeat": 0.5, "lapse": 5.0}
	for _ in stores:
		pass


def _skewed(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
	"""This process's wall clock is off by ``seconds`` (its monotonic clocks are not)."""
	real = time.time
	monkeypatch.setattr(time, "time", lambda: real() + seconds)


def _agent(om: OpenMolt, model: ScriptedModel, timeout: float) -> Any:
	def look() -> str:
		"""Look once."""
		return "seen"

	return om.create_agent(name="Timed", model=model, tools=[look], timeout=timeout)


async def _hang(request: Any) -> Any:
	await anyio.sleep_forever()


def _first(store: dict[str, Any], timeout: float) -> None:
	"""The first worker: the run starts, looks once, and its worker dies in the next model call."""

	async def main() -> None:
		asked = anyio.Event()

		async def hang(request: Any) -> Any:
			asked.set()
			await anyio.sleep_forever()

		om = OpenMolt(durability=store, entry_points=False)
		agent = _agent(om, ScriptedModel([call_tool("local.look"), hang]), timeout)
		try:
			await agent.start("go", run_id=RUN)
			with anyio.fail_after(30):
				await asked.wait()
		finally:
			await stop_process()

	anyio.run(main)


def _second(store: dict[str, Any], model: ScriptedModel, timeout: float) -> Any:
	"""The worker that recovers the run: its result, and how long it took."""

	async def main() -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		_agent(om, model, timeout)
		began = time.monotonic()
		try:
			await om.durability.start()  # type: ignore[union-attr]  # recovers the run
			with anyio.fail_after(60):
				return await om.result(RUN), time.monotonic() - began
		finally:
			await stop_process()

	return anyio.run(main)


@pytest.mark.timeout(180)
def test_a_worker_whose_clock_runs_ahead_does_not_end_a_recovered_run_early(
	store: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The run's 60 s began a moment ago; the worker that recovers it is 5 min ahead: it goes on."""
	_first(store, 60)
	_skewed(monkeypatch, SKEW)
	model = ScriptedModel([finish("done")])
	(result, _) = _second(store, model, 60)
	assert (result.status, result.error) == ("success", None)
	assert len(model.requests) == 1


@pytest.mark.timeout(180)
def test_a_run_begun_on_a_clock_ahead_ends_on_time_on_a_worker_whose_clock_is_right(
	store: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The first worker is 5 min ahead; the run's 15 s still end 15 s after it began, where the
	right clock recovers it, and the steps it replays decide as they did (it gets as far)."""
	began = time.time()
	with monkeypatch.context() as ahead:
		_skewed(ahead, SKEW)
		_first(store, 15)
	model = ScriptedModel([_hang])
	(result, _) = _second(store, model, 15)
	assert (result.status, result.error) == (
		"limit_reached",
		"15 seconds elapsed during a model call",
	)
	assert len(model.requests) == 1  # replayed up to the live call, cut off there
	assert time.time() - began < 40
