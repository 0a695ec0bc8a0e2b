"""Run observers: what sees every run of an OpenMolt instance (run store, viewer, telemetry).

An observer is given to the instance (``OpenMolt(observers=[...])``, or appended to
``om.observers``) and hears, for every run of every agent of that instance, when it starts,
each of its events and how it ends. It may also wrap the run's durability port
(`openmolt_core.durability`), which every model call, tool call and human answer passes through,
to time them (telemetry does).

```python
class Printer(RunObserver):
    async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
        print(run.agent_name, outcome.status, run.state.usage.total_tokens)

om = OpenMolt(observers=[Printer()])
```

Events an agent emits outside a drive of a run (a schedule's run starting, ending or skipped,
a stranded durable run) reach `RunObserver.outside`: whatever emits on an agent's emitter
reaches the observers (`tell_outside`).

Everything an observer is handed has been through the agent's redactor: `event_data` gives an
event as redacted JSON, ``outcome.error`` is redacted, and the conversation in ``run.state`` is
what the model saw (redacted by the loop). An observer that raises is logged and never breaks the
run. With no observer, a run pays one attribute check.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import anyio

from openmolt_core.durability import ForwardingPort, call_started, journaled, keeps_spent
from openmolt_core.events import STREAM_EVENTS, Event, EventEmitter
from openmolt_core.result import RunStatus

if TYPE_CHECKING:
	from openmolt_core._execute import RunContext
	from openmolt_core.agent import Agent
	from openmolt_core.durability import RunPort
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.secrets import Redactor

__all__ = [
	"EventInfo",
	"ObservedRun",
	"OutcomeStatus",
	"RunObserver",
	"RunOutcome",
	"WatchedRun",
	"completed_port",
	"current_trigger",
	"describe_event",
	"driven_as",
	"event_data",
	"run_input",
	"started_by",
	"tell_outside",
	"waiting_for",
	"watch_run",
]

log: logging.Logger = logging.getLogger("openmolt")

# Where the runs of a context come from (`started_by`). The observers' capability marks a new run
# with it (``RunState.ext["trigger"]``, `openmolt_core.result.TRIGGER_KEY`) and drives a run no
# trigger started here (a durable run recovered by another process) under that mark (`driven_as`):
# what reads it (the accounts capability's chat links, the observers' record of the run) sees the
# same trigger in every process. It reads it only once this module was loaded (a trigger or an
# observer imported it): a plain run never loads it.
_trigger: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
	"openmolt_trigger", default=None
)


@contextmanager
def started_by(kind: str, **details: str | int | None) -> Iterator[None]:
	"""Say where the runs started inside this block come from; observers record it.

	``with started_by("webhook", where="Triage"): await agent.run(payload)`` records the run
	as started by the webhook ``Triage`` (the run store keeps it with the run's row), and marks
	the run's state with it, so a process that goes on with the run (a durable worker) knows it too.

	Args:
		kind: ``cli``, ``api``, ``schedule``, ``webhook``, ``chat``, ``mcp``... (the kinds of
			`openmolt_core.triggers`, plus ``cli`` and ``api``).
		**details: Which one: ``where`` (the trigger's or schedule's name, the chat channel),
			``sender`` (the chat user's id)... Empty values are left out.
	"""
	if not isinstance(kind, str) or not kind:
		raise ValueError("started_by: kind must be a non-empty string such as 'webhook'")
	token = _trigger.set(
		{"kind": kind, **{k: v for k, v in details.items() if v not in (None, "")}}
	)
	try:
		yield
	finally:
		_trigger.reset(token)


def current_trigger() -> dict[str, Any] | None:
	"""What started the runs of this context (`started_by`'s kind and details), or None."""
	found = _trigger.get()
	return None if found is None else dict(found)


@contextmanager
def driven_as(mark: Mapping[str, Any]) -> Iterator[None]:
	"""Drive a run marked with its trigger (`started_by`) under it, when this context has none.

	Args:
		mark: The run's ``state.ext["trigger"]``.
	"""
	if _trigger.get() is not None:
		yield
		return
	token = _trigger.set(dict(mark))
	try:
		yield
	finally:
		_trigger.reset(token)


OutcomeStatus = RunStatus | Literal["cancelled"]
"""How a run ended: the run's own status (`openmolt_core.result.RunStatus`), or ``cancelled``."""


@dataclass(slots=True)
class ObservedRun:
	"""One run (or one resumption of a parked run) as observers see it.

	Args:
		run_id: The run's id (the same across resumes).
		agent: The agent that runs it.
		agent_name: The agent's name.
		model: The model id (``openai:gpt-5-mini``, or the provider's name for a provider object).
		provider: The provider's name (``openai``; ``custom`` for a provider object).
		state: The run's live state (plan, usage, messages), updated as it runs.
		redact: The agent's redactor, for anything an observer reports besides `event_data`.
		resumed: Whether this drive goes on from a saved state (a resume or ``history=``).
		started: When this drive started (UTC).
		pid: The process that runs it.
		trigger: Where the run came from (`started_by`): ``{"kind": "webhook", "where":
			"Triage"}``, ``{"kind": "agent", "parent_run_id": ...}`` for a sub-agent's run,
			``{"kind": "api"}`` when nothing said.
	"""

	run_id: str
	agent: Agent
	agent_name: str
	model: str
	provider: str
	state: RunState
	redact: Redactor
	resumed: bool = False
	started: datetime = field(default_factory=lambda: datetime.now(UTC))
	pid: int = field(default_factory=os.getpid)
	trigger: dict[str, Any] = field(default_factory=lambda: {"kind": "api"})

	@property
	def input(self) -> Any:
		"""The run's input, read from its first message (None if it cannot be read)."""
		return run_input(self.state)

	@property
	def session_id(self) -> str | None:
		"""The id of the session the run is a turn of (``run(input, session=...)``), or None.

		Read from the run's state (`openmolt_core.result.RunState.session_id`), which the
		session marks before the run is driven: a durable run recovered without its session
		names it too. None for a run of no session, or one saved before runs named theirs.
		"""
		return self.state.session_id


@dataclass(slots=True)
class RunOutcome:
	"""How a drive of a run ended.

	Args:
		status: See `OutcomeStatus`.
		result: The run's result (None when it was cancelled or broke without one).
		error: What went wrong, redacted.
	"""

	status: OutcomeStatus
	result: RunResult | None = None
	error: str | None = None


class RunObserver:
	"""Hears every run of an OpenMolt instance. Override the methods you need; each does nothing.

	Methods are awaited in the run's task, in order, so keep them short (hand slow work to a
	thread or a queue). Exceptions are logged and swallowed.
	"""

	async def started(self, run: ObservedRun) -> None:
		"""A run started, or a parked run was resumed."""

	async def event(self, run: ObservedRun, event: Event) -> None:
		"""The run emitted an event (`event_data(event, run.redact)` gives it as redacted JSON)."""

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""The drive ended: finished, parked, failed or cancelled."""

	async def outside(self, agent: Agent, event: Event, data: dict[str, Any]) -> None:
		"""An agent emitted an event outside a drive of a run.

		``schedule:run``, ``schedule:end``, ``schedule:skip`` (`openmolt_core.scheduler`) and
		``run:stranded`` (a durable worker); ``event.run_id`` names the run it is about, if any.

		Args:
			agent: The agent.
			event: The event, as emitted.
			data: The event as redacted JSON (`event_data` with the agent's redactor).
		"""

	def wrap_port(self, run: ObservedRun, port: RunPort) -> RunPort:
		"""Return the durability port this run uses (by default ``port`` itself).

		Every model call (``model:<step>``), tool call, memory callback and human answer goes
		through ``port.step(key, fn)``: a wrapper can time each one. Keep the key, the value and
		the exceptions unchanged. Subclass `openmolt_core.durability.ForwardingPort` and override
		`step`: the port's other members (its clock, durable sleep, reserved batches) then
		reach the wrapped port as they are. A port of the observer's own that implements only
		`openmolt_core.durability.RunPort` hides nothing either: the members it lacks (a durable
		port's record of the calls it started, what a call's nested runs spent) reach the port
		it wraps (`completed_port`).
		"""
		return port


_OPTIONAL = ("call_started", "spent_before", "record_spent", "keeps_spent")
"""The members a port may have beyond `openmolt_core.durability.RunPort` (the starts of calls, a
call's spend), which a wrapper of an observer's keeps (`completed_port`)."""


def completed_port(port: RunPort, wrapped: RunPort) -> RunPort:
	"""``port``, a wrapper of ``wrapped``, with the optional members it lacks taken from ``wrapped``.

	An observer's ``wrap_port`` may return a port of its own that implements
	`openmolt_core.durability.RunPort` without subclassing
	`openmolt_core.durability.ForwardingPort`. The loop asks the run's port for the optional
	members (a durable one records the starts of calls that must not run twice, and what a
	call's nested runs spent): such a wrapper would hide them, and a call found in doubt after a
	crash would run again. The members it lacks reach the port it wraps; the ones it has stay
	its own. (`openmolt_core.durability` re-exports it, its old home.)

	Args:
		port: The wrapper (an observer's port).
		wrapped: The port it wraps.
	"""
	if port is wrapped or not any(
		getattr(wrapped, name, None) is not None and getattr(port, name, None) is None
		for name in _OPTIONAL
	):
		return port
	return _Completed(port, wrapped)


class _Completed(ForwardingPort):
	"""A wrapper port with the optional members it lacks forwarded to the port it wraps."""

	__slots__ = ("_wrapped",)

	def __init__(self, port: RunPort, wrapped: RunPort) -> None:
		super().__init__(port)
		self._wrapped = wrapped

	def _of(self, name: str) -> RunPort:
		return self.port if getattr(self.port, name, None) is not None else self._wrapped

	async def call_started(self, key: str) -> bool:
		"""Record a tool call's start (on the wrapper if it can, else on the port it wraps)."""
		return await call_started(self._of("call_started"), key)

	async def spent_before(self, key: str) -> Mapping[str, Any] | None:
		"""What earlier executions of a tool call spent (see `call_started`)."""
		return await ForwardingPort(self._of("spent_before")).spent_before(key)

	async def record_spent(self, key: str, entry: Mapping[str, Any]) -> None:
		"""Record what a tool call spent so far (see `call_started`)."""
		await ForwardingPort(self._of("record_spent")).record_spent(key, entry)

	def keeps_spent(self) -> bool:
		"""Whether a tool call's spend is kept (see `call_started`)."""
		port = self.port
		if getattr(port, "keeps_spent", None) is not None or getattr(port, "record_spent", None):
			return keeps_spent(port)
		return keeps_spent(self._wrapped)

	def journaled(self) -> bool:
		"""Whether the run is journaled: on the wrapper, or on the port it wraps."""
		return journaled(self.port) or journaled(self._wrapped)


def run_input(state: RunState) -> Any:
	"""The input of a run, read back from its first message (None if there is none)."""
	if not state.messages:
		return None
	try:
		first = json.loads(state.messages[0].content)
	except ValueError:
		return None
	return first.get("input") if isinstance(first, dict) else None


_SKIP = frozenset(
	{"raw", "name", "agent", "run_id", "step", "seq"}
)  # raw: large; the rest: columns


def event_data(event: Event, redact: Redactor) -> dict[str, Any]:
	"""An event as JSON-serializable data, with secrets masked (a URL's too: `mask_urls`).

	The provider's raw response (``llmOutput.raw``) is left out; a ``finish`` event carries the
	result's dict (without the state). A sub-agent's event (``parent_run_id`` set) also carries
	``sub_run_id`` and ``sub_agent``: the observed run is the caller's, the event is the sub-run's.

	Args:
		event: The event.
		redact: The agent's redactor (`ObservedRun.redact`).
	"""
	from openmolt_core.result import RunResult

	data: dict[str, Any] = {}
	for f in fields(event):
		if f.name in _SKIP:
			continue
		value = getattr(event, f.name)
		if isinstance(value, RunResult):
			value = value.to_dict()
		elif hasattr(value, "to_dict"):
			value = value.to_dict()
		data[f.name] = value
	if event.parent_run_id:  # a sub-agent's event, passed up: say which run it belongs to
		data["sub_run_id"] = event.run_id
		data["sub_agent"] = event.agent
	# For people, never for the model: a URL's secrets no source knows are masked too (the key
	# a model read in its instructions and called with).
	from openmolt_core._support.masking import mask_urls

	return mask_urls(redact.deep(_jsonable(data)))  # type: ignore[no-any-return]


def _jsonable(value: Any) -> Any:
	# Round-trip through JSON so tuples, pydantic models and odd types end up as plain data.
	return json.loads(json.dumps(value, default=_default, ensure_ascii=False))


def _default(value: Any) -> Any:
	dump = getattr(value, "model_dump", None)
	if callable(dump):
		return dump(mode="json")
	to_dict = getattr(value, "to_dict", None)
	if callable(to_dict):
		return to_dict()
	return str(value)


class _Tee(EventEmitter):
	"""The run's emitter: the agent's handlers first, then the observers (who want everything)."""

	__slots__ = ("_inner", "_watch")

	def __init__(self, inner: EventEmitter, watch: WatchedRun) -> None:
		super().__init__()
		self._inner = inner
		self._watch = watch

	def on(self, name: str, handler: Any) -> None:
		self._inner.on(name, handler)

	def off(self, name: str, handler: Any = None) -> None:
		self._inner.off(name, handler)

	def wants(self, name: str) -> bool:
		# Observers keep no previews: a run streams only when a handler asks for it.
		return name not in STREAM_EVENTS or self._inner.wants(name)

	async def emit(self, event: Event) -> None:
		await self._inner.deliver(event)  # the drive tells the observers itself, just below
		if event.name not in STREAM_EVENTS:
			await self._watch.notify("event", event)


async def tell_outside(agent: Agent, observers: Sequence[RunObserver], event: Event) -> None:
	"""Tell observers about an event an agent emitted outside a drive (`RunObserver.outside`).

	The event is masked with the agent's redactor, as a run's events are; a failing observer is
	logged and skipped. The agent's emitter calls it (its sink,
	`openmolt_core.capabilities.ObservedOutside`), so every such event reaches the observers.

	Args:
		agent: The agent that emitted it.
		observers: The instance's observers.
		event: The event.
	"""
	if event.name in STREAM_EVENTS:
		return
	data = event_data(event, agent.redact)
	for observer in tuple(observers):
		try:
			await observer.outside(agent, event, data)
		except Exception:
			log.exception("run observer %r failed in outside; going on", observer)


class WatchedRun:
	"""One drive of a run under its instance's observers (the agent makes one per drive).

	Args:
		run: What observers are told about the run.
		observers: The instance's observers.
	"""

	__slots__ = ("observers", "run")

	def __init__(self, run: ObservedRun, observers: Sequence[RunObserver]) -> None:
		self.run = run
		self.observers = tuple(observers)

	async def notify(self, method: str, *args: Any) -> None:
		"""Call ``method`` on every observer; a failing observer is logged and skipped."""
		for observer in self.observers:
			try:
				await getattr(observer, method)(self.run, *args)
			except Exception:
				log.exception("run observer %r failed in %s; the run goes on", observer, method)

	def attach(self, ctx: RunContext) -> RunContext:
		"""Route the run's events and port through the observers."""
		ctx.events = _Tee(ctx.events, self)
		port = ctx.port
		for observer in self.observers:
			try:
				# A port of the observer's own keeps the optional members of the one it wraps.
				port = completed_port(observer.wrap_port(self.run, port), port)
			except Exception:
				log.exception("run observer %r failed in wrap_port; the run goes on", observer)
		ctx.port = port
		return ctx

	async def drive(self, ctx: RunContext, loop: Callable[[], Awaitable[RunResult]]) -> RunResult:
		"""Run ``loop`` with the context attached, telling the observers how it starts and ends."""
		from openmolt_core.errors import RunError

		self.attach(ctx)
		await self.notify("started")
		try:
			result = await loop()
		except RunError as exc:
			await self._end(RunOutcome("error", exc.result, str(exc)))
			raise
		except anyio.get_cancelled_exc_class():
			await self._end(RunOutcome("cancelled"))
			raise
		except Exception as exc:
			message = self.run.redact(f"{type(exc).__name__}: {exc}")
			await self._end(RunOutcome("error", None, message))
			raise
		await self._end(RunOutcome(result.status, result, result.error))
		return result

	async def _end(self, outcome: RunOutcome) -> None:
		with anyio.CancelScope(shield=True):  # a cancelled run is still recorded as such
			await self.notify("ended", outcome)


def watch_run(
	agent: Agent,
	state: RunState,
	observers: Sequence[RunObserver],
	*,
	redact: Redactor,
	parent: str | None = None,
) -> WatchedRun:
	"""The observed drive of a run of ``agent`` (called by the loop when observers exist).

	Args:
		agent: The agent.
		state: The run's state.
		observers: The instance's observers.
		redact: The agent's redactor.
		parent: The id of the run that called this one as a tool (a sub-agent's run).
	"""
	trigger = (
		{"kind": "agent", "parent_run_id": parent}
		if parent
		else redact.deep(current_trigger() or {"kind": "api"})
	)
	provider = agent.provider_name or "custom"
	model = f"{agent.provider_name}:{agent.model}" if agent.provider_name else agent.model
	run = ObservedRun(
		run_id=state.run_id,
		agent=agent,
		agent_name=agent.name,
		model=model,
		provider=provider,
		state=state,
		redact=redact,
		resumed=state.steps > 0 or state.pending is not None,
		trigger=trigger,
	)
	return WatchedRun(run, observers)


def waiting_for(pending: Mapping[str, Any] | None) -> str | None:
	"""What a parked run waits for, in one line (None: it waits for nothing).

	It reads every way a run parks (``state.pending``): a question (kind ``human_input``), calls
	the approvals gate holds (``approval``), calls a capability parked (``capability``: each
	with the capability's name and message) or a gate holds under its own kind. The run viewer
	lists parked runs with it, and a sub-agent's parked run says it to its caller. It shows what
	the state holds: a saved state's pending is redacted as the run left it.
	(`openmolt_core.result` re-exports it, its old home.)

	Args:
		pending: ``state.pending`` (or the run store's copy of it).
	"""
	if not isinstance(pending, Mapping):
		return None
	kind = str(pending.get("kind") or "")
	if kind == "human_input":
		return f"an answer to: {pending.get('message', '')}"
	calls = [c for c in pending.get("calls") or () if isinstance(c, Mapping)]
	if kind == "approval":
		rules = sorted({str(c["rule"]) for c in calls if c.get("rule")})
		tools = ", ".join(str(c.get("tool", "")) for c in calls) or "a tool call"
		return f"a decision on {tools}" + (f" (rule: {', '.join(rules)})" if rules else "")
	parts = []
	for call in calls:
		said = str(call.get("message") or call.get("reason") or "")
		who = str(call.get("by") or kind or "a capability")
		parts.append(f"{call.get('tool', '')} (held by {who})" + (f": {said}" if said else ""))
	return "; ".join(parts) or f"what the {kind or 'capability'} that parked it asks"


# What readers of stored events ask of a name -------------------------------------------------


@dataclass(frozen=True, slots=True)
class EventInfo:
	"""What an event's name stands for, for whoever reads a run's events (the run viewer).

	Args:
		name: The event's name.
		by: Who emits it: "" for the loop and its built-in features, else the capability's name.
		about: What happened, in one line (the first line of its class's docstring).
	"""

	name: str
	by: str
	about: str


_KERNEL: dict[str, EventInfo] = {}  # the loop's names, made at the first question


def describe_event(name: str) -> EventInfo | None:
	"""What an event name stands for and who emits it, or None for a name this process never saw.

	The loop's names (`openmolt_core.events.EVENT_NAMES`) are always known; a capability's once
	an agent with it was made in this process (`openmolt_core.events.register_events`). A name
	neither knows (an event another program stored) is None: show it by its name and what it
	carries. (`openmolt_core.events` re-exports it, its old home.)

	Args:
		name: The event's name.
	"""
	from openmolt_core import events

	if name in events.EVENT_NAMES:
		if not _KERNEL:
			_KERNEL.update(_kernel_events())
		return _KERNEL.get(name)
	found = events.REGISTERED_EVENTS.get(name)
	return None if found is None else EventInfo(name, found[0], _first_line(found[1]))


def _kernel_events() -> dict[str, EventInfo]:
	import importlib

	from openmolt_core import events

	classes = [v for v in vars(events).values() if isinstance(v, type) and issubclass(v, Event)]
	classes += [getattr(importlib.import_module(m), c) for c, m in events.FEATURE_EVENTS.items()]
	by_default: dict[str, type[Event]] = {}
	for cls in classes:
		default = cls.__dataclass_fields__["name"].default
		if isinstance(default, str) and default:
			by_default[default] = cls
	found = {}
	for name in events.EVENT_NAMES:
		# a class names its event by default; one class may stand for a family (schedule:*)
		cls = by_default.get(name) or next(
			(c for n, c in by_default.items() if n.partition(":")[0] == name.partition(":")[0]),
			Event,
		)
		found[name] = EventInfo(name, "", _first_line(cls))
	return found


def _first_line(cls: type) -> str:
	# the docstring's first paragraph, as plain text (no reStructuredText quotes)
	doc = (cls.__doc__ or "").strip()
	if doc.startswith(f"{cls.__name__}("):  # a dataclass without a docstring: its signature
		return ""
	first = doc.split("\n\n", 1)[0]
	return " ".join(first.replace("`", "").split())
