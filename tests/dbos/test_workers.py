"""Workers: a dead worker's run is taken over by a live one (one of them, never two), and two
workers serving one schedule fire each due time once and lose none."""

from __future__ import annotations

import itertools
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer
from _harness import Proc

from openmolt_dbos._workers import list_workers, make_engine

HEARTBEAT, LAPSE = 0.3, 1.5


def _worker(spawn: Any, store: str, worker_id: str, env: dict[str, str]) -> Proc:
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store]
	args += ["--id", worker_id, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)]
	proc: Proc = spawn(args, env, name=worker_id)
	return proc


@pytest.mark.timeout(240)
def test_a_live_worker_takes_over_the_run_of_a_dead_one(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""Killed mid-run, w1's run is finished by one of the two live workers; the takeover is timed."""
	server.scripts["takeover"] = [
		{
			"type": "callTool",
			"tool": "svc.charge",
			"input": {"scenario": "takeover", "value": "X", "hold": "takeover"},
		},
		{"type": "finish", "status": "success", "output": {"result": "taken over"}},
	]
	server.holds["takeover"] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	# The driver launches first (it creates the store); then two live workers.
	driver = spawn(["driver.py", store, "w1", "takeover"], env, name="w1")
	driver.wait_line("ready")
	run_id = next(
		line.split()[2] for line in driver.output().splitlines() if line.startswith("started ")
	)
	live = [_worker(spawn, store, w, env) for w in ("w2", "w3")]
	for worker in live:
		worker.wait_line("ready")
	server.wait_for(lambda: server.entries("tool", name="charge", scenario="takeover"), 90, "X")
	killed = time.time()
	driver.kill()
	server.holds["takeover"].set()
	again = server.wait_for(
		lambda: server.entries("tool", name="charge", scenario="takeover")[1:], 60, "the retry"
	)
	takeover = again[0].at - killed
	result = run_sync(store, "result", run_id)
	for worker in live:
		worker.stop()
	assert result.status == "success" and result.output == {"result": "taken over"}
	# The call in flight ran again, once, with its key; the next turn ran once.
	charges = server.entries("tool", name="charge", scenario="takeover")
	assert len(charges) == 2
	assert len({c.headers["idempotency-key"] for c in charges}) == 1
	assert len(server.entries("model", name="takeover", turn=1)) == 1
	tables = make_engine(store)
	try:
		rows = {r["executor_id"]: r for r in list_workers(tables)}
	finally:
		tables.dispose()
	assert rows["w1"]["state"] == "taken" and rows["w1"]["taken_by"] in ("w2", "w3")
	assert (
		takeover < LAPSE + HEARTBEAT + 10
	)  # the lapse, a look, DBOS's queue poll; a loaded machine
	print(f"takeover after {takeover:.2f} s")


@pytest.mark.timeout(240)
def test_two_workers_on_one_schedule_fire_each_due_time_once(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""For about 10 s, two workers serve a 1 s interval: no due time runs twice, none is lost."""
	server.scripts["tick"] = [{"type": "finish", "status": "success", "output": {"result": "tick"}}]
	env = {"OPENMOLT_TEST_SERVER": server.url, "OPENMOLT_TEST_SCHEDULE": "1"}
	first = _worker(spawn, store, "s1", env)
	first.wait_line("ready")
	# The grid has begun before the second worker comes up (a worker may start within the
	# first interval: then nothing would show that the due times before it were kept).
	server.wait_for(lambda: server.entries("model", name="tick"), 30, "a first tick")
	second = _worker(spawn, store, "s2", env)
	second.wait_line("ready")
	both = time.time()
	server.wait_for(lambda: time.time() > both + 10, 30, "10 s with both workers")
	stopped = time.time()
	first.stop()
	second.stop()
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		runs = client.list_workflows(workflow_id_prefix="tick@", load_input=False)
		outputs = {r.workflow_id: r.output for r in runs}
	finally:
		client.destroy()
	dues = sorted(
		datetime.fromisoformat(r.workflow_id.split("@", 1)[1].replace("Z", "+00:00")) for r in runs
	)
	assert len(dues) == len(set(dues)) >= 8
	# On the 1 s grid, and none lost between the first and the last due time without a word:
	# a worker woken late (a loaded machine) runs the latest due time only and reports the ones
	# it slept through as missed (no burst of catch-up runs), so a gap is covered by those notes.
	gaps = [round((b - a).total_seconds(), 3) for a, b in itertools.pairwise(dues)]
	assert all(g >= 1.0 and g == round(g) for g in gaps), gaps
	lost = sum(round(g) - 1 for g in gaps)
	said = first.output() + second.output()
	missed = re.findall(r"(\d+) runs? missed while the process was down or asleep", said)
	assert lost <= sum(int(n) for n in missed), (gaps, said)
	finished = [r for r in runs if r.status == "SUCCESS"]
	assert len(finished) >= len(runs) - 2  # a run due as the workers stopped may not have ended
	# A due time while the previous run still went is skipped (the overlap rule, across workers).
	ran = [r for r in finished if "skipped" not in (outputs[r.workflow_id] or {})]
	skipped = [r for r in finished if "skipped" in (outputs[r.workflow_id] or {})]
	assert ran
	assert all("overlap" in outputs[r.workflow_id]["skipped"] for r in skipped)
	# No due time ran twice: one model call per run at most (every run that ran made one).
	calls = len(server.entries("model", name="tick"))
	assert len(ran) <= calls <= len(runs) - len(skipped)
	# None was lost: the grid reaches from before the second worker came up to the stop.
	assert dues[0] <= datetime.fromtimestamp(both, UTC)
	assert dues[-1] >= datetime.fromtimestamp(stopped, UTC) - timedelta(seconds=2.5)
