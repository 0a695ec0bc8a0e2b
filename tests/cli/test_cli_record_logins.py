"""Every printed run record or result masks a URL's login, as `openmolt run` and `logs` do.

A scheduled run's record (``openmolt agent.json`` with schedules, ``--json`` or piped) printed
its result's output as the run gave it: a connection string's password the agent handed back
(no source knows it) was on stdout, and in the ``schedule:end`` event line on stderr, while the
same run's ``openmolt run`` result and its stored row (``openmolt logs --json``) masked it.
"""

from __future__ import annotations

import json
import signal

PASSWORD = "Pw-7f3a9e21c4d8"
URL = f"postgresql://app:{PASSWORD}@db.example/runs"


def test_a_scheduled_runs_json_record_masks_a_urls_login(tmp_path, server, cli) -> None:
	"""The record's output, and every event line, show the URL with its password masked."""
	path = cli.agent_file(
		tmp_path, server, input=URL, schedules=[{"type": "interval", "value": 0.3}]
	)
	running = cli.Running(str(path), "--json", cwd=tmp_path)
	records = [json.loads(r) for r in running.wait_for("stdout", '"schedule_id"')]
	running.wait_for("stderr", '"schedule:end"')
	running.proc.send_signal(signal.SIGINT)
	assert running.finish() == 0
	greeting = records[0]["result"]["output"]["greeting"]
	assert greeting == "Hello, postgresql://app:[redacted]@db.example/runs!", greeting
	for stream in ("stdout", "stderr"):
		for line in running.lines[stream]:
			assert PASSWORD not in line, (stream, line)


def test_a_run_prints_its_result_with_the_login_masked_too(tmp_path, server, cli) -> None:
	"""`openmolt run --json`: the result on stdout and the event lines on stderr."""
	path = cli.agent_file(tmp_path, server, input=URL)
	done = cli.openmolt(str(path), "--json", cwd=tmp_path, process=True)
	assert done.returncode == 0, done.stderr
	assert PASSWORD not in done.stdout, done.stdout
	assert "postgresql://app:[redacted]@db.example/runs" in done.stdout
	for line in done.stderr.splitlines():
		assert PASSWORD not in line, line


def test_logs_json_masks_a_stored_runs_error_too() -> None:
	"""A stored run's row (``openmolt logs --json``): its error as well as its output."""
	from types import SimpleNamespace

	from openmolt_core.cli._logs import _row

	stored = SimpleNamespace(
		to_dict=lambda: {"status": "error", "output": URL, "error": f"could not reach {URL}"}
	)
	row = _row(stored)
	assert PASSWORD not in json.dumps(row), row
	assert row["error"] == "could not reach postgresql://app:[redacted]@db.example/runs"
