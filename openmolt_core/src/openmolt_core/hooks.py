"""Capabilities: behaviour that attaches to an agent's runs through one typed interface.

The loop knows a few primitives (a model call, a tool call, a call that parks, a resume, a run
end, the durability port, numbered events); everything else acts through a `Capability`, whose
methods the loop calls at those points. A hook no capability of an agent overrides is never
called (`Hooks` resolves the lists once per agent). The rules the loop keeps (order, nesting,
journaling, state) are docs/guides/capabilities.md's "The rules".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, ParamSpec, Protocol, TypeVar, get_args

from openmolt_core._support import lazy_exports
from openmolt_core.errors import ConfigurationError, OpenMoltError, PluginError
from openmolt_core.result import PARKED_STATUSES, ParkedStatus, RunStatus
from openmolt_core.tools import LOOP_FIELDS

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool, ToolDefinition
	from openmolt_core._support.schemafit import SchemaDialect
	from openmolt_core._support.secretset import Redactor
	from openmolt_core.commands import CallTool, Finish
	from openmolt_core.decisions import ApprovalHandler
	from openmolt_core.durability import RunPort
	from openmolt_core.envelope import Envelope, FittedSchema
	from openmolt_core.events import Event
	from openmolt_core.llm import LLMProvider, ModelConfig, ModelRequest, ModelResponse
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.tools import CallingRun, Tool

__all__ = [
	"BUILTIN",
	"AgentInfo",
	"Alongside",
	"Approve",
	"Call",
	"CallDrive",
	"CallWrap",
	"Capability",
	"CapabilityEntry",
	"FinishDecision",
	"Hooks",
	"ModelAccess",
	"ModelSend",
	"Opening",
	"Park",
	"Proceed",
	"Refuse",
	"Run",
	"RunOwner",
	"Stop",
	"ToolBinder",
	"ToolDecision",
	"ToolInside",
	"ToolRecord",
	"ToolSpec",
	"ToolStep",
	"ToolWork",
	"Words",
	"WordsDecision",
	"alongside",
	"builds",
	"built",
	"decision_from_dict",
	"decision_to_dict",
	"drive_wrapped",
	"first_answer",
	"holding",
	"tell",
	"tell_async",
	"until_stop",
]


# decisions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proceed:
	"""Go on. From `Capability.before_tool`, ``input`` replaces the call's input (None: keep it).

	Args:
		input: The input the call runs with instead, checked against the tool's input schema.
		note: Fields added to the call's result entry (what the capability records about its
			decision), masked like everything it says.
	"""

	input: Mapping[str, Any] | None = None
	note: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Refuse:
	"""Do not run this call (or accept this finish): the model reads ``reason`` and goes on.

	Args:
		reason: Why, in words the model can act on.
		entry: The whole result entry the model reads instead of the loop's; the loop then
			emits no ``error`` event.
	"""

	reason: str
	entry: Mapping[str, Any] | None = None


PARKED_BY_CAPABILITY = "capability"
"""``state.pending["kind"]`` of a step whose calls `Park` decisions parked (`openmolt_core._park`)."""


@dataclass(frozen=True, slots=True)
class Park:
	"""Stop the run before this call until someone answers (`Capability.resume` gets it).

	Args:
		message: What the run waits for, for a person (the result's ``error``).
		request: JSON the application shows or answers (kept in ``state.pending``).
		status: The run's status while it waits.
	"""

	message: str
	request: Mapping[str, Any] = field(default_factory=dict)
	status: ParkedStatus = "approval_required"


@dataclass(frozen=True, slots=True)
class Stop:
	"""End the run now: the call does not run (or the finish is replaced), ``reason`` says why.

	Args:
		reason: Why the run stops (the result's ``error``).
		status: The run's status.
		entry: The result entry the model reads for the call (or the finish) instead of the
			loop's (``"not run: the run stopped"``).
	"""

	reason: str
	status: RunStatus = "guardrail_tripped"
	entry: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Approve:
	"""Hold this call under ``rule`` until the capability that `parks` decides it (none: not run).

	Args:
		rule: Why the call waits, as the approval request names it.
		input: The input the call runs with instead (None: keep it), as for `Proceed`.
	"""

	rule: str
	input: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Alongside:
	"""From `Capability.before_first_model`: a check that runs while the first model call runs.

	Args:
		check: Returns `Stop` to end the run (the model call is cancelled), or None.
	"""

	check: Callable[[], Awaitable[Stop | None]]


@dataclass(frozen=True, slots=True)
class Opening:
	"""What a new run starts with besides the agent's own (`Capability.wrap_call` hands it over).

	Args:
		earlier: The turns before this run that its first turn shows, oldest first.
		memory: Memory the run starts from instead of the agent's, by key (``shortTerm``).
	"""

	earlier: Sequence[Mapping[str, Any]] = ()
	memory: Mapping[str, str] = field(default_factory=dict)


class RunOwner(Protocol):
	"""The agent whose run it is (an `openmolt_core.agent.Agent`), as its capabilities use it."""

	@property
	def name(self) -> str:
		"""The agent's name."""

	@property
	def on_approval_request(self) -> ApprovalHandler | None:
		"""Decides the tool calls that wait for approval (None: such a call parks the run)."""

	def first_message(
		self, input: Any, state: RunState, earlier: list[dict[str, Any]] | None = None
	) -> str:
		"""The first user turn of a run asked ``input`` (``earlier``: the turns it shows first)."""


class ToolBinder(Protocol):
	"""The agent's view a tool source gets (`Capability.refresh_tools`): list, redact, rebind."""

	@property
	def name(self) -> str:
		"""The agent's name (in errors)."""

	@property
	def timeout(self) -> float | None:
		"""The agent's run timeout in seconds, which bounds a listing too (None: no bound)."""

	def own_tools(self) -> Mapping[str, BoundTool]:
		"""The agent's tool set now, by handle (before its first listing is bound: its own)."""

	def sources(self) -> Sequence[str]:
		"""The names of the capabilities that list tools, in the order `listed` answers."""

	async def listed(self) -> list[Sequence[BoundTool]]:
		"""Ask each capability's `Capability.list_tools` in order: the tools each lists, bound."""

	def redact(self, text: str) -> str:
		"""``text`` with every secret the agent knows masked."""

	def failed(self, state: RunState, message: str) -> Exception:
		"""The error that ends the run of ``state`` with ``message`` (its state kept)."""

	def rebind(self, tools: dict[str, BoundTool]) -> None:
		"""Take ``tools`` as the agent's tool set; what was built from the old one is forgotten."""


@dataclass(frozen=True, slots=True)
class Call:
	"""A call of ``agent.run``, ``stream`` or ``resume`` that gives a capability's keyword.

	Args:
		agent: The agent called (an `openmolt_core.agent.Agent`).
		state: The run's state (a new run's has no messages before its drive starts).
		given: The value of the keyword the capability takes (`Capability.takes`).
		asked: A new run's input, or the answer a resumed run waits for; None for neither.
		resumed: Whether the call is ``agent.resume``.
	"""

	agent: RunOwner
	state: RunState
	given: Any
	asked: Any = None
	resumed: bool = False


CallDrive = Callable[["Opening | None"], Awaitable["RunResult"]]
"""``drive(opening)`` drives a call's run (`Capability.wrap_call`), a new one's first turn with
what the `Opening` adds (a resumed run's: None)."""

CallWrap = Callable[[Call, CallDrive], Awaitable["RunResult"]]
"""A capability's `Capability.wrap_call`, as `Hooks.by_keyword` keeps it."""

ToolDecision = Proceed | Refuse | Park | Stop | Approve
"""What `Capability.before_tool` answers."""

FinishDecision = Proceed | Refuse | Stop
"""What `Capability.before_finish` answers (or the `Finish` to go on with instead)."""

WordsDecision = Proceed | Refuse | Stop
"""What `Capability.before_words` answers (or the text to say instead)."""


@dataclass(frozen=True, slots=True)
class Words:
	"""Text the model wrote for a person, about to reach them (`Capability.before_words`).

	Args:
		field: ``message`` (a ``requestHumanInput``'s question), ``reason`` (a ``callTool``'s
			reason, for its approver) or ``plan`` (an ``updatePlan``'s plan).
		text: The text as the capabilities before let it through; a plan as its JSON text,
			which a rewrite must keep a plan.
		tool: For a ``reason``: the handle of the tool called; "" otherwise.
	"""

	field: Literal["message", "reason", "plan"]
	text: str
	tool: str = ""

	@property
	def command(self) -> str:
		"""The command that carries it: ``requestHumanInput``, ``callTool`` or ``updatePlan``."""
		return {"message": "requestHumanInput", "reason": "callTool"}.get(self.field, "updatePlan")


ModelSend = Callable[["LLMProvider", "ModelRequest", str], Awaitable["ModelResponse"]]
"""``send(provider, request, model)`` in place of the provider's ``generate`` (`Capability.send_model`)."""

ToolWork = Callable[[], Awaitable[dict[str, Any]]]
"""A tool call's work inside its journaled step (`Capability.wrap_tool`): returns its entry."""

ToolInside = Callable[["CallingRun", ToolWork], Awaitable[dict[str, Any]]]
"""``inside(calling, work)``: what a `Capability.wrap_tool` runs around the call's work, in its
journaled step (``calling``: the `openmolt_core.tools.CallingRun` the call's nested runs get)."""

ToolStep = Callable[[ToolInside], Awaitable[dict[str, Any]]]
"""``step(inside)`` runs a tool call's journaled step with ``inside`` in it (`Capability.wrap_tool`)."""

PROCEED = Proceed()

BUILTIN = "openmolt"
"""The integration id of built-in tools (`Capability.builtin_tools`): ``openmolt.<handle>``."""


def decision_to_dict(decision: ToolDecision) -> dict[str, Any]:
	"""A decision as JSON, for the journal (`decision_from_dict` reads it back)."""
	match decision:
		case Proceed(input=given, note=note):
			return {"proceed": None if given is None else dict(given), **_kept("note", note)}
		case Refuse(reason=reason, entry=entry):
			return {"refuse": reason, **_kept("entry", entry)}
		case Park(message=message, request=request, status=status):
			return {"park": {"message": message, "request": dict(request), "status": status}}
		case Stop(reason=reason, status=status, entry=entry):
			return {"stop": {"reason": reason, "status": status, **_kept("entry", entry)}}
		case Approve(rule=rule, input=given):
			return {"approve": {"rule": rule, "input": None if given is None else dict(given)}}
	raise TypeError(f"not a decision: {type(decision).__name__}")  # pragma: no cover


def _kept(key: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
	return {} if value is None else {key: dict(value)}


def decision_from_dict(data: Mapping[str, Any]) -> ToolDecision:
	"""Read a decision journaled by `decision_to_dict`."""
	if "proceed" in data:
		return Proceed(data["proceed"], data.get("note"))
	if "refuse" in data:
		return Refuse(str(data["refuse"]), data.get("entry"))
	if "park" in data:
		park = data["park"]
		return Park(str(park["message"]), dict(park.get("request") or {}), park["status"])
	if "approve" in data:
		approve = data["approve"]
		return Approve(str(approve["rule"]), approve.get("input"))
	stop = data["stop"]
	return Stop(str(stop["reason"]), stop["status"], stop.get("entry"))


# what a hook sees ---------------------------------------------------------------------------

_T = TypeVar("_T")
_P = ParamSpec("_P")
_Decision = TypeVar("_Decision")


class Run(Protocol):
	"""What a hook sees of a run (the loop's run context)."""

	@property
	def agent(self) -> str:
		"""The agent's name."""

	@property
	def state(self) -> RunState:
		"""The run's state (saved, resumed and journaled; ``state.ext`` holds capabilities')."""

	@property
	def port(self) -> RunPort:
		"""The durability port: ``await run.port.step(key, fn)`` journals a decision."""

	@property
	def step(self) -> int:
		"""The current step (1-based; 0 before the first model call)."""

	@property
	def tools(self) -> Mapping[str, ToolSpec]:
		"""The run's tools by handle, in the agent's order (built-in ones included)."""

	@property
	def redact(self) -> Redactor:
		"""Scrubs the agent's secrets from text (``redact(text)``, ``redact.deep(value)``)."""

	@property
	def link(self) -> CallingRun | None:
		"""The run that called this one as a tool, with what it handed down; or None."""

	@property
	def call_from_journal(self) -> bool:
		"""In `Capability.after_tool`: whether the result came from the journal (count its events)."""

	def wants(self, name: str) -> bool:
		"""Whether anything listens to the event ``name``."""

	async def emit(self, event: Event, seq: int | None = None) -> None:
		"""Emit an event of this run (numbered in order; replays number it the same)."""

	def skip_event(self) -> None:
		"""Count an event nobody listens to, so later numbers stay deterministic."""

	@property
	def models(self) -> ModelAccess | None:
		"""The agent's models (`ModelAccess`): their ids, a call's request for another of them."""


class ModelAccess(Protocol):
	"""What a capability may ask of the agent's models during a run (``run.models``)."""

	@property
	def ids(self) -> tuple[str, ...]:
		"""The agent's models (``provider:model``), the one each step asks first."""

	def request(self, model: str) -> ModelRequest:
		"""The request of the model call in progress, built for ``model``, one of `ids`.

		Raises:
			ConfigurationError: No call is in progress, or ``model`` is not the agent's.
		"""

	def fitted(self, model: str) -> FittedSchema:
		"""The reply schema fitted to ``model``'s dialect at the coming step (how to read it).

		Raises:
			ConfigurationError: ``model`` is not one of the agent's.
		"""

	@property
	def config(self) -> ModelConfig:
		"""The agent's model configuration."""

	def config_for(self, provider: str) -> ModelConfig:
		"""The agent's model configuration as a request to ``provider`` (a name) carries it."""

	def system(self) -> str:
		"""The system prompt the first model gets at the coming step."""

	def primary(self) -> tuple[LLMProvider, str, str]:
		"""The first model: its provider, its name, and its system prompt (without what a step adds)."""

	def chain(self) -> tuple[tuple[LLMProvider, str, str], ...]:
		"""Every model that may answer a step, the first first, as `primary` gives each."""

	def context_window(self, model: str | None = None) -> int | None:
		"""The tokens a step's prompt must fit in (the smallest window, or ``model``'s; None: unknown).

		Raises:
			ConfigurationError: ``model`` is not one of the agent's.
		"""

	def own(self, run: Run) -> tuple[LLMProvider, str]:
		"""The agent's models as one provider for a call of a capability's own (through `wrap_model`)."""

	def price(self, response: ModelResponse) -> None:
		"""Price a response of the agent's own models that the provider did not price."""


class ToolSpec(Protocol):
	"""What a hook sees of a tool: the one record every tool source is described by."""

	@property
	def handle(self) -> str:
		"""The handle the model calls (``integration.tool``)."""

	@property
	def input_schema(self) -> dict[str, Any]:
		"""The JSON Schema of its input."""

	@property
	def output_schema(self) -> dict[str, Any] | None:
		"""The JSON Schema of its result, or None when it names none."""

	@property
	def scopes(self) -> tuple[str, ...]:
		"""The scopes a call needs."""

	@property
	def labels(self) -> frozenset[str]:
		"""What it does with data (``private``, ``untrusted``, ``outbound``); unknown: the last two."""

	@property
	def secrets(self) -> frozenset[str]:
		"""The names of the credential keys it was bound with that hold secrets (names only)."""

	@property
	def approval(self) -> str | None:
		"""The approval rule that makes its calls wait for a decision, or None."""

	@property
	def description(self) -> str:
		"""What it does, for the model."""

	@property
	def integration_name(self) -> str:
		"""The display name of its integration (``Gmail``); the handle's prefix when it has none."""

	@property
	def integration_description(self) -> str:
		"""One line on what its integration does (empty when it has none, or says nothing)."""

	def describe(self) -> dict[str, Any]:
		"""The tool as the model reads it in a listing (handle, description, schemas, approval)."""

	@property
	def in_doubt(self) -> Literal["retry", "ask", "fail"]:
		"""What a call found started but unfinished after a crash does: ``retry``, ``ask``, ``fail``."""

	@property
	def key_lifetime(self) -> float | None:
		"""Seconds the service keeps the idempotency key its ``retry`` calls carry (None: no key)."""


class ToolRecord(ToolSpec, Protocol):
	"""A tool's record while the agent is built: what `Capability.describe_tools` may set."""

	labels: frozenset[str]
	"""What it does with data (``private``, ``untrusted``, ``outbound``)."""

	in_doubt_at_least: Literal["retry", "ask", "fail"]
	"""The laxest in-doubt policy its calls may follow (``retry``: the tool's own decides)."""

	in_doubt_default: Literal["retry", "ask", "fail"] | None
	"""Its calls' policy when the tool declares none (None: ``ask`` if ``outbound``, else ``retry``)."""


@dataclass(frozen=True, slots=True)
class AgentInfo:
	"""What a capability sees of the agent being built (`Capability.tools`, `first_turn`...).

	Args:
		name: The agent's name.
		tools: The handles of the tools the agent may call (in `Capability.tools`: so far).
		model: The model id (``provider:model``, or the provider's name).
		records: The records of those tools, in the same order; empty in `Capability.tools`.
	"""

	name: str
	tools: tuple[str, ...]
	model: str
	records: Sequence[ToolSpec] = ()


# the interface ------------------------------------------------------------------------------


class Capability:
	"""Behaviour attached to an agent's runs; override the hooks you need (each default does nothing).

	Subclass it, set ``name``, and give instances to ``create_agent(capabilities=[...])`` or
	``OpenMolt(capabilities=[...])``, or register a factory from a plugin's
	``register_capabilities`` hook so agents name it (``capabilities=["name"]``). What each hook
	is for, with examples, is docs/guides/capabilities.md ("The hooks", "The rules"). A hook's
	``run`` is the run it acts in (`Run`), ``call`` the `CallTool` and ``tool`` its `ToolSpec`.
	"""

	__slots__ = ()

	name: ClassVar[str] = ""
	"""Unique per agent (letters, digits, ``_``, ``-``): keys ``state.ext``, journal keys, events."""

	events: ClassVar[Mapping[str, type[Event]]] = {}
	"""The events it emits, by name (``agent.on(name, ...)`` accepts them)."""

	in_fingerprint: ClassVar[bool] = True
	"""Whether the agent's fingerprint names it (False: its effect on a run is journaled anyway)."""

	builtins_lead: ClassVar[bool] = False
	"""Whether its `builtin_tools` are listed before the agent's own tools, not after them."""

	journal_decisions: ClassVar[bool] = True
	"""Whether the loop journals its `before_tool` decisions (``hook:<step>:<index>:<tool>``);
	False: they are pure (or it journals them), asked after the others, outside their step."""

	first_turn_lead: ClassVar[bool] = False
	"""Whether its `first_turn` fields come right after the tools, ahead of the others' fields."""

	parks: ClassVar[str] = ""
	"""The ``state.pending`` kind its `Park` decisions park a step under ("": the loop's).

	Such a park wins over its step's others; the run goes on through this capability alone
	(`receive`, `resume`, `requests`), which also decides the calls an `Approve` holds. One
	capability per kind and agent."""

	takes: ClassVar[str] = ""
	"""The keyword of ``agent.run``, ``stream`` and ``resume`` whose calls go through its
	`wrap_call`, or "". One capability per keyword and agent."""
	model_call_events: int = 0
	"""How many numbered events its `wrap_model` may emit per model call, reserved with the
	call's (a replay skips ``wrap_model`` and numbers later events the same)."""
	model_calls: int = 1
	"""How many times, at most, its `wrap_model` sends one call on: the hooks inside it run,
	and their `model_call_events` are reserved, that many times."""

	# building the agent (no I/O) ----------------------------------------------------------

	def active_hooks(self) -> Collection[str] | None:
		"""Which run hooks its class overrides this instance needs (asked once; None: all)."""
		return None

	def tools(self, agent: AgentInfo) -> Sequence[Tool | Callable[..., Any]]:
		"""Tools (functions or `Tool` objects) it adds to ``agent``, the agent being built."""
		return ()

	def first_turn(self, agent: AgentInfo) -> Mapping[str, Any]:
		"""JSON fields added to the first user turn (a key already there is refused)."""
		return {}

	def nested_agents(self) -> Sequence[Any]:
		"""Agents it runs nested in its agent's runs, whose tools count as the run's (no I/O)."""
		return ()

	def nested_in_doubt(self, agent: Any) -> Literal["retry", "ask", "fail"] | None:
		"""The in-doubt policy of a run of ``agent`` nested in a durable run's journaled step.

		Stricter than its tools' policies, or None; the first answer that is not None counts.
		"""
		return None

	async def list_tools(self) -> Sequence[BoundTool]:
		"""Tools only known at run time, bound, listed before each run's first turn (`refresh_tools`).

		After the agent's other tools. Return the *same* sequence while they hold (a new one
		rebinds the agent); raise `IntegrationError` when they cannot be listed (no run starts).
		"""
		return ()

	def builtin_tools(self, agent: AgentInfo) -> Sequence[Tool]:
		"""Tools of the run's machinery, bound as ``openmolt.<handle>``, apart from ``agent``'s.

		Asked whenever the tool set is built; never passed to `replace_result`.
		"""
		return ()

	def builtin_approval(self, handle: str, tool: ToolDefinition) -> str | None:
		"""The rule under which its `before_tool` holds calls of ``tool`` (``openmolt.<handle>``).

		``agent.approval_rules`` lists it; the first capability that names a rule gives it.
		"""
		return None

	def fingerprint(self) -> Mapping[str, Any]:
		"""JSON entries merged into the agent's fingerprint (not the agent's own keys)."""
		return {}

	def describe_tools(self, agent: AgentInfo, tools: Sequence[ToolRecord]) -> None:
		"""Set what the records of ``agent``'s tools (allowed or not) say: labels, in-doubt policy.

		When the agent is built and when a source changes its tools; in order, each capability
		seeing what the earlier set.
		"""

	# a run ----------------------------------------------------------------------------------

	def state(self, run: Run) -> dict[str, Any]:
		"""This capability's JSON state in the run (``run.state.ext[self.name]``), made on first use."""
		mine: dict[str, Any] = run.state.ext.setdefault(self.name, {})
		return mine

	async def on_run_start(self, run: Run) -> Stop | None:
		"""A run starts or goes on (after a resume, and on replay): `Stop` ends it before anything."""
		return None

	async def before_first_model(self, run: Run) -> Stop | Alongside | None:
		"""Before a run's first model call (after `on_run_start`, outside any journaled step).

		Once per run with no model call yet that waits for nothing (again on replay); it may
		rewrite the first turn. `Stop` ends the run; `Alongside` runs a check during the call.
		"""
		return None

	async def wrap_call(self, call: Call, drive: CallDrive) -> RunResult:
		"""Around a call that gives its keyword (`takes`), in the caller's process, unjournaled.

		``drive(opening)`` starts the run's drive (call it once; an `Opening` or None); what
		the hook raises reaches the caller as it is.
		"""
		return await drive(None)

	def memory_option(self, state: RunState, memory: Any) -> Any:
		"""The memory option (``memory``: the previous answer) a drive of ``state``'s run uses."""
		return memory

	async def wrap_run(self, run: Run, drive: Callable[[], Awaitable[RunResult]]) -> RunResult:
		"""Around one drive of a run (a start, a resume, a durable execution), errors included.

		The first capability's is outermost; it returns ``await drive()``'s `RunResult`, or one.
		"""
		return await drive()

	async def on_run_end(self, run: Run, result: RunResult) -> None:
		"""The run ended (finished, parked, or stopped) with ``result``."""

	def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
		"""The tools the model may call at this step: ``handles``, or fewer, in the same order.

		Pure in ``state``; asked before each step (and for the first turn's listing), in order.
		"""
		return handles

	def why_hidden(self, state: RunState, handle: str) -> str | None:
		"""Why a call to ``handle``, which no capability left visible, is refused (first answer)."""
		return None

	async def before_step(self, run: Run) -> Stop | None:
		"""May the run take another step? `Stop` ends it (``limit_reached``: a spent budget).

		Before each step (before `before_model`, on replay too), and again before its call when
		a `before_model` or `context_exceeded` spent: decide from journaled inputs, or journal.
		"""
		return None

	def last_step(self, run: Run) -> str | None:
		"""Why the coming model call is the run's last (the model is told), or None.

		Asked after `before_model`; the first answer counts.
		"""
		return None

	def hand_down(self, run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
		"""One mapping per tool (or nothing): fields of each call's `CallingRun`, as it starts.

		Once for a concurrent batch (``tools`` in command order); not the loop's `LOOP_FIELDS`.
		``capabilities`` (a list or tuple) attach to the called run unless it has one so named.
		"""
		return ()

	async def before_model(self, run: Run) -> None:
		"""A step is about to ask the model (``run.state.messages``); outside its journaled call."""

	async def context_exceeded(self, run: Run) -> bool:
		"""The model refused the step's request as longer than its context window.

		Shrink ``run.state.messages`` and return True to ask the step once more; the first True
		ends the asking. Outside the journaled call, on replay too.
		"""
		return False

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		"""Around one model call, inside its journaled step (the first capability outermost).

		``call`` sends a request (``request.model_id``: its model) through the next hook or the
		provider; ``run.models.request(other)`` builds one for another of the agent's models.
		"""
		return await call(request)

	def fit_reply(self, envelope: Envelope, dialect: SchemaDialect) -> FittedSchema | None:
		"""The reply schema (``envelope``) fitted to a model's structured-output ``dialect``.

		No I/O; once per model and tool set; the first answer counts (none: mode ``off``).
		"""
		return None

	def send_model(self, run: Run) -> ModelSend | None:
		"""How this step sends its model calls instead of each provider's ``generate``, or None.

		Asked once per step; the first answer sends, inside every `wrap_model`.
		"""
		return None

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		"""A validated tool call is about to run (the loop journals the decision).

		Returns `Proceed` (optionally with a new input), `Refuse`, `Park`, `Stop` or `Approve`.
		"""
		return PROCEED

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		"""The step keys it may journal itself for a call of a concurrent batch (a list or tuple).

		Reserved ahead in command order, so a replay finds each under its number; a key of a
		kind a capability parks under comes before the call's ``tool`` step, the others after.
		"""
		return ()

	async def replace_result(self, run: Run, call: CallTool, tool: ToolSpec, value: Any) -> Any:
		"""What the model reads instead of ``value``, a call's successful result (or a replacement).

		Inside the journaled step; not asked for built-in tools.
		"""
		return value

	async def wrap_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, step: ToolStep
	) -> dict[str, Any]:
		"""Around a tool call's journaled step (the first capability outermost).

		``await step(inside)`` runs the step, ``inside(calling, work)`` around the call's work in
		it (not on a replay), and returns the entry to journal; the hook returns the entry read.
		"""
		return await step(_work)

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any] | Stop:
		"""A call's result ``entry``, before the model reads it (outside the journaled call).

		The last capability's first (``run.call_from_journal``: the call ran before a crash).
		Returns the entry the model reads, or `Stop` to end the run after this step.
		"""
		return entry

	def nested_result_labels(
		self, run: Run, link: CallingRun, labels: tuple[str, ...]
	) -> tuple[str, ...]:
		"""The labels of a call's result once runs nested in it ended (no I/O; answers chain).

		``link.ended``: the nested runs' last states; ``labels``: the result's so far.
		"""
		return labels

	def tool_done(self, run: Run, call: CallTool, index: int, entry: Mapping[str, Any]) -> None:
		"""A call's ``entry`` as the model reads it: update the run's state.

		After every `after_tool`, outside the journaled call, on replay too; a batch's calls in
		command order (``index``: the call's position among the step's commands).
		"""

	def new_run(self, agent: str, state: RunState) -> None:
		"""A new run's first ``state`` is made: note in it what only this process knows (no I/O).

		Saved or journaled with that state, so a replay elsewhere reads the same.
		"""

	def first_memory(
		self, agent: RunOwner, memory: Any, state: RunState
	) -> Mapping[str, str] | None:
		"""A new run's memory (``{"longTerm", "shortTerm"}``) when its ``state`` brings none.

		No I/O; before an `Opening` and `new_run`; the first answer that is not None counts.
		"""
		return None

	def memory_updated(self, run: Run, memory: str, data: str) -> None:
		"""``updateMemory`` set ``memory`` to ``data`` (outside any journaled step, on replay too)."""

	async def memory_written(self, run: Run, memory: str, index: int) -> None:
		"""Keep the update of ``memory`` by the command at ``index`` beyond the run.

		After `memory_updated`, outside any journaled step, on replay too.
		"""

	async def before_finish(self, run: Run, finish: Finish) -> FinishDecision | Finish:
		"""The model finished with a validated output (``finish``).

		Returns `Proceed`, a `Finish` to end with instead (checked against the output schema),
		`Refuse` (the model reads why and goes on) or `Stop`.
		"""
		return PROCEED

	async def before_words(self, run: Run, words: Words) -> WordsDecision | str:
		"""The model's ``words`` are about to reach a person (outside any journaled step).

		Returns `Proceed`, the text to say instead, `Refuse` (nobody is asked) or `Stop`.
		"""
		return PROCEED

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		"""A run it parked goes on with ``given`` (``agent.resume(state, given=...)``'s value).

		Once per call a `Park` parked (``parked``: its request), or once for a step parked under
		its kind (``state.pending``; ``given``: `receive`'s answer). Raise to refuse: it stays
		parked. Asked twice (first on a copy, to check): act outside the run in the next step.
		"""

	def receive(self, run: Run, parked: Mapping[str, Any], given: Any, answer: str | None) -> Any:
		"""What ``agent.resume`` delivers to a run ``parked`` under its kind, for `resume`.

		``given``: its ``decision=...``; ``answer``: its ``answer=...``. Raise to refuse.
		"""
		return given

	def requests(self, run: Run, parked: Mapping[str, Any]) -> list[Any]:
		"""The open requests of a run ``parked`` under its kind (``agent.approval_requests``)."""
		return []

	async def claim_resume(
		self, agent: str, state: RunState
	) -> Callable[[], Awaitable[None]] | None:
		"""Take a parked ``state``'s step for this ``agent.resume`` (no durable backend).

		Returns what gives it back if the resume is refused later, or None; raise
		`ConfigurationError` to refuse the resume.
		"""
		return None

	def new_root_run(self, agent: str, state: RunState) -> None:
		"""As `new_run`, before it, for a run no other run started."""

	async def refresh_tools(self, binder: ToolBinder) -> None:
		"""Ask the `list_tools` hooks again, through ``binder``, before a run or a resume."""

	def keep_tools(self, binder: ToolBinder, state: RunState, new: bool) -> None:
		"""Bind the tools a run began with (``new``: record them in ``state``) through ``binder``.

		Just before its tool set is made, no await between; raise `RunError` (the state kept)
		when one is gone or has changed.
		"""


CapabilityEntry = Capability | str | Mapping[str, Any]
"""What ``capabilities=[...]`` takes: a `Capability`, the name of one a plugin registers
(``register_capabilities``), or ``{"name": ..., "options": {...}}``."""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_KERNEL_KINDS = frozenset({"capability", "human_input"})  # the loop's own ``state.pending`` kinds
_BUILDS = ("tools", "first_turn", "builtin_tools", "fingerprint", "describe_tools")
_OVERRIDDEN: dict[type, tuple[str, ...]] = {}


def _overridden(cls: type[Capability]) -> tuple[str, ...]:
	"""The hooks a capability class overrides (worked out once per class)."""
	found = _OVERRIDDEN.get(cls)
	if found is None:
		_check_spelling(cls)
		found = _OVERRIDDEN[cls] = tuple(
			h for h in _OVERRIDABLE if getattr(cls, h) is not getattr(Capability, h)
		)
	return found


_RUN_OF: dict[type, tuple[tuple[tuple[str, str, bool], ...], bool]] = {}


def _run_hooks(cls: type[Capability]) -> tuple[tuple[tuple[str, str, bool], ...], bool]:
	"""The run hooks a class overrides, and whether it overrides `Capability.active_hooks`.

	Each hook with its `Hooks` tuple, and whether its function is named otherwise (`_Renamed`).
	"""
	found = _RUN_OF.get(cls)
	if found is None:
		overridden = _overridden(cls)
		unjournaled = not cls.journal_decisions  # asked after the others, outside their step
		found = _RUN_OF[cls] = (
			tuple(
				(
					"before_tool_unjournaled" if h == "before_tool" and unjournaled else h,
					h,
					getattr(getattr(cls, h), "__name__", h) != h,
				)
				for h in overridden
				if h in _RUN_HOOKS
			),
			"active_hooks" in overridden,
		)
	return found


class _Renamed:
	"""A hook assigned from a function of another name, named as the hook in errors and checks."""

	def __init__(self, method: Callable[..., Any], name: str) -> None:
		self.method, self.__name__ = method, name
		self.__self__ = getattr(method, "__self__", None)
		self.__module__ = getattr(method, "__module__", "")  # whose it is (`Hooks.visible`)

	def __call__(self, *args: Any) -> Any:
		return self.method(*args)


# OpenMolt's own distributions: their capabilities' spelling is tested, not checked at run time.
_OURS = tuple(
	f"openmolt_{dist}."
	for dist in ("core", "mcp", "otel", "dbos", "serve", "ui", "evals", "integrations", "providers")
)
_RETIRED = {  # hooks the loop no longer calls, and what replaces each
	"gate_step": "answer Approve(rule) from before_tool, and name its step in reserve_steps",
	"gate_reserve": "name the approval step of a call your before_tool holds in reserve_steps",
	"gate_tool": "decide the call in before_tool, as a capability that parks under its own kind",
}


def _check_spelling(cls: type[Capability], *, near: bool | None = None) -> None:
	"""Refuse a class with a hook the loop would miss (misspelt, retired) or misuse (sync, async).

	``near`` compares its other public methods' names with the hooks' (default: for a class of
	another distribution than OpenMolt's own, whose are tested once instead).
	"""
	import inspect

	known = {n for n in dir(Capability) if not n.startswith("_")}
	ours = cls.__module__.startswith(_OURS) if near is None else not near
	for klass in cls.__mro__:
		if klass is Capability or not issubclass(klass, Capability):
			continue
		for attr, value in vars(klass).items():
			if attr in _RETIRED and callable(value):
				raise ConfigurationError(
					f"capabilities: {cls.__name__}.{attr} is a retired hook the loop no longer "
					f"calls; {_RETIRED[attr]}"
				)
			if attr in known and inspect.isfunction(value):
				wants = inspect.iscoroutinefunction(getattr(Capability, attr))
				if wants != inspect.iscoroutinefunction(value):
					how = "async def" if wants else "def (not async: the loop does not await it)"
					raise ConfigurationError(
						f"capabilities: {cls.__name__}.{attr} must be written {how}, as "
						f"Capability.{attr} is"
					)
			if ours or attr.startswith("_") or attr in known or not callable(value):
				continue
			import difflib

			close = difflib.get_close_matches(attr, known, n=1, cutoff=0.85)
			if close:
				raise ConfigurationError(
					f"capabilities: {cls.__name__}.{attr} is not a hook, so the loop never calls "
					f"it; did you mean {close[0]!r}? (a helper of its own: start its name with _)"
				)


def _active(cap: Capability) -> Collection[str] | None:
	"""``cap.active_hooks()``, checked: a misspelt hook would leave the hook off without a word."""
	active = cap.active_hooks()
	if active is None:
		return None
	if isinstance(active, str) or not isinstance(active, Collection):
		raise ConfigurationError(
			f"capabilities: {type(cap).__name__}.active_hooks() returned "
			f"{type(active).__name__}; return a set of hook names, or None for all of them"
		)
	unknown = sorted(str(h) for h in active if not (isinstance(h, str) and h in _RUN_HOOKS))
	if unknown:
		raise ConfigurationError(
			f"capabilities: {type(cap).__name__}.active_hooks() names {unknown}, which are not "
			f"run hooks; name among: {', '.join(_RESOLVED)}"
		)
	return active


def builds(capability: Capability, hook: str) -> bool:
	"""Whether a capability overrides a building hook (``tools``, ``first_turn``...)."""
	return hook in _overridden(type(capability))


_BUILT: dict[str, tuple[type, str]] = {
	"tools": (Sequence, "a list of tools (functions or Tool objects)"),
	"builtin_tools": (Sequence, "a list of Tool objects"),
	"first_turn": (Mapping, "a dict of JSON fields"),
	"fingerprint": (Mapping, "a dict of JSON entries"),
}


def built(capability: Capability, hook: str, *args: Any) -> Any:
	"""Ask a capability's building hook ``hook`` (``tools``, ``first_turn``...) with ``args``.

	Raises:
		PluginError: The hook raised (not an `OpenMoltError`), naming the capability and hook.
		TypeError: The hook answered something its contract does not allow.
	"""
	method = getattr(capability, hook)
	try:
		answer = method(*args)
	except Exception as exc:
		raise _failed(method, exc, hook)  # noqa: B904  # it chains the cause
	kind, expected = _BUILT[hook]
	if not isinstance(answer, kind) or isinstance(answer, str):
		raise _wrong(method, answer, expected, hook)
	return answer


def _fits(answer: object) -> bool:
	from openmolt_core.envelope import FittedSchema

	return isinstance(answer, FittedSchema)


class Hooks:
	"""An agent's capabilities, with each hook's list resolved once (only overriding ones).

	Args:
		capabilities: In the order they run.

	Raises:
		ConfigurationError: A capability is not one, has no valid name, or two share a name.
	"""

	# One tuple per run hook (`_RESOLVED`): the bound methods of the capabilities that override
	# it, in the order they run (`after_tool`: the last capability's first). A hook the loop asks
	# one way is typed by its signature (tests/core/test_hooks_dispatch.py) and asked through
	# `tell`, `tell_async`, `until_stop` or `first_answer`; the others through the methods below.
	list_tools: _Listed
	memory_option: _Listed
	wrap_run: _Listed
	on_run_start: _UntilStop[[Run]]
	before_first_model: _Listed
	on_run_end: _TellAsync[[Run, RunResult]]
	before_step: _UntilStop[[Run]]
	last_step: _First[[Run], str]
	hand_down: _Listed
	visible_tools: _Listed
	why_hidden: _First[[RunState, str], str]
	before_model: _TellAsync[[Run]]
	context_exceeded: _Listed
	wrap_model: _Listed
	send_model: _First[[Run], ModelSend]
	fit_reply: _First[[Envelope, SchemaDialect], FittedSchema]
	before_tool: _Listed
	reserve_steps: _Listed
	replace_result: _Listed
	wrap_tool: _Listed
	after_tool: _Listed
	tool_done: _Tell[[Run, CallTool, int, Mapping[str, Any]]]
	nested_result_labels: _Listed
	nested_in_doubt: _First[[Any], Literal["retry", "ask", "fail"]]
	new_run: _Tell[[str, RunState]]
	first_memory: _First[[RunOwner, Any, RunState], Mapping[str, str]]
	memory_updated: _Tell[[Run, str, str]]
	memory_written: _TellAsync[[Run, str, int]]
	before_finish: _Listed
	before_words: _Listed
	claim_resume: _Listed
	new_root_run: _Tell[[str, RunState]]
	refresh_tools: _Listed
	keep_tools: _Tell[[ToolBinder, RunState, bool]]
	describe_tools: _Tell[[AgentInfo, Sequence[ToolRecord]]]

	def __init__(self, capabilities: Sequence[Capability] = ()) -> None:
		# No __slots__: a dict copies in one call (`adding`), on the path of a new OpenMolt's
		# first agent.
		self.__dict__.update(_EMPTY)
		self.capabilities: tuple[Capability, ...] = ()
		self.by_name: dict[str, Capability] = {}
		self.by_kind: dict[str, Capability] = {}
		"""The capabilities that park steps under a kind of their own (`Capability.parks`)."""
		self.by_keyword: dict[str, CallWrap] = {}
		"""The `Capability.wrap_call` of each capability that takes a keyword (`Capability.takes`)."""
		self._events: frozenset[str] | None = None  # event_names, once asked
		self._narrowed: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # checked last
		self.model_call_events: int = 0
		"""The event numbers the `Capability.wrap_model` hooks take per model call, summed (each
		hook's times the `Capability.model_calls` of the hooks around it)."""
		self._calls: int = 1  # how many times a hook added now runs per model call, at most
		self.before_tool_unjournaled: tuple[
			Callable[[Run, CallTool, ToolSpec], Awaitable[ToolDecision]], ...
		] = ()
		"""The `Capability.before_tool` hooks of capabilities that do not `journal_decisions`."""
		self._extend(capabilities)

	def adding(self, *capabilities: Capability) -> Hooks:
		"""These hooks and more capabilities', after them, in order; these stay as they are."""
		new = Hooks.__new__(Hooks)
		new.__dict__.update(self.__dict__)
		new.by_name = dict(self.by_name)
		new.by_kind = dict(self.by_kind)
		new.by_keyword = dict(self.by_keyword)
		new._extend(capabilities)
		return new

	def _extend(self, capabilities: Sequence[Capability]) -> None:
		found: dict[str, list[Callable[..., Any]]] = {}  # each hook's tuple is built once
		for cap in capabilities:
			self._add(cap)
			hooks, asks = _run_hooks(type(cap))
			active = _active(cap) if asks else None
			for slot, hook, renamed in hooks:
				if active is None or hook in active:
					method = getattr(cap, hook)
					found.setdefault(slot, []).append(_Renamed(method, hook) if renamed else method)
		for slot, methods in found.items():
			if slot == "after_tool":  # they bracket the call: the last capability's first
				self.after_tool = (*reversed(methods), *self.after_tool)
			else:
				setattr(self, slot, (*getattr(self, slot), *methods))

	def _add(self, cap: Capability) -> None:
		if not isinstance(cap, Capability):
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__} is not a Capability; subclass "
				"openmolt.Capability (or name a registered capability)"
			)
		cls = type(cap)
		name = cls.name
		if cap.name != name:  # the state, the hooks and the tools' prefix would disagree
			raise ConfigurationError(
				f"capabilities: {cls.__name__} sets its name on the instance ({cap.name!r}); set "
				f"it on the class instead (name = {cap.name!r}), where the loop reads it"
			)
		if not isinstance(name, str) or not _NAME.fullmatch(name):
			raise ConfigurationError(
				f"capabilities: {cls.__name__}.name must be a name of letters, digits, '_' and "
				f"'-' starting with a letter (got {name!r})"
			)
		if name in self.by_name:
			raise ConfigurationError(
				f"capabilities: two capabilities are named {name!r}; a name is unique per "
				"agent (it keys the run's state and journal)"
			)
		if cls.events:
			self._check_events(cap)
		if kind := cls.parks:
			if kind in _KERNEL_KINDS or kind in self.by_kind:
				taken = self.by_kind.get(kind)
				by = f"capability {type(taken).name!r}" if taken is not None else "the loop"
				raise ConfigurationError(
					f"capabilities: {cls.__name__} parks steps under kind {kind!r}, which {by} "
					"already uses; a kind names one capability per agent"
				)
			self.by_kind[kind] = cap
		if keyword := cls.takes:
			if keyword in self.by_keyword:
				raise ConfigurationError(
					f"capabilities: {cls.__name__} takes the keyword {keyword!r}, which capability "
					f"{_named(self.by_keyword[keyword])!r} already takes; a keyword names one "
					"capability per agent"
				)
			self.by_keyword[keyword] = cap.wrap_call
		events, calls = cap.model_call_events, cap.model_calls
		if type(events) is not int or events < 0:
			raise ConfigurationError(
				f"capabilities: {cls.__name__}.model_call_events must be a whole number of "
				f"events, 0 or more (got {events!r})"
			)
		if type(calls) is not int or calls < 1:
			raise ConfigurationError(
				f"capabilities: {cls.__name__}.model_calls must be a whole number of calls, 1 or "
				f"more (got {calls!r})"
			)
		self.model_call_events += events * self._calls
		self._calls *= calls
		self.by_name[name] = cap
		self.capabilities += (cap,)
		self._events = None

	def _check_events(self, cap: Capability) -> None:
		# A registered name is what handlers, observers, the run store and the viewer go by.
		from openmolt_core.events import EVENT_NAMES, register_events

		cls, taken = type(cap), self.event_names()
		for event in cls.events:
			if not isinstance(event, str) or not event:
				raise ConfigurationError(
					f"capabilities: {cls.__name__}.events must map event names to event classes "
					f"(got the key {event!r})"
				)
			by = "the loop" if event in EVENT_NAMES else None
			if event in taken:
				other = next(c for c in self.capabilities if event in type(c).events)
				by = f"capability {type(other).name!r}"
			if by is not None:
				raise ConfigurationError(
					f"capabilities: {cls.__name__} registers the event {event!r}, which {by} "
					f"already emits; name yours after the capability "
					f"('{cls.name}:{event.rpartition(':')[2]}')"
				)
		register_events(cls.name, cls.events)  # readers of stored events ask it

	def __bool__(self) -> bool:
		return bool(self.capabilities)

	def event_names(self) -> frozenset[str]:
		"""The event names the capabilities register."""
		found = self._events
		if found is None:  # agents that share these hooks ask once
			found = self._events = frozenset(n for c in self.capabilities for n in type(c).events)
		return found

	async def first_model(self, run: Run) -> tuple[Stop | None, list[Alongside]]:
		"""Ask each `Capability.before_first_model` in order, until the first `Stop`.

		Returns the `Stop` (or None) and the checks to run alongside the first model call.
		"""
		checks: list[Alongside] = []
		for hook in self.before_first_model:
			answer = await _await(hook, run)
			if isinstance(answer, Stop):
				return _checked(hook, answer), []
			if isinstance(answer, Alongside):
				if not callable(answer.check):
					raise _wrong(hook, answer, _ALONGSIDE)
				checks.append(Alongside(functools.partial(_watching, hook, answer.check)))
			elif answer is not None:
				raise _wrong(hook, answer, "Stop(reason), Alongside(check) or None")
		return None, checks

	def memory_start(self, agent: RunOwner, memory: Any, state: RunState) -> dict[str, str] | None:
		"""A new run's memory: a copy (the run updates it in place) of `first_memory`'s answer."""
		answer = first_answer(self.first_memory, agent, memory, state)
		return None if answer is None else dict(answer)

	def memory_of(self, state: RunState, memory: Any) -> Any:
		"""The agent's memory option through each `Capability.memory_option`, in order."""
		for hook in self.memory_option:
			memory = _ask(hook, state, memory)
		return memory

	async def listed(self) -> list[Sequence[BoundTool]]:
		"""Ask each `Capability.list_tools` in order: the tools each lists, bound."""
		from openmolt_core._binding import BoundTool

		lists: list[Sequence[BoundTool]] = []
		for hook in self.list_tools:
			listed = await _await(hook)
			how = "a list of bound tools (openmolt_core._binding.bind_tools binds them)"
			if not isinstance(listed, Sequence):
				raise _wrong(hook, listed, how)
			bad = next((t for t in listed if not isinstance(t, BoundTool)), None)
			if bad is not None:
				raise _wrong(hook, bad, how)
			lists.append(listed)
		return lists

	def result_labels(self, run: Run, link: CallingRun, labels: tuple[str, ...]) -> tuple[str, ...]:
		"""Each `Capability.nested_result_labels` in order, each given the labels so far."""
		for hook in self.nested_result_labels:
			labels = _ask(hook, run, link, labels)
			if not (isinstance(labels, tuple) and all(isinstance(x, str) for x in labels)):
				raise _wrong(hook, labels, "a tuple of label names")
		return labels

	def handed(self, run: Run, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
		"""Each `Capability.hand_down` answer, merged per call (``capabilities``: each instance once)."""
		out: list[dict[str, Any]] = [{} for _ in tools]
		for hook in self.hand_down:
			answers = _ask(hook, run, tools)
			if isinstance(answers, Sequence) and not answers:  # most calls: nothing to hand down
				continue
			if not (
				isinstance(answers, Sequence)
				and len(answers) == len(tools)
				and all(isinstance(a, Mapping) for a in answers)
			):
				raise _wrong(hook, answers, "one dict of CallingRun fields per tool, or ()")
			for merged, answer in zip(out, answers, strict=False):
				if taken := sorted(LOOP_FIELDS & answer.keys()):
					raise _wrong(hook, answers, f"fields the loop does not set (not {taken})")
				if not isinstance(answer.get("capabilities", ()), list | tuple):  # no set: ordered
					raise _wrong(hook, answers, "'capabilities' as a list or tuple, in order")
				# Each instance once, by identity (a capability need not be hashable).
				both = (*merged.get("capabilities", ()), *answer.get("capabilities", ()))
				caps = tuple({id(c): c for c in both}.values())
				merged.update(answer, **({"capabilities": caps} if caps else {}))
		return out

	async def shrunk(self, run: Run) -> bool:
		"""Ask each `Capability.context_exceeded` in order, until one shrank the run's context."""
		for hook in self.context_exceeded:
			answer = await _await(hook, run)
			if not isinstance(answer, bool):
				raise _wrong(hook, answer, "True (the context shrank) or False")
			if answer:
				return True
		return False

	async def decide_tool(
		self,
		run: Run,
		call: CallTool,
		tool: ToolSpec,
		*,
		journaled: bool = True,
		held: str | None = None,
	) -> tuple[str, ToolDecision, str | None, Mapping[str, Any] | None]:
		"""Ask each `Capability.before_tool` in order; the first Refuse, Park or Stop wins.

		A `Proceed` or `Approve` hands its input to the next capability (its note is kept; an
		`Approve` holds the call under its rule: ``run.held``, `holding`). ``journaled``: ask the
		capabilities whose decisions the loop journals, or the others; ``held``: the rules the
		call is held under so far (the journaled capabilities').

		Returns:
			The name of the capability that decided (for a `Proceed`: the last that changed the
			input or held the call, or ""), the decision (with the input to run and the notes),
			the rules that hold the call, and its new input (None: unchanged).
		"""
		by, new = "", None
		note: dict[str, Any] = {}
		token = None if held is None else _HELD.set(held)
		try:
			for hook in self.before_tool if journaled else self.before_tool_unjournaled:
				answer = await _await(hook, run, call, tool)
				if answer is PROCEED:  # the common answer: nothing to check or keep
					continue
				if not isinstance(answer, (Proceed, Refuse, Park, Stop, Approve)):
					raise _wrong(
						hook,
						answer,
						"Proceed(), Refuse(reason), Park(message), Stop(reason) or Approve(rule)",
					)
				_checked(hook, answer)
				if not isinstance(answer, Proceed | Approve):
					return _named(hook), answer, held, new
				if isinstance(answer, Approve):
					held, by = "; ".join(r for r in (held, answer.rule) if r) or None, _named(hook)
					if token is None:
						token = _HELD.set(held)
					else:
						_HELD.set(held)
				else:
					note.update(answer.note or {})
				if answer.input is not None:
					call = call.model_copy(update={"input": dict(answer.input)})
					by, new = _named(hook), answer.input
		finally:
			if token is not None:
				_HELD.reset(token)
		if new is None and not note:
			return by, PROCEED, held, None
		return by, Proceed(new, note or None), held, new

	def ahead(self, run: Run, call: CallTool, tool: ToolSpec) -> tuple[list[str], list[str]]:
		"""The steps the capabilities may journal themselves for a call (`reserve_steps`).

		Returns:
			Those of a kind a capability parks under (reserved before the call's ``tool`` step),
			and the others; each in the order named.
		"""
		keys: list[str] = []
		for hook in self.reserve_steps:
			named = _ask(hook, run, call, tool)
			# Ordered: the port numbers the steps in the order named, and a set's order of text
			# changes from one process to the next, where a recovered run reserves them again.
			if not isinstance(named, Sequence) or isinstance(named, str):
				raise _wrong(hook, named, "a list of step keys (text), in a fixed order (no set)")
			if not all(isinstance(k, str) for k in named):
				raise _wrong(hook, named, "a list of step keys (text)")
			keys.extend(named)
		kinds = self.by_kind
		if not kinds:
			return [], keys
		deciding = [key for key in keys if key.partition(":")[0] in kinds]
		return deciding, [key for key in keys if key.partition(":")[0] not in kinds]

	async def decide_finish(self, run: Run, finish: Finish) -> tuple[Finish, FinishDecision]:
		"""Ask each `Capability.before_finish` in order (a `Finish` answered replaces the finish).

		Returns the finish to end with, and the first decision that is not `Proceed` (or it).
		"""
		from openmolt_core.commands import Finish

		for hook in self.before_finish:
			answer = await _await(hook, run, finish)
			if isinstance(answer, Finish):
				finish = answer
			elif isinstance(answer, Refuse | Stop):
				return finish, _checked(hook, answer)
			elif not isinstance(answer, Proceed):  # never taken for a yes: it may be a guard's no
				raise _wrong(hook, answer, "Proceed(), a Finish, Refuse(reason) or Stop(reason)")
		return finish, PROCEED

	async def decide_words(self, run: Run, words: Words) -> tuple[str, WordsDecision]:
		"""Ask each `Capability.before_words` in order (a text answered replaces the words).

		Returns the text to say, and the first decision that is not `Proceed` (or `Proceed`).
		"""
		for hook in self.before_words:
			answer = await _await(hook, run, words)
			if isinstance(answer, str):
				if answer != words.text:
					words = replace(words, text=answer)
			elif isinstance(answer, Refuse | Stop):
				return words.text, _checked(hook, answer)
			elif not isinstance(answer, Proceed) or answer.input is not None:  # maybe a guard's no
				how = "Proceed(), the text to say, Refuse(reason) or Stop(reason)"
				raise _wrong(hook, answer, how)
		return words.text, PROCEED

	async def after(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> tuple[dict[str, Any], Stop | None]:
		"""Pass a result entry through each `Capability.after_tool`, last first.

		Returns the entry the model reads, and the first `Stop` a capability answered.
		"""
		stopped = None
		for hook in self.after_tool:
			answer = await _await(hook, run, call, tool, entry)
			if isinstance(answer, Stop):
				stopped = stopped or _checked(hook, answer)
				named = {"tool": entry["tool"]} if "tool" in entry else {}
				answer = dict(answer.entry or {**named, "ok": False, "error": WITHHELD})
			elif not isinstance(answer, dict):
				raise _wrong(
					hook, answer, "the entry (a dict: the one given, or a new one) or Stop"
				)
			entry = answer
		return entry, stopped

	def visible(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
		"""The tools callable at this step: ``handles`` through each `Capability.visible_tools`."""
		for hook in self.visible_tools:
			given = handles
			handles = _ask(hook, state, given)
			if handles is given:
				continue
			if type(handles) is not tuple:
				if not isinstance(handles, Sequence) or isinstance(handles, str):
					raise _wrong(hook, handles, "the handles it was given, or fewer, as a tuple")
				handles = tuple(handles)
			if hook.__module__.startswith("openmolt_core."):
				continue  # the built-in ones (offload, tool search) only filter what they get
			last = self._narrowed  # most steps ask with the same tuples: checked once
			if not (last[0] is given and last[1] is handles):
				if extra := set(handles) - set(given):  # a tool it was not given, or hidden
					how = f"only handles it was given (not {', '.join(sorted(extra))})"
					raise _wrong(hook, handles, how)
				self._narrowed = (given, handles)
		return handles

	async def replaced(self, run: Run, call: CallTool, tool: ToolSpec, value: Any) -> Any:
		"""A result through each capability's `Capability.replace_result`, in order."""
		for hook in self.replace_result:
			value = await _await(hook, run, call, tool, value)
		return value

	async def tool_step(
		self, run: Run, call: CallTool, tool: ToolSpec, step: ToolStep
	) -> dict[str, Any]:
		"""``step`` (`ToolStep`) of ``call`` in each `Capability.wrap_tool`, the first outermost."""
		for hook in reversed(self.wrap_tool):
			step = functools.partial(_tool_layer, hook, run, call, tool, step)
		return await step(_work)

	def wrap(
		self, run: Run, send: Callable[[ModelRequest], Awaitable[ModelResponse]]
	) -> Callable[[ModelRequest], Awaitable[ModelResponse]]:
		"""``send`` wrapped in every `Capability.wrap_model`, the first capability outermost."""
		for hook in reversed(self.wrap_model):
			send = functools.partial(_wrapped, hook, run, send)
		return send

	async def claimed(self, agent: str, state: RunState) -> Callable[[], Awaitable[None]] | None:
		"""Ask each `Capability.claim_resume`: what gives back every claim, or None.

		A refusal gives back the claims taken before it, then raises.
		"""
		releases: list[Callable[[], Awaitable[None]]] = []

		async def give_back() -> None:  # the last taken first
			for release in reversed(releases):
				await release()

		try:
			for hook in self.claim_resume:
				release = await _await(hook, agent, state)
				if release is not None:
					releases.append(release)
		except BaseException:
			await give_back()
			raise
		return give_back if releases else None

	async def refreshed(self, binder: ToolBinder) -> None:
		"""Have each `Capability.refresh_tools` list the tools known at run time (errors pass)."""
		for hook in self.refresh_tools:
			await hook(binder)


def _ask(hook: Callable[..., _T], *args: Any) -> _T:
	"""``hook(*args)``: what it raises becomes the error that ends the run (`_failed`)."""
	try:
		return hook(*args)
	except Exception as exc:
		raise _failed(hook, exc)  # noqa: B904  # it chains the cause


async def _await(hook: Callable[..., Awaitable[_T]], *args: Any) -> _T:
	"""``await hook(*args)``, what it raises as for `_ask`."""
	try:
		return await hook(*args)
	except Exception as exc:
		raise _failed(hook, exc)  # noqa: B904  # it chains the cause


_Listed = tuple[Callable[..., Any], ...]
"""A hook's resolved tuple in `Hooks`: the bound methods of the capabilities that override it."""

# The hook tuples the loop asks one way, typed by the hook's own signature (`Hooks`).
_Tell = tuple[Callable[_P, None], ...]
_TellAsync = tuple[Callable[_P, Awaitable[None]], ...]
_UntilStop = tuple[Callable[_P, Awaitable[Stop | None]], ...]
_First = tuple[Callable[_P, _T | None], ...]


def tell(hooks: _Tell[_P], *args: _P.args, **kwargs: _P.kwargs) -> None:
	"""Call each hook in order (``tell(hooks.tool_done, run, call, index, entry)``)."""
	for method in hooks:
		try:  # inline, not through `_ask`: a hot path (a tool call, a step)
			method(*args, **kwargs)
		except Exception as exc:
			raise _failed(method, exc)  # noqa: B904  # it chains the cause


async def tell_async(hooks: _TellAsync[_P], *args: _P.args, **kwargs: _P.kwargs) -> None:
	"""Await each hook in order."""
	for method in hooks:
		try:
			await method(*args, **kwargs)
		except Exception as exc:
			raise _failed(method, exc)  # noqa: B904  # it chains the cause


async def until_stop(hooks: _UntilStop[_P], *args: _P.args, **kwargs: _P.kwargs) -> Stop | None:
	"""Await each hook in order until one answers `Stop` (checked), or None."""
	for method in hooks:
		answer = await _await(method, *args)  # positional, as the loop gives them
		if answer is not None:
			if not isinstance(answer, Stop):
				raise _wrong(method, answer, "Stop(reason) or None")
			return _checked(method, answer)
	return None


def first_answer(hooks: tuple[Callable[_P, _T], ...], *args: _P.args, **kwargs: _P.kwargs) -> _T:
	"""The first answer that is not None (checked: `_ANSWERS`), or None."""
	for method in hooks:
		answer = _ask(method, *args)  # positional, as the loop gives them
		if answer is not None:
			ok, expected = _ANSWERS[method.__name__]
			if not ok(answer):
				raise _wrong(method, answer, expected)
			return answer
	return None  # type: ignore[return-value]  # _T holds None: the hooks answer `X | None`


_RESOLVED = tuple(Hooks.__annotations__)
"""The hooks `Hooks` resolves into a tuple each (its annotations, above)."""
_RUN_HOOKS = frozenset(_RESOLVED)
_EMPTY = dict.fromkeys(_RESOLVED, ())
"""A new `Hooks`' tuples: none of its hooks has a method yet."""
_OVERRIDABLE = tuple(dict.fromkeys((*_RESOLVED, *_BUILDS, "active_hooks")))
"""What `_overridden` looks for in a capability class."""
_ANSWERS: dict[str, tuple[Callable[[object], bool], str]] = {
	"why_hidden": (lambda a: isinstance(a, str), "the reason as text, or None"),
	"last_step": (lambda a: isinstance(a, str), "the reason as text, or None"),
	"nested_in_doubt": (lambda a: a in ("retry", "ask", "fail"), "'retry', 'ask', 'fail' or None"),
	"send_model": (callable, "an async send(provider, request, model), or None"),
	"fit_reply": (_fits, "a FittedSchema, or None"),
	"first_memory": (
		lambda a: isinstance(a, Mapping) and all(isinstance(x, str) for x in (*a, *a.values())),
		"a mapping of memory texts by key, or None",
	),
}
"""What each `_First` hook may answer (besides None), and the fix its error names."""


# the wrap hooks: each nests around what it wraps, the first capability's outermost -------------


class _Through:
	"""What a wrap hook calls on (the next hook or the loop), noting the errors it passes up."""

	__slots__ = ("inner", "raised")

	def __init__(self, inner: Callable[..., Awaitable[Any]]) -> None:
		self.inner = inner
		self.raised: list[BaseException] = []

	async def __call__(self, *args: Any) -> Any:
		try:
			return await self.inner(*args)
		except BaseException as exc:
			self.raised.append(exc)
			raise


async def _around(
	hook: Callable[..., Awaitable[Any]],
	name: str,
	run: Run,
	inner: Callable[..., Awaitable[Any]],
	kind: type[_T],
	expected: str,
	*given: Any,
) -> _T:
	"""One wrap hook (``name``) around ``inner``; what ``inner`` raised through it passes as it came.

	What the hook raises of its own names its capability; an answer that is no ``kind`` is refused.
	"""
	through = _Through(inner)
	try:
		answer = await hook(run, *given, through)
	except Exception as exc:
		if any(e is exc for e in through.raised):  # from what it wraps, not its own
			raise
		raise _failed(hook, exc, name)  # noqa: B904  # it chains the cause
	if not isinstance(answer, kind):
		raise _wrong(hook, answer, expected)
	return answer


def drive_wrapped(
	hooks: Hooks, run: Run, drive: Callable[[], Awaitable[RunResult]]
) -> Callable[[], Awaitable[RunResult]]:
	"""``drive`` wrapped in every `Capability.wrap_run`, the first capability outermost."""
	from openmolt_core.result import RunResult

	how = "the RunResult of drive(), or one of its own"
	for hook in reversed(hooks.wrap_run):
		drive = functools.partial(_around, hook, "wrap_run", run, drive, RunResult, how)
	return drive


async def _wrapped(
	hook: Callable[..., Awaitable[ModelResponse]],
	run: Run,
	inner: Callable[[ModelRequest], Awaitable[ModelResponse]],
	request: ModelRequest,
) -> ModelResponse:
	"""One `Capability.wrap_model` around ``inner`` (`Hooks.wrap`)."""
	from openmolt_core.llm import ModelResponse

	if request.model_id is not None:  # a request the hook builds anew stays for that model
		inner = functools.partial(_for_model, request.model_id, inner)
	how = "the ModelResponse of call(request), or one of its own"
	return await _around(hook, "wrap_model", run, inner, ModelResponse, how, request)


def _for_model(
	model_id: str, inner: Callable[[ModelRequest], Awaitable[ModelResponse]], request: ModelRequest
) -> Awaitable[ModelResponse]:
	"""Send ``request``; one a hook built anew, naming no model, is for ``model_id`` (its own)."""
	if request.model_id is None:
		request = replace(request, model_id=model_id)
	return inner(request)


async def _tool_layer(
	hook: Callable[..., Awaitable[dict[str, Any]]],
	run: Run,
	call: CallTool,
	tool: ToolSpec,
	step: ToolStep,
	outer: ToolInside,
) -> dict[str, Any]:
	"""One `Capability.wrap_tool` around ``step`` (`Hooks.tool_step`), within the hooks' around it.

	``outer`` is what those hooks run inside the step; this one's ``inside`` runs within it.
	"""
	how = "the entry (a dict) that await step(inside) returned, or one of its own"
	inner = functools.partial(_inside, step, outer)
	return await _around(hook, "wrap_tool", run, inner, dict, how, call, tool)


def _inside(
	step: ToolStep, outer: ToolInside, inside: ToolInside | None = None
) -> Awaitable[dict[str, Any]]:
	"""``step(inside)`` as a hook calls it, ``inside`` run within ``outer`` (none: `_work`)."""
	if inside is not None and outer is not _work:
		inside = functools.partial(_within, outer, inside)
	return step(inside or outer)


async def _within(
	outer: ToolInside, inner: ToolInside, calling: CallingRun, work: ToolWork
) -> dict[str, Any]:
	"""``inner`` run inside ``outer`` (the hook around it), around the call's work."""
	return await outer(calling, functools.partial(inner, calling, work))


async def _work(calling: CallingRun, work: ToolWork) -> dict[str, Any]:
	"""The `ToolInside` that only runs the work (a `Capability.wrap_tool` that adds nothing)."""
	return await work()


# the errors a capability's mistakes end in ---------------------------------------------------


def _named(hook: Callable[..., Any]) -> str:
	"""The name of the capability a resolved hook (a bound method) belongs to."""
	name: str = getattr(type(getattr(hook, "__self__", None)), "name", "") or "?"
	return name


def _failed(hook: Callable[..., Any], exc: Exception, called: str = "") -> Exception:
	"""What a hook (``called``) raised, as the error that ends the run.

	An `OpenMoltError` passes as it is; anything else becomes a `PluginError` naming the
	capability and the hook.
	"""
	if isinstance(exc, OpenMoltError):
		return exc
	name = _named(hook)
	error = PluginError(
		f"its {called or getattr(hook, '__name__', 'a')} hook raised {type(exc).__name__}: {exc}; "
		f"fix the capability {name!r} (or what it calls), or leave it out of the agent's "
		"capabilities",
		plugin=f"capabilities:{name}",
	)
	error.__cause__ = exc
	return error


def _wrong(hook: Callable[..., Any], answer: object, expected: str, called: str = "") -> TypeError:
	"""The error for a hook that answered what its contract does not allow, naming the fix."""
	return TypeError(
		f"capability {_named(hook)!r}: {called or getattr(hook, '__name__', 'a hook')} returned "
		f"{type(answer).__name__}; return {expected}"
	)


_PARKS = tuple(sorted(PARKED_STATUSES))
_STOPS = tuple(s for s in get_args(RunStatus) if s not in PARKED_STATUSES)


def _checked(hook: Callable[..., Any], decision: _Decision) -> _Decision:
	"""``decision``, once its fields are what the loop can save and report (else a TypeError)."""
	problem = ""
	match decision:
		case Refuse(reason=reason, entry=entry) | Stop(reason=reason, entry=entry):
			if not isinstance(reason, str):
				problem = f"a reason that is a {type(reason).__name__}; give text"
			elif entry is not None and not isinstance(entry, Mapping):
				problem = f"an entry that is a {type(entry).__name__}; give a dict or None"
			elif isinstance(decision, Stop) and decision.status not in _STOPS:
				problem = f"status {decision.status!r}; give one of {', '.join(_STOPS)}"
		case Park(message=message, request=request, status=status):
			if not isinstance(message, str):
				problem = f"a message that is a {type(message).__name__}; give text"
			elif not isinstance(request, Mapping):
				problem = f"a request that is a {type(request).__name__}; give a dict of JSON"
			elif status not in _PARKS:
				problem = f"status {status!r}; give one of {', '.join(_PARKS)}"
		case Proceed(input=given) | Approve(input=given):
			if given is not None and not isinstance(given, Mapping):
				problem = f"an input that is a {type(given).__name__}; give a dict or None"
			elif isinstance(decision, Proceed) and not isinstance(decision.note, Mapping | None):
				problem = f"a note that is a {type(decision.note).__name__}; give a dict or None"
	if problem:
		raise TypeError(
			f"capability {_named(hook)!r}: {getattr(hook, '__name__', 'a hook')} answered "
			f"{type(decision).__name__} with {problem}"
		)
	return decision


async def alongside(
	checks: Sequence[Alongside], call: Callable[[], Awaitable[Any]]
) -> tuple[Any, Stop | None]:
	"""Run ``call`` (the first model call) while the checks run; a `Stop` cancels the call.

	Returns the call's result (None when cancelled) and the `Stop` of the check that ended it;
	the call's exception is raised once every check is done with.
	"""
	from openmolt_core._support.watch import watched

	return await watched(call, [check.check for check in checks])


_ALONGSIDE = "Alongside(check) whose check is an async function answering Stop or None"


async def _watching(hook: Callable[..., Any], check: Callable[[], Any]) -> Stop | None:
	"""One check a `Capability.before_first_model` hook runs alongside the first model call."""
	name = "before_first_model"
	try:
		pending = check()
	except Exception as exc:
		raise _failed(hook, exc, name)  # noqa: B904  # it chains the cause
	if not isinstance(pending, Awaitable):
		raise _wrong(hook, pending, _ALONGSIDE, name)
	try:
		verdict = await pending
	except Exception as exc:
		raise _failed(hook, exc, name)  # noqa: B904  # it chains the cause
	if verdict is None:
		return None
	if not isinstance(verdict, Stop):
		raise _wrong(hook, verdict, "Stop(reason) or None from its Alongside check", name)
	return _checked(hook, verdict)


def holding() -> str | None:
	"""The rules a call is held under while the capabilities decide it (`Approve`), or None."""
	return _HELD.get()


_HELD: ContextVar[str | None] = ContextVar("openmolt_held", default=None)
WITHHELD = "result withheld: the run stopped"
"""The error of a result a capability's `Capability.after_tool` stopped the run on."""
NO_HOOKS = Hooks()
"""The hooks of an agent without capabilities (shared: it holds nothing)."""

# A helper of the capabilities that make tools callable (tool search, offload), under its old
# name here (loaded on first use).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), {"load_tools": "openmolt_core.capabilities"})
