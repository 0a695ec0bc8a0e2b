"""The ``openmolt`` command: run an agent file once or on its schedules, and inspect plugins.

```
openmolt run FILE [--input TEXT|JSON] [--json] [--dry-run] [--verbose] [--once]
                  [--env-file PATH] [--on-stop finish|cancel] [--approvals ask|approve|deny]
                  [--user ID]
openmolt FILE ...                     the same as `openmolt run FILE ...`
openmolt -m MODEL "PROMPT" ...        a run without an agent file (``openmolt run -m ...``)
openmolt schedules FILE [-n N]        the next fire times of the file's schedules
openmolt plugins [--json]             installed providers and integrations, with versions
openmolt tools [INTEGRATION] [--json] every integration, or one's tools, scopes and schemas
openmolt tools AGENT_FILE [TOOL]      the tools the agent's runs get, from every source
openmolt schema                       the JSON Schema of agent files
openmolt keys set|list|remove|path    a per-user store of API keys and integration secrets
openmolt auth ID | list | revoke ID   sign in to an integration with OAuth2 (encrypted tokens)
openmolt models [WORD] [--json]       the installed providers' models with their list prices
openmolt logs [RUN_ID] [-n N] [-q TEXT] the recorded runs, or one run's events (--prune DAYS)
openmolt logs search TEXT             the same as `openmolt logs -q TEXT`
openmolt sessions list [-n N]         the conversations, the latest active first
openmolt sessions show ID             one conversation's turns (--json: as stored)
openmolt sessions prune [--idle DAYS]  drop turns summaries cover, and idle sessions (--dry-run)
openmolt completion bash|zsh|fish     a shell completion script
openmolt mcp AGENT_FILE               serve the agent as an MCP server over stdio
openmolt import-openapi SPEC --id ID  an integration module from an OpenAPI document
openmolt eval DATASET AGENT_FILE      score an agent on a dataset (--min-score for CI)
openmolt ui [AGENT_FILE ...]          the live run viewer on 127.0.0.1 (needs openmolt[ui])
openmolt worker PATH...               run durable agents' runs and schedules (openmolt[dbos])
openmolt runs                         durable runs parked on a question (openmolt[dbos])
openmolt answer RUN_ID TEXT           answer a parked durable run (openmolt[dbos])
openmolt serve AGENTS ...             webhooks, chats, schedules and the viewer (openmolt[serve])
openmolt --version
```

Every run is recorded in the run store ``openmolt ui`` shows (see `openmolt_core.cli._ui`);
``--ui`` runs the agent with the viewer, whose page answers its questions.
``--durability STORE`` (or ``OPENMOLT_DURABILITY``) makes a run durable: a SQLite file or a
``postgresql://`` URL (see docs/guides/durable.md).

Subcommands always win over a file of the same name (``openmolt run tools`` runs a file named
``tools``). Results go to stdout as JSON; progress goes to stderr (JSON lines with ``--json``).
Exit codes: see `openmolt_core.cli._exit.ExitCode`.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, TextIO

from openmolt_core._support.docs import docs_url
from openmolt_core.cli._argparse import CommandParser, count
from openmolt_core.cli._exit import EXIT_CODES, ExitCode
from openmolt_core.cli._terminal import printable, printing
from openmolt_core.cli._voice import FILE_ADVICE as _FILE_ADVICE  # noqa: F401  (tests read it)
from openmolt_core.cli._voice import for_the_command
from openmolt_core.cli._voice import show_warning as _show_warning
from openmolt_core.errors import OpenMoltError, PluginError

if TYPE_CHECKING:
	from openmolt_core._startup import StartupGC

__all__ = ["ExitCode", "approve_on_terminal", "ask_on_terminal", "main"]


def __getattr__(name: str) -> object:
	# The terminal prompts load the engine: imported when asked for, so that a command that
	# stops early (a missing key, a mistyped word) starts fast.
	if name == "approve_on_terminal":
		from openmolt_core.cli._approve import approve_on_terminal

		return approve_on_terminal
	if name == "ask_on_terminal":
		from openmolt_core.cli._progress import ask_on_terminal

		return ask_on_terminal
	raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SUMMARY = {
	"run": "run an agent file (agent.json or agent.py) once, or serve its schedules",
	"schedules": "list the next fire times of an agent file's schedules",
	"plugins": "list the installed providers and integrations, with versions",
	"tools": "list every integration, one integration's tools, scopes and input schemas, or the "
	"tools an agent file's runs get",
	"integrations": "the same as tools: the installed integrations, or one's keys and tools",
	"schema": "print the JSON Schema of agent files (for editors)",
	"keys": "store API keys and integration secrets for the command (a 0600 file)",
	"auth": "sign in to an integration with OAuth2 and keep its tokens encrypted (list, revoke)",
	"models": "list the providers' models with their prices per million tokens",
	"logs": "list the recorded runs (search TEXT), or show one run's events (--prune DAYS)",
	"sessions": "list the conversations, show one, or prune the store (covered turns, idle ones)",
	"completion": "print a completion script for bash, zsh or fish",
	"eval": "score an agent file's agent on a dataset (--min-score for CI)",
	"ui": "the live run viewer on 127.0.0.1 (needs openmolt[ui])",
	"serve": "host agents' webhooks, chat channels, schedules and the viewer (openmolt[serve])",
	"mcp": "serve an agent file's agent as an MCP server over stdio",
	"import-openapi": "write an integration module from an OpenAPI document",
	"worker": "run durable agents' runs and schedules (needs openmolt[dbos])",
	"runs": "list durable runs parked on a question (needs openmolt[dbos])",
	"answer": "answer a parked durable run (needs openmolt[dbos])",
}


def _version() -> str:
	from openmolt_core import __version__

	return f"openmolt {__version__} (Python {sys.version.split()[0]})"


_WAYS = (
	("usage: openmolt <command> [options]", ""),
	("   or: openmolt FILE [options]", "run an agent file (agent.json, agent.py)"),
	(
		'   or: openmolt -m MODEL "PROMPT" [options]',
		"a prompt without a file (-m openai:gpt-5-mini)",
	),
)
"""The overview's usage: the three ways to call the command, each with what it does."""


def _table(rows: Sequence[tuple[str, str]], width: int) -> list[str]:
	"""Rows of a name and its text, the texts in one column wrapped under each other.

	On a terminal too narrow for that column, each text is wrapped on the lines under its name.
	"""
	import textwrap

	column = max(len(name) for name, _ in rows) + 2
	if width - column < 30:
		column = 8
	lines: list[str] = []
	for name, text in rows:
		wrapped = textwrap.wrap(
			text, width - column, break_long_words=False, break_on_hyphens=False
		)
		if wrapped and len(name) + 2 <= column:
			lines.append(f"{name.ljust(column)}{wrapped.pop(0)}")
		else:
			lines.append(name)
		lines.extend(" " * column + more for more in wrapped)
	return lines


def _overview() -> str:
	"""``openmolt --help``: the commands and the exit codes, wrapped to the terminal's width.

	That is the width argparse wraps each command's help at: ``COLUMNS``, else the terminal's,
	less 2.
	"""
	import shutil
	import textwrap

	width = shutil.get_terminal_size().columns - 2

	def paragraph(text: str) -> list[str]:
		return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)

	lines = [
		*_table(_WAYS, width),
		"",
		"Run OpenMolt agents and look at what is installed.",
		"",
		"commands:",
		*_table([(f"  {name}", text) for name, text in _SUMMARY.items()], width),
		"",
		*paragraph(
			"`openmolt FILE` is short for `openmolt run FILE`; `openmolt <command> --help` shows "
			"the command's options; `openmolt --version` prints the version."
		),
		"",
		*paragraph(" ".join(_RECORDED)),
		"",
		"exit codes:",
		*_table([(f"  {int(code):>3}", text) for code, text in EXIT_CODES.items()], width),
	]
	return "\n".join(lines) + "\n"


_RECORDED = (
	"Every run is recorded with its input, output and conversation (secrets masked) in",
	"$XDG_STATE_HOME/openmolt/runs.db (~/.local/state/openmolt/runs.db, readable by you only):",
	"`openmolt logs` lists them, `openmolt logs --prune DAYS` deletes old ones, and",
	"OPENMOLT_RUN_STORE=off (or a path) turns recording off (or moves it).",
)
"""What `openmolt --help` and `openmolt run --help` say of the run store."""


def _run_parser(prog: str) -> argparse.ArgumentParser:
	parser = CommandParser(
		prog=prog,
		help_command="openmolt run --help",
		description="Run an OpenMolt agent file once, or on its schedules.",
		epilog="\n".join([*_RECORDED, "", "Exit codes: see `openmolt --help`."]),
		formatter_class=argparse.RawDescriptionHelpFormatter,
	)
	parser.add_argument(
		"file",
		nargs="?",
		help="the agent file: agent.json or agent.py (with -m: the prompt; '-' or none reads stdin)",
	)
	parser.add_argument(
		"-m",
		"--model",
		help="run a prompt without an agent file on this model (openai:gpt-5-mini)",
	)
	parser.add_argument(
		"-s", "--instructions", help="with -m: what the agent does (its system instructions)"
	)
	parser.add_argument(
		"--integration",
		action="append",
		default=[],
		metavar="ID",
		help="with -m: give the agent an integration's tools (repeatable)",
	)
	parser.add_argument(
		"--tool",
		action="append",
		default=[],
		metavar="MODULE:FUNCTION",
		help="with -m: give the agent a Python function as a tool, module:function or "
		"file.py:function (repeatable)",
	)
	parser.add_argument(
		"--input", help="the run's input: JSON if it parses, else the text; '-' reads stdin"
	)
	parser.add_argument(
		"--json",
		action="store_true",
		help="the result as JSON even on a terminal, and progress as JSON lines on stderr",
	)
	parser.add_argument(
		"--dry-run", action="store_true", help="print the prompt, tools and cost; call no model"
	)
	parser.add_argument("--verbose", "-v", action="store_true", help="log steps and key sources")
	parser.add_argument(
		"--no-stream",
		action="store_true",
		help="on a terminal, print the agent's message when the run ends instead of as the "
		"model writes it",
	)
	parser.add_argument("--once", action="store_true", help="run once even if there are schedules")
	parser.add_argument("--env-file", help="the .env file to read (default: ./.env if present)")
	parser.add_argument(
		"--durability",
		help="make runs durable: a SQLite file or a postgresql:// URL (default: "
		"$OPENMOLT_DURABILITY, else the file's durability, else in process)",
	)
	parser.add_argument(
		"--on-stop",
		choices=("finish", "cancel"),
		default="finish",
		help="on Ctrl-C or SIGTERM, let a scheduled run in flight finish (default) or cancel it",
	)
	parser.add_argument(
		"--approvals",
		choices=("ask", "approve", "deny"),
		help="tool calls that wait for approval: ask on the terminal (default; refused without "
		"one), or approve or deny them all",
	)
	parser.add_argument(
		"--ui", action="store_true", help="serve the run viewer while it runs (openmolt[ui])"
	)
	parser.add_argument(
		"--session",
		metavar="ID",
		help="continue the conversation ID (or start it): the agent sees its earlier turns; "
		"kept in $OPENMOLT_SESSIONS, else ~/.local/state/openmolt/sessions.db",
	)
	parser.add_argument(
		"--user",
		metavar="ID",
		help="the end user the run acts for: integrations with account 'user' use their "
		f"stored credential ({docs_url('guides/accounts.md')})",
	)
	parser.add_argument(
		"-c",
		"--continue",
		dest="continue_last",
		action="store_true",
		help="continue this agent's last conversation (a new one if there is none)",
	)
	return parser


def _run_command(args: list[str], prog: str, startup: StartupGC | None = None) -> int:
	from openmolt_core._startup import StartupGC

	if startup is None:
		startup = StartupGC()  # paused until the agent is built: see that module
	try:
		return _run_paused(args, prog, startup)
	finally:
		startup.close()


_NOT_EMPTY = (
	("session", "--session", "a conversation id (a name of your choice)"),
	("user", "--user", "the id of the end user the run acts for"),
	("model", "-m", "a model, e.g. -m openai:gpt-5-mini"),
	("integration", "--integration", "an integration id, e.g. --integration github"),
	("tool", "--tool", "module:function or file.py:function, e.g. --tool mytools:lookup_order"),
)
"""Run options whose value cannot be empty or blank: (argparse dest, option, what to give)."""


def _run_paused(args: list[str], prog: str, startup: StartupGC) -> int:
	parser = _run_parser(prog)
	ns = parser.parse_args(args)
	if ns.session is not None and ns.continue_last:
		parser.error("give --session ID or -c (continue the last conversation), not both")
	for dest, option, what in _NOT_EMPTY:  # `--user ""`: said here, not by the engine mid-start
		given = getattr(ns, dest)
		if any(
			v is not None and not v.strip() for v in (given if isinstance(given, list) else [given])
		):
			parser.error(f"{option}: give {what}")
	if ns.model is None:
		if ns.file is None:
			parser.error("give an agent file (agent.json or agent.py), or -m MODEL and a prompt")
		if ns.integration or ns.tool or ns.instructions:
			parser.error("--integration, --tool and --instructions go with -m MODEL")
		if not ns.dry_run:
			from openmolt_core.cli._early import missing_provider_key

			# A missing provider key is said before the engine is even imported.
			problem = missing_provider_key(ns.file, ns.env_file)
			if problem is not None:
				from openmolt_core.errors import ConfigurationError

				raise ConfigurationError(problem)
	import anyio

	return anyio.run(_run_agent, ns, startup)


MAX_STDIN_CHARS = 8 << 20
"""The most characters read from stdin (the prompt of ``-m``, ``--input -``): about two million
tokens, more than a model reads in one request; ``openmolt -m ... < /dev/zero`` stops there."""


def _stdin_text() -> str | None:
	"""What was piped in, less one final newline (None on a terminal).

	``echo Ada | openmolt -m ...`` sends ``Ada``, as `llm` does: the newline ends the line, it
	is not part of the prompt. Only one is taken off; the text's own blank lines stay.

	Raises:
		ConfigurationError: More than `MAX_STDIN_CHARS` characters were piped in.
	"""
	if sys.stdin is None or sys.stdin.isatty():
		return None
	text = sys.stdin.read(MAX_STDIN_CHARS + 1)
	if len(text) > MAX_STDIN_CHARS:
		from openmolt_core.errors import ConfigurationError

		raise ConfigurationError(
			f"stdin: more than {MAX_STDIN_CHARS // 2**20} Mi characters were piped in, more than "
			"a model reads in one request; give a shorter text (a tool can read a large file)"
		)
	return text.removesuffix("\r\n") if text.endswith("\r\n") else text.removesuffix("\n")


def _prompt_input(ns: argparse.Namespace) -> str:
	"""-m's input: the prompt, stdin, or both (the prompt first, as `llm` does)."""
	from openmolt_core.errors import ConfigurationError

	prompt = ns.input if ns.input not in (None, "-") else ns.file
	piped = _stdin_text() if prompt in (None, "-") or ns.file is not None else None
	if prompt == "-":
		prompt = None
	parts = [p for p in (prompt, piped) if p and p.strip()]
	if not parts:
		if piped is not None and not (prompt and prompt.strip()):  # `cat empty.txt | openmolt -m`
			raise ConfigurationError(
				'-m needs a prompt, and the text piped in was empty: openmolt -m MODEL "..."'
			)
		raise ConfigurationError('-m needs a prompt: openmolt -m MODEL "..." (or pipe text in)')
	return "\n\n".join(parts)


async def _run_agent(ns: argparse.Namespace, startup: StartupGC) -> int:
	# Not named _run: importing the submodule cli._run rebinds that name in this package.
	from openmolt_core.cli._progress import Progress
	from openmolt_core.cli._run import check_ready, error_voice, load, parse_input, run_once, serve
	from openmolt_core.cli._ui import record_runs, run_with_ui

	# --verbose shows each event once, as a progress line; the instance's own logging stays off,
	# or every step would be printed twice.
	progress = Progress.for_terminal(json_events=ns.json, verbose=ns.verbose)
	if ns.model is not None or not str(ns.file).endswith(".py"):  # an agent.py is Python
		progress.voice = partial(for_the_command, prompt=ns.model is not None)
	durability = None if ns.dry_run else ns.durability or os.environ.get("OPENMOLT_DURABILITY")
	# The trifecta warning is the run's: said once the checks pass, not before a missing key.
	held = _Held("LethalTrifectaWarning")
	with held:
		if ns.model is not None:
			from openmolt_core.cli._run import load_prompt

			loaded = load_prompt(
				ns.model,
				instructions=ns.instructions,
				integrations=ns.integration,
				tools=ns.tool,
				env_file=ns.env_file,
				verbose=False,
				durability=durability,
			)
			loaded.input = _prompt_input(ns)
			ns.input = None  # the prompt is the input, never parsed as JSON
		else:
			loaded = load(ns.file, env_file=ns.env_file, verbose=False, durability=durability)
			if ns.input == "-":
				ns.input = _stdin_text() or ""
	from openmolt_core.cli._approve import install
	from openmolt_core.cli._ecosystem import remember_plugins
	from openmolt_core.cli._keys import rejected_key_source

	voice = progress.voice  # a rejected key's line says which source gave it
	progress.voice = lambda text: rejected_key_source(voice(text), loaded.keys)

	install(loaded.agent, ns.approvals or "ask", explicit=ns.approvals is not None)
	remember_plugins(loaded.om.plugins.sources())  # named if their distribution goes away
	if ns.verbose:
		for report in loaded.keys:
			progress.line(report.line())
	input = parse_input(ns.input, loaded.input)
	startup.resume()  # the agent is built: the collector runs again
	if ns.dry_run:
		from openmolt_core.cli._info import dry_run

		loaded.agent.provider()  # settings it cannot be made with: said once, as a run says them
		for problem in check_ready(loaded, strict=False):
			progress.line(f"warning: {progress.voice(problem)}")
		try:  # a bad schedule fails the runs (`openmolt FILE`, serve, worker): said here too
			from openmolt_core.cli._run import schedule_specs

			schedule_specs(loaded, input)
		except OpenMoltError as exc:
			progress.line(f"warning: {exc}")
		held.show()
		try:
			# Tools only a running service knows (MCP servers) are listed as a run would.
			await loaded.agent._refresh_tools()
		except OpenMoltError as exc:
			progress.line(f"warning: the run-time tools could not be listed: {exc}")
		try:
			dry_run(loaded.agent, loaded.model_id, input, printing(sys.stdout), as_json=ns.json)
		finally:
			await loaded.om.aclose()
		return ExitCode.SUCCESS
	check_ready(loaded, strict=True)  # a missing key or setting fails here, before any run
	held.show()
	unrecorded = record_runs(loaded.om, error_voice(loaded))  # its errors as printed
	if unrecorded:
		progress.line(f"warning: {unrecorded}")
	session = None
	if ns.session is not None or ns.continue_last:
		from openmolt_core.cli._run import cli_session
		from openmolt_core.errors import ConfigurationError

		if (loaded.schedules or loaded.om.schedules) and not ns.once:
			raise ConfigurationError(
				"--session and -c continue one conversation: add --once to run this agent "
				"with schedules once"
			)
		session = await cli_session(loaded.agent.name, ns.session)
		progress.line(f"session: {session.session_id}")
	# A person at a terminal gets a summary; pipes and --json get the JSON result (or record).
	readable = not ns.json and sys.stdout.isatty()
	if (loaded.schedules or loaded.om.schedules) and not ns.once:
		go = partial(serve, loaded, input, progress, on_stop=ns.on_stop, readable=readable)
		if ns.ui:
			return await run_with_ui(loaded, go, progress.line, linger=False)
		return await go()
	stream = readable and not ns.no_stream  # the message as it is written, on a terminal
	once = partial(
		run_once,
		loaded,
		input,
		progress,
		readable=readable,
		session=session,
		stream=stream,
		user=ns.user,
	)
	if ns.ui:
		return await run_with_ui(loaded, once, progress.line, linger=True)
	return await once()


class _Held:
	"""Holds the warnings of one category while a block runs, to show them later (`show`)."""

	def __init__(self, category: str) -> None:
		self.category = category
		self.warnings: list[tuple[Warning | str, type[Warning], str, int]] = []
		self._shown: Callable[..., None] | None = None

	def __enter__(self) -> None:
		self._shown = shown = warnings.showwarning

		def hold(
			message: Warning | str,
			category: type[Warning],
			filename: str,
			lineno: int,
			file: TextIO | None = None,
			line: str | None = None,
		) -> None:
			if category.__name__ == self.category:
				self.warnings.append((message, category, filename, lineno))
			else:
				shown(message, category, filename, lineno, file, line)

		warnings.showwarning = hold

	def __exit__(self, *exc: object) -> None:
		if self._shown is not None:
			warnings.showwarning = self._shown

	def show(self) -> None:
		"""Show what was held, as it would have been shown."""
		for message, category, filename, lineno in self.warnings:
			warnings.showwarning(message, category, filename, lineno)
		self.warnings.clear()


def _schedules_command(args: list[str]) -> int:
	from openmolt_core.cli._schedules import list_schedules

	parser = CommandParser(
		prog="openmolt schedules",
		description="List the next fire times of each schedule of an agent file, in the "
		"schedule's own time zone. Calls no model and needs no key.",
	)
	parser.add_argument("file", help="the agent file: agent.json or agent.py")
	parser.add_argument(
		"-n", "--count", type=count, default=5, help="fire times per schedule (default: 5)"
	)
	parser.add_argument("--json", action="store_true", help="print JSON")
	parser.add_argument("--env-file", help="the .env file to read (default: ./.env if present)")
	ns = parser.parse_args(args)
	return list_schedules(ns.file, count=ns.count, as_json=ns.json, env_file=ns.env_file)


def _info_command(name: str, args: list[str]) -> int:
	from openmolt_core.cli._info import list_integrations, list_plugins, list_tools, print_schema
	from openmolt_core.openmolt import OpenMolt

	summary = _SUMMARY[name]
	parser = CommandParser(
		prog=f"openmolt {name}", description=f"{summary[0].upper()}{summary[1:]}."
	)
	if name == "integrations":  # what a user who has not met `tools` types first
		name = "tools"
	if name == "tools":
		parser.add_argument(
			"integration",
			nargs="?",
			help="the integration id, e.g. notion (default: list all); or an agent file: the "
			"tools its runs get, from every source (MCP servers are started to list theirs)",
		)
		parser.add_argument(
			"tool",
			nargs="?",
			help="one tool's handle, e.g. postMessage: its whole input schema (or give "
			"slack.postMessage alone)",
		)
	if name != "schema":
		parser.add_argument("--json", action="store_true", help="print JSON")
	ns = parser.parse_args(args)
	if name in ("plugins", "tools"):
		from openmolt_core.cli._ecosystem import remember_plugins

		listed = OpenMolt().plugins.installed()
		remember_plugins({f"{p.group}:{p.name}": p.distribution for p in listed if p.distribution})
	if name == "schema":
		print_schema(sys.stdout, OpenMolt())
	elif name == "plugins":
		list_plugins(OpenMolt(), printing(sys.stdout), as_json=ns.json)
	elif ns.integration is None:
		list_integrations(OpenMolt(), printing(sys.stdout), as_json=ns.json)
	elif ns.integration.endswith((".json", ".py")) and os.path.isfile(ns.integration):
		import anyio

		from openmolt_core.cli._agenttools import list_file_tools

		with _Held("LethalTrifectaWarning"):  # about running the agent, which this does not do
			anyio.run(
				partial(
					list_file_tools,
					ns.integration,
					printing(sys.stdout),
					as_json=ns.json,
					handle=ns.tool,
				)
			)
	elif ns.integration.endswith((".json", ".py")):
		from openmolt_core.cli._agentfile import AgentFileError
		from openmolt_core.cli._typos import near_file

		near = near_file(ns.integration)
		hint = f"; did you mean {near!r}?" if near else ""
		raise AgentFileError(f"{ns.integration}: no such agent file{hint}")
	else:
		integration, tool = ns.integration, ns.tool
		if tool is None and "." in integration:  # slack.postMessage, as agent files spell it
			integration, tool = integration.split(".", 1)
		list_tools(OpenMolt(), integration, printing(sys.stdout), as_json=ns.json, handle=tool)
	return ExitCode.SUCCESS


def _keys_command(args: list[str]) -> int:
	from openmolt_core.cli import _keystore

	return _keystore.main(args)


def _auth_command(args: list[str]) -> int:
	from openmolt_core.cli import _auth

	return _auth.main(args)


def _models_command(args: list[str]) -> int:
	from openmolt_core.cli import _models

	return _models.main(args)


def _logs_command(args: list[str]) -> int:
	from openmolt_core.cli import _logs

	return _logs.main(args)


def _sessions_command(args: list[str]) -> int:
	from openmolt_core.cli import _sessions

	return _sessions.main(args)


_ASKED = frozenset({"--models", "--integrations", "--key-owners", "--tools"})
"""What a completion script asks ``openmolt completion`` at each Tab: no command is read for it."""


def _completion_command(args: list[str]) -> int:
	from openmolt_core.cli import _completion

	if _ASKED.intersection(args):  # a Tab: the plugins' commands (and their imports) not loaded
		return _completion.main(args, [], None)
	probed: set[str] = set()

	def commands() -> list[str]:
		# Read once the arguments parse: `completion --help` or a mistyped shell loads no plugin
		# (DBOS alone takes seconds to import).
		from openmolt_core.cli._commands import PLUGIN_COMMANDS, registered

		found = registered()
		# A command's options are read by starting it with --help (it stops as its parser
		# parses): only the core's and OpenMolt's own distributions' commands, which parse
		# first. Another distribution's command might not use argparse, and would then run.
		probed.update(name for name in _SUMMARY if name not in PLUGIN_COMMANDS)
		probed.update(
			name
			for name, command in found.items()
			if command.distribution == f"openmolt-{PLUGIN_COMMANDS.get(name)}"
		)
		return [*_SUMMARY, *(name for name in found if name not in _SUMMARY)]

	def run(name: str, rest: list[str]) -> object:
		return _dispatch([name, *rest]) if name in probed else None

	from openmolt_core.cli._auth import ACTIONS

	return _completion.main(
		args, commands, run, actions={"auth": ACTIONS}, first_words={"logs": ("search",)}
	)


def _ecosystem_command(args: list[str]) -> int:
	from openmolt_core.cli import _ecosystem

	return _ecosystem.main(args)


_SHOWS_RECORDS = frozenset({"logs", "sessions", "ui", "serve"})
"""The commands that show what the stores recorded (runs, sessions; the viewer): what they print or
serve is masked with the keys of the ``.env`` file and the key store too (`know_kept_keys`)."""


def _dispatch(args: list[str]) -> int:
	if args[:1] == ["help"] and len(args) > 1:
		args = [*args[1:2], "--help"]  # `openmolt help tools` is `openmolt tools --help`
	if not args or args[0] in ("-h", "--help", "help"):
		sys.stdout.write(_overview())
		return ExitCode.SUCCESS
	if args[0] in ("--version", "-V"):
		sys.stdout.write(_version() + "\n")
		return ExitCode.SUCCESS
	name, rest = args[0], args[1:]
	if name in _SHOWS_RECORDS:
		from openmolt_core.cli._keystore import know_kept_keys

		know_kept_keys()
	commands: dict[str, Callable[[], int]] = {
		"run": lambda: _run_command(rest, "openmolt run"),
		"schedules": lambda: _schedules_command(rest),
		"plugins": lambda: _info_command("plugins", rest),
		"tools": lambda: _info_command("tools", rest),
		"integrations": lambda: _info_command("integrations", rest),
		"schema": lambda: _info_command("schema", rest),
		"keys": lambda: _keys_command(rest),
		"auth": lambda: _auth_command(rest),
		"models": lambda: _models_command(rest),
		"logs": lambda: _logs_command(rest),
		"sessions": lambda: _sessions_command(rest),
		"completion": lambda: _completion_command(rest),
		"import-openapi": lambda: _ecosystem_command(args),
	}
	if name in commands:
		return commands[name]()
	from openmolt_core._startup import StartupGC

	# A run, most likely: its start-up is paused from here (the look-up of plugin commands and
	# typos below included); a plugin's command gets the collector back before it starts.
	startup = StartupGC()
	try:
		return _run_or_plugin(args, list(commands), startup)
	finally:
		startup.close()


def _run_or_plugin(args: list[str], commands: list[str], startup: StartupGC) -> int:
	"""``openmolt NAME ...`` that is no core command: a file to run, a plugin's command, a typo."""
	from openmolt_core.cli._typos import file_like, not_a_file

	name, rest = args[0], args[1:]
	if not name.startswith("-") and file_like(name):
		return _run_command(args, "openmolt", startup)  # a file: no plugin command to look for
	if name.startswith("-") and any(not a.startswith("-") for a in rest):
		# Options, then a file or a prompt (`openmolt -m MODEL "..."`, `openmolt -v agent.json`):
		# a run, as `not_a_file` would say, without loading the look-up of commands and typos.
		return _run_command(args, "openmolt", startup)
	found: list[str] = []
	if not name.startswith("-"):
		from openmolt_core.cli import _commands

		plugin_command = _commands.find(name)  # openmolt serve, ui, worker, mcp...
		if plugin_command is not None:
			startup.close()  # a server or a worker runs on: Python's collector, as it was
			return _plugin_command(name, plugin_command.main, rest)
		found = list(_commands.registered())  # every plugin's: a typo of any of them is named
	from openmolt_core.cli._commands import PLUGIN_COMMANDS

	run_options = _run_parser("openmolt")._option_string_actions
	problem = not_a_file(name, args, [*commands, *PLUGIN_COMMANDS, *found], run_options)
	if problem:
		print(f"openmolt: {problem}", file=sys.stderr)
		return ExitCode.USAGE
	return _run_command(args, "openmolt", startup)


def _plugin_command(name: str, command: Callable[[list[str]], int], rest: list[str]) -> int:
	"""Run a plugin's command; a parser it made without ``prog`` reads ``openmolt NAME``."""
	saved = sys.argv[:1]
	sys.argv[:1] = [f"openmolt {name}"]  # argparse's default prog is sys.argv[0]'s base name
	try:
		return command(rest)
	finally:
		sys.argv[:1] = saved


def _close_stdout() -> None:
	# The reader went away: point stdout at /dev/null so the interpreter's final flush does not
	# fail again (https://docs.python.org/3/library/signal.html#note-on-sigpipe).
	try:
		devnull = os.open(os.devnull, os.O_WRONLY)
		os.dup2(devnull, sys.stdout.fileno())
	except (OSError, ValueError):
		pass


def _only_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
	"""The one OpenMolt error ``group`` holds, however deeply nested; else the group itself."""
	leaves: list[BaseException] = []

	def walk(found: BaseException) -> None:
		if isinstance(found, BaseExceptionGroup):
			for inner in found.exceptions:
				walk(inner)
		else:
			leaves.append(found)

	walk(group)
	only = leaves[0] if len(leaves) == 1 else None
	return only if isinstance(only, OpenMoltError) else group


def _mask_printed(text: str) -> str:
	"""`openmolt_core._support.masking.mask_printed`, imported when a hook first prints."""
	from openmolt_core._support.masking import mask_printed

	return mask_printed(text)


def main(argv: Sequence[str] | None = None) -> int:
	"""Run the ``openmolt`` command.

	Args:
		argv: The arguments (default: ``sys.argv[1:]``).

	Returns:
		The exit code (see `ExitCode`).
	"""
	args = list(sys.argv[1:] if argv is None else argv)
	shown = warnings.showwarning
	verbose = "--verbose" in args or "-v" in args
	prompt = any(a == "--model" or a.startswith(("--model=", "-m")) for a in args)
	# An agent.py is Python: advice for JSON agent files would be wrong there.
	python = not prompt and any(a.endswith(".py") and not a.startswith("-") for a in args)
	warnings.showwarning = partial(_show_warning, verbose=verbose, prompt=prompt, python=python)
	from openmolt_core._support.stderr_masking import install_masked_hooks, uninstall_masked_hooks

	# An exception no handler here catches, a thread's, an unraisable one: printed masked.
	install_masked_hooks(_mask_printed)
	from openmolt_core.cli._said import Unsaid, unsaid

	typed = unsaid(args)  # a typed word that may be a key: never printed back, whoever prints
	stderr = sys.stderr
	if typed:
		sys.stderr = Unsaid(stderr, typed)
	try:
		try:
			code = _dispatch(args)
		except ExceptionGroup as group:
			# A task group's one error (a viewer that cannot listen beside `openmolt serve`'s
			# schedules) is said as itself, not as "unhandled errors in a TaskGroup".
			raise _only_error(group) from group
		sys.stdout.flush()
		return int(code)
	except BrokenPipeError:
		_close_stdout()
		return ExitCode.PIPE_CLOSED
	except OpenMoltError as exc:
		from openmolt_core._support.masking import mask_printed

		text = mask_printed(str(exc))
		text = text if python else for_the_command(text, prompt=prompt)
		# Each line in the command's voice; a blank one (a library's paragraph break) is left out.
		for line in [t for t in text.splitlines() if t.strip()] or [type(exc).__name__]:
			print(f"openmolt: {printable(line)}", file=sys.stderr)
		if isinstance(exc, PluginError):
			from openmolt_core.cli._ecosystem import former_plugin_hint

			hint = former_plugin_hint(exc)  # its distribution was uninstalled since
			if hint:
				print(f"openmolt: {hint}", file=sys.stderr)
		return ExitCode.USAGE
	except KeyboardInterrupt:
		print("openmolt: interrupted", file=sys.stderr)
		return ExitCode.INTERRUPTED
	except Exception as exc:
		from openmolt_core._support.masking import mask_printed

		if verbose:  # the chain and notes too: masked like a log record's traceback
			sys.stderr.write(mask_printed(traceback.format_exc()))
		print(
			printable(
				mask_printed(
					f"openmolt: unexpected error: {type(exc).__name__}: {exc} "
					"(--verbose shows the traceback)"
				)
			),
			file=sys.stderr,
		)
		return ExitCode.INTERNAL
	finally:
		if typed and isinstance(sys.stderr, Unsaid):
			sys.stderr = stderr
		if argv is not None:  # called from code (tests): leave warnings and hooks as they were
			warnings.showwarning = shown
			uninstall_masked_hooks()
		else:
			from openmolt_core.cli._exit import wait_for_abandoned_calls

			# A sync tool a cancelled run left running: said, and Ctrl-C ends the wait.
			wait_for_abandoned_calls(json_lines="--json" in args)
			from openmolt_core._startup import freeze_for_exit

			freeze_for_exit()
