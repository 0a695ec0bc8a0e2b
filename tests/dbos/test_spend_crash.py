"""What a nested run spent before a crash (SIGKILL) counts once in the recovered durable run.

A sub-agent's run, or a guardrail agent's, lives inside one journaled step of its caller; its
model calls are billed as they are made. The worker is killed while the nested run's tool call
is in flight, after its first model call: nothing of the step is journaled. The worker that
recovers the run runs the step again (a sub-agent or guardrail agent whose calls may run again)
or finds it in doubt (the Clerk's ledger may not be written twice), and the run's usage counts
the first attempt's model call too, once.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer

HEARTBEAT, LAPSE = 0.3, 5.0  # the worker restarts under the id at once (its holder died)


def _call(tool: str, **input: Any) -> dict[str, Any]:
	return {"type": "callTool", "tool": tool, "input": input}


def _finish(**output: Any) -> dict[str, Any]:
	return {"type": "finish", "status": "success", "output": output}


@pytest.mark.timeout(240)
def test_a_nested_run_a_crash_cut_off_counts_its_first_attempt_once(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""Killed inside sub-agent calls (run again, two at once, or in doubt) and a guardrail
	agent's check: each recovered run counts every model call the server answered, no more."""
	held = {n: ("echo", n) for n in ("scribe", "judge", "batch-a", "batch-b")}
	held["clerk"] = ("ledger", "clerk")
	server.scripts["spend-again"] = [_call("local.Scribe", task="scribe"), _finish(result="ok")]
	# Two calls of one reply run at once, each in its own step (their ids reserved in order).
	server.scripts["spend-batch"] = [
		[_call("local.Scribe", task="batch-a"), _call("local.Scribe", task="batch-b")],
		_finish(result="ok"),
	]
	server.scripts["spend-doubt"] = [_call("local.Clerk", task="clerk"), _finish(result="ok")]
	server.scripts["guarded"] = [_finish(result="ok")]
	for name, (tool, _) in held.items():
		server.scripts[name] = [
			_call(f"local.{tool}", scenario=name, value="v", hold=name),
			_finish(action="allow", reason="ok") if name == "judge" else _finish(result="ok"),
		]
		server.holds[name] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	scenarios = ["spend-again", "spend-batch", "spend-doubt", "guarded"]
	driver = spawn(["spend_agents.py", store, "w1", *scenarios], env, name="w1")
	driver.wait_line("ready")
	ids = dict(
		line.split()[1:3] for line in driver.output().splitlines() if line.startswith("started ")
	)
	server.wait_for(
		lambda: all(server.entries("tool", name=t, scenario=n) for n, (t, _) in held.items()),
		90,
		"the nested runs' tool calls in flight",
	)
	driver.kill()
	for hold in server.holds.values():
		hold.set()
	args = ["-m", "openmolt", "worker", "spend_agents.py", "--durability", store, "--id", "w1"]
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], env, "w1b")
	worker.wait_line("ready")
	results = {name: run_sync(store, "result", run_id) for name, run_id in ids.items()}
	worker.stop()
	for name, result in results.items():
		assert result.status == "success", (name, result.status, result.error)

	def answered(*scenarios: str) -> tuple[int, int]:
		"""The model calls the server answered for the scenarios, and their tokens (billed)."""
		calls = [e for s in scenarios for e in server.entries("model", name=s)]
		turns = [int(e.body["turn"]) for e in calls]
		return len(calls), sum(110 + 2 * t for t in turns)  # (100 + t) in, (10 + t) out

	# The Scribe's run ran twice: its first call before the crash, then two.
	assert answered("scribe") == (3, 110 + 110 + 112)
	# The Clerk's was in doubt: not run again, its one call counts.
	assert answered("clerk") == (1, 110)
	assert len(server.entries("tool", name="ledger")) == 1
	# The Judge ran twice, as the Scribe did, and each Scribe of the batch.
	for twice in ("judge", "batch-a", "batch-b"):
		assert answered(twice) == (3, 110 + 110 + 112), twice
	pairs = {
		"spend-again": ["scribe"],
		"spend-batch": ["batch-a", "batch-b"],
		"spend-doubt": ["clerk"],
		"guarded": ["judge"],
	}
	counted = {n: (results[n].usage.calls, results[n].usage.total_tokens) for n in pairs}
	assert counted == {n: answered(n, *nested) for n, nested in pairs.items()}
