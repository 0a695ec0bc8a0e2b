"""Events an agent emits while it runs, and the emitter behind ``agent.on`` / ``agent.off``.

| name | class | when |
| --- | --- | --- |
| ``llmOutput`` | `LLMOutputEvent` | a model replied (text, raw response, usage) |
| ``model:fallback`` | `ModelFallbackEvent` | a model failed for good; the step goes to the next |
| ``text:delta`` | `TextDeltaEvent` | new text of the reply's message or output, while it streams |
| ``command:ready`` | `CommandReadyEvent` | a command of the reply was fully received, while it streams |
| ``commandsQueued`` | `CommandsQueuedEvent` | the reply parsed into commands, before they run |
| ``tool:call`` | `ToolCallEvent` | a tool is about to run |
| ``tool:response`` | `ToolResponseEvent` | a tool returned (or failed) |
| ``planUpdate`` | `PlanUpdateEvent` | the plan changed |
| ``memoryUpdate`` | `MemoryUpdateEvent` | long- or short-term memory changed |
| ``humanInput`` | `HumanInputEvent` | the agent asked a person and got an answer |
| ``approval:request`` | `ApprovalRequestEvent` | a tool call waits for a decision |
| ``approval:decision`` | `ApprovalDecisionEvent` | a decision was applied, or refused |
| ``authorization:request`` | `AuthorizationRequestEvent` | a call waits for its end user to connect an account |
| ``guardrail`` | `GuardrailEvent` | a guardrail or the taint policy acted |
| ``taint`` | `TaintEvent` | the run read untrusted content for the first time |
| ``error`` | `ErrorEvent` | a mistake was fed back to the model, or the run failed |
| ``compaction`` | `CompactionEvent` | older steps were summarised to fit the context window |
| ``finish`` | `FinishEvent` | the run ended (same data as ``run()``'s result) |
| ``schedule:run`` | `ScheduleEvent` | a scheduled run started |
| ``schedule:end`` | `ScheduleEvent` | a scheduled run ended (its record says how) |
| ``schedule:skip`` | `ScheduleEvent` | a scheduled run did not start (overlap, or missed) |
| ``run:stranded`` | `RunStrandedEvent` | a durable run waits for a version of its agent no live worker serves |

Handlers may be sync or async. A handler that raises is logged and never breaks the run. The
events of a sub-agent (an agent used as a tool) reach the calling agent's handlers too, with
``parent_run_id`` set to the calling run's id.

``text:delta`` and ``command:ready`` are the streaming events (`openmolt_core.streaming`): a run
streams its model calls only when something listens to one of them. They are previews, not
numbered (``seq`` is 0), not journaled and not stored: a replayed step does not stream again, a
``model:fallback`` starts the step's text over, and a reply that turns out invalid runs nothing
(an ``error`` event follows). ``llmOutput`` and ``commandsQueued`` stay the final word.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
	from openmolt_core.decisions import ApprovalRequest
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunRecord, RunResult

__all__ = [
	"EVENT_NAMES",
	"STREAM_EVENTS",
	"ApprovalDecisionEvent",
	"ApprovalRequestEvent",
	"AuthorizationRequestEvent",
	"CommandReadyEvent",
	"CommandsQueuedEvent",
	"CompactionEvent",
	"ErrorEvent",
	"Event",
	"EventEmitter",
	"EventName",
	"FinishEvent",
	"GuardrailEvent",
	"Handler",
	"HumanInputEvent",
	"LLMOutputEvent",
	"MemoryUpdateEvent",
	"ModelFallbackEvent",
	"PlanUpdateEvent",
	"RunStrandedEvent",
	"ScheduleEvent",
	"TaintEvent",
	"TextDeltaEvent",
	"ToolCallEvent",
	"ToolResponseEvent",
]

log: logging.Logger = logging.getLogger("openmolt")

EventName = Literal[
	"llmOutput",
	"model:fallback",
	"text:delta",
	"command:ready",
	"commandsQueued",
	"tool:call",
	"tool:response",
	"planUpdate",
	"memoryUpdate",
	"humanInput",
	"approval:request",
	"approval:decision",
	"authorization:request",
	"guardrail",
	"taint",
	"error",
	"compaction",
	"finish",
	"schedule:run",
	"schedule:end",
	"schedule:skip",
	"run:stranded",
]
EVENT_NAMES: frozenset[str] = frozenset(EventName.__args__)  # type: ignore[attr-defined]
STREAM_EVENTS: frozenset[str] = frozenset({"text:delta", "command:ready"})
"""The streaming events: unnumbered previews that observers and stores do not receive."""


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
class ModelFallbackEvent(Event):
	"""A model failed in a way its retries gave up on; the step goes to the next model.

	``reason`` is one of `openmolt_core.fallback.FallbackReason` (``server_error``,
	``rate_limited``, ``overloaded``, ``timeout``, ``unreachable``); ``error`` the failure's
	message (secrets scrubbed) and ``status_code`` its HTTP status, when there was one.
	"""

	from_model: str
	to_model: str
	reason: str
	error: str
	status_code: int | None = None
	name: str = "model:fallback"


@dataclass(slots=True, kw_only=True)
class TextDeltaEvent(Event):
	"""New text of the reply while it streams (a preview: see the module docstring).

	Args:
		index: The command's position in the reply (0-based).
		field: ``humanMessage`` or ``output`` of ``finish``, or ``message`` of
			``requestHumanInput``.
		text: The new text. The deltas of one field concatenate to its final value; an
			``output`` that is not a string comes as its JSON source text (``raw``).
		raw: Whether ``text`` is JSON source rather than a string's content.
		model: The model writing the reply (``provider:model``).
	"""

	index: int
	field: str
	text: str
	raw: bool = False
	model: str = ""
	name: str = "text:delta"


@dataclass(slots=True, kw_only=True)
class CommandReadyEvent(Event):
	"""A command of the reply was fully received while it streams (not yet validated or run).

	Args:
		index: The command's position in the reply (0-based).
		command: The command as the model wrote it (JSON).
		model: The model writing the reply (``provider:model``).
	"""

	index: int
	command: dict[str, Any]
	model: str = ""
	name: str = "command:ready"


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
class ApprovalRequestEvent(Event):
	"""A tool call waits for a decision; ``request`` is what the approver sees (input redacted)."""

	request: ApprovalRequest
	name: str = "approval:request"


@dataclass(slots=True, kw_only=True)
class ApprovalDecisionEvent(Event):
	"""A decision on a call: ``action`` is ``approved``, ``edited``, ``denied`` or ``refused``.

	``refused`` means no valid decision came (a forged, replayed or stale one, or a handler that
	failed): the call did not run and ``reason`` says why. ``decision_id`` is the decision's id;
	``input`` the edited input the call runs with (``edited`` only, redacted).
	"""

	tool: str
	call: str
	action: str
	reason: str = ""
	decision_id: str = ""
	input: dict[str, Any] | None = None
	name: str = "approval:decision"


@dataclass(slots=True, kw_only=True)
class AuthorizationRequestEvent(Event):
	"""A tool call waits for its end user to connect an account (`openmolt_core.accounts`).

	``request`` holds ``integration``, ``user``, ``scopes``, ``url`` (the consent URL to show
	them), ``tool``, ``reason`` (``not_connected``, ``scopes`` or ``revoked``) and ``index``
	(the call's place in its step); no secret. The accounts capability
	(`openmolt_core.capabilities.accounts`) emits one per parked call as the run ends parked.
	"""

	request: dict[str, Any]
	name: str = "authorization:request"


@dataclass(slots=True, kw_only=True)
class GuardrailEvent(Event):
	"""A guardrail acted (``action``: ``rewrite``, ``refuse`` or ``trip``), or the taint policy did.

	``guardrail`` is the guardrail's name (``taint_policy`` for the policy, whose actions are
	``refuse`` and ``approve``: the call waits for a decision). ``stage`` is ``input``,
	``tool_call``, ``tool_result`` or ``output``; ``tool`` and ``call`` name the tool call at the
	tool stages.
	"""

	guardrail: str
	stage: str
	action: str
	reason: str = ""
	tool: str = ""
	call: str = ""
	name: str = "guardrail"


@dataclass(slots=True, kw_only=True)
class TaintEvent(Event):
	"""The run read untrusted content for the first time (`openmolt_core.taint`).

	``tool`` and ``call`` name the call whose result it was; from now on the taint policy applies
	to outbound calls.
	"""

	tool: str
	call: str
	name: str = "taint"


@dataclass(slots=True, kw_only=True)
class ErrorEvent(Event):
	"""Something went wrong: ``kind`` says what (``invalid_json``, ``tool``, ``provider``...)."""

	kind: str
	message: str
	fatal: bool = False
	name: str = "error"


@dataclass(slots=True, kw_only=True)
class CompactionEvent(Event):
	"""Older steps were summarised: ``through_step`` is the last one, tokens are estimates."""

	through_step: int
	tokens_before: int
	tokens_after: int
	files: list[str]
	name: str = "compaction"


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


@dataclass(slots=True, kw_only=True)
class ScheduleEvent(Event):
	"""A scheduled run started, ended or was skipped; ``record`` holds its due time and status."""

	schedule_id: str
	record: RunRecord
	name: str = "schedule:run"


@dataclass(slots=True, kw_only=True)
class RunStrandedEvent(Event):
	"""A durable run of this agent waits for an agent version no live worker serves.

	Emitted by a worker at start (``run_id`` is the stranded run's). Keep a worker of the old
	definition until such runs finish, cancel them, or resume them on the current definition
	when the change is compatible (docs/guides/durable.md).

	Args:
		version: The application version the run was started under.
		current: The version this worker serves.
		worker: The worker that ran it last.
	"""

	version: str
	current: str
	worker: str
	name: str = "run:stranded"


Handler = Callable[[Any], Awaitable[None] | None]
"""An event handler: takes the event, may be async."""


@dataclass(slots=True)
class EventEmitter:
	"""Keeps handlers per event name and calls them, sync or async, without letting them fail a run."""

	handlers: dict[str, list[Handler]] | None = None  # made on the first `on`: agents are many
	extra: frozenset[str] = frozenset()
	"""Event names accepted beyond the built-in ones (those the agent's capabilities register)."""

	def on(self, name: str, handler: Handler) -> None:
		"""Add a handler for an event name.

		Raises:
			ValueError: The event name is unknown.
		"""
		if name not in EVENT_NAMES and name not in self.extra:
			raise ValueError(
				f"unknown event {name!r}; use one of: {', '.join(sorted(EVENT_NAMES | self.extra))}"
			)
		if self.handlers is None:
			self.handlers = {}
		self.handlers.setdefault(name, []).append(handler)

	def off(self, name: str, handler: Handler | None = None) -> None:
		"""Remove one handler, or every handler of the event when ``handler`` is None."""
		if self.handlers is None:
			return
		if handler is None:
			self.handlers.pop(name, None)
			return
		handlers = self.handlers.get(name, [])
		if handler in handlers:
			handlers.remove(handler)

	def wants(self, name: str) -> bool:
		"""Whether anything listens to an event (so callers can skip building it)."""
		return bool(self.handlers and self.handlers.get(name))

	async def emit(self, event: Event) -> None:
		"""Call every handler of the event in order; a failing handler is logged and skipped.

		Unlike the loop's other callbacks, a sync handler runs on the event loop itself: it is a
		notification, and it may touch the loop's objects (``anyio.Event().set()``, a memory
		stream), which a worker thread could not. It must be quick; a slow one should be async
		(awaited, and interrupted by the time budget) or hand its work to a thread itself.
		"""
		for handler in tuple(self.handlers.get(event.name, ()) if self.handlers else ()):
			try:
				result = handler(event)
				if inspect.isawaitable(result):
					await result
			except Exception:
				log.exception("event handler for %r failed; the run goes on", event.name)
