"""The agent and its loop: ask the model, run its commands, feed the results back, until finish.

One step is one model call followed by the commands of its reply. The history is append-only:
the system prompt and the first user turn (instructions, tools, input) never change during a run,
and each step appends the model's cleaned reply and one user turn with the results.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core._binding import BoundTool, describe_tools
from openmolt_core._jsonschema import JsonSchemaValidator, ValidationError, format_errors
from openmolt_core._parse import parse_reply
from openmolt_core._redact import Redactor
from openmolt_core.commands import (
	MAX_WAIT_SECONDS,
	CallTool,
	Finish,
	RequestHumanInput,
	UpdateMemory,
	UpdatePlan,
	Wait,
)
from openmolt_core.errors import ConfigurationError, ProviderError, RunError, ToolError
from openmolt_core.events import (
	CommandsQueuedEvent,
	ErrorEvent,
	EventEmitter,
	FinishEvent,
	Handler,
	HumanInputEvent,
	LLMOutputEvent,
	MemoryUpdateEvent,
	PlanUpdateEvent,
	ToolCallEvent,
	ToolResponseEvent,
)
from openmolt_core.llm import Attachment, LLMProvider, Message, ModelConfig, ModelRequest
from openmolt_core.prompt import dumps, envelope_schema, maestro_prompt
from openmolt_core.result import RunResult, RunState, RunStatus

if TYPE_CHECKING:
	from pydantic import BaseModel

	from openmolt_core.openmolt import OpenMolt
	from openmolt_core.schedule import ScheduleSpec

__all__ = [
	"MAX_RESULT_CHARS",
	"STEPS_LEFT_WARNING",
	"Agent",
	"HumanInputUnavailable",
	"MemoryConfig",
]

log = logging.getLogger("openmolt")
log.addHandler(logging.NullHandler())  # a library logs; the application decides where to

MemoryConfig = Mapping[str, Any]
"""``{"long_term": {"data": str, "on_update": fn}, "short_term": {...}}`` (camelCase accepted)."""

HumanInputHandler = Callable[[str], Awaitable[str] | str]

STEPS_LEFT_WARNING = 3
"""Results carry ``stepsLeft`` once this few steps remain."""

MAX_RESULT_CHARS = 16_000
"""A tool result longer than this (as JSON) is trimmed in what the model sees."""


class HumanInputUnavailable(Exception):  # a signal, raised by handlers, not an error
	"""Raise from a human-input handler when nobody can answer; the run ends with that status."""


class _Done(Exception):  # internal control flow
	def __init__(self, status: RunStatus, output: Any, message: str) -> None:
		self.status = status
		self.output = output
		self.message = message


def _memory_part(memory: MemoryConfig | None, key: str) -> tuple[str, Callable[[str], Any] | None]:
	if not memory:
		return "", None
	camel = "longTerm" if key == "long_term" else "shortTerm"
	part = memory.get(key, memory.get(camel)) or {}
	if isinstance(part, str):
		return part, None
	data = part.get("data", "") or ""
	if not isinstance(data, str):
		data = dumps(data)
	return data, part.get("on_update", part.get("onUpdate"))


class Agent:
	"""An agent: instructions, a model, tools and an output schema. Create with ``om.create_agent``.

	Args:
		om: The OpenMolt instance that owns the agent.
		name: The agent's name (shown to the model and in events).
		provider: The model provider.
		model: The model name for the provider.
		provider_name: The provider's prefix in the model id (``openai``); empty for a provider
			object passed as ``model``.
		model_config: The model configuration.
		instructions: What the agent must do.
		tools: The bound tools (visible or not, by scope).
		output_schema: A pydantic model class, a JSON Schema dict, or None.
		memory: Memory data and update callbacks.
		on_human_input_request: Answers ``requestHumanInput``; None or False disables it.
		config: Free-form settings shown to the model with the instructions.
		max_steps: Model calls before the run is asked to finish.
		max_tokens: Tokens (input + output, summed) before the run is asked to finish.
		timeout: Seconds before the run is asked to finish.
	"""

	__slots__ = (
		"_events",
		"_memory",
		"_output_json",
		"_output_model",
		"_output_validator",
		"_prefix",
		"_provider",
		"_provider_factory",
		"_redactor_cache",
		"_system",
		"_tools",
		"config",
		"instructions",
		"max_steps",
		"max_tokens",
		"model",
		"model_config",
		"name",
		"om",
		"on_human_input_request",
		"provider_name",
		"timeout",
	)

	def __init__(
		self,
		om: OpenMolt,
		*,
		name: str,
		provider: Callable[[], LLMProvider],
		model: str,
		provider_name: str = "",
		model_config: ModelConfig,
		instructions: str,
		tools: Sequence[BoundTool],
		output_schema: type[BaseModel] | dict[str, Any] | None,
		memory: MemoryConfig | None,
		on_human_input_request: HumanInputHandler | None,
		config: Mapping[str, Any] | None,
		max_steps: int,
		max_tokens: int | None,
		timeout: float | None,
	) -> None:
		self.om = om
		self.name = name
		self.model = model
		self.provider_name = provider_name
		self.model_config = model_config
		self.instructions = instructions
		self.config = dict(config) if config else {}
		self.max_steps = max_steps
		self.max_tokens = max_tokens
		self.timeout = timeout
		self.on_human_input_request = on_human_input_request
		self._provider_factory = provider
		self._provider: LLMProvider | None = None
		self._tools = {t.handle: t for t in tools}
		self._output_model = output_schema if isinstance(output_schema, type) else None
		self._output_json = output_schema if isinstance(output_schema, dict) else None
		self._memory = memory
		self._events = EventEmitter({})
		self._system: str | None = None
		self._prefix: str | None = None
		self._output_validator: JsonSchemaValidator | None = None
		self._redactor_cache: Redactor | None = None

	@property
	def _redactor(self) -> Redactor:
		# Built on first use: creating an agent stays cheap, and its secrets are known by then.
		if self._redactor_cache is None:
			contexts = {id(t.context): t.context for t in self._tools.values()}.values()
			self._redactor_cache = Redactor(
				frozenset().union(*(c.redact for c in contexts)),
				[
					getattr(c.auth, "secrets")  # noqa: B009  # httpx.Auth does not declare it
					for c in contexts
					if callable(getattr(c.auth, "secrets", None))
				],
			)
		return self._redactor_cache

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
	def human_input_enabled(self) -> bool:
		"""Whether the agent may ask a person (a handler is set)."""
		return bool(self.on_human_input_request)

	def system_prompt(self) -> str:
		"""The maestro (system) prompt, built once."""
		if self._system is None:
			self._system = maestro_prompt(
				name=self.name,
				output_schema=self.output_schema,
				human_input=self.human_input_enabled,
			)
		return self._system

	def _static_prefix(self) -> str:
		# The part of the first message that is the same for every run of this agent.
		if self._prefix is None:
			head = dumps(
				{"agent": self.name, "instructions": self.instructions, "config": self.config}
			)
			self._prefix = f'{{"about":{head},"tools":{describe_tools(list(self._tools.values()))}'
		return self._prefix

	def first_message(self, input: Any, state: RunState) -> str:
		"""The first user turn: instructions and tools (static), then memory, plan and input."""
		tail = dumps({"memory": state.memory, "plan": state.plan, "input": input})
		budget = f',"maxSteps":{self.max_steps}' if self.max_steps else ""
		return f"{self._static_prefix()}{budget},{tail[1:]}"

	def provider(self) -> LLMProvider:
		"""The model provider, created on first use."""
		if self._provider is None:
			self._provider = self._provider_factory()
		return self._provider

	# the run ------------------------------------------------------------------------------

	async def run(
		self,
		input: Any = None,
		*,
		history: RunState | Mapping[str, Any] | None = None,
		attachments: Sequence[Attachment] = (),
	) -> RunResult:
		"""Run the agent until it finishes or a budget runs out.

		Args:
			input: The task input: a string, or any JSON-serializable value.
			history: A saved `RunState` (or its dict) to resume from instead of starting afresh.
			attachments: Images or PDFs for the model, sent with the first turn.

		Returns:
			The result: validated output, status, plan, usage and the full state.

		Raises:
			RunError: The provider failed for good; ``error.result.state`` resumes the run.
		"""
		if isinstance(history, RunState):
			state = history
		elif history is not None:
			state = RunState.from_dict(dict(history))
		else:
			long_term, _ = _memory_part(self._memory, "long_term")
			short_term, _ = _memory_part(self._memory, "short_term")
			state = RunState(memory={"longTerm": long_term, "shortTerm": short_term})
		if not state.messages:
			state.messages.append(
				Message("user", self.first_message(input, state), list(attachments))
			)
		if self._provider is None:
			# First run of this agent: load the provider, the HTTP stack and the template engine
			# in a worker thread (once per instance), so other tasks of the loop never stall.
			await self.om.prepare(
				provider=self.provider_name or None,
				http_tools=any(
					t.integration is not None and not t.is_function for t in self._tools.values()
				),
			)
		system = self.system_prompt()
		schema = envelope_schema(self.output_schema, human_input=self.human_input_enabled)
		started = time.monotonic()
		steps_at_start = state.steps
		final_call = False
		try:
			while True:
				over = self._over_budget(state, started, steps_at_start)
				if over and final_call:
					raise _Done("limit_reached", None, over)
				if over:
					final_call = True
					self._append_notice(
						state,
						f"Budget exhausted ({over}). This is your last step: finish now with the best "
						"output you have, using status 'failure' if the task is not done.",
					)
				step = state.steps + 1
				reply = await self._call_model(state, system, schema, step)
				await self._handle_reply(reply, state, step, started, steps_at_start)
		except _Done as done:
			result = self._result(state, done.status, done.output, done.message)
			if done.status == "limit_reached":
				result.error = done.message
			if self._events.wants("finish"):
				await self._events.emit(
					FinishEvent(agent=self.name, step=state.steps, result=result)
				)
			return result

	def _over_budget(self, state: RunState, started: float, steps_at_start: int) -> str | None:
		if self.max_steps and state.steps >= self.max_steps:
			return f"{self.max_steps} steps used"
		if self.max_tokens and state.usage.total_tokens >= self.max_tokens:
			return f"{state.usage.total_tokens} of {self.max_tokens} tokens used"
		if self.timeout is not None and time.monotonic() - started >= self.timeout:
			return f"{self.timeout:g} seconds elapsed"
		return None

	def _append_notice(self, state: RunState, notice: str) -> None:
		last = state.messages[-1]
		if last.role == "user" and last.content.endswith("}"):
			last.content = f'{last.content[:-1]},"notice":{dumps(notice)}}}'
		else:
			state.messages.append(Message("user", dumps({"notice": notice})))

	async def _call_model(
		self, state: RunState, system: str, schema: dict[str, Any], step: int
	) -> str:
		request = ModelRequest(
			model=self.model,
			system=system,
			messages=state.messages,
			response_schema=schema,
			config=self.model_config,
			cache_key=f"openmolt:{self.name}",
		)
		try:
			response = await self.provider().generate(request)
		except ProviderError as exc:
			message = self._redactor(str(exc))
			await self._emit_error(step, "provider", message, fatal=True)
			result = self._result(state, "error", None, "")
			result.error = message
			raise RunError(message, result=result) from exc
		state.steps += 1
		state.usage.add(response.usage)
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
		if self._events.wants("llmOutput"):
			await self._events.emit(
				LLMOutputEvent(
					agent=self.name,
					step=step,
					output=response.text,
					raw=response.raw,
					usage=response.usage,
				)
			)
		return response.text

	async def _handle_reply(
		self, text: str, state: RunState, step: int, started: float, steps_at_start: int
	) -> None:
		parsed = parse_reply(text, dumps=dumps)
		state.messages.append(Message("assistant", self._redactor(parsed.cleaned)))
		if parsed.errors:
			for error in parsed.errors:
				await self._emit_error(step, "invalid_reply", error)
			self._append_results(
				state, [{"ok": False, "error": e} for e in parsed.errors], started, steps_at_start
			)
			return
		if log.isEnabledFor(logging.INFO):
			log.info(
				"%s step %d: %s", self.name, step, ", ".join(_summary(c) for c in parsed.commands)
			)
		if self._events.wants("commandsQueued"):
			await self._events.emit(
				CommandsQueuedEvent(
					agent=self.name,
					step=step,
					commands=[c.model_dump(mode="json", by_alias=True) for c in parsed.commands],
				)
			)
		results: list[dict[str, Any]] = []
		commands = parsed.commands
		index = 0
		while index < len(commands):
			command = commands[index]
			if isinstance(command, CallTool):
				end = index
				while end < len(commands) and isinstance(commands[end], CallTool):
					end += 1
				results.extend(await self._call_tools(commands[index:end], state, step))
				index = end
				continue
			if isinstance(command, Finish):
				results.append(await self._finish(command, step))
				break
			results.append(await self._run_command(command, state, step, started))
			index += 1
		self._append_results(state, results, started, steps_at_start)

	def _append_results(
		self, state: RunState, results: list[dict[str, Any]], started: float, steps_at_start: int
	) -> None:
		body: dict[str, Any] = {"results": results}
		if self.max_steps:
			left = self.max_steps - state.steps
			if left <= STEPS_LEFT_WARNING:
				# Only near the end: the first turn states maxSteps, and every byte added here is
				# sent again at each later step.
				body["stepsLeft"] = max(left, 0)
		state.messages.append(Message("user", self._redactor(dumps(body))))

	async def _emit_error(self, step: int, kind: str, message: str, *, fatal: bool = False) -> None:
		log.warning("%s step %d: %s: %s", self.name, step, kind, message)
		if self._events.wants("error"):
			await self._events.emit(
				ErrorEvent(agent=self.name, step=step, kind=kind, message=message, fatal=fatal)
			)

	# commands -----------------------------------------------------------------------------

	async def _call_tools(
		self, calls: Sequence[CallTool], state: RunState, step: int
	) -> list[dict[str, Any]]:
		if len(calls) == 1:
			return [await self._call_tool(calls[0], state, step)]
		results: list[dict[str, Any]] = [{}] * len(calls)

		async def one(i: int, call: CallTool) -> None:
			results[i] = await self._call_tool(call, state, step)

		async with anyio.create_task_group() as tg:
			for i, call in enumerate(calls):
				tg.start_soon(one, i, call)
		return results

	async def _call_tool(self, call: CallTool, state: RunState, step: int) -> dict[str, Any]:
		bound = self._tools.get(call.tool)
		if bound is None or not bound.allowed:
			if bound is None:
				message = (
					f"unknown tool {call.tool!r}; use one of: {', '.join(self.tools) or '(none)'}"
				)
			else:
				message = (
					f"tool {call.tool!r} needs scope(s) {bound.missing_scopes} that this agent was not "
					"granted; use another tool"
				)
			await self._emit_error(step, "tool", message)
			return {"tool": call.tool, "ok": False, "error": message}
		try:
			tool_input = bound.validator().validate(call.input)
		except ValidationError as exc:
			message = f"invalid input for {call.tool}: {format_errors(exc)}"
			await self._emit_error(step, "tool_input", message)
			return {"tool": call.tool, "ok": False, "error": message}
		if self._events.wants("tool:call"):
			await self._events.emit(
				ToolCallEvent(agent=self.name, step=step, tool=call.tool, input=tool_input)
			)
		bound.context.memory = state.memory
		began = time.perf_counter()
		ok = True
		try:
			value = await bound.execute(tool_input)
		except ToolError as exc:
			ok = False
			value = exc.to_dict()
		except Exception as exc:
			ok = False
			value = {"message": f"the tool failed: {type(exc).__name__}: {exc}"}
			log.debug("tool %s raised", call.tool, exc_info=True)
		duration = time.perf_counter() - began
		if self._events.wants("tool:response"):
			await self._events.emit(
				ToolResponseEvent(
					agent=self.name,
					step=step,
					tool=call.tool,
					input=tool_input,
					response=self._redactor.deep(value),
					error=not ok,
					duration=duration,
				)
			)
		if log.isEnabledFor(logging.INFO):
			log.info(
				"%s step %d: %s %s (%.0f ms)",
				self.name,
				step,
				call.tool,
				"ok" if ok else "failed",
				duration * 1000,
			)
		if not ok:
			await self._emit_error(step, "tool", self._redactor(dumps(value)))
			return {
				"tool": call.tool,
				"ok": False,
				"error": value.get("message", "failed"),
				**(
					{"details": {k: v for k, v in value.items() if k != "message"}}
					if len(value) > 1
					else {}
				),
			}
		return {"tool": call.tool, "ok": True, "result": _trim(value)}

	async def _run_command(
		self, command: Any, state: RunState, step: int, started: float
	) -> dict[str, Any]:
		if isinstance(command, Wait):
			if command.seconds > MAX_WAIT_SECONDS:
				message = (
					f"wait of {command.seconds:g} s refused: the most is {MAX_WAIT_SECONDS:g} s"
				)
				await self._emit_error(step, "wait", message)
				return {"command": "wait", "ok": False, "error": message}
			seconds = command.seconds
			if self.timeout is not None:
				seconds = min(seconds, max(self.timeout - (time.monotonic() - started), 0))
			await anyio.sleep(seconds)
			return {"command": "wait", "ok": True, "result": f"waited {seconds:g} s"}
		if isinstance(command, UpdatePlan):
			state.plan = [s.model_dump(mode="json", by_alias=True) for s in command.plan]
			if self._events.wants("planUpdate"):
				await self._events.emit(
					PlanUpdateEvent(agent=self.name, step=step, plan=state.plan)
				)
			return {"command": "updatePlan", "ok": True}
		if isinstance(command, UpdateMemory):
			return await self._update_memory(command, state, step)
		if isinstance(command, RequestHumanInput):
			return await self._ask_human(command, step)
		raise AssertionError(f"unhandled command {command!r}")  # the parser admits no other

	async def _update_memory(
		self, command: UpdateMemory, state: RunState, step: int
	) -> dict[str, Any]:
		key = command.memory
		if command.mode == "replace" or not state.memory.get(key):
			state.memory[key] = command.data
		else:
			state.memory[key] = f"{state.memory[key]}\n{command.data}"
		_, callback = _memory_part(self._memory, "long_term" if key == "longTerm" else "short_term")
		if callback is not None:
			try:
				outcome = callback(state.memory[key])
				if inspect.isawaitable(outcome):
					await outcome
			except Exception:
				log.exception("memory on_update callback failed; the run goes on")
		if self._events.wants("memoryUpdate"):
			await self._events.emit(
				MemoryUpdateEvent(
					agent=self.name,
					step=step,
					memory=key,
					mode=command.mode,
					data=state.memory[key],
				)
			)
		return {"command": "updateMemory", "ok": True}

	async def _ask_human(self, command: RequestHumanInput, step: int) -> dict[str, Any]:
		handler = self.on_human_input_request
		if not handler:
			message = (
				"requestHumanInput is not available to this agent: decide yourself, or finish with "
				"status 'failure' and explain what you need in humanMessage"
			)
			await self._emit_error(step, "human_input", message)
			return {"command": "requestHumanInput", "ok": False, "error": message}
		try:
			answer = handler(command.message)
			if inspect.isawaitable(answer):
				answer = await answer
		except HumanInputUnavailable as exc:
			raise _Done("human_input_required", None, str(exc) or command.message) from exc
		answer = "" if answer is None else str(answer)
		if self._events.wants("humanInput"):
			await self._events.emit(
				HumanInputEvent(
					agent=self.name, step=step, message=command.message, response=answer
				)
			)
		return {"command": "requestHumanInput", "ok": True, "result": answer}

	async def _finish(self, command: Finish, step: int) -> dict[str, Any]:
		try:
			output = self._validate_output(command.output)
		except ValidationError as exc:
			message = (
				f"finish refused: output does not match the output schema: {format_errors(exc)}; "
				"fix the output and finish again"
			)
			await self._emit_error(step, "output", message)
			return {"command": "finish", "ok": False, "error": message}
		raise _Done(command.status, output, command.human_message)

	def _validate_output(self, value: Any) -> Any:
		if self._output_model is not None:
			return self._output_model.model_validate(value)
		if self._output_json is not None:
			if self._output_validator is None:
				self._output_validator = JsonSchemaValidator(self._output_json)
			self._output_validator.validate(value)
		return value

	def _result(self, state: RunState, status: RunStatus, output: Any, message: str) -> RunResult:
		return RunResult(
			output=output,
			status=status,
			human_message=message if status in ("success", "failure") else "",
			plan=state.plan,
			steps=state.steps,
			usage=state.usage,
			state=state,
			error=message if status == "human_input_required" else None,
		)

	# schedules ----------------------------------------------------------------------------

	def schedule(self, spec: Mapping[str, Any] | ScheduleSpec) -> str:
		"""Run this agent on a timetable kept by its OpenMolt instance (see `openmolt_core.schedule`).

		Runs start once the instance serves its schedules (``async with om:``, ``om.start(tg)``
		or the ``openmolt`` command).

		Args:
			spec: ``{"type": "interval", "value": seconds}``, ``{"type": "daily", "hour": 14,
				"minute": 0, "dayOfWeek": [1, 3], "timeZone": "Europe/Paris"}`` or
				``{"type": "cron", "expression": "0 9 * * 1-5"}``; plus optional ``id``,
				``input``, ``missedRuns`` (``skip`` or ``run_once``) and ``paused``.

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
		schedule = self.om.scheduler.get(schedule_id)
		if schedule.agent is not self:
			raise ConfigurationError(
				f"schedule {schedule_id!r} belongs to agent {schedule.agent.name!r}"
			)
		schedule.cancel(cancel_running=cancel_running)

	def __repr__(self) -> str:
		return f"Agent(name={self.name!r}, model={self.model!r}, tools={len(self.tools)})"


def _summary(command: Any) -> str:
	if isinstance(command, CallTool):
		return f"call {command.tool}"
	if isinstance(command, Finish):
		return f"finish ({command.status})"
	if isinstance(command, Wait):
		return f"wait {command.seconds:g}s"
	if isinstance(command, UpdatePlan):
		done = sum(1 for s in command.plan if s.status == "completed")
		return f"plan {done}/{len(command.plan)} done"
	if isinstance(command, UpdateMemory):
		return f"{command.mode} {command.memory} memory"
	return "ask a person"


def _trim(value: Any) -> Any:
	text = dumps(value)
	if len(text) <= MAX_RESULT_CHARS:
		return value
	cut = MAX_RESULT_CHARS - 200
	return {
		"truncated": True,
		"note": f"result shortened from {len(text)} to {cut} characters; ask for less (filters, "
		"smaller pages) if you need the rest",
		"partial": text[:cut],
	}
