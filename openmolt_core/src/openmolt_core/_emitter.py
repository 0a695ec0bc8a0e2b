"""The event names and the emitter behind ``agent.on`` / ``agent.off``; the events are elsewhere.

Every agent has an `EventEmitter`, but an event is built only when a handler listens to its name
(``ctx.wants``). The event classes (`openmolt_core.events`) are therefore loaded by the first
event a run builds, not by every run: a run nobody listens to never defines them (dataclass
definitions are most of what the kernel's import costs). `openmolt_core.events` re-exports
everything here; that is the public home.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ["EVENT_NAMES", "STREAM_EVENTS", "EventEmitter", "EventName", "EventSink", "Handler"]

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

Handler = Callable[[Any], Awaitable[None] | None]
"""An event handler: takes the event, may be async."""


class EventSink(Protocol):
	"""Where an agent's events emitted outside a drive of a run go besides its handlers.

	The instance's run observers (`openmolt_core.capabilities.ObservedOutside`): a schedule's fires and
	skips, a stranded durable run. A drive of a run routes its events to the observers itself.
	"""

	def listening(self) -> bool:
		"""Whether anything hears the events (so emitters can skip building them)."""
		...

	async def __call__(self, event: Any) -> None:
		"""Hand on an event (masked by the sink, as a run's events are)."""
		...


@dataclass(slots=True)
class EventEmitter:
	"""Keeps handlers per event name and calls them, sync or async, without letting them fail a run."""

	handlers: dict[str, list[Handler]] | None = None  # made on the first `on`: agents are many
	extra: frozenset[str] = frozenset()
	"""Event names accepted beyond the built-in ones (those the agent's capabilities register)."""
	outside: EventSink | None = None
	"""Where `emit` also hands every event (the instance's observers); a drive of a run, which
	tells the observers itself, delivers to the handlers only (`deliver`)."""
	logins: Any = None
	"""The ``text:delta`` words held while they may be a URL's login (`_support.loginholds`)."""

	def on(self, name: str, handler: Handler) -> None:
		"""Add a handler for an event name.

		Raises:
			ValueError: The event name is unknown.
		"""
		if name not in EVENT_NAMES and name not in self.extra:
			from openmolt_core._support.suggest import typo_of

			known = EVENT_NAMES | self.extra
			close = typo_of(name, known) if isinstance(name, str) else None
			hint = f"did you mean {close!r}? " if close else ""
			raise ValueError(
				f"unknown event {name!r}; {hint}use one of: {', '.join(sorted(known))}"
			)
		if not callable(handler):
			raise TypeError(
				f"on({name!r}, ...): the handler must be a function (sync or async) taking the "
				f"event, got {type(handler).__name__}"
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
		if self.handlers and self.handlers.get(name):
			return True
		# The observers never get the streaming previews: they alone must not turn streaming on.
		outside = self.outside
		return outside is not None and name not in STREAM_EVENTS and outside.listening()

	async def emit(self, event: Any) -> None:
		"""Deliver the event to the handlers (`deliver`), then to the `outside` sink if any.

		Anything that emits on an agent's emitter outside a drive of a run (a scheduler, a
		durable worker) reaches the instance's observers this way, as a run's events do.
		"""
		await self.deliver(event)
		outside = self.outside
		if outside is not None and event.name not in STREAM_EVENTS and outside.listening():
			try:
				await outside(event)
			except Exception:
				log.exception("the observers of event %r failed; going on", event.name)

	async def deliver(self, event: Any) -> None:
		"""Call every handler of the event in order; a failing handler is logged and skipped.

		``event`` is an `openmolt_core.events.Event` (typed loosely here: this module is below
		the one that defines the events, which loads only with the first event).

		Unlike the loop's other callbacks, a sync handler runs on the event loop itself: it is a
		notification, and it may touch the loop's objects (``anyio.Event().set()``, a memory
		stream), which a worker thread could not. It must be quick; a slow one should be async
		(awaited, and interrupted by the time budget) or hand its work to a thread itself.
		"""
		handlers = tuple(self.handlers.get(event.name, ()) if self.handlers else ())
		# A URL's login split across two deltas is held, with or without a listener now: one
		# added while a field streams gets the login whole, never its second half alone.
		if event.name == "text:delta":
			from openmolt_core._support.loginholds import LoginHolds

			self.logins = self.logins or LoginHolds()
			if (event := self.logins.release(event)) is None:
				return
		if handlers:  # every event, whatever its name: a URL's secrets no source knows masked
			from openmolt_core._support.masking import mask_url_fields

			mask_url_fields(event, logins=event.name == "text:delta")  # a person's: links work
		for handler in handlers:
			try:
				result = handler(event)
				if inspect.isawaitable(result):
					await result
			except Exception:
				log.exception("event handler for %r failed; the run goes on", event.name)
