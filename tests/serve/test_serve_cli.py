"""`openmolt serve AGENTS`: agent files' webhooks and schedules in one process, stopped by SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from openmolt_core.cli import main
from openmolt_core.runstore import RunStore, default_path
from openmolt_serve.signatures import sign

pytestmark = pytest.mark.timeout(120)

SECRET = "cli-webhook-secret"


def write(folder: Path) -> None:
	folder.mkdir()
	(folder / "triage.json").write_text(
		json.dumps(
			{
				"name": "Triage",
				"model": "echo:v1",
				"triggers": {"webhook": {"scheme": "github"}},
				"schedules": [{"type": "interval", "value": 0.5}],
				"input": "tick",
			}
		)
	)
	(folder / "_draft.json").write_text("not read: names starting with _ are skipped")


def wait_for(proc: subprocess.Popen[str], pattern: str, log: list[str]) -> re.Match[str]:
	deadline = time.time() + 60
	assert proc.stderr is not None
	while time.time() < deadline:
		line = proc.stderr.readline()
		if not line and proc.poll() is not None:
			break
		log.append(line)
		match = re.search(pattern, line)
		if match:
			return match
	raise AssertionError("".join(log))


def serving(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
	"""`openmolt serve ARGS --port 0` in a process of its own, its output read as text."""
	return subprocess.Popen(
		[sys.executable, "-m", "openmolt", "serve", *args, "--port", "0"],
		stdout=subprocess.PIPE,
		stderr=subprocess.PIPE,
		text=True,
		env=env,
		cwd=cwd,
	)


def test_serve_hosts_a_folders_webhooks_and_schedules_until_sigterm(tmp_path: Path) -> None:
	"""A signed POST to the printed address starts a run (202); schedules fire; the viewer serves; SIGTERM stops it."""
	write(tmp_path / "agents")
	env = {**os.environ, "OPENMOLT_TRIAGE_WEBHOOK_SECRET": SECRET}
	proc = serving(tmp_path, str(tmp_path / "agents"), env=env)
	log: list[str] = []
	try:
		url = wait_for(proc, r"POST /hooks/Triage on (http://127\.0\.0\.1:\d+)", log).group(1)
		viewer = wait_for(proc, r"run viewer: (http://127\.0\.0\.1:\d+/\?token=\S+)", log).group(1)
		assert httpx.get(viewer).status_code == 200  # the viewer, on its own port, with its token
		assert httpx.get(viewer.split("?")[0]).status_code == 403
		body = json.dumps({"action": "opened"}).encode()
		headers = {**sign("github", SECRET, body), "X-GitHub-Delivery": "cli-1"}
		response = httpx.post(f"{url}/hooks/Triage", content=body, headers=headers)
		assert response.status_code == 202, response.text
		run_id = response.json()["run_id"]
		assert httpx.post(f"{url}/hooks/Triage", content=body).status_code == 401
		time.sleep(1.5)  # at least one scheduled run
	finally:
		proc.send_signal(signal.SIGTERM)
		out, err = proc.communicate(timeout=60)
	assert proc.returncode == 0, "".join(log) + err
	assert (
		"SIGTERM received: stopping" in err and "stopped (1 agent with triggers, 1 schedule)" in err
	)
	records = [json.loads(line) for line in out.splitlines() if line.strip()]
	assert records and all(r["status"] == "success" for r in records)  # the schedule's runs
	path = default_path()
	assert path is not None
	import anyio

	stored = anyio.run(RunStore(path).run, run_id)
	assert stored is not None and stored.agent == "Triage"
	assert stored.trigger == {"kind": "webhook", "where": "Triage"}
	# one line when the trigger started the run, one when it ended: once each, without --verbose
	lines = (("".join(log)) + err).splitlines()
	assert lines.count(f"openmolt serve: run {run_id} of Triage started by webhook Triage") == 1
	ended = [line for line in lines if line.startswith(f"openmolt serve: run {run_id} of Triage:")]
	assert len(ended) == 1 and "success · 1 step" in ended[0], ended
	assert any("started by schedule" in line for line in lines)


def test_serve_verbose_prints_each_line_once(tmp_path: Path) -> None:
	"""--verbose adds the steps; no line is printed twice."""
	folder = tmp_path / "agents"
	folder.mkdir()
	(folder / "hook.json").write_text(
		json.dumps(
			{"name": "Hook", "model": "echo:v1", "triggers": {"webhook": {"scheme": "github"}}}
		)
	)
	env = {**os.environ, "OPENMOLT_HOOK_WEBHOOK_SECRET": SECRET}
	proc = serving(tmp_path, str(folder), "--no-ui", "--verbose", env=env)
	log: list[str] = []
	try:
		url = wait_for(proc, r"POST /hooks/Hook on (http://127\.0\.0\.1:\d+)", log).group(1)
		body = json.dumps({"action": "opened"}).encode()
		headers = {**sign("github", SECRET, body), "X-GitHub-Delivery": "v-1"}
		response = httpx.post(f"{url}/hooks/Hook", content=body, headers=headers)
		assert response.status_code == 202, response.text
		wait_for(proc, r"run \S+ of Hook: success", log)
	finally:
		proc.send_signal(signal.SIGTERM)
		_out, err = proc.communicate(timeout=60)
	lines = [line for line in ("".join(log) + err).splitlines() if line.strip()]
	steps = [line for line in lines if line.startswith("openmolt: ")]
	assert steps, lines  # --verbose shows the run's steps
	assert len(lines) == len(set(lines)), lines


def test_serve_and_ui_refuse_a_remote_host_without_allow_remote(
	tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""--host 0.0.0.0 (or --ui-host) is exit 2 naming --allow-remote; nothing listens."""
	hooked = tmp_path / "hooked.json"
	hooked.write_text(
		json.dumps({"name": "Hooked", "model": "echo:v1", "triggers": {"webhook": {}}})
	)
	monkeypatch.setenv("OPENMOLT_HOOKED_WEBHOOK_SECRET", "s3cret")
	for args in (["--host", "0.0.0.0", "--no-ui"], ["--ui-host", "192.0.2.1"]):
		assert main(["serve", str(hooked), "--port", "0", *args]) == 2
		err = capsys.readouterr().err
		assert "is not a loopback address" in err and "--allow-remote" in err, err
	store = tmp_path / "runs.db"
	assert main(["ui", "--store", str(store), "--host", "0.0.0.0"]) == 2
	err = capsys.readouterr().err
	assert (
		"openmolt ui: --host 0.0.0.0 is not a loopback address" in err and "--allow-remote" in err
	)


def test_serve_refuses_agents_without_triggers_and_missing_secrets(
	tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Nothing to serve, or a secret that is not set: exit 2 with what to do, before listening."""
	plain = tmp_path / "plain.json"
	plain.write_text(json.dumps({"name": "Plain", "model": "echo:v1"}))
	assert main(["serve", str(plain)]) == 2
	assert "none of these agents has triggers or schedules" in capsys.readouterr().err
	hooked = tmp_path / "hooked.json"
	hooked.write_text(
		json.dumps({"name": "Hooked", "model": "echo:v1", "triggers": {"webhook": {}}})
	)
	monkeypatch.delenv("OPENMOLT_HOOKED_WEBHOOK_SECRET", raising=False)
	assert main(["serve", str(hooked), "--port", "0", "--no-ui"]) == 2
	assert "export OPENMOLT_HOOKED_WEBHOOK_SECRET" in capsys.readouterr().err
	assert main(["serve", str(tmp_path / "missing")]) == 2
	assert "no such file or folder" in capsys.readouterr().err


def test_the_overview_lists_serve_and_bad_trigger_keys_name_their_line(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt --help` names serve; a misspelled trigger key is an error at its line."""
	assert main(["--help"]) == 0
	assert "serve" in capsys.readouterr().out
	bad = tmp_path / "bad.json"
	bad.write_text(
		'{\n  "name": "B",\n  "model": "echo:v1",\n  "triggers": {\n    "webhok": {}\n  }\n}\n'
	)
	assert main(["serve", str(bad)]) == 2
	assert (
		"bad.json:5: unknown key 'triggers.webhok'; did you mean 'webhook'?"
		in capsys.readouterr().err
	)


def test_a_python_files_bad_schedule_names_the_file_and_its_place(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""An agent.py's schedule that is wrong stops serve with the file and ``schedules[N]``."""
	bad = tmp_path / "bad.py"
	bad.write_text(
		"schedules = [{'type': 'cron', 'expresion': '0 9 * * *'}]\n"
		"def agent(om):\n"
		"    return om.create_agent(name='Py', model='echo:v1')\n"
	)
	assert main(["serve", str(bad), "--port", "0", "--no-ui"]) == 2
	assert (
		f"{bad}: schedules[0]: missing key 'expression'; unknown key 'expresion'"
		in capsys.readouterr().err
	)


def test_python_agent_files_define_triggers(tmp_path: Path) -> None:
	"""A Python file's `triggers` dict is read and checked like a JSON file's."""
	from openmolt_core.cli._agentfile import AgentFileError
	from openmolt_core.cli._run import load
	from openmolt_core.triggers import Triggers

	good = tmp_path / "good.py"
	good.write_text(
		"def agent(om):\n"
		"    return om.create_agent(name='Py', model='echo:v1')\n"
		"triggers = {'webhook': {'scheme': 'stripe', 'secretEnv': 'STRIPE_WHSEC'}}\n"
	)
	loaded = load(str(good), env_file=None, verbose=False)
	assert isinstance(loaded.triggers, Triggers)
	assert loaded.triggers.webhook is not None and loaded.triggers.webhook.scheme == "stripe"
	bad = tmp_path / "bad.py"
	bad.write_text(
		"def agent(om):\n"
		"    return om.create_agent(name='Py', model='echo:v1')\n"
		"triggers = {'webhook': {'scheme': 'paypal'}}\n"
	)
	with pytest.raises(
		AgentFileError, match=r"bad.py: triggers.webhook.scheme: Input should be .hmac."
	):
		load(str(bad), env_file=None, verbose=False)


def test_served_agents_park_their_questions_instead_of_asking_the_terminal(tmp_path: Path) -> None:
	"""A served agent's question parks its run (the chat or the viewer answers), never reads stdin."""
	from openmolt import HumanInputUnavailable
	from openmolt_serve.cli import _load

	file = tmp_path / "asker.json"
	file.write_text(json.dumps({"name": "Asker", "model": "echo:v1", "schedules": []}))
	[one] = _load([str(file)], env_file=None, verbose=False)
	handler = one.agent.on_human_input_request
	assert handler is not None
	with pytest.raises(HumanInputUnavailable):
		handler("Which one?")


def test_serve_refuses_a_limit_that_is_not_positive(
	tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""--max-connections 0 (or a timeout of 0) is exit 2, naming the setting, before listening."""
	hooked = tmp_path / "hooked.json"
	hooked.write_text(
		json.dumps({"name": "Hooked", "model": "echo:v1", "triggers": {"webhook": {}}})
	)
	monkeypatch.setenv("OPENMOLT_HOOKED_WEBHOOK_SECRET", "s3cret")
	for flag in ("--max-connections", "--header-timeout", "--body-timeout"):
		assert main(["serve", str(hooked), "--port", "0", "--no-ui", flag, "0"]) == 2
		name = flag.removeprefix("--").replace("-", "_")
		assert f"{name} must be more than 0" in capsys.readouterr().err


def test_serve_hosts_an_agent_files_agui_endpoint_and_a2a_server(tmp_path: Path) -> None:
	"""An agent file with agui and a2a triggers: both routes are printed and answer with the token."""
	(tmp_path / "helper.json").write_text(
		json.dumps(
			{
				"name": "Helper",
				"model": "echo:v1",
				"triggers": {"agui": {}, "a2a": {"description": "Echoes."}},
			}
		)
	)
	env = {
		**os.environ,
		"OPENMOLT_HELPER_AGUI_TOKEN": "cli-agui-token-123",
		"OPENMOLT_HELPER_A2A_TOKEN": "cli-a2a-token-456",
	}
	proc = serving(tmp_path, str(tmp_path / "helper.json"), "--no-ui", env=env)
	log: list[str] = []
	try:
		url = wait_for(proc, r"POST /agui/Helper on (http://127\.0\.0\.1:\d+)", log).group(1)
		wait_for(proc, r"A2A /a2a/Helper/ on", log)
		card = httpx.get(f"{url}/a2a/Helper/.well-known/agent-card.json").json()
		assert card["description"] == "Echoes."
		run = {
			"threadId": "t",
			"runId": "r",
			"messages": [{"id": "m", "role": "user", "content": "hi"}],
		}
		refused = httpx.post(f"{url}/agui/Helper", json=run)
		assert refused.status_code == 401
		headers = {"Authorization": "Bearer cli-agui-token-123"}
		response = httpx.post(f"{url}/agui/Helper", json=run, headers=headers, timeout=30)
		assert response.status_code == 200, response.text
		kinds = [
			json.loads(line[6:])["type"]
			for line in response.text.splitlines()
			if line.startswith("data: ")
		]
		assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED", kinds
	finally:
		proc.send_signal(signal.SIGTERM)
		out, err = proc.communicate(timeout=60)
	assert proc.returncode == 0, "".join(log) + err
	assert "cli-agui-token-123" not in "".join(log) + err + out


@pytest.mark.anyio
async def test_a_runs_line_is_one_line_without_control_characters(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""A run's error holds words from outside (a model, a page): its newline cannot forge a line
	of its own, nor its escape sequence reach the terminal."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_serve import cli
	from openmolt_serve._lines import RunLines

	def forged(request: object) -> dict[str, object]:
		raise RuntimeError("boom\nopenmolt serve: run x of Triage: success\x1b[2J\x1b]0;owned\x07")

	om = OpenMolt(entry_points=False)
	om.observers.append(RunLines(cli._line))
	agent = om.create_agent(name="Triage", model=ScriptedModel([forged]))
	with pytest.raises(Exception):  # noqa: B017 - the run's own error
		await agent.run("go")
	await om.aclose()
	err = capsys.readouterr().err
	lines = err.splitlines()
	assert len(lines) == 2 and all(line.startswith("openmolt serve: run ") for line in lines)
	assert "\x1b" not in err and "\x07" not in err
	assert "boom\\nopenmolt serve: run x" in lines[1]


@pytest.mark.anyio
async def test_a_runs_line_says_a_partial_cost_as_the_cli_does(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""A run whose sub-agent's model had no price: its line shows the cost as a lower bound and
	how many calls it leaves out, the words of the CLI's summary (one source for both)."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_serve import cli
	from openmolt_serve._lines import RunLines

	om = OpenMolt(entry_points=False)
	om.observers.append(RunLines(cli._line))
	sub = om.create_agent(name="helper", model=ScriptedModel([finish(result="4")]))
	model = ScriptedModel(
		[call_tool("local.helper", task="2+2"), finish(result="4")], price=(1.0, 0.1, 2.0, None)
	)
	agent = om.create_agent(name="Triage", model=model, tools=[sub])
	result = await agent.run("go")
	await om.aclose()
	ended = capsys.readouterr().err.splitlines()[-1]
	assert f"${result.usage.cost_usd:.4f}+ (1 call unpriced)" in ended


def test_serve_shows_the_librarys_warnings_without_verbose(tmp_path: Path) -> None:
	"""A secret read from its former variable is said on stderr by a plain `openmolt serve`, as
	one line of the command's (not only with --verbose), never with its value."""
	(tmp_path / "bot.json").write_text(
		json.dumps(
			{
				"name": "supportBot",
				"model": "echo:v1",
				"triggers": {"webhook": {"scheme": "github"}},
			}
		)
	)
	env = {**os.environ, "OPENMOLT_SUPPORTBOT_WEBHOOK_SECRET": "former-secret-value-1"}
	env.pop("OPENMOLT_SUPPORT_BOT_WEBHOOK_SECRET", None)
	proc = serving(tmp_path, str(tmp_path / "bot.json"), env=env)
	log: list[str] = []
	try:
		wait_for(proc, r"POST /hooks/supportBot on", log)
	finally:
		proc.send_signal(signal.SIGTERM)
		_, err = proc.communicate(timeout=60)
	said = "".join(log) + err
	assert "OPENMOLT_SUPPORTBOT_WEBHOOK_SECRET, its former name" in said, said
	assert "rename the variable OPENMOLT_SUPPORT_BOT_WEBHOOK_SECRET" in said
	assert "former-secret-value-1" not in said


def test_a_second_ctrl_c_while_stopping_is_said_not_a_crash(tmp_path: Path) -> None:
	"""SIGINT twice in a row: serve stops once and exits 0, with no traceback."""
	write(tmp_path / "agents")
	env = {**os.environ, "OPENMOLT_TRIAGE_WEBHOOK_SECRET": SECRET}
	proc = serving(tmp_path, str(tmp_path / "agents"), env=env)
	log: list[str] = []
	try:
		wait_for(proc, r"POST /hooks/Triage on", log)
		wait_for(proc, r"of Triage started by schedule", log)  # a run under way
	finally:
		proc.send_signal(signal.SIGINT)
		time.sleep(0.05)
		proc.send_signal(signal.SIGINT)
		_, err = proc.communicate(timeout=60)
	said = "".join(log) + err
	assert proc.returncode == 0, said
	assert "Traceback" not in said and "RuntimeError" not in said, said
	assert "SIGINT received: stopping" in said


def test_serve_names_every_agent_file_it_cannot_serve_at_once(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt serve .` stopped at the first bad file: a folder with two said one, and the
	other was found only after fixing it and starting again. Each is named, once, exit 2; a
	folder with one bad file says its error as before."""
	folder = tmp_path / "agents"
	write(folder)
	(folder / "broken.json").write_text("{not json")
	(folder / "twin.json").write_text((folder / "triage.json").read_text())
	(folder / "typo.json").write_text(
		json.dumps({"name": "Typo", "model": "echo:v1", "triggers": {"webhok": {}}})
	)
	assert main(["serve", str(folder), "--port", "0"]) == 2
	err = capsys.readouterr().err
	assert "3 agent files cannot be served" in err
	assert "broken.json" in err and "typo.json" in err and "webhok" in err
	assert "already defines an agent named 'Triage'" in err
	(folder / "broken.json").unlink()
	(folder / "twin.json").unlink()
	assert main(["serve", str(folder), "--port", "0"]) == 2
	err = capsys.readouterr().err
	assert "cannot be served" not in err and "typo.json" in err and "webhok" in err


@pytest.mark.allow_model_requests  # to 127.0.0.1, where nothing listens
@pytest.mark.anyio
@pytest.mark.parametrize("command", ["serve", "ui"])
async def test_a_served_agent_file_s_runs_record_errors_as_the_agent_file_spells_them(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
	"""`openmolt serve` (and `openmolt ui FILE`) recorded "fix llm_providers['local']['base_url']"
	for a served agent file's failed run, where `openmolt FILE` records "llmProviders.local.baseUrl
	in the agent file": their run stores had no voice (`openmolt_core.agentfile.error_voice`)."""
	import socket

	from openmolt_core.errors import RunError
	from openmolt_serve import cli as serve_cli
	from openmolt_ui import cli as ui_cli

	with socket.socket() as sock:
		sock.bind(("127.0.0.1", 0))
		url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # nothing listens there
	local = {"provider": "openai", "baseUrl": url, "apiMode": "chat"}
	file = tmp_path / "down.json"
	file.write_text(
		json.dumps({"name": "Down", "model": "local:m", "llmProviders": {"local": local}})
	)
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(tmp_path / "runs.db"))
	if command == "serve":
		[one] = serve_cli._load([str(file)], env_file=None, verbose=False)
	else:
		one = ui_cli._load(str(file), None, tmp_path / "runs.db")
	with pytest.raises(RunError) as failed:
		await one.agent.run("hi")
	assert "llm_providers['local']['base_url']" in str(failed.value)  # Python's, to Python
	store = RunStore(tmp_path / "runs.db")
	[stored] = await store.runs()
	said = [stored.error or ""]
	said += [e.data["message"] for e in await store.events(stored.run_id) if e.name == "error"]
	assert len(said) == 2, said
	for text in said:
		assert "llmProviders.local.baseUrl in the agent file" in text, text
		assert "llm_providers" not in text, text
