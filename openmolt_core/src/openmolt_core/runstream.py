"""``agent.stream()``: a run whose events arrive as they happen, the model's text included.

```python
async with agent.stream("Summarise the open issues") as run:
	async for event in run:
		if event.name == "text:delta" and event.field == "humanMessage":
			print(event.text, end="", flush=True)
	result = await run.result()  # the same RunResult as agent.run()
```

The run starts when the block is entered, in a task the block owns (leaving early cancels it);
the iterator yields every event of the run and of its sub-agents' runs until it ends; unread
events wait in memory, so a caller that stops reading still gets its result
(docs/guides/streaming.md).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from openmolt_core.errors import ConfigurationError
from openmolt_core.events import EVENT_NAMES, Event
from openmolt_core.result import RunResult, RunState

if TYPE_CHECKING:
	from anyio.abc import TaskGroup
	from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

	from openmolt_core.conversation import Session
	from openmolt_core.events import Handler
	from openmolt_core.llm import Attachment

__all__ = ["RunStream", "StreamableAgent"]

log = logging.getLogger("openmolt")


class StreamableAgent(Protocol):
	"""What a `RunStream` needs of an agent: its ``run`` and its event handlers."""

	def on(self, event: str, handler: Handler) -> None:
		"""Add an event handler."""
		...

	def off(self, event: str, handler: Handler | None = None) -> None:
		"""Remove an event handler."""
		...

	async def run(
		self,
		input: Any = None,
		*,
		history: RunState | Mapping[str, Any] | None = None,
		attachments: Sequence[Attachment] = (),
		session: Session | None = None,
		user: str | None = None,
	) -> RunResult:
		"""Run the agent."""
		...


class RunStream:
	"""One streamed run: enter it with ``async with``, iterate its events, await its result.

	Args:
		agent: The agent to run.
		input: The task input (as for ``agent.run``).
		history: A saved run to go on from (as for ``agent.run``).
		attachments: Images or PDFs sent with the first turn.
		session: The conversation the run continues (as for ``agent.run``).
		user: The end user the run acts for (as for ``agent.run``).

	Raises:
		ConfigurationError: ``history`` is no saved run.
	"""

	def __init__(
		self,
		agent: StreamableAgent,
		input: Any = None,
		*,
		history: RunState | Mapping[str, Any] | None = None,
		attachments: Sequence[Attachment] = (),
		session: Session | None = None,
		user: str | None = None,
	) -> None:
		self._agent = agent
		self._input = input
		if history is None:
			state = RunState()  # a fresh state, so the run's id is known before it starts
		elif isinstance(history, RunState):
			state = history
		else:
			try:
				state = RunState.from_dict(dict(history))
			except ValueError as exc:
				raise ConfigurationError(f"stream(history=...): {exc}") from exc
		self._state = state
		self._attachments = tuple(attachments)
		self._session = session
		self._user = user
		self._send: MemoryObjectSendStream[Event]
		self._receive: MemoryObjectReceiveStream[Event]
		self._send, self._receive = anyio.create_memory_object_stream[Event](math.inf)
		self._done = anyio.Event()
		self._result: RunResult | None = None
		self._error: BaseException | None = None
		self._group: TaskGroup | None = None
		self._entered = False

	@property
	def run_id(self) -> str:
		"""The id of the streamed run (its events carry it; a sub-agent's start with it)."""
		return self._state.run_id

	def _deliver(self, event: Event) -> None:
		run_id = event.run_id
		mine = self._state.run_id
		if run_id == mine or run_id.startswith(mine + "."):
			self._send.send_nowait(event)

	async def __aenter__(self) -> RunStream:
		if self._entered:
			raise RuntimeError("a RunStream runs once; call agent.stream() again for a new run")
		self._entered = True
		for name in EVENT_NAMES:
			self._agent.on(name, self._deliver)
		self._group = anyio.create_task_group()
		await self._group.__aenter__()
		self._group.start_soon(self._drive)
		return self

	async def _drive(self) -> None:
		try:
			self._result = await self._agent.run(
				self._input,
				history=self._state,
				attachments=self._attachments,
				session=self._session,
				user=self._user,
			)
		except Exception as exc:  # kept for result(); cancellation passes through
			self._error = exc
		finally:
			self._done.set()
			self._send.close()

	async def __aexit__(
		self,
		exc_type: type[BaseException] | None,
		exc: BaseException | None,
		tb: TracebackType | None,
	) -> bool | None:
		group = self._group
		try:
			if group is not None:
				if not self._done.is_set() and not isinstance(exc, anyio.get_cancelled_exc_class()):
					await self._cancel_kept()
				group.cancel_scope.cancel()  # a run still going when the block ends stops
				return await group.__aexit__(exc_type, exc, tb)
			return None
		finally:
			for name in EVENT_NAMES:
				self._agent.off(name, self._deliver)
			self._receive.close()

	async def _cancel_kept(self) -> None:
		"""Cancel the run where a durability backend keeps it (its workflow is not this task's).

		A block cancelled from outside (the application stopping) leaves it to recover, as a
		crash would.
		"""
		om = getattr(self._agent, "om", None)
		backend = getattr(om, "durability", None)
		if backend is None:
			return
		with anyio.CancelScope(shield=True):
			try:
				await backend.cancel(self._state.run_id)
			except Exception:  # it ended a moment ago, or was never recorded: nothing goes on
				log.debug("stream: run %s not cancelled in its store", self._state.run_id)

	def __aiter__(self) -> RunStream:
		return self

	async def __anext__(self) -> Event:
		if not self._entered:
			raise RuntimeError("use `async with agent.stream(...) as run:` before iterating")
		try:
			return await self._receive.receive()
		except anyio.EndOfStream:
			raise StopAsyncIteration from None

	async def result(self) -> RunResult:
		"""Wait for the run to end and return its result, as ``agent.run()`` does.

		Events not read yet stay readable after this.

		Raises:
			RunError: As ``agent.run()`` raises.
			ConfigurationError: As ``agent.run()`` raises.
			RuntimeError: The run was cancelled (the block was left before it ended).
		"""
		if not self._entered:
			raise RuntimeError("use `async with agent.stream(...) as run:` before result()")
		await self._done.wait()
		if self._error is not None:
			raise self._error
		if self._result is None:
			raise RuntimeError(
				"the run was cancelled before it ended (its `async with` block was left, or the "
				"task was cancelled); agent.last_state holds where it stopped"
			)
		return self._result
