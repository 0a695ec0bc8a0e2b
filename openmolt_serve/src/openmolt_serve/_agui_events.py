"""An OpenMolt run's events as AG-UI events: the one table that maps them.

| OpenMolt | AG-UI |
| --- | --- |
| the run starts | ``RUN_STARTED``, then ``STATE_SNAPSHOT``: the client's state with ``"plan": [...]`` |
| ``tool:call`` | ``TOOL_CALL_START``, ``TOOL_CALL_ARGS`` (the input as JSON), ``TOOL_CALL_END`` |
| ``tool:response`` | ``TOOL_CALL_RESULT`` (the result as JSON) |
| ``planUpdate`` | ``STATE_DELTA``: a JSON Patch (RFC 6902) of ``/plan``, item by item |
| a sub-agent's first event | ``SUBAGENT_STARTED`` (its tool calls then carry its ``subagentRunId``) |
| a sub-agent's ``finish`` | ``SUBAGENT_FINISHED`` (success) or ``SUBAGENT_ERROR`` |
| a sub-agent's fatal ``error`` | ``SUBAGENT_ERROR`` (its run broke: no ``finish`` comes) |
| text for a person | ``TEXT_MESSAGE_START``, ``TEXT_MESSAGE_CONTENT``, ``TEXT_MESSAGE_END`` |
| the run ends | ``RUN_FINISHED`` (success: ``result`` is the output; parked: an ``interrupt`` outcome) or ``RUN_ERROR`` |

The core's other events are not sent; `LEFT_OUT` says why for each (a test holds the two tables
to the core's event names).

A sub-agent (an agent the run calls as a tool) is a subagent of the stream: its run id is its
``subagentRunId``, nested under the sub-agent that called it, if any; its plan is its own, not
the state. One still open when the run ends is closed first, with ``SUBAGENT_ERROR``.

The text for a person streams: the ``humanMessage`` of the model's ``finish`` arrives as it is
written (``text:delta`` events, one ``TEXT_MESSAGE`` per reply), and the run's end closes it.
Text that did not stream (a text output, a provider that answers at once) comes whole when the
run ends. A reply the run does not keep has streamed already: AG-UI has no event that takes a
message back, so it stays, closed with a mark that says so, and the text the run ends with
follows as a message of its own. A finish refused once whole (an invalid output) is marked
`NOT_USED_MARK` (an agent with output guardrails does not stream its finish:
`openmolt_core.capabilities.streaming`); a call that failed midway (written again by the next
model of a fallback chain or by the same model, or ending the run: ``RUN_ERROR`` follows), or
that the run's end stopped (its timeout), is marked `CUT_MARK`. Everything sent is masked with
every secret the server's responses are (the stream is marked screened, so the server does not
mask it again); the streamed text was masked as it streamed, where the run made it
(`openmolt_core.capabilities.streaming`), and is sent as it came: masked again one delta at a
time, a short secret that starts a delta would be ``[redacted]`` inside a word. The classes are the ``ag-ui-protocol`` package's: its pydantic models are
the protocol's schema, so an event this module builds is valid by construction.
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ag_ui.core import (
	BaseEvent,
	Interrupt,
	RunErrorEvent,
	RunFinishedEvent,
	RunFinishedInterruptOutcome,
	RunFinishedSuccessOutcome,
	RunStartedEvent,
	StateDeltaEvent,
	StateSnapshotEvent,
	SubagentErrorEvent,
	SubagentFinishedEvent,
	SubagentFinishedSuccessOutcome,
	SubagentStartedEvent,
	TextMessageContentEvent,
	TextMessageEndEvent,
	TextMessageStartEvent,
	ToolCallArgsEvent,
	ToolCallEndEvent,
	ToolCallResultEvent,
	ToolCallStartEvent,
)
from pydantic import BaseModel

from openmolt_core._support.masking import mask_url_logins, mask_url_logins_deep, mask_urls
from openmolt_core.accounts import authorization_requests
from openmolt_core.events import (
	ErrorEvent,
	Event,
	FinishEvent,
	PlanUpdateEvent,
	ToolCallEvent,
	ToolResponseEvent,
)
from openmolt_core.result import PARKED_STATUSES
from openmolt_serve._launch import connect_text

if TYPE_CHECKING:
	from openmolt_core.approvals import ApprovalRequest
	from openmolt_core.result import RunResult

__all__ = [
	"APPROVAL_SCHEMA",
	"CUT_MARK",
	"LEFT_OUT",
	"MAPPED",
	"MAX_HELD",
	"NOT_USED_MARK",
	"PARKED",
	"PROTOCOL_VERSION",
	"AguiEvents",
	"Masking",
	"approval_id",
	"authorization_id",
	"question_id",
]

CUT_MARK = " [cut off]"
"""What closes a streamed message whose model call failed midway (the message is not the reply)."""

NOT_USED_MARK = " [not used]"
"""What closes a streamed message whose reply was refused once whole (the model is asked again)."""

PROTOCOL_VERSION = "1.0"
"""The AG-UI version these events follow (that of ``ag-ui-protocol``)."""

APPROVAL_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"approved": {"type": "boolean"},
		"reason": {"type": "string"},
		"input": {"type": "object"},
	},
	"required": ["approved"],
}
"""The answer an approval interrupt expects (its ``responseSchema``)."""


PARKED: frozenset[str] = PARKED_STATUSES
"""The statuses a run ends with that are an ``interrupt`` outcome: it waits, it did not fail
(the core's `openmolt_core.result.PARKED_STATUSES`)."""


def question_id(run_id: str, step: int) -> str:
	"""The interrupt id of the question a run parked on at a step."""
	return f"{run_id}:question:{step}"


def approval_id(run_id: str, call: str) -> str:
	"""The interrupt id of a call a run waits for an approval of: the run's id and the call's key.

	The call's key alone (``tool:<step>:<index>:<handle>``) can be guessed; the run's id is
	random and reaches only the client whose run parked, so another client of the endpoint
	that knows (or guesses) the thread's id cannot decide the call.
	"""
	return f"{run_id}:{call}"


def authorization_id(run_id: str, step: int) -> str:
	"""The interrupt id of the accounts a run parked on at a step wait for its user to connect."""
	return f"{run_id}:authorization:{step}"


MAX_HELD = 4096
"""The most characters of streamed text held back for a URL to end (`AguiEvents.text`)."""


class Masking(Protocol):
	"""Masks secrets in a text (called) and in a JSON-like value (``deep``): a `Redactor`."""

	def __call__(self, text: str) -> str:
		"""The text masked."""
		...

	def deep(self, value: Any) -> Any:
		"""A copy of the value masked in every string."""
		...


def _json(value: Any) -> Any:
	if isinstance(value, BaseModel):
		return value.model_dump(mode="json", by_alias=True)
	return json.loads(json.dumps(value, default=str))


class AguiEvents:
	"""Turns one run's OpenMolt events into AG-UI events, keeping what spans several of them.

	Args:
		thread_id: The AG-UI thread (the conversation).
		run_id: The AG-UI run id the client chose (echoed in ``RUN_STARTED``/``RUN_FINISHED``).
		redact: Masks the secrets in everything sent but the streamed text (masked already).
	"""

	def __init__(self, thread_id: str, run_id: str, redact: Masking) -> None:
		self.thread_id = thread_id
		self.run_id = run_id
		self.redact = redact
		self.plan: list[dict[str, Any]] = []
		self._calls: dict[tuple[str, int, str, str], deque[str]] = {}
		self._message: str | None = None
		self._subagents: dict[str, bool] = {}  # started sub-runs: True while open
		self._streaming: tuple[int, int, int] | None = (
			None  # (step, command, attempt) streaming now
		)
		self._streamed = ""  # the text the last streamed message holds
		self._held = ""  # its end not sent yet: a URL in it may not be whole (`_person`)

	def started(self, plan: list[dict[str, Any]], state: Any = None) -> list[BaseEvent]:
		"""``RUN_STARTED`` and the state the run starts from: the client's, with the run's plan.

		Args:
			plan: The run's plan (``/plan`` of the state).
			state: The state the client sent (an object's other keys are the application's:
				kept as they are).
		"""
		self.plan = [dict(item) for item in plan]
		kept = dict(state) if isinstance(state, dict) else {}
		snapshot = {**kept, "plan": self.plan}
		return [
			RunStartedEvent(
				thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION
			),
			StateSnapshotEvent(snapshot=self.redact.deep(_json(snapshot))),
		]

	def translate(self, event: Event) -> list[BaseEvent]:
		"""The AG-UI events for one OpenMolt event (none for those `MAPPED` leaves out).

		A sub-agent's event opens its subagent first (``SUBAGENT_STARTED``), once, and what it
		becomes carries the sub-run's id; nothing is sent for a sub-run already closed.
		"""
		mapper = MAPPED.get(event.name)
		if mapper is None:
			return []
		if event.name in _OWN_REPLY:  # the run's own reply only (a sub-agent's is its result)
			return [] if event.parent_run_id else mapper(self, event)
		if not event.parent_run_id:
			return self._before_other(mapper(self, event))
		sub = event.run_id
		if self._subagents.get(sub) is False:
			return []  # closed: its ``finish`` came (or the run ended)
		out: list[BaseEvent] = []
		if sub not in self._subagents:
			self._subagents[sub] = True
			parent = event.parent_run_id if event.parent_run_id in self._subagents else None
			out.append(
				SubagentStartedEvent(
					subagent_run_id=sub, name=event.agent, parent_subagent_run_id=parent
				)
			)
		out += [e.model_copy(update={"subagent_run_id": sub}) for e in mapper(self, event)]
		return self._before_other(out)

	def tool_call(self, event: ToolCallEvent) -> list[BaseEvent]:
		"""A tool is about to run: its call opens and closes with its arguments."""
		call_id = f"call_{uuid.uuid4().hex[:16]}"
		self._calls.setdefault(self._key(event), deque()).append(call_id)
		args = json.dumps(self._shown(event.input))
		return [
			ToolCallStartEvent(tool_call_id=call_id, tool_call_name=event.tool),
			ToolCallArgsEvent(tool_call_id=call_id, delta=args),
			ToolCallEndEvent(tool_call_id=call_id),
		]

	def tool_result(self, event: ToolResponseEvent) -> list[BaseEvent]:
		"""A tool returned (or failed): its result, for the call it answers."""
		waiting = self._calls.get(self._key(event))
		if not waiting:
			return []  # a call this stream never announced (it started before a resume)
		content = self._shown(event.response)
		text = content if isinstance(content, str) else json.dumps(content)
		return [
			ToolCallResultEvent(
				message_id=f"msg_{uuid.uuid4().hex[:16]}",
				tool_call_id=waiting.popleft(),
				content=text,
				role="tool",
			)
		]

	def run_finished(self, event: FinishEvent) -> list[BaseEvent]:
		"""A run ended: a sub-agent's closes its subagent (the run's own end is `finished`)."""
		if not event.parent_run_id:
			return []
		self._subagents[event.run_id] = False
		result = event.result
		if result.status == "success":
			output = self._shown(result.output)
			return [
				SubagentFinishedEvent(
					subagent_run_id=event.run_id,
					result=output,
					outcome=SubagentFinishedSuccessOutcome(),
				)
			]
		why = result.error or result.human_message or result.status
		return [
			SubagentErrorEvent(
				subagent_run_id=event.run_id,
				message=self._person(f"{result.status}: {why}"),
				code=result.status,
			)
		]

	def run_failed(self, event: ErrorEvent) -> list[BaseEvent]:
		"""A sub-agent's run broke (a fatal ``error``, no ``finish`` follows): it closes.

		The run's own reply refused once whole (``invalid_reply``: the model is asked again)
		closes the message it streamed with `NOT_USED_MARK`.
		"""
		if not event.parent_run_id and event.kind == "invalid_reply":
			streaming = self._streaming
			if streaming is None or streaming[0] != event.step or self._message is None:
				return []
			self._streaming, self._streamed = None, ""
			return [*self.text(NOT_USED_MARK), *self.end_text()]
		if not event.parent_run_id or not event.fatal:
			return []  # a mistake fed back to the model; the run's own end is `finished`
		self._subagents[event.run_id] = False
		message = self._person(f"{event.kind}: {event.message}")
		return [SubagentErrorEvent(subagent_run_id=event.run_id, message=message, code="error")]

	def close_subagents(self) -> list[BaseEvent]:
		"""``SUBAGENT_ERROR`` for each sub-agent still open (the run ended before its finish)."""
		open_ = [sub for sub, active in self._subagents.items() if active]
		for sub in open_:
			self._subagents[sub] = False
		return [
			SubagentErrorEvent(
				subagent_run_id=sub, message="the run ended before this sub-agent finished"
			)
			for sub in reversed(open_)  # the innermost first
		]

	def plan_update(self, event: PlanUpdateEvent) -> list[BaseEvent]:
		"""The plan changed: a patch of the items that did (a sub-agent's plan is its own)."""
		if event.parent_run_id:
			return []
		new = self._shown(event.plan)
		old = self.plan
		ops: list[dict[str, Any]] = []
		for index, item in enumerate(new[: len(old)]):
			if item != old[index]:
				ops.append({"op": "replace", "path": f"/plan/{index}", "value": item})
		for index in range(len(old), len(new)):
			ops.append({"op": "add", "path": f"/plan/{index}", "value": new[index]})
		for index in range(len(old) - 1, len(new) - 1, -1):
			ops.append({"op": "remove", "path": f"/plan/{index}"})
		self.plan = new
		return [StateDeltaEvent(delta=ops)] if ops else []

	def text(self, delta: str, *, masked: bool = False) -> list[BaseEvent]:
		"""A piece of text for a person: opens an assistant message first if none is open.

		Args:
			delta: The text.
			masked: It was masked as it streamed (a ``text:delta``'s): sent as it is.
		"""
		if not delta:
			return []
		out: list[BaseEvent] = []
		if self._message is None:
			self._message = f"msg_{uuid.uuid4().hex[:16]}"
			out.append(TextMessageStartEvent(message_id=self._message, role="assistant"))
		if masked:  # streamed: its secrets masked; a URL's login once the URL is whole
			self._held += delta
			cut = self._held.rfind(" ") + 1
			if len(self._held) - cut > MAX_HELD:
				cut = len(self._held)
			ready, self._held = self._held[:cut], self._held[cut:]
			sent = mask_url_logins(ready)
		else:
			sent = self._release() + self._person(delta)
		if sent:
			out.append(TextMessageContentEvent(message_id=self._message, delta=sent))
		return out

	def _release(self) -> str:
		"""The streamed text held back (`text`), masked, now that nothing more joins it."""
		held, self._held = self._held, ""
		return mask_url_logins(held) if held else ""

	def _person(self, text: str) -> str:
		"""Text for a person masked: every known secret, and a URL's login (`mask_url_logins`).

		A URL's query and path stay: a presigned link, a consent link, must work.
		"""
		return mask_url_logins(self.redact(text))

	def text_delta(self, event: Any) -> list[BaseEvent]:
		"""A piece of the ``humanMessage`` a reply's ``finish`` writes, as the model writes it.

		Each reply's message is one ``TEXT_MESSAGE``: a piece of another reply (the model asked
		again, or the same call made again: ``attempt``) closes the open one first. Other fields
		(an output, a question) are not streamed. A call that fails midway (a ``cut`` delta)
		closes its message with `CUT_MARK`: AG-UI takes no text back, so the mark says it.
		"""
		if event.field != "humanMessage" or event.raw:
			return []
		key = (event.step, event.index, event.attempt)
		if getattr(event, "cut", False):
			if key != self._streaming or self._message is None:
				return []
			self._streaming, self._streamed = None, ""
			return [*self.text(CUT_MARK), *self.end_text()]
		if not event.text:
			return []
		out: list[BaseEvent] = []
		if key != self._streaming:
			out += self.end_text()
			self._streaming, self._streamed = key, ""
		self._streamed += event.text
		return out + self.text(event.text, masked=True)  # masked as it streamed, as a whole

	def fell_back(self, event: Any) -> list[BaseEvent]:
		"""The step's model failed and the next one writes the reply from its start.

		What the failed model streamed stays (AG-UI takes no text back), closed: the next
		model's pieces open a message of their own, which the run's end then does not repeat.
		"""
		if self._streaming is None or self._streaming[0] != event.step:
			return []
		self._streaming, self._streamed = None, ""
		return self.end_text()

	def _before_other(self, out: list[BaseEvent]) -> list[BaseEvent]:
		"""Close a streamed message before anything else is sent (a tool call, the plan)."""
		return [*self.end_text(), *out] if out and self._message is not None else out

	def end_text(self) -> list[BaseEvent]:
		"""Close the open text message, if any."""
		if self._message is None:
			return []
		held = self._release()
		message, self._message = self._message, None
		rest = [TextMessageContentEvent(message_id=message, delta=held)] if held else []
		return [*rest, TextMessageEndEvent(message_id=message)]

	def finished(
		self,
		result: RunResult | None,
		error: BaseException | None,
		approvals: list[ApprovalRequest] | None = None,
		*,
		decide_approvals: bool = False,
	) -> list[BaseEvent]:
		"""The run ended: its text for a person, then ``RUN_FINISHED`` or ``RUN_ERROR``.

		Args:
			result: The run's result (None: it broke before one existed).
			error: What it ended with, if it raised.
			approvals: The calls a run parked on ``approval_required`` waits for.
			decide_approvals: Whether the client may decide them (else the interrupt says
				where they are decided).
		"""
		out: list[BaseEvent] = self.close_subagents()
		words = self.redact(_words(result)) if result is not None else ""
		if words and self._streaming is not None and self._streamed == words:
			out += self.end_text()  # the reply's message streamed whole: not sent again
		else:
			if self._streaming is not None and self._message is not None:
				out += self.text(CUT_MARK)  # its call was stopped (a timeout): never read
			out += self.end_text()
			out += self.text(words)
			out += self.end_text()
		if result is None or (result.status != "success" and result.status not in PARKED):
			status = result.status if result is not None else "error"
			why = (result.error or result.human_message) if result is not None else None
			message = why or (f"{type(error).__name__}: {error}" if error else status)
			out.append(RunErrorEvent(message=self._person(message), code=status))
			return out
		if result.status == "success":
			out.append(
				RunFinishedEvent(
					thread_id=self.thread_id,
					run_id=self.run_id,
					# The run's deliverable: a signed link in it must work (secrets and a URL's
					# login masked only: `mask_url_logins_deep`)
					result=mask_url_logins_deep(self.redact.deep(_json(result.output))),
					outcome=RunFinishedSuccessOutcome(),
				)
			)
			return out
		interrupts = self._interrupts(result, approvals or [], decide_approvals)
		out.append(
			RunFinishedEvent(
				thread_id=self.thread_id,
				run_id=self.run_id,
				outcome=RunFinishedInterruptOutcome(interrupts=interrupts),
			)
		)
		return out

	def _interrupts(
		self, result: RunResult, approvals: list[ApprovalRequest], decide: bool
	) -> list[Interrupt]:
		pending = result.state.pending or {}
		if result.status == "human_input_required":
			return [
				Interrupt(
					id=question_id(result.state.run_id, result.state.steps),
					reason="question",
					message=self._person(str(pending.get("message", ""))),
					response_schema={"type": "string"},
				)
			]
		if result.status == "authorization_required":
			requests = authorization_requests(result.state)
			return [
				Interrupt(
					id=authorization_id(result.state.run_id, result.state.steps),
					reason="authorization",
					message=self._person(connect_text(result.state)),
					metadata={
						"accounts": self.redact.deep(
							[
								{k: r.get(k) for k in ("integration", "tool", "reason", "url")}
								for r in requests
							]
						)
					},
				)
			]
		if result.status != "approval_required":  # parked on what this mapping has no view of
			return [
				Interrupt(
					id=f"{result.state.run_id}:{result.status}:{result.state.steps}",
					reason=result.status,
					message=self._person(result.error or result.status),
				)
			]
		where = "" if decide else " (decided in the run viewer, not here)"
		return [
			Interrupt(
				id=approval_id(request.run_id, request.call),
				reason="approval",
				message=self._person(
					f"{request.tool} waits for an approval{where}: {request.reason or request.rule}"
				),
				response_schema=APPROVAL_SCHEMA if decide else None,
				metadata={
					"tool": request.tool,
					"input": self._shown(request.input),
					"rule": request.rule,
					"decidable": decide,
				},
			)
			for request in approvals
		]

	def _shown(self, value: Any) -> Any:
		"""A value as the client gets it: JSON, its secrets masked, and a URL's too.

		`mask_urls`: the key a model read in its instructions and put in a URL's query, as the
		run store's events and the spans show it.
		"""
		return mask_urls(self.redact.deep(_json(value)))

	@staticmethod
	def _key(event: ToolCallEvent | ToolResponseEvent) -> tuple[str, int, str, str]:
		text = json.dumps(event.input, sort_keys=True, default=str)
		return (event.run_id, event.step, event.tool, text)


def _words(result: RunResult) -> str:
	if result.human_message:
		return result.human_message
	output = result.output
	if result.status == "success" and isinstance(output, str):
		return output
	if result.status == "success" and isinstance(output, dict):
		found = output.get("result")
		return found if isinstance(found, str) else ""
	return ""


MAPPED: dict[str, Callable[[AguiEvents, Any], list[BaseEvent]]] = {
	"tool:call": AguiEvents.tool_call,
	"tool:response": AguiEvents.tool_result,
	"planUpdate": AguiEvents.plan_update,
	"finish": AguiEvents.run_finished,
	"error": AguiEvents.run_failed,
	"text:delta": AguiEvents.text_delta,
	"model:fallback": AguiEvents.fell_back,
}
"""The OpenMolt events an AG-UI stream listens to, and what each becomes (`LEFT_OUT`: the others)."""

_OWN_REPLY = frozenset({"text:delta", "model:fallback"})
"""Events about the run's own reply as it streams: a sub-agent's are not sent (its result is)."""

LEFT_OUT: dict[str, str] = {
	"llmOutput": "the model's reply as it wrote it: its text for a person streams (text:delta) or "
	"comes with the run's end, its calls as tool calls",
	"command:ready": "a preview of a command: a call is sent when it runs (tool:call)",
	"commandsQueued": "the reply's commands: each one's own event is sent as it runs",
	"memoryUpdate": "the agent's memory is kept by the server, not the client's state",
	"humanInput": "the question is the parked run's interrupt, and the answer the client's own",
	"approval:request": "the parked run's interrupt (RUN_FINISHED) carries each call waiting",
	"approval:decision": "the client's resume decides, or the operator where the run is kept",
	"authorization:request": "the parked run's interrupt carries the consent links",
	"guardrail": "the operator's audit (run store, viewer); a tripwire ends the run (RUN_ERROR), "
	"a rewrite is what the stream sends",
	"taint": "the operator's audit (run store, viewer); a call it holds back is an interrupt",
	"compaction": "what the model reads of older steps: nothing the client was sent changes",
	"schedule:run": "emitted outside a run's stream (a scheduler's)",
	"schedule:end": "emitted outside a run's stream (a scheduler's)",
	"schedule:skip": "emitted outside a run's stream (a scheduler's)",
	"run:stranded": "emitted outside a run's stream (a durable worker's, at start)",
}
"""The core's events an AG-UI stream does not send, and why: each is in the run store, the run
viewer and telemetry. A capability's own events are not sent either (AG-UI's ``CUSTOM`` events
are the application's to define)."""
