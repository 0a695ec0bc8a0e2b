"""A worker paused past its lease (SIGSTOP: a long GC pause, a laptop asleep) and then let go on.

Another worker takes its run over and finishes it; the paused one, continued, must make no call
of that run any more: no model call, no tool call, no journal write. The side effects are what
the fake server on 127.0.0.1 saw (each tool call is a request to it, as a payment API's would be;
each model call too).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer
from _harness import Proc

HEARTBEAT, LAPSE = 0.3, 3.0


def _stop(pid: int, store: str) -> None:
	"""SIGSTOP the process; on SQLite, at an instant it holds no write lock of the file.

	A process stopped inside a write transaction keeps SQLite's write lock, and every other
	process's writes wait until it goes on: no server can take the lock from it (PostgreSQL ends
	such a session after the lapse; `test_paused_locks`). That limit is documented, not this
	test's subject, so on SQLite the stop is tried again until it lands outside a write.
	"""
	if not store.startswith("sqlite"):
		os.kill(pid, signal.SIGSTOP)
		return
	path = store.split("///", 1)[1]
	while True:
		os.kill(pid, signal.SIGSTOP)
		_wait_stopped(pid)
		probe = sqlite3.connect(path, timeout=0, isolation_level=None)
		try:
			probe.execute("BEGIN IMMEDIATE")  # fails at once while another holds the lock
			probe.execute("ROLLBACK")
			return
		except sqlite3.OperationalError:
			os.kill(pid, signal.SIGCONT)  # it (or w2, a moment) was writing: again
			time.sleep(0.05)
		finally:
			probe.close()


def _wait_stopped(pid: int) -> None:
	"""Return once the process is stopped (a signal is delivered a moment after it is sent)."""
	stat = Path(f"/proc/{pid}/stat")
	if not stat.exists():  # no /proc: give the signal a moment
		time.sleep(0.1)
		return
	while stat.read_text().rpartition(")")[2].split()[0] != "T":
		time.sleep(0.005)


def _script() -> list[Any]:
	def charge(value: str, hold: str = "") -> dict[str, Any]:
		return {
			"type": "callTool",
			"tool": "svc.charge",
			"input": {"scenario": "pause", "value": value, "hold": hold},
		}

	return [
		charge("X", hold="pause"),
		charge("Y"),
		{"type": "finish", "status": "success", "output": {"result": "paid"}},
	]


@pytest.mark.timeout(240)
def test_a_worker_paused_past_its_lease_makes_no_call_once_let_go_on(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""w1 is stopped (SIGSTOP) in a tool call past its lease; w2 finishes the run; w1, continued, calls nothing."""
	server.scripts["pause"] = _script()
	server.holds["pause"] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	first: Proc = spawn(["driver.py", store, "w1", "pause"], env, name="w1")
	first.wait_line("ready")
	run_id = next(
		line.split()[2] for line in first.output().splitlines() if line.startswith("started ")
	)
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store, "--id", "w2"]
	second: Proc = spawn(
		[*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], env, name="w2"
	)
	second.wait_line("ready")
	server.wait_for(lambda: server.entries("tool", name="charge", value="X"), 90, "the call X")
	_stop(first.popen.pid, store)
	try:
		server.holds["pause"].set()  # w1's call answers into a stopped process
		# w2 takes the run over (the call X in doubt: the charge has an idempotency key, so it
		# is made again with it) and finishes it.
		server.wait_for(
			lambda: server.entries("model", name="pause", turn=2), 90, "the finishing turn"
		)
		result = run_sync(store, "result", run_id)
		assert result.status == "success" and result.output == {"result": "paid"}
		seen = len(server.log)
	finally:
		os.kill(first.popen.pid, signal.SIGCONT)
	# w1 finds its lease gone, stops the run's execution and takes its id back; give it the time
	# for a next call it must not make.
	first.wait_line("lost its lease", timeout=30)
	time.sleep(LAPSE + 2 * HEARTBEAT + 1)
	later = [(e.kind, e.name, e.body.get("value"), e.body.get("turn")) for e in server.log[seen:]]
	assert later == [], later
	charges = [e.body["value"] for e in server.entries("tool", name="charge")]
	assert sorted(charges) == ["X", "X", "Y"]  # X: w1's, then w2's with the same key; Y: once
	assert len({e.headers["idempotency-key"] for e in server.entries("tool", value="X")}) == 1
	turns = [e.body["turn"] for e in server.entries("model", name="pause")]
	assert sorted(turns) == [0, 1, 2]  # each model call made once, across both workers
	assert run_sync(store, "result", run_id).output == {"result": "paid"}
	second.stop()
	first.kill()
