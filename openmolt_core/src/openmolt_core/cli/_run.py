"""Build the agent an agent file describes, then run it once or serve its schedules."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskStatus
from pydantic import ValidationError

from openmolt_core._envvars import blank_variables
from openmolt_core.agent import Agent
from openmolt_core.cli._agentfile import (
	MAX_AGENT_FILE_BYTES,
	AgentFile,
	AgentFileError,
	call_factory,
	load_json_file,
	load_python_file,
	source_spec,
)
from openmolt_core.cli._early import near_variable, no_key
from openmolt_core.cli._exit import ExitCode, for_status
from openmolt_core.cli._keys import (
	KeyReport,
	apply_dotenv,
	default_dotenv,
	env_var,
	ignored_variables,
	read_dotenv,
	rejected_key_source,
	resolve_keys,
	snapshot_environ,
)
from openmolt_core.cli._progress import Progress, ask_on_terminal, set_active, to_json
from openmolt_core.cli._terminal import excerpt, printable
from openmolt_core.cli._voice import for_the_command
from openmolt_core.errors import ConfigurationError, OpenMoltError, PluginError, RunError
from openmolt_core.observe import started_by
from openmolt_core.openmolt import OpenMolt
from openmolt_core.options import snake_keys

if TYPE_CHECKING:
	from openmolt_core.cli._stream import LiveText
	from openmolt_core.sessions import Session, SQLiteSession

__all__ = [
	"Loaded",
	"check_ready",
	"cli_session",
	"file_schedule",
	"load",
	"load_prompt",
	"make_durable",
	"run_once",
	"schedule_specs",
	"serve",
	"watch",
]


def _warn(text: str) -> None:
	# A Python warning: the `openmolt` command (run, serve, ui, worker) prints it as one line of
	# its own; a program loading files itself sees it as any library's.
	from openmolt_core._support.masking import warn

	warn(text, UserWarning, stacklevel=2)  # masked with the secrets known now, as every warning


@dataclass
class Loaded:
	"""An agent ready to run, with what the file said about input, schedules and keys."""

	agent: Agent
	model_id: str
	input: Any
	schedules: list[Any] = field(default_factory=list)
	keys: list[KeyReport] = field(default_factory=list)
	file: Path = Path()
	triggers: Any = None  # the file's webhooks and channels (openmolt_core.triggers.Triggers)
	prompt: bool = False  # made from the command line (-m): no agent file to point at
	entries: frozenset[str] = frozenset()  # ids the file binds with an entry ({"integration": id})
	models: tuple[str, ...] = ()  # other models the program calls (an eval's judges): `load`
	say: Callable[[str], None] = field(default=_warn, repr=False)
	"""How the program that loaded the file tells its user something during runs (a rotated refresh
	token it cannot keep, `openmolt_core.cli._rotation`): a Python warning, which the ``openmolt``
	command (``serve``, ``ui``, ``worker``) prints as a line of its own; a run of the command
	points it at its progress line."""

	@property
	def om(self) -> OpenMolt:
		"""The agent's OpenMolt instance."""
		return OpenMolt.of(self.agent)


def _integration_ids(om: OpenMolt, keys: dict[str, Any]) -> list[str]:
	"""The installed integrations a variable of the key sources is named for (``OPENMOLT_<ID>_``).

	Learning an integration's keys loads its plugin (and the template engine): one that no
	variable names would get an empty config anyway, so only the named ones are loaded.
	"""
	sources = (keys["environ"], keys["dotenv"], keys.get("stored") or {})
	names = [n for source in sources for n in source if n.startswith("OPENMOLT_")]
	if not names:
		return []
	return [
		iid
		for iid in om.plugins.integration_ids()
		if any(n.startswith(env_var(iid, "x")[:-1]) for n in names)
	]


def _owners(loaded: Loaded) -> list[str]:
	"""The providers and integrations the instance knows (their variables are no typos)."""
	plugins = loaded.om.plugins
	return [*plugins.provider_names(), *plugins.integration_ids()]


def _reads(loaded: Loaded, iid: str) -> list[str]:
	"""The variables an integration reads, for any of its credential types (none are typos)."""
	from openmolt_core.integrations.preflight import config_keys

	try:
		spec = loaded.om.plugins.integration(iid)
	except OpenMoltError:
		return []  # one the file defines itself: only its needed variables are known
	return [env_var(iid, key) for key in config_keys(spec)]


def _missing_tool_keys(bound: list[Any]) -> list[tuple[str, str, list[str]]]:
	if not bound:
		return []
	from openmolt_core.integrations.preflight import missing_tool_keys

	return missing_tool_keys(bound)


def check_ready(loaded: Loaded, *, strict: bool) -> list[str]:
	"""Check what a run needs before it starts: the provider, its key, the integrations' keys.

	Args:
		loaded: The loaded agent.
		strict: Raise on the first problem (a real run); otherwise return them (``--dry-run``).

	Returns:
		The problems found (empty in strict mode, which raises instead).

	Raises:
		OpenMoltError: In strict mode, what is missing and where it can come from.
	"""
	agent = loaded.agent
	problems: list[str] = []
	try:
		provider = agent.provider()  # a provider missing its settings fails here
	except OpenMoltError as exc:
		if strict:
			raise
		problems.append(str(exc))
		provider = None
	checked = [(agent.provider_name, provider)]
	for slot in agent._models.slots[1:]:  # fallback models need their keys too
		try:
			checked.append((slot.provider_name, slot.provider()))
		except OpenMoltError as exc:
			if strict:
				raise
			problems.append(str(exc))
	if loaded.models:
		from openmolt_core.assembly import resolve_model
	for model in loaded.models:  # and the program's other models (an eval's judges)
		try:
			name, _, factory = resolve_model(loaded.om, model)
			checked.append((name, factory()))
		except OpenMoltError as exc:
			if strict:
				raise ConfigurationError(f"model {model!r}: {exc}") from exc
			problems.append(f"model {model!r}: {exc}")
	for name, made in checked:
		if made is not None and getattr(made, "key_required", False):
			if any(r.owner == name and r.source is None for r in loaded.keys):
				problems.append(no_key(name, env_var(name), owners=_owners(loaded)))
	bound = [t for t in agent._tools.values() if t.integration is not None]
	if bound:  # the credential checks load only for an agent that has integrations
		from openmolt_core.integrations.preflight import missing_credentials
	credentials = list(missing_credentials(bound)) if bound else []
	needed = {(m.integration, key) for m in credentials for key in m.keys}
	for missing in credentials:
		iid = missing.integration
		where = [f"{missing.describe()}: set"]
		variables = missing.spelled(partial(env_var, iid))
		wanted = [env_var(iid, k) for k in missing.named]
		empty = blank_variables(wanted)  # os.environ holds the .env file's values too
		store = _keys_set(iid, missing.keys if not missing.more else ())
		where.append(f"{variables} (in the environment, a .env file or `{store}`){empty}")
		if not loaded.prompt and loaded.file.suffix == ".py":
			where[-1] += ", or"
			keys = missing.spelled(repr)
			where.append(
				f"{keys} in {loaded.file}'s create_agent(integrations=[{{'integration': {iid!r}, "
				"'credential': {'config': {...}}}])"
			)
		elif not loaded.prompt and iid in loaded.entries:
			# An entry (its credential type, account, tools): the {id: config} form would lose it.
			where[-1] += ", or"
			keys = missing.spelled(repr)
			where.append(
				f'{keys} in "credential": {{"config": {{...}}}} of its entry in {loaded.file}'
			)
		elif not loaded.prompt:
			where[-1] += ", or"
			keys = missing.spelled(f"integrations.{iid}.{{}}".format)
			where.append(f"{keys} in {loaded.file} (the {{id: config}} form)")
		if missing.credential == "oauth2":
			where[-1] += f"; or sign in with `openmolt auth {iid}`"
		near = near_variable(wanted, owners=_owners(loaded), real=_reads(loaded, iid))
		if near:
			where[-1] += f" ({near[0]} is set: a typo of {near[1]}?)"
		problems.append(" ".join(where))
	for iid, key, handles in _missing_tool_keys(bound):
		if (iid, key) in needed:  # Telegram's botToken: its credential's line names it already
			continue
		shown = ", ".join(handles[:3]) + (
			f" and {len(handles) - 3} more" if len(handles) > 3 else ""
		)
		usable = [t for t in bound if t.context.integration == iid and t.allowed]
		every = len(handles) == len(usable)
		if every:  # no tool of it can work: refused like a missing credential
			what = f"every tool the agent has from {iid} ({shown}) needs"
		else:
			what = f"{iid}'s tools {shown} need"
		note = (
			f"{what} config {key!r}, which is not set: set "
			f"{env_var(iid, key)} (in the environment, a .env file or `{_keys_set(iid, [key])}`)"
		)
		if strict and not every:  # the agent may never call them: said, not refused
			print(f"openmolt: warning: {note}", file=sys.stderr)
		else:
			problems.append(note)
	problems = list(dict.fromkeys(problems))  # two models of one provider: said once
	if strict and problems:
		# Every integration that lacks a key, one line each: not one per attempt.
		raise ConfigurationError("\n".join(problems))
	return problems


def load(
	file: str,
	*,
	env_file: str | None,
	verbose: bool,
	durability: str | None = None,
	models: Sequence[str] = (),
) -> Loaded:
	"""Read the agent file (after the ``.env`` file) and build the agent.

	Args:
		file: The agent file.
		env_file: The ``.env`` file to read.
		verbose: Log steps and key sources.
		durability: Make runs durable on this store (overrides the file's ``durability``).
		models: Other ``"provider:model"`` ids the program calls with the agent's instance (an
			eval's judges): each one's provider gets its key from the same sources as the
			agent's, and `check_ready` checks it as it checks the agent's.

	Raises:
		OpenMoltError: The file, a key or a plugin is wrong; the message says what to do.
	"""
	path = Path(file)
	keys = _keys_context(path, env_file)
	if path.suffix == ".py":
		# Its code binds integrations as it runs, reading the environment: the key store's
		# values join it (after the environment and .env) as the .env file's did.
		apply_dotenv(keys["stored"], os.environ)
		loaded = _load_python(path, verbose=verbose, keys=keys, models=models)
		if durability:
			make_durable(loaded, durability)
		return loaded
	if path.suffix == ".json":
		return _load_json(path, verbose=verbose, keys=keys, durability=durability, models=models)
	if not path.exists():
		from openmolt_core.cli._typos import no_such_file

		raise AgentFileError(no_such_file(file))
	raise AgentFileError(f"{path}: an agent file ends in .json or .py")


def _config_keys(om: OpenMolt) -> Callable[[str], list[str]]:
	"""The camelCase config keys each integration reads (``apiKey`` when it cannot be loaded)."""

	def keys_of(iid: str) -> list[str]:  # asked only for the integrations the agent names
		from openmolt_core.integrations.preflight import config_keys

		try:
			spec = om.plugins.integration(iid)
		except OpenMoltError:
			return ["apiKey"]  # not installed: the run says so later
		return sorted(k for k in config_keys(spec) if "_" not in k)

	return keys_of


def _alias_groups(om: OpenMolt) -> Callable[[str], list[tuple[str, ...]]]:
	"""The keys that name one secret, by integration (Slack's ``token`` and ``botToken``)."""

	def aliases_of(iid: str) -> list[tuple[str, ...]]:
		from openmolt_core.integrations.connect import alias_groups

		try:
			spec = om.plugins.integration(iid)
		except OpenMoltError:
			return []
		return alias_groups(spec, iid)

	return aliases_of


def _variable_meant(om: OpenMolt, iid: str, variable: str) -> str | None:
	"""The variable that ``variable``, which the integration does not read, was likely meant as.

	A secret's variable spelt nearly so (``OPENMOLT_S3_SECRET_KEY``: ``..._SECRET_ACCESS_KEY``),
	else the secret the integration's default credential needs (``OPENMOLT_GITHUB_TOKEN``:
	GitHub's bearer ``apiKey``, not its OAuth ``TOKEN_URL``); ``A or B`` when it needs two (an
	OAuth credential, none of whose secrets is required alone: its secrets).
	"""
	import difflib

	from openmolt_core.integrations.connect import credential_needs

	try:
		needs = credential_needs(om.plugins.integration(iid), iid)
	except OpenMoltError:
		return None
	secrets = [env_var(iid, k.name) for need in needs for k in need.keys if k.secret]
	near = difflib.get_close_matches(variable, list(dict.fromkeys(secrets)), n=1, cutoff=0.9)
	if near:
		return near[0]
	first = needs[0].keys if needs else ()
	default = [k for k in first if k.required and k.secret] or [k for k in first if k.secret]
	return " or ".join(env_var(iid, k.name) for k in default[:3]) or None


def _integration_configs(
	om: OpenMolt, ids: list[str], given: dict[str, dict[str, Any]], keys: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], list[KeyReport]]:
	# Every integration the agent names gets each key it reads from OPENMOLT_<ID>_<KEY> (env >
	# .env > file > key store), whichever form the file uses ({id: config}, or ids and entries).
	configs = {iid: dict(given.get(iid, {})) for iid in dict.fromkeys([*given, *ids])}
	owners = [(f"integrations.{iid}", iid, cfg) for iid, cfg in configs.items()]
	keys_of = _config_keys(om)
	reports = resolve_keys(owners, keys_of=keys_of, aliases_of=_alias_groups(om), **keys)
	for iid in configs:
		for variable in ignored_variables(
			iid, keys_of(iid), keys["environ"], keys["dotenv"], keys.get("stored") or {}
		):
			meant = _variable_meant(om, iid, variable)
			hint = f"; did you mean {meant}?" if meant else ""
			print(
				f"openmolt: warning: {variable} is set, but {iid} reads no such key{hint} "
				f"(`openmolt tools {iid}` lists every key it reads)",
				file=sys.stderr,
			)
	return configs, reports


def _keys_context(path: Path, env_file: str | None) -> dict[str, Any]:
	"""Read the .env file into the environment; the sources `resolve_keys` reads, in order."""
	from openmolt_core.cli import _keystore

	environ = snapshot_environ()
	dotenv_path = default_dotenv(env_file)
	if dotenv_path:  # its base URLs and proxies would receive the keys
		from openmolt_core.integrations._taintmarks import refuse_tainted

		refuse_tainted(dotenv_path, "the .env file")
	dotenv = read_dotenv(dotenv_path) if dotenv_path else {}
	apply_dotenv(dotenv, os.environ)
	return {
		"environ": environ,
		"dotenv": dotenv,
		"dotenv_path": dotenv_path,
		"file": path,
		"stored": _keystore.load(),
		"stored_path": _keystore.path(),
	}


def load_prompt(
	model: str,
	*,
	instructions: str | None,
	integrations: list[str],
	tools: list[str],
	env_file: str | None,
	verbose: bool,
	durability: str | None = None,
) -> Loaded:
	"""An agent from the command line alone: ``openmolt -m openai:gpt-5-mini "prompt"``.

	Args:
		model: The model id.
		instructions: What the agent does (default: answer the input helpfully).
		integrations: Integration ids to give it (``--integration slack``).
		tools: Python functions to give it as tools (``--tool package.module:function``).
		env_file: The ``.env`` file to read.
		verbose: Log steps and key sources.
		durability: Make the run durable on this store.

	Raises:
		OpenMoltError: A key, a plugin or a tool is wrong; the message says what to do.
	"""
	where = Path("<command line>")
	data: dict[str, Any] = {
		"name": model,  # what it is: the summary, `openmolt logs`, the run store and viewer show it
		"model": model,
		"instructions": instructions
		or "Do what the input asks and answer it; put the answer in the output's result.",
		"integrations": list(integrations),
	}
	spec = _prompt_spec(data, where)
	functions = [_import_tool(t) for t in tools]
	try:
		loaded = _build_json(
			spec,
			Path.cwd() / "agent.json",
			verbose=verbose,
			keys=_keys_context(where, env_file),
			durability=durability,
			tools=functions,
			where="-m",
		)
	except PluginError as exc:
		iid = exc.plugin.removeprefix("integrations:")
		if exc.plugin == iid or iid not in integrations:
			raise
		# Named as the option gave it; `plugin` stays, for the record of uninstalled plugins.
		exc.args = (f"--integration {iid!r}: {str(exc).removeprefix(exc.plugin + ': ')}",)
		raise
	loaded.prompt = True
	return loaded


def _prompt_spec(data: dict[str, Any], where: Path) -> AgentFile:
	"""``-m``'s options as the agent file's model: built only to word an error.

	They are strings from the command line (a name, a model id, instructions, integration ids),
	all of which the model accepts but an empty name (the model id). The model is built (about
	10 ms of CPU in a fresh process, with its trigger, schedule and OpenAPI models) only to refuse
	that one, in its own words; otherwise the options are set as they are, as validating them
	would set them (`tests/cli/test_cli_prompt_spec.py` holds the two ways equal).
	"""
	if data["name"] and data["model"]:
		return AgentFile.model_construct(**data)
	try:
		return AgentFile.model_validate(data, strict=True)
	except ValidationError as exc:
		raise AgentFileError(f"{where}: {exc.errors()[0]['msg']}") from None


def _keys_set(iid: str, keys: Sequence[str]) -> str:
	"""The ``openmolt keys set`` command that stores what is missing: its key when it is one."""
	return f"openmolt keys set {iid} {keys[0] if len(keys) == 1 else 'KEY'}"


def _import_tool(reference: str) -> Callable[..., Any]:
	"""``package.module:function`` or ``path/to/file.py:function`` → the function (``--tool``)."""
	import importlib
	import importlib.util

	module_name, _, attribute = reference.rpartition(":")
	if not module_name or not attribute:
		from openmolt_core._envvars import installed_owners

		owner = reference.partition(".")[0]
		hint = ""
		if owner and owner in installed_owners():  # slack.postMessage: an integration's tool
			hint = f"; {reference} is an integration's: `--integration {owner}` gives the agent {owner}'s tools"
		raise ConfigurationError(
			f"--tool {reference!r}: give module:function or file.py:function, e.g. "
			f"--tool mytools:lookup_order{hint}"
		)
	if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
		module = _tool_file(reference, Path(module_name))
	else:
		if os.getcwd() not in sys.path:  # a module beside the user, as `python -m` finds it
			sys.path.insert(0, os.getcwd())
		try:
			module = importlib.import_module(module_name)
		except ImportError as exc:
			near = _near_module(module_name) if exc.name == module_name else None
			hint = f"; did you mean {near}:{attribute}?" if near else ""
			raise ConfigurationError(
				f"--tool {reference!r}: cannot import {module_name}: {exc}{hint}"
			) from None
		except Exception as exc:  # the module itself fails: its file and line, as an agent.py's
			found = importlib.util.find_spec(module_name)
			origin = found.origin if found is not None else None
			raise ConfigurationError(
				f"--tool {reference!r}: {_where_it_failed(exc, origin)}"
			) from exc
	function = getattr(module, attribute, None)
	if not callable(function):
		from openmolt_core._support.suggest import typo_of

		functions = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
		near = typo_of(attribute, functions)
		hint = f"; did you mean {module_name}:{near}?" if near else ""
		raise ConfigurationError(
			f"--tool {reference!r}: {module_name} has no function {attribute!r}{hint}"
		)
	return function  # type: ignore[no-any-return]  # checked callable just above


def _near_module(name: str) -> str | None:
	"""A module beside the user whose name ``name`` mistypes (``mytool`` for ``mytools.py``)."""
	from openmolt_core._support.suggest import typo_of

	if "." in name:
		return None
	try:
		names = [
			entry.stem if entry.suffix == ".py" else entry.name
			for entry in Path.cwd().iterdir()
			if (entry.suffix == ".py" and entry.is_file()) or (entry / "__init__.py").is_file()
		]
	except OSError:
		return None
	return typo_of(name, sorted(names), cutoff=0.75)


def _tool_file(reference: str, path: Path) -> Any:
	"""The module of a ``--tool`` given by its file (``./tools.py:add``, as ``llm --functions``)."""
	import importlib.util

	from openmolt_core._support.paths import read_file

	if not path.exists():
		from openmolt_core._support.suggest import typo_of

		try:
			beside = sorted(e.name for e in path.parent.iterdir() if e.suffix == ".py")
		except OSError:
			beside = []
		near = typo_of(path.name, beside, cutoff=0.75)
		attribute = reference.rpartition(":")[2]
		hint = f"; did you mean {path.with_name(near)}:{attribute}?" if near else ""
		raise ConfigurationError(f"--tool {reference!r}: no such file {str(path)!r}{hint}")
	from openmolt_core.integrations._taintmarks import refuse_tainted

	refuse_tainted(path, f"--tool {reference!r}: the module")
	try:
		source = read_file(path, limit=MAX_AGENT_FILE_BYTES)
	except OSError as exc:
		raise ConfigurationError(
			f"--tool {reference!r}: cannot read {str(path)!r}: {exc.strerror or exc}"
		) from None
	name = "openmolt_toolfile_" + re.sub(r"\W", "_", path.stem)
	spec = source_spec(name, path, source)
	if spec is None or spec.loader is None:
		raise ConfigurationError(f"--tool {reference!r}: {path} cannot be imported as Python")
	module = importlib.util.module_from_spec(spec)
	sys.modules[name] = module  # a dataclass or pydantic model in it finds its module
	folder = str(path.parent.resolve())
	if folder not in sys.path:  # its own imports of modules beside it
		sys.path.insert(0, folder)
	try:
		spec.loader.exec_module(module)
	except Exception as exc:
		del sys.modules[name]
		raise ConfigurationError(
			f"--tool {reference!r}: {_where_it_failed(exc, str(path))}"
		) from exc
	return module


def _where_it_failed(exc: BaseException, origin: str | None) -> str:
	"""``tools.py:3: NameError: ...``: the line of the tool's file, as an agent.py's error says."""
	import traceback

	if isinstance(exc, SyntaxError) and exc.filename:
		return f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}"
	lines = [
		f.lineno
		for f in traceback.extract_tb(exc.__traceback__)
		if origin is not None and Path(f.filename).resolve() == Path(origin).resolve()
	]
	where = f"{origin}:{lines[-1]}: " if lines else ""
	return f"{where}{type(exc).__name__}: {exc}"


def _as_the_file_says(text: str) -> str:
	"""``requires_approval[0] ...`` of create_agent's, with the key as a file spells it.

	``requiresApproval[0] ...``: an agent file's keys are camelCase (`AgentFile`'s aliases).
	"""
	if inner := re.match(r"config: ([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b", text):
		# `config` keys (`AgentConfig`) are camelCase in a file too: config.maxResultCharsPerTool
		first, *rest = inner.group(1).split("_")
		return f"config.{first}{''.join(w.title() for w in rest)}{text[inner.end() :]}"
	head = re.match(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?=[\[.:' ]|$)", text)
	if head is None:
		return text
	aliases = {name: f.alias for name, f in AgentFile.model_fields.items() if f.alias}
	alias = aliases.get(head.group())
	return text if alias is None else alias + text[head.end() :]


def _load_json(
	path: Path,
	*,
	verbose: bool,
	keys: dict[str, Any],
	durability: str | None,
	models: Sequence[str] = (),
) -> Loaded:
	spec = load_json_file(path)
	try:
		loaded = _build_json(
			spec, path, verbose=verbose, keys=keys, durability=durability, models=models
		)
	except (ConfigurationError, PluginError) as exc:
		# Said for the file, as its keys' errors are: an integration or a provider it names
		# that is not installed, a durability setting the engine refuses.
		if not str(exc).startswith(str(path)) and type(exc) in (ConfigurationError, PluginError):
			exc.args = (f"{path}: {exc}", *exc.args[1:])
		raise
	loaded.models = tuple(models)
	return loaded


def _build_json(
	spec: AgentFile,
	path: Path,
	*,
	verbose: bool,
	keys: dict[str, Any],
	durability: str | None,
	tools: list[Callable[..., Any]] | None = None,
	where: str | None = None,
	models: Sequence[str] = (),
) -> Loaded:
	"""The agent of a JSON agent file (or of ``-m``: ``where`` names it in errors)."""
	providers = {name: dict(settings) for name, settings in spec.llm_providers.items()}
	model_id, *fallbacks = spec.models
	for model in (*spec.models, *models):  # each model's provider gets its key (judges' too)
		providers.setdefault(model.partition(":")[0], {})
	if isinstance(spec.integrations, dict):
		given = {name: dict(cfg) for name, cfg in spec.integrations.items()}
		bindings: list[Any] = list(given)
	else:
		given = {}
		bindings = [
			e if isinstance(e, str) else e.model_dump(exclude_none=True) for e in spec.integrations
		]
	ids = [b if isinstance(b, str) else b["integration"] for b in bindings]
	reports = resolve_keys([(name, name, settings) for name, settings in providers.items()], **keys)
	providers = {name: snake_keys(settings) for name, settings in providers.items()}
	instructions_path = spec.instructions_path
	if instructions_path and not Path(instructions_path).is_absolute():
		instructions_path = str(path.parent / instructions_path)
	durable = durability or spec.durability or None
	om = OpenMolt(
		llm_providers=providers,
		verbose=verbose,
		durability=durable,
		# Schedules served by this command keep their history in the user's state folder:
		# missed runs are noticed across restarts, and two commands serving them fire each
		# due time once (a durable engine keeps its own).
		schedule_store=None if durable or not spec.schedules else _schedule_store(),
	)
	if spec.openapi:  # each document is an integration the agent uses, its keys read as theirs
		from openmolt_core.cli._openapi_sources import register_openapi

		added = register_openapi(om, path, spec.openapi, set(ids))
		bindings += added
		ids += added
	configs, integration_reports = _integration_configs(om, ids, given, keys)
	om.integration_configs.update(configs)
	integration_reports += _entry_keys(om, bindings, integration_reports, keys)
	if spec.mcp_servers:  # each server is an integration the agent uses (openmolt[mcp])
		bindings += _mcp_servers(om, spec.mcp_servers, bindings)
	try:
		agent = _create(om, spec, path, model_id, fallbacks, bindings, instructions_path, tools)
	except ConfigurationError as exc:
		if type(exc) is not ConfigurationError or not str(exc).startswith("create_agent: "):
			raise
		# Said for the file (or -m), not for Python's create_agent(...).
		text = _as_the_file_says(str(exc).removeprefix("create_agent: "))
		raise ConfigurationError(f"{where or path}: {text}") from None
	reports += [
		r for r in integration_reports if r.source is not None or r.owner.split(".")[1] in given
	]
	entries = frozenset(b["integration"] for b in bindings if isinstance(b, dict))
	loaded = Loaded(
		agent,
		model_id,
		spec.input,
		list(spec.schedules),
		reports,
		path,
		spec.triggers,
		entries=entries,
	)
	return _watch_refresh_tokens(loaded)


def _schedule_store() -> Path | None:
	"""The command's schedule store (`openmolt_core._history.default_path`), checked first.

	A scheduler on a file it cannot write claims no schedule and fires none (it only logs that
	it tries again): the default file that cannot be written (a read-only home) leaves the
	history in memory, with a warning; a file named by the variable is an error naming it.

	Raises:
		ConfigurationError: ``OPENMOLT_SCHEDULE_STORE`` names a file that cannot be used.
	"""
	import sqlite3

	from openmolt_core._history import ENV_VAR, SqliteHistory, default_path

	path = default_path()
	if path is None:
		return None
	try:
		SqliteHistory(path).check()
	except (OSError, sqlite3.Error) as exc:
		why = f"{type(exc).__name__}: {exc}"
		if os.environ.get(ENV_VAR):
			raise ConfigurationError(
				f"{ENV_VAR}={str(path)!r}: no schedule store can be kept there ({why}); name a "
				f"file in a folder you can write, or {ENV_VAR}=off to keep it in memory"
			) from None
		_warn(
			f"the schedules' history is kept in memory: {path} cannot be written ({why}); "
			f"missed runs are not noticed across restarts. Set {ENV_VAR} to a file you can "
			f"write (or {ENV_VAR}=off to say so)"
		)
		return None
	return path


def _entry_keys(
	om: OpenMolt, bindings: list[Any], reported: list[KeyReport], keys: dict[str, Any]
) -> list[KeyReport]:
	"""Give each entry's own ``credential.config`` the keys the environment, .env and store hold.

	An entry's config wins over the instance's, where the other sources went: without this an
	``{"integration": "s3", "credential": {"config": {...}}}`` entry's file values beat
	``OPENMOLT_S3_SECRET_ACCESS_KEY`` (while ``--verbose`` said the variable was used).
	Returns the reports of keys the file gave there that no report names yet.
	"""
	owners = []
	for entry in bindings:
		credential = entry.get("credential") if isinstance(entry, dict) else None
		config = credential.get("config") if isinstance(credential, dict) else None
		if isinstance(config, dict) and config:
			owners.append((f"integrations.{entry['integration']}", entry["integration"], config))
	if not owners:
		return []
	found = resolve_keys(owners, keys_of=_config_keys(om), aliases_of=_alias_groups(om), **keys)
	named = {r.owner for r in reported}
	return [r for r in found if r.source is not None and r.owner not in named]


def _create(
	om: OpenMolt,
	spec: AgentFile,
	path: Path,
	model_id: str,
	fallbacks: list[str],
	bindings: list[Any],
	instructions_path: str | None,
	tools: list[Callable[..., Any]] | None,
) -> Any:
	return om.create_agent(
		name=spec.name,
		model=model_id,
		fallback_models=fallbacks,
		tool_loading=spec.tool_loading,
		instructions=spec.instructions,
		instructions_path=instructions_path,
		model_config=spec.model_settings,
		config=spec.config,
		integrations=bindings,
		memory=spec.memory,
		on_human_input_request=ask_on_terminal if spec.human_input else None,
		requires_approval=spec.requires_approval,
		taint_policy=spec.taint_policy,
		guardrails=_guardrails(spec.guardrails),
		output_schema=spec.output_schema,
		max_steps=spec.max_steps,
		max_tokens=spec.max_tokens,
		timeout=spec.timeout,
		max_cost=spec.max_cost,
		skills=_skill_entries(path, spec.skills),
		tools=tools or (),
		capabilities=[c if isinstance(c, str) else c.model_dump() for c in spec.capabilities],
	)


def _skill_entries(path: Path, entries: list[str]) -> list[str]:
	# Folders are relative to the agent file; a bare name is a plugin's skill unless a folder of
	# that name sits beside the file.
	out = []
	for entry in entries:
		beside = path.parent / entry
		if Path(entry).is_absolute() or (
			re.fullmatch(r"[a-z0-9-]+", entry) and not beside.exists()
		):
			out.append(entry)
		else:
			out.append(str(beside))
	return out


def _guardrails(entries: list[dict[str, Any]]) -> list[Any]:
	if not entries:
		return []
	from openmolt_core.guardrails import from_spec

	return [from_spec(e, f"guardrails[{i}]") for i, e in enumerate(entries)]


def _mcp_servers(om: OpenMolt, servers: dict[str, Any], bindings: list[Any]) -> list[str]:
	from openmolt_core.cli._ecosystem import extension

	plugin = extension("mcp", needed_for="the agent file's mcpServers")
	listed = {b if isinstance(b, str) else b.get("integration") for b in bindings}
	for sid, integration in plugin.integrations_from_config(servers).items():
		om.register_integration(sid, integration)
	return [sid for sid in servers if sid not in listed]


def _load_python(
	path: Path, *, verbose: bool, keys: dict[str, Any], models: Sequence[str] = ()
) -> Loaded:
	loaded = load_python_file(path)
	agent = loaded.agent
	integration_reports: list[KeyReport] = []
	if agent is None:
		raise AgentFileError(
			f"{path}: defines several agents ('agents') and no 'agent'; serve them with "
			"`openmolt worker`, or define `agent` to run one"
		)
	if callable(agent) and not isinstance(agent, Agent):
		# The factory's instance knows every key the environment holds for an installed
		# integration, as a JSON file's would.
		om = OpenMolt(verbose=verbose)
		configs, found = _integration_configs(om, _integration_ids(om, keys), {}, keys)
		integration_reports = [r for r in found if r.source is not None]
		om.integration_configs.update({iid: c for iid, c in configs.items() if c})
		agent = call_factory(agent, om, path)
	if not isinstance(agent, Agent):
		raise AgentFileError(
			f"{path}: 'agent' must be an Agent or a function of the OpenMolt instance returning one"
		)
	provider = agent.provider_name
	reports: list[KeyReport] = []
	names = dict.fromkeys(s.provider_name for s in agent._models.slots if s.provider_name)
	names.update(dict.fromkeys(m.partition(":")[0] for m in models))  # an eval's judges
	if names:  # the model's provider, and each fallback model's
		owners = [(n, n, OpenMolt.of(agent).llm_providers.setdefault(n, {})) for n in names]
		reports = resolve_keys(owners, code_first=True, **keys)
	model_id = f"{provider}:{agent.model}" if provider else agent.model
	found = reports + integration_reports
	made = Loaded(agent, model_id, loaded.input, loaded.schedules, found, path, loaded.triggers)
	made.models = tuple(models)
	return _watch_refresh_tokens(made)


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
	text = json.dumps(to_json(data), indent=indent, ensure_ascii=False, default=str)
	sys.stdout.write(printable(text) + "\n")  # the same JSON, no character a terminal obeys
	sys.stdout.flush()


def _for_a_person(result: Any) -> Any:
	"""A result as the command prints it: a URL's login masked in its output and its words.

	The same rule as every other surface a run's deliverable leaves by (a served answer, the
	viewer): `openmolt_core._support.masking.mask_url_logins_deep`, links kept working.
	"""
	from dataclasses import replace

	from openmolt_core._support.masking import mask_url_logins_deep

	data = result.to_dict()
	shown = mask_url_logins_deep([data["output"], result.human_message, result.error])
	if shown == [data["output"], result.human_message, result.error]:
		return result
	return replace(result, output=shown[0], human_message=shown[1], error=shown[2])


def _record_for_a_person(record: Any) -> dict[str, Any]:
	"""A scheduled run's record as ``--json`` prints it: a URL's login masked, as in a result.

	Its result's output and words, its error and note (`_for_a_person`'s rule, on the whole
	record: `openmolt_core._support.masking.mask_url_logins_deep`).
	"""
	from openmolt_core._support.masking import mask_url_logins_deep

	shown: dict[str, Any] = mask_url_logins_deep(record.to_dict())
	return shown


def _said(error: object, progress: Progress) -> bool:
	"""Whether a progress line already printed this error (a terminal shows it once)."""
	text = str(error or "")
	return bool(text) and any(message in text for message in progress.errors_shown)


def _print_result(
	result: Any, loaded: Loaded, progress: Progress, *, readable: bool, live: Any = None
) -> None:
	said = _said(result.error, progress)  # as the event said it, before it is reworded
	result = _for_a_person(result)
	if result.error:  # said for the command: the agent file named, no Python advice
		from dataclasses import replace

		result = replace(result, error=_error_for_the_command(result.error, loaded))
	if not readable:
		_print(result.to_dict(), indent=2)
		return
	from openmolt_core.cli._summary import summary

	store = getattr(loaded.om.run_store, "path", None)
	shown = live is not None and live.shown(result.human_message)
	sys.stdout.write(printable(summary(result, store=store, message=not shown, error=not said)))
	sys.stdout.flush()


def error_voice(loaded: Loaded) -> Callable[[str], str]:
	"""What the command prints for an error of ``loaded``'s runs, as a function of its text.

	The agent file named, no Python advice (but in an agent.py), a rejected key's source said;
	the run store records it so too (`openmolt_core.cli._ui.record_runs`).

	Args:
		loaded: The agent the command runs.
	"""
	return partial(_error_for_the_command, loaded=loaded)


def _error_for_the_command(error: str, loaded: Loaded) -> str:
	from openmolt_core.cli._summary import error_for_the_command

	text = error_for_the_command(error, loaded.file)
	if loaded.file.suffix != ".py":
		text = for_the_command(text, prompt=loaded.prompt)
	return rejected_key_source(text, loaded.keys)


async def cli_session(agent_name: str, session_id: str | None) -> SQLiteSession:
	"""The conversation ``--session ID`` names, or (``-c``) the agent's last one, or a new one.

	The sessions live in `openmolt_core.sessions.default_path`; the one returned is marked as
	the agent's last, for the next ``-c``.

	Args:
		agent_name: The agent's name (``-c`` continues its last conversation).
		session_id: ``--session``'s id; None for ``-c``.

	Raises:
		ConfigurationError: The sessions' file cannot be used (a folder, not a database).
	"""
	import sqlite3
	import uuid

	from openmolt_core.sessions import SQLiteSession, default_path

	scope = f"cli:{agent_name}"
	try:
		if session_id is None:
			session_id = await SQLiteSession.last(scope) or uuid.uuid4().hex[:12]
		session = SQLiteSession(session_id)
		await session.mark_last(scope)
	except (OSError, sqlite3.Error) as exc:  # a folder, another program's file: not a traceback
		why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
		raise ConfigurationError(
			f"{default_path()} cannot hold the conversations (--session, -c): {why}; set "
			"OPENMOLT_SESSIONS to a file in a folder you can write"
		) from None
	return session


def watch(
	agent: Any, progress: Progress, *, stream: bool, out: IO[str] | None = None
) -> LiveText | None:
	"""Report the agent's events on ``progress`` and, with ``stream``, write its message as it comes.

	The streamed text listens first: a model reply ends its line before the progress lines
	about that reply are written, so the two never share a line on the terminal.

	Args:
		agent: The agent of the run.
		progress: Where progress lines go.
		stream: Write the agent's message to ``out`` as the model writes it (a terminal).
		out: Where the message goes (default: stdout).

	Returns:
		The streamed text's writer, or None without ``stream``.
	"""
	live = None
	if stream:
		from openmolt_core.cli._stream import LiveText

		live = LiveText(out or sys.stdout, progress)
		live.attach(agent)
	progress.attach(agent)
	return live


async def run_once(
	loaded: Loaded,
	input: Any,
	progress: Progress,
	*,
	readable: bool = False,
	session: Session | None = None,
	stream: bool = False,
	user: str | None = None,
) -> int:
	"""Run the agent once and print its result. Returns the exit code.

	Args:
		loaded: The agent.
		input: The run's input.
		progress: Where progress lines go.
		readable: Print a short summary for a person (a terminal) instead of the JSON result.
		session: The conversation the run continues (``--session``, ``-c``).
		stream: Write the agent's message to stdout as the model writes it (a terminal).
		user: The end user the run acts for (``--user``; `openmolt_core.accounts`).
	"""
	agent = loaded.agent
	live = watch(agent, progress, stream=stream)
	loaded.say = progress.line  # a rotated refresh token's warning (`_watch_refresh_tokens`)
	set_active(progress)
	outcome: dict[str, Any] = {}

	def stop(signum: int, count: int) -> None:
		outcome["signal"] = signal.Signals(signum).name
		tg.cancel_scope.cancel()

	try:
		async with anyio.create_task_group() as tg:
			tg.start_soon(progress.spin)
			await tg.start(_watch_signals, stop)
			model = "" if agent.name == loaded.model_id else f" with {loaded.model_id}"  # -m's
			progress.status(f"{agent.name}: starting{model}")
			progress.start(agent.name, agent.max_steps)
			try:
				with started_by("cli", where=agent.name):
					outcome["result"] = await agent.run(input, session=session, user=user)
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
		return ExitCode.TERMINATED if outcome["signal"] == "SIGTERM" else ExitCode.INTERRUPTED
	if "exception" in outcome:
		raise outcome["exception"]
	if "error" in outcome:
		error: RunError = outcome["error"]
		_print_result(error.result, loaded, progress, readable=readable, live=live)
		said = _said(error, progress)
		reworded = _error_for_the_command(str(error), loaded)
		progress.line("the run failed (see above)" if said else f"the run failed: {reworded}")
		return ExitCode.ERROR
	result = outcome["result"]
	_print_result(result, loaded, progress, readable=readable, live=live)
	if result.status != "success":
		# On a terminal the summary just printed the error.
		told = _error_for_the_command(result.error, loaded) if result.error else None
		why = f": {told}" if told and not readable else ""
		progress.line(f"the run ended with status {result.status}{why}")
	return for_status(result.status)


def _print_record(record: Any, loaded: Loaded, progress: Progress, spec: Any) -> None:
	"""A scheduled run's record on a terminal: the schedule and due time, then the run's summary.

	A record without a result (a skipped due time, a run that could not start) is one line,
	with its note and its error.
	"""
	due = _when(record.due, spec) if spec is not None else f"{record.due:%Y-%m-%d %H:%M:%S %Z}"
	head = f"{record.agent}: schedule {record.schedule_id}, due {due}"
	lines = [f"{head}:" if record.result is not None else f"{head}: {record.status}"]
	from openmolt_core._support.masking import mask_url_logins

	if record.note:
		lines.append(f"note: {mask_url_logins(record.note)}")
	if record.result is None and record.error:
		error = mask_url_logins(record.error)  # masked before it is cut
		lines.append(f"error: {excerpt(error, whole='--json prints it whole')}")
	sys.stdout.write(printable("\n".join(lines) + "\n"))
	if record.result is not None:
		_print_result(record.result, loaded, progress, readable=True)
	sys.stdout.write("\n")  # a blank line between two runs' records
	sys.stdout.flush()


def _when(moment: datetime | None, spec: Any) -> str:
	from openmolt_core.schedule import schedule_zone  # loaded: the file has schedules

	if moment is None:
		return "never (paused)"
	return moment.astimezone(schedule_zone(spec)).strftime("%Y-%m-%d %H:%M:%S %Z")


def schedule_specs(loaded: Loaded, input: Any) -> list[Any]:
	"""The file's schedules, each with the run's input unless it names its own.

	The input is part of a schedule's derived id, so ``openmolt schedules`` and the runs (the
	command, ``openmolt serve``, the durable worker) name each schedule alike.

	Args:
		loaded: The agent file.
		input: The input of the runs (the file's, or ``--input``).

	Raises:
		ConfigurationError: A schedule is invalid: the error names the file and the schedule.
	"""
	return [file_schedule(loaded.file, n, raw, input) for n, raw in enumerate(loaded.schedules)]


def file_schedule(file: Any, index: int, raw: Any, input: Any) -> Any:
	"""One schedule of an agent file, checked, with the runs' input unless it names its own.

	What every program that serves an agent file's schedules does with each (`schedule_specs`,
	the durable worker), before anything starts: a bad schedule fails there, naming the file and
	the schedule, rather than when the scheduler first reads it.

	Args:
		file: The agent file (named in the error).
		index: The schedule's place in the file's ``schedules``.
		raw: The schedule, as the file gives it (a dict, or a schedule spec).
		input: The input of the runs (the file's, or ``--input``).

	Raises:
		ConfigurationError: The schedule is invalid (``<file>: schedules[<index>]: <problem>``).
	"""
	from openmolt_core.schedule import parse_schedule  # a file with schedules only

	try:
		spec = parse_schedule(raw)
	except ConfigurationError as exc:  # an agent.py's (a JSON file's were checked as read)
		problem = str(exc).removeprefix("invalid schedule: ")
		raise ConfigurationError(f"{file}: schedules[{index}]: {problem}") from None
	if spec.input is None and input is not None:
		spec = spec.model_copy(update={"input": input})
	return spec


def _watch_refresh_tokens(loaded: Loaded) -> Loaded:
	"""An integration's rotated refresh token: kept in the key store, or said (`cli._rotation`).

	Attached as the file is loaded, so every program that runs agent files (the command, its
	schedules, ``openmolt serve``, ``ui``, ``worker``) keeps the tokens it gave; each says what it
	cannot keep through ``loaded.say``.
	"""
	agent = loaded.agent
	if any(t.integration is not None for t in agent._tools.values()):
		from openmolt_core.cli._rotation import watch_refresh_tokens

		watch_refresh_tokens(agent, loaded.keys, lambda text: loaded.say(text))
	return loaded


async def serve(
	loaded: Loaded, input: Any, progress: Progress, *, on_stop: str, readable: bool = False
) -> int:
	"""Serve the agent's schedules until SIGINT or SIGTERM; each run's record goes to stdout.

	Args:
		loaded: The agent file, loaded.
		input: The runs' input (a schedule's own wins).
		progress: Where progress lines go.
		on_stop: ``finish`` or ``cancel`` the run in flight at the first signal.
		readable: Print each record as a person reads it (on a terminal), else as a JSON line.

	Returns:
		`ExitCode.SUCCESS`: stopping is how serving ends, as for ``openmolt serve``, ``ui`` and
		``worker`` (each scheduled run's own status is in its record).
	"""
	agent, om = loaded.agent, loaded.om
	for spec in schedule_specs(loaded, input):
		agent.schedule(spec)
	progress.attach(agent)
	loaded.say = progress.line  # a rotated refresh token's warning (`_watch_refresh_tokens`)
	set_active(progress)

	stopping = False

	def ended(event: Any) -> None:
		schedule = (
			om.scheduler.get(event.schedule_id)
			if event.schedule_id in {s.id for s in om.schedules}
			else None
		)
		if readable:
			_print_record(event.record, loaded, progress, schedule.spec if schedule else None)
		else:
			_print(_record_for_a_person(event.record), indent=None)
		following = ""
		if schedule is not None and not stopping:  # after a stop there is no next run
			following = f"; next run {_when(schedule.next_run, schedule.spec)}"
		progress.line(f"schedule {event.schedule_id}: {event.record.status}{following}")

	agent.on("schedule:end", ended)

	def stop(signum: int, count: int) -> None:
		nonlocal stopping
		stopping = True
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

	from openmolt_core.schedule import describe_schedule  # serving schedules

	try:
		async with anyio.create_task_group() as tg:
			tg.start_soon(progress.spin)
			# Serving first: a signal the watcher hands on then always finds a scheduler to stop
			# (one before it ends the command as a KeyboardInterrupt does).
			await tg.start(om.scheduler.serve)
			await tg.start(_watch_signals, stop)
			for schedule in om.schedules:
				progress.line(
					f"schedule {schedule.id}: {describe_schedule(schedule.spec)}; "
					f"next run {_when(schedule.next_run, schedule.spec)}"
				)
			progress.status(f"{agent.name}: waiting for the next run (Ctrl-C to stop)")
			await om.scheduler.wait_closed()
			tg.cancel_scope.cancel()
	finally:
		progress.done()
		set_active(None)
		await om.aclose()
	progress.line("stopped")
	return ExitCode.SUCCESS
