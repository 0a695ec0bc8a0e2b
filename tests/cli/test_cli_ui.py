"""`openmolt` records every run; `openmolt ui` shows them; `--ui` lets the page answer the agent."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest


def _env(cli: Any, state: Path) -> dict[str, str]:
	return cli.clean_env(**{cli.KEY_VAR: "env-key", "XDG_STATE_HOME": str(state)})


def _token(url: str) -> str:
	return url.split("token=", 1)[1]


def _poll(url: str, token: str, until: Any, timeout: float = 30) -> dict[str, Any]:
	deadline = time.monotonic() + timeout
	while True:
		state = httpx.get(url, headers={"x-openmolt-token": token}, timeout=20).json()
		if until(state):
			return dict(state)
		if time.monotonic() > deadline:
			raise AssertionError(f"not in time: {state}")
		time.sleep(0.1)


def test_every_run_of_the_command_is_recorded_in_the_default_store(tmp_path, server, cli) -> None:
	"""A plain run lands in $XDG_STATE_HOME/openmolt/runs.db with its events."""
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), cwd=tmp_path, env=_env(cli, tmp_path / "state"))
	assert done.returncode == 0, done.stderr
	run_id = json.loads(done.stdout)["run_id"]
	conn = sqlite3.connect(tmp_path / "state" / "openmolt" / "runs.db")
	try:
		row = conn.execute("SELECT agent, status FROM agent_runs WHERE run_id = ?", (run_id,))
		assert row.fetchone() == ("Greeter", "success")
		names = [
			n for (n,) in conn.execute("SELECT name FROM run_events WHERE run_id = ?", (run_id,))
		]
	finally:
		conn.close()
	assert names[0] == "llmOutput" and names[-1] == "finish"
	off = cli.openmolt(
		str(path), cwd=tmp_path, env={**_env(cli, tmp_path / "s2"), "OPENMOLT_RUN_STORE": "off"}
	)
	assert off.returncode == 0 and not (tmp_path / "s2").exists()


def test_openmolt_ui_serves_the_recorded_runs_behind_its_token(tmp_path, server, cli) -> None:
	"""The command prints a tokened URL on 127.0.0.1; the runs are there; no token, no page."""
	env = _env(cli, tmp_path / "state")
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), cwd=tmp_path, env=env)
	run_id = json.loads(done.stdout)["run_id"]
	running = cli.Running("ui", cwd=tmp_path, env=env)
	try:
		(line,) = running.wait_for("stderr", "openmolt ui: http://127.0.0.1:")
		url = line.split("openmolt ui: ", 1)[1]
		base = url.split("/?", 1)[0]
		state = _poll(f"{base}/api/state", _token(url), lambda s: s["runs"])
		assert [(r["run_id"], r["status"]) for r in state["runs"]] == [(run_id, "success")]
		assert httpx.get(f"{base}/api/state", timeout=5).status_code == 403
		page = httpx.get(url, timeout=5)
		assert page.status_code == 200 and "OpenMolt runs" in page.text
		assert not page.cookies  # no cookie: a cookie for 127.0.0.1 would go to every port
		headers = {"x-openmolt-token": _token(url)}
		events = httpx.get(f"{base}/api/runs/{run_id}", headers=headers, timeout=5).json()
		assert [e["name"] for e in events["events"]][-1] == "finish"
	finally:
		running.proc.send_signal(signal.SIGINT)
		code = running.finish()
	assert code == 0
	assert running.lines["stderr"][-1] == "openmolt ui: stopped"


def test_with_ui_the_page_answers_the_agents_question(tmp_path, server, cli) -> None:
	"""`openmolt FILE --ui`: the question waits in the page, the answer reaches the model."""
	path = cli.agent_file(tmp_path, server, "ask")
	running = cli.Running(str(path), "--ui", cwd=tmp_path, env=_env(cli, tmp_path / "state"))
	try:
		(line,) = running.wait_for("stderr", "run viewer: http://127.0.0.1:")
		url = line.split("run viewer: ", 1)[1]
		base, token = url.split("/?", 1)[0], _token(url)
		state = _poll(f"{base}/api/state", token, lambda s: s["questions"])
		(question,) = state["questions"]
		assert question["message"] == "What is your name?" and question["kind"] == "live"
		answered = httpx.post(
			f"{base}/api/questions/{question['id']}",
			json={"answer": "Grace"},
			headers={"x-openmolt-token": token},
			timeout=5,
		)
		assert answered.status_code == 200
		running.wait_for("stderr", "the viewer stays open")
		state = _poll(f"{base}/api/state", token, lambda s: s["runs"][0]["status"] == "success")
	finally:
		running.proc.send_signal(signal.SIGINT)
		code = running.finish()
	assert code == 0
	result = json.loads("\n".join(running.lines["stdout"]))
	assert result["output"] == {"greeting": "Hello, Grace!"}


def test_openmolt_ui_refuses_a_store_that_is_a_folder_or_not_a_database(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt ui --store agent.json` (or a folder) is refused before serving (exit 2), not a
	traceback at each poll of an empty page; a path with no store yet is said so."""
	import anyio

	from openmolt_core.cli import main

	class Served(BaseException):  # not an Exception: the command would call it unexpected
		pass

	def served(*args: object) -> None:
		raise Served

	monkeypatch.setattr(anyio, "run", served)
	agent = tmp_path / "agent.json"
	agent.write_text('{"name": "A"}')
	assert main(["ui", "--store", str(agent)]) == 2
	assert capsys.readouterr().err == (
		f"openmolt: {agent} cannot hold a run store: file is not a database\n"
	)
	assert main(["ui", "--store", str(tmp_path)]) == 2
	assert (
		capsys.readouterr().err == f"openmolt: {tmp_path} cannot hold a run store: it is a folder\n"
	)
	assert agent.read_text() == '{"name": "A"}'
	with pytest.raises(Served):
		main(["ui", "--store", str(tmp_path / "new" / "runs.db")])
	assert not (tmp_path / "new").exists()
