"""`async with om:` makes the scheduler only when an agent has a schedule."""

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import FakeClock, ScriptedModel, finish

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 3, 9, 12, tzinfo=UTC)


def test_a_block_without_schedules_imports_no_scheduler() -> None:
	"""Entering and leaving `async with OpenMolt()` around a run loads no scheduler module."""
	code = """
import json, sys, anyio
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

async def main():
	async with OpenMolt(entry_points=False) as om:
		agent = om.create_agent(name="A", model=ScriptedModel([finish({"ok": True})]))
		print((await agent.run()).status)

anyio.run(main)
print(json.dumps(sorted(m for m in sys.modules if "schedul" in m or m.startswith("croniter"))))
"""
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	status, modules = out.stdout.splitlines()
	assert status == "success"
	assert json.loads(modules) == []


async def test_a_schedule_added_inside_the_block_fires() -> None:
	"""An agent scheduled after `async with om:` began is served until the block ends."""
	clock = FakeClock(T0)
	om = OpenMolt(entry_points=False, clock=clock)
	agent = om.create_agent(name="Ticker", model=ScriptedModel([finish({"ok": True})] * 3))
	async with om:
		sid = agent.schedule({"type": "interval", "value": 60, "input": "tick"})
		await clock.advance(minutes=3)
		history = om.scheduler.get(sid).history
	assert [r.due for r in history] == [T0 + timedelta(seconds=60 * k) for k in range(1, 4)]
	assert {r.status for r in history} == {"success"}


async def test_a_block_that_ends_right_after_scheduling_does_not_hang() -> None:
	"""Scheduling and leaving at once (before the scheduler task ran) ends the block promptly."""
	om = OpenMolt(entry_points=False, clock=FakeClock(T0))
	agent = om.create_agent(name="Ticker", model=ScriptedModel([]))
	with anyio.fail_after(5):
		async with om:
			agent.schedule({"type": "interval", "value": 60, "input": "tick"})
	assert len(om.schedules) == 1
