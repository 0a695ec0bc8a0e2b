"""What one step's commands do: tools (concurrently), waits, plan, memory, a person, finish.

The loop (`openmolt_core.agent`) parses a reply into validated commands (`check` here decides what is
valid for this agent) and hands them to `run_step` with a `RunContext`: everything a command may
touch, and nothing of the `Agent` object. `run_step` fills a `StepRecord` with one result entry per
command (what the model reads at the next step) and says how the step ends the run, if it does.
Model mistakes and tool failures become error entries, never exceptions.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, assert_never, cast

import anyio

from openmolt_core._emitter import EventEmitter
from openmolt_core._parse import DEFAULT_MAX_DEPTH, DEFAULT_MAX_REPLY_CHARS
from openmolt_core._support.jsonsafe import SHALLOW_DEPTH, encodable, nests_within
from openmolt_core._support.jsonschema import ValidationError, format_errors
from openmolt_core._support.masking import mask_fields, masked_excerpt
from openmolt_core._support.sync import call as call_app
from openmolt_core.commands import (
	CallTool,
	Command,
	Finish,
	RequestHumanInput,
	UpdateMemory,
	UpdatePlan,
	Wait,
)
from openmolt_core.durability import RunPort, step_key
from openmolt_core.errors import ToolError
from openmolt_core.hooks import (
	BUILTIN,
	NO_HOOKS,
	Hooks,
	ModelAccess,
	Park,
	Proceed,
	Refuse,
	RunOwner,
	Stop,
	ToolDecision,
	ToolInside,
	Words,
	decision_from_dict,
	decision_to_dict,
	holding,
	tell,
	tell_async,
)
from openmolt_core.llm import Usage
from openmolt_core.prompt import dumps
from openmolt_core.tools import CallingRun, LabelledResult

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core._support.secretset import Redactor
	from openmolt_core._toolset import ToolSet
	from openmolt_core.events import Event
	from openmolt_core.llm import ModelRequest, ModelResponse
	from openmolt_core.options import AgentMemory
	from openmolt_core.result import RunState, RunStatus

__all__ = [
	"MAX_ERROR_CHARS",
	"MAX_ERROR_DETAIL_CHARS",
	"MAX_RESULT_CHARS",
	"HumanInputHandler",
	"HumanInputUnavailable",
	"Limits",
	"MemoryConfig",
	"ModelAccess",
	"ModelCall",
	"RunContext",
	"RunEnd",
	"StepRecord",
	"check",
	"run_step",
	"summary",
]

log: logging.Logger = logging.getLogger("openmolt")

MemoryConfig = Mapping[str, Any]
"""``{"long_term": {"data": str, "on_update": fn}, "short_term": {...}}`` (camelCase accepted;
validated as `openmolt_core.options.AgentMemory`)."""

MAX_RESULT_CHARS = 16_000
"""A tool result longer than this (as JSON) is stored and previewed (by default)."""

MAX_ERROR_CHARS = 8_000
"""The most characters of a tool error's message the model reads; past it, the start and a note."""

MAX_ERROR_DETAIL_CHARS = 2_000
"""The most characters (as JSON) of each of a tool error's details the model reads."""

HumanInputHandler = Callable[[str], Awaitable[str] | str]
"""Answers the agent's question (sync or async)."""


class HumanInputUnavailable(Exception):  # a signal, raised by handlers, not an error
	"""Raise from a human-input handler when nobody can answer now: the run parks.

	The run ends with status ``human_input_required``, its state holding the question;
	``agent.resume(state, answer=...)`` delivers the answer later, in any process.
	"""


@dataclass(frozen=True, slots=True)
class Limits:
	"""Caps on what a run keeps and re-sends at every step.

	Args:
		max_result_chars: A tool result longer than this (as JSON) is stored, and the model
			sees a preview and a handle (`openmolt_core.offload`).
		max_result_chars_per_tool: The same threshold for some tools, by handle or pattern
			(``{"googleSheets.getValues": 40_000, "notion.*": 8_000}``).
		max_memory_chars: The most each memory (long- or short-term) may hold.
		max_answer_chars: A person's answer longer than this is shortened for the model.
		max_reply_chars: A reply longer than this runs nothing.
		max_depth: A reply nested deeper than this runs nothing.
		max_tool_images: The most images a step's tools return that the model is shown with
			the step's results (an MCP tool's image content; the newest first); 0: none, the
			model keeps the file references.
	"""

	max_result_chars: int = MAX_RESULT_CHARS
	max_result_chars_per_tool: Mapping[str, int] = field(default_factory=dict)
	max_memory_chars: int = 16_000
	max_answer_chars: int = 16_000
	max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
	max_depth: int = DEFAULT_MAX_DEPTH
	max_tool_images: int = 4


@dataclass(frozen=True, slots=True, eq=False)  # never compared: no __eq__ to generate
class RunEnd:
	"""How a step ends the run.

	Args:
		status: The run's status.
		output: The validated output, when the model finished.
		message: The model's message for a person, or what stopped the run.
	"""

	status: RunStatus
	output: Any = None
	message: str = ""


@dataclass(slots=True, eq=False)  # never compared: no __eq__ to generate
class StepRecord:
	"""What one step's commands produced so far (filled as they run, read even if interrupted).

	Args:
		commands: The commands of the step.
		results: One entry per command, None while it has not finished.
		end: How the step ends the run, if it does.
		pending: The question a parked run waits for.
		parked: The calls a capability parked (`openmolt_core.hooks.Park`), one entry each.
	"""

	commands: list[Command]
	results: list[dict[str, Any] | None] = field(default_factory=list)
	end: RunEnd | None = None
	pending: dict[str, Any] | None = None
	parked: list[dict[str, Any]] | None = None

	def __post_init__(self) -> None:
		if not self.results:
			self.results = [None] * len(self.commands)

	@property
	def stopped(self) -> bool:
		"""Whether a capability (or a limit) stopped the step: calls not started do not run."""
		return self.end is not None and self.pending is None and self.parked is None

	def entries(self, interrupted: str) -> list[dict[str, Any]]:
		"""The results in command order; a command that did not finish is reported as such."""
		out = []
		for command, result in zip(self.commands, self.results, strict=True):
			if result is not None:
				out.append(result)
			elif isinstance(command, RequestHumanInput) and self.pending is not None:
				continue  # the question waits for its answer
			else:
				out.append(_entry(command, ok=False, error=interrupted))
		return out


@dataclass(slots=True, eq=False)  # never compared: no __eq__ to generate
class ModelCall:
	"""A model call in progress: its requests for the agent's models, its event numbers.

	The loop sets it (`in_call`) around the capabilities' ``wrap_model`` hooks: it builds the
	requests ``run.models.request`` asks for, and the events those hooks emit without a number
	take the call's reserved ones, ``next`` up to ``end`` (`RunContext.emit`).
	"""

	state: RunState
	build: Callable[[str], ModelRequest]
	next: int
	end: int


_CALL: ContextVar[ModelCall | None] = ContextVar("openmolt_model_call", default=None)
"""The model call in progress in this task (`ModelCall`), or None."""


def calling(state: RunState) -> ModelCall | None:
	"""The model call of the run of ``state`` in progress in this task, or None."""
	call = _CALL.get()
	return call if call is not None and call.state is state else None


async def in_call(
	call: ModelCall,
	send: Callable[[ModelRequest], Awaitable[ModelResponse]],
	request: ModelRequest,
) -> ModelResponse:
	"""``send(request)`` with ``call`` as the model call in progress (`calling`)."""
	token = _CALL.set(call)
	try:
		return await send(request)
	finally:
		_CALL.reset(token)


@dataclass(slots=True, eq=False)  # never compared: no __eq__ to generate
class RunContext:
	"""What the commands of a run may touch, passed explicitly instead of the agent object.

	Args:
		agent: The agent's name (for events and logs).
		state: The run's state (plan and memory change in place).
		tools: Every bound tool of the agent by handle (allowed or not).
		events: The agent's event emitter.
		redact: Scrubs secrets from what is reported.
		memory: The agent's memory option as this run uses it (`Capability.memory_option`).
		human: Answers ``requestHumanInput``; None when nobody can.
		output: Validates a finish output (raises ``ValidationError``).
		limits: Caps on results, memory and answers.
		port: Journals steps, tells the time, sleeps (`openmolt_core.durability`).
		step: The current step number.
		scratch: What capabilities keep in memory for this run, by name (never saved).
		link: The run that called this one as a tool (a sub-agent's run), or None.
		toolset: Which tools are callable in this run's state (`openmolt_core._toolset`);
			None: every allowed tool.
		hooks: The agent's capabilities (`openmolt_core.hooks`), each hook resolved once.
		models: What capabilities may ask of the agent's models (`ModelAccess`).
		owner: The agent whose run it is (None for a context made outside an agent).
		began: ``state.seq`` when this execution of the run's state began: it tells apart the
			executions of one run (a segment resumed from a parked state begins further on),
			and is the same when a durable engine replays one.
		record: The record of the step whose commands run (None before the first).
	"""

	agent: str
	state: RunState
	tools: Mapping[str, BoundTool]
	events: EventEmitter
	redact: Redactor
	memory: AgentMemory | MemoryConfig | None
	human: HumanInputHandler | None
	output: Callable[[Any], Any]
	limits: Limits
	port: RunPort
	step: int = 0
	scratch: dict[str, Any] = field(default_factory=dict)
	link: CallingRun | None = None
	toolset: ToolSet | None = None
	hooks: Hooks = NO_HOOKS
	models: ModelAccess | None = None
	owner: RunOwner | None = None
	began: int = 0
	record: StepRecord | None = None

	@property
	def command_index(self) -> int:
		"""The index in the step of the command a hook decides on (a call, a finish)."""
		return _COMMAND.get()[0]

	@property
	def held(self) -> str | None:
		"""In ``before_tool``: the rules earlier capabilities hold the call under (`Approve`)."""
		return holding()

	@property
	def call_from_journal(self) -> bool:
		"""In ``after_tool``: whether the call's result came from the journal (it ran before)."""
		return _COMMAND.get()[1]

	@property
	def call_events(self) -> int:
		"""In ``after_tool``: the first of the call's event numbers (tool:call, tool:response, error)."""
		return _COMMAND.get()[2]

	def wants(self, name: str) -> bool:
		"""Whether anything listens to an event (here, or in the runs that called this one)."""
		return self.events.wants(name) or (self.link is not None and self.link.wants(name))

	async def emit(self, event: Event, seq: int | None = None) -> None:
		"""Emit an event of this run: it gets the run id and the next sequence number.

		Args:
			event: The event.
			seq: Its number, from a block taken with `reserve_events` (default: the next one).
		"""
		if seq is None:
			seq = self._number()
		event.run_id = self.state.run_id
		event.seq = seq
		if not type(event).__module__.startswith(_OWN):  # a third party's
			if event.name not in self.hooks.event_names():
				raise TypeError(
					f"the event {type(event).__name__} is named {event.name!r}, which no "
					"capability of this agent registers: list it in the capability's events "
					"under that name (the loop's own names are refused there)"
				)
			if self.redact:
				_mask_event(event, self.redact)  # built from anything it holds
		if self.port.replaying:  # delivered before the crash (openmolt_core.durability)
			event.replayed = True
			if not self.port.deliver_replayed:
				return
		if self.link is None:
			await self.events.emit(event)
			return
		event.parent_run_id = self.link.run_id
		await self.forward(event)

	async def forward(self, event: Event) -> None:
		"""Pass an event to this agent's handlers and up to the runs that called this one."""
		await self.events.emit(event)
		if self.link is not None:
			await self.link.emit(event)

	async def forward_nested(self, event: Event) -> None:
		"""Pass on an event of a run this one called (a sub-agent's), masked with its secrets.

		A nested agent of another instance does not know this one's secrets; a ``text:delta``'s
		text was masked as it streamed (`openmolt_core.capabilities.streaming`) and is kept.
		"""
		if self.redact:
			_mask_event(event, self.redact, streamed=event.name == "text:delta")
		await self.forward(event)

	def skip_event(self) -> None:
		"""Count an event nobody listens to, so sequence numbers stay deterministic."""
		self._number()

	def _number(self) -> int:
		# The next number: inside a model call, one it reserved for its hooks' events (`ModelCall`).
		call = _CALL.get()
		if call is not None and call.state is self.state and call.next < call.end:
			call.next += 1
			return call.next - 1
		counting = _COUNTED.get()
		if counting is not None and counting[0] is self.state:  # inside a journaled step
			counting[1][0] += 1
		self.state.seq += 1
		return self.state.seq

	def reserve_events(self, count: int) -> int:
		"""Take ``count`` sequence numbers for the events of one step; returns the first.

		A step whose value the journal holds emits nothing on replay; taking its numbers up
		front keeps the numbers of later events the same (and concurrent steps ordered).
		"""
		first = self.state.seq + 1
		self.state.seq += count
		return first

	async def ask_person(
		self, key: str, question: str, when: str = "", *, failed_parks: bool = True
	) -> dict[str, Any] | None:
		"""Ask a person ``question`` through the human-input handler, in the journaled step ``key``.

		Args:
			key: The step's key (`openmolt_core.durability.step_key`).
			question: What the person reads.
			when: Where it is asked, for the log of a failed handler (`` on ...``).
			failed_parks: Whether a failed handler parks the step too (else: ``failed``).

		Returns:
			The entry of the answer (its ``humanInput`` event emitted); None when nobody can
			answer now (no handler; `HumanInputUnavailable`, on its words; a failed handler):
			the step parks on the question, and ``resume(answer=...)`` delivers it; or, with
			``failed_parks`` off, ``{"failed": why}`` when the handler failed (logged).
		"""
		handler = self.human
		outcome: dict[str, Any] = {"parked": question}
		if handler is not None:

			async def ask() -> dict[str, Any]:
				try:
					answer = await call_app(handler, question)
					return {"answer": "" if answer is None else str(answer)}  # str() may raise
				except HumanInputUnavailable as exc:
					return {"parked": str(exc) or question}
				except Exception as exc:
					log.exception("the human-input handler failed%s", when)
					name = type(exc).__name__
				if failed_parks:  # nobody said: the run waits for a person
					return {"parked": f"{question} (the handler failed: {name})"}
				return {"failed": f"the person could not be asked ({name})"}

			outcome = await self.port.step(key, ask)
		if "parked" in outcome:
			assert self.record is not None, "asked outside a step"  # run_step sets it
			_park_question(self.record, question, outcome["parked"])
			return None
		if "answer" in outcome:
			return await answer_entry(self, question, outcome["answer"])
		return outcome

	async def error(
		self,
		kind: str,
		message: str,
		*,
		fatal: bool = False,
		seq: int | None = None,
		call: str = "",
	) -> None:
		"""Log a mistake or failure and emit the ``error`` event (numbered ``seq`` if given).

		Args:
			kind: What went wrong (`openmolt_core.events.ErrorEvent.kind`).
			message: What happened.
			fatal: The run ends on it.
			seq: The event's number, taken up front for a call's events; None: the next.
			call: The step key of the call it is about (``tool:<step>:<index>:<handle>``).
		"""
		log.warning("%s step %d: %s: %s", self.agent, self.step, kind, message)
		if self.wants("error"):
			from openmolt_core.events import ErrorEvent

			await self.emit(
				ErrorEvent(
					agent=self.agent,
					step=self.step,
					kind=kind,
					message=message,
					fatal=fatal,
					call=call,
				),
				seq,
			)
		elif seq is None:
			self.skip_event()


_COUNTED: ContextVar[tuple[RunState, list[int]] | None] = ContextVar(
	"openmolt_counted", default=None
)
"""The run whose event numbers the journaled step in progress in this task counts (`_counted`)."""

_EVENTS = "_events"
"""The key under which a journaled step's value keeps how many event numbers its hooks took."""


async def _counted(ctx: RunContext, fn: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
	"""``await fn()`` (a journaled step's work), with the event numbers its hooks took under `_EVENTS`.

	A hook inside a journaled step is not asked again on a replay: the journaled count lets the
	replay take as many numbers (`_replayed_events`), so later events keep theirs.
	"""
	taken = [0]
	token = _COUNTED.set((ctx.state, taken))
	try:
		value = await fn()
	finally:
		_COUNTED.reset(token)
	return {**value, _EVENTS: taken[0]} if taken[0] else value


def _replayed_events(ctx: RunContext, value: dict[str, Any], live: bool) -> dict[str, Any]:
	"""``value`` without `_EVENTS`; a step answered from the journal takes its numbers again."""
	if _EVENTS not in value:
		return value
	value = dict(value)
	taken = value.pop(_EVENTS)
	if not live and isinstance(taken, int) and taken > 0:
		ctx.reserve_events(taken)
	return value


_COMMAND: ContextVar[tuple[int, bool, int]] = ContextVar("openmolt_command", default=(0, False, 0))
"""The command a hook sees (its index, whether its result came from the journal, and a call's
first event number): one per task, so concurrent calls each see their own."""


def _entry(command: Command, **values: Any) -> dict[str, Any]:
	key = {"tool": command.tool} if isinstance(command, CallTool) else {"command": command.type}
	return {**key, **values}


# checking ---------------------------------------------------------------------------------


def check(ctx: RunContext) -> Callable[[int, Command], Command | str]:
	"""The parser's check for this run: what is valid here, beyond the command's own fields.

	A tool must exist and be granted, its input must match its schema; a question needs someone
	to answer it; a finish output must match the output schema; a memory update must fit.
	"""
	reasons = ctx.toolset is not None and ctx.toolset.reasons  # callTool has a reason field

	def check_one(index: int, command: Command) -> Command | str:
		match command:
			case CallTool():
				if not reasons and "reason" in command.model_fields_set:
					return (
						f"command {index} (callTool {command.tool}): no tool of this agent waits "
						"for approval, so a call has no 'reason'; leave it out"
					)
				return _check_call(ctx, index, command)
			case Finish():
				try:
					output = ctx.output(command.output)
				except ValidationError as exc:
					output = _held(ctx, command.output)
					if output is _NOTHING:
						return (
							f"command {index} (finish): output does not match the output "
							f"schema: {format_errors(exc)}"
						)
				return command.model_copy(update={"output": output})
			case RequestHumanInput():
				if ctx.human is None:
					return (
						f"command {index} (requestHumanInput): nobody can answer this agent; "
						"decide yourself, or finish with status 'failure' and say what you need"
					)
				return command
			case UpdateMemory():
				size = len(_memory_after(ctx.state, command))
				if size > ctx.limits.max_memory_chars:
					return (
						f"command {index} (updateMemory): {command.memory} memory would hold {size} "
						f"characters, more than the {ctx.limits.max_memory_chars} allowed; replace "
						"it with a shorter summary"
					)
				return command
			case Wait() | UpdatePlan():
				return command
			case _:
				assert_never(command)

	return check_one


_NOTHING: Any = object()


def _held(ctx: RunContext, output: Any) -> Any:
	"""The output a text the output schema refused holds as JSON, validated; else `_NOTHING`.

	A model without structured output often writes the object as JSON text; text that is not
	safe JSON within the depth cap, or does not match either, is refused as it was.
	"""
	if not isinstance(output, str):
		return _NOTHING
	from openmolt_core._support.jsonsafe import loads

	try:
		value = loads(output)
	except (ValueError, RecursionError):  # not JSON (UnsafeJson is a ValueError too)
		return _NOTHING
	if isinstance(value, str) or not nests_within(value, ctx.limits.max_depth):  # the reply's cap
		return _NOTHING
	try:
		return ctx.output(value)
	except ValidationError:
		return _NOTHING


def _check_call(ctx: RunContext, index: int, call: CallTool) -> CallTool | str:
	refused = ctx.toolset.refuse(call.tool, ctx.state) if ctx.toolset is not None else None
	if refused is not None:
		return f"command {index} (callTool): {refused}"
	bound = ctx.tools.get(call.tool)
	if bound is None:
		from openmolt_core._support.suggest import suggestion  # only a call that went wrong

		visible = [h for h, t in ctx.tools.items() if t.allowed]
		hint = suggestion(call.tool, visible, noun="tools")
		return f"command {index} (callTool): unknown tool {call.tool!r}; {hint}"
	if not bound.allowed:
		return (
			f"command {index} (callTool): tool {call.tool!r} needs scope(s) "
			f"{bound.missing_scopes} that this agent was not granted; use another tool"
		)
	try:
		value = bound.validator().validate(call.input)
	except ValidationError as exc:
		return f"command {index} (callTool {call.tool}): invalid input: {format_errors(exc)}"
	return call if value is call.input else call.model_copy(update={"input": value})


# running ----------------------------------------------------------------------------------


async def run_step(ctx: RunContext, record: StepRecord, start: int = 0) -> None:
	"""Run a step's validated commands in order, filling ``record``.

	Consecutive ``callTool`` commands run concurrently; results keep command order. ``finish``
	ends the run; ``requestHumanInput`` either gets its answer or parks the run; a call a
	capability or a gate parks parks the run after its group of calls.

	Args:
		ctx: The run.
		record: The step's record; commands that already have a result are not run again.
		start: The index to start from (a resumed step goes on from its parked calls).
	"""
	commands = record.commands
	ctx.record = record
	index = start
	while index < len(commands):
		command = commands[index]
		match command:
			case CallTool():
				end = index
				while end < len(commands) and isinstance(commands[end], CallTool):
					end += 1
				await _call_tools(ctx, record, range(index, end))
				if record.pending is not None or record.end is not None:
					return  # parked (the rest runs on resume), or stopped
				index = end
				continue
			case Finish():
				failed = _failed_before(record, index)
				if failed is not None:
					# Written before the results it rests on: the model reads them first.
					record.results[index] = _entry(command, ok=False, error=failed)
					index += 1
					continue
				done: Finish | None = command
				if ctx.hooks.before_finish:
					_COMMAND.set((index, False, 0))
					done = await _finish_ruled(ctx, record, index, command)
				if done is not None:
					record.results[index] = _entry(done, ok=True)
					record.end = RunEnd(done.status, done.output, done.human_message)
			case Wait():
				await ctx.port.sleep(command.seconds)
				record.results[index] = _entry(
					command, ok=True, result=f"waited {command.seconds:g} s"
				)
			case UpdatePlan():
				plan = [s.model_dump(mode="json", by_alias=True) for s in command.plan]
				if ctx.hooks.before_words:  # a person reads the plan (a page's state, a viewer)
					_COMMAND.set((index, False, 0))
					ruled = await _plan_ruled(ctx, record, command, plan)
					if not isinstance(ruled, list):
						record.results[index] = ruled  # refused, or stopped: nothing after it runs
						if record.end is not None:
							return
						index += 1
						continue
					plan = ruled
				ctx.state.plan = plan
				record.results[index] = _entry(command, ok=True)
				if ctx.wants("planUpdate"):
					from openmolt_core.events import PlanUpdateEvent

					await ctx.emit(
						PlanUpdateEvent(agent=ctx.agent, step=ctx.step, plan=ctx.state.plan)
					)
				else:
					ctx.skip_event()
			case UpdateMemory():
				record.results[index] = await _update_memory(ctx, command, index)
			case RequestHumanInput():
				record.results[index] = await _ask_human(ctx, record, command, index)
			case _:
				assert_never(command)
		index += 1


def _failed_before(record: StepRecord, index: int) -> str | None:
	"""Why the finish at ``index`` does not run: a command before it in the reply failed.

	The model wrote the finish before it read that failure (a mail never sent, reported "sent").
	None when every earlier command succeeded.
	"""
	for i in range(index):
		result = record.results[i]
		if result is not None and result.get("ok") is False:
			command = record.commands[i]
			what = f"callTool {command.tool}" if isinstance(command, CallTool) else command.type
			return (
				f"did not run: command {i} ({what}) failed, and this finish was written before "
				"its result; read it, then finish again or try something else"
			)
	return None


def _masked(decision: ToolDecision, redact: Redactor) -> ToolDecision:
	"""A decision with what it says masked (reasons, messages, requests; never a Proceed's input)."""
	match decision:
		case Refuse(reason=reason, entry=entry):
			return Refuse(redact(reason), entry)
		case Stop(reason=reason, status=status, entry=entry):
			return Stop(redact(reason), status, entry)
		case Park(message=message, request=request, status=status):
			return Park(redact(message), redact.deep(dict(request)), status)
		case Proceed(input=given, note=note) if note is not None:
			return Proceed(given, redact.deep(dict(note)))
	return decision


async def _finish_ruled(
	ctx: RunContext, record: StepRecord, index: int, finish: Finish
) -> Finish | None:
	"""Ask the capabilities about a finish: the finish to end with, or None (refused, stopped)."""
	done, decision = await ctx.hooks.decide_finish(ctx, finish)
	if done is not finish and isinstance(decision, Proceed):  # a capability rewrote the output
		# Checked as JSON, which the schema reads: an output model's instance (what the finish
		# holds once checked, and what a capability may answer) as its JSON form.
		dump = getattr(done.output, "model_dump", None)
		value = dump(mode="json") if callable(dump) else done.output
		try:
			done = done.model_copy(update={"output": ctx.output(value)})
		except ValidationError as exc:
			why = f"a capability rewrote the output into one that does not match the output schema: {format_errors(exc)}"
			decision = Stop(why)
	if not isinstance(decision, Proceed):
		record.results[index] = await _not_said(ctx, record, finish, "finish", decision)
		return None
	return done


_OWN = "openmolt_core."  # the loop's and the built-in capabilities' events: built masked
_EVENT_FIELDS = frozenset({"agent", "step", "name", "run_id", "seq", "parent_run_id", "replayed"})
_STREAMED_FIELDS = _EVENT_FIELDS | {"text"}


def _mask_event(event: Event, redact: Redactor, *, streamed: bool = False) -> None:
	"""Mask every field but the loop's of an event from elsewhere, in place (fail closed).

	A ``text:delta``'s ``text`` (``streamed``) was masked as it streamed and is left as it is.
	"""
	skip = _STREAMED_FIELDS if streamed else _EVENT_FIELDS
	mask_fields(event, redact, redact.deep, skip=skip)


_TOOL_EVENTS = 3  # tool:call, tool:response, error
_BUILTIN = f"{BUILTIN}."  # built-in tools' results are never replaced (they bound their size)


async def _call_tools(ctx: RunContext, record: StepRecord, indexes: range) -> None:
	todo = [i for i in indexes if record.results[i] is None]
	# Steps and event numbers are taken in command order before any call awaits, so a journal
	# numbers a concurrent batch the same way on every replay (openmolt_core.durability).
	seqs = {i: ctx.reserve_events(_TOOL_EVENTS) for i in todo}
	if len(todo) == 1:
		i = todo[0]
		record.results[i] = await _call_tool(
			ctx, record, i, cast(CallTool, record.commands[i]), seqs[i]
		)
		return
	keys = []
	for i in todo:
		call = cast(CallTool, record.commands[i])
		if ctx.hooks.before_tool:
			keys.append(step_key("hook", ctx.step, i, call.tool))  # the capabilities' decision
		if ctx.hooks.reserve_steps:  # steps the capabilities take while the calls run
			_COMMAND.set((i, False, 0))
			deciding, after = ctx.hooks.ahead(ctx, call, ctx.tools[call.tool])
			keys += [*deciding, step_key("tool", ctx.step, i, call.tool), *after]
		else:
			keys.append(step_key("tool", ctx.step, i, call.tool))
	ctx.port.reserve(list(dict.fromkeys(keys)))  # a step two capabilities name: once

	# What the calls' entries do to the run's state (loaded tools, stored results) is applied
	# after the batch, in command order: the state is the same whichever call ends first, and
	# on a replay, where they end in another order.
	finished: dict[int, tuple[CallTool, dict[str, Any]]] = {}

	# What the runs the calls start take from this one, decided once for the whole batch.
	handed: dict[int, dict[str, Any]] = {}
	if ctx.hooks.hand_down:
		tools = [ctx.tools[cast(CallTool, record.commands[i]).tool] for i in todo]
		handed = dict(zip(todo, ctx.hooks.handed(ctx, tools), strict=True))

	async def one(i: int) -> None:
		record.results[i] = await _call_tool(
			ctx, record, i, cast(CallTool, record.commands[i]), seqs[i], finished, handed.get(i)
		)

	try:
		async with anyio.create_task_group() as tg:
			for i in todo:
				tg.start_soon(one, i)
	finally:
		for i in sorted(finished):
			_settle(ctx, finished[i][0], i, finished[i][1])


async def _call_tool(
	ctx: RunContext,
	record: StepRecord,
	index: int,
	call: CallTool,
	seq: int,
	batch: dict[int, tuple[CallTool, dict[str, Any]]] | None = None,
	handed: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
	# ``batch``: the call is one of a concurrent batch, whose entries are settled after it;
	# ``handed``: what the capabilities hand the run it starts (asked at its start when None).
	bound = ctx.tools[call.tool]
	hooks = ctx.hooks
	_COMMAND.set((index, False, 0))
	held = None  # the rules a capability's decision holds the call under (`Capability.parks`)
	note: dict[str, Any] = {}  # what the capabilities' decisions add to the result
	given = call
	numbered = ctx.state.seq
	for journaled in (True, False):
		if not (hooks.before_tool if journaled else hooks.before_tool_unjournaled):
			continue
		if not journaled:
			numbered = ctx.state.seq
		ruled = await _capabilities_rule(ctx, record, index, call, bound, seq, journaled, held)
		if not isinstance(ruled, tuple):
			return ruled  # refused or stopped (an entry), or parked (None)
		call, held, noted = ruled
		note.update(noted or {})
	# A call of the batch stopped the step meanwhile (a tripwire on its input or its result):
	# a call that has not started does not start, whichever capabilities watch it.
	if record.stopped:
		return _stopped(call.tool)
	if held is not None and not hooks.by_kind:  # no capability that parks calls: nobody decides
		why = "it waits for a decision, and this agent has no gate to ask"
		return {"tool": call.tool, "ok": False, "error": f"not run: {why}"}
	rewritten = call is not given
	if rewritten:  # a parked step saves the input that will run (a decision is bound to it)
		record.commands[index] = call
	tool_input: dict[str, Any] = call.input
	if ctx.state.seq != numbered:  # events (a check, a decision...) came after the block
		seq = ctx.reserve_events(_TOOL_EVENTS)  # the call's events follow them, in order
	key = step_key("tool", ctx.step, index, call.tool)
	# What the call did, kept for its events: they are emitted once the step's result is
	# journaled, so an observer never sees "done" for a call a crash would run again.
	done: dict[str, Any] = {}

	def calling() -> CallingRun:
		# The run handed to the runs the call nests (a sub-agent's): built inside the step.
		inherits = handed
		if inherits is None and hooks.hand_down:
			inherits = hooks.handed(ctx, (bound,))[0]
		return CallingRun(
			ctx.state.run_id,
			key,
			ctx.step,
			index,
			Usage(),
			ctx.wants,
			ctx.forward_nested,
			user=ctx.state.user,
			caller=ctx,
			depth=1 if ctx.link is None else ctx.link.depth + 1,
			**(inherits or {}),
		)

	async def work(run: CallingRun) -> dict[str, Any]:
		if ctx.wants("tool:call"):
			from openmolt_core.events import ToolCallEvent

			await ctx.emit(
				ToolCallEvent(agent=ctx.agent, step=ctx.step, tool=call.tool, input=tool_input),
				seq,
			)
		began = time.perf_counter()
		ok = True
		labelled: tuple[str, ...] = ()
		try:
			# The context is the binding's; memory is this run's (runs of one agent may overlap).
			value = await bound.execute(tool_input, memory=ctx.state.memory, run=run)
			if type(value) is LabelledResult:  # labels of this result's own (a tool's say)
				labelled, value = value.labels, value.value
		except ToolError as exc:
			ok = False
			value = exc.to_dict()
		except Exception as exc:
			if run.passes is not None and run.passes(exc):
				raise  # the calling run's own (`CallingRun.passes`): its capabilities answer
			ok = False
			value = {"message": f"the tool failed: {type(exc).__name__}: {exc}"}
			log.debug("tool %s raised", call.tool, exc_info=True)
		duration = time.perf_counter() - began
		if run.ended and hooks.nested_result_labels:  # what runs it nested read may be in it
			labelled = hooks.result_labels(ctx, run, labelled)
		if not ok:  # what the model, the events and the log read of it: bounded
			value = {
				k: _cut(v, ctx, MAX_ERROR_CHARS if k == "message" else MAX_ERROR_DETAIL_CHARS)
				for k, v in value.items()
			}
		done.update(value=value, ok=ok, duration=duration)
		if log.isEnabledFor(logging.INFO):
			log.info(
				"%s step %d: %s %s (%.0f ms)",
				ctx.agent,
				ctx.step,
				call.tool,
				"ok" if ok else "failed",
				duration * 1000,
			)
		# What a tool returned (a value built in Python: one that contains itself, one nested
		# thousands deep, NaN) goes on as the journal, the state and the model can hold it.
		if not ok:
			details = {k: v for k, v in value.items() if k != "message"}
			entry: dict[str, Any] = {
				"tool": call.tool,
				"ok": False,
				"error": value.get("message", "failed"),
				**({"details": details} if details else {}),
				**({"labels": list(labelled)} if labelled else {}),
			}
			return encodable(entry, SHALLOW_DEPTH)  # type: ignore[no-any-return]  # a dict
		value = encodable(value, SHALLOW_DEPTH)  # what replace_result hooks are given
		if ctx.hooks.replace_result and not call.tool.startswith(_BUILTIN):
			replaced = await ctx.hooks.replaced(ctx, call, bound, value)  # journaled as replaced
			if replaced is not value:  # a capability's own value (a stored result's preview)
				value = encodable(replaced, SHALLOW_DEPTH)
		entry = {"tool": call.tool, "ok": True, "result": value}
		# Labels are journaled with the result: the capabilities read them (a replay too).
		return {**entry, "labels": list(labelled)} if labelled else entry

	async def journal(inside: ToolInside) -> dict[str, Any]:
		async def step() -> dict[str, Any]:
			run = calling()
			return await inside(run, functools.partial(work, run))

		value: dict[str, Any] = await ctx.port.step(key, lambda: _counted(ctx, step))
		return _replayed_events(ctx, value, bool(done))

	# Around the step, what the capabilities run in it (the sub-agents' spend: `wrap_tool`).
	result = await hooks.tool_step(ctx, call, bound, journal)
	if done:  # the call ran here (not answered from the journal), and its result is journaled
		await _responded(ctx, call.tool, tool_input, done, seq, key)
	if hooks.after_tool:
		_COMMAND.set((index, not done, seq))
		result, stop = await hooks.after(ctx, call, bound, result)
		if stop is not None:  # the model reads the entry; the run ends after the step
			record.pending = None
			record.end = RunEnd(stop.status, None, ctx.redact(stop.reason))
	if batch is None:
		_settle(ctx, call, index, result)
	else:
		batch[index] = (call, result)
	if note:
		result = {**result, **note}
	if rewritten:  # the result shows the input that ran
		result = {**result, "input": ctx.redact.deep(tool_input)}
	return result


def _settle(ctx: RunContext, call: CallTool, index: int, result: dict[str, Any]) -> None:
	# Outside the journaled step: a replay loads the same tools, notes the same results.
	if ctx.hooks.tool_done:
		tell(ctx.hooks.tool_done, ctx, call, index, result)


async def _capabilities_rule(
	ctx: RunContext,
	record: StepRecord,
	index: int,
	call: CallTool,
	bound: BoundTool,
	seq: int,
	journaled: bool = True,
	held: str | None = None,
) -> tuple[CallTool, str | None, Mapping[str, Any] | None] | dict[str, Any] | None:
	"""The capabilities' decision on a call; the journaled ones' go through the port.

	Returns the call to run (its input maybe replaced), the rules that still hold it and the
	decisions' notes; a result entry (refused, stopped), or None (parked: the step stops before
	it, ``record.parked`` or ``record.pending`` says why).
	"""
	if journaled:
		asked: list[bool] = []  # whether the capabilities decided here (not the journal)

		async def decide() -> dict[str, Any]:
			asked.append(True)
			by, decision, still, new = await ctx.hooks.decide_tool(ctx, call, bound, held=held)
			out = {"by": by, **decision_to_dict(_masked(decision, ctx.redact))}
			if still is not None:
				out["held"] = still
			if new is not None and not isinstance(decision, Proceed):
				out["rewritten"] = dict(new)
			return out

		ruled: dict[str, Any] = await ctx.port.step(
			step_key("hook", ctx.step, index, call.tool), lambda: _counted(ctx, decide)
		)
		ruled = _replayed_events(ctx, ruled, bool(asked))
		by = str(ruled.get("by") or "")
		decision = decision_from_dict(ruled)
		# A journal of an earlier version held the call with the decision (its rule).
		held = ruled.get("held") or getattr(decision, "rule", None) or None
		new = ruled.get("rewritten")
	else:  # a pure function of journaled inputs: asked again on a replay
		by, decision, held, new = await ctx.hooks.decide_tool(
			ctx, call, bound, journaled=False, held=held
		)
		decision = _masked(decision, ctx.redact)
	match decision:
		case Refuse(reason=reason, entry=entry):
			if entry is not None:  # the capability reported it its own way
				return dict(entry)
			await ctx.error(
				"capability",
				f"{by}: {call.tool} refused: {reason}",
				seq=seq + 2,
				call=step_key("tool", ctx.step, index, call.tool),
			)
			return {"tool": call.tool, "ok": False, "error": f"not run: {reason}"}
		case Stop(reason=reason, status=status, entry=entry):
			record.pending = None
			record.end = RunEnd(status, None, reason)
			if entry is not None:
				return dict(entry)
			return _stopped(call.tool)
		case Park():
			if new is not None:  # what the capabilities before it left: a decision binds it
				call = call.model_copy(update={"input": dict(new)})
			return _parked(ctx, record, index, call, by, decision)
	# Proceed: the input maybe replaced.
	note = getattr(decision, "note", None)
	if decision.input is None:
		return call, held, note
	try:
		value = bound.validator().validate(dict(decision.input))
	except ValidationError as exc:
		message = f"capability {by!r} gave {call.tool} an invalid input: {format_errors(exc)}"
		key = step_key("tool", ctx.step, index, call.tool)
		await ctx.error("capability", message, seq=seq + 2, call=key)
		return {"tool": call.tool, "ok": False, "error": f"not run: {message}"}
	return call.model_copy(update={"input": value}), held, note


def _parked(
	ctx: RunContext, record: StepRecord, index: int, call: CallTool, by: str, park: Park
) -> dict[str, Any] | None:
	"""Park a call (None), or the entry it reads when its step cannot park it.

	A park under a capability's own kind (`Capability.parks`) goes on the step's pending calls
	and wins over the step's other parks (`_behind`); others join ``record.parked``.
	"""
	cap = ctx.hooks.by_name.get(by) if ctx.hooks.by_kind else None
	if cap is not None and type(cap).parks:
		kind = type(cap).parks
		if record.stopped:
			return _stopped(call.tool)
		record.commands[index] = call  # the step saves the input its decision is bound to
		for waiting in record.parked or ():
			record.results[waiting["index"]] = {"tool": waiting["tool"], **_behind(kind)}
		record.parked = None
		pending = record.pending
		if pending is None or pending.get("kind") != kind:
			pending = record.pending = {"kind": kind, "calls": []}
		pending["calls"].append({"index": index, **park.request})
		record.end = RunEnd(park.status, None, park.message)
		return None
	if record.end is not None and record.parked is None:
		kind = (record.pending or {}).get("kind", "")
		if kind not in ctx.hooks.by_kind:
			return _stopped(call.tool)
		return {"tool": call.tool, **_behind(kind)}
	parked = record.parked = record.parked or []
	parked.append(
		{
			"index": index,
			"tool": call.tool,
			"by": by,
			"message": park.message,
			"request": dict(park.request),
			"status": park.status,
		}
	)
	if record.end is None:
		record.end = RunEnd(park.status, None, park.message)
	return None


def _stopped(tool: str) -> dict[str, Any]:
	"""What a call reads that did not run because the run stopped."""
	return {"tool": tool, "ok": False, "error": "not run: the run stopped"}


def _behind(kind: str) -> dict[str, Any]:
	"""What a call parked by `Park` reads in a step a capability parked under its own ``kind``."""
	why = f"another call of this step waits for {kind}; call it again once that is decided"
	return {"ok": False, "error": f"not run: {why}"}


def _cut(value: Any, ctx: RunContext, limit: int) -> Any:
	"""A tool error's message or detail as the model reads it: as it is, or past ``limit`` cut.

	An error is not stored as a long result is, and it is re-sent at every later step: a value
	past the limit (as JSON, if not text) keeps its masked start and a note of what was trimmed.

	Args:
		value: The message (at most `MAX_ERROR_CHARS`) or one detail (`MAX_ERROR_DETAIL_CHARS`).
		ctx: The run (its secrets).
		limit: The most characters kept.
	"""
	if isinstance(value, int | float | bool) or value is None:
		return value
	text = value if isinstance(value, str) else dumps(value)
	if len(text) <= limit:
		return value
	note = f"… [trimmed {len(text) - limit} characters]"
	return masked_excerpt(text, limit, ctx.redact.secrets, more=note)


def _park_question(record: StepRecord, question: str, why: str) -> None:
	# The step parks on a person's answer. A question another command of the step parked on
	# (two calls of a batch in doubt) is kept: the person answers both, or one call's fate is
	# never asked and the model, told an answer follows, may make that call again.
	earlier = record.pending
	if earlier is not None and earlier.get("kind") == "human_input":
		question = why = f"{earlier['message']}\n\n{question}"
	record.pending = {"kind": "human_input", "message": question}
	record.end = RunEnd("human_input_required", None, why)


async def _responded(
	ctx: RunContext,
	tool: str,
	tool_input: dict[str, Any],
	done: dict[str, Any],
	seq: int,
	key: str,
) -> None:
	# The events of a call that ran, after its step: tool:response, and error when it failed
	# (naming the call's step key `key`, so a viewer shows it with the call).
	value, ok = done["value"], done["ok"]
	if ctx.wants("tool:response"):
		from openmolt_core.events import ToolResponseEvent

		await ctx.emit(
			ToolResponseEvent(
				agent=ctx.agent,
				step=ctx.step,
				tool=tool,
				input=tool_input,
				response=ctx.redact.deep(value),
				error=not ok,
				duration=done["duration"],
			),
			seq + 1,
		)
	if not ok:
		await ctx.error("tool", ctx.redact(dumps(value)), seq=seq + 2, call=key)


def _memory_after(state: RunState, command: UpdateMemory) -> str:
	current = state.memory.get(command.memory) or ""
	if command.mode == "replace" or not current:
		return command.data
	return f"{current}\n{command.data}"


async def _update_memory(ctx: RunContext, command: UpdateMemory, index: int) -> dict[str, Any]:
	key = command.memory
	ctx.state.memory[key] = _memory_after(ctx.state, command)
	if ctx.hooks.memory_updated:  # before anyone keeps it or hears of it
		tell(ctx.hooks.memory_updated, ctx, key, ctx.state.memory[key])
	if ctx.hooks.memory_written:  # kept beyond the run (`openmolt_core.capabilities.Memory`)
		await tell_async(ctx.hooks.memory_written, ctx, key, index)
	if ctx.wants("memoryUpdate"):
		from openmolt_core.events import MemoryUpdateEvent

		await ctx.emit(
			MemoryUpdateEvent(
				agent=ctx.agent,
				step=ctx.step,
				memory=key,
				mode=command.mode,
				data=ctx.state.memory[key],
			)
		)
	else:
		ctx.skip_event()
	return _entry(command, ok=True)


async def _ask_human(
	ctx: RunContext, record: StepRecord, command: RequestHumanInput, index: int
) -> dict[str, Any] | None:
	if ctx.human is None:  # check() refuses the command then; kept for a run resumed elsewhere
		return _entry(command, ok=False, error="nobody can answer this agent")
	question = command.message
	if ctx.hooks.before_words:  # the question as a person may read it (an output guardrail's)
		_COMMAND.set((index, False, 0))
		ruled = await _words_ruled(ctx, record, command, Words("message", question))
		if not isinstance(ruled, str):
			return ruled  # refused or stopped: nobody is asked
		question = ruled

	key = step_key("human", ctx.step, index)  # a failed handler: the model hears it, goes on
	outcome = await ctx.ask_person(key, question, "; the run goes on", failed_parks=False)
	if outcome is not None and "failed" in outcome:
		message = f"{outcome['failed']}; decide yourself or finish"
		await ctx.error("human_input", message)
		return _entry(command, ok=False, error=message)
	return outcome


async def _plan_ruled(
	ctx: RunContext, record: StepRecord, command: UpdatePlan, plan: list[dict[str, Any]]
) -> list[dict[str, Any]] | dict[str, Any]:
	"""Ask the capabilities about a plan a person will read (`Words` ``plan``: its JSON text).

	Returns:
		The plan to keep (as the capabilities let it through), or the command's result entry
		(`_words_ruled`). A rewrite that is no plan stops the run: what a person would read
		is unknown.
	"""
	text = json.dumps(plan, ensure_ascii=False)
	ruled = await _words_ruled(ctx, record, command, Words("plan", text))
	if not isinstance(ruled, str):
		return ruled
	if ruled == text:
		return plan
	try:
		steps = UpdatePlan.model_validate({"type": "updatePlan", "plan": json.loads(ruled)}).plan
	except ValueError:  # not JSON, or not a plan (pydantic's ValidationError is a ValueError)
		stop = Stop("a capability rewrote the plan into something that is not a plan")
		await ctx.error("capability", f"updatePlan stopped: {stop.reason}")
		record.end = RunEnd(stop.status, None, stop.reason)
		return _entry(command, ok=False, error=f"the run stopped: {stop.reason}")
	return [s.model_dump(mode="json", by_alias=True) for s in steps]


async def _words_ruled(
	ctx: RunContext, record: StepRecord, command: Command, words: Words
) -> str | dict[str, Any]:
	"""Ask the capabilities about words for a person (`Capability.before_words`).

	Returns:
		The text to say, or the command's result entry: refused (the model reads why and goes
		on), or stopped (the step ends the run).
	"""
	said, decision = await ctx.hooks.decide_words(ctx, words)
	if isinstance(decision, Proceed):
		return said
	return await _not_said(ctx, record, command, words.command, decision)


async def _not_said(
	ctx: RunContext, record: StepRecord, command: Command, what: str, decision: Refuse | Stop
) -> dict[str, Any]:
	"""The entry of a command (``what``) the capabilities refused (the run goes on), or stopped the run on."""
	reason = ctx.redact(decision.reason)
	if isinstance(decision, Stop):
		record.pending = None
		record.end = RunEnd(decision.status, None, reason)
	elif decision.entry is None:
		await ctx.error("capability", f"{what} refused: {reason}")
	if decision.entry is not None:  # the capability reported it
		return dict(decision.entry)
	said = "refused" if isinstance(decision, Refuse) else "the run stopped"
	return _entry(command, ok=False, error=f"{said}: {reason}")


async def answer_entry(ctx: RunContext, question: str, answer: str) -> dict[str, Any]:
	"""The result entry for a person's answer (shortened past the cap), with its event."""
	if ctx.wants("humanInput"):
		from openmolt_core.events import HumanInputEvent

		await ctx.emit(
			HumanInputEvent(agent=ctx.agent, step=ctx.step, message=question, response=answer)
		)
	else:
		ctx.skip_event()
	cap = ctx.limits.max_answer_chars
	if len(answer) > cap:
		note = f" [answer shortened from {len(answer)} to {cap} characters]"
		answer = masked_excerpt(answer, cap, ctx.redact.secrets, more=note)
	return {"command": "requestHumanInput", "ok": True, "result": answer}


# helpers ----------------------------------------------------------------------------------


def summary(command: Command) -> str:
	"""A few words on a command, for the verbose log."""
	match command:
		case CallTool():
			return f"call {command.tool}"
		case Finish():
			return f"finish ({command.status})"
		case Wait():
			return f"wait {command.seconds:g}s"
		case UpdatePlan():
			done = sum(1 for s in command.plan if s.status == "completed")
			return f"plan {done}/{len(command.plan)} done"
		case UpdateMemory():
			return f"{command.mode} {command.memory} memory"
		case RequestHumanInput():
			return "ask a person"
		case _:
			assert_never(command)
