"""Subcommands plugins register (register_commands), and the public agent-file API they use."""

import ast
import importlib
from pathlib import Path

import pytest

from openmolt_core import agentfile
from openmolt_core.cli import _commands, main

ROOT = Path(__file__).resolve().parents[2]


def test_a_plugin_command_runs_with_the_arguments_after_its_name(
	capsys: pytest.CaptureFixture[str],
) -> None:
	assert main(["weather-report", "Lyon", "Oslo"]) == 0
	assert capsys.readouterr().out == "sunny in Lyon, Oslo\n"
	assert main(["weather-report"]) == 3  # its own exit code
	found = _commands.registered()["weather-report"]
	assert (found.distribution, found.summary) == (
		"openmolt-weather",
		"print a made-up weather report",
	)


def test_openmolt_s_own_plugin_commands_are_registered_by_their_distributions() -> None:
	found = _commands.registered()
	owners = {name: found[name].distribution for name in _commands.PLUGIN_COMMANDS}
	assert owners == {
		"serve": "openmolt-serve",
		"ui": "openmolt-ui",
		"worker": "openmolt-dbos",
		"runs": "openmolt-dbos",
		"answer": "openmolt-dbos",
		"mcp": "openmolt-mcp",
		"eval": "openmolt-evals",
	}


def test_a_missing_plugin_command_names_its_extra(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	monkeypatch.setattr(_commands, "_found", {})  # as if openmolt-serve were not installed
	assert main(["serve", "agent.json"]) == 2
	err = capsys.readouterr().err
	assert "openmolt serve needs the serve extension, which is not installed; run: " in err


def test_a_misspelt_command_is_not_looked_up_as_a_plugin(
	capsys: pytest.CaptureFixture[str],
) -> None:
	assert main(["wroker"]) == 2
	assert "did you mean 'worker'?" in capsys.readouterr().err


def test_the_agent_file_api_is_the_command_s_own_objects() -> None:
	from openmolt_core import _verbose
	from openmolt_core.cli import _agentfile, _keys, _progress, _run, _ui

	assert agentfile.load is _run.load and agentfile.check_ready is _run.check_ready
	assert agentfile.Loaded is _run.Loaded and agentfile.AgentFileError is _agentfile.AgentFileError
	assert agentfile.read_dotenv is _keys.read_dotenv and agentfile.to_json is _progress.to_json
	assert agentfile.record_runs is _ui.record_runs
	assert agentfile.NotVerbose is _verbose.NotVerbose
	from openmolt_core.cli import _argparse, _runids

	assert agentfile.CommandParser is _argparse.CommandParser
	assert agentfile.resolve_run_id is _runids.resolve_run_id
	from openmolt_core.cli import _terminal

	assert agentfile.printable is _terminal.printable
	assert sorted(agentfile.__all__) == sorted(agentfile._EXPORTS)
	for name in agentfile.__all__:  # each name resolves, to what its home module holds
		home = importlib.import_module(agentfile._EXPORTS[name])
		assert getattr(agentfile, name) is getattr(home, name), name


# The core's private modules the programs that run agent files need: their names are public in
# `openmolt_core.agentfile` (the command's, `openmolt_core.cli._*`, and the verbose log's filter).
_COMMAND_PRIVATE = ("openmolt_core.cli._", "openmolt_core._verbose")


def _private_imports(tree: ast.AST) -> list[str]:
	"""What a module imports of `_COMMAND_PRIVATE`, in any spelling (and by name, as a string)."""
	found = []
	for node in ast.walk(tree):
		names: list[str] = []
		if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
			names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
		elif isinstance(node, ast.Import):
			names = [a.name for a in node.names]
		elif isinstance(node, ast.Constant) and isinstance(node.value, str):
			names = [node.value]  # importlib.import_module("openmolt_core.cli._run")
		found += [n for n in names if n.startswith(_COMMAND_PRIVATE)][:1]  # one per import
	return found


def test_the_private_import_finder_sees_every_spelling() -> None:
	code = """
import openmolt_core.cli._run
import openmolt_core._verbose as v
from openmolt_core.cli import _agentfile
from openmolt_core import _verbose
from openmolt_core.cli._progress import to_json
importlib.import_module("openmolt_core.cli._ui")
from openmolt_core.agentfile import load, NotVerbose
from openmolt_core.cli import main
"""
	assert len(_private_imports(ast.parse(code))) == 6


def test_no_sibling_distribution_imports_the_command_s_private_modules() -> None:
	offenders = []
	for path in ROOT.glob("openmolt_*/src/**/*.py"):
		if "openmolt_core" in path.parts:
			continue
		tree = ast.parse(path.read_text(encoding="utf-8"))
		offenders += [f"{path.relative_to(ROOT)}: {name}" for name in _private_imports(tree)]
	assert offenders == []


def test_completion_offers_each_subcommand_its_own_options(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""After `logs`, `--p` completes to --prune, not a run option; plugin commands are listed."""
	import shutil
	import subprocess

	from openmolt_core.cli._completion import options_of

	assert main(["completion", "bash"]) == 0
	text = capsys.readouterr().out
	assert "weather-report" in text.split("compgen -W", 2)[1].split('"')[1].split()
	cases = {
		line.strip().split(")")[0]: line for line in text.splitlines() if ") COMPREPLY=(" in line
	}
	assert "--prune" in cases["logs"] and "--dry-run" not in cases["logs"]
	assert "--durability" in cases["worker"] and "--model" not in cases["worker"]
	assert "--integrations" not in cases["completion"]  # hidden options stay hidden
	assert "--dry-run" in cases["*"]  # an agent file, or `run`
	assert options_of(lambda args: main(["models", *args])) == ["--all", "--json", "--provider"]
	assert options_of(lambda args: main(["weather-report", *args])) == []  # not argparse
	assert capsys.readouterr() == ("", "")  # probing printed nothing
	for shell in ("zsh", "fish"):
		assert main(["completion", shell]) == 0
		other = capsys.readouterr().out
		assert ("'--prune[]'" if shell == "zsh" else "from logs' -l prune") in other
	if shutil.which("bash") is None:
		pytest.skip("no bash here")
	(tmp_path / "c.bash").write_text(text)
	probe = (
		f"source {tmp_path / 'c.bash'}\n"
		'COMP_WORDS=(openmolt logs --p); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt a.json --dry); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
	)
	done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
	assert done.stdout.splitlines() == ["--prune", "--dry-run"], done.stderr


@pytest.mark.parametrize(
	("command", "typo", "meant"),
	[
		("ui", "--hots", "--host"),
		("serve", "--no-iu", "--no-ui"),
		("eval", "--min-socre", "--min-score"),
		("worker", "--heartbaet", "--heartbeat"),
		("answer", "--stpe", "--step"),
		("runs", "--jsn", "--json"),
		("mcp", "--env-flie", "--env-file"),
	],
)
def test_plugin_commands_speak_as_the_core_s_own(
	command: str, typo: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A mistyped option of a plugin command: one line, `openmolt CMD`, and a "did you mean"."""
	with pytest.raises(SystemExit) as stopped:
		_commands.registered()[command].main([typo, "x", "y"])
	assert stopped.value.code == 2
	assert capsys.readouterr().err == (
		f"openmolt {command}: no such option {typo!r}; did you mean {meant!r}? "
		f"(`openmolt {command} --help` lists them)\n"
	)


def test_a_plugin_parser_without_prog_is_named_for_its_command(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A third-party command's plain ArgumentParser() reads `usage: openmolt NAME`."""
	import argparse

	def fetch(args: list[str]) -> int:
		parser = argparse.ArgumentParser()
		parser.add_argument("url")
		parser.parse_args(args)
		return 0

	found = {**_commands.registered()}
	found["fetch"] = _commands.RegisteredCommand("fetch", fetch, "fetch", "acme")
	monkeypatch.setattr(_commands, "_found", found)
	with pytest.raises(SystemExit):
		main(["fetch"])
	err = capsys.readouterr().err
	assert err.startswith("usage: openmolt fetch [-h] url\n")
	assert "openmolt fetch: error: the following arguments are required: url" in err


def test_completion_starts_no_command_of_another_distribution(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Reading options starts a command with --help: one that does not parse would run."""
	import dataclasses

	ran: list[list[str]] = []

	def report(args: list[str]) -> int:
		ran.append(args)
		return 0

	found = dict(_commands.registered())
	found["weather-report"] = dataclasses.replace(found["weather-report"], main=report)
	monkeypatch.setattr(_commands, "_found", found)
	assert main(["completion", "bash"]) == 0
	text = capsys.readouterr().out
	assert ran == []
	assert "weather-report" in text.split("compgen -W", 2)[1].split('"')[1].split()  # its name
	assert 'weather-report) COMPREPLY=( $(compgen -W "" ' in text  # no options of its own
	assert "serve) COMPREPLY" in text and "--no-ui" in text  # OpenMolt's own are read


def test_completion_offers_a_subcommand_s_actions_and_choices(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt keys s<TAB>` completes set, `completion z<TAB>` zsh, `sessions s<TAB>` show and
	`logs se<TAB>` search (its run id argument's other word), in all three shells."""
	import shutil
	import subprocess

	from openmolt_core.cli._completion import words_of

	assert words_of(lambda args: main(["keys", *args])) == ["set", "remove", "list", "path"]
	scripts = {}
	for shell in ("bash", "zsh", "fish"):
		assert main(["completion", shell]) == 0
		scripts[shell] = capsys.readouterr().out
	assert "keys) _values 'keys' set remove list path; return;;" in scripts["zsh"]
	assert "sessions) _values 'sessions' list show prune; return;;" in scripts["zsh"]
	assert "logs) _values 'logs' search; return;;" in scripts["zsh"]
	assert (
		"__fish_seen_subcommand_from sessions; and not __fish_seen_subcommand_from list show "
		"prune' -a 'list show prune'"
	) in scripts["fish"]
	assert (
		"__fish_seen_subcommand_from completion; and not __fish_seen_subcommand_from bash zsh "
		"fish' -a 'bash zsh fish'"
	) in scripts["fish"]
	if shutil.which("bash") is None:
		pytest.skip("no bash here")
	(tmp_path / "c.bash").write_text(scripts["bash"])
	probe = (
		f"source {tmp_path / 'c.bash'}\n"
		'COMP_WORDS=(openmolt keys s); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt completion z); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt sessions ""); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt sessions s); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt logs se); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
	)
	done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
	assert done.stdout.splitlines() == ["set", "zsh", "list show prune", "show", "search"], (
		done.stderr
	)


def test_completion_offers_option_values_and_models(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`logs --status su<TAB>` completes to success, `--approvals a` to ask and approve, and
	`-m openai:gpt-5-mi<TAB>` to the installed providers' models (asked at completion time)."""
	import os
	import shutil
	import subprocess
	import sys

	from openmolt_core.cli._completion import MODELS, values_of

	assert values_of(lambda args: main(["logs", *args]))["--status"][:2] == ["success", "failure"]
	assert main(["completion", "--models"]) == 0
	models = capsys.readouterr().out.split()
	assert "openai:gpt-5-mini" in models and all(":" in m for m in models)
	for shell, expected in (
		("zsh", "logs:--status) compadd -- success"),
		("fish", "from logs' -l status -xa 'success"),
	):
		assert main(["completion", shell]) == 0
		assert expected in capsys.readouterr().out
	assert MODELS is None
	assert main(["completion", "bash"]) == 0
	text = capsys.readouterr().out
	if shutil.which("bash") is None:
		pytest.skip("no bash here")
	(tmp_path / "c.bash").write_text(text)
	probe = (
		f"source {tmp_path / 'c.bash'}\n"
		'COMP_WORDS=(openmolt logs --status su); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt a.json --approvals a); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt -m openai:gpt-5-mi); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
	)
	venv_bin = str(Path(sys.executable).parent)
	env = {**os.environ, "PATH": f"{venv_bin}:{os.environ.get('PATH', '')}"}
	done = subprocess.run(
		["bash", "-c", probe], capture_output=True, text=True, env=env, timeout=120
	)
	lines = done.stdout.splitlines()
	assert lines[:2] == ["success", "ask approve"], done.stderr
	assert "openai:gpt-5-mini" in lines[2].split(), done.stderr


def test_completion_offers_a_local_provider_s_prefix(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`-m oll<TAB>` completes to `ollama:` (a local server lists no models, any it serves
	works), and `-m op<TAB>` to `openai:` when OPENMOLT_OPENAI_BASE_URL points elsewhere."""
	monkeypatch.setenv("OPENMOLT_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	assert main(["completion", "--models"]) == 0
	models = capsys.readouterr().out.split()
	assert "ollama:" in models and "openai:" in models
	assert not [m for m in models if m.startswith("openai:gpt")]
	assert "anthropic:claude-haiku-4-5" in models


# OpenMolt's own distributions that register commands, by the package each one's loads.
_OWN_PACKAGES = {
	"openmolt-dbos": "openmolt_dbos",
	"openmolt-evals": "openmolt_evals",
	"openmolt-mcp": "openmolt_mcp",
	"openmolt-serve": "openmolt_serve",
	"openmolt-ui": "openmolt_ui",
}


@pytest.mark.parametrize(
	("command", "needs"),
	[
		("mcp", {"openmolt_mcp"}),
		("ui", {"openmolt_ui"}),
		("eval", {"openmolt_evals"}),
		("runs", {"openmolt_dbos"}),
		("serve", {"openmolt_serve", "openmolt_ui"}),  # it serves the viewer too
	],
)
def test_a_plugin_command_loads_no_other_distribution_s_commands(
	command: str, needs: set[str]
) -> None:
	"""`openmolt mcp` loads openmolt-mcp, not DBOS, the server or the viewer (a second or more);
	`openmolt runs --help` loads openmolt-dbos but not DBOS itself, which only a run needs."""
	import subprocess
	import sys

	code = (
		"import contextlib, io, sys\n"
		"from openmolt_core.cli import main\n"
		"with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
		f"	main([{command!r}, '--help'])\n"
		f"print(sorted(m for m in {sorted(_OWN_PACKAGES.values())!r} if m in sys.modules),"
		" 'dbos' in sys.modules)\n"
	)
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
	assert done.stdout.strip() == f"{sorted(needs)} False", done.stderr


def test_openmolt_s_own_distributions_register_only_their_own_commands() -> None:
	"""Each registers exactly its PLUGIN_COMMANDS names: a command need not load the others."""
	found = _commands.registered()
	own = {
		name: command.distribution
		for name, command in found.items()
		if command.distribution in _OWN_PACKAGES
	}
	assert own == {name: f"openmolt-{extra}" for name, extra in _commands.PLUGIN_COMMANDS.items()}


def test_another_distribution_registering_an_own_command_s_name_is_still_refused(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A third party's `mcp` is loaded beside openmolt-mcp's, and the clash is named."""
	import types
	from collections.abc import Callable
	from importlib import metadata

	from openmolt_core import hookimpl
	from openmolt_core.errors import PluginError

	@hookimpl
	def register_commands(register: Callable[..., None]) -> None:
		register("mcp", lambda args: 0, summary="another mcp")

	module = types.SimpleNamespace(register_commands=register_commands)
	fake = types.SimpleNamespace(
		name="acme",
		value="acme_mcp",
		dist=types.SimpleNamespace(name="acme-mcp"),
		load=lambda: module,
	)
	real = metadata.entry_points

	def entry_points(*, group: str) -> list[object]:
		return [*real(group=group), fake]

	monkeypatch.setattr(_commands, "_found", None)
	monkeypatch.setattr(_commands.metadata, "entry_points", entry_points)
	with pytest.raises(PluginError, match="registered by openmolt-mcp and by acme-mcp; uninstall"):
		_commands.find("mcp")
	assert _commands.find("eval") is not None  # another command is not concerned


def test_completion_offers_an_action_s_own_options(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`sessions prune --<TAB>` offers --idle and --dry-run, `keys set --` --value, `auth list --`
	--json (not the sign-in's options): each action's own, in all three shells."""
	import shutil
	import subprocess

	scripts = {}
	for shell in ("bash", "zsh", "fish"):
		assert main(["completion", shell]) == 0
		scripts[shell] = capsys.readouterr().out
	assert "'sessions prune') _arguments '*:file:_files' '--dry-run[]'" in scripts["zsh"]
	assert (
		"-n '__fish_seen_subcommand_from keys; and __fish_seen_subcommand_from set' -l value"
	) in scripts["fish"]
	if shutil.which("bash") is None:
		pytest.skip("no bash here")
	(tmp_path / "c.bash").write_text(scripts["bash"])
	probe = (
		f"source {tmp_path / 'c.bash'}\n"
		'COMP_WORDS=(openmolt sessions prune --); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt sessions list --); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt sessions show x --); COMP_CWORD=4; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt keys set --); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt keys set slack --); COMP_CWORD=4; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt auth list --); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt auth revoke gmail --); COMP_CWORD=4; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt auth gmail --no); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
	)
	done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
	assert done.stdout.splitlines() == [
		"--dry-run --idle --json --store",
		"--count --json --store",
		"--json --store",
		"--value",
		"--value",
		"--json",
		"--user",
		"--no-browser",  # signing in: auth's own options
	], done.stderr
