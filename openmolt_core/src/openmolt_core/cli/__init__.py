"""The ``openmolt`` command: run an agent file once or on its schedules, and inspect plugins.

```
openmolt agent.json [--input TEXT|JSON] [--json] [--dry-run] [--verbose] [--once]
                    [--env-file PATH] [--on-stop finish|cancel] [--approvals ask|approve|deny]
openmolt agent.py ...                 a Python file defining `agent` (see docs/cli.md)
openmolt plugins [--json]             installed providers and integrations, with versions
openmolt tools INTEGRATION [--json]   an integration's tools, scopes and input schemas
openmolt schema                       the JSON Schema of agent files
openmolt mcp AGENT_FILE               serve the agent as an MCP server over stdio
openmolt import-openapi SPEC --id ID  an integration module from an OpenAPI document
openmolt eval DATASET AGENT_FILE      score an agent on a dataset (--min-score for CI)
openmolt worker PATH...               run durable agents' runs and schedules (openmolt[dbos])
openmolt runs                         durable runs parked on a question (openmolt[dbos])
openmolt answer RUN_ID TEXT           answer a parked durable run (openmolt[dbos])
```

``--durability STORE`` (or ``OPENMOLT_DURABILITY``) makes a run durable: a SQLite file or a
``postgresql://`` URL (see docs/guides/durable.md).

Results go to stdout as JSON; progress goes to stderr (JSON lines with ``--json``). Exit codes:
0 success, 1 the run did not succeed, 2 a usage or configuration error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import anyio

from openmolt_core.cli._approve import approve_on_terminal
from openmolt_core.cli._progress import Progress, ask_on_terminal
from openmolt_core.errors import OpenMoltError

__all__ = ["approve_on_terminal", "ask_on_terminal", "main"]

_COMMANDS = ("plugins", "tools", "schema")
_DURABLE = ("worker", "runs", "answer")  # openmolt-dbos's commands


def _run_parser() -> argparse.ArgumentParser:
	parser = argparse.ArgumentParser(
		prog="openmolt",
		description="Run an OpenMolt agent file once, or on its schedules.",
		epilog="Other commands: openmolt plugins | openmolt tools INTEGRATION | openmolt schema. "
		"Exit codes: 0 success, 1 the run did not succeed, 2 usage or configuration error, "
		"130 interrupted.",
	)
	parser.add_argument("file", help="the agent file: agent.json or agent.py")
	parser.add_argument("--input", help="the run's input: JSON if it parses, else the text")
	parser.add_argument("--json", action="store_true", help="progress as JSON lines on stderr")
	parser.add_argument(
		"--dry-run", action="store_true", help="print the prompt, tools and cost; call no model"
	)
	parser.add_argument("--verbose", "-v", action="store_true", help="log steps and key sources")
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
	return parser


def _command(args: list[str]) -> int:
	from openmolt_core.cli._info import list_plugins, list_tools, print_schema
	from openmolt_core.openmolt import OpenMolt

	parser = argparse.ArgumentParser(prog=f"openmolt {args[0]}")
	if args[0] == "tools":
		parser.add_argument("integration", help="the integration id, e.g. notion")
	if args[0] != "schema":
		parser.add_argument("--json", action="store_true", help="print JSON")
	ns = parser.parse_args(args[1:])
	if args[0] == "schema":
		print_schema(sys.stdout)
	elif args[0] == "plugins":
		list_plugins(OpenMolt(), sys.stdout, as_json=ns.json)
	else:
		list_tools(OpenMolt(), ns.integration, sys.stdout, as_json=ns.json)
	return 0


async def _run(ns: argparse.Namespace) -> int:
	from openmolt_core.cli._info import dry_run
	from openmolt_core.cli._run import load, parse_input, run_once, serve

	progress = Progress.for_terminal(json_events=ns.json)
	durability = None if ns.dry_run else ns.durability or os.environ.get("OPENMOLT_DURABILITY")
	loaded = load(
		ns.file,
		env_file=ns.env_file,
		verbose=ns.verbose,
		need_key=not ns.dry_run,
		durability=durability,
	)
	from openmolt_core.cli._approve import install

	install(loaded.agent, ns.approvals or "ask", explicit=ns.approvals is not None)
	if ns.verbose:
		for report in loaded.keys:
			progress.line(report.line())
	input = parse_input(ns.input, loaded.input)
	if ns.dry_run:
		dry_run(loaded.agent, loaded.model_id, input, sys.stdout, as_json=ns.json)
		return 0
	loaded.agent.provider()  # a provider missing its key or settings fails here, before any run
	if (loaded.schedules or loaded.om.schedules) and not ns.once:
		return await serve(loaded, input, progress, on_stop=ns.on_stop)
	return await run_once(loaded, input, progress)


def main(argv: Sequence[str] | None = None) -> int:
	"""Run the ``openmolt`` command.

	Args:
		argv: The arguments (default: ``sys.argv[1:]``).

	Returns:
		The exit code.
	"""
	args = list(sys.argv[1:] if argv is None else argv)
	try:
		if args and args[0] in _COMMANDS and not Path(args[0]).exists():
			return _command(args)
		if args and args[0] == "eval" and not Path(args[0]).exists():
			from openmolt_core.cli import _eval

			return _eval.main(args)
		if args and args[0] in ("mcp", "import-openapi") and not Path(args[0]).exists():
			from openmolt_core.cli import _ecosystem

			return _ecosystem.main(args)
		if args and args[0] in _DURABLE and not Path(args[0]).exists():
			from openmolt_core.cli._ecosystem import extension

			plugin = extension("dbos", needed_for=f"openmolt {args[0]}")
			code: int = plugin.cli_main(args)
			return code
		ns = _run_parser().parse_args(args)
		return anyio.run(_run, ns)
	except OpenMoltError as exc:
		for line in str(exc).splitlines() or [type(exc).__name__]:
			print(f"openmolt: {line}", file=sys.stderr)
		return 2
	except KeyboardInterrupt:
		print("openmolt: interrupted", file=sys.stderr)
		return 130
	except Exception as exc:
		if "--verbose" in args or "-v" in args:
			traceback.print_exc()
		print(
			f"openmolt: unexpected error: {type(exc).__name__}: {exc} (--verbose shows the traceback)",
			file=sys.stderr,
		)
		return 1
