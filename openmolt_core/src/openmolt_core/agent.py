"""The agent and its loop: ask the model, run its commands, feed the results back, until finish.

One step is one model call and the commands of its reply; the history is append-only (the first
turn never changes). The loop's own budgets are ``max_steps`` and ``timeout``
(docs/guides/budgets.md; other limits are capabilities'). Whatever happens, the state stays a
valid conversation, left on ``agent.last_state`` (and on a `RunError`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio

from openmolt_core import _cost
from openmolt_core._binding import BoundTool
from openmolt_core._chain import (
	AgentModels,
	ModelSlot,
	add_by_model,
	blocked,
	no_room,
	slot_id,
	spend_failed,
	split_id,
)
from openmolt_core._chain import record as record_model
from openmolt_core._chain import total as total_usage
from openmolt_core._emitter import EventEmitter, Handler
from openmolt_core._execute import (
	HumanInputHandler,
	HumanInputUnavailable,
	Limits,
	MemoryConfig,
	ModelCall,
	RunContext,
	RunEnd,
	StepRecord,
	answer_entry,
	calling,
	check,
	in_call,
	run_step,
	summary,
)
from openmolt_core._parse import ParsedReply, parse_reply
from openmolt_core._support.jsonsafe import digest, encodable, encodable_text
from openmolt_core._support.jsonschema import JsonSchemaValidator
from openmolt_core._support.secretset import Redactor, redactor_for
from openmolt_core._support.sync import until
from openmolt_core._toolset import ToolSet
from openmolt_core.durability import (
	LOCAL_PORT,
	RunDriver,
	RunHandle,
	RunPort,
	journaled,
	step_key,
)
from openmolt_core.envelope import Envelope, FittedSchema
from openmolt_core.errors import (
	ApprovalError,
	ConfigurationError,
	OpenMoltError,
	PluginError,
	ProviderError,
	RunError,
	ToolError,
)
from openmolt_core.hooks import (
	NO_HOOKS,
	PARKED_BY_CAPABILITY,
	AgentInfo,
	Alongside,
	Call,
	CallWrap,
	Capability,
	Hooks,
	ModelSend,
	Opening,
	Run,
	Stop,
	alongside,
	builds,
	built,
	drive_wrapped,
	first_answer,
	tell,
	tell_async,
	until_stop,
)
from openmolt_core.llm import (
	Attachment,
	CompactionConfig,
	LLMProvider,
	Message,
	ModelConfig,
	ModelRequest,
	ModelResponse,
	options_for,
)
from openmolt_core.prompt import dumps, maestro_prompt
from openmolt_core.result import PARKED_STATUSES, RunResult, RunState
from openmolt_core.tools import MAX_NESTING

if TYPE_CHECKING:
	from pathlib import Path

	from pydantic import BaseModel

	from openmolt_core._support.schemafit import SchemaDialect
	from openmolt_core._support.secretset import SecretSet
	from openmolt_core.commands import Command
	from openmolt_core.conversation import Session
	from openmolt_core.decisions import ApprovalDecision, ApprovalHandler, ApprovalRequest
	from openmolt_core.files import FileAccess, InstanceFiles
	from openmolt_core.options import AgentMemory
	from openmolt_core.runstream import RunStream
	from openmolt_core.tools import CallingRun, InDoubt, NestedRunTool

__all__ = [
	"STEPS_LEFT_WARNING",
	"Agent",
	"HumanInputHandler",
	"HumanInputUnavailable",
	"Instance",
	"Limits",
	"MemoryConfig",
	"ScheduleLike",
	"Scheduled",
	"Schedules",
	"SkillInfo",
	"hand_up",
]

log: logging.Logger = logging.getLogger("openmolt")
log.addHandler(logging.NullHandler())  # a library logs; the application decides where to

STEPS_LEFT_WARNING = 3
"""Results carry ``stepsLeft`` once this few steps remain."""

_NOTHING: Any = object()  # resume(given=...) left out
_FIRST_TURN_KEYS = ("about", "tools", "maxSteps", "earlier", "memory", "plan", "input")
"""The first turn's own keys (`Agent.first_message`): no capability's ``first_turn`` may add one."""
_NO_DIALECT = "the provider has no structured output for this model"
_NO_FITTER = "no capability fits the reply schema to the provider's dialect (fit_reply)"
_LARGE_REPLY = 50_000  # characters: parse in a worker thread, so the event loop never stalls
_LAST_STEP = (
	"This is your last step ({why}): finish now with the best output you have, using status "
	"'failure' if the task is not done."
)


class Instance(Protocol):
	"""What an agent needs of the instance that owns it (in practice, the ``OpenMolt`` that made it)."""

	@property
	def secrets(self) -> SecretSet:
		"""The instance's secrets, which every redactor of the agent reads."""
		...

	@property
	def verbose(self) -> bool:
		"""Whether runs print their steps (``OpenMolt(verbose=...)``), unless the agent says."""
		...

	@property
	def files(self) -> InstanceFiles:
		"""The file store of agents created without one of their own."""
		...

	@property
	def durability(self) -> RunDriver | None:
		"""The durability backend, or None when runs are not durable."""
		...

	@property
	def scheduler(self) -> Schedules:
		"""What keeps the instance's schedules (``agent.schedule``)."""
		...

	def durable_capabilities(self) -> tuple[Capability, ...]:
		"""What a run whose port records calls' starts attaches (`capabilities.indoubt`)."""
		...

	def agent_tool(
		self,
		agent: Agent,
		*,
		name: str | None = None,
		description: str | None = None,
		input_schema: dict[str, Any] | None = None,
	) -> NestedRunTool:
		"""An agent as a tool for another agent (``agent.as_tool``, whose arguments these are)."""
		...

	async def prepare(self, *, provider: str | None = None, http_tools: bool = False) -> None:
		"""Load what a first run needs (a ``provider`` by prefix, the HTTP stack), off the event loop."""
		...


class ScheduleLike(Protocol):
	"""A schedule object (`openmolt_core.schedule.IntervalSchedule`, ``DailySchedule``...)."""

	@property
	def type(self) -> str:
		"""The kind of schedule: ``interval``, ``daily`` or ``cron``."""
		...


class Scheduled(Protocol):
	"""One schedule of an agent, as its instance's scheduler keeps it."""

	@property
	def id(self) -> str:
		"""Its id."""
		...


class SkillInfo(Protocol):
	"""One of an agent's skills, as the agent lists them (`openmolt_core.skills.Skill`)."""

	@property
	def name(self) -> str:
		"""The skill's name."""
		...

	@property
	def description(self) -> str:
		"""What it is for and when to use it."""
		...

	@property
	def instructions(self) -> str:
		"""The body of its ``SKILL.md``."""
		...

	@property
	def root(self) -> Path | None:
		"""Its folder (None for a skill made in code)."""
		...

	@property
	def allowed_tools(self) -> tuple[str, ...]:
		"""The tools it expects."""
		...

	def files(self) -> list[str]:
		"""Its other files, as paths relative to its folder."""
		...


class Schedules(Protocol):
	"""What keeps an instance's schedules (`openmolt_core.scheduler.Scheduler`)."""

	def add(self, agent: Agent, spec: Any) -> Scheduled:
		"""Add a schedule (a dict or a `ScheduleLike`, which the scheduler validates) for ``agent``."""
		...

	def cancel(
		self, schedule_id: str, *, cancel_running: bool = False, agent: Agent | None = None
	) -> None:
		"""Remove a schedule (``agent``: only if it is that agent's; ``cancel_running``: its run too)."""
		...


class Agent:
	"""An agent: instructions, a model, tools and an output schema. Create with ``om.create_agent``.

	Args:
		om: The OpenMolt instance that owns the agent.
		name: The agent's name (shown to the model and in events).
		provider: Returns the model provider (called once, on first use).
		model: The model name for the provider.
		provider_name: The provider's prefix in the model id (``openai``); empty for a provider
			object passed as ``model``.
		model_config: The model configuration.
		instructions: What the agent must do.
		tools: The bound tools (visible or not, by scope).
		output_schema: A pydantic model class, a JSON Schema dict, or None.
		memory: Memory data and update callbacks.
		on_human_input_request: Answers ``requestHumanInput``; None disables it.
		config: The instance settings this agent overrides, as given to ``create_agent(config=...)``.
		max_steps: The most model calls a run makes.
		max_tokens: Tokens (input + output, summed) after which no model call starts.
		timeout: Seconds the whole run may take.
		limits: Caps on replies, results, memory and answers.
		max_cost: USD the run may spend on model calls (sub-agents' included).
		on_approval_request: Decides the calls that wait for approval (the approvals capability
			marks them); None parks the run (``approval_required``).
		models: The agent's other models, after the first (`openmolt_core.hooks.ModelAccess`).
		files: The agent's view of the file store (large results are kept there).
		capabilities: Behaviour attached to the agent's runs, in the order the hooks run
			(`openmolt_core.hooks`); or their `Hooks`, already resolved.
	"""

	__slots__ = (
		"__weakref__",  # a capability keeps what it knows of the agent beside it (its memory)
		"_events",
		"_files",
		"_hooks",
		"_memory",
		"_model_config",
		"_models",
		"_models_check",
		"_output_json",
		"_output_model",
		"_output_validator",
		"_prefix",
		"_prefix_fit",
		"_prompts",
		"_redactor_cache",
		"_tools",
		"_toolset",
		"config",
		"instructions",
		"last_state",
		"limits",
		"max_cost",
		"max_steps",
		"max_tokens",
		"model",
		"name",
		"om",
		"on_approval_request",
		"on_human_input_request",
		"provider_name",
		"timeout",
	)

	def __init__(
		self,
		om: Instance,
		*,
		name: str,
		provider: Callable[[], LLMProvider],
		model: str,
		provider_name: str = "",
		model_config: ModelConfig,
		instructions: str,
		tools: Sequence[BoundTool],
		output_schema: type[BaseModel] | dict[str, Any] | None,
		memory: AgentMemory | MemoryConfig | None,
		on_human_input_request: HumanInputHandler | None,
		config: Mapping[str, Any] | None,
		max_steps: int,
		max_tokens: int | None,
		timeout: float | None,
		limits: Limits | None = None,
		max_cost: float | None = None,
		on_approval_request: ApprovalHandler | None = None,
		models: Sequence[ModelSlot] = (),
		files: FileAccess | None = None,
		capabilities: Sequence[Capability] | Hooks = (),
	) -> None:
		self.om: Instance = om
		self.name: str = name
		self.model: str = model
		self.provider_name: str = provider_name
		self._model_config: ModelConfig = model_config
		self.instructions: str = instructions
		self.config: dict[str, Any] = dict(config) if config else {}
		self.max_steps: int = max_steps
		self.max_tokens: int | None = max_tokens
		self.timeout: float | None = timeout
		self.max_cost: float | None = max_cost
		self.limits: Limits = limits or _LIMITS
		self.on_human_input_request: HumanInputHandler | None = on_human_input_request
		self.on_approval_request: ApprovalHandler | None = on_approval_request
		self.last_state: RunState | None = None
		primary = slot_id(provider_name, model, None if provider_name else provider())
		self._models = AgentModels([ModelSlot(primary, provider_name, model, provider), *models])
		self._tools = {t.handle: t for t in tools}
		self._output_model = output_schema if isinstance(output_schema, type) else None
		self._output_json = output_schema if isinstance(output_schema, dict) else None
		self._memory = memory
		if isinstance(capabilities, Hooks):  # resolved by the instance (shared by its agents)
			self._hooks: Hooks = capabilities
		else:
			self._hooks = Hooks(capabilities) if capabilities else NO_HOOKS
		self._mark(self._tools.values())
		self._events = EventEmitter()
		extra = self._hooks.event_names()
		if extra:
			self._events.extra = extra
		self._prompts: dict[bool, str] = {}
		self._prefix: str | None = None
		self._output_validator: JsonSchemaValidator | None = None
		self._redactor_cache: Redactor | None = None
		self._prefix_fit: FittedSchema | None = None  # the fit the prefix was built for
		self._files = files
		self._toolset: ToolSet | None = None
		# The assembly's check of the agent's options against its models, after a setter changed
		# them (None: an agent built by hand checks nothing).
		self._models_check: Callable[[Agent, str], None] | None = None
		if self._hooks.list_tools and not self._hooks.refresh_tools:
			raise ConfigurationError(
				f"Agent {name!r}: capability {type(self._hooks.list_tools[0].__self__).name!r} "  # type: ignore[attr-defined]
				"lists tools at run time, and no capability binds them; add "
				"openmolt_core.capabilities.sources.Sources(()) to its capabilities (create_agent "
				"adds it)"
			)
		if output_schema is not None and not self._hooks.fit_reply:
			raise ConfigurationError(
				f"Agent {name!r}: an output schema is given, and no capability fits it to the "
				"provider's structured output; add openmolt_core.capabilities.StructuredOutput() "
				"to its capabilities (create_agent adds it)"
			)
		if not self._hooks.wrap_tool and self.sub_agents:
			raise ConfigurationError(
				f"Agent {name!r}: a tool runs agent {self.sub_agents[0].name!r}, and no capability "
				"counts what its runs spend in this agent's runs; add "
				"openmolt_core.capabilities.spend.NestedSpend() to its capabilities (create_agent "
				"adds it)"
			)
		if memory and not (self._hooks.first_memory and self._hooks.memory_written):
			raise ConfigurationError(
				f"Agent {name!r}: memory is given, and no capability starts runs from it or keeps "
				"what they write; add openmolt_core.capabilities.Memory() to its capabilities "
				"(create_agent adds it)"
			)

	def _mark(self, tools: Iterable[BoundTool]) -> None:
		# What the capabilities say of the whole tool set (`Capability.describe_tools`).
		if self._hooks.describe_tools:
			records = list(tools)
			allowed = tuple(t.handle for t in records if t.allowed)
			tell(
				self._hooks.describe_tools,
				AgentInfo(self.name, allowed, self._models.slots[0].id),
				records,
			)

	@property
	def _redactor(self) -> Redactor:
		# Built on first use: creating an agent stays cheap, and its secrets are known by then.
		if self._redactor_cache is None:
			self._redactor_cache = redactor_for(
				(t.context for t in self._tools.values()), self.om.secrets
			)
		return self._redactor_cache

	@property
	def redact(self) -> Redactor:
		"""What masks every secret the agent knows now, as its runs' ``ctx.redact`` does.

		Its tools' credentials, the instance's secrets and the tokens its integrations learn later.
		"""
		return self._redactor

	# events -------------------------------------------------------------------------------

	def on(self, event: str, handler: Handler) -> None:
		"""Call ``handler(event)`` whenever the agent emits ``event`` (see `openmolt_core.events`).

		Args:
			event: The event name (``tool:call``, ``finish``...).
			handler: A sync or async callable taking the event object.

		Raises:
			ValueError: The event name is unknown.
		"""
		self._events.on(event, handler)

	@property
	def model_config(self) -> ModelConfig:
		"""The configuration of the agent's model calls (`openmolt_core.llm.ModelConfig`).

		Set it to a `ModelConfig` or a dict of its settings, read and checked as
		``create_agent(model_config=...)`` is; a setting refused leaves the agent as it was.

		Raises:
			ConfigurationError: The configuration is not one, or does not hold for the agent's
				models.
		"""
		return self._model_config

	@model_config.setter
	def model_config(self, value: ModelConfig | Mapping[str, Any]) -> None:
		from openmolt_core.options import read_model_config

		before = self._model_config
		self._model_config = read_model_config(value, "agent.model_config")
		self._rechecked("agent.model_config", _model_config=before)

	@property
	def compaction(self) -> CompactionConfig | None:
		"""How older steps are summarised in long runs (None: never; `openmolt_core.compaction`)."""
		config: CompactionConfig | None = getattr(self._compaction(), "config", None)
		return config

	@compaction.setter
	def compaction(self, value: CompactionConfig | None) -> None:
		found: Any = self._compaction(needed=value is not None)  # capabilities.Compaction
		# Replaced, not changed: agents with the same settings share one capability.
		self._swap(found, None if value is None else found.configured(self, value), "compaction")

	@property
	def compactor(self) -> Callable[[], tuple[LLMProvider, str]] | None:
		"""Returns the provider and model that write summaries (None: this agent's own models)."""
		compactor: Callable[[], tuple[LLMProvider, str]] | None = getattr(
			self._compaction(), "compactor", None
		)
		return compactor

	@compactor.setter
	def compactor(self, value: Callable[[], tuple[LLMProvider, str]] | None) -> None:
		found: Any = self._compaction(needed=True)  # capabilities.Compaction
		self._swap(found, found.changed(compactor=value), "compactor")

	def _compaction(self, *, needed: bool = False) -> Capability | None:
		found = self._hooks.by_name.get("compaction")
		if needed and found is None:
			raise ConfigurationError(
				f"agent {self.name!r} does not compact (it was created with compaction=False); "
				"create it with compaction=... to compact its runs"
			)
		return found

	def _swap(self, old: Capability | None, new: Capability | None, setting: str) -> None:
		"""Swap a capability that changes which models the agent calls (None: removed), rechecked."""
		hooks, toolset = self._hooks, self._toolset
		caps = [new if c is old else c for c in hooks.capabilities]
		if old is None and new is not None:
			caps.append(new)
		kept = [c for c in caps if c is not None]
		self._hooks = Hooks(kept) if kept else NO_HOOKS
		self._toolset = None  # it asks the capabilities which tools a step sees
		self._rechecked(f"agent.{setting}", _hooks=hooks, _toolset=toolset)

	def _rechecked(self, where: str, **before: Any) -> None:
		"""Check the agent's options against its models again; refused, the attributes go back.

		Raises:
			ConfigurationError: The options do not hold for the agent's new models.
		"""
		check = self._models_check
		if check is None:  # an agent built by hand checks nothing
			return
		try:
			check(self, where)
		except BaseException:
			for name, value in before.items():
				setattr(self, name, value)
			raise

	@property
	def capabilities(self) -> tuple[Capability, ...]:
		"""The agent's capabilities, in the order their hooks run (`openmolt_core.hooks`)."""
		return self._hooks.capabilities

	@property
	def skills(self) -> tuple[SkillInfo, ...]:
		"""The agent's skills (``create_agent(skills=...)``), in the order the first turn lists them."""
		found = self._hooks.by_name.get("skills")
		return tuple(getattr(found, "skills", ()))

	def off(self, event: str, handler: Handler | None = None) -> None:
		"""Remove a handler added with `on` (every handler of the event when None)."""
		self._events.off(event, handler)

	# static prompt parts ------------------------------------------------------------------

	@property
	def tools(self) -> list[str]:
		"""Handles of the tools this agent can see (its scopes allow them)."""
		return [h for h, t in self._tools.items() if t.allowed]

	@property
	def output_schema(self) -> dict[str, Any] | None:
		"""The JSON Schema the finish output must match."""
		if self._output_model is not None:
			return self._output_model.model_json_schema()
		return self._output_json

	@property
	def labels(self) -> dict[str, frozenset[str]]:
		"""The labels of the tools this agent can see, by handle (see `openmolt_core.taint`)."""
		return {h: t.labels for h, t in self._tools.items() if t.allowed}

	@property
	def builtin_labels(self) -> dict[str, frozenset[str]]:
		"""The labels of its capabilities' built-in tools (``openmolt.<handle>``), by handle.

		A caller of this agent counts what they do too (`openmolt_core.taint.nested_labels`).
		"""
		return {h: t.labels for h, t in self._builtins().items()}

	@property
	def in_doubt(self) -> dict[str, InDoubt]:
		"""The in-doubt policy of the tools this agent can see, by handle (`capabilities.indoubt`)."""
		return {h: t.in_doubt for h, t in self._tools.items() if t.allowed}

	@property
	def approval_rules(self) -> dict[str, str | None]:
		"""The approval rule of the tools this agent can see, by handle (None: run unasked).

		The rule of its policy (``requires_approval``), or for its capabilities' built-in tools
		the first `openmolt_core.hooks.Capability.builtin_approval`.
		"""
		rules = {h: t.approval for h, t in self._tools.items() if t.allowed}
		for handle, bound in self._builtins().items():
			held = (cap.builtin_approval(handle, bound.tool) for cap in self._hooks.capabilities)
			rules[handle] = bound.approval or next((r for r in held if r is not None), None)
		return rules

	def _builtins(self) -> dict[str, BoundTool]:
		"""The allowed built-in tools of its capabilities (an agent with none builds no tool set)."""
		if not any(builds(cap, "builtin_tools") for cap in self._hooks.capabilities):
			return {}
		tools = self._tool_set().tools.items()
		return {h: t for h, t in tools if t.allowed and h not in self._tools}

	@property
	def lists_tools_at_run_time(self) -> bool:
		"""Whether some of its tools are listed at each run (an MCP server's)."""
		return bool(self._hooks.list_tools)

	@property
	def sub_agents(self) -> list[Agent]:
		"""The agents this agent can call as tools (the ``agent`` of its `NestedRunTool` tools)."""
		tools = self._tools.values()
		return [a for t in tools if isinstance(a := getattr(t.tool, "agent", None), Agent)]

	def as_tool(
		self,
		*,
		name: str | None = None,
		description: str | None = None,
		input_schema: dict[str, Any] | None = None,
	) -> NestedRunTool:
		"""This agent as a tool for another agent (``create_agent(tools=[agent.as_tool()])``).

		Args:
			name: The tool's handle (default: the agent's name as an identifier).
			description: What it does, for the calling model (default: from the instructions).
			input_schema: The tool's input (default: ``{"task": str}``, given as the input).

		Returns:
			The tool (an `openmolt_core.subagents.AgentTool`, made by the instance).
		"""
		return self.om.agent_tool(
			self, name=name, description=description, input_schema=input_schema
		)

	@property
	def human_input_enabled(self) -> bool:
		"""Whether the agent may ask a person (a handler is set)."""
		return bool(self.on_human_input_request)

	@property
	def envelope(self) -> Envelope:
		"""The agent's reply schema at the start of a run, in parts (`openmolt_core.envelope`)."""
		return self._tool_set().envelope()[1]

	@property
	def models(self) -> list[str]:
		"""The agent's models (``provider:model``), the one each step asks first at the head."""
		return [slot.id for slot in self._models.slots]

	def structured_output(self) -> FittedSchema:
		"""The reply schema fitted to the provider's dialect, and the mode that took effect.

		A provider that declares no dialect gets the canonical schema as a guide, mode ``off``.
		"""
		primary = self._models.primary
		primary.begin(self.model_config)  # asked again: a setting or the server may change it
		return primary.fitted(*self._tool_set().envelope(), self._fit)

	def _fit(self, envelope: Envelope, dialect: SchemaDialect | None) -> FittedSchema:
		"""The reply schema a model's requests send (`Capability.fit_reply`'s, else ``off``)."""
		fitted = (
			first_answer(self._hooks.fit_reply, envelope, dialect)
			if dialect is not None and self._hooks.fit_reply
			else None
		)
		if fitted is not None:
			return fitted
		why = _NO_DIALECT if dialect is None else _NO_FITTER
		return FittedSchema(envelope.schema(), "off", notes=(why,))

	def system_prompt(self) -> str:
		"""The maestro (system) prompt of the first model, built once."""
		return self._prompt_for(self._models.primary)

	def _prompt_for(self, slot: ModelSlot, *, plain: bool = False) -> str:
		# Each model gets the prompt for its dialect: enforced structured output needs no examples.
		enforced = not plain and slot.fitted(*self._tool_set().envelope(), self._fit).mode != "off"
		prompt = self._prompts.get(enforced)
		if prompt is None:
			prompt = self._prompts[enforced] = self._redactor(
				maestro_prompt(
					name=self.name,
					output_schema=self.output_schema,
					human_input=self.human_input_enabled,
					enforced=enforced,
					approvals=self.envelope.approvals,
				)
			)
		return prompt

	def _tool_set(self) -> ToolSet:
		if self._toolset is None:
			self._toolset = ToolSet(
				self._tools,
				agent=self.name,
				hooks=self._hooks,
				model=self.models[0],
				files=self._store,
				output_schema=self.output_schema,
				human_input=self.human_input_enabled,
			)
		return self._toolset

	@property
	def _store(self) -> FileAccess:
		"""The agent's view of the file store: its own, else its instance's."""
		return self._files if self._files is not None else self.om.files

	def _static_prefix(self) -> str:
		# The part of the first message that is the same for every run of this agent (for the
		# first model's fit: a constraining schema already holds the strictly fitted inputs).
		fitted = self.structured_output()
		if self._prefix is None or self._prefix_fit is not fitted:
			head = dumps({"agent": self.name, "instructions": self.instructions})
			lean = fitted.mode != "off"
			listing = self._tool_set().listing(
				schemas_for=(lambda h: h in fitted.encoded) if lean else None
			)
			prefix = f'{{"about":{head},{listing}'
			if self._hooks:
				prefix += self._capability_fields()
			# Instructions, tool descriptions and schemas are the application's: a secret pasted
			# into one (or a listed tool's that echoes its token) must not reach the model.
			self._prefix = self._redactor(prefix)
			self._prefix_fit = fitted
		return self._prefix

	def _capability_fields(self) -> str:
		# What the capabilities add to the first turn, after the agent's own fields (those about
		# the tools first: Capability.first_turn_lead).
		records = tuple(t for t in self._tools.values() if t.allowed)
		info = AgentInfo(self.name, tuple(t.handle for t in records), self.models[0], records)
		fields: dict[str, Any] = {}
		owner: dict[str, str] = dict.fromkeys(_FIRST_TURN_KEYS, "the agent")
		for cap in sorted(self._hooks.capabilities, key=lambda c: not type(c).first_turn_lead):
			if builds(cap, "first_turn"):
				added = built(cap, "first_turn", info)
				for key in added:
					if key in owner:  # a JSON object with a key twice: one of them is lost
						raise ConfigurationError(
							f"capabilities: {type(cap).name}.first_turn adds {key!r} to the first "
							f"turn, which {owner[key]} writes already; put it under a key of "
							"its own (e.g. the capability's name)"
						)
					owner[key] = f"capability {type(cap).name!r}"
				fields.update(added)
		return f",{dumps(fields)[1:-1]}" if fields else ""

	def first_message(
		self, input: Any, state: RunState, earlier: list[dict[str, Any]] | None = None
	) -> str:
		"""The first user turn: instructions and tools (static), then earlier turns, memory, plan, input.

		Every secret the agent knows is masked in it. Memory and plan appear only when they hold
		something; the earlier turns a capability opens a run with (`openmolt_core.hooks.Opening`)
		come right after the static part, so the prefix stays the same from one turn to the next.
		"""
		rest: dict[str, Any] = {}
		if earlier:
			rest["earlier"] = earlier
		if any(state.memory.values()):
			rest["memory"] = state.memory
		if state.plan:
			rest["plan"] = state.plan
		rest["input"] = input
		if state.ext:
			from openmolt_core.files import INPUT_FILES

			if state.ext.get(INPUT_FILES):
				rest["files"] = state.ext[INPUT_FILES]
		budget = f',"maxSteps":{self.max_steps}' if self.max_steps else ""
		return f"{self._static_prefix()}{budget},{self._redactor(dumps(rest)[1:])}"

	def fingerprint(self) -> str:
		"""A hash of what a journaled run of this agent depends on.

		The name, models, instructions, tool schemas, output schema, whether it may ask a person
		and what its capabilities add: a durable run is recovered only by a process that built the
		same agent.
		"""
		tools = [
			[h, t.tool.input_schema, t.tool.output_schema, t.allowed]
			for h, t in self._tools.items()
		]
		body: dict[str, Any] = {
			"name": self.name,
			"model": f"{self.provider_name}:{self.model}",
			"instructions": self.instructions,
			"tools": tools,
			"output": self.output_schema,
			"human_input": self.human_input_enabled,
		}
		# Capabilities change the steps a run asks for; an agent without them keeps the
		# fingerprint it had before they existed.
		named = [n for n, c in self._hooks.by_name.items() if type(c).in_fingerprint]
		if named:
			body["capabilities"] = named
		for cap in self._hooks.capabilities:
			if builds(cap, "fingerprint"):
				entries = built(cap, "fingerprint")
				if own := sorted(body.keys() & entries.keys()):
					raise ConfigurationError(
						f"capability {cap.name!r}: its fingerprint entries {own} are the agent's "
						"own; name them after the capability"
					)
				body.update(entries)
		return digest(body)

	def provider(self) -> LLMProvider:
		"""The (first) model's provider, created on first use."""
		return self._models.primary.provider()

	# the run ------------------------------------------------------------------------------

	async def run(
		self,
		input: Any = None,
		*,
		history: RunState | Mapping[str, Any] | None = None,
		attachments: Sequence[Attachment] = (),
		parent: CallingRun | None = None,
		session: Session | None = None,
		user: str | None = None,
	) -> RunResult:
		"""Run the agent until it finishes or a budget runs out.

		Args:
			input: The task input: a string, or any JSON-serializable value. With a ``history``
				that waits for a person's answer (``human_input_required``), ``input`` is that
				answer (see `resume`).
			history: A saved `RunState` (or its dict) to go on from instead of starting afresh; an
				empty `RunState()` starts a new run with that state (its ``run_id``).
			attachments: Images or PDFs for the model, sent with the first turn.
			parent: The run that calls this agent as a tool (a tool's ``context.run``): the
				run nests in it (`openmolt_core.subagents`). Agent tools pass it.
			session: The conversation this run continues (`openmolt_core.sessions`); a
				``history`` given with it must be a fresh state.
			user: The end user the run acts for (`openmolt_core.accounts`), kept in the state.
				None: the operator, or the calling run's user (``parent``; another is refused).

		Returns:
			The result: validated output, status, plan, usage and the full state.

		Raises:
			RunError: The provider failed for good, or the run broke unexpectedly;
				``error.result.state`` resumes the run.
			ConfigurationError: A saved run was given a new input it cannot use, ``user`` is not
				the user of the saved run or of the calling run, or a key or setting is missing
				(nothing was sent to the model).
			IntegrationError: A tool source (an MCP server) could not list its tools.
			ToolError: ``parent`` nests deeper than `openmolt_core.tools.MAX_NESTING` (the
				calling tool's call fails with that message).
		"""
		if parent is not None and parent.depth > MAX_NESTING:
			raise ToolError(
				f"agent {self.name!r}: runs nest more than {MAX_NESTING} deep (a tool that runs "
				"its own agent again?); do the task here, or give it to an agent that does not "
				"delegate further"
			)
		if parent is not None:  # numbered as it starts: its id is the same when the call runs again
			history = _nested(history, parent)
		if user is not None or parent is not None:  # the run's end user (openmolt_core.accounts)
			history = _for_user(history, user, parent)
		joined = None if session is None else self._joined("run", "session", session)
		return await self._run(input, history, attachments, parent, joined)

	def stream(
		self,
		input: Any = None,
		*,
		history: RunState | Mapping[str, Any] | None = None,
		attachments: Sequence[Attachment] = (),
		session: Session | None = None,
		user: str | None = None,
	) -> RunStream:
		"""Run the agent and receive its events as they happen, the model's text included.

		``async with agent.stream(input) as run:`` starts the run; ``async for event in run``
		yields its events; ``await run.result()`` gives what `run` returns
		(`openmolt_core.runstream`).

		Args:
			input: As for `run`.
			history: As for `run`.
			attachments: As for `run`.
			session: As for `run`.
			user: As for `run`.

		Returns:
			The streamed run, to enter with ``async with``.

		Raises:
			ConfigurationError: ``history`` is no saved run.
		"""
		from openmolt_core.runstream import RunStream

		if history is not None:  # read as `run` reads it (what is no saved state is refused)
			history = _load(history, "stream(history=...)")
		return RunStream(
			self, input, history=history, attachments=attachments, session=session, user=user
		)

	async def _run(
		self,
		input: Any,
		history: RunState | Mapping[str, Any] | None,
		attachments: Sequence[Attachment],
		parent: CallingRun | None,
		joined: tuple[CallWrap, Any] | None = None,
	) -> RunResult:
		await self._refresh_tools()
		state = RunState() if history is None else _load(history)
		if attachments and not state.messages:
			attachments = await self._keep_attachments(attachments, state)
		if joined is not None:  # a capability takes the call (`Capability.wrap_call`)
			wrap, given = joined
			drive = functools.partial(self._begin, state, input, attachments, parent)
			return await wrap(Call(self, state, given, input), drive)
		return await self._begin(state, input, attachments, parent)

	def _begin(
		self,
		state: RunState,
		input: Any,
		attachments: Sequence[Attachment],
		parent: CallingRun | None,
		opening: Opening | None = None,
	) -> Awaitable[RunResult]:
		if not state.messages:
			self._start(state, input, attachments, parent, opening)
			return self._drive(state, answer=None, link=parent)
		if state.pending is None and input is not None:
			raise ConfigurationError(
				"run(input, history=...): this saved run already has its input and waits for no "
				"answer; call run(history=state) to go on"
			)
		answer = None if input is None else str(input)
		if state.pending is not None and parent is None and self.om.durability is None:
			return self._go_on(state, answer)  # a parked state: one go-on at a time, as resume
		return self._drive(state, answer=answer, link=parent)

	async def _go_on(self, state: RunState, answer: str | None) -> RunResult:
		# A parked state gone on from by run(history=...) is held as `resume` holds it: two at
		# once in this process would run its calls twice (the run store holds it across them).
		from openmolt_core._park import resuming_once

		with resuming_once(state, "run(history=...)"):
			return await self._drive(state, answer=answer)

	def _start(
		self,
		state: RunState,
		input: Any,
		attachments: Sequence[Attachment],
		parent: CallingRun | None,
		opening: Opening | None = None,
	) -> None:
		# A new run: memory from the capabilities (`first_memory`) unless the state brings its own.
		if self._hooks.first_memory and not any(state.memory.values()):
			state.memory = self._hooks.memory_start(self, self._memory, state) or state.memory
		if opening is not None:
			state.memory.update(opening.memory)
		if parent is None and self._hooks.new_root_run:  # a sub-run: in its caller's context
			tell(self._hooks.new_root_run, self.name, state)  # the observers mark the run's trigger
		if self._hooks.keep_tools:  # the whole listing, recorded (what its first turn lists)
			tell(self._hooks.keep_tools, _Binder(self), state, True)
		if self._hooks.new_run:  # what they note is saved (or journaled) with the first state
			tell(self._hooks.new_run, self.name, state)
		earlier = [dict(e) for e in opening.earlier] if opening and opening.earlier else None
		first = self.first_message(input, state, earlier)
		if attachments:
			_attachments(attachments)
		state.messages.append(Message("user", first, list(attachments)))

	async def _keep_attachments(
		self, attachments: Sequence[Attachment], state: RunState
	) -> list[Attachment]:
		"""A new run's files, kept in the file store (`openmolt_core.files.InstanceFiles`)."""
		_attachments(attachments)
		from openmolt_core.files import INPUT_FILES

		origin = {"run": state.run_id, "call": "input", "user": state.user}
		shown, records = await self.om.files.keep_attachments(
			attachments, files=self._store, secrets=self._redactor.secrets, origin=origin
		)
		state.ext[INPUT_FILES] = records
		return shown

	def _joined(self, method: str, keyword: str, given: Any) -> tuple[CallWrap, Any]:
		# A keyword a capability takes (`Capability.takes`): its wrap_call, and the value.
		wrap = self._hooks.by_keyword.get(keyword)
		if wrap is None:
			raise ConfigurationError(
				f"{method}({keyword}=...): agent {self.name!r} takes no {keyword}"
			)
		return wrap, given

	def new_state(self, input: Any = None, attachments: Sequence[Attachment] = ()) -> RunState:
		"""A fresh run's state: memory as the agent keeps it, and the first message.

		Args:
			input: The task input.
			attachments: Images or PDFs sent with the first turn.
		"""
		state = RunState()
		self._start(state, input, attachments, None)
		return state

	async def start(
		self,
		input: Any = None,
		*,
		attachments: Sequence[Attachment] = (),
		run_id: str | None = None,
		user: str | None = None,
	) -> RunHandle:
		"""Start a durable run in the background and return its handle at once.

		The run is recorded in the durable store before this returns; it executes in this
		process (or, after a crash, in a worker). Fetch its result with ``await handle.result()``
		or ``om.result(handle.run_id)``.

		Args:
			input: The task input, as for `run`.
			attachments: Images or PDFs for the model, sent with the first turn.
			run_id: The run's id (default: a fresh one); a run id already taken attaches to
				that run instead of starting another.
			user: The end user the run acts for, as for `run`.

		Returns:
			The handle: ``run_id`` and ``result()``.

		Raises:
			ConfigurationError: The instance has no ``durability=...`` (without it, run the
				agent in a task group of your own), or a setting is missing.
		"""
		backend = self.om.durability
		if backend is None:
			from openmolt_core._support.docs import docs_url  # only a message that names a page

			raise ConfigurationError(
				"agent.start: background runs are durable runs; give OpenMolt(durability=...) "
				f"({docs_url('guides/durable.md')}), or call agent.run() in a task group of your "
				"own"
			)
		await self._refresh_tools()
		state = RunState(user=_user_id(user))
		if run_id:
			state.run_id = str(run_id)
		if attachments:
			attachments = await self._keep_attachments(attachments, state)
		self._start(state, input, attachments, None)
		await backend.begin(self, state)
		return RunHandle(state.run_id, backend)

	async def resume(
		self,
		state: RunState | Mapping[str, Any],
		*,
		answer: str | None = None,
		decision: ApprovalDecision
		| Mapping[str, Any]
		| Sequence[ApprovalDecision | Mapping[str, Any]]
		| None = None,
		session: Session | None = None,
		given: Any = _NOTHING,
	) -> RunResult:
		"""Go on with a parked run: a question with its answer, tool calls with their decisions.

		Decisions (``approval_required``) are all checked first: a refused one raises before
		anything runs. A call left without a decision goes to ``on_approval_request``, or parks
		again. The state may come from another process.

		Args:
			state: The parked run's state (``result.state``, or its dict).
			answer: The person's answer (``human_input_required``).
			decision: One decision or a list (``approval_required``): from
				``agent.approval_requests(state)``, ``request.approve()`` or
				``request.deny(reason)``, as objects or their ``to_dict()``.
			session: The session the parked run belongs to: the answer and the run's next
				reply are appended to it (`openmolt_core.sessions`).
			given: For a run a capability parked (`openmolt_core.hooks.Park`): what the
				application delivers to its ``resume`` hook (JSON; left out: None).

		Returns:
			The run's result, as `run` returns it.

		Raises:
			ConfigurationError: The state waits for nothing, or for something else; ``given``
				is not JSON; another resume of the same parked step is going on (in this process
				or the instance's run store); or it is a nested run's (`RunState.caller`), which
				goes on only inside its caller.
			ApprovalError: A decision is forged, replayed, stale or invalid; the state is kept.
			RunError: As for `run`.
		"""
		joined = None if session is None else self._joined("resume", "session", session)
		await self._refresh_tools()
		loaded = _load(state, "resume: state")
		if loaded.caller is not None:  # before a decision is read: it stays good for the caller
			from openmolt_core._park import nested_alone

			raise ConfigurationError(nested_alone(loaded, self.name, "resume"))
		if self._hooks.keep_tools:  # what follows reads its tools
			tell(self._hooks.keep_tools, _Binder(self), loaded, False)
		from openmolt_core._park import resuming_once, waits_for

		kind, answer = waits_for(loaded, answer, decision, given, left_out=given is _NOTHING)
		if self.om.durability is not None:  # the backend keeps one resume per parked step
			return await self._resume(loaded, kind, answer, decision, joined)
		with resuming_once(loaded):
			return await self._resume(loaded, kind, answer, decision, joined)

	async def _resume(
		self,
		loaded: RunState,
		kind: str,
		answer: str | None,
		decision: Any,
		joined: tuple[CallWrap, Any] | None,
	) -> RunResult:
		from openmolt_core._park import parker

		owner = parker(self._hooks, loaded.pending or {}, self.name)
		delivered: Any = ()  # what the gate that parked the run read of the delivery
		if owner is not None:  # it reads what is delivered (decision=...), before anything runs
			delivered = self._ask(loaded, owner.receive, decision, answer)
		elif kind != PARKED_BY_CAPABILITY and (answer is None or decision not in (None, [], ())):
			raise ConfigurationError(
				"resume: this run waits for a person's answer: give answer=..."
			)
		await self._check_delivery(loaded, answer, delivered)  # before the store gives it out
		# The step taken for this resume (the run store, the observers' capability), before the
		# drive they watch; a durable run's backend keeps one resume per parked step itself.
		claimed = None
		if self._hooks.claim_resume and self.om.durability is None:
			claimed = await self._hooks.claimed(self.name, loaded)
		drive = functools.partial(
			self._drive, loaded, answer=answer, decisions=delivered, checked=True
		)
		try:
			if joined is not None:  # a capability takes the call (`Capability.wrap_call`)
				wrap, given = joined
				asked = answer if kind == "human_input" else None
				call = Call(self, loaded, given, asked, resumed=True)
				return await wrap(call, lambda _: drive())
			return await drive()
		except (ConfigurationError, ApprovalError):  # refused before it went on: given back
			if claimed is not None:
				await claimed()
			raise

	def approval_requests(self, state: RunState | Mapping[str, Any]) -> list[ApprovalRequest]:
		"""The tool calls a parked run (``approval_required``) waits for, ready to decide.

		Each request's ``approve()`` and ``deny()`` make decisions to give to `resume`.

		Args:
			state: The parked run's state (``result.state``, or its dict).

		Raises:
			ConfigurationError: The state waits for no approval (a run a capability parked
				with `openmolt_core.hooks.Park` waits for ``resume(state, given=...)``).
		"""
		from openmolt_core._park import deciding

		loaded = _load(state, "approval_requests: state")
		owner = deciding(self._hooks, loaded.pending or {}, self.name)
		requests: list[ApprovalRequest] = self._ask(loaded, owner.requests)
		return requests

	def _ask(self, state: RunState, hook: Callable[..., Any], *args: Any) -> Any:
		"""A parked run's capability's ``hook(run, state.pending, *args)`` (nothing runs).

		Raises:
			OpenMoltError: The capability's own word (an ApprovalError: a decision refused).
			RunError: The hook raised anything else: the state is kept, still parked.
		"""
		try:
			return hook(self._context(state, LOCAL_PORT), state.pending or {}, *args)
		except OpenMoltError:
			raise
		except Exception as exc:
			self._redactor.exception(exc)
			raise self._refused(state, hook, exc) from exc

	def _refused(self, state: RunState, hook: Callable[..., Any], exc: Exception) -> RunError:
		"""The error of a resume a capability's hook refused by raising: the state kept, parked."""
		name = hook.__self__.name  # type: ignore[attr-defined]  # a capability's bound method
		from openmolt_core._park import refusal

		return self._failed(state, self._redactor(refusal(name, hook.__name__, exc)))

	def _failed(self, state: RunState, message: str) -> RunError:
		"""The error of a run that ends with ``message``, its state kept (to resume or read)."""
		result = self._result(state, RunEnd("error", None, ""))
		result.error = message
		return RunError(message, result=result)

	async def _refresh_tools(self) -> None:
		"""List the tools known only at run time again, before a run's prompt is built."""
		if self._hooks.refresh_tools:
			await self._hooks.refreshed(_Binder(self))

	def _rebind(self, tools: dict[str, BoundTool]) -> None:
		"""Take ``tools`` as the agent's tool set (a listing changed it); forget what was built."""
		self._mark(tools.values())
		self._tools = tools
		self._prefix = self._redactor_cache = self._toolset = None
		self._prompts.clear()
		self._models.forget()

	async def _prepare(self) -> None:
		if not self._models.primary.ready:
			# First run of this agent: load the provider, the HTTP stack and the template engine
			# in a worker thread (once per instance), so other tasks of the loop never stall.
			http_tools = any(
				t.integration is not None and not t.is_function for t in self._tools.values()
			)
			if self.provider_name or http_tools:
				await self.om.prepare(provider=self.provider_name or None, http_tools=http_tools)

	def _context(
		self, state: RunState, port: RunPort, link: CallingRun | None = None
	) -> RunContext:
		toolset = self._tool_set()
		memory = self._memory
		if memory and self._hooks.memory_option:  # as this run uses it (a capability's say)
			memory = self._hooks.memory_of(state, memory)
		hooks = self._hooks
		added = link.capabilities if link is not None else ()  # handed down by the calling run
		if journaled(port):  # a durable run's port (it records the starts of calls)
			added = (*added, *self.om.durable_capabilities())
		for cap in added:
			if cap.name not in hooks.by_name:
				hooks = hooks.adding(cap)
		return RunContext(
			agent=self.name,
			state=state,
			tools=toolset.tools,
			events=self._events,
			redact=self._redactor,
			memory=memory,
			human=self.on_human_input_request,
			output=self.validate_output,
			limits=self.limits,
			port=port,
			link=link,
			toolset=toolset,
			hooks=hooks,
			models=_RunModels(self, state, toolset),
			owner=self,
			began=state.seq,
		)

	async def execute(
		self,
		state: RunState | Mapping[str, Any] | None,
		*,
		port: RunPort,
		answer: str | None = None,
		decisions: Sequence[ApprovalDecision] = (),
		input: Any = None,
		run_id: str | None = None,
		parent: CallingRun | None = None,
	) -> RunResult:
		"""Run a state through the loop with the given port (for durability backends).

		A durability backend calls this inside its workflow (``openmolt_dbos``): the port journals
		every step, so a run recovered in another process asks for the same steps in order.

		Args:
			state: The run's state, with its first message (or a parked question's pending);
				None to start afresh from ``input`` (the new state is the step ``start``).
			port: The port every model call, tool call, callback, wait and clock reading uses.
			answer: The answer to the state's parked question, if it has one.
			decisions: Approval decisions for the state's parked tool calls, if it has some.
			input: The task input, when ``state`` is None.
			run_id: The new state's run id, when ``state`` is None (default: a fresh one).
			parent: The run this one nests in, inside one of its steps (a guardrail agent's
				run): it takes what that run hands down, and acts for its user.

		Returns:
			The result, as `run` returns it; a question nobody can answer now ends the run with
			``human_input_required`` on every port.

		Raises:
			RunError: As for `run`.
		"""
		await self._refresh_tools()
		from openmolt_core._redacted_port import RedactedPort

		port = RedactedPort(port, lambda: self._redactor, lambda: self.om.files)
		if state is None:

			async def start() -> RunState:
				# A nested run (a guardrail agent's) acts for its caller's user from its start:
				# its long-term memory is that user's, as a sub-agent's is.
				fresh = RunState(user=parent.user if parent is not None else None)
				if run_id:  # before the new run's hooks see it (as `start` gives it)
					fresh.run_id = run_id
				self._start(fresh, input, (), parent)  # nested in its parent's step: no root run
				return fresh

			state = await port.step(
				"start", start, encode=RunState.to_dict, decode=RunState.from_dict
			)
		return await self._drive(
			_load(state, "execute: state"),
			answer=answer,
			decisions=decisions,
			link=parent,
			port=port,
		)

	async def _drive(
		self,
		state: RunState,
		*,
		answer: str | None,
		decisions: Any = (),
		link: CallingRun | None = None,
		port: RunPort | None = None,
		checked: bool = False,
	) -> RunResult:
		if link is not None:  # a nested run: its state names the run it lives in
			if state.caller is None or state.caller.get("run_id") != link.run_id:
				state.caller = {
					"run_id": link.run_id,
					"call": link.call,
					"agent": getattr(link.caller, "agent", None),
				}
			if link.user is not None and state.user != link.user:
				# It acts for its caller's user (a guardrail agent's run, started here too).
				if state.user is not None:
					raise ConfigurationError(_not_callers_user(link.user, state.user))
				state.user = link.user
			if link.nesting is not None:  # a durable caller records what its call began
				asked = self._hooks.nested_in_doubt  # (safety's: whether it may send data out)
				policy = first_answer(asked, self) if asked else None
				await link.nesting(self.name, [*self.in_doubt.values(), policy])
		elif state.caller is not None:
			from openmolt_core._park import nested_alone

			raise ConfigurationError(nested_alone(state, self.name, "run"))
		if port is None and link is None and state.pending is not None and not checked:
			await self._check_delivery(state, answer, decisions)  # run(history=parked state)
		if port is None:
			backend = self.om.durability
			if backend is not None and link is None:  # the backend's workflow calls `execute`
				return await backend.drive(self, state, answer, decisions)
			port = LOCAL_PORT  # a sub-agent's run lives inside its caller's (journaled) step
		self.last_state = state
		_masked_history(state, self._redactor)  # saved where fewer secrets were known
		logged: list[BaseException] = []  # the failure logged inside the capabilities' wrap_run
		try:
			await self._prepare()
			if self._hooks.keep_tools:  # then its tool set, with no await between
				tell(self._hooks.keep_tools, _Binder(self), state, False)
			ctx = self._context(state, port, link)
			if ctx.hooks.wrap_run:  # the run store, the viewer, telemetry; capabilities
				loop = lambda: self._logged_loop(ctx, answer, decisions, logged)  # noqa: E731
				return await drive_wrapped(ctx.hooks, ctx, loop)()
			return await self._loop(ctx, answer, decisions)
		except anyio.get_cancelled_exc_class():
			# Cut off by its calling run (its timeout, a cancel): what it spent was billed,
			# so it counts there (the call that started it adds it to its run).
			hand_up(link, state)
			raise
		except (RunError, ConfigurationError, ApprovalError) as error:
			if not isinstance(error, RunError):  # no result carries what it spent: handed up
				hand_up(link, state)
			self._redactor.exception(error)  # its cause: a provider's or a hook's own words
			raise
		except Exception as exc:
			# A bug or an unexpected failure: end the run with its state, never a bare exception.
			message = self._unexpected(exc)
			if not any(e is exc for e in logged):
				log.exception("%s: %s", self.name, message)
			self._redactor.exception(exc)
			raise self._failed(state, message) from exc
		finally:
			if link is not None:  # its caller's capabilities read it (the call's result labels)
				link.ended = (*link.ended, state)

	def _unexpected(self, exc: Exception) -> str:
		return self._redactor(f"the run failed unexpectedly: {type(exc).__name__}: {exc}")

	async def _logged_loop(
		self, ctx: RunContext, answer: str | None, decisions: Any, logged: list[BaseException]
	) -> RunResult:
		# An unexpected failure is logged inside every wrap_run, so its record carries what they
		# mark (a verbose run's drive: `openmolt_core.capabilities.Observers`); `_drive` ends it.
		try:
			return await self._loop(ctx, answer, decisions)
		except (RunError, ConfigurationError, ApprovalError):
			raise
		except Exception as exc:
			log.exception("%s: %s", self.name, self._unexpected(exc))
			logged.append(exc)
			raise

	async def _loop(self, ctx: RunContext, answer: str | None, decisions: Any = ()) -> RunResult:
		state = ctx.state
		port = ctx.port
		toolset = ctx.toolset or self._tool_set()
		self._models.begin(self.model_config)  # each model's dialect is asked again, per run
		deadline = None if self.timeout is None else await port.deadline(self.timeout)
		hooks = ctx.hooks  # the agent's, and any its calling run handed down
		if hooks.on_run_start:
			end = await self._within(ctx, deadline, hooks.on_run_start)
			if end is not None:
				return await self._end(ctx, end)
		watch: list[Alongside] = []  # checks that run alongside the first model call
		first = hooks.before_first_model
		if first and state.steps == 0 and state.pending is None:  # before the first model call
			end = None
			with until(deadline, port.now) as scope:  # sync checks too
				stop, watch = await hooks.first_model(ctx)
				if stop is not None:
					end = self._stopped(stop)
			if scope.cancelled_caught:
				end = self._elapsed()
			if end is not None:
				return await self._end(ctx, end)
		if state.pending is not None:
			end = await self._deliver(ctx, answer, decisions, deadline)
			if end is not None:
				return await self._end(ctx, end)
		while True:
			end = self._budget_end(state, port, deadline)
			if end is not None:
				return await self._end(ctx, end)
			end = await self._may_step(ctx, deadline)  # a token or cost budget
			if end is not None:
				return await self._end(ctx, end)
			if hooks.before_model:  # compaction's summary call among them
				spent = _spent(state)
				try:
					with until(deadline, port.now) as scope:
						await tell_async(hooks.before_model, ctx)
				except ProviderError as exc:  # a summary call's: the run's state is kept
					raise await self._provider_failed(ctx, exc) from exc
				if scope.cancelled_caught:
					return await self._end(ctx, self._elapsed())
				if _spent(state) != spent:  # a summary's call spent: may the step's call start?
					end = await self._may_step(ctx, deadline)
					if end is not None:
						return await self._end(ctx, end)
			last = self._last_call(ctx)
			if last:
				self._append_notice(state, _LAST_STEP.format(why=last))
			ctx.step = state.steps + 1
			key, envelope = toolset.envelope(state)  # grows as the run loads tools
			if watch:  # checks alongside the first model call: a Stop cancels the call
				called = stop = None
				with until(deadline, port.now):  # the checks' time too
					called, stop = await alongside(
						watch, functools.partial(self._ask_model, ctx, key, envelope, deadline)
					)
				watch = []
				if stop is not None:
					return await self._end(ctx, self._stopped(stop))
			else:
				called = await self._ask_model(ctx, key, envelope, deadline)
			if isinstance(called, RunEnd):  # a summary spent what was left before the retry
				return await self._end(ctx, called)
			if called is None:
				end = RunEnd(
					"limit_reached", None, f"{self.timeout:g} seconds elapsed during a model call"
				)
				return await self._end(ctx, end)
			slot, response = called
			if response.finish_reason == "blocked":  # asked again, it would be blocked again
				raise await self._provider_failed(ctx, blocked(slot))
			if response.finish_reason == "max_tokens" and not response.text.strip():
				# Its reasoning spent the whole output limit: asked again, it would again.
				raise await self._provider_failed(ctx, no_room(slot))
			parsed = await self._parse(ctx, response, slot.fitted(key, envelope, self._fit))
			state.messages.append(Message("assistant", self._redactor(parsed.cleaned)))
			if parsed.errors:
				for error in parsed.errors:
					await ctx.error("invalid_reply", error)
				self._append_results(state, [{"ok": False, "error": e} for e in parsed.errors])
				continue
			end = await self._run_commands(ctx, parsed, deadline)
			if end is not None:
				return await self._end(ctx, end)

	async def _run_commands(
		self, ctx: RunContext, parsed: ParsedReply, deadline: float | None
	) -> RunEnd | None:
		if log.isEnabledFor(logging.INFO):
			log.info(
				"%s step %d: %s",
				self.name,
				ctx.step,
				", ".join(summary(c) for c in parsed.commands),
			)
		if ctx.wants("commandsQueued"):
			from openmolt_core.events import CommandsQueuedEvent

			commands = [c.model_dump(mode="json", by_alias=True) for c in parsed.commands]
			await ctx.emit(CommandsQueuedEvent(agent=self.name, step=ctx.step, commands=commands))
		else:
			ctx.skip_event()
		return await self._run_record(ctx, StepRecord(parsed.commands), parsed.ignored, deadline)

	async def _run_record(
		self,
		ctx: RunContext,
		record: StepRecord,
		ignored_texts: Sequence[str],
		deadline: float | None,
		start: int = 0,
	) -> RunEnd | None:
		"""Run a step's commands (from ``start``) and record their results, or park the step."""
		state = ctx.state
		ignored: list[dict[str, Any]] = [{"ok": False, "error": t} for t in ignored_texts]
		try:
			with until(deadline, ctx.port.now) as scope:
				await run_step(ctx, record, start)
		except anyio.get_cancelled_exc_class():
			# Cancelled from outside: the state keeps every result, the unfinished marked so.
			self._append_results(state, record.entries("interrupted: the run was cancelled"))
			raise
		if scope.cancelled_caught:
			record.end = self._elapsed()
			self._append_results(state, record.entries("interrupted: the time budget ran out"))
			return record.end
		pending = record.pending
		if pending is not None and "calls" in pending:  # a gate parked calls (Capability.parks)
			kind, calls = pending["kind"], pending["calls"]
		elif record.parked and pending is None:  # a capability parked calls (hooks.Park)
			kind, calls = PARKED_BY_CAPABILITY, record.parked
		else:
			kind = None
		if kind is not None:  # the step waits, with every command of the reply
			from openmolt_core._park import parked_step  # loaded by the first step that parks

			parked = parked_step(
				ctx.step, record.commands, record.results, ignored_texts, kind, calls
			)
			state.pending = encodable(parked)
			return record.end
		results = record.entries("did not run")
		if record.pending is not None:
			# Results go into the saved state as they are: keep it encodable whatever a tool gave.
			state.pending = encodable({**record.pending, "results": results + ignored})
			return record.end
		if record.end is not None:
			for text in ignored_texts:
				await ctx.error("ignored", text)
			ignored = []
		self._append_results(state, results + ignored)
		return record.end

	async def _deliver(
		self,
		ctx: RunContext,
		answer: str | None,
		decisions: Any,
		deadline: float | None,
	) -> RunEnd | None:
		"""Give a parked question its answer, or go on with a step whose calls parked.

		Without an answer, the model hears that nobody answered.
		"""
		state = ctx.state
		pending = state.pending or {}
		ctx.step = state.steps
		from openmolt_core._park import parker

		owner = parker(ctx.hooks, pending, self.name)
		if (
			owner is not None or pending.get("kind") == PARKED_BY_CAPABILITY
		):  # calls parked: they go on
			# A gate's own kind gets the decisions, or the answer run(input, history=...) gives.
			given = decisions if answer is None else answer
			return await self._deliver_given(ctx, pending, owner, given, deadline)
		state.pending = None
		results = list(pending.get("results") or [])
		if answer is None:
			results.append(
				{
					"command": "requestHumanInput",
					"ok": False,
					"error": "nobody answered; decide yourself, or finish with status 'failure'",
				}
			)
		else:
			results.append(await answer_entry(ctx, str(pending.get("message", "")), answer))
		self._append_results(state, results)
		return None

	async def _deliver_given(
		self,
		ctx: RunContext,
		pending: Mapping[str, Any],
		owner: Capability | None,
		given: Any,
		deadline: float | None,
	) -> RunEnd | None:
		"""Hand what the application gave to the capabilities that parked; the step goes on."""
		commands, results, start, ignored = await self._delivered(ctx, pending, owner, given)
		record = StepRecord(commands, results=results)
		ctx.state.pending = None  # every delivery was checked: the step goes on
		return await self._run_record(ctx, record, ignored, deadline, start)

	async def _check_delivery(self, state: RunState, answer: str | None, decisions: Any) -> None:
		"""Check what is delivered to a run parked on calls, on a copy, before the run is driven.

		A refused delivery is refused before the run's observers or a durable backend see the
		run go on; the loop checks it again as the step goes on (`_deliver_given`).
		"""
		pending = state.pending or {}
		from openmolt_core._park import parker

		owner = parker(self._hooks, pending, self.name)
		if owner is None and pending.get("kind") != PARKED_BY_CAPABILITY:
			return  # a question: its answer is the loop's to read
		copy = RunState.from_dict(state.to_dict())
		if self._hooks.keep_tools:
			tell(self._hooks.keep_tools, _Binder(self), copy, False)
		ctx = self._context(copy, LOCAL_PORT)
		ctx.step = copy.steps
		given = decisions if answer is None else answer
		await self._delivered(ctx, copy.pending or {}, owner, given)

	async def _delivered(
		self, ctx: RunContext, pending: Mapping[str, Any], owner: Capability | None, given: Any
	) -> tuple[list[Command], list[dict[str, Any] | None], int, list[str]]:
		"""Rebuild a step parked on calls and hand the delivery to its capabilities; nothing runs.

		Returns what `openmolt_core._park.restore_step` returns; raises what
		`openmolt_core._park.hand_over` raises, or a ConfigurationError for a damaged step.
		"""
		from openmolt_core._park import hand_over, restore_step

		rebuilt = restore_step(pending, check(ctx))
		await hand_over(ctx, ctx.hooks, pending, owner, given, self._refused)
		return rebuilt

	def _request(
		self, state: RunState, slot: ModelSlot, key: tuple[str, ...], envelope: Envelope
	) -> ModelRequest:
		"""The request of one model call: the model's own prompt, its fitted reply schema."""
		fitted = slot.fitted(key, envelope, self._fit)
		plain = None
		if fitted.mode != "off":
			# What a server that refuses structured output gets instead: the command shapes,
			# and every input schema the reply schema carried.
			plain = functools.partial(self._system, state, slot, plain=True)
		schema = fitted.schema  # a tool's may hold a secret: masked, once per fitted schema
		if schema is not None:
			schema = self._redactor.json_object(schema)
		return ModelRequest(
			model=slot.model,
			system=self._system(state, slot),
			messages=state.messages,
			response_schema=schema,
			config=self._config_for(split_id(slot.id)[0]),
			cache_key=f"openmolt:{self.name}",
			response_mode=fitted.mode if slot.declared else None,
			plain_system=plain,
			model_id=slot.id,
		)

	def first_request(self, input: Any = None) -> ModelRequest:
		"""The request a run's first model call sends for ``input``, built as the run builds it.

		What ``openmolt --dry-run`` measures; a run that continues a conversation or has memory
		sends more.

		Args:
			input: The run's input.
		"""
		state = RunState()
		state.messages.append(Message("user", self.first_message(input, state)))
		if self.max_steps == 1:  # the first call is the last: a run adds its notice (_last_call)
			from openmolt_core._support.words import quantity

			self._append_notice(state, _LAST_STEP.format(why=quantity(1, "step")))
		primary = self._models.primary
		primary.begin(self.model_config)  # as a run starts: the dialect asked again
		return self._request(state, primary, *self._tool_set().envelope(state))

	def _system(self, state: RunState, slot: ModelSlot, *, plain: bool = False) -> str:
		"""The system prompt of ``slot``'s call at a step (``plain``: without structured output)."""
		return self._prompt_for(slot, plain=plain) + self._missing(state, slot, plain=plain)

	def _missing(self, state: RunState, slot: ModelSlot, *, plain: bool = False) -> str:
		"""Input schemas a model needs but the run's first turn leaves out, for its prompt.

		A first turn built while replies were constrained omits the schemas the reply schema held;
		a model that constrains less gets them in its system prompt.
		"""
		toolset = self._tool_set()
		fitted = slot.fitted(*toolset.envelope(), self._fit)
		first = state.messages[0].content if state.messages else ""
		prefix = self._prefix
		off = plain or fitted.mode == "off"
		built_for = self._prefix_fit
		if plain:  # the first turn lists every schema only when it was built for mode off
			same = built_for is not None and built_for.mode == "off"
		else:
			same = fitted is built_for
		if prefix is not None and same and first.startswith(prefix):
			return ""  # built for this very fit (or, plain, for one that listed every schema)
		try:
			listed = {
				t.get("tool")
				for t in json.loads(first).get("tools", ())
				if isinstance(t, dict) and "inputSchema" in t
			}
		except (ValueError, AttributeError):
			return ""
		need = {
			h: toolset.tools[h].listed_input_schema
			for h in toolset.callable()
			if h not in listed and (off or h in fitted.encoded)
		}
		return f"\nInput schemas of your tools: {self._redactor(dumps(need))}" if need else ""

	def _elapsed(self) -> RunEnd:
		"""How a run ends when its ``timeout`` passed."""
		return RunEnd("limit_reached", None, f"{self.timeout:g} seconds elapsed")

	def _budget_end(self, state: RunState, port: RunPort, deadline: float | None) -> RunEnd | None:
		if self.max_steps and state.steps >= self.max_steps:
			from openmolt_core._support.words import quantity  # a run's end: "1 step used"

			return RunEnd("limit_reached", None, f"{quantity(self.max_steps, 'step')} used")
		if deadline is not None and port.now() >= deadline:
			return self._elapsed()
		return None

	async def _may_step(self, ctx: RunContext, deadline: float | None) -> RunEnd | None:
		"""How the run ends if a capability stops it before a model call (a budget), else None."""
		if not ctx.hooks.before_step:
			return None
		return await self._within(ctx, deadline, ctx.hooks.before_step)

	async def _within(
		self,
		ctx: RunContext,
		deadline: float | None,
		hooks: tuple[Callable[[Run], Awaitable[Stop | None]], ...],
	) -> RunEnd | None:
		"""How the run ends if ``hooks`` (asked until a `Stop`, under the run's time) stop it."""
		stop = None
		with until(deadline, ctx.port.now) as scope:  # a capability's hooks take the run's time
			stop = await until_stop(hooks, ctx)
		if scope.cancelled_caught:
			return self._elapsed()
		return None if stop is None else self._stopped(stop)

	def _stopped(self, stop: Stop) -> RunEnd:
		"""How a run ends when a capability answers `Stop` (its reason masked)."""
		return RunEnd(stop.status, None, self._redactor(stop.reason))

	def _last_call(self, ctx: RunContext) -> str | None:
		"""Why the coming call is the run's last, if it is (``max_steps``, or a capability's)."""
		state = ctx.state
		if self.max_steps and state.steps + 1 >= self.max_steps:
			from openmolt_core._support.words import quantity  # the last step only

			return quantity(self.max_steps, "step")
		return first_answer(ctx.hooks.last_step, ctx) if ctx.hooks.last_step else None

	def _append_notice(self, state: RunState, notice: str) -> None:
		# The last user turn has not been sent yet: adding to it keeps the sent prefix unchanged.
		last = state.messages[-1]
		if last.role == "user" and last.content.endswith("}"):
			last.content = f'{last.content[:-1]},"notice":{dumps(notice)}}}'
		else:
			state.messages.append(Message("user", dumps({"notice": notice})))

	async def _ask_model(
		self,
		ctx: RunContext,
		key: tuple[str, ...],
		envelope: Envelope,
		deadline: float | None,
	) -> tuple[ModelSlot, ModelResponse] | RunEnd | None:
		# A request past the model's context window: a capability may shrink the history
		# (compaction summarises older steps), then the step is asked once more, unless what
		# the refusal and the summary spent reached a budget (the run ends: a `RunEnd`).
		shrinks = bool(ctx.hooks.context_exceeded)
		try:
			return await self._call_model(ctx, key, envelope, deadline, shrinks=shrinks)
		except ProviderError as exc:  # raised as it came only when a capability may shrink
			spent = _spent(ctx.state)
			try:
				with until(deadline, ctx.port.now) as scope:
					shrunk = await ctx.hooks.shrunk(ctx)
			except ProviderError as failed:  # the summary's call: the run's state is kept
				raise await self._provider_failed(ctx, failed) from failed
			if scope.cancelled_caught:
				return None
			if not shrunk:
				raise await self._provider_failed(ctx, exc) from exc
			await ctx.error("context_exceeded", self._redactor(str(exc)))
			if _spent(ctx.state) != spent:  # the summary's call spent: may the retry start?
				end = await self._may_step(ctx, deadline)
				if end is not None:
					return end
			return await self._call_model(ctx, key, envelope, deadline, attempt=1)

	async def _provider_failed(self, ctx: RunContext, exc: Exception) -> RunError:
		# Any provider failure ends the run with its state kept, so it can be resumed; so does a
		# capability's around the call (`Capability.wrap_model`), which names it.
		own = isinstance(exc, ProviderError | PluginError)
		message = self._redactor(str(exc) if own else f"{type(exc).__name__}: {exc}")
		kind = "capability" if isinstance(exc, PluginError) else "provider"
		await ctx.error(kind, message, fatal=True)
		return self._failed(ctx.state, message)

	async def _call_model(
		self,
		ctx: RunContext,
		key: tuple[str, ...],
		envelope: Envelope,
		deadline: float | None,
		*,
		shrinks: bool = False,
		attempt: int = 0,
	) -> tuple[ModelSlot, ModelResponse] | None:
		state = ctx.state
		step = ctx.step
		# llmOutput and the events of the hooks around the call (`Capability.model_call_events`),
		# numbered even when the journal answers the call
		seq = ctx.reserve_events(1 + ctx.hooks.model_call_events)

		def request(slot: ModelSlot) -> ModelRequest:
			return self._request(state, slot, key, envelope)

		# The reply as it came, for llmOutput: emitted once the step's result is journaled, so a
		# listener never sees a reply that a crash would ask the model for again.
		said: list[tuple[ModelSlot, ModelRequest, ModelResponse]] = []

		sender = first_answer(ctx.hooks.send_model, ctx) if ctx.hooks.send_model else None

		async def call() -> ModelResponse:
			primary = self._models.primary
			built = lambda model: request(self._model(model))  # noqa: E731
			first = request(primary)
			response = await self._send(ctx, primary, built, seq + 1, first, sender)
			slot = self._models.slot(response.model)
			asked = first if slot is primary else request(slot)  # as built, before any hook
			# A server that reports no usage is counted from sizes: budgets hold for it too.
			own = response.usage_by_model.get(slot.id, response.usage)  # this model's call
			_cost.counted(own, asked.messages, asked.system, response.text)
			_cost.price_call(slot.provider(), slot.model, own)  # events and journal
			if response.usage_by_model:  # other models' calls too (a capability moved on): the sum
				response.usage = total_usage(response.usage_by_model.values())
			# A surrogate the transport decoded (a "\ud800" in the provider's JSON body, not in the
			# model's text) is not text: U+FFFD, so the journal and the history always encode.
			response.text = encodable_text(response.text)
			# A secret the model writes (decoded from a spelling, or seen before it was known)
			# reaches no tool, event or result: the reply is read masked, as a journal keeps it.
			response.text = self._redactor(response.text)
			if ctx.wants("llmOutput"):
				said.append((slot, asked, response))
			response.model = slot.id
			return response

		answered: tuple[ModelSlot, ModelResponse] | None = None  # once counted
		try:
			with until(deadline, ctx.port.now):
				# The journal keeps which model answered: a replayed step parses as that model's.
				response: ModelResponse = await ctx.port.step(
					step_key("model", step, attempt or None),  # an attempt after a shrink: :1
					call,
					encode=ModelResponse.to_dict,
					decode=ModelResponse.from_dict,
				)
				for slot, sent, live in said:  # the call ran here (not answered from the journal)
					from openmolt_core.events import LLMOutputEvent

					fitted = slot.fitted(key, envelope, self._fit)
					await ctx.emit(
						LLMOutputEvent(
							agent=self.name,
							step=step,
							output=live.text,
							raw=self._redactor.deep(live.raw),
							usage=live.usage,
							structured=sent.response_mode,
							model=slot.id,
							notes=fitted.notes,
							relaxed=tuple(sorted(fitted.relaxed)),
						),
						seq,
					)
				slot = self._models.slot(response.model)
				_cost.price_call(
					slot.provider(), slot.model, response.usage
				)  # a journal without it
				self._count(state, step, response.model or slot.id, response)
				answered = slot, response
		except ConfigurationError:
			raise  # a missing key or a wrong setting: nothing ran
		except ProviderError as exc:
			# A reply billed but not usable (it filled the context window) counts all the same.
			spend_failed(state, exc, self._models.primary.id)
			if shrinks and exc.context_exceeded:
				raise  # `_ask_model` asks the capabilities to shrink the history
			raise await self._provider_failed(ctx, exc) from exc
		except Exception as exc:
			raise await self._provider_failed(ctx, exc) from exc
		if answered is None:
			return None  # the run's budget ran out first
		link = ctx.link
		if link is not None and link.spending is not None:
			# Kept against a crash (a durable port): a failure there is the port's, not the model's.
			await link.spending(state.usage, state.usage_by_model)
		return answered

	def _providers(self) -> tuple[str, ...]:
		"""The providers (model id prefixes) this agent's calls go to: its models', its summaries'."""
		names = [split_id(slot.id)[0] for slot in self._models.slots]
		summaries = getattr(self._compaction(), "summary_provider", None)  # capabilities.Compaction
		if summaries is not None:
			names.append(summaries)
		return tuple(dict.fromkeys(names))

	def _config_for(self, provider: str) -> ModelConfig:
		"""The model configuration a request to ``provider`` carries (`openmolt_core.llm.options_for`)."""
		config = self.model_config
		if not config.provider_options:
			return config
		return options_for(config, provider, self._providers())

	def _model(self, model: str) -> ModelSlot:
		"""The agent's model of this id (`ModelAccess.request`, a request's ``model_id``)."""
		for slot in self._models.slots:
			if slot.id == model:
				return slot
		raise ConfigurationError(
			f"run.models.request: {model!r} is not one of agent {self.name!r}'s models; "
			f"name one of {self.models}"
		)

	async def _send(
		self,
		ctx: RunContext,
		slot: ModelSlot,
		build: Callable[[str], ModelRequest],
		seq: int,
		request: ModelRequest,
		live: ModelSend | None = None,
	) -> ModelResponse:
		"""One call of the agent's models, made for ``slot``, inside the capabilities' hooks.

		A request they build for another model goes to that model's provider; ``live``: a
		capability's sender (`Capability.send_model`) in place of ``generate``.
		"""

		async def send(built: ModelRequest) -> ModelResponse:
			to = self._model(built.model_id) if built.model_id else slot
			try:
				if live is not None:
					response = await live(to.provider(), built, to.id)
				else:
					response = await to.provider().generate(built)
			except ProviderError as exc:
				if exc.usage is not None and not exc.usage_by_model:  # billed: by whom
					_cost.price_call(to.provider(), to.model, exc.usage)
					exc.usage_by_model = {to.id: exc.usage}
				raise
			if not isinstance(response, ModelResponse) or not isinstance(response.text, str):
				raise ProviderError(
					f"the provider returned {type(response).__name__} without reply text",
					provider=to.provider_name or "custom",
					model=to.model,
				)
			response.model = to.id
			# Each call is counted and priced as it returns, at its own model's price: one a
			# capability moves past (a blocked reply) is billed too, and never free when its
			# provider reports no token (counted from its size, as an answering reply is).
			_cost.counted(response.usage, built.messages, built.system, response.text)
			_cost.price_call(to.provider(), to.model, response.usage)
			return response

		hooks = ctx.hooks
		if not hooks.wrap_model:
			return await send(request)
		call = ModelCall(ctx.state, build, seq, seq + hooks.model_call_events)
		return await in_call(call, hooks.wrap(ctx, send), request)

	def _count(self, state: RunState, step: int, model: str, response: ModelResponse) -> None:
		state.steps += 1
		state.usage.add(response.usage)
		# The prompt of the call that answered: not the sum with other models' calls.
		prompt = response.prompt_tokens  # a reply of several requests: the last one's prompt
		if prompt is None:
			prompt = response.usage_by_model.get(model, response.usage).input_tokens
		state.context_tokens = prompt
		record_model(state, model, response.usage, response.usage_by_model)
		if log.isEnabledFor(logging.INFO):
			u = response.usage
			log.info(
				"%s step %d: model replied (%d in, %d out, %d cached tokens)",
				self.name,
				step,
				u.input_tokens,
				u.output_tokens,
				u.cached_tokens,
			)

	async def _parse(
		self, ctx: RunContext, response: ModelResponse, fitted: FittedSchema
	) -> ParsedReply:
		limits = self.limits

		def parse() -> ParsedReply:
			return parse_reply(
				response.text,
				dumps=dumps,
				check=check(ctx),
				restore=fitted.restore,
				finish_reason=response.finish_reason,
				max_chars=limits.max_reply_chars,
				max_depth=limits.max_depth,
			)

		if len(response.text) > _LARGE_REPLY:
			return await anyio.to_thread.run_sync(parse)
		return parse()

	def _append_results(self, state: RunState, results: list[dict[str, Any]]) -> None:
		body: dict[str, Any] = {"results": results}
		if self.max_steps:
			left = self.max_steps - state.steps
			if left <= STEPS_LEFT_WARNING:
				# Only near the end: the first turn states maxSteps, and every byte added here is
				# sent again at each later step.
				body["stepsLeft"] = max(left, 0)
		state.messages.append(Message("user", self._redactor(dumps(body))))

	async def _end(self, ctx: RunContext, end: RunEnd) -> RunResult:
		result = self._result(ctx.state, end)
		if ctx.hooks.on_run_end:
			await tell_async(ctx.hooks.on_run_end, ctx, result)
		if ctx.wants("finish"):
			from openmolt_core.events import FinishEvent

			await ctx.emit(FinishEvent(agent=self.name, step=ctx.state.steps, result=result))
		return result

	def validate_output(self, value: Any) -> Any:
		"""Check a finish output against the output schema; an instance of its model, if it has one.

		Args:
			value: The output as JSON (a result fetched from a durable store, for example).

		Raises:
			ValidationError: The value does not match (pydantic's, or the JSON Schema's).
		"""
		# The JSON Schema the model was shown, strictly (as for a dict schema and for tool
		# inputs): pydantic's lax mode alone took "5" for an integer and "off" for a boolean.
		if self._output_validator is None:
			schema = self.output_schema
			if schema is None:
				return value
			self._output_validator = JsonSchemaValidator(schema)
		self._output_validator.validate(value)
		if self._output_model is not None:
			return self._output_model.model_validate(value)
		return value

	def _result(self, state: RunState, end: RunEnd) -> RunResult:
		self.last_state = state
		return RunResult(
			output=end.output,
			status=end.status,
			human_message=end.message if end.status in ("success", "failure") else "",
			plan=state.plan,
			steps=state.steps,
			usage=state.usage,
			state=state,
			error=end.message
			if end.status in PARKED_STATUSES or end.status in ("limit_reached", "guardrail_tripped")
			else None,
		)

	# schedules ----------------------------------------------------------------------------

	def schedule(self, spec: Mapping[str, Any] | ScheduleLike) -> str:
		"""Run this agent on a timetable kept by its OpenMolt instance, once it serves them.

		Args:
			spec: A schedule (``{"type": "interval", "value": seconds}``, ``daily``, ``cron``,
				with their options: `openmolt_core.schedule`), or a `ScheduleLike` object.

		Returns:
			The schedule id, for `cancel_schedule` and ``om.scheduler.get``.

		Raises:
			ConfigurationError: The schedule is invalid; the message names the field.
		"""
		return self.om.scheduler.add(self, spec).id

	def cancel_schedule(self, schedule_id: str, *, cancel_running: bool = False) -> None:
		"""Remove one of this agent's schedules (the spec's ``cancelSchedule``).

		Args:
			schedule_id: The id `schedule` returned.
			cancel_running: Also cancel its run in flight (by default it finishes).

		Raises:
			ConfigurationError: No schedule of this agent has that id.
		"""
		self.om.scheduler.cancel(schedule_id, cancel_running=cancel_running, agent=self)

	def __repr__(self) -> str:
		return f"Agent(name={self.name!r}, model={self.model!r}, tools={len(self.tools)})"


_LIMITS = Limits()


class _RunModels:
	"""What capabilities may ask of an agent's models during a run (`RunContext.models`).

	Args:
		agent: The agent.
		state: The run's state.
		toolset: The run's tool set.
	"""

	__slots__ = ("_agent", "_state", "_toolset")

	def __init__(self, agent: Agent, state: RunState, toolset: ToolSet) -> None:
		self._agent = agent
		self._state = state
		self._toolset = toolset

	@property
	def ids(self) -> tuple[str, ...]:
		"""The agent's models (``provider:model``), the one each step asks first at the head."""
		return tuple(self._agent.models)

	def request(self, model: str) -> ModelRequest:
		"""The request of the model call in progress, built for the agent's model ``model``."""
		call = calling(self._state)
		if call is None:
			raise ConfigurationError(
				"run.models.request: no call of the agent's models is in progress; ask for it "
				"in Capability.wrap_model, around a call of the agent's models"
			)
		return call.build(model)

	def fitted(self, model: str) -> FittedSchema:
		"""The reply schema fitted to ``model``'s dialect at the coming step (`ModelAccess.fitted`)."""
		return self._agent._model(model).fitted(
			*self._toolset.envelope(self._state), self._agent._fit
		)

	@property
	def config(self) -> ModelConfig:
		"""The agent's model configuration."""
		return self._agent.model_config

	def config_for(self, provider: str) -> ModelConfig:
		"""The model configuration a request to ``provider`` carries (`ModelAccess.config_for`)."""
		return self._agent._config_for(provider)

	def system(self) -> str:
		"""The system prompt the first model gets at the coming step."""
		return self._agent._system(self._state, self._agent._models.primary)

	def primary(self) -> tuple[LLMProvider, str, str]:
		"""The first model: its provider, its name, and its system prompt (without what a step adds)."""
		slot = self._agent._models.primary
		return slot.provider(), slot.model, self._agent._prompt_for(slot)

	def chain(self) -> tuple[tuple[LLMProvider, str, str], ...]:
		"""Every model that may answer a step, the first first: provider, name, system prompt."""
		agent = self._agent
		return tuple((s.provider(), s.model, agent._prompt_for(s)) for s in agent._models.slots)

	def context_window(self, model: str | None = None) -> int | None:
		"""The context window a call's prompt must fit (`ModelAccess.context_window`)."""
		models = self._agent._models
		return (
			models.context_window() if model is None else self._agent._model(model).context_window()
		)

	def own(self, run: Run) -> tuple[LLMProvider, str]:
		"""The agent's models as one provider for a capability's own call (`ModelAccess.own`)."""
		agent = self._agent
		ctx = cast("RunContext", run)
		seq = ctx.reserve_events(ctx.hooks.model_call_events)
		return _OwnCall(agent, ctx, seq), agent.model

	def price(self, response: ModelResponse) -> None:
		"""Price a response of the agent's own models, part by part (`ModelAccess.price`)."""
		models = self._agent._models
		if response.usage_by_model:
			for model_id, usage in response.usage_by_model.items():
				part = models.slot(model_id)
				_cost.price_call(part.provider(), part.model, usage)
			response.usage = total_usage(response.usage_by_model.values())
			return
		slot = models.slot(response.model)
		_cost.price_call(slot.provider(), slot.model, response.usage)


class _OwnCall:
	"""The agent's models as a provider for a capability's own call (`_RunModels.own`).

	A call goes to the first model through the capabilities' ``wrap_model`` hooks; a request
	they ask for another model (``run.models.request``) is the same with that model's name.

	Args:
		agent: The agent.
		ctx: The run.
		seq: The first of the event numbers its calls' hooks use.
	"""

	__slots__ = ("_agent", "_ctx", "_seq", "name")

	def __init__(self, agent: Agent, ctx: RunContext, seq: int) -> None:
		self.name: str = agent._models.primary.provider_name or "custom"
		self._agent = agent
		self._ctx = ctx
		self._seq = seq

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send the request to the agent's first model, inside the capabilities' hooks."""
		from dataclasses import replace

		agent = self._agent
		primary = agent._models.primary

		config = request.config

		def build(model: str) -> ModelRequest:
			slot = agent._model(model)
			own = (
				agent._config_for(split_id(slot.id)[0]) if config is agent.model_config else config
			)
			return replace(request, model=slot.model, model_id=slot.id, config=own)

		request = build(primary.id)
		return await agent._send(self._ctx, primary, build, self._seq, request)


def hand_up(link: CallingRun | None, state: RunState) -> None:
	"""Add a nested run's usage, in total and per model, to its calling run's (`CallingRun`).

	Args:
		link: The calling run (None: the run is not nested).
		state: The nested run's state.
	"""
	if link is not None and state.usage.calls:  # none: nothing spent (add would count one call)
		link.usage.add(state.usage)
		add_by_model(link.usage_by_model, state.usage_by_model)


def _spent(state: RunState) -> tuple[int, int, float | None]:
	"""What a run has spent, to tell whether something before a model call spent (a summary)."""
	usage = state.usage
	return usage.calls, usage.total_tokens, usage.cost_usd


def _attachments(given: object) -> None:
	"""Refuse ``attachments`` that are not a list of `Attachment` objects (a path is no file)."""
	if isinstance(given, list | tuple) and all(type(a) is Attachment for a in given):
		return  # the usual case, checked at once
	from openmolt_core._support.docs import docs_url

	entries = given if isinstance(given, list | tuple) else None
	wrong = (
		given
		if entries is None
		else next((a for a in entries if not isinstance(a, Attachment)), None)
	)
	if wrong is None:
		return  # a list of Attachment objects (of a subclass)
	what = "attachments" if entries is None else f"attachments[{entries.index(wrong)}]"
	raise ConfigurationError(
		f"run: {what} must be {'a list of Attachment objects' if entries is None else 'an Attachment'} "
		f"(media_type, data as base64, name), got {type(wrong).__name__}; read a file into "
		"one: Attachment(media_type='application/pdf', data=base64.b64encode(Path(p)"
		f".read_bytes()).decode(), name=p) ({docs_url('guides/attachments.md')})"
	)


def _nested(history: RunState | Mapping[str, Any] | None, parent: CallingRun) -> RunState:
	"""The state a run nested in a tool call starts from: a new one gets the call's next run id.

	The id is deterministic (``<run id>.<step>.<index>``, then ``.2``...), so a call run again
	after a crash gives its runs the ids, and their calls the idempotency keys, they had.
	"""
	state = RunState() if history is None else _load(history)
	if not state.messages:
		parent.runs += 1
		nth = f".{parent.runs}" if parent.runs > 1 else ""
		state.run_id = f"{parent.run_id}.{parent.step}.{parent.index}{nth}"
	return state


def _for_user(
	history: RunState | Mapping[str, Any] | None, user: str | None, parent: CallingRun | None
) -> RunState | Mapping[str, Any] | None:
	"""The state a run starts from, acting for ``user`` (or its caller's user)."""
	if user is None:
		user = parent.user if parent is not None else None
		if user is None:
			return history
	if parent is not None and parent.user is not None and parent.user != user:
		raise ConfigurationError(_not_callers_user(parent.user, user))
	user = _user_id(user)
	state = RunState() if history is None else _load(history)
	if state.messages and state.user != user:
		raise ConfigurationError(
			f"run: this saved run acts for {state.user!r}, not {user!r}; a run keeps its user"
		)
	state.user = user
	return state


def _not_callers_user(caller: str, user: str) -> str:
	"""Why a nested run may not act for ``user`` inside a run for ``caller`` (`_for_user`)."""
	return (
		f"run: the calling run acts for {caller!r}, so a run nested in it acts for {caller!r} "
		f"too, not {user!r}: it would use {user!r}'s accounts and files for {caller!r}'s run; "
		"leave user= out (a nested run takes its caller's), or run it outside the call"
	)


def _user_id(user: str | None) -> str | None:
	if user is not None and (not isinstance(user, str) or not user.strip()):
		raise ConfigurationError("run: user must be a non-empty user id, or None for the operator")
	if user is not None:  # the key of its accounts, sessions and runs: no alias of another's
		from openmolt_core._support.userids import refused_user_id

		if refused := refused_user_id(user):
			raise ConfigurationError(f"run: {refused}")
	return user


_AS_IS = frozenset(
	{
		"messages",
		"memory",
		"ext",
		"usage",
		"usage_by_model",
		"steps",
		"seq",
		"context_tokens",
		"run_id",
		"user",
		"pending",
		"caller",
	}
)
"""The state's fields `_masked_history` leaves as they are: masked on their own, counts, ids, and
the calls it parked (they run with the arguments the model gave, which a decision is checked
against)."""


def _masked_history(state: RunState, redact: Redactor) -> None:
	"""Mask, in place, what a state brings from before and shows again.

	A state saved where a secret was not known yet is resumed where it is: what the model reads
	or a person is shown is masked (turns, memory, the input's file labels, plan, results...);
	what the run goes on to do stays as it is (`_AS_IS`).
	"""
	if not redact:
		return
	for index, message in enumerate(state.messages):
		masked = redact(message.content)
		files = [_relabeled(a, redact) for a in message.attachments]
		if masked != message.content or any(
			a is not b for a, b in zip(files, message.attachments, strict=True)
		):
			state.messages[index] = Message(message.role, masked, files)
	for key, value in state.memory.items():
		if isinstance(value, str) and value:
			state.memory[key] = redact(value)
	if state.ext:
		from openmolt_core.files import INPUT_FILES

		records = state.ext.get(INPUT_FILES)
		masked_records = redact.deep(records) if records else records
		if masked_records != records:
			state.ext[INPUT_FILES] = masked_records
	for field in dataclasses.fields(state):
		if field.name in _AS_IS:
			continue
		value = getattr(state, field.name)
		if value:
			masked = redact.deep(value)
			if masked != value:
				setattr(state, field.name, masked)


def _relabeled(attachment: Attachment, redact: Redactor) -> Attachment:
	"""An attachment with its name and media type masked (itself when they show no secret)."""
	name, media_type = attachment.name, attachment.media_type
	name = redact(name) if isinstance(name, str) and name else name
	media_type = redact(media_type) if isinstance(media_type, str) else media_type
	if name == attachment.name and media_type == attachment.media_type:
		return attachment
	return Attachment(media_type, attachment.data, name)


def _load(state: RunState | Mapping[str, Any], where: str = "history") -> RunState:
	if isinstance(state, RunState):
		return state
	if not isinstance(state, Mapping):
		raise ConfigurationError(
			f"{where} must be a saved run state (result.state, or its dict: state.to_dict()), "
			f"got {type(state).__name__}"
		)
	try:
		return RunState.from_dict(dict(state))
	except ValueError as exc:
		raise ConfigurationError(f"{where}: {exc}") from exc


class _Binder:
	"""The agent as its tool sources see it (`openmolt_core.hooks.ToolBinder`)."""

	__slots__ = ("_agent",)

	def __init__(self, agent: Agent) -> None:
		self._agent = agent

	@property
	def name(self) -> str:
		"""The agent's name."""
		return self._agent.name

	@property
	def timeout(self) -> float | None:
		"""The agent's run timeout."""
		return self._agent.timeout

	def own_tools(self) -> Mapping[str, BoundTool]:
		"""The agent's tool set now."""
		return self._agent._tools

	def sources(self) -> Sequence[str]:
		"""The names of the capabilities that list tools."""
		return [type(h.__self__).name for h in self._agent._hooks.list_tools]  # type: ignore[attr-defined]

	async def listed(self) -> list[Sequence[BoundTool]]:
		"""Ask each capability's ``list_tools`` in order."""
		return await self._agent._hooks.listed()

	def redact(self, text: str) -> str:
		"""``text`` masked by the agent's redactor."""
		return self._agent._redactor(text)

	def failed(self, state: RunState, message: str) -> Exception:
		"""The error that ends the run of ``state`` with ``message``."""
		return self._agent._failed(state, message)

	def rebind(self, tools: dict[str, BoundTool]) -> None:
		"""Take ``tools`` as the agent's tool set."""
		self._agent._rebind(tools)
