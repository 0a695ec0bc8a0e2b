"""An agent assembled from `OpenMolt.create_agent`'s keyword options.

`parse_options` reads the keywords into an `AgentOptions`: each option in its parsed, typed form
(a wrong one fails here, the message naming it). `build_agent` makes the agent from them and its
instance (`Host`): the integrations and tools bound, the capabilities in hook order, the limits,
the approval and taint policies checked against the agent's tools, the hooks resolved. What the
agents of one instance have in common (observers, compaction, offload, resolved hooks, the taint
policy) is built once and kept on the instance (`Shared`).

The facade's methods call here for the instance's work (`Facade`): building a provider
(`make_provider`, `provider_settings`; the client its model requests go through, `model_http`),
the file store (`file_store`), the warm-up of a first run (`prepare`), the task group of
``async with om:`` (`enter`, `leave`) and closing (`close`).

The facade (`openmolt_core.openmolt`) imports this module when its first agent is created, when
the instance is given an option read here (guardrails, capabilities, ``max_cost``), or at the
first use of that work.
"""

from __future__ import annotations

import atexit
import functools
import gc
import os
import sys
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Protocol, cast

from openmolt_core._binding import LOCAL, bind_tools
from openmolt_core._support import lazy_exports
from openmolt_core.agent import Agent, Instance, Limits
from openmolt_core.capabilities import (
	ApprovalGate,
	Compaction,
	Memory,
	NestedSpend,
	ObservedOutside,
	Observers,
	Offload,
	OffloadResults,
	Sessions,
	Streaming,
	StructuredOutput,
)
from openmolt_core.capabilities.safety import Safety
from openmolt_core.errors import ConfigurationError
from openmolt_core.functiontools import as_tools
from openmolt_core.hooks import (
	BUILTIN,
	AgentInfo,
	Capability,
	CapabilityEntry,
	Hooks,
	builds,
	built,
)
from openmolt_core.llm import (
	DEFAULT_COMPACTION,
	DEFAULT_MODEL_CONFIG,
	CompactionConfig,
	ModelConfig,
)
from openmolt_core.taint import TaintPolicy

if TYPE_CHECKING:
	from types import TracebackType

	import httpx
	from anyio.abc import TaskGroup
	from pydantic import BaseModel

	from openmolt_core._binding import BoundTool
	from openmolt_core._chain import ModelSlot
	from openmolt_core._durable import DurabilityBackend
	from openmolt_core._pricecheck import Model, OtherModel, check_prices
	from openmolt_core.accounts import Accounts
	from openmolt_core.agent import HumanInputHandler, MemoryConfig
	from openmolt_core.agentconfig import AgentConfig, IntegrationEntry
	from openmolt_core.approvals import ApprovalHandler, Approvals
	from openmolt_core.capabilities.sessions import RunConversation
	from openmolt_core.capabilities.sources import SourceBinding
	from openmolt_core.conversation import Session
	from openmolt_core.credstore import CredentialStore
	from openmolt_core.files import FileAccess, StoredFile
	from openmolt_core.filestore import FileStore, LocalFile
	from openmolt_core.guardrails import Guardrail
	from openmolt_core.integrations._client import PooledTransport
	from openmolt_core.integrations.binding import IntegrationBinding
	from openmolt_core.integrations.model import Integration
	from openmolt_core.llm import LLMProvider
	from openmolt_core.observe import RunObserver
	from openmolt_core.options import AgentMemory
	from openmolt_core.plugins import Plugins
	from openmolt_core.policy import ApprovalPolicy
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.runstore import RunStore
	from openmolt_core.scheduler import Scheduler
	from openmolt_core.skills import Skill
	from openmolt_core.tools import Tool
	from openmolt_core.toolsearch import ToolLoading, ToolSearch


def _collect_and_freeze() -> None:
	"""At the interpreter's exit: its first collection, then every object still alive frozen.

	As it shuts down, Python collects once (the finalizers of the garbage left run), then clears
	every module and collects again after each stage: passes over every object the process still
	holds (a program that built an agent has loaded some 400 modules' classes, functions and
	schemas) to free memory the operating system is about to take back; in a one-shot run, some
	15 % of its CPU time (`benchmarks/README.md`, figure 7). This handler does the first
	collection, then freezes what is alive (`gc.freeze`), which the later passes skip. What Python
	promises at exit still happens: the garbage the program left is collected with its
	finalizers, the other `atexit` handlers and ``weakref.finalize`` callbacks run, the standard
	streams are flushed, an object a module refers to is freed by its reference count. What no
	longer happens is what Python does not promise (`object.__del__`): a cycle that the modules'
	teardown would have left unreachable stays in memory until the process is gone. A program
	whose collector is off keeps it as it is.
	"""
	if gc.isenabled():
		gc.collect()
		gc.freeze()


atexit.register(_collect_and_freeze)  # once, as the assembly loads (a program's first agent)


# The price check of ``max_cost`` (its `Model` protocol, `OtherModel` and `check_prices`) lives in
# `openmolt_core._pricecheck`, loaded by an agent given a budget: its names load from here on
# first use, so an agent without ``max_cost`` defines none of its classes.
_PRICES = "openmolt_core._pricecheck"
__getattr__, __dir__ = lazy_exports(
	globals(), {"Model": _PRICES, "OtherModel": _PRICES, "check_prices": _PRICES}
)

__all__ = [
	"BUILT_IN_CAPABILITIES",
	"MAX_INSTRUCTIONS_BYTES",
	"AgentFiles",
	"AgentOptions",
	"Facade",
	"Host",
	"Model",
	"OtherModel",
	"OwnState",
	"Shared",
	"build_agent",
	"check_cost",
	"check_prices",
	"close",
	"enter",
	"file_store",
	"instance_secrets",
	"leave",
	"make_provider",
	"make_scheduler",
	"model_http",
	"own_state",
	"parse_capabilities",
	"parse_guardrails",
	"parse_options",
	"prepare",
	"provider_settings",
	"resolve_model",
	"stored_secrets",
]

Resolved = tuple[str, str, Callable[[], "LLMProvider"]]
"""A model resolved: its provider's name (empty for a provider object), its name, its provider."""

_Known = dict[str, tuple[list[str], list[str] | None]]
"""For each integration an agent uses, its scopes and tool names (None: known at run time)."""


class AgentOptions(NamedTuple):
	"""``create_agent``'s keyword options, each read into the form the agent is built from.

	A record, not a class to subclass: `parse_options` makes it (a tuple: cheap to make for
	every agent, and immutable).
	"""

	name: str
	"""The agent's name (not empty)."""
	instructions: str
	"""The instructions, read from ``instructions_path`` when given."""
	models: Sequence[str | LLMProvider]
	"""The agent's models in order: ``model``, then the fallbacks (none listed twice)."""
	model_config: ModelConfig
	"""The model settings."""
	config: Mapping[str, Any] | None
	"""``config`` as given, as a dict of the keys set (the agent's record); None: none."""
	bindings: Sequence[IntegrationBinding]
	"""The integrations the agent uses."""
	tools: Sequence[Tool | Agent | Callable[..., Any]]
	"""The tools given, as given (bound with the agent)."""
	memory: AgentMemory | None
	"""The agent's memory, if any."""
	on_human_input_request: HumanInputHandler | None
	"""What answers the agent's questions; None: ``requestHumanInput`` is off."""
	requires_approval: ApprovalPolicy | None
	"""The agent's own approval rules (checked against its tools by `build_agent`)."""
	on_approval_request: ApprovalHandler | None
	"""What decides the calls that need approval; None: they park the run."""
	guardrails: tuple[Guardrail, ...]
	"""The agent's own guardrails (after the instance's)."""
	taint_policy: TaintPolicy | None
	"""The agent's own taint policy; None: the instance's."""
	output_schema: type[BaseModel] | dict[str, Any] | None
	"""The schema the final output must match (checked)."""
	max_steps: int | None
	"""The step budget; None: the instance's."""
	max_tokens: int | None
	"""The token budget of a run; None: none."""
	timeout: float | None
	"""Seconds a run may take; None: no limit."""
	max_cost: float | None
	"""USD a run may spend; None: the instance's."""
	limits: Limits | None
	"""The caps ``config`` sets; None: the defaults."""
	verbose: bool
	"""Whether ``config`` turns the step log on."""
	compaction: CompactionConfig | None
	"""How long runs summarise their older steps; None: never."""
	skills: Sequence[str | Path | Skill | Mapping[str, Any]]
	"""The skills, as given (loaded with the instance's plugins)."""
	tool_search: ToolSearch | None
	"""How tools are searched; None: every tool is listed (``tool_loading="all"``)."""
	capabilities: tuple[CapabilityEntry, ...]
	"""The agent's own capabilities (names are built with the instance's plugins)."""


class Shared:
	"""What one instance's agents share, built once for the first agent that needs it.

	It lives on the instance (`Host._shared`); nothing in it belongs to one agent.

	Args:
		observers: The instance's run observers, read at each run.
		conversation: Makes a run's part in a session (``OpenMolt.conversation``).
		http: The instance's getter of its shared HTTP client (``OpenMolt.http``).
	"""

	__slots__ = (
		"auths",
		"compactions",
		"default_compaction",
		"file_tools",
		"files",
		"hooks",
		"http",
		"models",
		"observed",
		"observers",
		"offloads",
		"plain_caps",
		"plain_taint",
		"sessions",
	)

	def __init__(
		self,
		observers: Callable[[], Sequence[RunObserver]],
		conversation: Callable[[Agent, Session], RunConversation],
		http: Callable[[], httpx.AsyncClient],
	) -> None:
		self.observers: Callable[[], Sequence[RunObserver]] = observers
		self.http: Callable[[], httpx.AsyncClient] = http
		"""``om.http``, bound once: each agent's tool context holds it (not a method object each)."""
		"""Returns the instance's run observers (each agent's `ObservedOutside` reads them)."""
		self.observed: Capability = Observers(observers)
		"""The run observers' capability (run store, viewer, telemetry)."""
		self.sessions: Capability = Sessions(conversation)
		"""The sessions capability (``run(session=...)``: `Sessions`), every agent's."""
		self.plain_caps: tuple[Capability, ...] | None = None
		"""The capabilities of an agent with no option that adds any, once known."""
		self.plain_taint: TaintPolicy | None = None
		"""The instance's taint policy, once known to have no rules (the same for every agent)."""
		self.default_compaction: Compaction | None = None
		"""``compaction=True``'s capability, once known."""
		self.compactions: dict[tuple[Any, Any], Compaction] = {}
		"""The compaction capabilities, one per setting."""
		self.files: dict[bool, AgentFiles] = {}
		"""The agents' views of the file store, by whether they may read ``fileSystem:``."""
		self.offloads: dict[tuple[Any, ...], Capability] = {}
		"""The offload capabilities, one per store and thresholds."""
		self.hooks: dict[tuple[int | None, ...], tuple[tuple[Any, ...], Hooks]] = {}
		"""Resolved hooks by the ids of what they were made of (and those objects, kept alive)."""
		self.models: dict[str, Resolved] = {}
		"""The models resolved so far, by id."""
		self.auths: dict[tuple[str, str, str], Any] = {}
		"""The integrations' auth objects, shared by the agents that bind the same credential."""
		self.file_tools: dict[int, Integration] = {}
		"""The integrations with file tools its agents bound (a FileSystem), by id: a run's
		session file is kept out of their reach too (`_conversation`)."""


class Host(Instance, Protocol):
	"""What building an agent needs of its instance (`openmolt_core.openmolt.OpenMolt`).

	Besides what every agent needs of it (`openmolt_core.agent.Instance`): the plugins, the
	integrations' settings, the shared services, and the instance's own agent options.
	"""

	llm_providers: dict[str, dict[str, Any]]
	"""Settings per provider name."""
	integration_configs: dict[str, dict[str, Any]]
	"""Config per integration id, shared by all agents."""
	observers: list[RunObserver]
	"""What hears every run."""
	max_steps: int
	"""The default step budget."""
	max_cost: float | None
	"""The default cost budget."""
	run_store: RunStore | None
	"""The run store given as ``run_store``, if any."""

	@property
	def durability(self) -> DurabilityBackend | None:
		"""The whole durability backend (the agent hands it runs: `Instance.durability`)."""
		...

	_files_dir: str | Path | None
	_files: FileStore | None
	_durability: DurabilityBackend | None
	_scheduler_options: tuple[Any, str | Path | None]
	_durability_config: Any
	_approvals: Approvals | None
	_tool_sources: dict[int, Any]
	_approval_rules: Any
	_taint_policy: Any
	_guardrails: tuple[Guardrail, ...]
	_capabilities: tuple[CapabilityEntry, ...]
	_shared: Shared | None

	@property
	def files(self) -> FileStore:
		"""The instance's file store (made on first use: `AgentFiles` asks for it)."""
		...

	@property
	def plugins(self) -> Plugins:
		"""The instance's plugins."""
		...

	def conversation(self, agent: Agent, session: Session) -> RunConversation:
		"""A run's part in ``session`` (``run(session=...)``: `SessionRuns` asks for it).

		Args:
			agent: The agent whose run it is.
			session: The conversation's store.
		"""
		...

	@property
	def retry(self) -> RetryPolicy:
		"""The retry policy of HTTP calls."""
		...

	@property
	def credential_store(self) -> CredentialStore | None:
		"""Where integration credentials are kept, if anywhere."""
		...

	@property
	def accounts(self) -> Accounts:
		"""End users' accounts."""
		...

	def http(self) -> httpx.AsyncClient:
		"""The shared HTTP client."""
		...

	def provider(self, name: str) -> LLMProvider:
		"""The provider instance for a name.

		Args:
			name: The provider's name.
		"""
		...


# parsing ------------------------------------------------------------------------------------


def parse_options(
	*,
	name: str,
	model: str | LLMProvider | Sequence[str | LLMProvider],
	instructions: str | None,
	instructions_path: str | Path | None,
	model_config: ModelConfig | Mapping[str, Any] | None,
	config: AgentConfig | Mapping[str, Any] | None,
	integrations: Sequence[str | IntegrationEntry | Mapping[str, Any]],
	tools: Sequence[Tool | Agent | Callable[..., Any]],
	memory: AgentMemory | MemoryConfig | None,
	on_human_input_request: HumanInputHandler | bool | None,
	requires_approval: bool | str | Sequence[str] | ApprovalPolicy | None,
	on_approval_request: ApprovalHandler | None,
	guardrails: Sequence[Guardrail],
	taint_policy: TaintPolicy | Mapping[str, Any] | str | bool | None,
	output_schema: type[BaseModel] | dict[str, Any] | None,
	max_steps: int | None,
	max_tokens: int | None,
	timeout: float | None,
	max_cost: float | None,
	compaction: CompactionConfig | Mapping[str, Any] | bool,
	skills: Sequence[str | Path | Skill | Mapping[str, Any]],
	fallback_models: Sequence[str | LLMProvider],
	tool_loading: ToolLoading | ToolSearch,
	capabilities: Sequence[CapabilityEntry],
) -> AgentOptions:
	"""Read ``create_agent``'s keywords (documented there) into an `AgentOptions`.

	Raises:
		ConfigurationError: An option is wrong; the message names it and the fix.
	"""
	if not isinstance(name, str) or not name.strip():
		raise ConfigurationError(
			f"create_agent: name must be text, the agent's name (got {_shown(name)})"
		)
	if instructions is not None and not isinstance(instructions, str):
		raise ConfigurationError(
			f"create_agent: instructions must be text (got {_shown(instructions)}); join a list "
			"of lines with '\\n'.join(...), or give instructions_path"
		)
	if instructions_path is not None:
		from openmolt_core._support.paths import path_problem

		problem = path_problem(instructions_path)
		if problem is not None:
			raise ConfigurationError(
				f"create_agent: instructions_path must be a file's path {problem}"
			)
	# Lists as lists (a string's letters are no list); checked without a call when they are.
	if type(integrations) not in _LISTS:
		integrations = _many("integrations", integrations, "integration ids or dicts", "'slack'")
	if type(tools) not in _LISTS:
		tools = _many("tools", tools, "tools (functions, Tool objects or agents)", "my_function")
	if type(skills) not in _LISTS:
		skills = _many(
			"skills", skills, "skills (folders, names, Skill objects or dicts)", "'./pdf'"
		)
	if type(fallback_models) not in _LISTS:
		fallback_models = _many("fallback_models", fallback_models, "model ids", "'openai:gpt-5'")
	if on_human_input_request is not None or on_approval_request is not None:
		_handlers(on_human_input_request, on_approval_request)
	if isinstance(model, str) and not fallback_models:  # the common case: one model
		models: Sequence[str | LLMProvider] = (model,)
	elif not isinstance(model, (list, tuple)) and not fallback_models:  # one provider object
		models = (cast("LLMProvider", model),)
	else:
		from openmolt_core.fallback import model_list

		models = model_list(model, fallback_models)
	if max_steps is not None:
		_count("max_steps", max_steps)
	if max_tokens is not None:
		_count("max_tokens", max_tokens)
	if timeout is not None:
		_seconds(timeout)
	if max_cost is not None:
		check_cost(max_cost, "create_agent")
	limits: Limits | None = None
	verbose = False
	if config:  # explicit keywords win over its settings
		settings = _agent_config(config)
		max_steps = settings.max_steps if max_steps is None else max_steps
		max_tokens = settings.max_tokens if max_tokens is None else max_tokens
		timeout = settings.timeout if timeout is None else timeout
		max_cost = settings.max_cost if max_cost is None else max_cost
		verbose = bool(settings.verbose)
		caps_given = settings.limits()
		limits = Limits(**caps_given) if caps_given else None
	if on_human_input_request is True:
		raise ConfigurationError(
			"create_agent: on_human_input_request must be a function that answers, or False"
		)
	return AgentOptions(
		name,
		_instructions(instructions, instructions_path),
		models,
		DEFAULT_MODEL_CONFIG if model_config is None else _model_config(model_config),
		_config_dict(config) if config else None,
		_bindings(integrations) if integrations else (),
		tools,
		None if memory is None else _memory(memory),
		on_human_input_request if callable(on_human_input_request) else None,
		None if requires_approval is None else _approval_rules(requires_approval),
		on_approval_request,
		parse_guardrails(guardrails, "create_agent") if guardrails else (),
		None if taint_policy is None else TaintPolicy.of(taint_policy, where=_OWN_TAINT),
		None if output_schema is None else _output_schema(output_schema),
		max_steps,
		max_tokens,
		timeout,
		max_cost,
		limits,
		verbose,
		DEFAULT_COMPACTION if compaction is True else _compaction(compaction),
		skills,
		None if tool_loading == "all" else _tool_search(tool_loading),
		parse_capabilities(capabilities, "create_agent") if capabilities else (),
	)


_LISTS = (list, tuple)


def _handlers(human: object, approval: object) -> None:
	"""Refuse an ``on_human_input_request`` or ``on_approval_request`` that cannot be called."""
	for option, handler in (("on_human_input_request", human), ("on_approval_request", approval)):
		if handler is not None and handler is not False and not callable(handler):
			raise ConfigurationError(
				f"create_agent: {option} must be a function (sync or async) that answers, "
				f"or None (got {_shown(handler)})"
			)


def _shown(value: object) -> str:
	"""A wrong option's value for its error (`openmolt_core._support.words.shown`)."""
	from openmolt_core._support.words import shown  # loaded by an error only

	return shown(value)


def _many(option: str, value: Any, what: str, example: str, where: str = "create_agent") -> Any:
	"""A list option as given, or refused when it is one value (a string's letters are no list).

	Args:
		option: The keyword.
		value: Its value.
		what: What the list holds, for the message.
		example: One entry, for the message.
		where: Who was given it (``OpenMolt``, ``create_agent``), for the message.

	Raises:
		ConfigurationError: A string, bytes, a dict or anything not iterable.
	"""
	if isinstance(value, list | tuple):
		return value
	if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
		hint = " (an integration's id goes in integrations=[...])" if option == "tools" else ""
		raise ConfigurationError(
			f"{where}: {option} must be a list of {what} (got {_shown(value)}); "
			f"give a list even for one: {option}=[{example}]{hint}"
		)
	return list(value)


_OWN_TAINT = "create_agent: taint_policy"
_INSTANCE_TAINT = "OpenMolt: taint_policy"


MAX_INSTRUCTIONS_BYTES = 4 << 20
"""The largest ``instructions_path`` file read: about a million tokens, more than a model reads
in one request. A larger file, or a path that names no regular file (a folder, a device, a named
pipe), is refused before it is read."""


def _instructions(text: str | None, path: str | Path | None) -> str:
	"""Read ``instructions`` or ``instructions_path`` (one of them)."""
	if path is None:
		return text or ""
	if text is not None:
		raise ConfigurationError(
			"create_agent: give 'instructions' or 'instructions_path', not both"
		)
	from openmolt_core._support.paths import read_text
	from openmolt_core.integrations._taintmarks import refuse_tainted

	refuse_tainted(path, "create_agent: instructions_path")
	try:
		return read_text(path, limit=MAX_INSTRUCTIONS_BYTES)
	except UnicodeDecodeError as exc:
		from openmolt_core._support.textfile import not_utf8

		raise ConfigurationError(
			"create_agent: instructions_path " + not_utf8(repr(str(path)), exc)
		) from None
	except OSError as exc:
		raise ConfigurationError(
			f"create_agent: instructions_path {str(path)!r} cannot be read: {exc.strerror}"
		) from exc


def _count(option: str, value: object) -> None:
	"""Refuse a ``max_steps`` or ``max_tokens`` that is not a whole number >= 1."""
	if not isinstance(value, int) or isinstance(value, bool) or value < 1:
		raise ConfigurationError(
			f"create_agent: {option} must be a whole number >= 1, got {value!r}"
		)


def _seconds(value: object) -> None:
	"""Refuse a ``timeout`` that is not a number of seconds > 0."""
	if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
		raise ConfigurationError(f"create_agent: timeout must be seconds > 0, got {value!r}")


def check_cost(value: object, where: str) -> None:
	"""Refuse a ``max_cost`` that is not a number of US dollars > 0.

	Args:
		value: The option's value.
		where: Who was given it (``OpenMolt``, ``create_agent``), for the message.

	Raises:
		ConfigurationError: Names the option and what it must be.
	"""
	if (
		not isinstance(value, int | float)
		or isinstance(value, bool)
		or not value > 0
		or value == float("inf")
	):
		raise ConfigurationError(
			f"{where}: max_cost must be US dollars > 0 (max_cost=0.50), got {value!r}"
		)


def _model_config(value: ModelConfig | Mapping[str, Any]) -> ModelConfig:
	"""Read ``model_config`` (`openmolt_core.options.read_model_config`)."""
	from openmolt_core.options import read_model_config

	return read_model_config(value, "create_agent")


def _agent_config(config: AgentConfig | Mapping[str, Any]) -> AgentConfig:
	"""Read ``config`` (`openmolt_core.agentconfig.AgentConfig`)."""
	from openmolt_core.agentconfig import AgentConfig
	from openmolt_core.options import parse_options

	return parse_options(AgentConfig, config, "create_agent: config")


def _config_dict(config: AgentConfig | Mapping[str, Any]) -> Mapping[str, Any]:
	"""``config`` as given, as a dict (the keys set, for the agent's record)."""
	from openmolt_core.agentconfig import AgentConfig

	return config.model_dump(exclude_unset=True) if isinstance(config, AgentConfig) else config


def _memory(value: AgentMemory | MemoryConfig) -> AgentMemory:
	"""Read ``memory`` (`openmolt_core.options.AgentMemory`)."""
	from openmolt_core.options import AgentMemory, parse_options

	return parse_options(AgentMemory, value, "create_agent: memory")


def _bindings(
	entries: Sequence[str | IntegrationEntry | Mapping[str, Any]],
) -> list[IntegrationBinding]:
	"""Read ``integrations`` (`openmolt_core.integrations.binding`)."""
	from openmolt_core.integrations.binding import parse_binding

	return [parse_binding(entry) for entry in entries]


def _approval_rules(
	value: bool | str | Sequence[str] | ApprovalPolicy | None,
) -> ApprovalPolicy | None:
	"""Read ``requires_approval`` (its rules are checked against the tools when bound)."""
	if value is None or value is False:
		return None
	from openmolt_core.policy import ApprovalPolicy

	return ApprovalPolicy.of(value, where="create_agent: requires_approval")


def _output_schema(value: object) -> type[BaseModel] | dict[str, Any]:
	"""Check ``output_schema``: a valid JSON Schema, or a pydantic model class."""
	if isinstance(value, dict):
		from openmolt_core._support.metaschema import check_schema

		if problems := check_schema(value):
			raise ConfigurationError(
				"create_agent: output_schema is not a valid JSON Schema: "
				+ "; ".join(f"output_schema: {p}" for p in problems)
			)
		return value
	from pydantic import BaseModel

	if not (isinstance(value, type) and issubclass(value, BaseModel)):
		raise ConfigurationError(
			"create_agent: output_schema must be a pydantic model class or a JSON Schema dict"
		)
	return value


def _compaction(option: object) -> CompactionConfig | None:
	"""Read ``compaction`` other than True: False, a `CompactionConfig`, or a dict of its fields."""
	if option is False or option is None:
		return None
	if isinstance(option, CompactionConfig):
		return option
	if not isinstance(option, Mapping):
		raise ConfigurationError(
			"create_agent: compaction must be True, False, a CompactionConfig or a dict"
		)
	from openmolt_core.options import snake_keys

	fields = CompactionConfig.__dataclass_fields__
	given = snake_keys(option)
	unknown = sorted(k for k, name in zip(option, given, strict=True) if name not in fields)
	if unknown:
		raise ConfigurationError(
			f"create_agent: compaction: unknown key(s) {unknown}; allowed: {', '.join(fields)}"
		)
	try:
		return CompactionConfig(**given)
	except TypeError as exc:
		raise ConfigurationError(f"create_agent: compaction: {exc}") from exc
	except ValueError as exc:  # CompactionConfig's own check of a value
		raise ConfigurationError(f"create_agent: {exc}") from None


def _tool_search(option: object) -> ToolSearch:
	"""Read ``tool_loading`` other than ``"all"``: ``search``, ``auto`` or a ToolSearch."""
	from openmolt_core.toolsearch import AUTO_SEARCH_ABOVE, ToolSearch

	if isinstance(option, ToolSearch):
		return option
	if option == "search":
		return ToolSearch()
	if option == "auto":
		return ToolSearch(above=AUTO_SEARCH_ABOVE)
	raise ConfigurationError(
		f"create_agent: tool_loading must be 'all', 'search', 'auto' or a ToolSearch, got {option!r}"
	)


def parse_guardrails(value: object, where: str) -> tuple[Guardrail, ...]:
	"""Read a ``guardrails`` option: a list of `openmolt_core.guardrails.Guardrail`.

	Args:
		value: The option's value.
		where: Who was given it (``OpenMolt``, ``create_agent``), for the message.

	Raises:
		ConfigurationError: An entry is not a guardrail (a bare function has no stage).
	"""
	if not value:
		return ()
	from openmolt_core.guardrails import Guardrail

	if isinstance(value, Guardrail):
		return (value,)
	example = "pii_redaction()"
	items = list(_many("guardrails", value, "guardrails", example, where))
	for index, item in enumerate(items):
		if not isinstance(item, Guardrail):
			raise ConfigurationError(
				f"{where}: guardrails[{index}] is a {type(item).__name__}, not a Guardrail; make "
				"one with @guardrail('input' | 'tool_call' | 'tool_result' | 'output') or "
				"Guardrail(check, on=...), or use a built-in (openmolt_core.guardrails)"
			)
	return tuple(items)


def parse_capabilities(entries: object, where: str) -> tuple[CapabilityEntry, ...]:
	"""Check the shape of a ``capabilities`` option (names are built per agent).

	Args:
		entries: The option's value.
		where: Who was given it (``OpenMolt``, ``create_agent``), for the message.

	Raises:
		ConfigurationError: It is not a list of capabilities, names or ``{"name", "options"}``.
	"""
	if isinstance(entries, str | Capability | Mapping):
		entries = [entries]
	if not isinstance(entries, Sequence):
		raise ConfigurationError(
			f"{where}: capabilities must be a list of Capability objects, names or "
			f"{{'name': ..., 'options': {{...}}}}, got {type(entries).__name__}"
		)
	for index, entry in enumerate(entries):
		if isinstance(entry, Mapping):
			_capability_spec(entry, f"{where}: capabilities[{index}]")
		elif not isinstance(entry, str | Capability):
			raise ConfigurationError(
				f"{where}: capabilities[{index}] is a {type(entry).__name__}; give a Capability "
				"(a subclass of openmolt.Capability), the name of one a plugin registers, or "
				"{'name': ..., 'options': {...}}"
			)
	return tuple(entries)


def _capability_spec(
	entry: Mapping[str, Any], where: str = "capabilities"
) -> tuple[str, dict[str, Any]]:
	"""Read ``{"name": ..., "options": {...}}``: the capability's name and its options."""
	name = entry.get("name")
	options = entry.get("options") or {}
	unknown = set(entry) - {"name", "options"}
	if not isinstance(name, str) or not name or unknown or not isinstance(options, Mapping):
		raise ConfigurationError(
			f"{where}: expected {{'name': <a registered capability>, 'options': {{...}}}}"
			+ (f"; unknown key(s) {sorted(unknown)}" if unknown else "")
		)
	return name, dict(options)


# building -----------------------------------------------------------------------------------


def build_agent(om: Host, options: AgentOptions) -> Agent:
	"""Make the agent ``options`` describe, in ``om``.

	Args:
		om: The instance the agent belongs to.
		options: The agent's options, parsed.

	Raises:
		ConfigurationError: An option does not fit the instance or the agent's tools (a rule
			naming no tool, a duplicate handle, a model without a price under ``max_cost``...).
		PluginError: The provider, an integration or a capability is not installed.
	"""
	shared = _shared(om)
	name, models, bindings, tools = options.name, options.models, options.bindings, options.tools
	chain = _slots(om, shared, models[1:]) if len(models) > 1 else ()
	provider_name, model_name, provider_factory = _resolve_model(om, shared, models[0])
	bound: list[BoundTool] = []
	files = _files(
		om,
		shared,
		allow_file_system=bool(bindings)
		and any(
			b.integration == "fileSystem" and (b.scopes is None or "read" in b.scopes)
			for b in bindings
		),
	)
	sources = _bind_integrations(om, shared, name, bindings, bound, files) if bindings else ()
	if tools:
		bound.extend(bind_tools(as_tools(tools), agent=name, http=shared.http, files=files))
	caps = _capabilities(om, shared, options, bound, files, sources)
	if len(bound) > 1 and len({t.handle for t in bound}) != len(bound):
		_refuse_duplicates(bound)
	if options.verbose:
		from openmolt_core import _verbose

		_verbose.enable()
	max_cost = om.max_cost if options.max_cost is None else options.max_cost
	if options.limits is not None and options.limits.max_result_chars_per_tool:
		where = "create_agent: config: max_result_chars_per_tool"
		_check_patterns(options.limits.max_result_chars_per_tool, bound, sources, where, caps)
	caps.append(_offload(shared, files, options.limits))
	if options.max_tokens or max_cost is not None:  # a run stops once they are spent
		from openmolt_core.capabilities.budget import budget

		caps.append(budget(options.max_tokens, max_cost))
	if bindings:  # only an integration's context holds secrets (bind_tools' hold none)
		_register_secrets(om, [t.context for t in bound], sources)
	policy = None  # no rules, the common case: no call (nor its arguments' tuple)
	if om._approval_rules or options.requires_approval:
		policy = _approval_policy(
			om._approval_rules,
			options.requires_approval,
			bound,
			sources,
			om,
			builtin_of=(caps, name, model_name),
		)
	taint = options.taint_policy
	if taint is not None:
		_check_taint(taint, bound, sources, _OWN_TAINT, strict=True)
	elif (taint := shared.plain_taint) is None:
		taint = TaintPolicy.of(om._taint_policy, where=_INSTANCE_TAINT)
		if _check_taint(taint, bound, sources, _INSTANCE_TAINT, strict=False, om=om):
			shared.plain_taint = taint  # checked against no tool: the same for every agent
	own: list[Capability] = []  # this agent's, after the shared (then its safety)
	if policy:  # first: it marks the tools the rules select before the others see them
		from openmolt_core.capabilities.approvals import ApprovalRules

		own.append(ApprovalRules(policy))
	if options.tool_search is not None:  # after offload: it says why readResult is hidden first
		from openmolt_core.capabilities.toolsearch import ToolCatalog

		if options.tool_search.pinned:
			where = "create_agent: tool_loading: pinned"
			_check_patterns(options.tool_search.pinned, bound, sources, where, caps)
		names = [*(type(c).name for c in caps), Safety.name]
		own.append(ToolCatalog(options.tool_search, own=names))
	guards = om._guardrails + options.guardrails
	if guards:
		_check_guard_rules(om._guardrails, options.guardrails, bound, sources, caps, om)
	max_steps = options.max_steps
	hooks = _resolved(shared, caps, own, guards, taint)
	if chain:  # outermost: every other capability's wrap_model sees each model it tries
		hooks = Hooks(
			(_fallback(provider_name, model_name, provider_factory, chain), *hooks.capabilities)
		)
	# Not `Agent(om, ...)`: calling a class hands the keywords to `__init__` in a dict (which
	# the call builds first, with more than 15 of them); `__init__` called on a local name takes
	# them as they are (about 7 % of creating an agent). `agent` is exactly an Agent.
	cls = Agent  # `Agent.__init__` of the imported name would be compiled as a plain call
	agent = cls.__new__(cls)
	cls.__init__(
		agent,
		om,
		name=name,
		provider_name=provider_name,
		provider=provider_factory,
		model=model_name,
		model_config=options.model_config,
		instructions=options.instructions,
		tools=bound,
		output_schema=options.output_schema,
		memory=options.memory,
		on_human_input_request=options.on_human_input_request,
		config=options.config,
		max_steps=max_steps if max_steps is not None else om.max_steps,
		max_tokens=options.max_tokens,
		timeout=options.timeout,
		max_cost=max_cost,
		limits=options.limits,
		on_approval_request=options.on_approval_request,
		models=chain,
		files=files,
		capabilities=hooks,
	)
	# Events emitted on the agent outside its runs (schedules, durable workers) reach the
	# observers too; a run's own go through its drive's observers (`openmolt_core.observe`).
	agent._events.outside = ObservedOutside(agent, shared.observers)  # one getter per instance
	if tools and agent.sub_agents:  # agents given as tools must not reach this one again
		from openmolt_core.subagents import check_cycles

		check_cycles(agent)
	if max_cost is not None:  # an unknown price would count as zero: refused now
		from openmolt_core._pricecheck import check_agent_prices

		check_agent_prices(agent)
	if options.model_config.provider_options:
		_check_provider_options(agent)
	# What the setters that change models use (a function of the module, shared by every agent:
	# one per agent would be an object each, and a cycle through it).
	agent._models_check = _recheck
	durability = om.durability
	if durability is not None:
		durability.register(agent)  # runs recover by agent name
	return agent


def _compaction_for(agent: Agent, config: CompactionConfig) -> Compaction:
	"""The compaction capability for another summary model, resolved as ``create_agent`` does.

	Args:
		agent: The agent whose ``compaction`` is set.
		config: The new settings.
	"""
	om: Any = agent.om  # the instance that built it (`Host`)
	return _compactor(om, _shared(om), config)


def _recheck(agent: Agent, where: str) -> None:
	"""Check an agent's options against its models again, after a setter changed them.

	The checks of `build_agent`: prices under ``max_cost``
	(`openmolt_core._pricecheck.check_agent_prices`) and ``provider_options`` by provider
	(`_check_provider_options`).

	Args:
		agent: The agent.
		where: The setter, for the message (``agent.compaction``).
	"""
	if agent.max_cost is not None:
		from openmolt_core._pricecheck import check_agent_prices

		check_agent_prices(agent, where)
	if agent.model_config.provider_options:
		_check_provider_options(agent, where)


def _check_provider_options(agent: Agent, where: str = "create_agent") -> None:
	"""Refuse ``provider_options`` that would go to models of several providers as they are.

	A provider writes them into its request body unchanged: Anthropic's ``top_k`` sent to
	OpenAI is refused (400), so the step a fallback was meant to save fails, and a summary
	model's call fails the run deep into it. Keyed by provider, each gets its own part; a key
	naming a provider none of the agent's models use is refused too (the options would no
	longer read as keyed, and go into every body as they are: a field named ``openai``).

	Args:
		agent: The agent.
		where: What set the options or the models, for the message.

	Raises:
		ConfigurationError: The options are not keyed by provider and the agent's models (or
			its summary model) are of more than one provider, or they are keyed and name a
			provider the agent does not use.
	"""
	from openmolt_core.llm import scoped_options

	options = agent.model_config.provider_options
	providers = agent._providers()
	if scoped_options(options, providers):
		return
	if all(isinstance(v, Mapping) for v in options.values()):
		om: Any = agent.om  # the instance (`Facade`): its settings and plugins name providers
		known = {*providers, *om.llm_providers, *om.plugins.provider_names()}
		stray = [k for k in options if k not in providers]
		if any(k in known for k in options):
			raise ConfigurationError(
				f"{where}: model_config provider_options are keyed by provider, and "
				f"{', '.join(repr(k) for k in stray)} is no provider of agent {agent.name!r}'s "
				f"models (or its summary model): {', '.join(providers)}; drop that key, or give "
				"the agent a model of that provider"
			)
	if len(providers) < 2:
		return
	keys = ", ".join(repr(k) for k in options)
	raise ConfigurationError(
		f"{where}: model_config provider_options ({keys}) would go into the request body "
		f"of every model as they are, and the models of agent {agent.name!r} (or its summary model) "
		f"are of several providers ({', '.join(providers)}); key them by provider, e.g. "
		f"provider_options={{{providers[0]!r}: {{...}}, {providers[1]!r}: {{...}}}}"
	)


class AgentFiles:
	"""An agent's view of its instance's file store, which is made on first use (a `FileAccess`).

	Creating an agent makes no store, so a run that saves and reads no file never loads
	`openmolt_core.filestore`. Each call goes to ``om.files.for_agent(...)``: the instance's
	store of the moment.

	Args:
		om: The instance.
		allow_file_system: Whether the agent may read ``fileSystem:`` references.
	"""

	__slots__ = ("_allow", "_om")

	def __init__(self, om: Host, *, allow_file_system: bool) -> None:
		self._om = om
		self._allow = allow_file_system

	def _view(self) -> FileAccess:
		return self._om.files.for_agent(allow_file_system=self._allow)

	screens = True
	"""Its `save` is the store's: it screens what it keeps and takes a call's secrets and origin."""

	async def save(
		self,
		data: bytes,
		*,
		media_type: str = "application/octet-stream",
		name: str = "",
		secrets: Iterable[str] = (),
		origin: Mapping[str, Any] | None = None,
	) -> dict[str, Any]:
		"""Save bytes: see `openmolt_core.filestore.FileStore.save`."""
		return await self._om.files.for_agent(allow_file_system=self._allow).save(
			data, media_type=media_type, name=name, secrets=secrets, origin=origin
		)

	def origin(self, reference: str) -> dict[str, Any] | None:
		"""The call that kept a stored file: see `openmolt_core.filestore.FileStore.origin`."""
		return self._om.files.origin(reference)

	async def open(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference to bytes: see `openmolt_core.files.FileAccess.open`."""
		return await self._view().open(reference, max_bytes=max_bytes)

	def read(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference, blocking: see `openmolt_core.files.FileAccess.read`."""
		return self._view().read(reference, max_bytes=max_bytes)

	def describe(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference, blocking: see `openmolt_core.files.FileAccess.describe`."""
		return self._view().describe(reference)

	async def info(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference: see `openmolt_core.files.FileAccess.info`."""
		return await self._view().info(reference)

	def path_of(self, reference: str) -> Path:
		"""The local path of a stored file: see `openmolt_core.filestore.FileStore.path_of`."""
		return self._om.files.for_agent(allow_file_system=self._allow).path_of(reference)

	resolve = open  # the store's other name for `open`

	def __repr__(self) -> str:
		return f"AgentFiles(allow_file_system={self._allow})"


def _files(om: Host, shared: Shared, *, allow_file_system: bool) -> AgentFiles:
	"""The agents' view of the file store, one per instance and ``fileSystem:`` grant."""
	found = shared.files.get(allow_file_system)
	if found is None:
		found = shared.files[allow_file_system] = AgentFiles(
			om, allow_file_system=allow_file_system
		)
	return found


def _shared(om: Host) -> Shared:
	"""What the instance's agents share, made with the first one."""
	shared = om._shared
	if shared is None:
		# Looked up at each call: an instance given another ``conversation`` later uses it.
		shared = om._shared = Shared(
			lambda: om.observers, lambda a, s: _conversation(om, a, s), om.http
		)
	return shared


def resolve_model(om: Host, model: str | LLMProvider) -> Resolved:
	"""A model of ``om``'s: its provider's name, its name, and its provider (made on first use).

	Args:
		om: The instance whose providers serve it.
		model: ``"provider:model"``, or a provider object.

	Raises:
		ConfigurationError: The model does not read ``provider:model``.
		PluginError: No plugin provides its provider.
	"""
	return _resolve_model(om, _shared(om), model)


def _resolve_model(om: Host, shared: Shared, model: str | LLMProvider) -> Resolved:
	if not isinstance(model, str):
		if not hasattr(model, "generate"):
			raise ConfigurationError(
				"create_agent: model must be 'provider:model' (e.g. 'openai:gpt-5-mini') or a provider object"
			)
		# A provider object (a test double, a custom class) is no plugin: no name to load.
		_learn_provider_secrets(om, model)
		name = getattr(model, "name", "custom")
		return "", getattr(model, "model", name), lambda: model
	known = shared.models.get(model)
	if known is not None:
		return known
	provider_name, sep, model_name = model.partition(":")
	if not sep or not provider_name or not model_name:
		slashed = _slashed(om, model) if not sep else None  # openai/gpt-5-mini, as LiteLLM writes
		owner = _provider_listing(om, model) if not sep and not slashed else None
		if slashed:
			hint = f"did you mean {slashed!r}?"
		elif owner:
			hint = f"did you mean '{owner}:{model}'?"
		else:
			hint = (
				"e.g. 'openai:gpt-5-mini', 'anthropic:claude-sonnet-4-5' or 'google:gemini-2.5-pro'"
			)
			if "ollama" in om.plugins.provider_names():  # `-m llama3.2`: a local server's model
				hint += (
					f"; a local server's model is written with the server's name: "
					f"'ollama:{model}' (or lmstudio:, vllm:, llamacpp:)"
				)
		raise ConfigurationError(
			f"create_agent: model {model!r} must read 'provider:model'; {hint}"
		)
	om.plugins.provider(provider_settings(om, provider_name)[0])  # fail early when it is missing
	resolved = (provider_name, model_name, lambda: om.provider(provider_name))
	shared.models[model] = resolved
	return resolved


def _slashed(om: Host, model: str) -> str | None:
	"""``openai:gpt-5-mini`` for ``openai/gpt-5-mini`` (LiteLLM's spelling), if ``openai`` is installed."""
	provider_name, slash, model_name = model.partition("/")
	if not slash or not model_name:
		return None
	names = {n.lower(): n for n in om.plugins.provider_names()}
	found = names.get(provider_name.lower())
	return f"{found}:{model_name}" if found else None


def _provider_listing(om: Host, model: str) -> str | None:
	"""The installed provider whose model list names ``model`` (``gpt-5-mini``: ``openai``)."""
	for name in om.plugins.provider_names():
		try:
			listed = getattr(om.provider(name), "models", None)
			if callable(listed) and model in listed():
				return name
		except Exception:  # only a hint: a provider that cannot say is passed over
			continue
	return None


def _learn_provider_secrets(om: Host, provider: object) -> None:
	"""Register the keys a provider object holds, as a provider made by name has its key registered.

	Its ``secrets()`` (the built-in providers') is asked at every use; the attributes named like
	secrets (``api_key``, ``token``, a ``SecretStr``, a ``headers`` mapping) are read now, those of
	8 characters or more (a shorter value would mask ordinary text, as for the environment's).
	"""
	held = getattr(provider, "secrets", None)
	if callable(held):
		om.secrets.add_source(held)
	attributes = getattr(provider, "__dict__", None)
	if attributes:
		_learn_named_secrets(om, attributes)


def _learn_named_secrets(om: Host, settings: Mapping[str, object]) -> None:
	"""Register the values of ``settings`` named like secrets (`settings_secrets`), 8+ characters.

	A shorter value would mask ordinary text, as for the environment's.
	"""
	from openmolt_core._support.masking import settings_secrets

	found = [v for v in settings_secrets(settings) if len(v.strip()) >= 8]
	if found:
		om.secrets.add(*found)


def _fallback(
	provider_name: str,
	model_name: str,
	provider: Callable[[], LLMProvider],
	chain: Sequence[ModelSlot],
) -> Capability:
	"""The fallback capability of an agent of several models (ids as the agent makes them)."""
	from openmolt_core._chain import slot_id, unique_ids
	from openmolt_core.capabilities.fallback import ModelFallback

	first = slot_id(provider_name, model_name, None if provider_name else provider())
	return ModelFallback(unique_ids([first, *(s.id for s in chain)]))


def _slots(om: Host, shared: Shared, models: Sequence[str | LLMProvider]) -> list[ModelSlot]:
	"""The slots of the fallback models.

	A helper: a comprehension in `build_agent` would make its variables closure cells at every
	call, fallback or not.
	"""
	return [_slot(om, shared, model) for model in models]


def _slot(om: Host, shared: Shared, model: str | LLMProvider) -> ModelSlot:
	"""The slot of a fallback model."""
	from openmolt_core._chain import ModelSlot, slot_id

	p, m, f = _resolve_model(om, shared, model)
	return ModelSlot(slot_id(p, m, f() if not p else None), p, m, f)


def _refuse_duplicates(bound: Sequence[BoundTool]) -> NoReturn:
	"""Refuse tools bound under the same handle, naming them."""
	handles = [t.handle for t in bound]
	duplicates = {h for h in handles if handles.count(h) > 1}
	raise ConfigurationError(f"create_agent: tool handle(s) {sorted(duplicates)} given twice")


def _bind_integrations(
	om: Host,
	shared: Shared,
	name: str,
	bindings: Sequence[IntegrationBinding],
	bound: list[BoundTool],
	files: FileAccess,
) -> list[SourceBinding]:
	"""Bind an agent's integrations into ``bound``; return the run-time sources (MCP servers).

	Integrations bound with ``account: "user"`` get the end user's account per call.
	"""
	from openmolt_core.integrations.binding import bind_integration
	from openmolt_core.integrations.filesystem import keep_out

	sources: list[SourceBinding] = []
	state = own_state(om)
	watch = (id(om), _state_now(weakref.ref(om)))  # what changes later: asked at each path
	for binding in bindings:
		written = binding.integration
		spec = om.plugins.integration(written)
		if keep_out(spec, state.folders, state.stores, watch=watch):  # a FileSystem over them
			shared.file_tools[id(spec)] = spec
		binding.integration = spec.id or written  # "google-drive" → "googleDrive"
		configs = om.integration_configs
		if binding.integration != written and written in configs:
			# Config given under the extra's spelling: the integration's own id holds it now.
			given = configs.pop(written)
			configs[binding.integration] = {**given, **configs.get(binding.integration, {})}
		if spec.source is not None:  # its tools are listed at run time (an MCP server)
			sources.append(_bind_source(om, spec, binding, name, files))
			continue
		_refuse_misspelled(spec, binding, om.integration_configs)
		added = len(bound)
		bound.extend(
			bind_integration(
				spec,
				binding,
				agent=name,
				instance_config=om.integration_configs.get(binding.integration, {}),
				http=om.http,
				files=files,
				auth_cache=shared.auths,
				retry=om.retry,
				store=om.credential_store,
			)
		)
		if binding.account == "user":  # each run's end user's credential, per call
			account = om.accounts.for_binding(
				spec, binding.integration, binding.credential_type, binding.scopes, agent=name
			)
			for tool in bound[added:]:
				tool.account = account
	return sources


class OwnState(NamedTuple):
	"""The places an instance keeps its state in (`own_state`).

	Args:
		folders: Folders (the file store's).
		stores: Store files: SQLite files, the credential store.
	"""

	folders: list[Path]
	stores: list[Path]


def _state_now(om: weakref.ReferenceType[Host]) -> Callable[[], OwnState | None]:
	"""`own_state` of an instance each time it is asked; None once the instance is gone."""

	def now() -> OwnState | None:
		held = om()
		return None if held is None else own_state(held)

	return now


def own_state(om: Host) -> OwnState:
	"""Where an instance keeps its state, from its options: what no file tool may touch.

	The one list of ``OpenMolt(...)``'s paths: ``files_dir``, ``run_store``, ``schedule_store``,
	a ``credential_store`` given as a path (or a store with a ``path``), the ``approvals``'
	ledger's file (`openmolt_core.approvals.SQLiteLedger`), ``durability``'s
	SQLite file (its ``.files`` folder begins with its name) and ``filesDir``; and the
	``openmolt`` command's stores where the environment puts them (``$OPENMOLT_SESSIONS``,
	``$OPENMOLT_RUN_STORE``, ``$OPENMOLT_SCHEDULE_STORE``); the file store's folder once made
	(a temporary one) and a loaded durable backend's ``files_dir`` (a PostgreSQL store's
	``./openmolt-files``). The binding asks again at each path a file tool walks
	(`openmolt_core.integrations._sandbox.Sandbox.watch`): a store set on the instance after its
	agents were made is kept out too. A run's session file is added when
	the run starts (`_conversation`). The FileSystem
	keeps out on its own what every instance shares (`openmolt_core.integrations.filesystem`):
	OpenMolt's state folder (the default stores, sessions, the plugin record), its configuration
	folder (the default credential store, the key store), ``$OPENMOLT_KEYS_FILE``,
	``$OPENMOLT_CREDENTIALS_FILE`` and the file taint record.

	Args:
		om: The instance.
	"""
	folders: list[Path] = []
	stores: list[Path] = []
	if om._files_dir is not None:
		folders.append(Path(om._files_dir))
	made = om._files.root if om._files is not None else None
	if made is not None:  # the store's own folder: a temporary one, a durable backend's
		folders.append(made)
	if om._durability is not None:  # the backend says where its files are, whatever was given
		folders.append(Path(om._durability.files_dir))
	if om.run_store is not None:
		stores.append(om.run_store.path)
	schedules = om._scheduler_options[1]
	if schedules is not None:
		stores.append(Path(schedules))
	for kept in (om.credential_store, om._approvals and om._approvals.ledger):
		path = getattr(kept, "path", None)  # a store kept in a file (`SQLiteLedger`)
		if isinstance(path, (str, os.PathLike)):
			stores.append(Path(path))
	durable = om._durability_config
	url = durable.get("url") if isinstance(durable, Mapping) else durable
	if isinstance(url, (str, os.PathLike)):
		text = os.fspath(url)
		if text.startswith("sqlite:///"):
			text = text.removeprefix("sqlite:///")
		if "://" not in text:
			stores.append(Path(text))
	if isinstance(durable, Mapping):
		shared = durable.get("files_dir", durable.get("filesDir"))
		if isinstance(shared, (str, os.PathLike)):
			folders.append(Path(shared))
	from openmolt_core import _history, runstore, sessions

	for default in (sessions.default_path, runstore.default_path, _history.default_path):
		try:
			path = default()
		except ConfigurationError:  # the variable holds a URL: no file of ours
			continue
		if path is not None:
			stores.append(path)
	return OwnState(folders, stores)


def _conversation(om: Host, agent: Agent, session: Session) -> RunConversation:
	"""``om.conversation``, once the session's file is out of every file tool's reach.

	A run with ``session=SQLiteSession(id, "project/chat.db")`` and a FileSystem over the
	project folder could otherwise rewrite the conversation (its items, its taint).
	"""
	path = getattr(session, "path", None)
	if isinstance(path, (str, os.PathLike)) and om._shared is not None:
		from openmolt_core.integrations.filesystem import keep_out

		for spec in om._shared.file_tools.values():
			keep_out(spec, (), [path])
	return om.conversation(agent, session)


def _bind_source(
	om: Host, spec: Integration, binding: IntegrationBinding, agent: str, files: FileAccess
) -> SourceBinding:
	"""Bind an integration whose tools are listed at run time; the instance closes its source."""
	from openmolt_core.capabilities.sources import bind_source

	om._tool_sources[id(spec.source)] = spec.source
	config = om.integration_configs.get(binding.integration, {})
	return bind_source(
		spec, binding, agent=agent, instance_config=config, http=om.http, files=files
	)


def _refuse_misspelled(
	spec: Integration, binding: IntegrationBinding, instance: Mapping[str, Any]
) -> None:
	"""Refuse config keys the integration does not read but nearly does (a typo)."""
	from openmolt_core.integrations.preflight import misspelled_keys

	iid = binding.integration
	config = {**instance.get(iid, {}), **binding.config}
	wrong = misspelled_keys(spec, config)
	if wrong:
		hints = "; ".join(
			f"config key {given!r} is not read by {iid}: did you mean {meant!r}?"
			for given, meant in wrong
		)
		raise ConfigurationError(f"create_agent: integrations[{iid}]: {hints}")


def _capabilities(
	om: Host,
	shared: Shared,
	options: AgentOptions,
	bound: list[BoundTool],
	files: FileAccess,
	sources: Sequence[SourceBinding],
) -> list[Capability]:
	"""An agent's capabilities, in hook order, and their tools bound into ``bound``.

	The run observers first (outermost), then the instance's, then the agent's: the sugar of
	the keyword options (skills, end users' accounts, the integrations whose tools are listed
	at run time) before the ones given, compaction last. The instance's observers and
	compaction are shared objects.
	"""
	bindings, skills, compaction = options.bindings, options.skills, options.compaction
	plain = compaction is DEFAULT_COMPACTION and not (
		bindings or sources or options.capabilities or skills or om._capabilities
	)
	if plain and shared.plain_caps is not None:  # the common agent: found at once
		return list(shared.plain_caps)
	own: list[Capability] = []
	if any(b.account == "user" for b in bindings):  # calls wait for their user's account
		from openmolt_core.capabilities.accounts import EndUserAccounts

		own.append(EndUserAccounts())
	if sources:  # tools listed at the start of each run (MCP servers)
		from openmolt_core.capabilities.sources import Sources

		own.append(Sources(sources))
	if skills:
		from openmolt_core.skills import load_skills

		listed = [skills] if isinstance(skills, str | Path) else skills
		agent_skills = load_skills(listed, plugins=om.plugins.skills, known=om.plugins.skill_names)
		if agent_skills:
			from openmolt_core.capabilities.skills import Skills

			own.insert(0, Skills(agent_skills))
	entries = (*om._capabilities, *options.capabilities)
	given = _capabilities_of(om, entries) if entries else []
	instance = given[: len(om._capabilities)]
	caps: list[Capability] = [shared.observed, *instance, *own, *given[len(instance) :]]
	if bindings:  # outermost: a run missing a credential never starts (nor is observed)
		from openmolt_core.capabilities.credentials import CREDENTIAL_CHECK

		caps.insert(0, CREDENTIAL_CHECK)
	if compaction is not None:
		caps.append(_compactor(om, shared, compaction))
	_check_capability_names(caps, bindings)
	if plain and not any(builds(cap, "tools") for cap in caps):
		shared.plain_caps = tuple(caps)
	model = options.models[0]
	for cap in caps:
		if not builds(cap, "tools"):
			continue
		callable_now = tuple(t.handle for t in bound if t.allowed)
		model_id = model if isinstance(model, str) else type(model).__name__
		extra = built(cap, "tools", AgentInfo(options.name, callable_now, model_id))
		if extra:
			try:
				made = as_tools(extra)
			except ConfigurationError as exc:
				raise ConfigurationError(
					f"capability {cap.name!r}: its tools hook returned what is not a tool: "
					+ str(exc).removeprefix("create_agent: ")
				) from exc
			bound.extend(
				bind_tools(made, agent=options.name, http=om.http, files=files, prefix=cap.name)
			)
	return caps


def _capabilities_of(om: Host, entries: Sequence[CapabilityEntry]) -> list[Capability]:
	"""One agent's capabilities: objects as given, names built by their plugin's factory.

	The secrets among a factory's options and a capability's attributes (an ``api_key``, a
	``token``, a header's value: by their names, as a provider object's) join the instance's
	secrets, so they are masked wherever the capability's tools, events or errors would show them.
	"""
	out: list[Capability] = []
	for entry in entries:
		if isinstance(entry, Capability):
			out.append(entry)
			continue
		name, options = (entry, {}) if isinstance(entry, str) else _capability_spec(entry)
		if options:
			_learn_named_secrets(om, options)
		factory = om.plugins.capability(name)
		try:
			built = factory(**options)
		except Exception as exc:
			raise ConfigurationError(
				f"capabilities: {name!r} could not be built with options {sorted(options)}: "
				f"{type(exc).__name__}: {exc}"
			) from exc
		if not isinstance(built, Capability):
			raise ConfigurationError(
				f"capabilities: the factory of {name!r} returned {type(built).__name__}, "
				"not a Capability; report it to the plugin's authors"
			)
		out.append(built)
	for cap in out:
		attributes = getattr(cap, "__dict__", None)
		if attributes:
			_learn_named_secrets(om, attributes)
		name = type(cap).name
		if name in BUILT_IN_CAPABILITIES and not type(cap).__module__.startswith("openmolt_core."):
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__} is named {name!r}, the name of one of "
				"OpenMolt's own capabilities (it keys that feature's state, journal steps and "
				"events, and the agent finds the feature by it); give yours another name"
			)
	return out


BUILT_IN_CAPABILITIES: frozenset[str] = frozenset(
	{
		"accounts",
		"agent-memory",
		"approval-gate",
		"approvals",
		"budget",
		"caller-words",
		"compaction",
		"credential-check",
		"in-doubt-calls",
		"model-fallback",
		"nested-spend",
		"offload",
		"reply-stream",
		"run-observers",
		"safety",
		"sessions",
		"skills",
		"structured-output",
		"tainted-start",
		"tool-search",
		"tool-sources",
	}
)
"""The names of OpenMolt's own capabilities, which no other capability may take."""


def _check_capability_names(
	caps: Sequence[Capability], bindings: Sequence[IntegrationBinding]
) -> None:
	"""A capability's name prefixes its tools' handles: it may not be an integration's id."""
	taken = {LOCAL, BUILTIN, *(b.integration for b in bindings)}
	for cap in caps:
		if cap.name in taken:
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__} is named {cap.name!r}, which is also an "
				"integration of this agent (its tools' handles start with it); rename the "
				"capability"
			)


def _compactor(om: Host, shared: Shared, config: CompactionConfig) -> Compaction:
	"""The compaction capability; agents with the same settings share one.

	It keeps nothing of an agent; the default's (``compaction=True``) is found at once.
	"""
	default = config is DEFAULT_COMPACTION
	if default and shared.default_compaction is not None:
		return shared.default_compaction
	compactor: Callable[[], tuple[LLMProvider, str]] | None = None
	if config.model is not None:
		_, name, factory = _resolve_model(om, shared, config.model)
		compactor = lambda: (factory(), name)  # noqa: E731
	key = (config, compactor)
	found = shared.compactions.get(key)
	if found is None:
		found = shared.compactions[key] = Compaction(config, compactor, _compaction_for)
	if default:
		shared.default_compaction = found
	return found


def _offload(shared: Shared, files: FileAccess, limits: Limits | None) -> Capability:
	"""The offload of large results; agents with the same store and thresholds share one."""
	per_tool: Mapping[str, int] = {}
	limit: int | None = None
	key: tuple[Any, ...] = (id(files), None)  # the common case: the default thresholds
	if limits is not None:
		per_tool, limit = limits.max_result_chars_per_tool, limits.max_result_chars
		key = (id(files), limit, *sorted(per_tool.items()))
	found = shared.offloads.get(key)
	if found is None:
		limit = limit if limit is not None else Limits().max_result_chars
		offload = Offload(files, limit=limit, per_tool=per_tool)
		found = shared.offloads[key] = OffloadResults(offload)
	return found


_MEMORY = Memory()
"""The memory every agent has beyond a run's state (what it keeps of an agent is the agent's)."""

_STRUCTURED = StructuredOutput()
"""The structured output every agent has (it holds nothing: one serves them all)."""

_SPEND = NestedSpend()
"""What every agent's tool calls count of the runs they nest (a sub-agent's spend); it holds nothing."""

_GATE = ApprovalGate()
"""The approvals gate every agent has, last (its safety may hand it a call); it holds nothing."""


def _resolved(
	shared: Shared,
	caps: Sequence[Capability],
	own: Sequence[Capability],
	guardrails: tuple[Guardrail, ...],
	policy: TaintPolicy,
) -> Hooks:
	"""The hooks of these capabilities, then the agent's own (approvals, tool search), then safety.

	Agents with the same capabilities share their resolved hooks (they are fixed); with the
	same safety settings too, and no capability of their own, the safety is shared as well
	and so are the whole hooks. An agent with capabilities of its own (they know its tools),
	or whose capabilities list tools at run time, has them and a safety of its own (it
	remembers whether it warned of the trifecta) added to the shared ones. Every agent's hooks
	end with the approvals gate (`ApprovalGate`): it decides a call after every capability.
	"""
	cache = shared.hooks
	key = (*map(id, caps), None, id(policy), *map(id, guardrails))  # None: not an id
	found = cache.get(key) if not own else None
	if found is not None:  # it holds the objects of its key: their ids are still theirs
		return found[1]
	base_key = tuple(map(id, caps))
	found = cache.get(base_key)
	if found is None:
		# every agent: anyone may listen to its reply's text; any call may give a session; a
		# call's nested runs spend
		base = Hooks((*caps, Streaming(), _STRUCTURED, shared.sessions, _MEMORY, _SPEND))
		if len(cache) < 64:  # the common sets (observers, compaction, skills...)
			cache[base_key] = (tuple(caps), base)
	else:
		base = found[1]
	if own or base.list_tools:
		if base.list_tools and not base.refresh_tools:  # what binds the tools they list
			own = _with_binder(own)
		return base.adding(*own, Safety(guardrails, policy), _GATE)
	hooks = base.adding(Safety(guardrails, policy, shared=True), _GATE)
	if len(cache) < 64:
		cache[key] = ((*caps, policy, *guardrails), hooks)
	return hooks


def _with_binder(own: Sequence[Capability]) -> Sequence[Capability]:
	"""An agent's own capabilities, with a `Sources` that binds the tools others list at run time."""
	from openmolt_core.capabilities.sources import Sources

	return own if any(isinstance(c, Sources) for c in own) else (*own, Sources(()))


def _register_secrets(om: Host, contexts: Sequence[Any], sources: Sequence[SourceBinding]) -> None:
	"""Put an agent's credential values (and its auths' refreshed tokens) into ``om.secrets``."""
	known = om.secrets
	unique = {id(c): c for c in contexts}  # the tools of one binding share their context
	for source in sources:
		unique[id(source.context)] = source.context
	for context in unique.values():
		if context.redact:
			known.add(*context.redact)
		learned = getattr(context.auth, "secrets", None)  # OAuth2 tokens obtained by a refresh
		if callable(learned):
			known.add_source(learned)


def _elsewhere(om: Host | None) -> Callable[[str], bool] | None:
	"""Whether an integration id is registered or installed for the instance (asked lazily).

	Made only where an agent has rules to check: creating a plain agent makes no such call.
	"""
	return None if om is None else (lambda iid: iid in om.plugins.integration_ids())


def _check_guard_rules(
	instance: Sequence[Guardrail],
	own: Sequence[Guardrail],
	bound: Sequence[BoundTool],
	sources: Sequence[SourceBinding],
	caps: Sequence[Capability] = (),
	om: Host | None = None,
) -> None:
	"""Check the tool rules of the guardrails (``tools=[...]``) against the agent's tools.

	As approval rules are: an agent's own may name only its integrations, scopes and tools; an
	instance's may name other agents' integrations. A rule that selects nothing would leave
	the tools it meant unchecked. With a capability of the agent's own that lists tools at run
	time (`openmolt_core.hooks.Capability.list_tools`, handles its own), the agent's rules
	may name integrations not known yet too, as an instance's do.

	Raises:
		ConfigurationError: A rule names a scope or tool that does not exist.
	"""
	known: _Known | None = None
	listing = _lists_own_tools(caps)
	for guards, strict in ((instance, False), (own, not listing)):
		for guard in guards:
			rules = guard._rules
			if rules:
				known = _known_tools(bound, sources) if known is None else known
				where = f"guardrail {guard.name!r}: tools"
				rules.check(known, where=where, strict=strict, elsewhere=_elsewhere(om))


def _lists_own_tools(caps: Sequence[Capability]) -> bool:
	"""Whether a capability other than the MCP servers' lists tools at run time, handles its own."""
	if not caps:
		return False
	from openmolt_core.capabilities.sources import Sources

	return any(builds(c, "list_tools") and not isinstance(c, Sources) for c in caps)


def _check_patterns(
	patterns: Iterable[str],
	bound: Sequence[BoundTool],
	sources: Sequence[SourceBinding],
	where: str,
	caps: Sequence[Capability] = (),
) -> None:
	"""Refuse handles or patterns that select none of an agent's tools (a typo, a bare name).

	A pattern whose integration part names a source listed at run time (an MCP server's), or
	the built-in tools the capabilities add (``openmolt.readResult``), is taken as it is: those
	tools are not known yet. So is every pattern of an agent with a capability of its own that
	lists tools at run time (`openmolt_core.hooks.Capability.list_tools`): it names their
	handles, unknown until then.

	Raises:
		ConfigurationError: Naming the pattern, and the handle meant when it names a tool alone.
	"""
	import fnmatch

	if _lists_own_tools(caps):
		return
	handles = [t.handle for t in bound]
	for pattern in patterns:
		if any(fnmatch.fnmatchcase(h, pattern) for h in handles):
			continue
		head = pattern.partition(".")[0]
		if fnmatch.fnmatchcase("openmolt", head) or any(
			fnmatch.fnmatchcase(s.id, head) for s in sources
		):
			continue
		from openmolt_core._support.suggest import suggestion

		meant = [h for h in handles if h.partition(".")[2] == pattern]
		hint = (
			f"{pattern!r} is a tool: did you mean {meant[0]!r}? (a handle is integration.tool)"
			if meant
			else suggestion(pattern, handles, noun="tools")
		)
		raise ConfigurationError(f"{where}: {pattern!r} selects none of this agent's tools; {hint}")


def _known_tools(bound: Sequence[BoundTool], sources: Sequence[SourceBinding]) -> _Known:
	"""For each integration an agent uses, its scopes and tool names (None: known at run time)."""
	known: _Known = {}
	for t in bound:
		iid, _, name = t.handle.partition(".")
		scopes = list(t.integration.scopes) if t.integration is not None else []
		entry = known.setdefault(iid, (scopes, []))
		if t.integration is None:  # local tools: the scopes they name
			entry[0].extend(s for s in t.tool.scopes if s not in entry[0])
		if entry[1] is not None:
			entry[1].append(name)
	for source in sources:
		known[source.id] = (list(source.integration.scopes), None)
	return known


def _approval_policy(
	instance: object,
	own: ApprovalPolicy | None,
	bound: Sequence[BoundTool],
	sources: Sequence[SourceBinding],
	om: Host | None = None,
	*,
	builtin_of: tuple[Sequence[Capability], str, str] | None = None,
) -> ApprovalPolicy | None:
	"""The agent's approval policy: the instance's rules, then its own, checked against its tools.

	The agent's tools (`_known_tools` of ``bound`` and ``sources``, and the capabilities'
	built-in tools of ``builtin_of``'s capabilities, for the agent and model it names:
	``openmolt.<handle>``, which the rules hold as any tool) are worked out only when there are
	rules.

	Raises:
		ConfigurationError: A rule is malformed or names a scope or tool that does not exist.
	"""
	if not instance and not own:
		return None
	from openmolt_core.policy import ApprovalPolicy

	defaults = ApprovalPolicy.of(instance, where="OpenMolt: requires_approval")
	mine = own if own is not None else ApprovalPolicy()
	tools = _known_tools(bound, sources)
	if builtin_of is not None and BUILTIN not in tools:
		handles = _builtin_handles(*builtin_of, bound, sources)
		if handles is None or handles:  # None: they follow the tools listed at run time
			tools[BUILTIN] = ([], handles)
	defaults.check(
		tools, where="OpenMolt: requires_approval", strict=False, elsewhere=_elsewhere(om)
	)
	mine.check(tools, where="create_agent: requires_approval", strict=True)
	return (defaults + mine) or None


def _builtin_handles(
	caps: Sequence[Capability],
	agent: str,
	model: str,
	bound: Sequence[BoundTool],
	sources: Sequence[SourceBinding],
) -> list[str] | None:
	"""The names of the built-in tools the capabilities give the agent (``openmolt.<name>``).

	None when the agent has tools listed at run time (an MCP server's): a capability's built-in
	tools may follow them, so a rule naming one is not checked against a list.
	"""
	if sources:
		return None
	allowed = tuple(t for t in bound if t.allowed)
	info = AgentInfo(agent, tuple(t.handle for t in allowed), model, allowed)
	return [
		t.handle
		for cap in caps
		if builds(cap, "builtin_tools")
		for t in built(cap, "builtin_tools", info)
	]


def _check_taint(
	policy: TaintPolicy,
	bound: Sequence[BoundTool],
	sources: Sequence[SourceBinding],
	where: str,
	*,
	strict: bool,
	om: Host | None = None,
) -> bool:
	"""Check a taint policy's rules against the agent's tools; True when it has none.

	The agent's tools (`_known_tools` of ``bound`` and ``sources``) are worked out only when
	there are rules.

	Raises:
		ConfigurationError: A rule names a scope or tool that does not exist.
	"""
	tools: _Known | None = None
	for label in ("untrusted", "private", "outbound"):
		if rules := getattr(policy, label):
			from openmolt_core.policy import ApprovalPolicy

			stripped = tuple(r.lstrip("!") for r in rules)
			tools = _known_tools(bound, sources) if tools is None else tools
			ApprovalPolicy(stripped).check(
				tools, where=f"{where}: {label}", strict=strict, elsewhere=_elsewhere(om)
			)
	return tools is None


# the instance's work ------------------------------------------------------------------------
# What `OpenMolt`'s methods do beyond holding the configuration: its providers, its file store,
# the warm-up of a first run and the task group of ``async with om:``. The facade keeps the
# methods (their signatures and docstrings) and calls these with itself.


class Facade(Host, Protocol):
	"""The instance's state the work done here reads and writes (`openmolt_core.openmolt.OpenMolt`).

	The facade imports this module, so it is named here by what is used of it, its private
	state included.
	"""

	_providers: dict[str, LLMProvider]
	_prepared: set[tuple[Any, ...]]
	_prepare_lock: Any
	_transport: PooledTransport | None
	_task_group: TaskGroup | None
	_scheduler: Scheduler | None
	_http: httpx.AsyncClient | None
	_own_http: bool
	_default_credential_store: bool
	_credential_store: CredentialStore | None
	_accounts_options: dict[str, Any]

	async def aclose(self) -> None:
		"""Stop the tool sources, close the HTTP client, remove temp files."""
		...


def provider_settings(om: Host, name: str) -> tuple[str, dict[str, Any]]:
	"""The plugin behind a provider name and its settings (``provider`` names the plugin).

	``llm_providers={"ollama": {"provider": "openai", "base_url": ...}}`` makes ``ollama`` an
	instance of the ``openai`` plugin; without ``provider`` the name is the plugin's own.

	Args:
		om: The instance.
		name: The provider name.
	"""
	settings = dict(om.llm_providers.get(name, {}))
	plugin = settings.pop("provider", None) or name
	if not isinstance(plugin, str):
		raise ConfigurationError(
			f"llm_providers[{name!r}]['provider'] must be a provider name such as 'openai'"
		)
	return plugin, settings


def make_provider(om: Facade, name: str) -> LLMProvider:
	"""`OpenMolt.provider`'s work: build the provider of a name, keep it, learn its key.

	Args:
		om: The instance.
		name: The provider name (``openai``).

	Raises:
		PluginError: No plugin provides it.
	"""
	plugin, settings = provider_settings(om, name)
	provider = om.plugins.build_provider(
		plugin, settings, functools.partial(model_http, om), name=name, retry=om.retry
	)
	om._providers[name] = provider

	from openmolt_core._envvars import env_var  # not .integrations: no template engine

	om.secrets.add(os.environ.get(env_var(name)), os.environ.get(env_var(plugin)))
	held = getattr(provider, "secrets", None)  # the keys it holds, asked at every use
	if callable(held):
		om.secrets.add_source(held)
	return provider


def instance_secrets(om: Facade) -> set[str]:
	"""`OpenMolt`'s own secrets, read at the first use of its set (and again once they change).

	The keys of its settings (providers, integrations, accounts, the durability URL's
	password) and the environment's. Its credential store's are `stored_secrets`.

	Args:
		om: The instance.
	"""
	from openmolt_core._support.masking import (
		environment_secrets,
		secret_values,
		settings_secrets,
	)

	found = environment_secrets()
	for settings in om.llm_providers.values():
		found |= settings_secrets(settings)
	for config in om.integration_configs.values():
		found |= secret_values(config)
	found |= settings_secrets(om._accounts_options)  # the key signing consent states
	if isinstance(om._durability_config, str | Mapping):  # postgresql://user:PASSWORD@host/db
		found |= settings_secrets({"durability": om._durability_config})
	return found


def stored_secrets(om: Facade) -> set[str]:
	"""Every secret value in the instance's credential store, bound or not; nothing if unreadable.

	Args:
		om: The instance.
	"""
	if om._default_credential_store:  # the default file: looked for before loading a store
		from openmolt_core._support.secretset import default_credentials_path

		if not default_credentials_path().exists():
			# As loading it would: no file now, no store for this instance (a file made later
			# is not read unmasked: its secrets would never join the set).
			om._default_credential_store = False
			om._credential_store = None
			return set()
	store = om.credential_store
	if store is None:
		return set()
	from openmolt_core.credstore import stored_secrets as in_store

	return in_store(store)


def model_http(om: Facade) -> httpx.AsyncClient:
	"""The client a provider sends model requests with; tests may forbid real ones.

	With ``openmolt_core.testing.ALLOW_MODEL_REQUESTS`` off (the pytest plugin's default), an
	instance that would send through its own client (to a real server) refuses; one given an
	``http_client=`` (a mock) sends as usual.

	Args:
		om: The instance.
	"""
	testing = sys.modules.get("openmolt_core.testing")
	if testing is not None and om._own_http and not testing.ALLOW_MODEL_REQUESTS:
		raise testing.ModelRequestsDisallowedError(
			"a real model request in a test: pass OpenMolt(http_client=...) a mock client "
			"(the mock_http fixture), use a ScriptedModel, or mark the test "
			"@pytest.mark.allow_model_requests"
		)
	return om.http()


async def prepare(om: Facade, provider: str | None, http_tools: bool) -> None:
	"""`OpenMolt.prepare`'s work: load what a first run needs in a worker thread, once per key.

	Args:
		om: The instance.
		provider: The provider name the run will use, if any.
		http_tools: Whether the run has HTTP tools.
	"""
	loop = _current_loop()
	key = (provider, http_tools, id(loop))
	if key in om._prepared:
		return
	import anyio

	if om._prepare_lock is None:
		om._prepare_lock = anyio.Lock()
	async with om._prepare_lock:
		if key in om._prepared:
			return
		await anyio.to_thread.run_sync(_prepare_sync, om, provider, http_tools, loop)
		om._prepared.add(key)


def _prepare_sync(om: Facade, provider: str | None, http_tools: bool, loop: Any) -> None:
	if provider is not None:
		om.provider(provider)
	om.http()
	if om._transport is not None:  # a client passed in is the caller's to warm up
		om._transport.prepare(loop)
	if http_tools:
		import openmolt_core.integrations.http  # noqa: F401  # the engine and its template library


def _current_loop() -> Any:
	"""The running asyncio loop, or None under another event loop (trio)."""
	import asyncio

	try:
		return asyncio.get_running_loop()
	except RuntimeError:
		return None


def file_store(om: Facade) -> FileStore:
	"""`OpenMolt.files`'s work: the store, in ``files_dir``, else a durable backend's directory.

	Args:
		om: The instance.
	"""
	from openmolt_core.filestore import FileStore

	where = om._files_dir
	if where is None and om._durability_config is not None:
		backend = om.durability  # a durable run's files outlive the process
		where = backend.files_dir if backend is not None else None

	def file_system_path(path: str) -> LocalFile:
		from openmolt_core.integrations.filesystem import sandbox_of

		return sandbox_of(om.plugins.integration("fileSystem")).file(path)

	return FileStore(where, file_system=file_system_path)


def make_scheduler(om: Facade) -> Scheduler:
	"""`OpenMolt.scheduler`'s work: the scheduler, serving at once inside ``async with om:``.

	Args:
		om: The instance (it has no scheduler yet).
	"""
	from openmolt_core.scheduler import instance_scheduler

	clock, store = om._scheduler_options
	scheduler = instance_scheduler(om, om.durability, clock=clock, store=store)
	group = om._task_group
	if group is not None:  # inside `async with om:`: serve from now on
		scheduler.expect_serving()

		async def serve() -> None:
			if om._task_group is not None:  # not if the block ended before this task started
				await scheduler.serve()

		group.start_soon(serve)
	return scheduler


async def enter(om: Facade) -> None:
	"""`OpenMolt.__aenter__`'s work: open a task group, start durability and the schedules in it.

	Args:
		om: The instance.
	"""
	import anyio

	if om._task_group is not None:
		raise RuntimeError("this OpenMolt instance is already entered")
	tg = anyio.create_task_group()
	await tg.__aenter__()
	om._task_group = tg
	try:
		if om.durability is not None:
			await om.durability.start()  # recover this process's unfinished runs
		if om._scheduler is not None:
			await tg.start(om._scheduler.serve)
	except BaseException as exc:
		om._task_group = None
		await tg.__aexit__(type(exc), exc, exc.__traceback__)
		raise


async def leave(
	om: Facade,
	exc_type: type[BaseException] | None,
	exc: BaseException | None,
	tb: TracebackType | None,
) -> bool | None:
	"""`OpenMolt.__aexit__`'s work: stop the schedules, leave the task group, close the instance.

	Args:
		om: The instance.
		exc_type: The block's exception's type, if any.
		exc: The block's exception, if any.
		tb: Its traceback.
	"""
	tg, om._task_group = om._task_group, None
	try:
		if tg is not None:
			if om._scheduler is not None:
				om._scheduler.stop(cancel_running=True)
			try:
				return await tg.__aexit__(exc_type, exc, tb)
			except BaseExceptionGroup as group:
				single = _single(group)
				if single is None:
					raise
				raise single from single.__cause__
		return None
	finally:
		await om.aclose()


async def close(om: Facade) -> None:
	"""`OpenMolt.aclose`'s work: stop the tool sources, close what the instance made.

	The durability backend, the file store (its temporary folder), the run store's connection and
	the HTTP client when the instance made it. Warns when schedules were added but never served.

	Args:
		om: The instance.
	"""
	if om._scheduler is not None:
		from openmolt_core.scheduler import warn_unserved

		warn_unserved(om._scheduler)
	if om._tool_sources:
		from openmolt_core.capabilities.sources import close_sources

		await close_sources(om._tool_sources.values())
	if om._files is not None:
		om._files.close()
	if om.run_store is not None:
		import anyio

		# Its one connection: closing checkpoints the file (a write to disk), off the loop.
		with anyio.CancelScope(shield=True):
			await anyio.to_thread.run_sync(om.run_store.close)
	if om._durability is not None:
		await om._durability.aclose()
	if om._own_http and om._http is not None:
		import anyio

		# Forget the client first and close it shielded: a cancelled close (an `async with
		# om:` ended by cancellation) must not leave a closed client behind for later use.
		client, om._http = om._http, None
		om._prepared.clear()
		with anyio.CancelScope(shield=True):
			await client.aclose()


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
	"""The one exception inside (nested) groups, or None when there are several."""
	inner: BaseException = group
	while isinstance(inner, BaseExceptionGroup):
		if len(inner.exceptions) != 1:
			return None
		inner = inner.exceptions[0]
	return inner
