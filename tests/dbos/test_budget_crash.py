"""A token budget's end across a crash (SIGKILL): the recovered run ends where an uncrashed one does.

The budget capability decides from the journaled usage, so the steps replayed from the journal
go on as they did, and the live rest ends on the same step with the same words.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer

HEARTBEAT, LAPSE = 0.3, 1.5


def _charge(value: str, hold: str = "") -> dict[str, Any]:
	return {
		"type": "callTool",
		"tool": "svc.charge",
		"input": {"scenario": "tokens", "value": value, "hold": hold},
	}


@pytest.mark.timeout(240)
def test_a_token_budget_ends_a_recovered_run_on_the_same_step(
	store: str, server: FakeServer, spawn: Any
) -> None:
	name, held = "tokens", "tokens-held"
	# The server's usage: 110, 112, 114 tokens at turns 0, 1, 2; the budget is 250.
	server.scripts[name] = [
		_charge("A"),
		_charge("B", hold=held),
		_charge("C"),
		{"type": "finish", "status": "success", "output": {"result": "charged"}},
	]
	server.holds[held] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	driver = spawn(["driver.py", store, "w1", name], env, name="w1")
	driver.wait_line("ready")
	[run_id] = [
		line.split()[2] for line in driver.output().splitlines() if line.startswith("started ")
	]
	server.wait_for(
		lambda: server.entries("tool", name="charge", hold=held), 90, "the call in flight"
	)
	driver.kill()
	server.holds[held].set()
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store, "--id", "w1"]
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], env, "w1b")
	worker.wait_line("ready")
	result = run_sync(store, "result", run_id)
	worker.stop()
	assert (result.status, result.error) == ("limit_reached", "336 of 250 tokens used")
	assert result.usage.total_tokens == 336
	models = server.entries("model", name=name)
	assert [m.body["turn"] for m in models] == [0, 1, 2]  # the first two replayed, not asked
	notice = json.loads(models[2].body["last"])["notice"]
	assert notice.startswith("This is your last step (250 tokens)")
