"""Progress on stderr: a spinner on a terminal, plain lines otherwise, JSON lines with ``--json``.

stdout is kept for results, so a pipeline can read them while a person watches stderr.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Literal

import anyio

from openmolt_core._emitter import EVENT_NAMES, STREAM_EVENTS, EventName
from openmolt_core._support.words import quantity
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.cli._terminal import excerpt, printable
from openmolt_core.commands import PLAN_STATUSES

__all__ = ["JSON_LEFT_OUT", "Progress", "active", "ask_on_terminal", "guardrail_line", "to_json"]

JSON_LEFT_OUT: Mapping[str, str] = {
	"commandsQueued": "the reply's commands, each followed by its own event (tool:call, planUpdate"
	"...); llmOutput holds the reply",
}
"""The events ``--json``'s lines leave out, and why. Every other event a handler of the agent
hears is a line (its capabilities' own too); the streaming previews (`STREAM_EVENTS`) never are:
the streamed text is the result's, on stdout."""

_LINES: tuple[EventName, ...] = (
	"llmOutput",
	"commandsQueued",
	"tool:call",
	"tool:response",
	"planUpdate",
	"memoryUpdate",
	"humanInput",
	"approval:decision",
	"guardrail",
	"model:fallback",
	"error",
	"finish",
	"schedule:run",
	"schedule:skip",
)
"""The events a person's progress (spinner or plain lines) says something of (typed: a name the
emitter does not know fails the type check)."""

Mode = Literal["spinner", "plain", "json"]
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_MARKS = dict(zip(PLAN_STATUSES, (" ", ">", "x", "!"), strict=True))
"""The mark of each plan status (pending, inProgress, completed, failed), in that order."""


def to_json(value: Any) -> Any:
	"""Turn events, results, usage and datetimes into JSON-serializable data."""
	if hasattr(value, "to_dict"):
		return value.to_dict()
	if dataclasses.is_dataclass(value) and not isinstance(value, type):
		return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
	if isinstance(value, datetime):
		return value.isoformat()
	if isinstance(value, dict):
		return {str(k): to_json(v) for k, v in value.items()}
	if isinstance(value, list | tuple):
		return [to_json(v) for v in value]
	if hasattr(value, "model_dump"):
		return value.model_dump(mode="json")
	return value


# Commands that report their end with an event: the step's commands are done when all have.
_REPORTED = {
	"callTool": "tool:response",
	"updatePlan": "planUpdate",
	"updateMemory": "memoryUpdate",
	"requestHumanInput": "humanInput",
}


@dataclass
class _Run:
	"""What the spinner shows about one agent's run: step k of N, time, tokens, cost so far."""

	max_steps: int
	started: float = field(default_factory=time.monotonic)
	step: int = 1  # the step in progress
	tokens: int = 0
	cost: float | None = None
	pending: int = 0
	activity: str = "asking the model"

	def header(self, agent: str) -> str:
		of = f"/{self.max_steps}" if self.max_steps else ""
		parts = [f"{agent} step {self.step}{of}", f"{time.monotonic() - self.started:.1f} s"]
		if self.tokens:
			parts.append(quantity(self.tokens, "token"))
		if self.cost is not None:
			parts.append(f"${self.cost:.4f}")
		return " · ".join(parts)


class Progress:
	"""Reports what agents do.

	Args:
		mode: ``spinner`` (a terminal), ``plain`` or ``json``.
		stream: Where to write (stderr).
		verbose: Also keep a line for each event (model replies, commands, tool calls).
	"""

	def __init__(self, mode: Mode, stream: IO[str] | None = None, *, verbose: bool = False) -> None:
		self.mode = mode
		self.stream = stream or sys.stderr
		self.verbose = verbose
		self._status = ""
		self._frame = 0
		self._shown = False
		self._runs: dict[str, _Run] = {}
		self._max_steps: dict[str, int] = {}
		self.errors_shown: set[str] = set()
		"""The messages of the error events printed so far (a run's end does not repeat them)."""
		self.voice: Callable[[str], str] = str
		"""Rewords an event's error for the command (`openmolt_core.cli._voice.for_the_command`)."""
		self._live: tuple[str, _Run] | None = None  # the run the spinner follows
		self._paused = False

	@classmethod
	def for_terminal(cls, *, json_events: bool, verbose: bool = False) -> Progress:
		"""JSON lines when asked, a spinner when stderr is a terminal, else plain lines."""
		if json_events:
			return cls("json", verbose=verbose)
		return cls("spinner" if sys.stderr.isatty() else "plain", verbose=verbose)

	# output -------------------------------------------------------------------------------

	def _clear(self) -> None:
		if self._shown:
			self.stream.write("\r\x1b[K")
			self._shown = False

	def line(self, text: str) -> None:
		"""A lasting line (above the spinner); in JSON mode a ``message`` event."""
		if self.mode == "json":
			self.emit({"event": "message", "message": text})
			return
		self._clear()
		self.stream.write(f"openmolt: {printable(text)}\n")
		self._draw()

	def emit(self, data: dict[str, Any]) -> None:
		"""One JSON line (JSON mode), a URL's login masked as in the printed result.

		An event shows what the run's result shows (a model's reply, a tool's result, the
		finish's output): read as the result is (`mask_url_logins_deep`), its links kept.
		"""
		from openmolt_core._support.masking import mask_url_logins_deep

		data = mask_url_logins_deep(data)
		self.stream.write(json.dumps(data, default=str, ensure_ascii=False) + "\n")
		self.stream.flush()

	def status(self, text: str) -> None:
		"""What is happening now: the spinner's text, or a plain line."""
		self._live = None
		if self.mode == "plain":
			self.line(text)
			return
		self._status = text
		self._draw()

	def _text(self) -> str:
		if self._live is not None:
			agent, run = self._live
			return f"{run.header(agent)}: {run.activity}"
		return self._status

	def pause(self) -> None:
		"""Stop drawing the spinner (text is being written to the terminal) until `resume`."""
		self._paused = True
		self._clear()
		self.stream.flush()

	def resume(self) -> None:
		"""Draw the spinner again after `pause`."""
		self._paused = False
		self._draw()

	def _draw(self) -> None:
		text = self._text()
		if self.mode == "spinner" and text and not self._paused:
			self.stream.write(f"\r\x1b[K{_FRAMES[self._frame % len(_FRAMES)]} {printable(text)}")
			self._shown = True
		self.stream.flush()

	def done(self) -> None:
		"""Remove the spinner line."""
		self._status = ""
		self._live = None
		self._clear()
		self.stream.flush()

	async def spin(self) -> None:
		"""Animate the spinner until cancelled (only in spinner mode); the clock keeps ticking."""
		if self.mode != "spinner":
			return
		while True:
			await anyio.sleep(0.1)
			self._frame += 1
			self._draw()

	# agent events -------------------------------------------------------------------------

	def attach(self, agent: Any) -> None:
		"""Listen to the events of an agent that progress shows.

		As JSON lines: every event but the previews and `JSON_LEFT_OUT`, the agent's
		capabilities' own among them; else those a person's progress says something of.
		"""
		self._max_steps[agent.name] = getattr(agent, "max_steps", 0) or 0
		names: Any = _LINES
		if self.mode == "json":
			own = {n for c in agent.capabilities for n in type(c).events}
			names = sorted((EVENT_NAMES | own) - STREAM_EVENTS - set(JSON_LEFT_OUT))
		for name in names:
			agent.on(name, self.event)

	def start(self, agent: str, max_steps: int) -> None:
		"""A run of ``agent`` starts: the spinner shows its step, time, tokens and cost."""
		run = _Run(max_steps=max_steps)
		self._runs[agent] = run
		self._show(agent, run, "asking the model")

	def _run(self, agent: str) -> _Run:
		run = self._runs.get(agent)
		if run is None:
			run = self._runs[agent] = _Run(max_steps=self._max_steps.get(agent, 0))
		return run

	def _show(
		self,
		agent: str,
		run: _Run,
		activity: str,
		*,
		keep: str | None = None,
		header: str | None = None,
	) -> None:
		run.activity = activity
		if keep is not None and (self.verbose or self.mode == "plain"):
			self.line(f"{header or run.header(agent)}: {keep}")
		if self.mode == "plain":
			return
		self._live = (agent, run)
		self._draw()

	def _step_done(self, agent: str, run: _Run) -> None:
		run.pending = max(run.pending - 1, 0)
		if run.pending == 0:  # the step's commands ran: the next model call is under way
			run.step += 1
			run.activity = "asking the model"

	def event(self, event: Any) -> None:
		"""Report one event."""
		name = event.name
		if self.mode == "json":
			if name in JSON_LEFT_OUT:
				return
			data = {"event": name}
			data.update(to_json(event))
			data.pop("name", None)
			if name == "llmOutput":
				data.pop("raw", None)
			elif name == "error" and isinstance(data.get("message"), str):
				data["message"] = self.voice(data["message"])
			elif name == "model:fallback" and isinstance(data.get("error"), str):
				data["error"] = self.voice(data["error"])
			self.emit(data)
			return
		agent = event.agent
		run = self._run(agent)
		step = f"step {event.step}"
		if name == "llmOutput":
			run.step = event.step
			usage = event.usage
			run.tokens += usage.total_tokens
			if usage.cost_usd is not None:
				run.cost = (run.cost or 0.0) + usage.cost_usd
			self._show(
				agent,
				run,
				"running the model's commands",
				keep=f"the model replied ({usage.input_tokens:,} in, {usage.output_tokens:,} out, "
				f"{usage.cached_tokens:,} cached tokens)",
			)
		elif name == "commandsQueued":
			kinds = [c.get("type") for c in event.commands]
			run.pending = sum(1 for k in kinds if k in _REPORTED)
			if self.verbose:
				self.line(f"{agent} {step}: commands: {', '.join(str(k) for k in kinds)}")
			if run.pending == 0 and "finish" not in kinds:
				self._step_done(agent, run)
				self._show(agent, run, run.activity)
		elif name == "tool:call":
			self._show(agent, run, f"calling {event.tool}")
		elif name == "tool:response":
			state = "failed" if event.error else "ok"
			header = run.header(agent)  # the step that called it, before the next one is counted
			self._step_done(agent, run)
			self._show(
				agent,
				run,
				run.activity,
				keep=f"{event.tool} {state} ({event.duration * 1000:.0f} ms)",
				header=header,
			)
		elif name == "planUpdate":
			plan = ", ".join(
				f"[{_MARKS.get(s.get('status'), ' ')}] {s.get('name')}" for s in event.plan
			)
			self._step_done(agent, run)
			self.line(f"{step}: plan: {plan}")
			self._show(agent, run, run.activity)
		elif name == "memoryUpdate":
			header = run.header(agent)
			self._step_done(agent, run)
			self._show(
				agent,
				run,
				run.activity,
				keep=f"{event.memory} memory updated ({event.mode})",
				header=header,
			)
		elif name == "humanInput":
			self._step_done(agent, run)
			self.line(f"{step}: asked {event.message!r}")
			self._show(agent, run, run.activity)
		elif name == "approval:decision":
			why = f": {event.reason}" if event.reason else ""
			self.line(f"{event.agent} {step}: {event.tool} {event.action}{why}")
		elif name == "guardrail":
			# A refusal is always said: the model is asked again, and may be until max_steps.
			if event.action == "refuse" or self.verbose:
				self.line(f"{agent} {step}: {guardrail_line(event)}")
		elif name == "model:fallback":
			# Always said: the run goes on, but on another model than the file names first.
			status = f" {event.status_code}" if event.status_code else ""
			self.line(
				f"{agent} {step}: {event.from_model} failed ({event.reason}{status}: "
				f"{_bounded(self.voice(event.error))}); trying {event.to_model}"
			)
		elif name == "error":
			self.errors_shown.add(event.message)
			self.line(f"{step}: {event.kind}: {_bounded(self.voice(event.message))}")
		elif name == "finish":
			result = event.result
			self._runs.pop(agent, None)
			self.done()
			from openmolt_core._support.words import money

			said = money(result.usage.cost_usd, result.usage.unpriced_calls)
			cost = f", {said}" if said is not None else ""
			self.line(
				f"{agent} finished: {result.status} after {quantity(result.steps, 'step')}, "
				f"{quantity(result.usage.total_tokens, 'token')}{cost}, "
				f"{time.monotonic() - run.started:.1f} s"
			)
		elif name == "schedule:run":
			self.start(agent, run.max_steps)
			if self.mode == "plain":
				self.line(f"{agent}: scheduled run {event.schedule_id} started")
		elif name == "schedule:skip":
			self.line(f"schedule {event.schedule_id}: skipped: {event.record.note}")


_VERBS = {"refuse": "refused", "trip": "stopped the run on", "rewrite": "rewrote"}


def _bounded(text: str) -> str:
	"""An error for a progress line: its first lines, bounded (`excerpt`); --json has it whole."""
	return excerpt(text, lines=8, total=1_000, whole="--json shows it whole")


_WORDS = {"message": "the question", "humanMessage": "the message for people"}


def guardrail_line(event: Any) -> str:
	"""What a guardrail did, in the CLI's words (a ``guardrail`` event).

	``guardrail 'max_size' refused the answer (the output is 25013 characters, more than the
	20000 allowed); the model is asked to fix it``.

	Args:
		event: The `openmolt_core.capabilities.safety.GuardrailEvent`.
	"""
	tool = event.tool
	what = {
		"input": "the input",
		"tool_call": f"the call of {tool}" if tool else "a tool call",
		"tool_result": f"the result of {tool}" if tool else "a tool result",
		"output": "the answer",
	}.get(event.stage, event.stage)
	field = getattr(event, "field", "")  # words for a person an output guardrail judged
	if field == "reason":
		what = f"the reason of the call of {tool}" if tool else "a call's reason"
	elif field == "error":  # a failed call's error, judged by the result guardrails
		what = f"the error of {tool}" if tool else "a call's error"
	elif field in _WORDS:
		what = _WORDS[field]
	verb = _VERBS.get(event.action, event.action)
	why = f" ({event.reason})" if event.reason else ""
	then = ""
	if event.action == "refuse":
		then = (
			"; the model is asked to fix it" if event.stage == "output" else "; the model is told"
		)
	return f"guardrail {event.guardrail!r} {verb} {what}{why}{then}"


_ACTIVE: Progress | None = None


def active() -> Progress | None:
	"""The progress reporter a terminal prompt pauses while it asks, if any."""
	return _ACTIVE


def set_active(progress: Progress | None) -> None:
	"""The progress reporter the terminal prompt pauses while it asks."""
	global _ACTIVE
	_ACTIVE = progress


async def ask_on_terminal(question: str) -> str:
	"""Ask a person on the terminal; use as ``on_human_input_request`` in a Python agent file.

	The question goes to stderr and the answer is read from stdin.

	Raises:
		HumanInputUnavailable: stdin is not a terminal, or it was closed; the run then ends
			with status ``human_input_required``.
	"""
	if not sys.stdin or not sys.stdin.isatty():
		raise HumanInputUnavailable(f"no terminal to ask: {question}")
	if _ACTIVE is not None:
		_ACTIVE.done()
	sys.stderr.write(f"\n{printable(question)}\n> ")
	sys.stderr.flush()
	answer: str = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
	if not answer:
		raise HumanInputUnavailable(f"stdin closed before an answer to: {question}")
	return answer.rstrip("\n")
