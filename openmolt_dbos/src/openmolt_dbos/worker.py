"""``openmolt worker``, ``openmolt runs`` and ``openmolt answer``.

```
openmolt worker PATH... [--durability STORE] [--id ID] [--heartbeat S] [--lapse S]
                        [--env-file PATH] [--verbose]
    run the durable runs and schedules of the agents in PATH (agent files, or folders of them)
openmolt runs [--durability STORE] [--agent NAME] [--all] [--json]
    the runs parked on a question (with --all: the latest runs and their status: "parked", and
    what for, while one waits for an answer, an approval or an account; "stranded": no live
    worker serves their agent version; else how each ended)
openmolt runs --cancel RUN_ID | --migrate RUN_ID [--version V]
    cancel an unfinished run, or resume a stranded one on the definition live workers serve
openmolt answer RUN_ID TEXT [--step N] [--durability STORE]
    answer a parked run's question; it goes on in whichever worker runs it. With --step (the
    step `openmolt runs` shows), the answer is for that question only: refused (exit 1) when the
    run has moved past it
```

The store comes from ``--durability``, else ``OPENMOLT_DURABILITY``, else the agent files'
``durability``. A worker rebuilds the agents of its files, by name, so it can run (and recover)
any run of theirs; workers that load the same files have the same application version and take
over each other's runs when one dies. Scheduled runs' records go to stdout as JSON lines;
progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core._support.docs import docs_url
from openmolt_core.agentfile import CommandParser
from openmolt_core.errors import ConfigurationError
from openmolt_dbos._settings import ENV_URL

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.openmolt import OpenMolt

__all__ = ["Loaded", "load_agents", "main"]

log: logging.Logger = logging.getLogger("openmolt")


def _shown(text: str) -> str:
	"""Text from the store (the model's question, an agent's name) as a terminal may print it."""
	from openmolt_core.agentfile import printable

	return printable(text)


def _line(text: str) -> None:
	from openmolt_core.agentfile import printable

	sys.stderr.write(f"openmolt: {printable(text)}\n")
	sys.stderr.flush()


def _store(given: str | None, files: Sequence[Any] = ()) -> str | dict[str, Any]:
	if given:
		return given
	env = os.environ.get(ENV_URL)
	if env:
		return env
	for durability in files:
		if durability:
			return durability  # type: ignore[no-any-return]
	raise ConfigurationError(
		f"no durable store: pass --durability runs.sqlite (or a postgresql:// URL), set {ENV_URL}, "
		"or give the agent file a 'durability' key"
	)


# loading ----------------------------------------------------------------------------------


class Loaded:
	"""The agents a worker serves (``agents``, by name) and their schedules (``schedules``).

	``schedules`` holds ``(agent, schedule)`` pairs from the files, each schedule checked (a
	spec, with the file's input unless it names its own: `openmolt_core.agentfile.file_schedule`).
	"""

	def __init__(self) -> None:
		self.agents: dict[str, Agent] = {}
		self.schedules: list[tuple[Agent, Any]] = []

	@property
	def instances(self) -> list[OpenMolt]:
		"""The distinct OpenMolt instances of the agents."""
		from openmolt_core.openmolt import OpenMolt

		seen: dict[int, OpenMolt] = {}
		for agent in self.agents.values():
			seen.setdefault(id(agent.om), OpenMolt.of(agent))
		return list(seen.values())

	def add(self, agent: Agent, where: Path) -> None:
		"""Add an agent (names are unique across a worker's files)."""
		if agent.name in self.agents and self.agents[agent.name] is not agent:
			raise ConfigurationError(
				f"{where}: another file already defines an agent named {agent.name!r}; durable "
				"runs find their agent by name, so give each its own"
			)
		self.agents[agent.name] = agent


def load_agents(
	paths: Sequence[str],
	*,
	durability: str | None,
	env_file: str | None,
	verbose: bool,
	options: dict[str, Any] | None = None,
) -> tuple[Loaded, dict[str, Any]]:
	"""Build every agent of the files and folders, durable on one store.

	Args:
		paths: Agent files, or folders of them.
		durability: The store (default: ``OPENMOLT_DURABILITY``, else the JSON files').
		env_file: The ``.env`` file to read.
		verbose: Log steps.
		options: This worker's options (``worker_id``, ``heartbeat``, ``lapse``).

	Returns:
		The agents and the durability configuration they use.

	Raises:
		ConfigurationError: A file is wrong, two agents share a name, or no store is given.
	"""
	from openmolt_core.agentfile import agent_files, load_json_file

	files = agent_files(paths)
	declared = [load_json_file(f).durability for f in files if f.suffix == ".json"]
	chosen = _store(durability, declared)
	store: dict[str, Any] = dict(chosen) if isinstance(chosen, dict) else {"url": chosen}
	store.update(options or {})
	loaded = Loaded()
	for path in files:
		if path.suffix == ".json":
			_load_json(loaded, path, store, env_file=env_file, verbose=verbose)
		else:
			_load_python(loaded, path, store, env_file=env_file, verbose=verbose)
	if not loaded.agents:
		raise ConfigurationError("the worker's files define no agents")
	for om in loaded.instances:
		backend = om.durability
		if backend is None:
			om.use_durability(store)
			backend = om.durability
		for agent in loaded.agents.values():
			if agent.om is om and backend is not None:
				backend.register(agent)
	return loaded, store


def _load_json(
	loaded: Loaded, path: Path, store: Any, *, env_file: str | None, verbose: bool
) -> None:
	from openmolt_core.agentfile import check_ready, load, schedule_specs

	one = load(str(path), env_file=env_file, verbose=verbose, durability=store)
	check_ready(one, strict=True)  # a missing key fails at start, not in the first run
	loaded.add(one.agent, path)
	loaded.schedules += [(one.agent, spec) for spec in schedule_specs(one, one.input)]


def _load_python(
	loaded: Loaded, path: Path, store: Any, *, env_file: str | None, verbose: bool
) -> None:
	from openmolt_core.agent import Agent
	from openmolt_core.agentfile import (
		AgentFileError,
		apply_dotenv,
		call_factory,
		default_dotenv,
		file_schedule,
		load_python_file,
		read_dotenv,
	)
	from openmolt_core.openmolt import OpenMolt

	dotenv_path = default_dotenv(env_file)
	if dotenv_path:
		apply_dotenv(read_dotenv(dotenv_path), os.environ)
	module = load_python_file(path)
	om: OpenMolt | None = None
	agents: list[Agent] = []
	for entry in module.agents:
		agent = entry
		if callable(entry) and not isinstance(entry, Agent):
			if om is None:
				om = OpenMolt(verbose=verbose, durability=store)
			agent = call_factory(entry, om, path)  # an error names the file and its line
		if not isinstance(agent, Agent):
			raise AgentFileError(
				f"{path}: each agent must be an Agent or a function of the OpenMolt instance "
				"returning one"
			)
		loaded.add(agent, path)
		agents.append(agent)
	by_name = {a.name: a for a in agents}
	for n, raw in enumerate(module.schedules):
		# Checked as the other programs check a file's schedules (`file_schedule`): a bad one
		# fails the worker at start, naming the file and the schedule.
		spec = dict(raw) if isinstance(raw, Mapping) else raw
		name = spec.pop("agent", None) if isinstance(spec, dict) else None
		if name is None and len(agents) == 1:
			target = agents[0]
		elif name in by_name:
			target = by_name[name]
		else:
			raise AgentFileError(
				f"{path}: schedules[{n}]: a schedule of a file with several agents names its "
				f'agent ("agent": one of {", ".join(sorted(by_name))})'
			)
		loaded.schedules.append((target, file_schedule(path, n, spec, module.input)))


# commands ---------------------------------------------------------------------------------


def _worker_parser() -> argparse.ArgumentParser:
	parser = CommandParser(
		prog="openmolt worker",
		description="Run the durable runs and schedules of the agents in PATH.",
	)
	parser.add_argument("paths", nargs="+", metavar="PATH", help="agent files, or folders of them")
	parser.add_argument("--durability", help=f"the store (default: ${ENV_URL}, else the files')")
	parser.add_argument("--id", help="this worker's stable id (default: $OPENMOLT_WORKER_ID)")
	parser.add_argument("--heartbeat", type=float, help="seconds between heartbeats (2)")
	parser.add_argument("--lapse", type=float, help="seconds without a beat = a dead worker (10)")
	parser.add_argument("--env-file", help="the .env file to read (default: ./.env if present)")
	parser.add_argument("--verbose", "-v", action="store_true", help="log steps to stderr")
	return parser


def _options(ns: argparse.Namespace) -> dict[str, Any]:
	options: dict[str, Any] = {}
	if ns.id:
		options["worker_id"] = ns.id
	if ns.heartbeat:
		options["heartbeat"] = ns.heartbeat
	if ns.lapse:
		options["lapse"] = ns.lapse
	return options


def _log_to_stderr(verbose: bool) -> None:
	"""Show the ``openmolt`` logger on stderr (warnings only, unless ``verbose``), secrets masked.

	A verbose run's records are left to the verbose log's own handler (`NotVerbose`: a worker's
	runs are marked verbose or quiet as they execute), so each of its lines shows once.
	"""
	from openmolt_core.agentfile import NotVerbose
	from openmolt_core.secrets import redact_handler

	handler = redact_handler(logging.StreamHandler(sys.stderr))  # secrets masked at the end too
	handler.setFormatter(logging.Formatter("openmolt: %(message)s"))
	handler.addFilter(NotVerbose())
	log.addHandler(handler)
	if not verbose and log.level == logging.NOTSET:
		log.setLevel(logging.WARNING)


async def _serve(ns: argparse.Namespace) -> int:
	from openmolt_core.agentfile import to_json

	_log_to_stderr(ns.verbose)
	loaded, _ = load_agents(
		ns.paths,
		durability=ns.durability,
		env_file=ns.env_file,
		verbose=ns.verbose,
		options=_options(ns),
	)
	from openmolt_dbos._backend import DBOSBackend

	instances = loaded.instances
	first = instances[0].durability
	if not isinstance(first, DBOSBackend):
		raise ConfigurationError("openmolt worker: the agents' instances are not durable on DBOS")
	await first.start()
	engine = first.engine
	_line(
		f"worker {engine.executor_id} on {first.settings.describe()} (version "
		f"{engine.app_version}): agents {', '.join(sorted(loaded.agents))}"
	)
	who = engine.executor_id
	for agent, spec in loaded.schedules:
		sid = agent.schedule(spec)
		_line(f"schedule {sid} of {agent.name}")

	def ended(event: Any) -> None:
		sys.stdout.write(_shown(json.dumps(to_json(event.record.to_dict()), default=str)) + "\n")
		sys.stdout.flush()

	for agent in loaded.agents.values():
		agent.on("schedule:end", ended)
	stopped = anyio.Event()
	try:
		async with anyio.create_task_group() as tg:
			for om in instances:
				if om.schedules:
					await tg.start(om.scheduler.serve)
			with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
				_line(f"worker {who} ready (Ctrl-C to stop)")
				async for signum in signals:
					_line(f"{signal.Signals(signum).name} received: stopping")
					break
			stopped.set()
			for om in instances:
				if om.schedules:
					om.scheduler.stop(cancel_running=True)
	finally:
		for om in instances:
			with anyio.CancelScope(shield=True):
				await om.aclose()
	_line(f"worker {who} stopped; its unfinished runs go on in the other workers")
	return 0


async def _runs(ns: argparse.Namespace) -> int:
	from openmolt_core.openmolt import OpenMolt

	om = OpenMolt(durability=_store(ns.durability), entry_points=False)
	try:
		backend = om.durability
		assert backend is not None
		if ns.cancel or ns.migrate:
			rows = await backend.runs(agent=ns.agent)  # type: ignore[attr-defined]
			ids = [str(row["run_id"]) for row in rows]
			if ns.cancel:
				ns.cancel = _whole_id(ns.cancel, ids)
			if ns.migrate:
				ns.migrate = _whole_id(ns.migrate, ids)
		if ns.cancel:
			wid = await om.cancel(ns.cancel)
			_line(f"cancelled run {ns.cancel} (workflow {wid})")
			return 0
		if ns.migrate:
			wid = await backend.migrate(ns.migrate, ns.version)  # type: ignore[attr-defined]
			_line(
				f"run {ns.migrate} moves to the current definition (workflow {wid}): a stranded "
				"run resumes there; a parked one goes on when it is next resumed"
			)
			return 0
		if ns.all:
			rows = await backend.runs(agent=ns.agent)  # type: ignore[attr-defined]
			if ns.json:
				print(_shown(json.dumps(rows, indent=2, default=str)))
			else:
				for row in rows:
					status = str(row["status"])
					if row.get("waiting_for"):  # the question is the model's: shown escaped
						status += f", waits for {row['waiting_for']}"
					print(_shown(f"{row['run_id']}  {row['agent']}  {status}  {row['created_at']}"))
				if any(row["status"] == "stranded" for row in rows):
					_line(
						"stranded: no live worker serves the agent version of these runs; keep "
						"a worker of their definition, --cancel them, or --migrate them (see "
						f"{docs_url('guides/durable.md')})"
					)
			return 0
		pending = await om.pending(agent=ns.agent)
		if ns.json:
			print(_shown(json.dumps([p.to_dict() for p in pending], indent=2)))
		elif not pending:
			_line("no run waits for an answer")
		else:
			for p in pending:
				asked = p.asked_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
				# the question is the model's: a terminal must not obey it
				print(_shown(f"{p.run_id}  {p.agent}  step {p.step}  asked {asked}: {p.question}"))
		return 0
	finally:
		await om.aclose()


def _whole_id(given: str, ids: list[str]) -> str:
	"""The run id ``given`` starts, if one of ``ids`` does (else as given: the call says why)."""
	if given in ids or not any(run_id.startswith(given) for run_id in ids):
		return given
	from openmolt_core.agentfile import resolve_run_id

	return resolve_run_id(given, ids)


async def _answer(ns: argparse.Namespace) -> int:
	from openmolt_core.openmolt import OpenMolt
	from openmolt_dbos._backend import AlreadyAnsweredError

	om = OpenMolt(durability=_store(ns.durability), entry_points=False)
	try:
		ns.run_id = _whole_id(ns.run_id, [p.run_id for p in await om.pending()])
		await om.answer(ns.run_id, ns.text, step=ns.step)
	except AlreadyAnsweredError as exc:
		_line(str(exc))
		return 1  # not used: another answer won
	finally:
		await om.aclose()
	_line(f"answered run {ns.run_id}; it goes on in the worker that runs it")
	return 0


_DESCRIPTIONS = {
	"runs": "List the durable runs parked on a question (--all: the latest runs, "
	"with status); cancel one, or move a stranded one to the live workers' definition.",
	"answer": "Answer a parked durable run's question; the worker that runs it goes on.",
}
"""What `openmolt runs --help` and `openmolt answer --help` say first."""


def main(args: Sequence[str]) -> int:
	"""Run ``openmolt worker``, ``openmolt runs`` or ``openmolt answer`` (``args[0]``).

	Returns:
		The exit code.
	"""
	command, rest = args[0], list(args[1:])
	if command == "worker":
		return anyio.run(_serve, _worker_parser().parse_args(rest))
	parser = CommandParser(prog=f"openmolt {command}", description=_DESCRIPTIONS[command])
	parser.add_argument("--durability", help=f"the store (default: ${ENV_URL})")
	if command == "runs":
		parser.add_argument("--agent", help="only this agent's runs")
		parser.add_argument("--all", action="store_true", help="the latest runs, with status")
		parser.add_argument("--json", action="store_true", help="print JSON")
		parser.add_argument(
			"--cancel", metavar="RUN_ID", help="cancel an unfinished run (its id or a prefix)"
		)
		parser.add_argument(
			"--migrate",
			metavar="RUN_ID",
			help="resume a stranded run on the definition the live workers serve, or let a "
			"parked one go on under another definition when it is next resumed",
		)
		parser.add_argument("--version", help="with --migrate: the application version")
		return anyio.run(_runs, parser.parse_args(rest))
	parser.add_argument(
		"run_id", help="the parked run's id, or a unique prefix of it (see openmolt runs)"
	)
	parser.add_argument("text", help="the answer")
	parser.add_argument(
		"--step",
		type=int,
		help="the step of the question you answer (as `openmolt runs` shows it): an answer to a "
		"question the run has moved past is refused",
	)
	return anyio.run(_answer, parser.parse_args(rest))
