"""Two schedulers on one store, the holder paused (SIGSTOP) past its lease: each due time fires once."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

pytestmark = [
	pytest.mark.anyio,
	pytest.mark.skipif(os.name != "posix", reason="SIGSTOP"),
]

_SERVE = """
import json, sys, time
import anyio
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

async def main():
	om = OpenMolt(entry_points=False, schedule_store=sys.argv[1])
	om.scheduler.grace = 4.0  # a lease of 2 s
	agent = om.create_agent(name="Digest", model=ScriptedModel([finish({"ok": True})] * 200))
	sid = agent.schedule({"type": "interval", "value": 1})
	schedule = om.scheduler.get(sid)
	async with om:
		# "serving" once the scheduler looked at the lease: it waits for a due time, or it knows
		# the holder and waits for its lease to end (on a loaded machine its start may take
		# longer than the test waits before pausing the holder).
		with anyio.fail_after(60):
			while schedule._next is None and schedule.held_by is None:
				await anyio.sleep(0.05)
		print("serving", flush=True)
		await anyio.sleep(float(sys.argv[2]))
	print(json.dumps([r.due.isoformat() for r in om.scheduler.get(sid).history]), flush=True)

anyio.run(main)
"""


async def test_a_holder_paused_past_its_lease_fires_no_due_time_the_other_fired(
	tmp_path: Path,
) -> None:
	"""The holder is stopped 6 s (its lease is 2 s): the standby fires meanwhile; continued, the holder repeats none."""
	script = tmp_path / "serve.py"
	script.write_text(_SERVE)
	db = tmp_path / "runs.sqlite"
	args = [sys.executable, str(script), str(db)]
	with anyio.fail_after(90):
		holder = await anyio.open_process([*args, "18"])
		assert holder.stdout is not None
		assert b"serving" in await holder.stdout.receive()
		await anyio.sleep(2.5)  # it holds the schedule and fires
		standby = await anyio.open_process([*args, "13"])
		assert standby.stdout is not None
		assert b"serving" in await standby.stdout.receive()
		await anyio.sleep(1)
		os.kill(holder.pid, signal.SIGSTOP)
		try:
			await anyio.sleep(6)
		finally:
			os.kill(holder.pid, signal.SIGCONT)
		outputs = []
		for proc in (holder, standby):
			await proc.wait()
			assert proc.stdout is not None
			said = b""
			async for chunk in proc.stdout:
				said += chunk
			outputs.append(json.loads(said.decode().strip().splitlines()[-1]))
	held, stood = outputs
	assert held and stood  # both fired: the standby took the schedule over during the pause
	dues = held + stood
	assert len(dues) == len(set(dues)), sorted(dues)
