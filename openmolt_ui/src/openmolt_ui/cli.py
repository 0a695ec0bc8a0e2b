"""``openmolt ui`` and ``openmolt AGENT_FILE --ui``: the viewer from the command line.

```
openmolt ui [AGENT_FILE ...] [--store PATH] [--host HOST] [--port PORT] [--allow-remote]
    show the run store's runs (default: the one `openmolt` records to) until Ctrl-C; with agent
    files, parked runs of those agents can be answered in the page (they resume here)
openmolt AGENT_FILE --ui [run options]
    run the agent with the viewer: its questions are answered in the page; after a single run
    the page stays open until Ctrl-C
```
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core import hookimpl
from openmolt_core.agentfile import CommandParser, port
from openmolt_core.errors import ConfigurationError
from openmolt_core.runstore import RunStore, default_path
from openmolt_ui._listen import check_remote
from openmolt_ui.viewer import Viewer

if TYPE_CHECKING:
	from openmolt_core.agentfile import Loaded
	from openmolt_core.plugins import CommandRegistrar

__all__ = ["main", "with_viewer"]


def _parser() -> argparse.ArgumentParser:
	parser = CommandParser(
		prog="openmolt ui",
		description="Serve the live run viewer on 127.0.0.1 until Ctrl-C; the URL (with its "
		"token) is printed on stderr.",
	)
	parser.add_argument(
		"files", nargs="*", metavar="AGENT_FILE", help="agents whose parked runs may be answered"
	)
	parser.add_argument(
		"--store",
		help="the run store to show (default: $OPENMOLT_RUN_STORE or "
		"~/.local/state/openmolt/runs.db, where `openmolt` records its runs)",
	)
	parser.add_argument("--host", default="127.0.0.1", help="the address (default: 127.0.0.1)")
	parser.add_argument("--port", type=port, default=0, help="the port (default: any free one)")
	parser.add_argument(
		"--allow-remote",
		action="store_true",
		help="allow a --host that is not a loopback address (the token then travels in clear "
		"over plain HTTP: put a TLS proxy in front)",
	)
	parser.add_argument("--env-file", help="the .env file to read for the agent files")
	return parser


async def _until_stopped() -> None:
	"""Wait for Ctrl-C or SIGTERM."""
	try:
		with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
			async for _ in signals:
				return
	except NotImplementedError:  # no signal receivers (Windows): Ctrl-C raises KeyboardInterrupt
		await anyio.sleep_forever()


def _load(file: str, env_file: str | None, path: Path) -> Loaded:
	"""An agent file the viewer runs, checked, recording in the run store at ``path``.

	Its runs' errors are recorded as the ``openmolt`` command says them (the agent file's
	``llmProviders.local.baseUrl``, not Python's ``llm_providers['local']['base_url']``); a file
	with its own ``runStore`` keeps it.
	"""
	from openmolt_core.agentfile import CommandRunStore, check_ready, error_voice, load

	loaded = load(file, env_file=env_file, verbose=False)
	check_ready(loaded, strict=True)
	if loaded.om.run_store is None:
		store = CommandRunStore(path, error_voice(loaded))
		loaded.om.run_store = store
		loaded.om.observers.append(store)
	return loaded


def main(args: Sequence[str]) -> int:
	"""Run ``openmolt ui`` (``args`` are its arguments).

	Returns:
		The exit code.
	"""
	ns = _parser().parse_args(list(args))
	path = Path(ns.store) if ns.store else default_path()
	if path is None:
		raise ConfigurationError(
			"openmolt ui: OPENMOLT_RUN_STORE is off, so there is no run store to show; "
			"pass --store PATH"
		)
	warning = check_remote(ns.host, allow_remote=ns.allow_remote, who="openmolt ui")
	store = RunStore(path)
	# A folder or another program's file (`--store agent.json`) is said now, not as a traceback
	# at each poll of a page that shows no runs; a path with nothing yet is said with its line.
	empty = "" if path.exists() else ": no runs recorded there yet"
	if not empty:
		store.check()
	viewer = Viewer(store=store, host=ns.host, port=ns.port, allow_remote=ns.allow_remote)
	for file in ns.files or ():
		loaded = _load(file, ns.env_file, path)
		viewer.watch(loaded.om)
		viewer.add_agent(loaded.agent)

	async def serve() -> None:
		async with viewer:
			if warning:
				print(f"openmolt ui: warning: {warning}", file=sys.stderr, flush=True)
			print(f"openmolt ui: {viewer.url}", file=sys.stderr, flush=True)
			print(
				f"openmolt ui: showing {path}{empty} (Ctrl-C to stop)", file=sys.stderr, flush=True
			)
			await _until_stopped()
		print("openmolt ui: stopped", file=sys.stderr, flush=True)

	anyio.run(serve)
	return 0


async def with_viewer(
	loaded: Any,
	run: Callable[[], Awaitable[int]],
	*,
	line: Callable[[str], None],
	linger: bool,
	host: str = "127.0.0.1",
	port: int = 0,
) -> int:
	"""Run an agent file (``run``) with the viewer serving; its questions go to the page.

	Args:
		loaded: The loaded agent file (``openmolt_core.agentfile.Loaded``).
		run: Runs it once or serves its schedules; returns the exit code.
		line: Prints a progress line.
		linger: Keep the page open after ``run`` returns, until Ctrl-C.
		host: The address to bind.
		port: The port (0: any free one).

	Returns:
		``run``'s exit code.
	"""
	agent = loaded.agent
	viewer = Viewer(loaded.om, agents=[agent], host=host, port=port)
	if agent.on_human_input_request is not None:
		agent.on_human_input_request = viewer.ask  # the page answers, not the terminal
	if hasattr(agent, "on_approval_request"):  # the page decides tool approvals too
		agent.on_approval_request = viewer.approve
	async with viewer:
		line(f"run viewer: {viewer.url}")
		code = await run()
		if linger and code != 130:  # not after Ctrl-C: that stops everything
			line(f"the run ended; the viewer stays open at {viewer.url} until Ctrl-C")
			await _until_stopped()
	return code


@hookimpl
def register_commands(register: CommandRegistrar) -> None:
	"""Register ``openmolt ui`` with the ``openmolt`` command."""
	register("ui", lambda args: main(args), summary="open the run viewer on the recorded runs")
