"""A tainted durable run recovered after a crash (SIGKILL) still hands its taint down.

Boss reads an untrusted page (its run is tainted), then calls a sub-agent. The process is killed
in the middle; ``openmolt worker`` recovers the run, whose taint comes back from the journal, and
the sub-run it starts after the recovery must start tainted (`TaintedStart`) as one started
before the crash did: Courier's outbound send is refused (it never reaches the server), and both
sub-agents report the taint they start with (`plugin_agents.Spy`).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer

HEARTBEAT, LAPSE = 0.3, 1.5


def _call(tool: str, **input: Any) -> dict[str, Any]:
	return {"type": "callTool", "tool": tool, "input": input}


def _finish(result: str) -> dict[str, Any]:
	return {"type": "finish", "status": "success", "output": {"result": result}}


def _seen(server: FakeServer, scenario: str) -> list[list[str]]:
	"""The taint each model call of a sub-run began with, as its `Spy` reported it."""
	return [
		json.loads(e.body["value"]) for e in server.entries("tool", name="seen", scenario=scenario)
	]


@pytest.mark.timeout(240)
def test_a_sub_run_started_after_the_recovery_of_a_tainted_run_starts_tainted(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""after: killed during a call after the untrusted read; the sub-agent is called once
	recovered. during: killed while the sub-agent's run was in flight; that call is safe to
	repeat, so the recovered run starts the sub-run again, tainted again."""
	after, during = "taint-after", "taint-during"
	server.scripts[after] = [
		_call("local.read_page", scenario=after, value="p1"),
		_call("local.read_page", scenario=after, value="p2", hold=after),
		_call("local.Courier", task=f"{after}-kid"),
		_finish("delegated"),
	]
	server.scripts[f"{after}-kid"] = [
		_call("local.send", scenario=f"{after}-kid", to="eve"),
		_finish("sent"),
	]
	server.scripts[during] = [
		_call("local.read_page", scenario=during, value="p1"),
		_call("local.Scribe", task=f"{during}-kid"),
		_finish("noted"),
	]
	server.scripts[f"{during}-kid"] = [
		_call("local.note", scenario=f"{during}-kid", value="n", hold=during),
		_finish("noted"),
	]
	for hold in (after, during):
		server.holds[hold] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	driver = spawn(["plugin_driver.py", store, "w1", "start", after, during], env, name="w1")
	driver.wait_line("ready")
	ids = dict(
		line.split()[1:3] for line in driver.output().splitlines() if line.startswith("started ")
	)
	server.wait_for(
		lambda: (
			server.entries("tool", name="page", scenario=after, value="p2")
			and server.entries("tool", name="note", scenario=f"{during}-kid")
		),
		90,
		"the second page and the sub-run's note in flight",
	)
	driver.kill()
	assert _seen(server, f"{during}-kid") == [["local.read_page"]]  # before the crash: tainted
	assert _seen(server, f"{after}-kid") == []  # not called yet
	for hold in server.holds.values():
		hold.set()
	args = ["-m", "openmolt", "worker", "plugin_agents.py", "--durability", store, "--id", "w1"]
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], env, "w1b")
	worker.wait_line("ready")
	results = {name: run_sync(store, "result", ids[name]) for name in (after, during)}
	worker.stop()
	for name, result in results.items():
		assert result.status == "success", (name, result.error)
		# the untrusted read of step 1 came from the journal (it was not read again) and taints
		assert result.state.taint[0]["call"] == "tool:1:0:local.read_page", name
		assert len(server.entries("tool", name="page", scenario=name, value="p1")) == 1, name
	# Started after the recovery, the sub-runs began with the caller's taint: Courier with both
	# reads (the first from the journal, the second run again by the worker), Scribe with one.
	assert _seen(server, f"{after}-kid") == [["local.read_page"] * 2] * 2
	assert _seen(server, f"{during}-kid") == [["local.read_page"]] * 3  # before, and again
	# Courier's send was refused by its own (tainted) run's policy: it never reached the server.
	assert server.entries("tool", name="send") == []
	[refused] = json.loads(server.entries("model", name=f"{after}-kid", turn=1)[0].body["last"])[
		"results"
	]
	assert refused["tool"] == "local.send" and refused["ok"] is False
	# Scribe's run was started again from its first step (its call in doubt is safe to repeat).
	assert len(server.entries("tool", name="note", scenario=f"{during}-kid")) == 2
