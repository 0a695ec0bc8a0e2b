"""What one step's commands do: tools (concurrently), waits, plan, memory, a person, finish.

The loop in `openmolt_core.agent` parses a reply and hands each command here. Every function
returns the result entry the model reads at the next step; mistakes become error entries, never
exceptions, except `Done`, which ends the run.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core._jsonschema import JsonSchemaValidator, ValidationError, format_errors
from openmolt_core.commands import (
	MAX_WAIT_SECONDS,
	CallTool,
	Finish,
	RequestHumanInput,
	UpdateMemory,
	UpdatePlan,
	Wait,
)
from openmolt_core.errors import ToolError
from openmolt_core.events import (
	HumanInputEvent,
	MemoryUpdateEvent,
	PlanUpdateEvent,
	ToolCallEvent,
	ToolResponseEvent,
)
from openmolt_core.prompt import dumps

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.result import RunState, RunStatus

__all__ = [
	"MAX_RESULT_CHARS",
	"Done",
	"HumanInputUnavailable",
	"MemoryConfig",
	"ask_human",
	"call_tool",
	"call_tools",
	"finish",
	"memory_part",
	"run_command",
	"summary",
	"update_memory",
	"validate_output",
]

log = logging.getLogger("openmolt")

MemoryConfig = Mapping[str, Any]
"""``{"long_term": {"data": str, "on_update": fn}, "short_term": {...}}`` (camelCase accepted)."""

MAX_RESULT_CHARS = 16_000
"""A tool result longer than this (as JSON) is trimmed in what the model sees."""


class HumanInputUnavailable(Exception):  # a signal, raised by handlers, not an error
	"""Raise from a human-input handler when nobody can answer; the run ends with that status."""


class Done(Exception):  # control flow: the run ends
	"""Ends a run: the model finished, a budget ran out, or nobody can answer a question.

	Args:
		status: How the run ended.
		output: The validated output, if any.
		message: The model's message for a person, or what stopped the run.
	"""

	def __init__(self, status: RunStatus, output: Any, message: str) -> None:
		self.status = status
		self.output = output
		self.message = message


def memory_part(memory: MemoryConfig | None, key: str) -> tuple[str, Callable[[str], Any] | None]:
	"""The initial data and the update callback of ``long_term`` or ``short_term`` memory.

	Args:
		memory: The agent's memory option.
		key: ``long_term`` or ``short_term`` (the camelCase spelling is accepted in ``memory``).
	"""
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


async def call_tools(
	agent: Agent, calls: Sequence[CallTool], state: RunState, step: int
) -> list[dict[str, Any]]:
	"""Run consecutive callTool commands at the same time; results keep command order."""
	if len(calls) == 1:
		return [await call_tool(agent, calls[0], state, step)]
	results: list[dict[str, Any]] = [{}] * len(calls)

	async def one(i: int, call: CallTool) -> None:
		results[i] = await call_tool(agent, call, state, step)

	async with anyio.create_task_group() as tg:
		for i, call in enumerate(calls):
			tg.start_soon(one, i, call)
	return results


async def call_tool(agent: Agent, call: CallTool, state: RunState, step: int) -> dict[str, Any]:
	"""Check, run and report one tool call; every failure becomes an error entry."""
	bound = agent._tools.get(call.tool)
	if bound is None or not bound.allowed:
		if bound is None:
			message = (
				f"unknown tool {call.tool!r}; use one of: {', '.join(agent.tools) or '(none)'}"
			)
		else:
			message = (
				f"tool {call.tool!r} needs scope(s) {bound.missing_scopes} that this agent was not "
				"granted; use another tool"
			)
		await agent._emit_error(step, "tool", message)
		return {"tool": call.tool, "ok": False, "error": message}
	try:
		tool_input = bound.validator().validate(call.input)
	except ValidationError as exc:
		message = f"invalid input for {call.tool}: {format_errors(exc)}"
		await agent._emit_error(step, "tool_input", message)
		return {"tool": call.tool, "ok": False, "error": message}
	if agent._events.wants("tool:call"):
		await agent._events.emit(
			ToolCallEvent(agent=agent.name, step=step, tool=call.tool, input=tool_input)
		)
	began = time.perf_counter()
	ok = True
	try:
		# The context is the binding's; memory is this run's (runs of one agent may overlap).
		value = await bound.execute(tool_input, memory=state.memory)
	except ToolError as exc:
		ok = False
		value = exc.to_dict()
	except Exception as exc:
		ok = False
		value = {"message": f"the tool failed: {type(exc).__name__}: {exc}"}
		log.debug("tool %s raised", call.tool, exc_info=True)
	duration = time.perf_counter() - began
	if agent._events.wants("tool:response"):
		await agent._events.emit(
			ToolResponseEvent(
				agent=agent.name,
				step=step,
				tool=call.tool,
				input=tool_input,
				response=agent._redactor.deep(value),
				error=not ok,
				duration=duration,
			)
		)
	if log.isEnabledFor(logging.INFO):
		log.info(
			"%s step %d: %s %s (%.0f ms)",
			agent.name,
			step,
			call.tool,
			"ok" if ok else "failed",
			duration * 1000,
		)
	if not ok:
		await agent._emit_error(step, "tool", agent._redactor(dumps(value)))
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


async def run_command(
	agent: Agent, command: Any, state: RunState, step: int, started: float
) -> dict[str, Any]:
	"""Run a wait, updatePlan, updateMemory or requestHumanInput command."""
	if isinstance(command, Wait):
		if command.seconds > MAX_WAIT_SECONDS:
			message = f"wait of {command.seconds:g} s refused: the most is {MAX_WAIT_SECONDS:g} s"
			await agent._emit_error(step, "wait", message)
			return {"command": "wait", "ok": False, "error": message}
		seconds = command.seconds
		if agent.timeout is not None:
			seconds = min(seconds, max(agent.timeout - (time.monotonic() - started), 0))
		await anyio.sleep(seconds)
		return {"command": "wait", "ok": True, "result": f"waited {seconds:g} s"}
	if isinstance(command, UpdatePlan):
		state.plan = [s.model_dump(mode="json", by_alias=True) for s in command.plan]
		if agent._events.wants("planUpdate"):
			await agent._events.emit(PlanUpdateEvent(agent=agent.name, step=step, plan=state.plan))
		return {"command": "updatePlan", "ok": True}
	if isinstance(command, UpdateMemory):
		return await update_memory(agent, command, state, step)
	if isinstance(command, RequestHumanInput):
		return await ask_human(agent, command, step)
	raise AssertionError(f"unhandled command {command!r}")  # the parser admits no other


async def update_memory(
	agent: Agent, command: UpdateMemory, state: RunState, step: int
) -> dict[str, Any]:
	"""Replace or append to memory, call its on_update, and emit memoryUpdate."""
	key = command.memory
	if command.mode == "replace" or not state.memory.get(key):
		state.memory[key] = command.data
	else:
		state.memory[key] = f"{state.memory[key]}\n{command.data}"
	if key == "longTerm":
		agent._long_term = state.memory[key]  # long-term memory outlives the run
	_, callback = memory_part(agent._memory, "long_term" if key == "longTerm" else "short_term")
	if callback is not None:
		try:
			outcome = callback(state.memory[key])
			if inspect.isawaitable(outcome):
				await outcome
		except Exception:
			log.exception("memory on_update callback failed; the run goes on")
	if agent._events.wants("memoryUpdate"):
		await agent._events.emit(
			MemoryUpdateEvent(
				agent=agent.name,
				step=step,
				memory=key,
				mode=command.mode,
				data=state.memory[key],
			)
		)
	return {"command": "updateMemory", "ok": True}


async def ask_human(agent: Agent, command: RequestHumanInput, step: int) -> dict[str, Any]:
	"""Ask the agent's human-input handler; without one, tell the model it cannot ask."""
	handler = agent.on_human_input_request
	if not handler:
		message = (
			"requestHumanInput is not available to this agent: decide yourself, or finish with "
			"status 'failure' and explain what you need in humanMessage"
		)
		await agent._emit_error(step, "human_input", message)
		return {"command": "requestHumanInput", "ok": False, "error": message}
	try:
		answer = handler(command.message)
		if inspect.isawaitable(answer):
			answer = await answer
	except HumanInputUnavailable as exc:
		raise Done("human_input_required", None, str(exc) or command.message) from exc
	except Exception as exc:
		# The application's handler failed: the model hears it, the run goes on.
		log.exception("the human-input handler failed; the run goes on")
		message = f"the person could not be asked ({type(exc).__name__}); decide yourself or finish"
		await agent._emit_error(step, "human_input", message)
		return {"command": "requestHumanInput", "ok": False, "error": message}
	answer = "" if answer is None else str(answer)
	if agent._events.wants("humanInput"):
		await agent._events.emit(
			HumanInputEvent(agent=agent.name, step=step, message=command.message, response=answer)
		)
	return {"command": "requestHumanInput", "ok": True, "result": answer}


async def finish(agent: Agent, command: Finish, step: int) -> dict[str, Any]:
	"""Validate the finish output and end the run (raises `Done`), or report why not."""
	try:
		output = validate_output(agent, command.output)
	except ValidationError as exc:
		message = (
			f"finish refused: output does not match the output schema: {format_errors(exc)}; "
			"fix the output and finish again"
		)
		await agent._emit_error(step, "output", message)
		return {"command": "finish", "ok": False, "error": message}
	raise Done(command.status, output, command.human_message)


def validate_output(agent: Agent, value: Any) -> Any:
	"""Validate a finish output against the agent's output schema."""
	if agent._output_model is not None:
		return agent._output_model.model_validate(value)
	if agent._output_json is not None:
		if agent._output_validator is None:
			agent._output_validator = JsonSchemaValidator(agent._output_json)
		agent._output_validator.validate(value)
	return value


def summary(command: Any) -> str:
	"""A few words on a command, for the verbose log."""
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
