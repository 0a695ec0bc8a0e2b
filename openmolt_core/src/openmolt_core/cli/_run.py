"""Build the agent an agent file describes, then run it once or serve its schedules."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskStatus

from openmolt_core.agent import Agent
from openmolt_core.cli._agentfile import AgentFileError, load_json_file, load_python_file
from openmolt_core.cli._keys import (
	KEYED_PROVIDERS,
	KeyReport,
	apply_dotenv,
	default_dotenv,
	env_var,
	read_dotenv,
	resolve_keys,
	snapshot_environ,
)
from openmolt_core.cli._progress import Progress, ask_on_terminal, set_active, to_json
from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.openmolt import OpenMolt
from openmolt_core.schedule import describe_schedule, parse_schedule

__all__ = ["Loaded", "load", "make_durable", "run_once", "serve"]


@dataclass
class Loaded:
	"""An agent ready to run, with what the file said about input, schedules and keys."""

	agent: Agent
	model_id: str
	input: Any
	schedules: list[Any] = field(default_factory=list)
	keys: list[KeyReport] = field(default_factory=list)

	@property
	def om(self) -> OpenMolt:
		"""The agent's OpenMolt instance."""
		return self.agent.om


def _snake(settings: dict[str, Any]) -> dict[str, Any]:
	return {re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", k).lower(): v for k, v in settings.items()}


def _check_key(provider: str, reports: list[KeyReport]) -> None:
	if provider not in KEYED_PROVIDERS:
		return
	if any(r.owner == provider and r.source is None for r in reports):
		raise ConfigurationError(
			f"no API key for {provider}: set {env_var(provider)} (in the environment or a .env file)"
		)


def load(
	file: str,
	*,
	env_file: str | None,
	verbose: bool,
	need_key: bool,
	durability: str | None = None,
) -> Loaded:
	"""Read the agent file (after the ``.env`` file) and build the agent.

	Args:
		file: The agent file.
		env_file: The ``.env`` file to read.
		verbose: Log steps and key sources.
		need_key: Fail when the provider's key is missing.
		durability: Make runs durable on this store (overrides the file's ``durability``).

	Raises:
		OpenMoltError: The file, a key or a plugin is wrong; the message says what to do.
	"""
	path = Path(file)
	environ = snapshot_environ()
	dotenv_path = default_dotenv(env_file)
	dotenv = read_dotenv(dotenv_path) if dotenv_path else {}
	apply_dotenv(dotenv, os.environ)
	keys = {"environ": environ, "dotenv": dotenv, "dotenv_path": dotenv_path, "file": path}
	if path.suffix == ".py":
		loaded = _load_python(path, verbose=verbose, need_key=need_key, keys=keys)
		if durability:
			make_durable(loaded, durability)
		return loaded
	if path.suffix == ".json":
		return _load_json(
			path, verbose=verbose, need_key=need_key, keys=keys, durability=durability
		)
	if not path.exists():
		raise AgentFileError(f"{path}: no such file")
	raise AgentFileError(f"{path}: an agent file ends in .json or .py")


def _load_json(
	path: Path, *, verbose: bool, need_key: bool, keys: dict[str, Any], durability: str | None
) -> Loaded:
	spec = load_json_file(path)
	provider = spec.model.partition(":")[0]
	providers = {name: dict(settings) for name, settings in spec.llm_providers.items()}
	providers.setdefault(provider, {})
	if isinstance(spec.integrations, dict):
		configs = {name: dict(cfg) for name, cfg in spec.integrations.items()}
		bindings: list[Any] = list(configs)
	else:
		configs = {}
		bindings = [
			e if isinstance(e, str) else e.model_dump(exclude_none=True) for e in spec.integrations
		]
	owners = [(name, name, settings) for name, settings in providers.items()]
	owners += [(f"integrations.{name}", name, cfg) for name, cfg in configs.items()]
	reports = resolve_keys(owners, **keys)
	if need_key:
		_check_key(provider, reports)
	providers = {name: _snake(settings) for name, settings in providers.items()}
	instructions_path = spec.instructions_path
	if instructions_path and not Path(instructions_path).is_absolute():
		instructions_path = str(path.parent / instructions_path)
	om = OpenMolt(
		llm_providers=providers,
		integrations=configs,
		verbose=verbose,
		durability=durability or spec.durability or None,
	)
	if spec.mcp_servers:  # each server is an integration the agent uses (openmolt[mcp])
		bindings += _mcp_servers(om, spec.mcp_servers, bindings)
	agent = om.create_agent(
		name=spec.name,
		model=spec.model,
		instructions=spec.instructions,
		instructions_path=instructions_path,
		model_config=spec.model_settings,
		config=spec.config,
		integrations=bindings,
		memory=spec.memory.model_dump(exclude_none=True) if spec.memory else None,
		on_human_input_request=ask_on_terminal if spec.human_input else None,
		requires_approval=spec.requires_approval,
		output_schema=spec.output_schema,
		max_steps=spec.max_steps,
		max_tokens=spec.max_tokens,
		timeout=spec.timeout,
	)
	return Loaded(agent, spec.model, spec.input, list(spec.schedules), reports)


def _mcp_servers(om: OpenMolt, servers: dict[str, Any], bindings: list[Any]) -> list[str]:
	from openmolt_core.cli._ecosystem import extension

	plugin = extension("mcp", needed_for="the agent file's mcpServers")
	listed = {b if isinstance(b, str) else b.get("integration") for b in bindings}
	for sid, integration in plugin.integrations_from_config(servers).items():
		om.register_integration(sid, integration)
	return [sid for sid in servers if sid not in listed]


def _load_python(path: Path, *, verbose: bool, need_key: bool, keys: dict[str, Any]) -> Loaded:
	loaded = load_python_file(path)
	agent = loaded.agent
	if agent is None:
		raise AgentFileError(
			f"{path}: defines several agents ('agents') and no 'agent'; serve them with "
			"`openmolt worker`, or define `agent` to run one"
		)
	if callable(agent) and not isinstance(agent, Agent):
		agent = agent(OpenMolt(verbose=verbose))
	if not isinstance(agent, Agent):
		raise AgentFileError(
			f"{path}: 'agent' must be an Agent or a function of the OpenMolt instance returning one"
		)
	provider = agent.provider_name
	reports: list[KeyReport] = []
	if provider:
		settings = agent.om.llm_providers.setdefault(provider, {})
		reports = resolve_keys([(provider, provider, settings)], **keys)
		if need_key:
			_check_key(provider, reports)
	model_id = f"{provider}:{agent.model}" if provider else agent.model
	return Loaded(agent, model_id, loaded.input, loaded.schedules, reports)


def make_durable(loaded: Loaded, durability: Any) -> None:
	"""Make a Python file's agent durable (``--durability``), unless its code chose a store.

	Raises:
		ConfigurationError: The agent's instance already ran.
	"""
	om = loaded.om
	if om.durability is not None:
		return  # the Python code gave OpenMolt(durability=...) itself
	om.use_durability(durability)
	backend = om.durability
	if backend is not None:
		backend.register(loaded.agent)


def parse_input(text: str | None, default: Any) -> Any:
	"""``--input``: JSON when it parses as JSON, else the text itself; the file's input if absent."""
	if text is None:
		return default
	try:
		return json.loads(text)
	except json.JSONDecodeError:
		return text


async def _watch_signals(
	on_signal: Callable[[int, int], None],
	*,
	task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
	try:
		with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
			task_status.started()
			count = 0
			async for signum in signals:
				count += 1
				on_signal(signum, count)
	except NotImplementedError:  # no signal receivers (Windows): Ctrl-C raises KeyboardInterrupt
		task_status.started()
		await anyio.sleep_forever()


def _print(data: Any, *, indent: int | None) -> None:
	sys.stdout.write(
		json.dumps(to_json(data), indent=indent, ensure_ascii=False, default=str) + "\n"
	)
	sys.stdout.flush()


async def run_once(loaded: Loaded, input: Any, progress: Progress) -> int:
	"""Run the agent once; the result goes to stdout as JSON. Returns the exit code."""
	agent = loaded.agent
	progress.attach(agent)
	set_active(progress)
	outcome: dict[str, Any] = {}

	def stop(signum: int, count: int) -> None:
		outcome["signal"] = signal.Signals(signum).name
		tg.cancel_scope.cancel()

	try:
		async with anyio.create_task_group() as tg:
			tg.start_soon(progress.spin)
			await tg.start(_watch_signals, stop)
			progress.status(f"{agent.name}: starting with {loaded.model_id}")
			try:
				outcome["result"] = await agent.run(input)
			except RunError as exc:
				outcome["error"] = exc
			except Exception as exc:  # reported below, after the task group closes
				outcome["exception"] = exc
			tg.cancel_scope.cancel()
	finally:
		progress.done()
		set_active(None)
		await loaded.om.aclose()
	if "signal" in outcome:
		progress.line(f"{outcome['signal']} received: the run was cancelled")
		return 130
	if "exception" in outcome:
		raise outcome["exception"]
	if "error" in outcome:
		error: RunError = outcome["error"]
		_print(error.result.to_dict(), indent=2)
		progress.line(f"the run failed: {error}")
		return 1
	result = outcome["result"]
	_print(result.to_dict(), indent=2)
	return 0 if result.status == "success" else 1


def _when(moment: datetime | None) -> str:
	return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z") if moment else "never (paused)"


async def serve(loaded: Loaded, input: Any, progress: Progress, *, on_stop: str) -> int:
	"""Serve the agent's schedules until SIGINT or SIGTERM; each run's record goes to stdout."""
	agent, om = loaded.agent, loaded.om
	for raw in loaded.schedules:
		spec = parse_schedule(raw)
		if spec.input is None and input is not None:
			spec = spec.model_copy(update={"input": input})
		agent.schedule(spec)
	progress.attach(agent)
	set_active(progress)

	def ended(event: Any) -> None:
		_print(event.record.to_dict(), indent=None)
		schedule = (
			om.scheduler.get(event.schedule_id)
			if event.schedule_id in {s.id for s in om.schedules}
			else None
		)
		following = f"; next run {_when(schedule.next_run)}" if schedule else ""
		progress.line(f"schedule {event.schedule_id}: {event.record.status}{following}")

	agent.on("schedule:end", ended)

	def stop(signum: int, count: int) -> None:
		name = signal.Signals(signum).name
		running = any(s.running for s in om.schedules)
		if count > 1:
			progress.line(f"{name} received again: cancelling the run in flight")
			om.scheduler.stop(cancel_running=True)
			return
		cancel = on_stop == "cancel"
		what = ""
		if running:
			what = (
				"; cancelling the run in flight"
				if cancel
				else "; the run in flight will finish (send it again to cancel the run)"
			)
		progress.line(f"{name} received: stopping{what}")
		om.scheduler.stop(cancel_running=cancel)

	try:
		async with anyio.create_task_group() as tg:
			tg.start_soon(progress.spin)
			await tg.start(_watch_signals, stop)
			await tg.start(om.scheduler.serve)
			for schedule in om.schedules:
				progress.line(
					f"schedule {schedule.id}: {describe_schedule(schedule.spec)}; "
					f"next run {_when(schedule.next_run)}"
				)
			progress.status(f"{agent.name}: waiting for the next run (Ctrl-C to stop)")
			await om.scheduler.wait_closed()
			tg.cancel_scope.cancel()
	finally:
		progress.done()
		set_active(None)
		await om.aclose()
	progress.line("stopped")
	return 0
