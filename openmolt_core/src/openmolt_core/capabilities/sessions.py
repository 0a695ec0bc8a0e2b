"""Sessions as a feature: a run's turn in a conversation, around the kernel's start and drive.

``agent.run(input, session=...)`` and ``agent.resume(state, ..., session=...)`` pass the session
through to the agent's `SessionRuns` (the assembly gives each agent one, made on its first run
with a session). It checks the session and the state a run starts from, opens the run's part in
the conversation (``om.conversation``: `openmolt_core.sessions.SessionRun`, or an instance's own
`openmolt_core.conversation.RunConversation`), and closes it with the run's result, or with the
result of a `openmolt_core.errors.RunError`, whatever way the drive ends. While a run of the
session is driven, its short-term memory is the session's: the agent's ``short_term`` update
callback is not called (`SessionRuns.memory`). Nothing of it is journaled: a durable run's
workflow is driven inside the turn, and the session store keeps the turns.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ConfigurationError, RunError

if TYPE_CHECKING:
	from openmolt_core._execute import MemoryConfig
	from openmolt_core.agent import Agent
	from openmolt_core.conversation import RunConversation, Session, SessionHistory
	from openmolt_core.options import AgentMemory
	from openmolt_core.result import RunResult, RunState

__all__ = ["SESSION_KEY", "SessionRuns", "SessionTurn", "fresh_state", "in_session"]


class SessionRuns:
	"""One agent's runs in sessions: the turns it drives, and whose short-term memory they use.

	Args:
		agent: The agent whose runs they are.
		conversation: Makes a run's part in a session (``OpenMolt.conversation``).
	"""

	__slots__ = ("_agent", "_conversation", "_runs")

	def __init__(
		self, agent: Agent, conversation: Callable[[Agent, Session], RunConversation]
	) -> None:
		self._agent = agent
		self._conversation = conversation
		self._runs: set[str] = set()  # the session runs this process drives now

	def __repr__(self) -> str:
		return f"SessionRuns({self._agent.name!r}, driving={len(self._runs)})"

	async def run(
		self,
		session: Any,
		state: RunState,
		asked: Any,
		start: Callable[[SessionHistory], Awaitable[RunResult]],
	) -> RunResult:
		"""A new run of ``session``: read the conversation, start and drive the run, add its turn.

		Args:
			session: What ``run(session=...)`` was given.
			state: What ``run(history=...)`` was given, loaded (a new `RunState` when nothing).
			asked: The run's input.
			start: Builds the first turn with the earlier turns, and returns the drive.

		Raises:
			ConfigurationError: ``session`` is no session, or ``state`` holds messages.
			RunError: As the run raised it, once its turn is appended.
		"""
		turn = self._turn(session, fresh_state(session, state))
		past = await turn.open()
		return await turn.drive(asked, start(past))

	async def resume(
		self, session: Any, state: RunState, asked: Any, drive: Awaitable[RunResult]
	) -> RunResult:
		"""A parked run of ``session`` goes on: drive it, then append its turn.

		Args:
			session: The conversation's store.
			state: The run's state.
			asked: The answer that resumed it; None for no user turn.
			drive: The run's drive, not yet awaited.

		Raises:
			RunError: As the run raised it, once its turn is appended.
		"""
		try:
			turn = self._turn(session, state)
		except BaseException:
			close = getattr(drive, "close", None)  # a coroutine never started: not left pending
			if close is not None:
				close()
			raise
		return await turn.drive(asked, drive)

	def _turn(self, session: Any, state: RunState) -> SessionTurn:
		# Made before the conversation is opened: whether the state is tainted now says whether
		# someone untrusted wrote what the run is asked.
		conversation = self._conversation(self._agent, session)
		return SessionTurn(self, conversation, state, state.tainted)

	def memory(
		self, state: RunState, memory: AgentMemory | MemoryConfig
	) -> AgentMemory | MemoryConfig:
		"""The agent's memory option as a run uses it: without ``short_term`` in a session's run.

		A session's run says so in its state (`SESSION_KEY`), so a process that goes on with it
		without the session (a durable worker recovering it) keeps its notes from the agent's
		callback too.

		Args:
			state: The run's state.
			memory: The agent's memory option (its data and update callbacks).
		"""
		if not in_session(state):
			return memory
		from openmolt_core.options import AgentMemory, parse_options

		parsed = parse_options(AgentMemory, memory, "memory")
		return parsed.model_copy(update={"short_term": None})


class SessionTurn:
	"""A run's turn in a session: opened before a new run's first turn, closed when it returns.

	Args:
		runs: The agent's session runs.
		conversation: The run's part in the conversation.
		state: The run's state.
		asked_tainted: Whether someone untrusted wrote what the run is asked.
	"""

	__slots__ = ("_asked_tainted", "_conversation", "_runs", "_state")

	def __init__(
		self,
		runs: SessionRuns,
		conversation: RunConversation,
		state: RunState,
		asked_tainted: bool,
	) -> None:
		self._runs = runs
		self._conversation = conversation
		self._state = state
		self._asked_tainted = asked_tainted

	async def open(self) -> SessionHistory:
		"""Read the conversation for a new run: the earlier turns and the short-term memory."""
		return await self._conversation.open(self._state)

	async def drive(self, asked: Any, run: Awaitable[RunResult]) -> RunResult:
		"""Drive the run, then append its turn (also for a `RunError` that carries a result).

		Args:
			asked: The run's input, or the answer that resumed it; None for no user turn.
			run: The run's drive, not yet awaited.

		Raises:
			RunError: As the run raised it, once its turn is appended.
		"""
		state = self._state
		close = functools.partial(
			self._conversation.close,
			asked=asked,
			asked_tainted=self._asked_tainted,
			memory_before=state.memory.get("shortTerm") or "",  # as the run starts or resumes
		)
		driving = self._runs._runs
		driving.add(state.run_id)
		state.ext[SESSION_KEY] = True  # saved with the run: its notes are its session's
		try:
			result = await run
		except RunError as exc:
			if exc.result is not None:
				await close(exc.result)
			raise
		finally:
			driving.discard(state.run_id)
		await close(result)
		return result


SESSION_KEY = "session"
"""``RunState.ext`` key marking a run of a session (its short-term memory is the session's)."""


def in_session(state: RunState) -> bool:
	"""Whether a run belongs to a session (marked as it is driven in one).

	Args:
		state: The run's state.
	"""
	return bool(state.ext.get(SESSION_KEY))


def fresh_state(session: Any, state: RunState) -> RunState:
	"""The fresh state a session run starts from (a given one fixes its run id and taint).

	Args:
		session: What ``run(session=...)`` was given.
		state: What ``run(history=...)`` was given, loaded (a new `RunState` when nothing).

	Raises:
		ConfigurationError: ``session`` is no session, or ``state`` holds messages.
	"""
	from openmolt_core.conversation import Session

	if not isinstance(session, Session):
		raise ConfigurationError(
			f"run(session=...): expected a Session (InMemorySession, SQLiteSession, or an object "
			f"with session_id, get_items, add_items, pop_item and clear), got "
			f"{type(session).__name__}"
		)
	if state.messages:
		raise ConfigurationError(
			"run(session=...): history must be a fresh state (no messages); to go on with a "
			"parked run of the session, call resume(state, answer=..., session=session)"
		)
	return state
