"""The command line as a new user meets it: subcommands, hints, pipes, exit codes, schedules."""

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def user_env(cli) -> dict[str, str]:
	"""The environment of a user's shell: no test plugin on PYTHONPATH."""
	env = cli.clean_env()
	env.pop("PYTHONPATH", None)
	return env


def test_a_bare_openmolt_lists_the_subcommands_and_the_exit_codes(tmp_path, cli) -> None:
	"""`openmolt` alone shows every command, how to run a file, and what each exit code means."""
	from openmolt_core.cli._exit import EXIT_CODES

	done = cli.openmolt(cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	for command in ("run", "schedules", "plugins", "tools", "schema"):
		assert re.search(rf"^  {command} +\S", done.stdout, re.M), command
	assert "openmolt FILE" in done.stdout
	flat = " ".join(done.stdout.split())  # the help wraps to the terminal (80 columns here)
	for code, text in EXIT_CODES.items():
		assert re.search(rf"^ *{int(code)}  \S", done.stdout, re.M), code
		assert " ".join(f"{int(code)} {text}".split()) in flat
	assert cli.openmolt("--help", cwd=tmp_path).stdout == done.stdout


def test_version(tmp_path, cli) -> None:
	"""`openmolt --version` prints the version and exits 0."""
	from openmolt_core import __version__

	done = cli.openmolt("--version", cwd=tmp_path)
	assert done.returncode == 0
	assert done.stdout.startswith(f"openmolt {__version__} ")


@pytest.mark.parametrize("name", ["tools", "plugins", "schema", "schedules"])
def test_subcommands_win_over_files_and_folders_of_the_same_name(
	tmp_path, server, cli, name
) -> None:
	"""A file or folder named like a subcommand does not hide it; `run NAME` runs such a file."""
	(tmp_path / "tools").mkdir()
	for file in ("plugins", "schema", "schedules"):
		(tmp_path / file).write_text("{}")
	done = cli.openmolt(name, *(["--help"] if name == "schedules" else []), cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	expected = {
		"tools": "integrations; `openmolt tools ID`",
		"plugins": "providers:",
		"schema": '"$schema"',
		"schedules": "usage: openmolt schedules",
	}[name]
	assert expected in done.stdout
	agent = cli.agent_file(tmp_path, server)
	(tmp_path / "agent.json").rename(tmp_path / "plugins.json")
	for args in (["run", "plugins.json"], ["plugins.json"]):
		ran = cli.openmolt(*args, cwd=tmp_path)
		assert ran.returncode == 0, ran.stderr
		assert json.loads(ran.stdout)["status"] == "success"
	assert agent.name == "agent.json"


def test_tools_without_an_id_lists_every_integration(tmp_path, cli) -> None:
	"""`openmolt tools` lists each integration with its name, tool count and distribution."""
	done = cli.openmolt("tools", cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	assert re.search(r"^  notion +Notion, \d+ tools +\(openmolt-integrations ", done.stdout, re.M)
	assert re.search(r"^  httpRequest +HTTP Request, 1 tool +\(openmolt-core ", done.stdout, re.M)
	data = json.loads(cli.openmolt("tools", "--json", cwd=tmp_path).stdout)
	rows = {r["integration"]: r for r in data}
	assert rows["weather"]["tools"] == 1 and rows["weather"]["distribution"] == "openmolt-weather"
	assert rows["empty"]["tools"] is None and "registered no integration" in rows["empty"]["error"]


def test_integrations_is_tools_by_the_name_a_new_user_types(tmp_path, cli) -> None:
	"""`openmolt integrations [ID]` lists what `openmolt tools [ID]` does ('no such command' before)."""
	for args in ((), ("s3",), ("--json",)):
		done = cli.openmolt("integrations", *args, cwd=tmp_path)
		assert done.returncode == 0, done.stderr
		assert done.stdout == cli.openmolt("tools", *args, cwd=tmp_path).stdout
	assert re.search(r"^  integrations +\S", cli.openmolt(cwd=tmp_path).stdout, re.M)


def test_test_only_plugins_never_show_to_users_and_built_ins_do(tmp_path, cli) -> None:
	"""Outside the test session, `openmolt plugins` lists the built-ins and no test double."""
	# One process without the test plugins on sys.path runs both commands (a second costs 1 s).
	code = (
		"import sys\n"
		"from openmolt_core.cli import main\n"
		"codes = [main(['plugins', '--json'])]\n"
		"print('\\n--8<--')\n"
		"codes.append(main(['tools', 'notion']))\n"
		"print(codes, file=sys.stderr)\n"
	)
	done = subprocess.run(
		[sys.executable, "-c", code],
		cwd=tmp_path,
		env=user_env(cli),
		capture_output=True,
		text=True,
		timeout=60,
	)
	assert done.stderr.splitlines()[-1] == "[0, 0]", done.stderr
	plugins, tools = done.stdout.split("\n--8<--\n")
	names = {(p["group"], p["name"]): p["distribution"] for p in json.loads(plugins)}
	assert names[("integrations", "notion")] == "openmolt-integrations"
	assert names[("providers", "openai")] == "openmolt-providers"
	assert {"weather", "echo", "fakeai", "empty"}.isdisjoint(n for _, n in names)
	assert "openmolt-weather" not in names.values()
	assert tools.startswith("Notion (notion)") and "notion." in tools


def test_a_closed_pipe_ends_quietly(tmp_path, cli) -> None:
	"""`openmolt tools notion | head -2`: no BrokenPipeError, exit code 141, nothing on stderr."""
	read, write = os.pipe()
	fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)  # smaller than the output, whatever the timing
	proc = subprocess.Popen(
		[sys.executable, "-m", "openmolt", "tools", "notion"],
		cwd=tmp_path,
		env=cli.clean_env(),
		stdout=write,
		stderr=subprocess.PIPE,
		text=True,
	)
	os.close(write)
	# Unbuffered, a few bytes: a buffered reader could take the whole output (about 5 KB) before
	# it closes, and the command would never meet the closed pipe.
	with os.fdopen(read, "rb", buffering=0) as stdout:
		head = stdout.read(64).decode()
	_, err = proc.communicate(timeout=60)
	assert head.startswith("Notion (notion)")
	assert err == ""
	assert proc.returncode == 141


@pytest.mark.parametrize(
	("args", "expected", "unexpected"),
	[
		(["tools", "notionn"], "no such integration; did you mean 'notion'?", "install"),
		(["tools", "weather2"], "no such integration; did you mean 'weather'?", "install"),
		(
			["tools", "empty"],
			"its plugin is installed but registered no integration 'empty'",
			"pip install",
		),
	],
)
def test_hints_for_missing_integrations_are_right(
	tmp_path, cli, args, expected, unexpected
) -> None:
	"""A typo gets "did you mean"; an unknown id gets no install command that would do nothing."""
	done = cli.openmolt(*args, cwd=tmp_path)
	assert done.returncode == 2
	assert expected in done.stderr
	assert unexpected not in done.stderr.split("(available")[0]


def test_an_unknown_third_party_id_gets_no_install_command(tmp_path, cli) -> None:
	"""With nothing close installed, `weather2` is told how to add it, never `pip install`."""
	done = cli.openmolt("tools", "weather2", cwd=tmp_path, env=user_env(cli), process=True)
	assert done.returncode == 2
	message = done.stderr.split("(available")[0]
	assert "no installed plugin and no built-in has this id" in message
	assert "om.register_integration('weather2', ...)" in message
	assert "pip install" not in message and "uv add" not in message


def test_the_extras_spelling_names_the_installed_integration(tmp_path, cli) -> None:
	"""`tools google-drive` shows googleDrive, installed as the openmolt[google-drive] extra."""
	done = cli.openmolt("tools", "google-drive", cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	assert done.stdout.startswith("Google Drive (googleDrive)")
	assert "googleDrive.listFiles" in done.stdout


def test_a_provider_typo_gets_did_you_mean(tmp_path, cli) -> None:
	"""`opnai:gpt-5` is told about `openai`, not to install a package that is installed."""
	(tmp_path / "a.json").write_text('{"name": "x", "model": "opnai:gpt-5-mini"}')
	done = cli.openmolt("a.json", cwd=tmp_path)
	assert done.returncode == 2
	assert "providers:opnai: no such model provider; did you mean 'openai'?" in done.stderr
	assert "pip install" not in done.stderr and "uv add" not in done.stderr


def test_sigterm_during_a_single_run_exits_143(tmp_path, server, cli) -> None:
	"""SIGTERM cancels a single run and exits 143 (128 + 15), as the convention is."""
	path = cli.agent_file(tmp_path, server, "slow")
	running = cli.Running(str(path), cwd=tmp_path)
	running.wait_for("stderr", "starting with")
	running.proc.send_signal(signal.SIGTERM)
	assert running.finish() == 143
	assert "SIGTERM received: the run was cancelled" in running.lines["stderr"][-1]


def test_a_run_out_of_steps_exits_3(tmp_path, server, cli) -> None:
	"""A run that ends with limit_reached has its own exit code."""
	path = cli.agent_file(tmp_path, server, "loop", maxSteps=1)
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert json.loads(done.stdout)["status"] == "limit_reached"
	assert done.returncode == 3
	assert "the run ended with status limit_reached" in done.stderr


def test_the_exit_codes_in_the_docs_are_the_commands(tmp_path) -> None:
	"""docs/cli.md's exit-code table lists exactly the codes of ExitCode, with their meaning."""
	from openmolt_core.cli._exit import EXIT_CODES

	text = (ROOT / "docs" / "cli.md").read_text()
	rows = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", text, re.M))
	assert rows == {str(int(code)): meaning for code, meaning in EXIT_CODES.items()}


SCHEDULED = {
	"schedules": [
		{"type": "daily", "hour": 9, "minute": 30, "timeZone": "Europe/Paris", "dayOfWeek": [1]},
		{"type": "cron", "expression": "0 */6 * * *", "timeZone": "America/New_York"},
		{"type": "interval", "value": 90, "paused": True},
	]
}


def test_schedules_lists_the_next_fire_times_in_each_schedules_zone(tmp_path, server, cli) -> None:
	"""`openmolt schedules FILE -n 3` gives three times per schedule, in its own zone; no model."""
	path = cli.agent_file(tmp_path, server, **SCHEDULED)
	done = cli.openmolt(
		"schedules", str(path), "-n", "3", "--json", cwd=tmp_path, env=cli.clean_env()
	)
	assert done.returncode == 0, done.stderr
	paris, york, paused = json.loads(done.stdout)
	assert paris["timeZone"] == "Europe/Paris" and york["timeZone"] == "America/New_York"
	times = [datetime.fromisoformat(t) for t in paris["next"]]
	assert len(times) == 3 and times == sorted(times)
	assert all((t.weekday(), t.hour, t.minute) == (0, 9, 30) for t in times)
	assert {t.utcoffset().total_seconds() for t in times} <= {3600.0, 7200.0}
	hours = [datetime.fromisoformat(t) for t in york["next"]]
	assert all(h.hour % 6 == 0 and h.minute == 0 for h in hours)
	assert {h.utcoffset().total_seconds() for h in hours} <= {-4 * 3600.0, -5 * 3600.0}
	assert paused["paused"] is True and paused["next"] == []
	text = cli.openmolt("schedules", str(path), cwd=tmp_path, env=cli.clean_env())
	assert "daily at 09:30 on Mon (Europe/Paris)" in text.stdout
	assert re.search(r"^  Mon \d{4}-\d\d-\d\d 09:30:00 CES?T$", text.stdout, re.M)
	assert server.requests == []


def test_schedules_names_each_schedule_as_the_runs_do(tmp_path, server, cli) -> None:
	"""The ids `openmolt schedules` prints are those serving the file registers (its input too)."""
	from openmolt_core.cli._run import load
	from openmolt_serve.cli import _schedule

	path = cli.agent_file(tmp_path, server, **SCHEDULED)  # the file has an input: "Ada"
	done = cli.openmolt("schedules", str(path), "--json", cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 0, done.stderr
	listed = [row["id"] for row in json.loads(done.stdout)]
	loaded = load(str(path), env_file=None, verbose=False)
	served = _schedule(loaded)
	assert listed == served
	# Registered, never served: removed here, or they warn "never ran" when the suite exits.
	for schedule_id in served:
		loaded.om.scheduler.cancel(schedule_id)
	assert loaded.om.schedules == []


def test_no_next_run_is_announced_after_a_stop(tmp_path, server, cli) -> None:
	"""The run in flight at Ctrl-C finishes and is reported without a "next run"."""
	path = cli.agent_file(tmp_path, server, "slow", schedules=[{"type": "interval", "value": 0.2}])
	running = cli.Running(str(path), cwd=tmp_path)
	running.wait_for("stderr", "scheduled run")
	running.proc.send_signal(signal.SIGINT)
	assert running.finish() == 0
	ended = [line for line in running.lines["stderr"] if ": success" in line]
	assert ended and not any("next run" in line for line in ended)


def test_the_overview_shows_the_three_ways_to_run(capsys) -> None:
	"""`openmolt --help` names a command, an agent file and `-m MODEL "PROMPT"` (getting started)."""
	from openmolt_core.cli import main

	assert main(["--help"]) == 0
	head = capsys.readouterr().out.split("\n\n")[0]
	assert "openmolt <command> [options]" in head
	assert "openmolt FILE [options]" in head
	assert 'openmolt -m MODEL "PROMPT" [options]' in head


def test_two_commands_serving_one_schedule_fire_each_due_time_once(tmp_path, server, cli) -> None:
	"""Two `openmolt agent.json` on one machine: the first fires the schedule, the second says so."""
	path = cli.agent_file(tmp_path, server, schedules=[{"type": "interval", "value": 0.3}])
	first = cli.Running(str(path), cwd=tmp_path)
	first.wait_for("stderr", ": success")
	second = cli.Running(str(path), cwd=tmp_path)
	second.wait_for("stderr", "served by another scheduler")
	seen = len([line for line in first.lines["stderr"] if ": success" in line])
	first.wait_for("stderr", ": success", count=seen + 3)
	for running in (second, first):
		running.proc.send_signal(signal.SIGINT)
		assert running.finish() == 0
	assert not [line for line in second.lines["stderr"] if ": success" in line], second.lines
	stored = Path(os.environ["XDG_STATE_HOME"]) / "openmolt" / "schedules.db"
	assert stored.stat().st_mode & 0o777 == 0o600


def test_the_schedule_store_can_be_turned_off(tmp_path, server, cli) -> None:
	"""OPENMOLT_SCHEDULE_STORE=off: nothing is written, the schedule still runs."""
	path = cli.agent_file(tmp_path, server, schedules=[{"type": "interval", "value": 0.3}])
	env = cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_SCHEDULE_STORE": "off"})
	running = cli.Running(str(path), cwd=tmp_path, env=env)
	running.wait_for("stderr", ": success")
	running.proc.send_signal(signal.SIGINT)
	assert running.finish() == 0
	assert not (Path(os.environ["XDG_STATE_HOME"]) / "openmolt" / "schedules.db").exists()


def test_a_state_folder_that_cannot_be_written_keeps_schedules_in_memory(
	tmp_path, server, cli, monkeypatch
) -> None:
	"""A home whose state folder cannot be made (read-only): the schedules still fire, in memory.

	The default store was used unchecked: every claim of the lease failed, and the command fired
	no schedule at all, logging an error every half grace."""
	from openmolt_core.cli._run import load

	blocked = tmp_path / "a-file"
	blocked.write_text("")
	monkeypatch.setenv("XDG_STATE_HOME", str(blocked))  # its "folder" is a file
	path = cli.agent_file(tmp_path, server, schedules=[{"type": "interval", "value": 60}])
	with pytest.warns(
		UserWarning,
		match=r"kept in memory: .*schedules.db cannot be written.*OPENMOLT_SCHEDULE_STORE",
	):
		loaded = load(str(path), env_file=None, verbose=False)
	assert loaded.om.scheduler.store is None


@pytest.mark.parametrize("content", [b"not a database " * 100, None], ids=["not-sqlite", "folder"])
def test_a_schedule_store_named_that_cannot_be_used_is_a_clear_error(
	tmp_path, server, cli, monkeypatch, content
) -> None:
	"""OPENMOLT_SCHEDULE_STORE naming a file that is no SQLite file (or a folder) says so at start."""
	from openmolt_core.cli._run import load
	from openmolt_core.errors import ConfigurationError

	store = tmp_path / "store.db"
	if content is None:
		store.mkdir()
	else:
		store.write_bytes(content)
	monkeypatch.setenv("OPENMOLT_SCHEDULE_STORE", str(store))
	path = cli.agent_file(tmp_path, server, schedules=[{"type": "interval", "value": 60}])
	with pytest.raises(ConfigurationError, match=r"OPENMOLT_SCHEDULE_STORE.*store\.db.*off"):
		load(str(path), env_file=None, verbose=False)
