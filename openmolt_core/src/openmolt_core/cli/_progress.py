"""Progress on stderr: a spinner on a terminal, plain lines otherwise, JSON lines with ``--json``.

stdout is kept for results, so a pipeline can read them while a person watches stderr.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import datetime
from typing import IO, Any, Literal

import anyio

from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.commands import PLAN_STATUSES

__all__ = ["Progress", "active", "ask_on_terminal", "to_json"]

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


class Progress:
	"""Reports what agents do.

	Args:
		mode: ``spinner`` (a terminal), ``plain`` or ``json``.
		stream: Where to write (stderr).
	"""

	def __init__(self, mode: Mode, stream: IO[str] | None = None) -> None:
		self.mode = mode
		self.stream = stream or sys.stderr
		self._status = ""
		self._frame = 0
		self._shown = False

	@classmethod
	def for_terminal(cls, *, json_events: bool) -> Progress:
		"""JSON lines when asked, a spinner when stderr is a terminal, else plain lines."""
		if json_events:
			return cls("json")
		return cls("spinner" if sys.stderr.isatty() else "plain")

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
		self.stream.write(f"openmolt: {text}\n")
		self._draw()

	def emit(self, data: dict[str, Any]) -> None:
		"""One JSON line (JSON mode)."""
		self.stream.write(json.dumps(data, default=str, ensure_ascii=False) + "\n")
		self.stream.flush()

	def status(self, text: str) -> None:
		"""What is happening now: the spinner's text, or a plain line."""
		if self.mode == "plain":
			self.line(text)
			return
		self._status = text
		self._draw()

	def _draw(self) -> None:
		if self.mode == "spinner" and self._status:
			self.stream.write(f"\r\x1b[K{_FRAMES[self._frame % len(_FRAMES)]} {self._status}")
			self._shown = True
		self.stream.flush()

	def done(self) -> None:
		"""Remove the spinner line."""
		self._status = ""
		self._clear()
		self.stream.flush()

	async def spin(self) -> None:
		"""Animate the spinner until cancelled (only in spinner mode)."""
		if self.mode != "spinner":
			return
		while True:
			await anyio.sleep(0.1)
			self._frame += 1
			self._draw()

	# agent events -------------------------------------------------------------------------

	def attach(self, agent: Any) -> None:
		"""Listen to every event of an agent."""
		for name in (
			"llmOutput",
			"tool:call",
			"tool:response",
			"planUpdate",
			"memoryUpdate",
			"humanInput",
			"approval:decision",
			"error",
			"finish",
			"schedule:run",
			"schedule:skip",
		):
			agent.on(name, self.event)

	def event(self, event: Any) -> None:
		"""Report one event."""
		if self.mode == "json":
			data = {"event": event.name}
			data.update(to_json(event))
			data.pop("name", None)
			if event.name == "llmOutput":
				data.pop("raw", None)
			self.emit(data)
			return
		step = f"step {event.step}"
		name = event.name
		if name == "llmOutput":
			self.status(
				f"{event.agent} {step}: the model replied ({event.usage.total_tokens} tokens)"
			)
		elif name == "tool:call":
			self.status(f"{event.agent} {step}: calling {event.tool}")
		elif name == "tool:response":
			state = "failed" if event.error else "ok"
			self.status(
				f"{event.agent} {step}: {event.tool} {state} ({event.duration * 1000:.0f} ms)"
			)
		elif name == "planUpdate":
			plan = ", ".join(
				f"[{_MARKS.get(s.get('status'), ' ')}] {s.get('name')}" for s in event.plan
			)
			self.line(f"{step}: plan: {plan}")
		elif name == "memoryUpdate":
			self.status(f"{event.agent} {step}: {event.memory} memory updated ({event.mode})")
		elif name == "humanInput":
			self.line(f"{step}: asked {event.message!r}")
		elif name == "approval:decision":
			why = f": {event.reason}" if event.reason else ""
			self.line(f"{event.agent} {step}: {event.tool} {event.action}{why}")
		elif name == "error":
			self.line(f"{step}: {event.kind}: {event.message}")
		elif name == "finish":
			result = event.result
			self.done()
			self.line(
				f"{event.agent} finished: {result.status} after {result.steps} step(s), "
				f"{result.usage.total_tokens} tokens"
			)
		elif name == "schedule:run":
			self.status(f"{event.agent}: scheduled run {event.schedule_id} started")
		elif name == "schedule:skip":
			self.line(f"schedule {event.schedule_id}: skipped: {event.record.note}")


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
	sys.stderr.write(f"\n{question}\n> ")
	sys.stderr.flush()
	answer: str = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
	if not answer:
		raise HumanInputUnavailable(f"stdin closed before an answer to: {question}")
	return answer.rstrip("\n")
