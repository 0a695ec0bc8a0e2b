"""``openmolt serve AGENTS...``: every trigger of the agents, and the run viewer, in one process.

```
openmolt serve AGENTS... [--host HOST] [--port PORT] [--no-ui] [--ui-host HOST]
                         [--ui-port PORT] [--allow-remote] [--durability STORE]
                         [--env-file PATH] [--verbose]
                         [--max-connections N] [--header-timeout S] [--body-timeout S]
```

``AGENTS`` are agent files (JSON or Python) or folders of them. For each agent it serves its
``schedules``, its webhook (``POST /hooks/<agent>``), its chat channels (Telegram, Slack), its
AG-UI endpoint (``POST /agui/<agent>``) and its A2A server (``/a2a/<agent>/``), and
shows every run in the run viewer (``openmolt-ui``, on a port of its own; ``--no-ui`` leaves it
out). Both bind 127.0.0.1 unless ``--host`` (the triggers) or ``--ui-host`` (the viewer) say
otherwise; an address that is not a loopback one needs ``--allow-remote`` (and then a TLS proxy
in front: the viewer's token and the payloads travel in clear over plain HTTP). Without
``--verbose`` it prints one line per run a trigger starts and one per run that ends; with it,
the steps too (each line once). Nobody sits at this terminal: a question an agent asks outside a chat parks its run,
and so does a tool call that waits for approval; the viewer's page answers and decides them. Progress goes to stderr;
each scheduled run's record goes to stdout as a JSON line. Ctrl-C or SIGTERM stops it.

With a durable store (``--durability``, else ``OPENMOLT_DURABILITY``, else the files' own
``durability``; ``openmolt[dbos]``) every run is a workflow: a webhook is answered once its run
is recorded, schedules fire through the store, and a restart resumes what was going (see
`openmolt_serve.server`). Python files that define several ``agents`` are served by
``openmolt worker`` (durable runs and schedules, no triggers).

Chats keep their conversations in sessions (`openmolt_core.sessions`), so a restart keeps every
one: in the durable store's database when it is PostgreSQL, else in the SQLite file
``$OPENMOLT_SESSIONS`` (``~/.local/state/openmolt/sessions.db``, readable by you only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core import hookimpl
from openmolt_core._support.words import quantity
from openmolt_core.agentfile import CommandParser, agent_files, port
from openmolt_core.errors import ConfigurationError, OpenMoltError
from openmolt_serve._body import BODY_TIMEOUT
from openmolt_serve._conn import DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS
from openmolt_serve._lines import RunLines
from openmolt_serve.chats import park_questions
from openmolt_serve.server import DEFAULT_PORT, TriggerServer
from openmolt_ui._listen import check_remote

if TYPE_CHECKING:
	from openmolt_core.agentfile import Loaded
	from openmolt_core.plugins import CommandRegistrar
	from openmolt_core.sessions import Session
	from openmolt_serve._launch import Sessions
	from openmolt_ui import Viewer

__all__ = ["agent_files", "main", "serve", "stored_sessions"]

log: logging.Logger = logging.getLogger("openmolt")


def _line(text: str) -> None:
	# One line, as written: a run's error (words of a model, a page, a tool) may hold a newline
	# that forges the next line, or an escape sequence the terminal would obey.
	from openmolt_core.agentfile import printable

	shown = printable(text).replace("\n", "\\n")  # one line: a newline would forge the next
	sys.stderr.write(f"openmolt serve: {shown}\n")
	sys.stderr.flush()


def _parser() -> argparse.ArgumentParser:
	parser = CommandParser(
		prog="openmolt serve",
		description="Serve the agents' webhooks, chat channels and schedules, and the run "
		"viewer, until Ctrl-C.",
	)
	parser.add_argument(
		"paths", nargs="+", metavar="AGENTS", help="agent files, or folders of them"
	)
	parser.add_argument("--host", default="127.0.0.1", help="the address (default: 127.0.0.1)")
	parser.add_argument(
		"--port", type=port, default=DEFAULT_PORT, help=f"the port (default: {DEFAULT_PORT})"
	)
	parser.add_argument("--no-ui", action="store_true", help="do not serve the run viewer")
	parser.add_argument(
		"--ui-host", default="127.0.0.1", help="the run viewer's address (default: 127.0.0.1)"
	)
	parser.add_argument(
		"--ui-port", type=port, default=0, help="the run viewer's port (default: any free one)"
	)
	parser.add_argument(
		"--durability",
		help="make runs durable on this store (a SQLite file or a postgresql:// URL; default: "
		"$OPENMOLT_DURABILITY, else each file's durability, else in process)",
	)
	parser.add_argument("--env-file", help="the .env file to read (default: ./.env if present)")
	parser.add_argument(
		"--allow-remote",
		action="store_true",
		help="allow a --host or --ui-host that is not a loopback address (the token and the "
		"payloads then travel in clear over plain HTTP: put a TLS proxy in front)",
	)
	parser.add_argument("--verbose", "-v", action="store_true", help="log steps to stderr")
	parser.add_argument(
		"--max-connections",
		type=int,
		default=DEFAULT_MAX_CONNECTIONS,
		help=f"the most connections open at once; past it: 503 (default: {DEFAULT_MAX_CONNECTIONS})",
	)
	parser.add_argument(
		"--header-timeout",
		type=float,
		default=DEFAULT_HEADER_TIMEOUT,
		help="seconds a request's headers may take to arrive; else 408 "
		f"(default: {DEFAULT_HEADER_TIMEOUT:g})",
	)
	parser.add_argument(
		"--body-timeout",
		type=float,
		default=BODY_TIMEOUT,
		help=f"seconds a request's body may take to arrive; else 408 (default: {BODY_TIMEOUT:g})",
	)
	return parser


def _load(
	paths: Sequence[str], *, env_file: str | None, verbose: bool, durability: str | None = None
) -> list[Loaded]:
	"""Load and check every agent file, and say every file that cannot be served at once.

	A folder of agent files with two bad ones said the first only: the second was found after
	fixing it and starting again. One file's error is raised as it is; several, as one
	`ConfigurationError` naming each.
	"""
	from openmolt_core.agentfile import check_ready, error_voice, load, record_runs

	loaded: list[Loaded] = []
	names: dict[str, Path] = {}
	problems: list[OpenMoltError] = []
	for path in agent_files(paths):
		try:
			one = load(str(path), env_file=env_file, verbose=verbose, durability=durability)
			if one.agent.name in names:
				raise ConfigurationError(
					f"{path}: {names[one.agent.name]} already defines an agent named "
					f"{one.agent.name!r}; give each agent its own name"
				)
			names[one.agent.name] = path
			check_ready(one, strict=True)  # a missing key fails now, not at the first message
		except OpenMoltError as exc:
			problems.append(exc)
			continue
		if problems:  # nothing is served: only the files' errors are wanted now
			continue
		unrecorded = record_runs(one.om, error_voice(one))  # its errors as the command says them
		if unrecorded and not loaded:  # one store for every agent: said once
			_line(f"warning: {unrecorded}")
		if one.agent.on_human_input_request is not None:
			park_questions(one.agent)  # not the terminal: the chat or the viewer answers
		loaded.append(one)
	if len(problems) == 1:
		raise problems[0]
	if problems:
		said = "\n".join(f"  - {problem}" for problem in problems)
		raise ConfigurationError(f"{len(problems)} agent files cannot be served:\n{said}")
	return loaded


def _schedule(one: Loaded) -> list[str]:
	from openmolt_core.agentfile import schedule_specs

	return [one.agent.schedule(spec) for spec in schedule_specs(one, one.input)]


async def _until_stopped() -> None:
	try:
		with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
			async for signum in signals:
				_line(f"{signal.Signals(signum).name} received: stopping")
				break
	except NotImplementedError:  # no signal receivers (Windows): Ctrl-C raises KeyboardInterrupt
		await anyio.sleep_forever()
	# A second Ctrl-C while the servers and runs stop is said, not raised inside their exits.
	for again in (signal.SIGINT, signal.SIGTERM):
		signal.signal(again, _already_stopping)


def _already_stopping(signum: int, frame: object) -> None:
	_line(f"{signal.Signals(signum).name} received again: already stopping")


def stored_sessions(durability: str | None) -> Sessions:
	"""Where ``openmolt serve`` keeps the chats' sessions: a PostgreSQL store's database, else SQLite.

	Args:
		durability: The durable store (``--durability``): a ``postgresql://`` URL keeps the
			sessions in its database; anything else (or None) keeps them in
			`openmolt_core.sessions.default_path`.
	"""
	from openmolt_core.sessions import SQLAlchemySession, SQLiteSession

	if durability and durability.startswith(("postgresql://", "postgres://")):
		url = durability.replace("postgres://", "postgresql://", 1)

		def in_postgres(session_id: str) -> Session:
			return SQLAlchemySession(session_id, url)  # the sessions of a URL share its engine

		return in_postgres

	def in_sqlite(session_id: str) -> Session:
		return SQLiteSession(session_id)  # default_path(), read when a chat first speaks

	return in_sqlite


async def serve(
	loaded: Sequence[Loaded],
	*,
	host: str = "127.0.0.1",
	port: int = DEFAULT_PORT,
	ui: bool = True,
	ui_host: str = "127.0.0.1",
	ui_port: int = 0,
	allow_remote: bool = False,
	until: Any = None,
	max_connections: int = DEFAULT_MAX_CONNECTIONS,
	header_timeout: float = DEFAULT_HEADER_TIMEOUT,
	body_timeout: float = BODY_TIMEOUT,
	sessions: Sessions | None = None,
) -> int:
	"""Serve loaded agent files until ``until()`` returns (default: Ctrl-C or SIGTERM).

	Args:
		loaded: The agent files, loaded.
		host: The address of the triggers.
		port: The triggers' port.
		ui: Serve the run viewer.
		ui_host: Its address.
		ui_port: Its port (0: any free one).
		allow_remote: Allow addresses that are not loopback ones (``--allow-remote``).
		until: An async function; serving stops when it returns.
		max_connections: The most connections open at once (`TriggerServer`).
		header_timeout: Seconds a request's headers may take to arrive.
		body_timeout: Seconds a request's body may take to arrive.
		sessions: Where chats keep their conversations (default: `stored_sessions`, SQLite).

	Returns:
		The exit code.
	"""
	from openmolt_core.agentfile import to_json

	warnings = [
		check_remote(h, allow_remote=allow_remote, who=f"openmolt serve ({what})", option=opt)
		for h, what, opt in ((host, "triggers", "--host"), (ui_host, "run viewer", "--ui-host"))
		if opt == "--host" or ui
	]
	for warning in warnings:
		if warning:
			_line(f"warning: {warning}")
	server = TriggerServer(
		[(one.agent, one.triggers) for one in loaded],
		host=host,
		port=port,
		max_connections=max_connections,
		header_timeout=header_timeout,
		body_timeout=body_timeout,
		sessions=sessions or stored_sessions(None),
	)
	instances = list({id(one.om): one.om for one in loaded}.values())
	for om in instances:
		om.observers.append(RunLines(_line))

	def ended(event: Any) -> None:
		from openmolt_core._support.masking import mask_url_logins_deep

		shown = mask_url_logins_deep(to_json(event.record.to_dict()))  # as a served answer
		sys.stdout.write(json.dumps(shown, default=str) + "\n")
		sys.stdout.flush()

	scheduled = 0
	for one in loaded:
		for sid in _schedule(one):
			scheduled += 1
			_line(f"schedule {sid} of {one.agent.name}")
		one.agent.on("schedule:end", ended)
	# Said as a start-up error, not as a schedule that never ran: the command serves them.
	for om in instances:
		om.scheduler.expect_serving()
	try:
		async with contextlib.AsyncExitStack() as servers:
			# All that can fail at start (the ports, the stores they open) starts before the
			# schedules fire: a viewer refused its port once came after a scheduled run had
			# started (and was cancelled), the error then wrapped in the schedules' task group.
			await servers.enter_async_context(server)
			for route in server.routes():
				_line(f"{route} on {server.url}")
			for name, bot in server.telegram.items():
				if bot.settings.mode == "polling":
					_line(f"Telegram bot of {name}: polling getUpdates")
			if ui:
				viewer = await servers.enter_async_context(
					_viewer(loaded, ui_host, ui_port, allow_remote)
				)
				_line(f"run viewer: {viewer.url}")
			async with anyio.create_task_group() as tg:
				try:
					for om in instances:
						if om.schedules:
							await tg.start(om.scheduler.serve)
					await (until or _until_stopped)()
				finally:
					for om in instances:
						if om.schedules:
							om.scheduler.stop(cancel_running=True)
					tg.cancel_scope.cancel()
	finally:
		for om in instances:
			with anyio.CancelScope(shield=True):
				await om.aclose()
	agents = quantity(len(server.agents), "agent")
	_line(f"stopped ({agents} with triggers, {quantity(scheduled, 'schedule')})")
	return 0


def _viewer(loaded: Sequence[Loaded], host: str, port: int, allow_remote: bool) -> Viewer:
	from openmolt_ui import Viewer

	store = next((one.om.run_store for one in loaded if one.om.run_store is not None), None)
	viewer = Viewer(store=store, host=host, port=port, allow_remote=allow_remote)
	viewer.options = ("--ui-host", "--ui-port")
	for one in loaded:
		viewer.watch(one.om)
		viewer.add_agent(one.agent)
	return viewer


def main(args: Sequence[str]) -> int:
	"""Run ``openmolt serve`` (``args`` are its arguments).

	Returns:
		The exit code.
	"""
	ns = _parser().parse_args(list(args))
	if ns.verbose:
		from openmolt_core.agentfile import NotVerbose
		from openmolt_core.secrets import redact_handler

		handler = redact_handler(logging.StreamHandler(sys.stderr))  # secrets masked at the end too
		handler.setFormatter(logging.Formatter("openmolt: %(message)s"))
		handler.addFilter(NotVerbose())  # a verbose run's records have their own handler
		log.addHandler(handler)
		log.setLevel(logging.INFO)
	durability = ns.durability or os.environ.get("OPENMOLT_DURABILITY")
	loaded = _load(ns.paths, env_file=ns.env_file, verbose=ns.verbose, durability=durability)
	if not any(one.triggers or one.schedules for one in loaded):
		raise ConfigurationError(
			"none of these agents has triggers or schedules: give an agent file a 'triggers' "
			"block (a webhook, channels) or 'schedules', or run it once with `openmolt FILE`"
		)
	try:
		return anyio.run(
			lambda: serve(
				loaded,
				host=ns.host,
				port=ns.port,
				ui=not ns.no_ui,
				ui_host=ns.ui_host,
				ui_port=ns.ui_port,
				allow_remote=ns.allow_remote,
				max_connections=ns.max_connections,
				header_timeout=ns.header_timeout,
				body_timeout=ns.body_timeout,
				sessions=stored_sessions(durability),
			)
		)
	except ExceptionGroup as group:  # a poller's or a server's error, out of the task group
		errors = group.exceptions
		if len(errors) == 1 and isinstance(errors[0], OpenMoltError):
			raise errors[0] from None
		raise


@hookimpl
def register_commands(register: CommandRegistrar) -> None:
	"""Register ``openmolt serve`` with the ``openmolt`` command."""
	register(
		"serve",
		lambda args: main(args),
		summary="serve the webhooks, chat channels, AG-UI and A2A endpoints of agent files",
	)
