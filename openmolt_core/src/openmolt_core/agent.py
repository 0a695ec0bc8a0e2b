"""The agent and its loop: ask the model, run its commands, feed the results back, until finish.

One step is one model call followed by the commands of its reply. The history is append-only:
the system prompt and the first user turn (instructions, tools, input) never change during a run,
and each step appends the model's cleaned reply and one user turn with the results.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core import _execute
from openmolt_core._binding import BoundTool, describe_tools
from openmolt_core._execute import (
	MAX_RESULT_CHARS,
	Done,
	HumanInputUnavailable,
	MemoryConfig,
	memory_part,
	summary,
)
from openmolt_core._jsonschema import JsonSchemaValidator
from openmolt_core._parse import parse_reply
from openmolt_core._redact import Redactor, redactor_for
from openmolt_core._sources import AgentSources, SourceBinding
from openmolt_core.commands import CallTool, Finish
from openmolt_core.errors import ConfigurationError, ProviderError, RunError
from openmolt_core.events import (
	CommandsQueuedEvent,
	ErrorEvent,
	EventEmitter,
	FinishEvent,
	Handler,
	LLMOutputEvent,
)
from openmolt_core.llm import Attachment, LLMProvider, Message, ModelConfig, ModelRequest
from openmolt_core.prompt import dumps, envelope_schema, maestro_prompt
from openmolt_core.result import RunResult, RunState, RunStatus

if TYPE_CHECKING:
	from pydantic import BaseModel

	from openmolt_core.openmolt import OpenMolt
	from openmolt_core.schedule import ScheduleSpec

__all__ = [
	"FINAL_STEP_GRACE",
	"MAX_RESULT_CHARS",
	"STEPS_LEFT_WARNING",
	"Agent",
	"HumanInputUnavailable",
	"MemoryConfig",
]

log = logging.getLogger("openmolt")
log.addHandler(logging.NullHandler())  # a library logs; the application decides where to

HumanInputHandler = Callable[[str], Awaitable[str] | str]

_STOP_REASONS = {
	"max_tokens": (
		"your answer was cut off at the output token limit: send fewer commands per answer, "
		"or shorter inputs"
	),
	"refusal": "you refused to answer; if the task cannot be done, finish with status 'failure'",
	"safety": (
		"the provider's safety filter blocked your answer; rephrase, or finish with status "
		"'failure' and explain why"
	),
}

FINAL_STEP_GRACE = 60.0
"""Seconds the last model call may take once the time budget is spent."""

STEPS_LEFT_WARNING = 3
"""Results carry ``stepsLeft`` once this few steps remain."""


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
		config: The instance settings this agent overrides (``max_steps``, ``max_tokens``,
			``timeout``, ``verbose``), as given to ``create_agent(config=...)``.
		max_steps: Model calls before the run is asked to finish.
		max_tokens: Tokens (input + output, summed) before the run is asked to finish.
		timeout: Seconds before the run is asked to finish.
		sources: The integrations whose tools are listed at the start of each run (MCP servers).
	"""

	__slots__ = (
		"_events",
		"_long_term",
		"_memory",
		"_output_json",
		"_output_model",
		"_output_validator",
		"_prefix",
		"_provider",
		"_provider_factory",
		"_redactor_cache",
		"_sources",
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
		sources: Sequence[SourceBinding] = (),
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
		self._long_term: str | None = None  # set by the first update; the next run starts there
		self._events = EventEmitter()
		self._system: str | None = None
		self._prefix: str | None = None
		self._output_validator: JsonSchemaValidator | None = None
		self._redactor_cache: Redactor | None = None
		self._sources = AgentSources(self._tools, sources) if sources else None

	@property
	def _redactor(self) -> Redactor:
		# Built on first use: creating an agent stays cheap, and its secrets are known by then.
		if self._redactor_cache is None:
			self._redactor_cache = redactor_for(t.context for t in self._tools.values())
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
			head = dumps({"agent": self.name, "instructions": self.instructions})
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
			IntegrationError: A tool source (an MCP server) could not list its tools.
		"""
		if self._sources is not None:  # tools listed at run time: rebound only when they changed
			tools = await self._sources.refresh()
			if tools is not None:
				self._tools, self._prefix, self._redactor_cache = tools, None, None
		if isinstance(history, RunState):
			state = history
		elif history is not None:
			state = RunState.from_dict(dict(history))
		else:
			long_term = self._long_term
			if long_term is None:
				long_term, _ = memory_part(self._memory, "long_term")
			short_term, _ = memory_part(self._memory, "short_term")
			state = RunState(memory={"longTerm": long_term, "shortTerm": short_term})
		if not state.messages:
			state.messages.append(
				Message("user", self.first_message(input, state), list(attachments))
			)
		if self._provider is None:
			# First run of this agent: load the provider, the HTTP stack and the template engine
			# in a worker thread (once per instance), so other tasks of the loop never stall.
			http_tools = any(
				t.integration is not None and not t.is_function for t in self._tools.values()
			)
			if self.provider_name or http_tools:
				await self.om.prepare(provider=self.provider_name or None, http_tools=http_tools)
		system = self.system_prompt()
		schema = envelope_schema(self.output_schema, human_input=self.human_input_enabled)
		started = time.monotonic()
		steps_at_start = state.steps
		final_call = False
		try:
			while True:
				over = self._over_budget(state, started, steps_at_start)
				if over and final_call:
					raise Done("limit_reached", None, over)
				if over:
					final_call = True
					self._append_notice(
						state,
						f"Budget exhausted ({over}). This is your last step: finish now with the best "
						"output you have, using status 'failure' if the task is not done.",
					)
				step = state.steps + 1
				if self.timeout is None:
					reply, finish_reason = await self._call_model(state, system, schema, step)
				else:
					# The time budget also bounds a model call in flight; the last step, asked
					# to finish, gets a short grace period of its own.
					left = self.timeout - (time.monotonic() - started)
					limit = (
						max(left, 0.0) if not final_call else min(self.timeout, FINAL_STEP_GRACE)
					)
					with anyio.move_on_after(limit) as scope:
						reply, finish_reason = await self._call_model(state, system, schema, step)
					if scope.cancelled_caught:
						raise Done(
							"limit_reached",
							None,
							f"{self.timeout:g} seconds elapsed during a model call",
						)
				await self._handle_reply(reply, finish_reason, state, step, started, steps_at_start)
		except Done as done:
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
	) -> tuple[str, str | None]:
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
			if not isinstance(response.text, str):
				raise ProviderError(
					f"the provider returned {type(response.text).__name__} instead of text",
					provider=self.provider_name or "custom",
					model=self.model,
				)
		except (ConfigurationError, AssertionError):
			# A missing key or a wrong setting (nothing ran, nothing to resume), or a test
			# double's failed expectation, which a test must see as itself.
			raise
		except Exception as exc:
			# Any provider failure ends the run with its state kept, so it can be resumed.
			message = self._redactor(
				str(exc) if isinstance(exc, ProviderError) else f"{type(exc).__name__}: {exc}"
			)
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
		return response.text, response.finish_reason

	async def _handle_reply(
		self,
		text: str,
		finish_reason: str | None,
		state: RunState,
		step: int,
		started: float,
		steps_at_start: int,
	) -> None:
		parsed = parse_reply(text, dumps=dumps)
		state.messages.append(Message("assistant", self._redactor(parsed.cleaned)))
		if parsed.errors:
			why = _STOP_REASONS.get(finish_reason or "")
			if why:
				parsed.errors.insert(0, why)
			for error in parsed.errors:
				await self._emit_error(step, "invalid_reply", error)
			self._append_results(
				state, [{"ok": False, "error": e} for e in parsed.errors], started, steps_at_start
			)
			return
		if log.isEnabledFor(logging.INFO):
			log.info(
				"%s step %d: %s", self.name, step, ", ".join(summary(c) for c in parsed.commands)
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
		try:
			while index < len(commands):
				command = commands[index]
				if isinstance(command, CallTool):
					end = index
					while end < len(commands) and isinstance(commands[end], CallTool):
						end += 1
					results.extend(
						await _execute.call_tools(self, commands[index:end], state, step)
					)
					index = end
					continue
				if isinstance(command, Finish):
					results.append(await _execute.finish(self, command, step))
					break
				results.append(await _execute.run_command(self, command, state, step, started))
				index += 1
		except Done as done:
			# The run ends inside this step: keep what already ran in the history, so a saved
			# state shows every tool result and resumes on a user turn.
			if done.status == "human_input_required":
				results.append(
					{"command": "requestHumanInput", "ok": False, "error": "nobody could answer"}
				)
			if results:
				self._append_results(state, results, started, steps_at_start)
			raise
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
