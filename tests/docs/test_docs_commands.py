"""Every ``openmolt`` command the docs show parses, and every option the docs name exists.

A reader copies ``openmolt logs --status error`` from a page; if the option was renamed, the page
lies. Each command line of README.md and docs/ (in a shell block, or a code span of the prose) is
given to the command itself, in process: its argument parser parses it and is stopped right
after, so nothing runs. A command, an action (``keys set``) or an option the parser does not
know fails here with the command's own message. The few the docs show as mistakes (``openmolt
tols``) must still fail, as the docs say they do. Placeholders (``FILE``, ``N``, ``PORT``) are
given a value of their kind first.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.cli import _dispatch

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^\s*```(\w*)\s*$")
_SHELLS = frozenset({"bash", "sh", "shell", "console"})
_IN_BLOCK = re.compile(r"(?:^|[|;&]\s*|\$\s*)(?:uv run |python -m )?(openmolt(?= |$)[^#|;&]*)")
_SPAN = re.compile(r"`([^`\n]+)`")

MISTAKES = {
	"openmolt tols": "no such command 'tols'; did you mean 'tools'?",
	"openmolt --versoin": "did you mean '--version'?",
	"openmolt logs --jsn": "did you mean '--json'?",
	"openmolt --json": "needs an agent file",
	"openmolt --input": "needs an agent file",
	"openmolt sessions s": "no such action 's'",
	"openmolt acme-report": "no such command",  # a plugin's command in the plugin guide
}
"""The commands a page shows as mistakes, and what the command says of each."""

_PLACEHOLDERS = {
	"FILE": "examples/hello.json",
	"AGENT_FILE": "examples/hello.json",
	"<command>": "tools",
	"N": "3",
	"PORT": "8765",
	"HOST": "127.0.0.1",
	"PATH...": "agents/",
}
"""A placeholder word of the docs, and a value of its kind (any other word stands for itself)."""

_REFUSED = (
	"no such",
	"unrecognized",
	"invalid choice",
	"unexpected",
	"is a run's option",
	"is not a",
	"invalid",
	"did you mean",
)
"""What a parser says of a word it does not take; "missing X" is fine: a span may name a command
without its arguments (``openmolt answer``)."""


def commands(page: Path) -> Iterator[tuple[str, str]]:
	"""The page's ``openmolt`` command lines: (where, command) for each, comments cut off."""
	block: str | None = None
	for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
		fence = _FENCE.match(line)
		where = f"{page.relative_to(ROOT)}:{number}"
		if fence:
			block = None if block is not None else (fence.group(1) or "text")
		elif block in _SHELLS:
			for found in _IN_BLOCK.finditer(line.split(" # ")[0].strip()):
				yield where, found.group(1).strip()
		elif block is None:
			for span in _SPAN.findall(line):
				span = re.sub(r"^(uv run |python -m )", "", span)
				if span == "openmolt" or span.startswith("openmolt "):
					yield where, span


ALL = sorted({command: where for page in PAGES for where, command in commands(page)}.items())


def words(command: str) -> list[str]:
	"""The arguments of a command line, placeholders filled, a redirection cut off."""
	text = re.sub(r"\[([^\]]*)\]", r"\1", command)  # [--json]: shown, so it must parse
	text = re.split(r"\s[<>]{1,2}\s", f"{text} ")[0]
	return [_PLACEHOLDERS.get(word, word) for word in shlex.split(text)[1:]]


class _Parsed(BaseException):  # not Exception: a command's own handlers let it through
	"""The command's parser parsed its arguments: the command is stopped here."""


def said(args: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
	"""What the command says on stderr when its parser has parsed ``args`` (nothing when it took
	them); the command never gets further than its parser."""
	for name in ("parse_args", "parse_intermixed_args"):
		original = getattr(argparse.ArgumentParser, name)

		def stop(
			self: argparse.ArgumentParser, *a: Any, _original: Any = original, **k: Any
		) -> Any:
			_original(self, *a, **k)
			raise _Parsed

		monkeypatch.setattr(argparse.ArgumentParser, name, stop)
	err = io.StringIO()
	with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
		try:
			_dispatch(args)
		except (_Parsed, SystemExit):
			pass
	return err.getvalue()


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The user's stores and key store in a fresh folder; the command reads the repository's
	example files as the docs run it, from the repository."""
	monkeypatch.setenv("HOME", str(tmp_path))
	monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
	monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
	monkeypatch.setenv("OPENMOLT_RUN_STORE", "off")
	monkeypatch.chdir(ROOT)


def test_the_docs_show_commands() -> None:
	"""The collector finds the commands of the README, the CLI page and the guides, from blocks
	and prose (it is not silently empty)."""
	assert len(ALL) > 100
	found = dict(ALL)
	assert found["openmolt examples/research.py --dry-run"].startswith("docs/cli.md")
	assert "openmolt logs --prune 30" in found  # a span of the prose
	assert "openmolt schema > agent-file.schema.json" in found
	assert set(MISTAKES) <= set(found), set(MISTAKES) - set(found)


@pytest.mark.parametrize(("command", "where"), ALL, ids=[c for c, _ in ALL])
def test_the_command_parses(command: str, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The command, its action and every option the page writes exist; a mistake the page shows
	is refused with what the page says."""
	message = said(words(command), monkeypatch)
	if command in MISTAKES:
		assert MISTAKES[command] in message, f"{where}: {command!r} said {message!r}"
		return
	refused = [word for word in _REFUSED if word in message]
	assert not refused, f"{where}: {command!r} is refused: {message.strip()}"


def test_a_wrong_option_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
	"""The check catches what it is for: an option, an action or a command that does not exist."""
	assert "did you mean" in said(["logs", "--statuss", "error"], monkeypatch)
	assert "no such action" in said(["sessions", "lst"], monkeypatch)
	assert "no such" in said(["examples/hello.json", "--dryrun"], monkeypatch)
	assert said(["logs", "--status", "error"], monkeypatch) == ""


FOREIGN = frozenset(
	{
		"--api-key",  # vLLM's, and an MCP server's argument
		"--max-model-len",  # vLLM's
		"--config",  # LiteLLM's
		"--token",  # an MCP server's argument
		"--database-url",  # an MCP server's argument (docs/guides/mcp.md, security.md)
		"--repository",  # mcp-server-git's
		"--errors",  # the Petstore mock server's
		"--openmolt-allow-model-requests",  # the pytest plugin's (tests/docs runs it)
		"--group",
		"--strict",
		"--verifytypes",
		"--quick",
		"--project",
		"--force",
		"--with",
		"--python",  # uv, pipx, mypy, pyright, mkdocs and the benchmarks'
		"--p",
		"--i",
		"--versoin",
		"--jsn",  # mistakes the CLI page shows
	}
)
"""Options the docs name that belong to another program, or are shown as mistakes."""


def known_options() -> set[str]:
	"""Every option of every command's parser, its actions' included (read as the command is
	stopped where it parses, as `said` does)."""
	from openmolt_core.cli import _run_parser

	found: set[str] = set()

	def walk(parser: argparse.ArgumentParser) -> None:
		for action in parser._actions:
			found.update(action.option_strings)
			if isinstance(action, argparse._SubParsersAction):
				for sub in action.choices.values():
					walk(sub)

	def read(self: argparse.ArgumentParser, *a: Any, **k: Any) -> Any:
		walk(self)
		raise _Parsed

	names = [command.split()[1] for command, _ in ALL if len(command.split()) > 1]
	with pytest.MonkeyPatch.context() as patch:
		patch.setattr(argparse.ArgumentParser, "parse_args", read)
		patch.setattr(argparse.ArgumentParser, "parse_intermixed_args", read)
		for name in {n for n in names if not n.startswith("-") and "." not in n}:
			with (
				contextlib.redirect_stdout(io.StringIO()),
				contextlib.redirect_stderr(io.StringIO()),
			):
				with contextlib.suppress(_Parsed, SystemExit):
					_dispatch([name, "x"])
	walk(_run_parser("openmolt"))
	return found


def test_every_option_the_prose_names_exists() -> None:
	"""An option named alone in the prose (``--status error``, ``--env-file PATH``) is one of
	the command's; another program's (vLLM's ``--api-key``) is listed in `FOREIGN`."""
	known = known_options()
	assert {"--status", "--prune", "--idle", "--value", "--durability"} <= known
	wrong = [
		f"{page.relative_to(ROOT)}:{number}: {option}"
		for page in PAGES
		for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
		for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line)
		if option not in known and option not in FOREIGN
	]
	assert not wrong, wrong
