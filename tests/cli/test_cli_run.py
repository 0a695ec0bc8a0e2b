import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_json_agent_runs_once_and_prints_its_result(tmp_path, server, cli) -> None:
	"""The result is JSON on stdout, progress lines on stderr, exit code 0."""
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	result = json.loads(done.stdout)
	assert result["status"] == "success"
	assert result["output"] == {"greeting": "Hello, Ada!"}
	assert result["usage"]["input_tokens"] == 100
	assert "Greeter finished: success after 1 step," in done.stderr
	assert server.keys == ["Bearer env-key"]


def test_the_console_script_works_too(tmp_path, server, cli) -> None:
	"""The installed `openmolt` script runs the same command."""
	script = Path(sys.executable).parent / "openmolt"
	path = cli.agent_file(tmp_path, server)
	done = subprocess.run(
		[str(script), str(path), "--input", "Grace"],
		cwd=tmp_path,
		env=cli.clean_env(**{cli.KEY_VAR: "k"}),
		capture_output=True,
		text=True,
		timeout=60,
	)
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Grace!"}


def test_input_is_json_when_it_parses(tmp_path, server, cli) -> None:
	"""--input '{"name": ...}' reaches the model as an object."""
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), "--input", '{"name": "Linus"}', cwd=tmp_path)
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Linus!"}
	first = json.loads(server.requests[0]["body"]["input"][0]["content"])
	assert first["input"] == {"name": "Linus"}


def test_json_events_are_json_lines_on_stderr(tmp_path, server, cli) -> None:
	"""--json prints one JSON event per stderr line; stdout keeps only the result."""
	path = cli.agent_file(tmp_path, server, "plan")
	done = cli.openmolt(str(path), "--json", cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	events = [json.loads(line) for line in done.stderr.splitlines()]
	names = [e["event"] for e in events]
	assert names == ["llmOutput", "planUpdate", "llmOutput", "finish"]
	assert [(s["name"], s["status"]) for s in events[1]["plan"]] == [("Say hello", "inProgress")]
	assert events[-1]["result"]["status"] == "success"
	assert json.loads(done.stdout)["plan"][0]["name"] == "Say hello"


def test_a_failed_run_exits_non_zero_with_the_partial_result(tmp_path, server, cli) -> None:
	"""A provider failure prints the partial result and exits with 5 (error)."""
	path = cli.agent_file(tmp_path, server, "broken")
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 5
	assert json.loads(done.stdout)["status"] == "error"
	assert "the run failed" in done.stderr and "500" in done.stderr
	assert "the fake model is broken" in done.stderr


PY_FACTORY = """
from openmolt_core.cli import ask_on_terminal

input = "Hopper"


def agent(om):
	om.llm_providers["{provider}"] = {{"base_url": "{url}"}}
	return om.create_agent(
		name="PyGreeter",
		model="{provider}:greet",
		instructions="Greet.",
		output_schema={{"type": "object", "properties": {{"greeting": {{"type": "string"}}}}}},
		on_human_input_request=ask_on_terminal,
	)
"""

PY_INSTANCE = """
from openmolt import OpenMolt

om = OpenMolt(llm_providers={{"{provider}": {{"base_url": "{url}"}}}})
agent = om.create_agent(name="PyGreeter", model="{provider}:greet", instructions="Greet.")
schedules = [{{"type": "interval", "value": 0.3}}]
input = "Lovelace"
"""


def test_a_python_agent_file_runs_once(tmp_path, server, cli) -> None:
	"""A Python file's `agent(om)` and `input` are used; the key comes from the environment."""
	path = tmp_path / "greeter.py"
	path.write_text(PY_FACTORY.format(provider=cli.PROVIDER, url=server.url))
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Hopper!"}
	assert server.keys == ["Bearer env-key"]


def test_a_python_agent_file_with_schedules_serves_them(tmp_path, server, cli) -> None:
	"""A module-level `agent` and `schedules` run on the interval until SIGINT."""
	path = tmp_path / "ticker.py"
	path.write_text(PY_INSTANCE.format(provider=cli.PROVIDER, url=server.url))
	running = cli.Running(str(path), cwd=tmp_path)
	records = running.wait_for("stdout", '"status": "success"', count=2)
	running.proc.send_signal(signal.SIGINT)
	assert running.finish() == 0
	first = json.loads(records[0])
	assert first["agent"] == "PyGreeter"
	assert first["result"]["output"] == {"greeting": "Hello, Lovelace!"}
	assert running.lines["stderr"][-1] == "openmolt: stopped"


def test_a_json_agent_with_a_schedule_runs_on_time_and_stops_on_sigint(
	tmp_path, server, cli
) -> None:
	"""It prints the next run time, one JSON record per run, and exits 0 on Ctrl-C."""
	path = cli.agent_file(tmp_path, server, schedules=[{"type": "interval", "value": 0.4}])
	running = cli.Running(str(path), cwd=tmp_path)
	schedule_line = running.wait_for("stderr", "every 0.4 s; next run")[0]
	records = [json.loads(r) for r in running.wait_for("stdout", '"schedule_id"', count=3)]
	running.proc.send_signal(signal.SIGINT)
	assert running.finish() == 0
	assert schedule_line.startswith("openmolt: schedule greeter-")
	assert [r["status"] for r in records[:3]] == ["success"] * 3
	assert records[0]["result"]["output"] == {"greeting": "Hello, Ada!"}
	dues = [r["due"] for r in records[:3]]
	assert len(set(dues)) == 3
	assert any("SIGINT received: stopping" in line for line in running.lines["stderr"])
	assert running.lines["stderr"][-1] == "openmolt: stopped"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_schedules_stop_on_a_signal_that_comes_as_they_start(
	tmp_path, server, cli, monkeypatch, sig
) -> None:
	"""A signal handed on as soon as the watcher starts stops the schedules (exit 0, as a
	server ends): the watcher started before the scheduler lost it, and the command served on."""
	import anyio

	from openmolt_core.cli import _run

	async def signalled(on_signal, *, task_status=anyio.TASK_STATUS_IGNORED) -> None:
		task_status.started()
		on_signal(sig, 1)  # as the signal receiver hands it on
		await anyio.sleep_forever()

	monkeypatch.setattr(_run, "_watch_signals", signalled)
	path = cli.agent_file(tmp_path, server, schedules=[{"type": "interval", "value": 3600}])
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	assert f"{sig.name} received: stopping" in done.stderr
	assert done.stderr.splitlines()[-1] == "openmolt: stopped"
	assert done.stdout == ""


@pytest.mark.parametrize(
	("options", "status", "sig"),
	[((), "success", signal.SIGINT), (("--on-stop", "cancel"), "cancelled", signal.SIGTERM)],
)
def test_stopping_with_a_run_in_flight_finishes_or_cancels_it(
	tmp_path, server, cli, options, status, sig
) -> None:
	"""By default the run in flight finishes; with --on-stop cancel it is cancelled."""
	path = cli.agent_file(tmp_path, server, "slow", schedules=[{"type": "interval", "value": 0.2}])
	running = cli.Running(str(path), *options, cwd=tmp_path)
	running.wait_for("stderr", "scheduled run")
	running.proc.send_signal(sig)
	assert running.finish() == 0
	records = [json.loads(line) for line in running.lines["stdout"]]
	assert [r["status"] for r in records] == [status]
	assert any(f"{sig.name} received: stopping" in line for line in running.lines["stderr"])


def test_ctrl_c_during_a_single_run_exits_130(tmp_path, server, cli) -> None:
	"""SIGINT cancels a single run cleanly: no traceback, exit code 130."""
	path = cli.agent_file(tmp_path, server, "slow")
	running = cli.Running(str(path), cwd=tmp_path)
	running.wait_for("stderr", "starting with")
	running.proc.send_signal(signal.SIGINT)
	assert running.finish() == 130
	assert "SIGINT received: the run was cancelled" in running.lines["stderr"][-1]
	assert not any("Traceback" in line for line in running.lines["stderr"])
	assert running.lines["stdout"] == []


def test_ctrl_c_while_a_sync_tool_runs_says_why_it_waits_and_again_ends_it(
	tmp_path, server, cli
) -> None:
	"""A sync tool cannot be stopped: the command says it waits for it, and a 2nd Ctrl-C quits.

	It hung without a word until the tool returned, and the second Ctrl-C printed a traceback
	from the interpreter's threading._shutdown.
	"""
	(tmp_path / "slowtools.py").write_text(
		"import sys, time\n"
		"def slow() -> str:\n"
		'    """Take long."""\n'
		"    print('tool started', file=sys.stderr, flush=True)\n"
		"    time.sleep(60)\n"
		"    return 'late'\n"
	)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_OPENAI_BASE_URL": server.url})
	running = cli.Running(
		"-m", "openai:call:local.slow", "--tool", "slowtools:slow", "hi", cwd=tmp_path, env=env
	)
	running.wait_for("stderr", "tool started")
	running.proc.send_signal(signal.SIGINT)
	running.wait_for("stderr", "still running (a sync tool cannot be stopped)")
	started = time.monotonic()
	running.proc.send_signal(signal.SIGINT)
	assert running.finish(timeout=20) == 130
	assert time.monotonic() - started < 10  # not the tool's 60 s
	assert not any("Traceback" in line for line in running.lines["stderr"]), running.lines


def test_human_input_without_a_terminal_ends_the_run(tmp_path, server, cli) -> None:
	"""requestHumanInput with no terminal ends with status human_input_required, exit 4."""
	path = cli.agent_file(tmp_path, server, "ask")
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 4
	result = json.loads(done.stdout)
	assert result["status"] == "human_input_required"
	assert "What is your name?" in result["error"]


def test_human_input_on_a_terminal_asks_and_continues(tmp_path, server, cli) -> None:
	"""With a terminal on stdin, the question is asked and the answer reaches the agent."""
	path = cli.agent_file(tmp_path, server, "ask")
	primary, secondary = pty.openpty()
	proc = subprocess.Popen(
		[sys.executable, "-m", "openmolt", str(path)],
		cwd=tmp_path,
		env=cli.clean_env(**{cli.KEY_VAR: "k"}),
		stdin=secondary,
		stdout=subprocess.PIPE,
		stderr=subprocess.PIPE,
		text=True,
	)
	os.close(secondary)
	os.write(primary, b"Grace\n")
	out, err = proc.communicate(timeout=60)
	os.close(primary)
	assert proc.returncode == 0, err
	assert json.loads(out)["output"] == {"greeting": "Hello, Grace!"}
	assert "What is your name?" in err


@pytest.mark.parametrize("where", ["env", "dotenv", "file"])
def test_keys_come_from_env_then_dotenv_then_the_file(tmp_path, server, cli, where) -> None:
	"""The environment wins over .env, which wins over the agent file; verbose names the source only."""
	providers = {cli.PROVIDER: {"baseUrl": server.url, "apiKey": "file-key"}}
	path = cli.agent_file(tmp_path, server, llmProviders=providers)
	env = cli.clean_env()
	if where in ("env", "dotenv"):
		(tmp_path / ".env").write_text(f"# keys\nexport {cli.KEY_VAR}='dotenv-key'\n")
	if where == "env":
		env[cli.KEY_VAR] = "env-key"
	done = cli.openmolt(str(path), "--verbose", cwd=tmp_path, env=env)
	assert done.returncode == 0, done.stderr
	assert server.keys == [f"Bearer {where}-key"]
	source = {
		"env": f"from environment variable {cli.KEY_VAR}",
		"dotenv": f"from .env ({cli.KEY_VAR})",
		"file": f"from {path} (llmProviders.{cli.PROVIDER}.apiKey)",
	}[where]
	assert f"openmolt: key for {cli.PROVIDER}: {source}" in done.stderr
	assert "-key" not in done.stderr.replace(f"{cli.PROVIDER}.apiKey", "")


PY_TOOL = """
from openmolt import FunctionTool

tool = FunctionTool(
	handle="shout",
	description="Upper-case a text.",
	function=lambda i, c: i["text"].upper(),
	input_schema={{"type": "object", "properties": {{"text": {{"type": "string"}}}}}},
)


def agent(om):
	return om.create_agent(name="Shouter", model="{provider}:greet", instructions="Shout.", tools=[tool])
"""


def test_dry_run_prints_the_prompt_tools_and_estimate_without_calling_the_model(
	tmp_path, server, cli
) -> None:
	"""--dry-run shows the maestro prompt, the first message, the tools and a token estimate."""
	path = tmp_path / "shouter.py"
	path.write_text(PY_TOOL.format(provider=cli.PROVIDER))
	done = cli.openmolt(
		str(path), "--dry-run", "--input", "Grace", cwd=tmp_path, env=cli.clean_env()
	)
	assert done.returncode == 0, done.stderr
	out = done.stdout
	assert "=== maestro prompt (system) ===" in out and '"commands"' in out
	assert '"input":"Grace"' in out
	assert "=== tools the agent sees (1) ===\n  local.shout: Upper-case a text." in out
	assert "(characters / 4, a rough estimate; the reply schema is" in out
	assert f"price of {cli.PROVIDER}:greet unknown" in out
	assert server.requests == []


def test_dry_run_json_gives_numbers(tmp_path, server, cli) -> None:
	"""--dry-run --json is one JSON object with the estimate."""
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), "--dry-run", "--json", cwd=tmp_path, env=cli.clean_env())
	data = json.loads(done.stdout)
	assert data["estimated_tokens"] == (data["characters"] + 3) // 4
	assert data["tools"] == []


def test_the_dry_run_estimate_is_close_to_what_a_run_sends(tmp_path, server, cli) -> None:
	"""The estimate counts the reply schema: within 15% of the first request's body."""
	path = cli.agent_file(tmp_path, server)
	dry = cli.openmolt(str(path), "--dry-run", "--json", cwd=tmp_path, env=cli.clean_env())
	data = json.loads(dry.stdout)
	assert data["schema_characters"] > 0
	ran = cli.openmolt(str(path), cwd=tmp_path)
	assert ran.returncode == 0, ran.stderr
	sent = len(json.dumps(server.requests[0]["body"], ensure_ascii=False, separators=(",", ":")))
	assert abs(data["characters"] - sent) / sent < 0.15, (data["characters"], sent)


def test_the_readme_starts_with_the_hello_example() -> None:
	"""The README's first command runs examples/hello.json."""
	readme = (ROOT / "README.md").read_text()
	first = next(line for line in readme.splitlines() if line.startswith("uv run openmolt"))
	assert first.split("#")[0].strip() == "uv run openmolt examples/hello.json"
