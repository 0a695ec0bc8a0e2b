"""Schedules that share a SQLite store: keys, cursors and the lease that lets one scheduler fire."""

import logging
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import FakeClock, ScriptedModel, finish

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 3, 9, 12, tzinfo=UTC)


def finishes(n: int) -> ScriptedModel:
	return ScriptedModel([finish({"ok": True}) for _ in range(n)])


def instance(clock: FakeClock, store, name: str = "Digest", n: int = 5):
	om = OpenMolt(entry_points=False, clock=clock, schedule_store=store)
	return om, om.create_agent(name=name, model=finishes(n))


async def until(condition) -> None:
	# The SQLite store works in threads; poll briefly for what they do.
	with anyio.fail_after(5):
		while not condition():
			await anyio.sleep(0.005)


@pytest.mark.parametrize(
	("names", "spec"),
	[
		(("Alpha", "Beta"), {"type": "interval", "value": 600, "id": "daily"}),
		(("Helper", "helper"), {"type": "interval", "value": 600}),  # one derived id
	],
	ids=["explicit-id", "derived-id"],
)
async def test_two_agents_with_one_schedule_id_keep_their_own_cursor(tmp_path, names, spec) -> None:
	"""A second agent whose schedule has the first's id starts its own count: it catches up
	nothing the first ran, and its stored history holds none of the first's records.

	The cursor was keyed by schedule id only: the second agent read the first's last due time
	and caught up four runs it never had ("4 runs missed"), and listed the first's runs."""
	db = tmp_path / "runs.sqlite"
	spec = {**spec, "missedRuns": "run_once"}
	clock = FakeClock(T0)
	om, first = instance(clock, db, names[0])
	sid = first.schedule(spec)
	async with om:
		for n in (1, 2):
			await until(lambda: clock.sleeping)
			await clock.advance(seconds=600)
			await until(lambda n=n: len(om.scheduler.get(sid).history) == n)

	later = FakeClock(T0 + timedelta(hours=1, minutes=5))
	om2, second = instance(later, db, names[1])
	assert second.schedule(spec) == sid
	schedule = om2.scheduler.get(sid)
	async with om2:
		await until(lambda: later.sleeping)
		assert schedule.history == []
		assert schedule.next_run == later.now() + timedelta(seconds=600)
		assert await schedule.stored_history() == []
	assert [r.agent for r in await om.scheduler.get(sid).stored_history()] == [names[0]] * 2


async def test_two_schedulers_on_one_store_fire_each_due_time_once(tmp_path, caplog) -> None:
	"""Two instances serving one agent's schedule on one store (two processes, or two instances
	of one process): the first owns it and runs every due time; the second fires none and says
	which scheduler owns it.

	Both fired every due time: each run ran twice."""
	db = tmp_path / "runs.sqlite"
	clock = FakeClock(T0)
	spec = {"type": "interval", "value": 60}
	(om1, a1), (om2, a2) = instance(clock, db), instance(clock, db)
	ids = [a1.schedule(spec), a2.schedule(spec)]
	assert ids[0] == ids[1]
	with caplog.at_level(logging.WARNING, logger="openmolt"):
		async with om1:
			await until(lambda: clock.sleeping == 1)
			async with om2:
				for n in (1, 2, 3):
					await until(lambda: clock.sleeping == 2)
					await clock.advance(seconds=60)
					await until(lambda n=n: len(om1.scheduler.get(ids[0]).history) == n)
	assert [r.status for r in om1.scheduler.get(ids[0]).history] == ["success"] * 3
	assert om2.scheduler.get(ids[1]).history == []
	said = [r.getMessage() for r in caplog.records if "served by" in r.getMessage()]
	assert len(said) == 1 and f"pid {__import__('os').getpid()}" in said[0] and ids[0] in said[0]
