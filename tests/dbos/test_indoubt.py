"""In-doubt calls: a worker killed (SIGKILL) during an outbound call without an idempotency key.

The call reached the service (the effect happened) but its result was never journaled. The worker
restarted under its id finds the call's start recorded and follows the tool's policy instead of
sending it again: ``ask`` parks the run on a question a person answers; ``fail`` ends the call
with an error the model reads. A sub-agent's call in doubt (killed while the sub-agent's own
tool was in flight) follows the strictest policy of the sub-agent's tools: it is not run again.
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
	# The parent asks its sub-agent Clerk, whose own model writes the ledger (fail when in doubt).
	server.scripts["doubt-child"] = [
		{"type": "callTool", "tool": "local.Clerk", "input": {"task": "doubt-kid"}},
		{"type": "finish", "status": "success", "output": {"result": "settled"}},
	]
	server.scripts["doubt-kid"] = _script("local.ledger", "doubt-kid")
	server.holds["doubt-kid"] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	scenarios = ["doubt-ask", "doubt-fail", "doubt-child"]
	driver = spawn(["driver.py", store, "w1", *scenarios], env, name="w1")
	driver.wait_line("ready")
	ids = dict(
		line.split()[1:3] for line in driver.output().splitlines() if line.startswith("started ")
	)
	server.wait_for(
		lambda: (
			len(server.entries("tool", name="refund")) == 2
			and len(server.entries("tool", name="ledger")) == 1
		),
		90,
		"both refunds and the ledger line in flight",
	)
	driver.kill()
	for hold in server.holds.values():
		hold.set()  # the service finishes the calls: their effects happened
	server.wait_for(
		lambda: (
			len(server.entries("tool-done", name="refund")) == 2
			and len(server.entries("tool-done", name="ledger")) == 1
		),
		30,
		"done",
	)
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
	child = run_sync(store, "result", ids["doubt-child"])
	assert failed.status == "success"
	last = server.entries("model", name="doubt-fail", turn=1)[0].body["last"]
	assert "in doubt" in last and "may or may not have taken effect" in last
	run_sync(store, "answer", ids["doubt-ask"], "yes, the refund went through")
	asked = run_sync(store, "result", ids["doubt-ask"])
	worker.stop()
	assert asked.status == "success" and asked.output == {"result": "settled"}
	last = server.entries("model", name="doubt-ask", turn=1)[0].body["last"]
	assert "yes, the refund went through" in last and "in doubt" in last
	# Neither refund was sent again, and the sub-agent did not run (nor write its ledger) again.
	for name in ("doubt-ask", "doubt-fail"):
		assert len(server.entries("tool", name="refund", scenario=name)) == 1, name
	assert child.status == "success"
	last = server.entries("model", name="doubt-child", turn=1)[0].body["last"]
	assert "local.Clerk" in last and "may or may not have taken effect" in last
	assert len(server.entries("tool", name="ledger")) == 1
	assert len(server.entries("model", name="doubt-kid")) == 1
