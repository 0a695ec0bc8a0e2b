"""Capabilities: behaviour that attaches to an agent's runs through one typed interface.

The loop knows a few primitives: a model call, a tool call, a call that parks, a resume that
delivers, a run end, the durability port and numbered events. Everything else acts through a
`Capability`: a class whose methods the loop calls at those points. A capability overrides only
the hooks it needs; a hook that no capability of an agent overrides is never called (the lists are
resolved once, when the agent is created: see `Hooks`), so an agent without capabilities pays
nothing for the interface.

The rules the loop keeps are in docs/guides/capabilities.md ("The rules") and on each hook
below: the instance's capabilities run first, then the agent's, each list in order; ``before_*``
hooks stop at the first answer that is not `Proceed`, ``wrap_*`` hooks nest (the first outermost)
and ``after_tool`` hooks run in reverse; what a hook decides that is not a pure function of
journaled inputs goes through ``run.port.step``; a capability's state lives under
``run.state.ext[name]``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import (
	TYPE_CHECKING,
	Any,
	ClassVar,
	Generic,
	Literal,
	ParamSpec,
	Protocol,
	Self,
	TypeGuard,
	TypeVar,
	get_args,
)

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
	"holding",
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
		entry: The whole result entry the model reads instead of the loop's (``{"tool", "ok":
			False, "error": "not run: <reason>"}``); the loop then emits no ``error`` event
			(the capability reports the refusal its own way).
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
	"""Run this call once a person approved it under ``rule`` (the approvals gate asks or parks).

	The capabilities after it are asked too (``run.held`` gives them the rules so far); a
	capability that parks calls under a kind of its own (`Capability.parks`) decides it, and an
	agent without one does not run it: nobody can decide it.

	Args:
		rule: Why the call waits, as the approval request names it (joined to the tool's own
			approval rule, if it has one).
		input: The input the call runs with instead (None: keep it), as for `Proceed`.
	"""

	rule: str
	input: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Alongside:
	"""From `Capability.before_first_model`: a check that runs while the first model call runs.

	Args:
		check: Returns `Stop` to end the run (the model call is cancelled), or None. Its
			verdicts go through the port like any decision that is not a pure function of the
			state.
	"""

	check: Callable[[], Awaitable[Stop | None]]


@dataclass(frozen=True, slots=True)
class Opening:
	"""What a new run starts with besides the agent's own (`Capability.wrap_call` hands it over).

	Args:
		earlier: The turns before this run that its first turn shows, oldest first (under
			``earlier``, right after the instructions and tools: a new turn of a conversation
			only appends to them, so the prompt's prefix stays the same).
		memory: Memory the run starts from instead of the agent's, by key (``shortTerm``).
	"""

	earlier: Sequence[Mapping[str, Any]] = ()
	memory: Mapping[str, str] = field(default_factory=dict)


class RunOwner(Protocol):
	"""The agent whose run it is, as its capabilities see it (`Call.agent`; the loop's context).

	An `openmolt_core.agent.Agent`, typed here by what the kernel and its capabilities use of
	it, so that a misspelt attribute fails the type check (the agent's module imports this
	one, not the other way round).
	"""

	@property
	def name(self) -> str:
		"""The agent's name."""
		...

	@property
	def on_approval_request(self) -> ApprovalHandler | None:
		"""Decides the tool calls that wait for approval (None: such a call parks the run)."""
		...

	def first_message(
		self, input: Any, state: RunState, earlier: list[dict[str, Any]] | None = None
	) -> str:
		"""The first user turn of a run asked ``input`` (``earlier``: the turns it shows first)."""
		...


class ToolBinder(Protocol):
	"""What a tool source may do with the agent whose tools it lists (`Capability.refresh_tools`).

	The agent hands its sources this view (never itself): they list tools through the agent's
	capabilities, and give it back a tool set; nothing else of the agent is theirs to touch.
	"""

	@property
	def name(self) -> str:
		"""The agent's name (in errors)."""
		...

	@property
	def timeout(self) -> float | None:
		"""The agent's run timeout in seconds, which bounds a listing too (None: no bound)."""
		...

	def own_tools(self) -> Mapping[str, BoundTool]:
		"""The agent's tool set now, by handle (before its first listing is bound: its own)."""
		...

	def sources(self) -> Sequence[str]:
		"""The names of the capabilities that list tools, in the order `listed` answers."""
		...

	async def listed(self) -> list[Sequence[BoundTool]]:
		"""Ask each capability's `Capability.list_tools` in order: the tools each lists, bound."""
		...

	def redact(self, text: str) -> str:
		"""``text`` with every secret the agent knows masked."""
		...

	def failed(self, state: RunState, message: str) -> Exception:
		"""The error that ends the run of ``state`` with ``message`` (its state kept)."""
		...

	def rebind(self, tools: dict[str, BoundTool]) -> None:
		"""Take ``tools`` as the agent's tool set; what was built from the old one is forgotten."""
		...


@dataclass(frozen=True, slots=True)
class Call:
	"""A call of ``agent.run``, ``stream`` or ``resume`` that gives a capability's keyword.

	Args:
		agent: The agent called (an `openmolt_core.agent.Agent`).
		state: The run's state; a new run's holds no messages until the drive builds its first
			turn.
		given: The value of the keyword the capability takes (`Capability.takes`).
		asked: What the caller says to the run: a new run's input, or the answer to the
			question a resumed run waits for; None for neither (a decision is no words).
		resumed: Whether the call is ``agent.resume`` (the run goes on from where it parked).
	"""

	agent: RunOwner
	state: RunState
	given: Any
	asked: Any = None
	resumed: bool = False


CallDrive = Callable[["Opening | None"], Awaitable["RunResult"]]
"""Starts the drive of a call's run (`Capability.wrap_call`): ``drive(opening)`` builds a new run's
first turn with what the `Opening` adds (None: nothing) and returns the drive, not yet awaited; a
resumed run's takes None."""

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

	A finish's ``humanMessage`` goes through `Capability.before_finish` with the finish; these
	are the model's other words for people, each asked about before anyone sees it.

	Args:
		field: What it is: ``message`` (a ``requestHumanInput``'s question, for whoever answers
			it: the human-input handler, a chat, a page), ``reason`` (a ``callTool``'s reason,
			for the person who approves the call) or ``plan`` (an ``updatePlan``'s plan, which
			a page's state and a viewer show).
		text: The text, as the model wrote it (or as the capabilities before let it through);
			a plan as its JSON text (a list of steps: ``name``, ``status``, ``notes``,
			``subSteps``), which a rewrite must keep a plan.
		tool: For a ``reason``: the handle of the tool called; "" otherwise.
	"""

	field: Literal["message", "reason", "plan"]
	text: str
	tool: str = ""

	@property
	def command(self) -> str:
		"""The command that carries it: ``requestHumanInput``, ``callTool`` or ``updatePlan``."""
		return _WORDS_COMMAND[self.field]


_WORDS_COMMAND = {"message": "requestHumanInput", "reason": "callTool", "plan": "updatePlan"}
"""The command that carries each kind of `Words`."""


ModelSend = Callable[["LLMProvider", "ModelRequest", str], Awaitable["ModelResponse"]]
"""Sends one model's request in place of its provider's ``generate`` (`Capability.send_model`):
``send(provider, request, model)``, ``model`` the ``provider:model`` id; returns the response."""

ToolWork = Callable[[], Awaitable[dict[str, Any]]]
"""A tool call's work inside its journaled step (`Capability.wrap_tool`): runs the call (or finds
it in doubt) and returns its result entry."""

ToolInside = Callable[["CallingRun", ToolWork], Awaitable[dict[str, Any]]]
"""What a `Capability.wrap_tool` runs inside a tool call's journaled step, around its work:
``inside(calling, work)``, ``calling`` the run handed to the runs the call nests
(`openmolt_core.tools.CallingRun`); returns the entry the journal keeps."""

ToolStep = Callable[[ToolInside], Awaitable[dict[str, Any]]]
"""Runs a tool call's journaled step (`Capability.wrap_tool`): ``step(inside)`` runs ``inside``
in it (not on a replay: the journal answers) and returns the journaled entry."""

PROCEED = Proceed()

BUILTIN = "openmolt"
"""The integration id of built-in tools (`Capability.builtin_tools`): ``openmolt.<handle>``."""


def decision_to_dict(decision: ToolDecision) -> dict[str, Any]:
	"""A decision as JSON, for the journal (`decision_from_dict` reads it back)."""
	match decision:
		case Proceed():
			out: dict[str, Any] = {
				"proceed": None if decision.input is None else dict(decision.input)
			}
			if decision.note is not None:
				out["note"] = dict(decision.note)
			return out
		case Refuse():
			out = {"refuse": decision.reason}
			if decision.entry is not None:
				out["entry"] = dict(decision.entry)
			return out
		case Park():
			return {
				"park": {
					"message": decision.message,
					"request": dict(decision.request),
					"status": decision.status,
				}
			}
		case Stop():
			stop: dict[str, Any] = {"reason": decision.reason, "status": decision.status}
			if decision.entry is not None:
				stop["entry"] = dict(decision.entry)
			return {"stop": stop}
		case Approve():
			new = None if decision.input is None else dict(decision.input)
			return {"approve": {"rule": decision.rule, "input": new}}
	raise TypeError(f"not a decision: {type(decision).__name__}")  # pragma: no cover


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
		...

	@property
	def state(self) -> RunState:
		"""The run's state (saved, resumed and journaled; ``state.ext`` holds capabilities')."""
		...

	@property
	def port(self) -> RunPort:
		"""The durability port: ``await run.port.step(key, fn)`` journals a decision."""
		...

	@property
	def step(self) -> int:
		"""The current step (1-based; 0 before the first model call)."""
		...

	@property
	def tools(self) -> Mapping[str, ToolSpec]:
		"""The run's tools by handle, in the agent's order (built-in ones included)."""
		...

	@property
	def redact(self) -> Redactor:
		"""Scrubs the agent's secrets from text (``redact(text)``, ``redact.deep(value)``)."""
		...

	@property
	def link(self) -> CallingRun | None:
		"""The run that called this one as a tool, with what it handed down; or None."""
		...

	@property
	def call_from_journal(self) -> bool:
		"""In `Capability.after_tool`: whether the call's result came from the journal.

		Such a call ran before a crash and its events went out then: an event about it is
		counted (``skip_event``), not emitted again.
		"""
		...

	def wants(self, name: str) -> bool:
		"""Whether anything listens to the event ``name``."""
		...

	async def emit(self, event: Event, seq: int | None = None) -> None:
		"""Emit an event of this run (numbered in order; replays number it the same)."""
		...

	def skip_event(self) -> None:
		"""Count an event nobody listens to, so later numbers stay deterministic."""
		...

	@property
	def models(self) -> ModelAccess | None:
		"""The agent's models (`ModelAccess`): their ids, a call's request for another of them."""
		...


class ModelAccess(Protocol):
	"""What a capability may ask of the agent's models during a run (``run.models``).

	A step asks one model, the agent's first. Around a call of the agent's models
	(`Capability.wrap_model`; ``request.model_id`` names the model), a capability may send
	``run.models.request(other)`` instead: the loop builds it for that model (its own prompt and
	the reply schema fitted to its dialect) and sends it to that model's provider; the journal
	records which model answered, and a replay reads its reply that way.
	"""

	@property
	def ids(self) -> tuple[str, ...]:
		"""The agent's models (``provider:model``), the one each step asks first."""
		...

	def request(self, model: str) -> ModelRequest:
		"""The request of the model call in progress, built for another of the agent's models.

		For a step: its messages with that model's system prompt and the reply schema fitted
		to its dialect; for a call of a capability's own (`own`): the same request for that
		model. ``call(request)`` in `Capability.wrap_model` sends it to that model.

		Args:
			model: One of `ids`.

		Raises:
			ConfigurationError: No call of the agent's models is in progress, or ``model`` is
				not one of the agent's.
		"""
		...

	def fitted(self, model: str) -> FittedSchema:
		"""The reply schema fitted to a model's dialect at the coming step, as its request sends it.

		How to read that model's reply as the loop reads it: ``restore`` undoes the dialect's
		changes (inputs and an output sent as JSON text, nulls for properties left out), and
		``output_encoded`` says whether a finish's output comes as JSON text. A sender that
		previews a reply while it streams (`Capability.send_model`) shows it so.

		Args:
			model: One of `ids`.

		Raises:
			ConfigurationError: ``model`` is not one of the agent's.
		"""
		...

	@property
	def config(self) -> ModelConfig:
		"""The agent's model configuration."""
		...

	def config_for(self, provider: str) -> ModelConfig:
		"""The model configuration a request to ``provider`` carries.

		The agent's, with only that provider's part of ``provider_options`` when they are keyed
		by provider (`openmolt_core.llm.options_for`): a call of a capability's own to a model
		of another provider (a summary model) sends it.

		Args:
			provider: The provider's name (a model id's prefix).
		"""
		...

	def system(self) -> str:
		"""The system prompt the first model gets at the coming step."""
		...

	def primary(self) -> tuple[LLMProvider, str, str]:
		"""The first model: its provider, its name, and its system prompt (without what a step adds)."""
		...

	def chain(self) -> tuple[tuple[LLMProvider, str, str], ...]:
		"""Every model that may answer a step, the first first, as `primary` gives each.

		A step asks the first; model fallback sends it on to the next when that one fails, so
		which one answers is known only after the call. An estimate of the coming call (a cost
		budget's) takes the dearest of them.
		"""
		...

	def context_window(self, model: str | None = None) -> int | None:
		"""The context window a call's prompt must fit, in tokens, when the providers say.

		A step asks the first model and may fall back to any next one, so by default this is
		the smallest window of the agent's models (a model whose provider does not say counts
		as `openmolt_core.llm.DEFAULT_CONTEXT_WINDOW`); None when no provider says.

		Args:
			model: One of `ids`: that model's own window instead (None when its provider does
				not say).

		Raises:
			ConfigurationError: ``model`` is not one of the agent's.
		"""
		...

	def own(self, run: Run) -> tuple[LLMProvider, str]:
		"""The agent's models as one provider for a call of a capability's own (a summary).

		Its calls go through the capabilities' `Capability.wrap_model` hooks as a step's do,
		and `request` builds them for another of the agent's models.
		"""
		...

	def price(self, response: ModelResponse) -> None:
		"""Price a response of the agent's own models that the provider did not price."""
		...


class ToolSpec(Protocol):
	"""What a hook sees of a tool: the one record every tool source is described by.

	An integration's tool, a function, an MCP server's tool, an OpenAPI operation, an agent used
	as a tool, a skill's tool and a capability's own tools all bind into this record; a
	capability reads it, never the tool's class or its source.
	"""

	@property
	def handle(self) -> str:
		"""The handle the model calls (``integration.tool``)."""
		...

	@property
	def input_schema(self) -> dict[str, Any]:
		"""The JSON Schema of its input."""
		...

	@property
	def output_schema(self) -> dict[str, Any] | None:
		"""The JSON Schema of its result, or None when it names none."""
		...

	@property
	def scopes(self) -> tuple[str, ...]:
		"""The scopes a call needs."""
		...

	@property
	def labels(self) -> frozenset[str]:
		"""What it does with data (``private``, ``untrusted``, ``outbound``: `openmolt_core.taint`).

		A tool whose labels are unknown (it declares none, and no policy says) has
		``untrusted`` and ``outbound``: fail closed.
		"""
		...

	@property
	def secrets(self) -> frozenset[str]:
		"""The names of the credential keys it was bound with that hold secrets (names only)."""
		...

	@property
	def approval(self) -> str | None:
		"""The approval rule that makes its calls wait for a decision, or None."""
		...

	@property
	def description(self) -> str:
		"""What it does, for the model."""
		...

	@property
	def integration_name(self) -> str:
		"""The display name of its integration (``Gmail``); the handle's prefix when it has none."""
		...

	@property
	def integration_description(self) -> str:
		"""One line on what its integration does (empty when it has none, or says nothing)."""
		...

	def describe(self) -> dict[str, Any]:
		"""The tool as the model reads it in a listing (handle, description, schemas, approval)."""
		...

	@property
	def in_doubt(self) -> Literal["retry", "ask", "fail"]:
		"""Its idempotency: what a call found started but unfinished after a crash does.

		``retry`` (repeating it is safe), ``ask`` (a person says whether it happened) or
		``fail`` (the model reads that it may have happened).
		"""
		...


class ToolRecord(ToolSpec, Protocol):
	"""A tool's record while the agent is built: what `Capability.describe_tools` may set."""

	labels: frozenset[str]
	"""What it does with data (``private``, ``untrusted``, ``outbound``)."""

	in_doubt_at_least: Literal["retry", "ask", "fail"]
	"""The laxest in-doubt policy its calls may follow (``retry``: the tool's own decides):
	what a capability runs inside its calls (the caller's guardrail agents that judge the words
	of the agent a call runs) would run again with a call found in doubt."""

	in_doubt_default: Literal["retry", "ask", "fail"] | None
	"""The policy of its calls when the tool declares none, as a capability sets it (None: ``ask``
	for a tool that declares itself ``outbound``, else ``retry``)."""


@dataclass(frozen=True, slots=True)
class AgentInfo:
	"""What a capability sees of the agent being built (`Capability.tools`, `first_turn`...).

	Args:
		name: The agent's name.
		tools: The handles of the tools the agent may call (its scopes allow them): when building
			tools, those bound so far (integrations, ``tools=``, earlier capabilities'); in
			`Capability.builtin_tools` and `Capability.first_turn`, all of them.
		model: The model id (``provider:model``, or the provider's name).
		records: The records of those tools, in the same order (descriptions, integrations,
			schemas), in `Capability.builtin_tools` and `Capability.first_turn`; empty in
			`Capability.tools` (the agent's policies have not labelled them yet).
	"""

	name: str
	tools: tuple[str, ...]
	model: str
	records: Sequence[ToolSpec] = ()


# the interface ------------------------------------------------------------------------------


class Capability:
	"""Behaviour attached to an agent's runs; override the hooks you need (each default does nothing).

	Subclass it, set ``name`` (letters, digits, ``_`` and ``-``: it names the state under
	``state.ext``, the journal keys and the events), and give instances to
	``create_agent(capabilities=[...])`` or ``OpenMolt(capabilities=[...])``, or register a factory
	from a plugin's ``register_capabilities`` hook so agents name it (``capabilities=["name"]``).
	"""

	__slots__ = ()

	name: ClassVar[str] = ""
	"""The capability's name: unique per agent."""

	events: ClassVar[Mapping[str, type[Event]]] = {}
	"""The events it emits, by name (``agent.on(name, ...)`` accepts them)."""

	in_fingerprint: ClassVar[bool] = True
	"""Whether the agent's fingerprint names it (False only for a capability whose whole effect on
	a journaled run is already there, such as its tools' schemas)."""

	builtins_lead: ClassVar[bool] = False
	"""Whether its `builtin_tools` come before the agent's own tools in the first turn's listing
	and the reply schema (entry points such as tool search's), rather than after them."""

	journal_decisions: ClassVar[bool] = True
	"""Whether the loop journals its `before_tool` decisions (``hook:<step>:<index>:<tool>``).

	False for a capability whose decisions are a pure function of journaled inputs (the state,
	the call, the tool record) or go through ``run.port.step`` themselves: the loop then asks it
	after the journaled capabilities, outside their step, and a replay asks it again."""

	first_turn_lead: ClassVar[bool] = False
	"""Whether its `first_turn` fields come right after the tools in the first turn, ahead of the
	other capabilities' fields (fields about the tools, such as tool search's catalog)."""

	parks: ClassVar[str] = ""
	"""The kind of ``state.pending`` under which its `Park` decisions park a step (the approvals
	gate's ``approval``: ``{"kind": parks, "calls": [...]}``, one entry per call, its ``index``
	and the park's ``request``; the run ends with the last park's message), or "" (they are saved
	under the kernel's ``capability`` kind, each call naming it under ``by``). Such a park wins
	over the others of its step: a call another capability parks (`Park`) in it reads ``not run:
	another call of this step waits for <kind>; call it again once that is decided``. A run
	parked under this kind goes on through this capability: ``agent.resume`` asks its
	`receive`, then its `resume`, and
	``agent.approval_requests`` its `requests`. It also decides the calls an `Approve` holds (its
	`Proceed` lets them run: ``run.held``). One capability per kind and agent."""

	takes: ClassVar[str] = ""
	"""The keyword of ``agent.run``, ``stream`` and ``resume`` whose value this capability takes
	for one call (``session``), or "": a call that gives it goes through its `wrap_call`. One
	capability per keyword and agent."""
	model_call_events: int = 0
	"""How many numbered events its `wrap_model` may emit per model call (an instance may set its
	own, when it is made). The loop reserves them with the call's numbers and numbers those
	events from them (``run.emit`` without ``seq``, or ``run.skip_event``): a replay, which answers
	the call from the journal without running ``wrap_model``, numbers later events the same."""
	model_calls: int = 1
	"""How many times its `wrap_model` may send one model call on (``call``), at most: model
	fallback sends it to each model it tries. The capabilities after it (inside its hook) then
	run that many times per call, and the loop reserves their `model_call_events` for each."""

	# building the agent (no I/O) ----------------------------------------------------------

	def active_hooks(self) -> Collection[str] | None:
		"""The hooks this instance needs, of those its class overrides (None: all of them).

		Asked once, when the agent's hooks are resolved: a capability whose settings leave a
		hook idle (no output guardrails: no ``before_finish``) keeps it off every run's path.
		Covers the run hooks and `describe_tools`.
		"""
		return None

	def tools(self, agent: AgentInfo) -> Sequence[Tool | Callable[..., Any]]:
		"""Tools the capability adds to the agent (function tools, or `Tool` objects).

		Args:
			agent: The agent being built.
		"""
		return ()

	def first_turn(self, agent: AgentInfo) -> Mapping[str, Any]:
		"""Fields added to the first user turn (JSON), after the agent's own (see `first_turn_lead`).

		A key the agent's first turn has (``about``, ``tools``, ``maxSteps``, ``earlier``,
		``memory``, ``plan``, ``input``) or another capability added is refused
		(`ConfigurationError` at the first run): a JSON object with a key twice loses one.

		Args:
			agent: The agent being built.
		"""
		return {}

	def nested_agents(self) -> Sequence[Any]:
		"""The agents it runs inside its agent's runs, with tools of their own (none by default).

		Each runs nested in a step of the run that asks it (a guardrail's agent judging the
		run's words): what its tools do counts as the run's (`openmolt_core.taint.nested_labels`),
		and so does its in-doubt policy (`openmolt_core.taint.nested_in_doubt`). Read when an
		agent's labels or policy are worked out (no I/O); a function it calls is no agent.
		"""
		return ()

	def nested_in_doubt(self, agent: Any) -> Literal["retry", "ask", "fail"] | None:
		"""The in-doubt policy of a run of ``agent`` nested in a durable run's journaled step.

		Such a run is not journaled step by step: found under way after a crash, it would start
		again. The loop holds it as strict as its tools' policies (`ToolSpec.in_doubt`); answer
		a stricter one when more of it may not run twice (the safety capability: ``ask`` when
		it may send data out, `openmolt_core.taint.nested_in_doubt`). The first answer that is
		not None counts; no I/O.

		Args:
			agent: The agent whose run starts nested (an `openmolt_core.agent.Agent`).
		"""
		return None

	async def list_tools(self) -> Sequence[BoundTool]:
		"""Tools only known at run time (an MCP server's), listed before each run's first turn.

		The agent calls it at the start of each run, before the first message and the reply
		schema are built, so a run's prompt and schema never change while it runs (also before a
		resume and a durable execution). Return the *same* sequence object for as long as the
		tools have not changed: the agent rebinds its tools (labels, approval rules, prompt)
		only when an object differs from the one it got last time. A run records the listed
		tools it began with in its state, and a resumed or recovered run binds only those (or
		stops, if one is gone or changed: `openmolt_core.capabilities._listed`).

		Returns:
			The capability's tools, bound (handles, contexts and scopes; see
			`openmolt_core.capabilities.sources`); they come after the agent's other tools.

		Raises:
			IntegrationError: The tools could not be listed (the run does not start).
		"""
		return ()

	def builtin_tools(self, agent: AgentInfo) -> Sequence[Tool]:
		"""Tools of the run's machinery, bound as ``openmolt.<handle>``, apart from the agent's.

		Unlike `tools`, they are not the agent's (``agent.tools``, its fingerprint): they are
		asked for whenever the agent's tool set is built (again after a run-time source lists
		new tools), and listed after the agent's tools (before, with `builtins_lead`). Their
		results are never replaced (`replace_result`): they bound their own size.

		Args:
			agent: The agent (``agent.tools``: the handles of its tools the scopes allow).
		"""
		return ()

	def builtin_approval(self, handle: str, tool: ToolDefinition) -> str | None:
		"""The rule under which calls of a built-in tool wait for a decision, or None.

		The built-in tools are bound apart from the agent's, so `describe_tools` never marks
		them; a capability that holds their calls in `before_tool` says here which ones, so
		that ``agent.approval_rules`` (and what reads it: a durable run's definition) lists
		them. The first capability that names a rule gives it.

		Args:
			handle: The tool's handle (``openmolt.<handle>``).
			tool: The tool.
		"""
		return None

	def fingerprint(self) -> Mapping[str, Any]:
		"""Entries added to the agent's fingerprint (JSON), for what changes the steps it asks for.

		Merged into the fingerprint's body; the keys must not be the agent's own (``name``,
		``model``, ``tools``...).
		"""
		return {}

	def describe_tools(self, agent: AgentInfo, tools: Sequence[ToolRecord]) -> None:
		"""See the agent's whole tool set, and set what the records say (`ToolRecord`).

		Their ``labels``, and their in-doubt policy (``in_doubt_default``, ``in_doubt_at_least``:
		the loop reads a record's ``in_doubt``). Called when the agent is built, and again when a
		run-time source (an MCP server) changes its tools; the capabilities in order, each seeing
		what the earlier ones set.

		Args:
			agent: The agent being built (``agent.tools``: the handles it may call).
			tools: Every bound tool of the agent (allowed or not).
		"""

	# a run ----------------------------------------------------------------------------------

	def state(self, run: Run) -> dict[str, Any]:
		"""This capability's JSON state in the run (``run.state.ext[self.name]``), made on first use.

		Args:
			run: The run.
		"""
		mine: dict[str, Any] = run.state.ext.setdefault(self.name, {})
		return mine

	async def on_run_start(self, run: Run) -> Stop | None:
		"""A run starts or goes on (also after a resume, and on a durable replay).

		Args:
			run: The run.

		Returns:
			`Stop` to end the run before anything else happens, or None.
		"""
		return None

	async def before_first_model(self, run: Run) -> Stop | Alongside | None:
		"""A run is about to make its first model call (after `on_run_start`, under its time budget).

		Called once per run that has made no model call and waits for nothing (again when such
		a run is given back its state, or replayed); outside any journaled step.

		Args:
			run: The run; ``run.state.messages[0]`` is the first turn, which it may rewrite.

		Returns:
			`Stop` to end the run now, `Alongside` to run a check while the first model call
			runs (a `Stop` from it cancels the call), or None.
		"""
		return None

	async def wrap_call(self, call: Call, drive: CallDrive) -> RunResult:
		"""Around one call that gives this capability's keyword (`takes`), in the caller's process.

		Outside the run's drive and its durability: a durable run's workflow is driven inside it
		(nothing of it is journaled), and it sees every way the drive ends. A new run's first
		turn is not built yet: ``drive(opening)`` builds it, with what the `Opening` adds, and
		returns the drive to await. What it raises passes to the caller as it is.

		Args:
			call: The call: the agent, the run's state, the keyword's value, what is asked.
			drive: Starts the run's drive; call it once (None: the run starts with nothing more).
		"""
		return await drive(None)

	def memory_option(self, state: RunState, memory: Any) -> Any:
		"""The agent's memory option (its data and update callbacks) as a drive of this run uses it.

		Asked as each drive of a run begins, by any process that drives it (a durable worker
		recovering it too), each capability given what the one before returned.

		Args:
			state: The run's state.
			memory: The agent's memory option (`openmolt_core.options.AgentMemory`, or its dict).
		"""
		return memory

	async def wrap_run(self, run: Run, drive: Callable[[], Awaitable[RunResult]]) -> RunResult:
		"""Around one drive of a run (a start, a resume, a durable execution), errors included.

		The first capability's is outermost. It may route the run's events and port before
		calling ``drive`` (the run store and observers do), and sees every way the drive ends:
		its result, `openmolt_core.errors.RunError`, cancellation.

		Args:
			run: The run.
			drive: Runs the loop (the next capability's hook, or the loop itself).
		"""
		return await drive()

	async def on_run_end(self, run: Run, result: RunResult) -> None:
		"""The run ended (finished, parked, or stopped by a limit or a capability).

		Args:
			run: The run.
			result: Its result.
		"""

	def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
		"""The tools the model may call at this step (and sees in its reply schema).

		Called before each step with the tools the others left visible (the first with every
		tool the agent's scopes allow, built-in ones included); return them, or fewer, in the
		same order. It must be a pure function of ``state``: a replay sees the same tools.

		Args:
			state: The run's state (a fresh one for the first turn's listing).
			handles: The tools visible so far.
		"""
		return handles

	def why_hidden(self, state: RunState, handle: str) -> str | None:
		"""Why a call to a tool no capability left visible is refused (None: not this one's).

		The first capability that answers is the reply's error; with no answer, the usual
		messages apply (an unknown tool, or one the scopes exclude).

		Args:
			state: The run's state.
			handle: The tool the model called.
		"""
		return None

	async def before_step(self, run: Run) -> Stop | None:
		"""May the run take another model step? Asked before each (before `before_model`).

		Asked once ``max_steps`` and ``timeout`` let the step go, on a replay too, and again
		before the step's call when a `before_model` or `context_exceeded` hook spent (a
		compaction's summary): decide from journaled inputs (``run.state.usage``,
		``run.link``) or journal the decision.

		Args:
			run: The run.

		Returns:
			`Stop` to end the run (``status="limit_reached"`` for a spent budget), or None.
		"""
		return None

	def last_step(self, run: Run) -> str | None:
		"""Why the coming model call is the run's last (the model is told), or None.

		Asked after `before_model` when ``max_steps`` does not make it the last; the first
		answer wins. Decide from journaled inputs, as for `before_step`.

		Args:
			run: The run.
		"""
		return None

	def hand_down(self, run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
		"""What the runs these calls start (a sub-agent's) take from this run.

		Asked at a call's start, or once before a concurrent batch starts. Each mapping sets
		fields of a call's `openmolt_core.tools.CallingRun` (the called run's ``run.link``)
		but those the loop sets (`openmolt_core.tools.LOOP_FIELDS`); its ``capabilities`` (a
		list or tuple: their order is their hooks') attach to the called run (unless its
		agent has one of the name): the hooks given the
		run are asked, not those of the agent's tool set (`visible_tools`, `why_hidden`).

		Args:
			run: The run.
			tools: The records of the tools about to be called, in command order.

		Returns:
			One mapping per tool, in order, or nothing.
		"""
		return ()

	async def before_model(self, run: Run) -> None:
		"""A step is about to ask the model (outside the journaled model call; runs on replay).

		Args:
			run: The run; ``run.state.messages`` is what the model will read.
		"""

	async def context_exceeded(self, run: Run) -> bool:
		"""The model answered that the step's request is longer than its context window.

		Shrink ``run.state.messages`` (compaction summarises the older steps) and return True to
		have the step asked once more, under a journal key of its own; False leaves the run to
		end on the provider's error. Called outside the journaled model call, as
		`before_model` is, and on replay too: what it decides must be journaled by it (a
		summary through ``run.port.step``). The first capability that answers True ends the
		asking.

		Args:
			run: The run, after the failed call (`openmolt_core.errors.ProviderError`
				with ``context_exceeded``).
		"""
		return False

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		"""Around one model call, inside its journaled step.

		A call of the agent's models names its model (``request.model_id``); the hook may send
		the request, change it, or send ``run.models.request(other)`` to another of the agent's
		models instead (`ModelAccess`): the response says which model answered.

		Args:
			run: The run.
			request: The request about to be sent.
			call: Sends a request and returns the response (the next capability's hook, or the
				provider of the model the request was built for).
		"""
		return await call(request)

	def fit_reply(self, envelope: Envelope, dialect: SchemaDialect) -> FittedSchema | None:
		"""The agent's reply schema fitted to a model's structured-output dialect (no I/O).

		Asked when a model whose provider declares a dialect (`openmolt_core.llm.LLMProvider`'s
		``schema_dialect``) first needs the schema for a tool set (the loop keeps the answer per
		model and tool set); the first capability that answers decides what every request to
		that model sends and how its replies are read (`openmolt_core.envelope.FittedSchema`).
		None leaves it to the next; when none answers, the request sends the canonical schema
		with mode ``off``. The structured-output capability answers
		(`openmolt_core.capabilities.structured.fit`).

		Args:
			envelope: The reply schema, in parts.
			dialect: What the model's provider accepts.
		"""
		return None

	def send_model(self, run: Run) -> ModelSend | None:
		"""How this step sends its model calls, in place of each provider's ``generate`` (or None).

		Asked once per step, before its journaled model call; the first capability that answers
		sends each request of the step's call to its model, inside every `wrap_model` (the
		streaming capability streams the reply to the run's ``text:delta`` listeners). Answer
		None when the step needs nothing of the kind: the call is then the plain ``generate``.

		Args:
			run: The run (``run.wants(name)``: whether anything listens to an event).
		"""
		return None

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		"""A validated tool call is about to run (its decision is journaled by the loop).

		Args:
			run: The run.
			call: The call (``call.tool``, ``call.input``).
			tool: The tool's record.

		Returns:
			`Proceed` (optionally with a new input), `Refuse`, `Park` or `Stop`.
		"""
		return PROCEED

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		"""The steps this capability may journal itself (``run.port.step``) for a call of a batch.

		The calls of a concurrent batch run at once, so steps a hook opens while they run
		(`before_tool` outside the loop's journal, `after_tool`) would take their numbers in
		whatever order the calls got there, and a durable replay, where they end in another
		order, would find other steps under those numbers. The loop reserves the steps named
		here ahead, in command order, with the call's own (a step of a kind a capability parks
		under, where the call is decided, before the call's ``tool`` step; the others after
		it); a step reserved and not used is skipped. ``run.command_index`` is the call's index.

		Args:
			run: The run.
			call: The call, as the model made it.
			tool: The tool's record.

		Returns:
			The keys it may pass to ``run.port.step`` for this call (the safety capability's
			``guard:<step>:<stage>:<index>:<n>``; a gate's, for a call it may decide), as a
			list or tuple: they are reserved in that order (a set, whose order changes from one
			process to the next, is refused); a key several capabilities name is reserved once.
		"""
		return ()

	async def replace_result(self, run: Run, call: CallTool, tool: ToolSpec, value: Any) -> Any:
		"""A call's successful result, inside its journaled step: what the model reads instead.

		The journal keeps what it returns, so a replay reads the same without calling again
		(offload stores a large result and returns a preview). Not asked for built-in tools.

		Args:
			run: The run.
			call: The call.
			tool: The tool's record.
			value: The tool's result (or the previous capability's replacement).

		Returns:
			The result the model reads (return ``value`` to keep it).
		"""
		return value

	async def wrap_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, step: ToolStep
	) -> dict[str, Any]:
		"""Around a tool call's journaled step: what runs inside it, and what the run reads of it.

		``await step(inside)`` runs the step: inside it (not on a replay, where the journal
		answers), ``inside(calling, work)`` runs around the call's work (``await work()``: the
		entry), with the `openmolt_core.tools.CallingRun` handed to the runs the call nests, and
		returns the entry to journal (it may add fields of its own). What the hook returns is
		the entry the run reads, before the `after_tool` hooks (it may take its own fields out
		again, and count them in the run's state: the sub-agents' spend does,
		`openmolt_core.capabilities.spend`). Hooks nest, the first capability outermost, and so
		do their ``inside``.

		Args:
			run: The run.
			call: The call.
			tool: The tool's record.
			step: Runs the journaled step with what runs inside it.
		"""
		return await step(_work)

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any] | Stop:
		"""A call's result entry, before the model reads it (outside the journaled call).

		The capabilities' hooks run in reverse order (the last capability's first).

		Args:
			run: The run (``run.call_from_journal``: whether the call ran before a crash).
			call: The call.
			tool: The tool's record.
			entry: ``{"tool", "ok", "result"}`` or ``{"tool", "ok": False, "error"}``.

		Returns:
			The entry the model reads (return ``entry`` unchanged to keep it), or `Stop` to end
			the run after this step (its ``entry``, or ``"result withheld: the run stopped"``,
			is what the model reads, and the next capabilities see).
		"""
		return entry

	def nested_result_labels(
		self, run: Run, link: CallingRun, labels: tuple[str, ...]
	) -> tuple[str, ...]:
		"""The labels of a call's result once runs nested in the call ended (``link.ended``).

		Asked after the call returns, when some run nested in it ended (a sub-agent's, a
		guardrail agent's, one a tool's code started): what such a run read may reach the
		calling run through the result. The answers chain in order (each gets the labels so
		far); no I/O: a pure function of the states (a replay journals the result's labels).

		Args:
			run: The calling run.
			link: The call's `openmolt_core.tools.CallingRun` (``ended``: the nested runs' last
				states, in the order they ended; ``taint``: what was handed down to them).
			labels: The result's labels so far (its own: a `openmolt_core.tools.LabelledResult`).

		Returns:
			The labels (``labels`` itself for none added).
		"""
		return labels

	def tool_done(self, run: Run, call: CallTool, index: int, entry: Mapping[str, Any]) -> None:
		"""A call's entry as the model reads it (after every `after_tool`): update the run's state.

		Called outside the journaled call, with what the journal holds, so a replay updates the
		state the same way (tool search loads tools here; offload notes a stored result). The
		calls of a concurrent batch are settled after the batch, in command order, whichever
		ended first: the state never depends on timing.

		Args:
			run: The run.
			call: The call.
			index: The call's position among the step's commands.
			entry: ``{"tool", "ok", "result"}`` or ``{"tool", "ok": False, "error"}``.
		"""

	def new_run(self, agent: str, state: RunState) -> None:
		"""A new run's state is made: note in it what only this process knows now.

		Called once per run, where its first state is made (``agent.run``, ``agent.start``, or
		a durable engine's ``start`` step), after its memory is set and before its first
		message is built. What a capability writes into the state (its ``ext``, its ``taint``)
		is saved or journaled with that first state, so a replay in another process reads the
		same instead of asking again. No I/O, no await.

		Args:
			agent: The agent's name.
			state: The new run's state.
		"""

	def first_memory(
		self, agent: RunOwner, memory: Any, state: RunState
	) -> Mapping[str, str] | None:
		"""A new run's memory, when its state brings none: ``{"longTerm": ..., "shortTerm": ...}``.

		Asked where a new run's first state is made, before what an `Opening` brings and before
		`new_run`; the first answer that is not None is the run's memory (None from all: it
		starts empty). No I/O, no await.

		Args:
			agent: The agent whose run it is.
			memory: The agent's memory option (`openmolt_core.options.AgentMemory`, its dict,
				or None).
			state: The new run's state (whose run it is: ``state.user``).
		"""
		return None

	def memory_updated(self, run: Run, memory: str, data: str) -> None:
		"""An ``updateMemory`` command changed one of the run's memories: note what it holds now.

		Called after ``run.state.memory`` took the new text and before the agent keeps it (a
		``longTerm`` update outlives the run) or its ``on_update`` callback hears it; outside
		any journaled step, so a replay, which reads the command again, calls it again.

		Args:
			run: The run.
			memory: ``longTerm`` or ``shortTerm``.
			data: The memory's whole text after the update.
		"""

	async def memory_written(self, run: Run, memory: str, index: int) -> None:
		"""An ``updateMemory`` command changed one of the run's memories: keep it beyond the run.

		Called after the `memory_updated` hooks and before the ``memoryUpdate`` event, outside
		any journaled step, so a replay calls it again: what must not run twice goes through
		``run.port.step`` (the memory capability calls ``on_update`` in ``memory:<step>:<index>``).

		Args:
			run: The run (``run.state.memory[memory]`` holds the new text).
			memory: ``longTerm`` or ``shortTerm``.
			index: The command's position among the step's commands.
		"""

	async def before_finish(self, run: Run, finish: Finish) -> FinishDecision | Finish:
		"""The model finished with a validated output (``finish.output``, ``finish.status``).

		Args:
			run: The run.
			finish: The finish command.

		Returns:
			`Proceed`, a `Finish` to end with instead (its output rewritten: the loop checks it
			against the output schema, and the next capabilities see it), `Refuse` (the model
			reads why and goes on) or `Stop`.
		"""
		return PROCEED

	async def before_words(self, run: Run, words: Words) -> WordsDecision | str:
		"""The model's words are about to reach a person: a question, or a call's reason.

		Asked before a ``requestHumanInput``'s question goes to whoever answers it (the
		human-input handler, and a parked run's ``state.pending``, its events, a chat), and
		before a ``callTool``'s reason goes to the person who approves the call (the approval
		request); ``run.command_index`` is the command's index. Outside any journaled step, on
		replay too: what it decides that is not a pure function of the state goes through
		``run.port.step`` (the safety capability's guardrails do). A run that streams does not
		preview a question while some capability has this hook: a preview cannot be taken back.

		Args:
			run: The run.
			words: What the model wrote, and for what (`Words`).

		Returns:
			`Proceed` (the words go as they are), the text to say instead (the next
			capabilities see it), `Refuse` (nobody is asked; the model reads why and goes on)
			or `Stop` (the run ends; for a reason, the call does not run).
		"""
		return PROCEED

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		"""A run this capability parked goes on: ``given`` is what the application delivered.

		Called before the parked step goes on (the loop rebuilds it from ``state.pending`` and runs
		it from its first parked call): raise to refuse what was delivered, and the state stays
		as it was, still parked (an `OpenMoltError` passes as it is; anything else becomes a
		`RunError` naming this capability, the hook and why, with the state to resume again). For a step parked by a `Park` decision, once per parked call. For a step it
		parked under its own kind (`parks`), once, with the whole parked step.

		Each delivery is handed over twice: first to check it, on a copy of the parked state, in
		the caller's process (before the run store takes the run and before a durable backend
		starts its next segment: a refusal there leaves the run parked wherever it is listed);
		then as the step goes on, on the run's own state (a durable run's, in the segment that
		runs it). What the first call changes is thrown away, and its ``run.port`` journals
		nothing: note what was given in ``run.state`` (it is the run's on the second call), and
		act outside the run in the step that follows (a tool, a journaled step), not here.

		Args:
			run: The run (``run.step`` is the parked step).
			parked: The `Park` request, as saved; or, for its own kind, ``state.pending``.
			given: ``agent.resume(state, given=...)``'s value (JSON); for its own kind, what its
				`receive` returned (the durable backend carries it to the run's next segment),
				or the text ``run(input, history=state)`` gives as an answer.
		"""

	def receive(self, run: Run, parked: Mapping[str, Any], given: Any, answer: str | None) -> Any:
		"""Read and check what ``agent.resume`` delivers to a run parked under its kind (`parks`).

		Called where ``agent.resume`` is called, before the run goes on (and before a durable
		backend starts its next segment): raise to refuse, and nothing runs.

		Args:
			run: The parked run (nothing of it runs here).
			parked: ``state.pending``, as saved.
			given: ``agent.resume(state, decision=...)``'s value, or None.
			answer: ``agent.resume(state, answer=...)``'s value, or None.

		Returns:
			What the run hands to `resume`.
		"""
		return given

	def requests(self, run: Run, parked: Mapping[str, Any]) -> list[Any]:
		"""The open requests of a run parked under its kind (`parks`), for the application.

		``agent.approval_requests(state)`` returns them.

		Args:
			run: The parked run (nothing of it runs here).
			parked: ``state.pending``, as saved.
		"""
		return []

	async def claim_resume(
		self, agent: str, state: RunState
	) -> Callable[[], Awaitable[None]] | None:
		"""Take a parked run's step for this ``agent.resume``, or refuse the resume (raise).

		Called once the delivery was read and checked, before the run goes on, for a run that no
		durable backend drives (a backend keeps one resume per parked step itself). Raise
		`openmolt_core.errors.ConfigurationError` to refuse: processes that share what a
		capability keeps (the run store) resume a step once, so its calls never run twice.

		Args:
			agent: The agent's name.
			state: The parked state being resumed (nothing of it runs here).

		Returns:
			What gives the step back if the resume is refused before the run goes on (a
			refused decision), or None: nothing was taken.
		"""
		return None

	def new_root_run(self, agent: str, state: RunState) -> None:
		"""A new run that no other run started is made: note in it what its caller's context says.

		As `new_run` (once per run, where its first state is made, saved or journaled with it;
		no I/O, no await), before the ``new_run`` hooks, and not for a nested run (a sub-agent's,
		a guardrail agent's): that one is driven in its caller's context, which its caller's
		state keeps (the observers mark a run with the trigger it was started under).

		Args:
			agent: The agent's name.
			state: The new run's state.
		"""

	async def refresh_tools(self, binder: ToolBinder) -> None:
		"""Ask the `list_tools` hooks again before a run, a resume or a durable execution.

		Called before the first message and the reply schema are built, so a run's prompt and
		schema never change while it runs. The `openmolt_core.capabilities.sources.Sources`
		capability has it (the assembly adds one where another capability lists tools).

		Args:
			binder: What the capability may do with the agent (list, redact, rebind).
		"""

	def keep_tools(self, binder: ToolBinder, state: RunState, new: bool) -> None:
		"""Bind the tools a run began with, just before its tool set is made (no await between).

		Args:
			binder: The agent, as for `refresh_tools`.
			state: The run's state (what it recorded, or where a new run records).
			new: Whether the run is a new one (it records what it binds).

		Raises:
			RunError: A tool the run began with is gone or has changed (the state is kept).
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


_OURS = tuple(
	f"openmolt_{dist}."
	for dist in ("core", "mcp", "otel", "dbos", "serve", "ui", "evals", "integrations", "providers")
)
"""The modules of OpenMolt's own distributions (their capabilities' spelling is tested, not checked)."""


_RETIRED = {
	"gate_step": (
		"answer Approve(rule) from before_tool (the approvals gate then asks or parks the call) "
		"and name the gate's approval step of a concurrent batch in reserve_steps"
	),
	"gate_reserve": (
		"name the approval step of a call your before_tool may answer Approve for in reserve_steps"
	),
	"gate_tool": (
		"decide the call in before_tool (Proceed, Refuse or Park), as a capability that parks "
		"under a kind of its own (Capability.parks, receive, resume)"
	),
}
"""Hooks the loop no longer calls, with what replaces each (a class defining one is refused)."""


def _check_spelling(cls: type[Capability], *, near: bool | None = None) -> None:
	"""Refuse a capability class whose hooks the loop would miss or misuse.

	A method named almost like a hook is never called (a guard left off without a word), nor is
	one named like a retired hook (`_RETIRED`); a hook written sync where the loop awaits it, or
	async where it does not, fails at each call.
	``near`` compares the other public methods' names with the hooks' (default: for a class of
	another distribution than OpenMolt's own).
	"""
	import inspect

	known = {n for n in dir(Capability) if not n.startswith("_")}
	# The built-in capabilities' helper methods are tested by name once
	# (tests/core/test_hooks_spelling.py), not compared at each process's first agent (difflib).
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
	unknown = sorted(str(h) for h in active if h not in _RESOLVED)
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
	"""Ask a capability's building hook (``tools``, ``first_turn``...), checking its answer.

	Args:
		capability: The capability.
		hook: The hook's name.
		*args: What the hook is given.

	Raises:
		PluginError: The hook raised (not an `openmolt_core.errors.OpenMoltError`); it names the
			capability and the hook.
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


def _text(answer: object) -> TypeGuard[str]:
	return isinstance(answer, str)


def _texts(answer: object) -> TypeGuard[Mapping[str, str]]:
	return isinstance(answer, Mapping) and all(
		isinstance(k, str) and isinstance(v, str) for k, v in answer.items()
	)


def _policy(answer: object) -> TypeGuard[Literal["retry", "ask", "fail"]]:
	return answer in ("retry", "ask", "fail")


def _sends(answer: object) -> TypeGuard[ModelSend]:
	return callable(answer)


def _fits(answer: object) -> TypeGuard[FittedSchema]:
	from openmolt_core.envelope import FittedSchema

	return isinstance(answer, FittedSchema)


def _mapping(answer: object) -> bool:
	return isinstance(answer, Mapping)


class Hooks:
	"""An agent's capabilities, with each hook's list resolved once (only overriding ones).

	Args:
		capabilities: In the order they run.

	Raises:
		ConfigurationError: A capability is not one, has no valid name, or two share a name.
	"""

	# The run hooks, one resolved list each (`_RESOLVED`, `__slots__`): the bound methods of the
	# capabilities that override it, in the order they run (`after_tool`: the last capability's
	# first; `before_tool`: those whose decisions the loop journals). The hooks the loop asks of one
	# capability are not among them: ``wrap_call`` (`by_keyword`), ``resume``, ``receive`` and
	# ``requests`` (the capability that parked the run: `by_kind`, or the one a `Park` names).
	# A list whose hook the loop asks one way (told in order, asked until a `Stop`, asked for its
	# first answer) tells or asks it as the hook is called (``tell``, ``ask``), typed from the
	# hook's own signature (tests/core/test_hooks_dispatch.py compares them); the others are read
	# where they are asked (the methods below), their answers checked there.
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

	__slots__ = (
		"_calls",
		"_events",
		"_narrowed",
		"before_tool_unjournaled",
		"by_keyword",
		"by_kind",
		"by_name",
		"capabilities",
		"model_call_events",
		*__annotations__,  # the hooks' lists, above
	)

	def __init__(self, capabilities: Sequence[Capability] = ()) -> None:
		self.capabilities: tuple[Capability, ...] = ()
		self.by_name: dict[str, Capability] = {}
		self.by_kind: dict[str, Capability] = {}
		"""The capabilities that park steps under a kind of their own (`Capability.parks`)."""
		self.by_keyword: dict[str, CallWrap] = {}
		"""The `Capability.wrap_call` of each capability that takes a keyword (`Capability.takes`)."""
		self._events: frozenset[str] | None = None  # event_names, once asked
		self._narrowed: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # checked last
		self.model_call_events: int = 0
		"""The event numbers the `Capability.wrap_model` hooks take per model call, summed (a
		hook inside one that sends the call on several times: for each, `Capability.model_calls`)."""
		self._calls: int = 1  # how many times a hook added now runs per model call, at most
		for hook in _RESOLVED:
			setattr(self, hook, _EMPTY[hook])
		self.before_tool_unjournaled: tuple[
			Callable[[Run, CallTool, ToolSpec], Awaitable[ToolDecision]], ...
		] = ()
		"""The `Capability.before_tool` hooks whose decisions the loop does not journal
		(``journal_decisions = False``): asked after the others, outside their step."""
		for cap in capabilities:
			self._add(cap)

	def adding(self, *capabilities: Capability) -> Hooks:
		"""These hooks and more capabilities', after them, in order; these stay as they are.

		Cheaper than resolving every capability again: an instance resolves the hooks its
		agents share once, and adds each agent's own (its safety, the approvals gate) to them.
		"""
		new = Hooks.__new__(Hooks)
		for slot in Hooks.__slots__:
			setattr(new, slot, getattr(self, slot))
		new.by_name = dict(self.by_name)
		new.by_kind = dict(self.by_kind)
		new.by_keyword = dict(self.by_keyword)
		for capability in capabilities:
			new._add(capability)
		return new

	def _add(self, cap: Capability) -> None:
		if not isinstance(cap, Capability):
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__} is not a Capability; subclass "
				"openmolt.Capability (or name a registered capability)"
			)
		name = type(cap).name
		if cap.name != name:  # the state, the hooks and the tools' prefix would disagree
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__} sets its name on the instance "
				f"({cap.name!r}); set it on the class instead (name = {cap.name!r}), where the "
				"loop reads it"
			)
		if not isinstance(name, str) or not _NAME.fullmatch(name):
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__}.name must be a name of letters, digits, "
				f"'_' and '-' starting with a letter (got {name!r})"
			)
		if name in self.by_name:
			raise ConfigurationError(
				f"capabilities: two capabilities are named {name!r}; a name is unique per "
				"agent (it keys the run's state and journal)"
			)
		if type(cap).events:
			self._check_events(cap)
		kind = type(cap).parks
		if kind:
			if kind in _KERNEL_KINDS or kind in self.by_kind:
				taken = self.by_kind.get(kind)
				by = f"capability {type(taken).name!r}" if taken is not None else "the loop"
				raise ConfigurationError(
					f"capabilities: {type(cap).__name__} parks steps under kind {kind!r}, which "
					f"{by} already uses; a kind names one capability per agent"
				)
			self.by_kind[kind] = cap
		keyword = type(cap).takes
		if keyword:
			if keyword in self.by_keyword:
				raise ConfigurationError(
					f"capabilities: {type(cap).__name__} takes the keyword {keyword!r}, which "
					f"capability {_named(self.by_keyword[keyword])!r} already takes; a keyword "
					"names one capability per agent"
				)
			self.by_keyword[keyword] = cap.wrap_call
		events = cap.model_call_events
		if type(events) is not int or events < 0:
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__}.model_call_events must be a whole number of "
				f"events, 0 or more (got {events!r})"
			)
		calls = cap.model_calls
		if type(calls) is not int or calls < 1:
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__}.model_calls must be a whole number of "
				f"calls, 1 or more (got {calls!r})"
			)
		self.model_call_events += events * self._calls
		self._calls *= calls
		self.by_name[name] = cap
		self.capabilities += (cap,)
		self._events = None
		overridden = _overridden(type(cap))
		active = _active(cap) if "active_hooks" in overridden else None
		for hook in overridden:
			if hook not in _RESOLVED or (active is not None and hook not in active):
				continue
			method = getattr(cap, hook)
			if hook == "before_tool" and not type(cap).journal_decisions:
				self.before_tool_unjournaled += (method,)
			elif hook == "after_tool":  # they bracket the call: the last capability's first
				self.after_tool = self.after_tool.adding(method, first=True)
			else:
				setattr(self, hook, getattr(self, hook).adding(method))

	def _check_events(self, cap: Capability) -> None:
		# A registered name is what handlers, observers, the run store and the viewer go by.
		from openmolt_core.events import EVENT_NAMES, register_events

		taken = self.event_names()
		for event in type(cap).events:
			if not isinstance(event, str) or not event:
				raise ConfigurationError(
					f"capabilities: {type(cap).__name__}.events must map event names to event "
					f"classes (got the key {event!r})"
				)
			by = "the loop" if event in EVENT_NAMES else None
			if event in taken:
				other = next(c for c in self.capabilities if event in type(c).events)
				by = f"capability {type(other).name!r}"
			if by is not None:
				raise ConfigurationError(
					f"capabilities: {type(cap).__name__} registers the event {event!r}, which "
					f"{by} already emits; name yours after the capability "
					f"('{type(cap).name}:{event.rpartition(':')[2]}')"
				)
		register_events(type(cap).name, type(cap).events)  # readers of stored events ask it

	def __bool__(self) -> bool:
		return bool(self.capabilities)

	def event_names(self) -> frozenset[str]:
		"""The event names the capabilities register."""
		found = self._events
		if found is None:  # agents that share these hooks ask once
			found = self._events = frozenset(n for c in self.capabilities for n in type(c).events)
		return found

	async def first_model(self, run: Run) -> tuple[Stop | None, list[Alongside]]:
		"""Ask each `Capability.before_first_model` in order; the first `Stop` ends the asking.

		Returns:
			The `Stop`, or None; the checks to run alongside the first model call.
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
		"""A new run's memory: a copy of the first `Capability.first_memory` answer that is not None.

		A copy: the run updates its memory in place, never the capability's own mapping.
		"""
		answer = self.first_memory.ask(agent, memory, state)
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
		"""Each `Capability.hand_down` answer, merged per call.

		``capabilities`` add up, each instance once: two capabilities may hand down the same one
		(`Safety` and the `TaintedStart` it handed down both hand it on).
		"""
		out: list[dict[str, Any]] = [{} for _ in tools]
		for hook in self.hand_down:
			answers = _ask(hook, run, tools)
			if isinstance(answers, Sequence) and not answers:  # most calls: nothing to hand down
				continue
			if not (
				isinstance(answers, Sequence)
				and len(answers) == len(tools)
				and all(map(_mapping, answers))
			):
				raise _wrong(hook, answers, "one dict of CallingRun fields per tool, or ()")
			for merged, answer in zip(out, answers, strict=False):
				if taken := sorted(LOOP_FIELDS & answer.keys()):
					raise _wrong(hook, answers, f"fields the loop does not set (not {taken})")
				if not isinstance(answer.get("capabilities", ()), list | tuple):  # no set: ordered
					raise _wrong(hook, answers, "'capabilities' as a list or tuple, in order")
				caps = _distinct((*merged.get("capabilities", ()), *answer.get("capabilities", ())))
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
		"""Ask each capability's `Capability.before_tool` in order; the first Refuse, Park or Stop wins.

		A `Proceed` with a new input hands that input to the next capability, and its note is
		kept; an `Approve` does too, and holds the call under its rule (``run.held``: the next
		capabilities see it; one that parks under a kind of its own decides it).

		Args:
			run: The run.
			call: The call.
			tool: Its tool's record.
			journaled: Ask the capabilities whose decisions the loop journals, or the others.
			held: The rules the call is held under so far (the journaled capabilities').

		Returns:
			The name of the capability that decided (the last that changed the input or held
			the call, for a `Proceed`; empty when none did), the decision (a `Proceed` with the
			input to run and the notes, when none refused), the rules that hold it, and the
			input as the capabilities left it (None: unchanged).
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
			The steps the call is decided in (of a kind a capability parks under: the
			approvals gate's ``approval``), reserved before the call's ``tool`` step, and the
			others, after it; each in the order the capabilities named them.
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
		"""Ask each capability's `Capability.before_finish` in order; the first non-Proceed wins.

		A `Finish` answered replaces the finish for the next capabilities.

		Returns:
			The finish to end with (the model's, or the last one a capability answered), and
			the decision.
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
		"""Ask each capability's `Capability.before_words` in order; the first non-Proceed wins.

		A text answered replaces the words for the next capabilities.

		Returns:
			The text to say (the model's, or the last one a capability answered), and the
			decision.
		"""
		for hook in self.before_words:
			answer = await _await(hook, run, words)
			if isinstance(answer, str):
				if answer != words.text:
					words = replace(words, text=answer)
			elif isinstance(answer, Refuse | Stop):
				return words.text, _checked(hook, answer)
			elif not isinstance(answer, Proceed) or answer.input is not None:
				# Never taken for a yes: it may be a guard's no.
				raise _wrong(
					hook, answer, "Proceed(), the text to say, Refuse(reason) or Stop(reason)"
				)
		return words.text, PROCEED

	async def after(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> tuple[dict[str, Any], Stop | None]:
		"""Pass a result entry through each capability's `Capability.after_tool`, last first.

		Returns:
			The entry the model reads, and the first `Stop` a capability answered (the next
			capabilities see its entry).
		"""
		stopped = None
		for hook in self.after_tool:
			answer = await _await(hook, run, call, tool, entry)
			if isinstance(answer, Stop):
				stopped = stopped or _checked(hook, answer)
				answer = dict(answer.entry or {**_key(entry), "ok": False, "error": WITHHELD})
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
				extra = set(handles) - set(given)  # a tool it was not given: unknown, or hidden
				if extra:
					raise _wrong(
						hook, handles, f"only handles it was given (not {', '.join(sorted(extra))})"
					)
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
		"""``step`` wrapped in every `Capability.wrap_tool`, the first capability outermost.

		Each hook's ``inside`` runs within the one of the hook around it, in the journaled step.

		Args:
			run: The run.
			call: The tool call.
			tool: The called tool's record.
			step: Runs the call's journaled step (`ToolStep`).
		"""
		return await _tool_layer(self.wrap_tool, 0, run, call, tool, step, None)

	def wrap(
		self, run: Run, send: Callable[[ModelRequest], Awaitable[ModelResponse]]
	) -> Callable[[ModelRequest], Awaitable[ModelResponse]]:
		"""``send`` wrapped in every `Capability.wrap_model`, the first capability outermost."""
		for hook in reversed(self.wrap_model):
			send = functools.partial(_wrapped, hook, run, send)
		return send

	async def claimed(self, agent: str, state: RunState) -> Callable[[], Awaitable[None]] | None:
		"""Ask each `Capability.claim_resume` in order: what gives back every claim (None: none).

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
		"""Have each `Capability.refresh_tools` list the tools known at run time, in order.

		What a hook raises passes as it is: `listed` names the capability whose list was wrong.
		"""
		for hook in self.refresh_tools:
			await hook(binder)


def _distinct(capabilities: tuple[Any, ...]) -> tuple[Any, ...]:
	"""``capabilities`` in order, each instance once."""
	if len(capabilities) < 2:
		return capabilities
	kept: dict[int, Any] = {}  # by identity: a capability need not be hashable
	for capability in capabilities:
		kept.setdefault(id(capability), capability)
	return tuple(kept.values())


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


class _Listed(tuple[Callable[..., Any], ...]):
	"""A hook's resolved list in `Hooks`: the bound methods of the capabilities that override it.

	Args:
		hook: The hook's name (for the errors that name it).
		methods: The methods, in the order they run.
	"""

	hook: str

	def __new__(cls, hook: str, methods: tuple[Callable[..., Any], ...] = ()) -> Self:
		new = super().__new__(cls, methods)
		new.hook = hook
		return new

	def adding(self, method: Callable[..., Any], *, first: bool = False) -> Self:
		"""This list with ``method`` added after the others (``first``: before them)."""
		return type(self)(self.hook, (method, *self) if first else (*self, method))


class _Tell(_Listed, Generic[_P]):
	"""A hook's list told in order (answers unread): ``tell`` takes what the hook takes.

	These lists take positional arguments only, as the loop gives them: a ``**kwargs`` would cost
	each call a dict. The signature mypy reads is the hook's own (`typing.ParamSpec`).
	"""

	if TYPE_CHECKING:

		def tell(self, *args: _P.args, **kwargs: _P.kwargs) -> None: ...

	else:

		def tell(self, *args: Any) -> None:
			for method in self:
				try:  # inline, not through `_ask`: a hot path (a tool call, a step)
					method(*args)
				except Exception as exc:
					raise _failed(method, exc)  # noqa: B904  # it chains the cause


class _TellAsync(_Listed, Generic[_P]):
	"""`_Tell` for an async hook: each is awaited in turn."""

	if TYPE_CHECKING:

		async def tell(self, *args: _P.args, **kwargs: _P.kwargs) -> None: ...

	else:

		async def tell(self, *args: Any) -> None:
			for method in self:
				try:
					await method(*args)
				except Exception as exc:
					raise _failed(method, exc)  # noqa: B904  # it chains the cause


class _UntilStop(_Listed, Generic[_P]):
	"""A hook's list asked in order until one answers `Stop` (checked: `_checked`), or None.

	Any other answer but None is refused (`_wrong`).
	"""

	if TYPE_CHECKING:

		async def ask(self, *args: _P.args, **kwargs: _P.kwargs) -> Stop | None: ...

	else:

		async def ask(self, *args: Any) -> Stop | None:
			for method in self:
				answer = await _await(method, *args)
				if answer is not None:
					if not isinstance(answer, Stop):
						raise _wrong(method, answer, "Stop(reason) or None", self.hook)
					return _checked(method, answer)
			return None


class _First(_Listed, Generic[_P, _T]):
	"""A hook's list whose first answer that is not None counts (checked: `_ANSWERS`), or None."""

	if TYPE_CHECKING:

		def ask(self, *args: _P.args, **kwargs: _P.kwargs) -> _T | None: ...

	else:

		def ask(self, *args: Any) -> Any:
			for method in self:
				answer = _ask(method, *args)
				if answer is not None:
					ok, expected = _ANSWERS[self.hook]
					if not ok(answer):
						raise _wrong(method, answer, expected, self.hook)
					return answer
			return None


_RESOLVED = tuple(Hooks.__annotations__)
"""The hooks `Hooks` resolves into a list each (its annotations, above)."""
_OVERRIDABLE = tuple(dict.fromkeys((*_RESOLVED, *_BUILDS, "active_hooks")))
"""What `_overridden` looks for in a capability class."""
_ANSWERS: dict[str, tuple[Callable[[object], bool], str]] = {
	"why_hidden": (_text, "the reason as text, or None"),
	"last_step": (_text, "the reason as text, or None"),
	"nested_in_doubt": (_policy, "'retry', 'ask', 'fail' or None"),
	"send_model": (_sends, "an async send(provider, request, model), or None"),
	"fit_reply": (_fits, "a FittedSchema, or None"),
	"first_memory": (_texts, "a mapping of memory texts by key, or None"),
}
"""What each `_First` hook may answer (besides None), and the fix its error names."""
_KINDS = {k.__name__: k for k in (_Listed, _Tell, _TellAsync, _UntilStop, _First)}
_EMPTY = {h: _KINDS[Hooks.__annotations__[h].partition("[")[0]](h) for h in _RESOLVED}
"""Each hook's list with no method, of the kind its annotation on `Hooks` declares."""


class _Through:
	"""What a wrap hook calls on (``call``, ``drive``): the next hook or the loop, whose errors it notes.

	What the hook raises is its own (a bug naming the capability) unless it is one of these: an
	error of what it wraps (a provider's, the loop's) that it let through passes as it is.
	"""

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

	def passed(self, exc: BaseException) -> bool:
		"""Whether ``exc`` came from what the hook wraps (not from the hook itself)."""
		return any(e is exc for e in self.raised)


async def _around(
	hook: Callable[..., Awaitable[Any]],
	name: str,
	run: Run,
	inner: Callable[..., Awaitable[Any]],
	kind: type[_T],
	expected: str,
	*given: Any,
) -> _T:
	"""One wrap hook (``name``: `Capability.wrap_model`, `wrap_run`) around ``inner``.

	What the hook raises of its own names its capability (`_failed`), and an answer that is no
	``kind`` is refused (`_wrong`, with what is ``expected``); what ``inner`` raised through it
	(a provider's error, the run's own end: a `RunError` with its state, the next capability's)
	passes as it came.
	"""
	through = _Through(inner)
	try:
		answer = await hook(run, *given, through)
	except Exception as exc:
		if through.passed(exc):
			raise
		raise _failed(hook, exc, name)  # noqa: B904  # it chains the cause
	if not isinstance(answer, kind):
		raise _wrong(hook, answer, expected)
	return answer


async def _wrapped(
	hook: Callable[
		[Run, ModelRequest, Callable[[ModelRequest], Awaitable[ModelResponse]]],
		Awaitable[ModelResponse],
	],
	run: Run,
	inner: Callable[[ModelRequest], Awaitable[ModelResponse]],
	request: ModelRequest,
) -> ModelResponse:
	"""One `Capability.wrap_model` around ``inner``: its own errors and wrong answers named."""
	from openmolt_core.llm import ModelResponse

	if request.model_id is not None:  # a request the hook builds anew stays for that model
		inner = functools.partial(_for_model, request.model_id, inner)
	how = "the ModelResponse of call(request), or one of its own"
	return await _around(hook, "wrap_model", run, inner, ModelResponse, how, request)


async def _work(calling: CallingRun, work: ToolWork) -> dict[str, Any]:
	"""The `ToolInside` that only runs the work (a `Capability.wrap_tool` that adds nothing)."""
	return await work()


async def _tool_layer(
	hooks: _Listed,
	at: int,
	run: Run,
	call: CallTool,
	tool: ToolSpec,
	step: ToolStep,
	outer: ToolInside | None,
	inside: ToolInside | None = None,
) -> dict[str, Any]:
	"""The tool step as the hook at ``at`` gets it; ``inside``: the previous hook's, within ``outer``."""
	if inside is not None:
		outer = inside if outer is None else functools.partial(_within, outer, inside)
	if at == len(hooks):
		return await step(outer or _work)
	layer = functools.partial(_tool_layer, hooks, at + 1, run, call, tool, step, outer)
	how = "the entry (a dict) that await step(inside) returned, or one of its own"
	return await _around(hooks[at], "wrap_tool", run, layer, dict, how, call, tool)


async def _within(
	outer: ToolInside, inner: ToolInside, calling: CallingRun, work: ToolWork
) -> dict[str, Any]:
	"""``inner`` run inside ``outer`` (the hook around it), around the call's work."""
	return await outer(calling, functools.partial(inner, calling, work))


def _for_model(
	model_id: str,
	inner: Callable[[ModelRequest], Awaitable[ModelResponse]],
	request: ModelRequest,
) -> Awaitable[ModelResponse]:
	"""Send ``request``; one that names no model is for ``model_id``, the hook's request's.

	A hook that builds a new `ModelRequest` instead of copying the one it was given would
	otherwise send it to the model the call was first made for (a fallback's next model's
	request to the model that failed).
	"""
	if request.model_id is None:
		request = replace(request, model_id=model_id)
	return inner(request)


def holding() -> str | None:
	"""The rules a call is held under while the capabilities decide it (`Approve`), or None."""
	return _HELD.get()


_HELD: ContextVar[str | None] = ContextVar("openmolt_held", default=None)


def _named(hook: Callable[..., Any]) -> str:
	"""The name of the capability a resolved hook (a bound method) belongs to."""
	name: str = getattr(type(getattr(hook, "__self__", None)), "name", "") or "?"
	return name


def _failed(hook: Callable[..., Any], exc: Exception, called: str = "") -> Exception:
	"""What a capability's hook raised, as the error that ends the run (`Hooks` raises it).

	An `openmolt_core.errors.OpenMoltError` is the capability's own word and passes as it is;
	anything else (a bug) becomes a `PluginError` naming the capability and the hook, with the
	original as its cause.

	Args:
		hook: The hook (a bound method of the capability).
		exc: What it raised.
		called: The hook's name (default: the method's).
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
	"""``decision``, once its fields are what the loop can save and report (else a TypeError).

	A `Stop` ends the run with one of `_STOPS` (a parked status would leave nothing to resume),
	a `Park` with one of `_PARKS`; reasons are text; entries, requests and inputs are dicts.
	"""
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


WITHHELD = "result withheld: the run stopped"
"""The error of a result a capability's `Capability.after_tool` stopped the run on."""


def _key(entry: Mapping[str, Any]) -> dict[str, Any]:
	return {"tool": entry["tool"]} if "tool" in entry else {}


async def alongside(
	checks: Sequence[Alongside], call: Callable[[], Awaitable[Any]]
) -> tuple[Any, Stop | None]:
	"""Run ``call`` (the first model call) while the checks run; a `Stop` cancels the call.

	The call's exception, if any, is raised once every check is done with.

	Returns:
		The call's result (None when cancelled), and the `Stop` of the check that ended it.
	"""
	from openmolt_core._support.watch import watched

	return await watched(call, [check.check for check in checks])


_ALONGSIDE = "Alongside(check) whose check is an async function answering Stop or None"


async def _watching(hook: Callable[..., Any], check: Callable[[], Any]) -> Stop | None:
	"""One check a `Capability.before_first_model` hook runs alongside the first model call.

	What it raises, and an answer its contract does not allow (a check that is no async
	function, a verdict that is no `Stop` or a `Stop` a run cannot end in), names the
	capability as its hook's would (`_failed`, `_wrong`, `_checked`).
	"""
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


def drive_wrapped(
	hooks: Hooks, run: Run, drive: Callable[[], Awaitable[RunResult]]
) -> Callable[[], Awaitable[RunResult]]:
	"""``drive`` wrapped in every `Capability.wrap_run`, the first capability outermost.

	What a hook raises of its own names its capability (`_failed`), and an answer that is no
	`RunResult` is refused; the errors of the drive it wraps pass through it as they are.
	"""
	from openmolt_core.result import RunResult

	how = "the RunResult of drive(), or one of its own"
	for hook in reversed(hooks.wrap_run):
		drive = functools.partial(_around, hook, "wrap_run", run, drive, RunResult, how)
	return drive


NO_HOOKS = Hooks()
"""The hooks of an agent without capabilities (shared: it holds nothing)."""

# A helper of the capabilities that make tools callable (tool search, offload), under its old
# name here (loaded on first use).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), {"load_tools": "openmolt_core.capabilities"})
