"""Stranded runs: a worker restarted under its id with a changed agent definition.

The old runs wait for a version no live worker serves: the worker warns at start, emits
``run:stranded``, `openmolt runs --all` says "stranded", and ``--migrate`` resumes a run on the
new definition when the change is compatible (a tool added).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer
from _harness import HERE

from openmolt_dbos._engine import reset_engine

HEARTBEAT, LAPSE = 0.3, 1.5


def _cli(cli_in_process: Any, *args: str) -> subprocess.CompletedProcess[str]:
	"""`openmolt ARGS` in this process (a fresh one imports DBOS first: 4 s or more)."""
	env = {k: v for k, v in os.environ.items() if k != "OPENMOLT_DURABILITY"}
	try:
		return cli_in_process(list(args), cwd=HERE, env=env)
	finally:
		reset_engine()


@pytest.mark.timeout(240)
def test_a_changed_definition_reports_its_stranded_runs_and_migrates_them(
	store: str, server: FakeServer, spawn: Any, tmp_path: Path, cli_in_process: Any
) -> None:
	"""Warning, event, 'stranded' in openmolt runs; --migrate finishes it on the new definition."""
	server.scripts["strand"] = [
		{
			"type": "callTool",
			"tool": "svc.charge",
			"input": {"scenario": "strand", "value": "S", "hold": "strand"},
		},
		{"type": "finish", "status": "success", "output": {"result": "migrated"}},
	]
	server.holds["strand"] = threading.Event()
	events = tmp_path / "events.jsonl"
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
		"OPENMOLT_TEST_EVENTS": str(events),
	}
	driver = spawn(["driver.py", store, "w1", "strand"], env, name="w1")
	driver.wait_line("ready")
	run_id = next(
		line.split()[2] for line in driver.output().splitlines() if line.startswith("started ")
	)
	server.wait_for(lambda: server.entries("tool", name="charge", scenario="strand"), 90, "S")
	driver.kill()
	server.holds["strand"].set()
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store, "--id", "w1"]
	changed = {**env, "OPENMOLT_TEST_EXTRA_TOOL": "1"}
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], changed, "w1b")
	worker.wait_line("ready")
	worker.wait_line("no live worker serves", timeout=30)
	assert run_id in worker.output()
	stranded = [json.loads(line) for line in events.read_text().splitlines()]
	assert [e["run_id"] for e in stranded if e["name"] == "run:stranded"] == [run_id]
	listed = _cli(cli_in_process, "runs", "--all", "--json", "--durability", store)
	assert listed.returncode == 0, listed.stderr
	rows = {r["run_id"]: r for r in json.loads(listed.stdout)}
	assert rows[run_id]["status"] == "stranded"
	time.sleep(1)
	assert len(server.entries("tool", name="charge", scenario="strand")) == 1  # nobody resumed it
	moved = _cli(cli_in_process, "runs", "--migrate", run_id, "--durability", store)
	assert moved.returncode == 0, moved.stderr
	result = run_sync(store, "result", run_id)
	worker.stop()
	assert result.status == "success" and result.output == {"result": "migrated"}
	listed = _cli(cli_in_process, "runs", "--all", "--json", "--durability", store)
	assert {r["run_id"]: r["status"] for r in json.loads(listed.stdout)}[run_id] == "success"
	ended = _cli(cli_in_process, "runs", "--cancel", run_id, "--durability", store)
	assert ended.returncode == 2 and "has ended" in ended.stderr
