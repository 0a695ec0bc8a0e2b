"""Events an agent emits while it runs, and the emitter behind ``agent.on`` / ``agent.off``.

| name | class | when |
| --- | --- | --- |
| ``llmOutput`` | `LLMOutputEvent` | a model replied (text, raw response, usage) |
| ``model:fallback`` | `fallback.ModelFallbackEvent` (the fallback capability emits it) | a model failed for good; the step goes to the next |
| ``text:delta`` | `capabilities.streaming.TextDeltaEvent` | new text of the reply's message or output, while it streams |
| ``command:ready`` | `capabilities.streaming.CommandReadyEvent` | a command of the reply was fully received, while it streams |
| ``commandsQueued`` | `CommandsQueuedEvent` | the reply parsed into commands, before they run |
| ``tool:call`` | `ToolCallEvent` | a tool is about to run |
| ``tool:response`` | `ToolResponseEvent` | a tool returned (or failed) |
| ``planUpdate`` | `PlanUpdateEvent` | the plan changed |
| ``memoryUpdate`` | `MemoryUpdateEvent` | long- or short-term memory changed |
| ``humanInput`` | `HumanInputEvent` | the agent asked a person and got an answer |
| ``approval:request`` | `approvals.ApprovalRequestEvent` | a tool call waits for a decision |
| ``approval:decision`` | `approvals.ApprovalDecisionEvent` | a decision was applied, or refused |
| ``authorization:request`` | `accounts.AuthorizationRequestEvent` | a call waits for its end user to connect an account |
| ``guardrail`` | `capabilities.safety.GuardrailEvent` | a guardrail or the taint policy acted |
| ``taint`` | `capabilities.safety.TaintEvent` | the run read untrusted content for the first time |
| ``error`` | `ErrorEvent` | a mistake was fed back to the model, or the run failed |
| ``compaction`` | `compaction.CompactionEvent` | older steps were summarised to fit the context window |
| ``finish`` | `FinishEvent` | the run ended (same data as ``run()``'s result) |
| ``schedule:run`` | `scheduler.ScheduleEvent` | a scheduled run started |
| ``schedule:end`` | `scheduler.ScheduleEvent` | a scheduled run ended (its record says how) |
| ``schedule:skip`` | `scheduler.ScheduleEvent` | a scheduled run did not start (overlap, or missed) |
| ``run:stranded`` | `_durable.RunStrandedEvent` | a durable run waits for a version of its agent no live worker serves |

The kernel's events are defined here; a feature's events beside the feature (the class column
names their module in `openmolt_core`), and re-exported here on first use, so
``openmolt_core.events.GuardrailEvent`` still imports. Every name in the table is accepted by
``agent.on`` whatever the agent's features.

Readers of stored events (the run viewer) ask `describe_event <openmolt_core.observe.describe_event>`
what a name stands for and who emits it: the loop's names, and those a capability of this process
registers (`Capability.events <openmolt_core.hooks.Capability>`, recorded here by
`register_events` as the agent is made), one registry for every reader.

An event is built only when a handler listens to its name, so the loop imports its class (and
this module) at its first event: a run nobody listens to never defines them. The names and the
emitter, which every agent has, are in `openmolt_core._emitter`, re-exported here.

Handlers may be sync or async. A handler that raises is logged and never breaks the run. The
events of a sub-agent (an agent used as a tool) reach the calling agent's handlers too, with
``parent_run_id`` set to the calling run's id.

``text:delta`` and ``command:ready`` are previews (a run streams only while something listens to
one): not numbered, journaled or stored; docs/guides/streaming.md says what they promise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from openmolt_core._emitter import (
	EVENT_NAMES,
	STREAM_EVENTS,
	EventEmitter,
	EventName,
	EventSink,
	Handler,
)
from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunResult

__all__ = [
	"EVENT_NAMES",
	"FEATURE_EVENTS",
	"REGISTERED_EVENTS",
	"STREAM_EVENTS",
	"CommandsQueuedEvent",
	"ErrorEvent",
	"Event",
	"EventEmitter",
	"EventName",
	"EventSink",
	"FinishEvent",
	"Handler",
	"HumanInputEvent",
	"LLMOutputEvent",
	"MemoryUpdateEvent",
	"PlanUpdateEvent",
	"ToolCallEvent",
	"ToolResponseEvent",
	"register_events",
]

FEATURE_EVENTS: Mapping[str, str] = {
	"ApprovalDecisionEvent": "openmolt_core.approvals",
	"ApprovalRequestEvent": "openmolt_core.approvals",
	"AuthorizationRequestEvent": "openmolt_core.accounts",
	"CommandReadyEvent": "openmolt_core.capabilities.streaming",
	"CompactionEvent": "openmolt_core.compaction",
	"GuardrailEvent": "openmolt_core.capabilities.safety",
	"ModelFallbackEvent": "openmolt_core.capabilities.fallback",
	"RunStrandedEvent": "openmolt_core._durable",
	"ScheduleEvent": "openmolt_core.scheduler",
	"TaintEvent": "openmolt_core.capabilities.safety",
	"TextDeltaEvent": "openmolt_core.capabilities.streaming",
}
"""The event classes that live beside their feature, by name, and their module: re-exported here
on first use (not in __all__: a star import does not load every feature)."""


@dataclass(slots=True, kw_only=True)
class Event:
	"""Fields every event has.

	Args:
		agent: The agent's name.
		step: The step number (1-based) the event belongs to.
		run_id: The run's id (`openmolt_core.result.RunState.run_id`); for ``schedule:run`` and
			``schedule:end``, the scheduled run's (durable: ``<schedule id>@<due time>``); empty
			for ``schedule:skip``.
		seq: The event's number in its run, 1-based and deterministic: the same run replayed
			gives the same numbers, so ``(run_id, seq)`` identifies an event.
		parent_run_id: For a sub-agent's event, the id of the run that called it as a tool.
		replayed: The event was emitted again while a durable run recovered from a crash caught
			up with its journal (it was delivered before the crash). Such events are not
			delivered unless the durability backend is asked to (see `openmolt_core.durability`).
	"""

	agent: str
	step: int
	name: str = ""
	run_id: str = ""
	seq: int = 0
	parent_run_id: str = ""
	replayed: bool = False


@dataclass(slots=True, kw_only=True)
class LLMOutputEvent(Event):
	"""The model replied. ``output`` is the reply text; ``raw`` the provider's response.

	``structured`` is the structured-output mode the request used (``strict``, ``partial`` or
	``off``; see `openmolt_core.structured`), or None for a provider that declares no dialect.
	``model`` is the model that answered (``provider:model``), which a fallback may change.
	``notes`` say why each part of the reply schema fell back to JSON text (or why structured
	output is off) for that model, and ``relaxed`` names the assertion keywords its dialect does
	not enforce, which the loop checks (`openmolt_core.structured.FittedSchema`).
	"""

	output: str
	raw: Any
	usage: Usage
	structured: str | None = None
	model: str = ""
	notes: tuple[str, ...] = ()
	relaxed: tuple[str, ...] = ()
	name: str = "llmOutput"


@dataclass(slots=True, kw_only=True)
class CommandsQueuedEvent(Event):
	"""The reply parsed into commands (as JSON dicts), about to run in order."""

	commands: list[dict[str, Any]]
	name: str = "commandsQueued"


@dataclass(slots=True, kw_only=True)
class ToolCallEvent(Event):
	"""A tool is about to run with this input."""

	tool: str
	input: dict[str, Any]
	name: str = "tool:call"


@dataclass(slots=True, kw_only=True)
class ToolResponseEvent(Event):
	"""A tool returned. ``response`` is the full value (the model may see a trimmed one)."""

	tool: str
	input: dict[str, Any]
	response: Any
	error: bool = False
	duration: float = 0.0
	name: str = "tool:response"


@dataclass(slots=True, kw_only=True)
class PlanUpdateEvent(Event):
	"""The plan changed; ``plan`` is the new plan as JSON dicts."""

	plan: list[dict[str, Any]]
	name: str = "planUpdate"


@dataclass(slots=True, kw_only=True)
class MemoryUpdateEvent(Event):
	"""Memory changed: which one, how, and its new content."""

	memory: Literal["longTerm", "shortTerm"]
	mode: Literal["replace", "append"]
	data: str
	name: str = "memoryUpdate"


@dataclass(slots=True, kw_only=True)
class HumanInputEvent(Event):
	"""The agent asked a person; ``response`` is the answer."""

	message: str
	response: str
	name: str = "humanInput"


@dataclass(slots=True, kw_only=True)
class ErrorEvent(Event):
	"""Something went wrong: ``kind`` says what (``invalid_json``, ``tool``, ``provider``...).

	Args:
		kind: What went wrong: ``tool`` (a call failed), ``capability`` (a capability refused
			a call or gave it a bad input), ``approval``, ``policy``, ``invalid_reply``,
			``ignored``, ``human_input``, ``provider``, ``context_exceeded`` (the model refused
			the step's request as longer than its context window and a capability shrank the
			history: the step is asked again; not fatal), ``in_doubt`` (a durable run's call
			found started but not finished after a crash: it may or may not have taken effect;
			its tool's policy says what follows, see `openmolt_core.capabilities.indoubt`).
		message: What happened, for a person (masked like every event).
		fatal: The run ends on it.
		call: The step key of the call it is about (``tool:<step>:<index>:<handle>``, as
			`openmolt_core.approvals.ApprovalRequest.call`), so a viewer shows it with that
			call; empty for an error about no one call (a reply that did not parse, the
			provider).
	"""

	kind: str
	message: str
	fatal: bool = False
	call: str = ""
	name: str = "error"


@dataclass(slots=True, kw_only=True)
class FinishEvent(Event):
	"""The run ended; ``result`` is what ``run()`` returns."""

	result: RunResult
	name: str = "finish"

	@property
	def plan(self) -> list[dict[str, Any]]:
		"""The final plan."""
		return self.result.plan

	@property
	def output(self) -> Any:
		"""The validated output (None when the run did not finish)."""
		return self.result.output

	@property
	def status(self) -> str:
		"""The run's status."""
		return self.result.status


REGISTERED_EVENTS: dict[str, tuple[str, type[Event]]] = {}
"""The event names capabilities of this process registered: who registered each, and its class
(`describe_event <openmolt_core.observe.describe_event>` reads it)."""


def register_events(by: str, events: Mapping[str, type[Event]]) -> None:
	"""Record the events a capability registers, for readers of stored events (the hooks call it).

	Args:
		by: The capability's name.
		events: Its `Capability.events <openmolt_core.hooks.Capability>`: name to class.
	"""
	for name, cls in events.items():  # a name is unique per agent; the first capability names it
		REGISTERED_EVENTS.setdefault(name, (by, cls))


__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(),
	{
		**FEATURE_EVENTS,
		# what a reader of stored events asks of a name, beside the observers (not in __all__)
		"EventInfo": "openmolt_core.observe",
		"describe_event": "openmolt_core.observe",
	},
)
