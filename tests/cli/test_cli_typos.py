"""Mistyped commands, options and agent file names: one line that names what was meant."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from openmolt_core._support.suggest import edits, typo_of
from openmolt_core.cli import _SUMMARY, _commands
from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._commands import PLUGIN_COMMANDS
from openmolt_core.errors import ConfigurationError


@pytest.fixture(autouse=True)
def _in_a_folder_with_an_agent_file(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
	monkeypatch.chdir(tmp_path)
	(tmp_path / "agent.json").write_text('{"name": "a", "model": "openai:gpt-5-mini"}')
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	log = logging.getLogger("openmolt")
	handlers, level = list(log.handlers), log.level
	yield
	log.handlers[:], log.level = handlers, level  # serve and worker log to this test's stderr


def _typos(word: str) -> list[str]:
	"""A swap of the first two letters, and the last letter dropped (when that is no command)."""
	commands = {*_SUMMARY, *PLUGIN_COMMANDS}
	out = [word[1] + word[0] + word[2:], word[:-1]]
	return [t for t in out if len(t) > 1 and t not in commands and t != word]


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
	try:
		code = openmolt_main(argv)
	except SystemExit as stopped:  # argparse's own exit
		code = stopped.code
	assert code == 2
	err = capsys.readouterr().err
	assert len(err.splitlines()) == 1, err
	return err


def test_swapped_letters_are_one_typo() -> None:
	"""Two neighbours swapped count as one edit, so short words get their guess too."""
	assert edits("iu", "ui") == 1 and edits("hlep", "help") == 1 and edits("tols", "tools") == 1
	assert typo_of("iu", ["ui", "run"]) == "ui"
	assert typo_of("--jsn", ["--set", "--scopes"]) is None  # no far-fetched guess
	assert typo_of("--jsno", ["--set", "--json"]) == "--json"


@pytest.mark.parametrize(
	("word", "meant"),
	[(t, name) for name in [*_SUMMARY, *PLUGIN_COMMANDS] for t in _typos(name)],
)
def test_every_command_mistyped_is_named(
	word: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Each command, its letters swapped or one dropped: "no such command; did you mean"."""
	err = _error([word], capsys)
	assert err.startswith(f"openmolt: no such command {word!r}; did you mean {meant!r}?"), err


@pytest.mark.parametrize(
	("word", "said"),
	[
		("hlep", "no such command 'hlep'; did you mean 'help'?"),
		("versoin", "did you mean '--version'?"),
		("--verison", "no such option '--verison'; did you mean '--version'?"),
		("--hlep", "did you mean '--help'?"),
		("--dryrun", "no such option '--dryrun'; did you mean '--dry-run'?"),
	],
)
def test_help_and_version_mistyped_are_named(
	word: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""help and --version, and a run option, mistyped alone."""
	assert said in _error([word], capsys)


def test_a_plugins_command_mistyped_is_named(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A command another distribution registers is offered for its typo too."""
	found = {**_commands.registered()}
	found["weather"] = _commands.RegisteredCommand("weather", lambda args: 0, "w", "acme")
	monkeypatch.setattr(_commands, "_found", found)
	assert "did you mean 'weather'?" in _error(["waether"], capsys)


@pytest.mark.parametrize("option", ["--json", "--dry-run", "--no-stream", "--once", "-m"])
def test_a_run_option_without_a_file_says_it_needs_one(
	option: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt --json` is a run's option: not "no such option", nor --version for --json."""
	err = _error([option], capsys)
	assert "no such option" not in err and "--version" not in err, err
	assert ("a model and a prompt" if option == "-m" else "needs an agent file") in err


@pytest.mark.parametrize(
	"command", [["logs"], ["tools"], ["plugins"], ["models"], ["auth", "list"], ["schedules"]]
)
def test_a_commands_option_mistyped_is_named(
	command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs --jsn`, `openmolt tools --jsno`: the command's own --json is offered."""
	for typo in ("--jsn", "--jsno", "--josn"):
		err = _error(
			[*command, typo, *(["agent.json"] if command == ["schedules"] else [])], capsys
		)
		assert f"no such option {typo!r}; did you mean '--json'?" in err, err


def test_an_option_of_no_likeness_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
	"""`openmolt auth --jsn` (auth has no --json) offers nothing rather than --set."""
	assert "did you mean" not in _error(["auth", "--jsn"], capsys)


@pytest.mark.parametrize("typed", ["agnet.json", "agent.jsn", "Agent.json", "agnet", "agent.py"])
@pytest.mark.parametrize("command", [[], ["run"], ["schedules"], ["mcp"], ["serve"], ["worker"]])
def test_a_mistyped_agent_file_gets_the_one_beside_it(
	typed: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
	"""Whichever command reads it, a mistyped agent file name gets "did you mean 'agent.json'?"."""
	if command and command[0] in PLUGIN_COMMANDS and command[0] not in _commands.registered():
		pytest.skip(f"openmolt[{PLUGIN_COMMANDS[command[0]]}] is not installed")
	err = _error([*command, typed], capsys)
	assert "did you mean 'agent.json'?" in err, err


def test_a_file_of_another_name_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
	"""A name far from every file beside it is said missing, with no guess."""
	err = _error(["report.py"], capsys)
	assert err == "openmolt: report.py: no such file\n"


def test_a_mistyped_tool_function_gets_the_one_the_module_has(tmp_path: Path, cli) -> None:
	"""--tool typo_tools:lokup: "did you mean typo_tools:lookup?"."""
	(tmp_path / "typo_tools.py").write_text(
		'def lookup(order: int) -> str:\n\t"""Find it."""\n\treturn ""\n'
	)
	args = ["-m", "openai:gpt-5-mini", "--tool", "typo_tools:lokup", "hi"]
	done = cli.openmolt(*args, cwd=tmp_path, env=cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-t"))
	assert done.returncode == 2
	assert "no function 'lokup'; did you mean typo_tools:lookup?" in done.stderr, done.stderr


@pytest.mark.parametrize(
	("model", "meant"),
	[
		("openai:gpt5-mini", "openai:gpt-5-mini"),
		("anthropic:claude-haiku-45", "anthropic:claude-haiku-4-5"),
		("google:gemini-25-flash", "google:gemini-2.5-flash"),
	],
)
def test_a_dry_run_of_a_mistyped_model_names_the_listed_one(
	model: str, meant: str, tmp_path: Path, cli
) -> None:
	"""The price is unknown because the name is mistyped: the dry run says which was meant."""
	done = cli.openmolt("-m", model, "--dry-run", "hi", cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 0, done.stderr
	assert f"price of {model} unknown (did you mean {meant!r}?" in done.stdout, done.stdout


@pytest.mark.parametrize(
	("argv", "said"),
	[
		(["keys", "set", "opnai"], "did you mean 'openai'?"),
		(["keys", "remove", "slak"], "did you mean 'slack'?"),
		(["keys", "set", "slack", "tokn"], "slack reads no key 'tokn' (did you mean 'token'?)"),
	],
)
def test_a_key_stores_mistyped_names_are_named(
	argv: list[str],
	said: str,
	tmp_path: Path,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""`openmolt keys set opnai`: the provider or integration, or its key, that was meant."""
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "keys.json"))
	assert said in _error(argv, capsys)


def test_revoking_a_mistyped_sign_in_names_the_stored_one(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt auth revoke gmial` beside a stored gmail sign-in: "did you mean 'gmail'?"."""
	import sys

	from cryptography.fernet import Fernet

	from openmolt_core.credstore import EncryptedFileStore

	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(tmp_path / "credentials.enc"))
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_KEY", Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	EncryptedFileStore().save("gmail", {"refreshToken": "1//r-token"})
	err = _error(["auth", "revoke", "gmial"], capsys)
	assert "gmial: no stored sign-in (did you mean 'gmail'?)" in err, err


@pytest.mark.parametrize(
	("args", "said"),
	[
		(["keys"], "openmolt keys: say what to do: set, remove, list or path"),
		(["keys", "set"], "openmolt keys set: missing name"),
		(["auth"], "openmolt auth: missing integration"),
		(["schedules"], "openmolt schedules: missing file"),
	],
)
def test_a_missing_argument_is_said_in_the_command_s_voice(
	args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt keys` alone names what it takes (set, remove, list or path), not argparse's
	"error: the following arguments are required: action"; the usage line stays above it."""
	with pytest.raises(SystemExit) as stopped:
		openmolt_main(args)
	assert stopped.value.code == 2
	err = capsys.readouterr().err
	assert err.startswith("usage: openmolt ")
	assert f"{said} (`openmolt {args[0]}" in err
	assert "error:" not in err and "action" not in err


@pytest.mark.parametrize(
	("command", "typo", "meant"),
	[
		(["sessions", "prune"], "--idel", "--idle"),
		(["sessions", "prune"], "--dryrun", "--dry-run"),
		(["keys", "set"], "--valeu", "--value"),
	],
)
def test_a_subcommands_option_mistyped_is_named_by_the_subcommand(
	command: list[str], typo: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt sessions prune --idel 9` offers prune's --idle, and names prune's help."""
	err = _error([*command, typo, "9"], capsys)
	prog = "openmolt " + " ".join(command)
	assert err.startswith(f"{prog}: no such option {typo!r}; did you mean {meant!r}?"), err
	assert f"(`{prog} --help` lists them)" in err, err


def test_a_mistyped_tool_module_or_file_names_the_one_beside_it(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""`--tool mytool:f` and `--tool mytool.py:f` guess `mytools` when mytools.py is beside them."""
	from openmolt_core.cli._run import _import_tool

	monkeypatch.chdir(tmp_path)
	monkeypatch.syspath_prepend(str(tmp_path))
	(tmp_path / "mytools_nc63.py").write_text("def lookup(order: int) -> str:\n\treturn 'ok'\n")
	said = {
		"mytool_nc63:lookup": "cannot import mytool_nc63: No module named 'mytool_nc63'; "
		"did you mean mytools_nc63:lookup?",
		"mytool_nc63.py:lookup": "no such file 'mytool_nc63.py'; did you mean "
		"mytools_nc63.py:lookup?",
		"elsewhere_nc63:lookup": "No module named 'elsewhere_nc63'",
	}
	for reference, error in said.items():
		with pytest.raises(ConfigurationError) as raised:
			_import_tool(reference)
		assert str(raised.value).endswith(error), str(raised.value)
	assert "did you mean" not in str(raised.value)
	monkeypatch.delitem(__import__("sys").modules, "mytools_nc63", raising=False)
	assert _import_tool("mytools_nc63:lookup")(1) == "ok"
