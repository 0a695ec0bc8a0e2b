import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from openmolt_core import cli
from openmolt_core.cli._agentfile import _positions
from openmolt_core.cli._info import estimate
from openmolt_core.cli._keys import env_var, read_dotenv, resolve_keys
from openmolt_core.errors import ConfigurationError


def test_dotenv_parsing_is_simple_and_literal(tmp_path: Path) -> None:
	"""Comments, export, both quotes, escapes in double quotes, and no expansion."""
	path = tmp_path / ".env"
	path.write_text(
		"# comment\n\nexport A=1\nB = 'two words # not a comment'\n"
		'C="line\\nbreak \\"q\\""\nD=plain # trailing comment\nE=$HOME\nF=\n'
	)
	assert read_dotenv(path) == {
		"A": "1",
		"B": "two words # not a comment",
		"C": 'line\nbreak "q"',
		"D": "plain",
		"E": "$HOME",
		"F": "",
	}


def test_dotenv_refuses_lines_that_are_not_assignments(tmp_path: Path) -> None:
	"""A malformed line is reported by number."""
	path = tmp_path / ".env"
	path.write_text("A=1\n=nokey\n")
	with pytest.raises(ConfigurationError, match=r"\.env:2: not a KEY=value line"):
		read_dotenv(path)


def test_env_var_names() -> None:
	"""Provider and integration ids map to OPENMOLT_<ID>_API_KEY."""
	assert env_var("openai") == "OPENMOLT_OPENAI_API_KEY"
	assert env_var("googleDrive") == "OPENMOLT_GOOGLE_DRIVE_API_KEY"
	assert env_var("browser-use") == "OPENMOLT_BROWSER_USE_API_KEY"


def test_resolve_keys_sets_the_winner_and_reports_sources(tmp_path: Path) -> None:
	"""Provider settings get api_key, integration configs apiKey; sources are described."""
	provider = {"apiKey": "from-file"}
	notion = {"apiKey": "notion-file"}
	other: dict[str, str] = {}
	reports = resolve_keys(
		[
			("openai", "openai", provider),
			("integrations.notion", "notion", notion),
			("anthropic", "anthropic", other),
		],
		environ={"OPENMOLT_NOTION_API_KEY": "notion-env"},
		dotenv={"OPENMOLT_OPENAI_API_KEY": "dot"},
		dotenv_path=Path(".env"),
		file=Path("a.json"),
	)
	assert provider == {"api_key": "dot"}
	assert notion == {"apiKey": "notion-env"}
	assert other == {}
	assert [r.line() for r in reports] == [
		"key for openai: from .env (OPENMOLT_OPENAI_API_KEY)",
		"key for integrations.notion: from environment variable OPENMOLT_NOTION_API_KEY",
		"no key for anthropic (set OPENMOLT_ANTHROPIC_API_KEY)",
	]


def test_a_local_servers_missing_key_is_said_to_be_needed_only_if_it_asks() -> None:
	"""--verbose told a user of Ollama to set OPENMOLT_OLLAMA_API_KEY, which it needs not; a
	hosted provider's and an integration's missing key is still to be set."""
	reports = resolve_keys(
		[
			("ollama", "ollama", {}),
			("anthropic", "anthropic", {}),
			("integrations.notion", "notion", {}),
		],
		environ={},
		dotenv={},
		dotenv_path=Path(".env"),
		file=Path("a.json"),
	)
	assert [r.line() for r in reports] == [
		"no key for ollama (none needed unless the server asks: OPENMOLT_OLLAMA_API_KEY)",
		"no key for anthropic (set OPENMOLT_ANTHROPIC_API_KEY)",
		"no key for integrations.notion (set OPENMOLT_NOTION_API_KEY)",
	]


def test_positions_find_the_line_of_every_key_and_item() -> None:
	"""Nested keys and array items map to their lines; keys are normalized."""
	text = json.dumps({"a": 1, "outputSchema": {"x": [1, {"y_z": 2}]}}, indent=2)
	lines = _positions(text)
	assert lines[("a",)] == 2
	assert lines[("outputschema",)] == 3
	assert lines[("outputschema", "x", 1)] == 6
	assert lines[("outputschema", "x", 1, "yz")] == 7


def test_cost_estimate_uses_the_providers_list_prices() -> None:
	"""One gpt-5-mini step of 1000 input tokens costs 1000*0.25/1M + 500*2/1M dollars."""
	from openmolt_providers._prices import price_for

	cost, text = estimate(price_for("openai", "gpt-5-mini"), "openai:gpt-5-mini", 1000)
	assert cost == pytest.approx(0.00025 + 0.001)
	assert "500 output tokens assumed" in text
	assert estimate(None, "nosuch:model", 10)[0] is None


def test_the_dry_run_prices_every_model_of_the_providers_table() -> None:
	"""The CLI has no price table of its own: any model the providers price has an estimate."""
	from openmolt import OpenMolt
	from openmolt_core.cli._info import _price
	from openmolt_providers._prices import PRICES

	om = OpenMolt(llm_providers={"openai": {"api_key": "k"}})
	for provider, table in PRICES.items():
		for model in table:
			agent = om.create_agent(name="A", model=f"{provider}:{model}")
			assert _price(agent) == table[model], (provider, model)
	local = OpenMolt(llm_providers={"openai": {"base_url": "http://127.0.0.1:9/v1"}})
	assert _price(local.create_agent(name="A", model="openai:gpt-5-mini")) is None


def test_the_cli_package_exports_main_and_the_terminal_prompt() -> None:
	"""`openmolt_core.cli:main` stays the command's entry for code (the console script wraps it)."""
	import openmolt_core.cli as cli

	assert cli.__all__ == ["ExitCode", "approve_on_terminal", "ask_on_terminal", "main"]
	assert callable(cli.main)


def test_the_console_script_loads_the_command_inside_its_ctrl_c_handling() -> None:
	"""`openmolt` is `openmolt_core._main:main`, which imports nothing heavy at its top.

	A Ctrl-C while `openmolt_core.cli` loaded printed a KeyboardInterrupt traceback from the
	console script's `from openmolt_core.cli import main`.
	"""
	import tomllib

	from openmolt_core import _main

	root = Path(__file__).resolve().parents[2]
	scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
	assert scripts == {"openmolt": "openmolt_core._main:main"}
	assert (
		"from openmolt_core._main import main"
		in (root / "openmolt_core/src/openmolt/__main__.py").read_text()
	)
	imported = {n for n in vars(_main) if not n.startswith("_")} - {"annotations", "main"}
	assert imported == {"sys"}


def test_a_ctrl_c_while_the_command_loads_is_one_line_and_130(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""KeyboardInterrupt raised by the import of the command: "openmolt: interrupted", exit 130."""
	import sys
	import types

	from openmolt_core import _main
	from openmolt_core.cli import ExitCode

	class Loading(types.ModuleType):
		def __getattr__(self, name: str) -> object:
			raise KeyboardInterrupt

	monkeypatch.setitem(sys.modules, "openmolt_core.cli", Loading("openmolt_core.cli"))
	assert _main.main() == ExitCode.INTERRUPTED == 130
	assert capsys.readouterr().err == "openmolt: interrupted\n"


def test_nan_and_infinity_are_refused_with_their_line(tmp_path: Path) -> None:
	"""NaN is not JSON: the agent file error names the line instead of crashing."""
	from openmolt_core.cli._agentfile import AgentFileError, load_json_file

	path = tmp_path / "agent.json"
	path.write_text('{\n  "name": "A",\n  "model": "openai:x",\n  "maxSteps": NaN\n}\n')
	with pytest.raises(AgentFileError, match=r"agent.json:4: invalid JSON: NaN is not valid JSON"):
		load_json_file(path)


@pytest.mark.parametrize(
	("args", "said"),
	[
		(
			["agent.json", "--dryrun"],
			"openmolt: no such option '--dryrun'; did you mean '--dry-run'?",
		),
		(
			["run", "agent.json", "--jsn"],
			"openmolt run: no such option '--jsn'; did you mean '--json'?",
		),
		(
			["tools", "slack", "--jsno"],
			"openmolt tools: no such option '--jsno'; did you mean '--json'?",
		),
		(
			["logs", "--prnue", "3"],
			"openmolt logs: no such option '--prnue'; did you mean '--prune'?",
		),
		(
			["keys", "list", "--al"],
			"openmolt keys list: no such option '--al' (`openmolt keys list --help` lists them)",
		),
		# Named before the missing arguments argparse would say first.
		(
			["eval", "--min-scroe", "0.5"],
			"openmolt eval: no such option '--min-scroe'; did you mean '--min-score'?",
		),
		(
			["import-openapi", "--ouput", "x.py"],
			"openmolt import-openapi: no such option '--ouput'; did you mean '--output'?",
		),
	],
)
def test_a_mistyped_option_says_what_was_meant_in_one_line(
	args: list[str], said: str, tmp_path, cli_in_process
) -> None:
	"""One line with the nearest option, not the parser's ten lines of usage."""
	(tmp_path / "agent.json").write_text("{}")
	done = cli_in_process(args, cwd=tmp_path, env={"PATH": os.environ.get("PATH", "")})
	assert done.returncode == 2
	assert done.stderr.splitlines()[0].startswith(said), done.stderr
	assert "usage:" not in done.stderr


def test_a_tool_line_is_its_first_sentence_even_with_an_example_in_it() -> None:
	"""`openmolt tools ID` does not cut "e.g." into "e.g" (14 built-in tools were cut so)."""
	from openmolt_core.cli._info import _one_line

	assert _one_line("Get a message's permanent link, e.g. to share it. More.") == (
		"Get a message's permanent link, e.g. to share it"
	)
	assert _one_line("Edit images (i.e. masks) here. Then.") == "Edit images (i.e. masks) here"
	assert _one_line("One. Two.") == "One"


def test_files_saved_with_a_bom_are_read(tmp_path: Path, cli_in_process) -> None:
	"""Notepad's UTF-8 BOM starts neither the first .env name nor the agent file's JSON."""
	bom = "\ufeff"
	(tmp_path / ".env").write_text(f"{bom}OPENMOLT_OPENAI_API_KEY=sk-bom\r\n", encoding="utf-8")
	assert read_dotenv(tmp_path / ".env") == {"OPENMOLT_OPENAI_API_KEY": "sk-bom"}
	agent = {"name": "G", "model": "openai:gpt-5-mini", "instructions": "Greet.", "input": "Ada"}
	(tmp_path / "agent.json").write_text(bom + json.dumps(agent), encoding="utf-8")
	done = cli_in_process(
		["agent.json", "--dry-run", "--json"],
		cwd=tmp_path,
		env={"PATH": os.environ.get("PATH", "")},
	)
	assert done.returncode == 0, done.stderr
	assert "no API key" not in done.stderr  # the key came from the .env file
	assert json.loads(done.stdout)["model"] == "openai:gpt-5-mini"


@pytest.mark.parametrize(
	("args", "said"),
	[
		(
			["keys", "st", "openai"],
			"openmolt keys: no such action 'st'; did you mean 'set'? "
			"(choose from set, remove, list, path)",
		),
		(
			["sessions", "lst"],
			"openmolt sessions: no such action 'lst'; did you mean 'list'? "
			"(choose from list, show, prune)",
		),
		(
			["completion", "bsh"],
			"openmolt completion: no such shell 'bsh'; did you mean 'bash'? "
			"(choose from bash, zsh, fish)",
		),
		(
			["run", "a.json", "--approvals", "aks"],
			"openmolt run: --approvals: no such choice 'aks'; did you mean 'ask'? "
			"(choose from ask, approve, deny)",
		),
	],
)
def test_a_wrong_choice_is_one_line_with_the_nearest(
	args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A mistyped action, shell or option value: one line, "did you mean", the choices."""
	from openmolt_core.cli import main

	with pytest.raises(SystemExit) as stopped:
		main(args)
	assert stopped.value.code == 2
	assert capsys.readouterr().err == said + "\n"


def test_an_empty_key_store_says_so_and_one_tool_is_singular(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`keys list` with nothing stored says how to store one (stderr); `tools` says "1 tool"."""
	from openmolt_core.cli import main

	monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
	assert main(["keys", "list"]) == 0
	out, err = capsys.readouterr()
	assert out == ""
	assert err.startswith(f"openmolt: no keys stored yet in {tmp_path}")
	assert "`openmolt keys set openai`" in err
	assert main(["tools"]) == 0
	listed = capsys.readouterr().out
	assert "HTTP Request, 1 tool " in listed and ", 1 tools" not in listed


def test_a_folder_of_agent_files_leaves_out_the_schema_file(tmp_path: Path) -> None:
	"""`openmolt serve agents/` skips agent-file.schema.json, which docs/cli.md puts beside them."""
	from openmolt_core.cli._agentfile import agent_files

	(tmp_path / "digest.json").write_text("{}")
	(tmp_path / "agent-file.schema.json").write_text("{}")
	(tmp_path / "bot.py").write_text("")
	assert [p.name for p in agent_files([str(tmp_path)])] == ["bot.py", "digest.json"]
	# A schema file named on its own is still read as asked.
	assert agent_files([str(tmp_path / "agent-file.schema.json")]) == [
		tmp_path / "agent-file.schema.json"
	]


def test_one_tool_is_shown_by_its_full_handle_too(capsys: pytest.CaptureFixture[str]) -> None:
	"""`openmolt tools slack.postMessage` is `openmolt tools slack postMessage` (JSON included)."""
	from openmolt_core.cli import main

	assert main(["tools", "slack", "postMessage", "--json"]) == 0
	split = capsys.readouterr().out
	assert main(["tools", "slack.postMessage", "--json"]) == 0
	assert capsys.readouterr().out == split
	assert json.loads(split)["tool"] == "slack.postMessage"
	assert main(["tools", "slack.postMesage"]) == 2
	assert "did you mean" in capsys.readouterr().err


@pytest.mark.parametrize("integration", ["fal", "s3"])
def test_how_to_connect_names_the_install_command_of_this_environment(
	integration: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""An integration's docs say ``pip install 'openmolt[x]'``; ``openmolt tools`` prints the
	command that works where it runs (``uv add`` in a uv project, which has no pip)."""
	import io

	from openmolt import OpenMolt
	from openmolt_core import _hints
	from openmolt_core.cli._info import list_tools

	monkeypatch.setattr(_hints, "install_environment", lambda: "uv-project")
	monkeypatch.setattr(_hints, "_uv_project", lambda: None)  # not OpenMolt's own clone
	out = io.StringIO()
	list_tools(OpenMolt(), integration, out, as_json=False)
	text = out.getvalue()
	section = text.split("how to connect:", 1)[1].split("\nscopes:", 1)[0]
	assert f"uv add 'openmolt[{integration}]'" in section
	assert "pip install" not in section


def test_the_command_leaves_its_objects_to_the_os_but_code_calling_main_does_not(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""``openmolt`` (main with no argv) freezes the collector as it ends: shutdown skips its
	passes over every loaded object. A program or test calling ``main([...])`` goes on: never."""
	import gc
	import sys

	from openmolt_core.cli import main

	frozen: list[bool] = []
	monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
	assert main(["--version"]) == 0
	assert frozen == []
	monkeypatch.setattr(sys, "argv", ["openmolt", "--version"])
	assert main() == 0
	assert frozen == [True]
	assert capsys.readouterr().out.count("openmolt") == 2


def test_words_left_over_are_one_line_not_the_whole_usage(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""An unquoted prompt (`openmolt -m MODEL Name three uses`) or input (`openmolt FILE Ada`):
	one line naming the words and how to quote them, not argparse's usage."""
	from openmolt_core.cli._argparse import CommandParser

	parser = CommandParser(prog="openmolt")
	parser.add_argument("file")
	parser.add_argument("--input")
	with pytest.raises(SystemExit) as stopped:
		parser.parse_args(["agent.json", "Grace", "Hopper"])
	assert stopped.value.code == 2
	err = capsys.readouterr().err
	assert err.count("\n") == 1 and "usage:" not in err
	assert "unexpected 'Grace Hopper': --input '...' gives a run's input" in err


def test_an_error_is_one_line_unless_something_required_is_missing(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""Two options that exclude each other, a bad number: one line; a missing argument keeps
	argparse's usage, which shows what goes where."""
	from openmolt_core.cli._argparse import CommandParser

	parser = CommandParser(prog="openmolt run")
	parser.add_argument("file")
	parser.add_argument("--steps", type=int)
	either = parser.add_mutually_exclusive_group()
	either.add_argument("--session")
	either.add_argument("-c", action="store_true")
	for args in (["a.json", "--session", "x", "-c"], ["a.json", "--steps", "many"]):
		with pytest.raises(SystemExit):
			parser.parse_args(args)
		err = capsys.readouterr().err
		assert err.count("\n") == 1 and "usage:" not in err, err
		assert "(`openmolt run --help` lists the arguments)" in err
	with pytest.raises(SystemExit):
		parser.parse_args([])
	assert "usage: openmolt run" in capsys.readouterr().err


@pytest.mark.parametrize("json_lines", [False, True])
def test_the_command_says_it_waits_for_an_abandoned_call_and_ctrl_c_ends_the_wait(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], json_lines: bool
) -> None:
	"""A sync tool a cancelled run left running: one line says why the process waits.

	It hung silently until the function returned, and a second Ctrl-C printed a traceback from
	the interpreter's threading._shutdown.
	"""
	import threading

	from openmolt_core._support.sync import ABANDONED_THREAD
	from openmolt_core.cli._exit import ExitCode, wait_for_abandoned_calls

	exits: list[int] = []
	wait_for_abandoned_calls(exit=exits.append)  # nothing left: nothing said
	assert capsys.readouterr().err == "" and exits == []
	release = threading.Event()
	left = threading.Thread(target=release.wait, name=ABANDONED_THREAD)
	left.start()
	try:

		def interrupted(self: threading.Thread, timeout: float | None = None) -> None:
			raise KeyboardInterrupt

		monkeypatch.setattr(threading.Thread, "join", interrupted)
		wait_for_abandoned_calls(json_lines=json_lines, exit=exits.append)
	finally:
		release.set()
		monkeypatch.undo()
		left.join()
	assert exits == [ExitCode.INTERRUPTED]
	err = capsys.readouterr().err
	said = "a function the run called is still running (a sync tool cannot be stopped)"
	if json_lines:
		assert json.loads(err) == {
			"event": "message",
			"message": f"{said}; the command ends when it returns, or now with Ctrl-C",
		}
	else:
		assert err.startswith(f"openmolt: {said}") and err.count("\n") == 1


def test_a_ctrl_c_any_time_after_the_wait_is_said_ends_it(monkeypatch, capsys) -> None:
	"""The SIGINT handler is in place before the line is said, and the old one is back after.

	A Ctrl-C that came between saying the line and the join (CI on a loaded machine) raised
	KeyboardInterrupt outside the wait: the interpreter then waited for the tool in silence.
	"""
	import signal
	import threading

	from openmolt_core._support.sync import ABANDONED_THREAD
	from openmolt_core.cli._exit import ExitCode, wait_for_abandoned_calls

	before = signal.getsignal(signal.SIGINT)
	exits: list[int] = []
	release = threading.Event()
	left = threading.Thread(target=release.wait, name=ABANDONED_THREAD)
	left.start()
	real_join = threading.Thread.join

	def ctrl_c_as_the_line_is_said(*args: object, **kwargs: object) -> None:
		handler = signal.getsignal(signal.SIGINT)
		assert callable(handler) and handler is not before
		handler(signal.SIGINT, None)  # what the interpreter runs on a Ctrl-C
		release.set()

	try:
		monkeypatch.setattr("builtins.print", ctrl_c_as_the_line_is_said)
		wait_for_abandoned_calls(exit=exits.append)
	finally:
		monkeypatch.undo()
		release.set()
		real_join(left)
	assert exits == [ExitCode.INTERRUPTED]
	assert signal.getsignal(signal.SIGINT) is before


_HELPS = [
	*([name] for name in ("run", "schedules", "tools", "keys", "auth", "models", "logs")),
	*([name] for name in ("sessions", "completion", "eval", "ui", "serve", "mcp", "worker")),
	["keys", "set"],
	["auth", "revoke"],
	["sessions", "prune"],
]


def _urls(args: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> set[str]:
	import re

	from openmolt_core.cli import main

	monkeypatch.setenv("COLUMNS", str(columns))
	with contextlib.suppress(SystemExit):
		main([*args, "--help"])
	return set(re.findall(r"https?://[^\s)]+", capsys.readouterr().out))


@pytest.mark.parametrize("args", _HELPS, ids=" ".join)
def test_help_keeps_each_address_on_one_line(
	args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""On an 80- or 60-column terminal an address in --help is not cut into two lines."""
	whole = _urls(args, 1000, monkeypatch, capsys)
	for columns in (80, 60):
		assert _urls(args, columns, monkeypatch, capsys) == whole, columns


@pytest.mark.parametrize("command", sorted(cli._SUMMARY))
def test_every_command_s_help_says_what_it_does_before_its_options(
	command: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt COMMAND --help` has a description after its usage (`runs` and `answer` lacked one)."""
	with pytest.raises(SystemExit) as exited:
		cli.main([command, "--help"])
	assert exited.value.code == 0
	paragraphs = capsys.readouterr().out.split("\n\n")
	assert paragraphs[0].startswith(f"usage: openmolt {command}")
	assert not paragraphs[1].startswith(("positional arguments:", "options:")), paragraphs[1]
	assert paragraphs[1][0].isupper(), paragraphs[1]  # a sentence, as every command's starts


@pytest.mark.parametrize(
	"args",
	[
		["ui", "--port", "99999"],
		["ui", "--port", "-5"],
		["serve", "agent.json", "--port", "70000"],
		["serve", "agent.json", "--ui-port", "abc"],
	],
)
def test_a_port_out_of_range_is_a_usage_error_naming_the_option(
	args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt ui --port 99999` is refused as it parses, not an OverflowError from the socket
	(or `serve`'s "unhandled errors in a TaskGroup" after a scheduled run had started)."""
	with pytest.raises(SystemExit) as exited:
		cli.main(args)
	assert exited.value.code == 2
	err = capsys.readouterr().err
	assert f"argument {args[-2]}: {args[-1]!r} is not a port; give 1-65535, or 0 for any" in err


@pytest.mark.parametrize(
	"args", [["logs"], ["sessions", "list"], ["schedules", "examples/every_minute.json"]]
)
@pytest.mark.parametrize("n", ["0", "-3"])
def test_every_n_refuses_less_than_one(
	args: list[str], n: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs -n 0` said "no runs recorded yet" of a full store, and `-n -3` listed every
	run: each command's -n refuses both as it parses."""
	with pytest.raises(SystemExit) as exited:
		cli.main([*args, "-n", n])
	assert exited.value.code == 2
	assert f"argument -n/--count: give at least 1, not {n}" in capsys.readouterr().err
