"""In-doubt calls: a worker killed (SIGKILL) during an outbound call without an idempotency key.

The call reached the service (the effect happened) but its result was never journaled. The worker
restarted under its id finds the call's start recorded and follows the tool's policy instead of
sending it again: ``ask`` parks the run on a question a person answers; ``fail`` ends the call
with an error the model reads.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer

HEARTBEAT, LAPSE = 0.3, 1.5


def _script(tool: str, name: str) -> list[Any]:
	return [
		{
			"type": "callTool",
			"tool": tool,
			"input": {"scenario": name, "value": "P-1", "hold": name},
		},
		{"type": "finish", "status": "success", "output": {"result": "settled"}},
	]


@pytest.mark.timeout(240)
def test_an_in_doubt_call_asks_or_fails_by_its_policy_and_never_runs_twice(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""ask: parked on "did it happen?", answered, finished; fail: the model reads the error."""
	for name, tool in (("doubt-ask", "local.refund"), ("doubt-fail", "local.refund_strict")):
		server.scripts[name] = _script(tool, name)
		server.holds[name] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	driver = spawn(["driver.py", store, "w1", "doubt-ask", "doubt-fail"], env, name="w1")
	driver.wait_line("ready")
	ids = dict(
		line.split()[1:3] for line in driver.output().splitlines() if line.startswith("started ")
	)
	server.wait_for(
		lambda: len(server.entries("tool", name="refund")) == 2, 90, "both refunds in flight"
	)
	driver.kill()
	for hold in server.holds.values():
		hold.set()  # the service finishes both refunds: their effects happened
	server.wait_for(lambda: len(server.entries("tool-done", name="refund")) == 2, 30, "done")
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store, "--id", "w1"]
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], env, "w1b")
	worker.wait_line("ready")
	deadline = time.time() + 90
	parked: list[Any] = []
	while time.time() < deadline:
		parked = [p for p in run_sync(store, "pending") if p.run_id == ids["doubt-ask"]]
		if parked:
			break
		time.sleep(0.3)
	assert parked, worker.output()[-3000:]
	assert "In doubt" in parked[0].question and "local.refund" in parked[0].question
	failed = run_sync(store, "result", ids["doubt-fail"])
	assert failed.status == "success"
	last = server.entries("model", name="doubt-fail", turn=1)[0].body["last"]
	assert "in doubt" in last and "may or may not have taken effect" in last
	run_sync(store, "answer", ids["doubt-ask"], "yes, the refund went through")
	asked = run_sync(store, "result", ids["doubt-ask"])
	worker.stop()
	assert asked.status == "success" and asked.output == {"result": "settled"}
	last = server.entries("model", name="doubt-ask", turn=1)[0].body["last"]
	assert "yes, the refund went through" in last and "in doubt" in last
	# Neither refund was sent again.
	for name in ("doubt-ask", "doubt-fail"):
		assert len(server.entries("tool", name="refund", scenario=name)) == 1, name
