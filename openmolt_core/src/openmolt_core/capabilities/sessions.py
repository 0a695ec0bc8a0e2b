"""Sessions as a capability: a run's turn in a conversation, around the call that drives it.

``agent.run(input, session=...)``, ``agent.stream(..., session=...)`` and
``agent.resume(state, ..., session=...)`` give the keyword `Sessions` takes (`Capability.takes`;
the capability is `openmolt_core.capabilities`', light, on every agent, re-exported here): the
call goes through `session_call`, in the caller's process. It checks the session and the state a
new run starts from, opens the run's part in the conversation (``om.conversation``:
`openmolt_core.sessions.SessionRun`, or an instance's own `RunConversation`), hands the loop what
the run opens with (the earlier turns and the session's short-term memory: an `Opening`), and
closes the part with the run's result, or with the result of a `openmolt_core.errors.RunError`,
whatever way the drive ends.
A session's run says so in its state (`SESSION_KEY`): whichever process drives it, its short-term
memory is the session's, and the agent's ``short_term`` update callback is not called
(`Sessions.memory_option`). Nothing of it is journaled: a durable run's workflow is driven inside
the call, and the session store keeps the turns. Every agent an instance builds has it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import anyio

from openmolt_core._support.userids import refused_session_id
from openmolt_core.capabilities import SESSION_KEY, Sessions, in_session
from openmolt_core.conversation import Session
from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.hooks import Call, CallDrive, Opening

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.result import RunResult, RunState

__all__ = [
	"CLOSE_TIMEOUT",
	"SESSION_KEY",
	"RunConversation",
	"SessionHistory",
	"SessionTurn",
	"Sessions",
	"SharedSession",
	"fresh_state",
	"in_session",
	"not_held",
	"session_call",
	"session_memory",
	"session_turn",
	"turns_here",
]


@runtime_checkable
class SharedSession(Session, Protocol):
	"""A session store that processes share, and that orders the runs of a session across them.

	``SQLiteSession`` and ``SQLAlchemySession`` are: two processes (two ``openmolt serve``
	workers, a CLI and a server) running turns of one session take them one after another, so
	each run reads the turns before it. (`openmolt_core.conversation` re-exports it, its old
	home: the kernel never names it.)
	"""

	def turn(self) -> AbstractAsyncContextManager[None]:
		"""Hold the session while one run of it goes on; another process's run of it waits.

		Taken around each run (after the process's own queue of the session's runs), released
		once the run's turn is appended; a wait for it can be cancelled.
		"""
		...


CLOSE_TIMEOUT = 30.0
"""Seconds the appending of an ended run's turn may take once its caller is cancelled."""


class SessionHistory:
	"""What a session gives a run: the earlier turns, its memory and whether they are tainted.

	Args:
		earlier: The entries of ``"earlier"`` (a summary first, if any), oldest first.
		memory: The session's short-term memory; None when no run of it kept notes yet (the run
			starts from the agent's own ``short_term``).
		tainted: Whether an untrusted person or a tainted run wrote any of them.
		count: How many items the session held when read.
	"""

	__slots__ = ("count", "earlier", "memory", "tainted")

	def __init__(
		self, earlier: list[dict[str, Any]], memory: str | None, tainted: bool, count: int
	) -> None:
		self.earlier = earlier
		self.memory = memory
		self.tainted = tainted
		self.count = count


class RunConversation(Protocol):
	"""One run's part in a conversation: what it reads before its first turn, what it appends.

	Made per run (a session belongs to a run, not to an agent); `Sessions` calls `open` once for a
	new run, never for a resumed one, and `close` once when the run returns, parks, or fails with
	a result. A conversation may also have ``ahead(state, *, asked, asked_tainted)``, awaited
	just before the run is driven (new or resumed): `openmolt_core.sessions.SessionRun` writes
	there that a durable run's turn is under way, so that a turn its caller never appends (the
	run went on in another process) is appended by the session's next run.
	"""

	async def open(self, state: RunState) -> SessionHistory:
		"""Read the conversation for a new run, before its first turn is built.

		Args:
			state: The new run's state (no messages yet); a tainted history taints it.

		Returns:
			The earlier turns the first turn shows, and the session's short-term memory.
		"""
		...

	async def close(
		self, result: RunResult, *, asked: Any, asked_tainted: bool, memory_before: str
	) -> None:
		"""Append the run's turn; a store that fails is logged, never raised (the result stands).

		Args:
			result: The run's result (of a failed run: the error's result).
			asked: The run's input, or the answer that resumed it; None for no user turn.
			asked_tainted: Whether someone untrusted wrote ``asked``.
			memory_before: The run's short-term memory when it started (or resumed).
		"""
		...


async def session_call(
	conversation: Callable[[Agent, Session], RunConversation],
	call: Call,
	drive: CallDrive,
	*,
	turns: dict[str, _Queue],
) -> RunResult:
	"""A call with a session (`Sessions.wrap_call`): the run's turn around its drive.

	A new run: read the conversation, start and drive the run, add its turn. A resumed run:
	drive it, then add its turn. The runs of one session go one after another, whoever calls (an
	A2A context's tasks, an app's concurrent calls; another process, through a store processes
	share: `SharedSession`): each reads the turns of those before it,
	and the turns are appended in the order they were asked.

	Args:
		conversation: Makes the run's part in the session (``OpenMolt.conversation``).
		call: The call: ``given`` is what ``session=`` was given; ``asked`` the run's input, or
			the answer that resumed it.
		drive: Builds a new run's first turn with the earlier turns, and returns the drive.
		turns: The sessions with runs in this process (`turns_here`).

	Raises:
		ConfigurationError: ``session`` is no session, a new run's state holds messages, or a
			resumed run is a turn of another session.
		RunError: As the run raised it, once its turn is appended.
	"""
	agent, session, state = cast("Agent", call.agent), call.given, call.state
	given = str(_session(session).session_id)
	owner = state.ext.get(SESSION_KEY) if call.resumed else None
	if call.resumed and isinstance(owner, str) and owner != given:  # (True: saved before)
		raise ConfigurationError(
			f"resume(session=...): this run is a turn of session {owner!r}, not {given!r}; "
			"resume it with its own session (its turn would go to another conversation)"
		)
	if owner != given and (refused := refused_session_id(given)):
		# A new id comes in at the door (a run parked in the session was let in before the rule:
		# it goes on); the store still opens and clears the rows an older version kept.
		raise ConfigurationError(f"{'resume' if call.resumed else 'run'}: {refused}")
	async with _in_turn(turns, given, session):
		if call.resumed:
			turn = _turn(conversation, agent, session, state)
			return await turn.drive(call.asked, drive(None))
		turn = _turn(conversation, agent, session, fresh_state(session, state))
		past = await turn.open()
		return await turn.drive(call.asked, drive(_opening(past)))


_HERE = threading.local()


def turns_here() -> dict[str, _Queue]:
	"""The sessions with runs in this thread's event loop, by id: every instance's.

	One queue per session for the whole process (per thread: each runs its own loop), not per
	instance: two instances' agents running one session (a store the application shares) take
	turns, and a tool's run of its caller's session through another instance is refused.
	"""
	turns: dict[str, _Queue] | None = getattr(_HERE, "turns", None)
	if turns is None:
		turns = _HERE.turns = {}
	return turns


class _Queue:
	"""The runs of one session in this process: one at a time, the others waiting in order."""

	__slots__ = ("lock", "users")

	def __init__(self) -> None:
		self.lock = anyio.Lock()  # fair: the runs waiting take their turn in order
		self.users = 0


_TURNS: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
	"openmolt_session_turns", default=frozenset()
)
"""The turns the current task holds (an instance's queue, a store's lock), inherited by the tasks
it starts, such as its tool calls': one of them taken again is refused, not left waiting."""


@contextlib.asynccontextmanager
async def not_held(where: str, session_id: str) -> AsyncIterator[None]:
	"""Refuse a turn this call chain already holds, then mark it held while the block runs.

	A tool of a session's run that starts another run of the same session (through this instance
	or another) would wait for its own caller's turn forever.

	Args:
		where: What the turn is held in (a queue, a lock file, a database lock), as one string.
		session_id: The session, for the error.

	Raises:
		ConfigurationError: This call chain holds it already.
	"""
	held = _TURNS.get()
	if where in held:
		raise ConfigurationError(
			f"run(session=...): a run of session {session_id!r} is already under way in this "
			"call chain (a tool of that run started this one), and this run would wait for its "
			"turn forever; give the nested run no session, or another one"
		)
	token = _TURNS.set(held | {where})
	try:
		yield
	finally:
		_TURNS.reset(token)


@contextlib.asynccontextmanager
async def _in_turn(turns: dict[str, _Queue], session_id: str, session: Any) -> AsyncIterator[None]:
	"""Hold the session's turn while the run goes on; forget the session when none waits.

	First in this process's queue of the session's runs, then, for a store that processes share
	(`SharedSession`), in the store: another process's run of the
	session waits too.
	"""
	async with not_held(f"queue {id(turns)} {session_id}", session_id):
		queue = turns.get(session_id)
		if queue is None:
			queue = turns[session_id] = _Queue()
		queue.users += 1
		try:
			async with queue.lock:
				if isinstance(session, SharedSession):
					async with session.turn():
						yield
				else:
					yield
		finally:
			queue.users -= 1
			if not queue.users:
				del turns[session_id]


def session_turn(session: Session) -> contextlib.AbstractAsyncContextManager[None]:
	"""Hold a session's turn as a run of it does: for a writer that appends a turn itself.

	This process's queue of the session's runs, then, for a store processes share
	(`SharedSession`), its lock in the store: a turn appended under
	it cannot interleave with a run of the session (whose ``reconcile`` may append the same
	turn) nor with another process appending it (`openmolt_core.sessions.SessionRun.record`).

	Args:
		session: The session.

	Raises:
		ConfigurationError: This call chain holds the session's turn already.
	"""
	return _in_turn(turns_here(), str(session.session_id), session)


def _turn(
	conversation: Callable[[Agent, Session], RunConversation],
	agent: Agent,
	session: Any,
	state: RunState,
) -> SessionTurn:
	# Made before the conversation is opened: whether the state is tainted now says whether
	# someone untrusted wrote what the run is asked.
	return SessionTurn(conversation(agent, session), state, state.tainted, str(session.session_id))


def session_memory(memory: Any) -> Any:
	"""The agent's memory option as a session's run uses it: without ``short_term``.

	Args:
		memory: The agent's memory option (its data and update callbacks).
	"""
	from openmolt_core.options import AgentMemory, parse_options

	parsed = parse_options(AgentMemory, memory, "memory")
	return parsed.model_copy(update={"short_term": None})


def _opening(past: SessionHistory) -> Opening:
	"""What a new run of a session opens with: the earlier turns, and the session's notes."""
	memory = {} if past.memory is None else {"shortTerm": past.memory}
	return Opening(past.earlier, memory)


class SessionTurn:
	"""A run's turn in a session: opened before a new run's first turn, closed when it returns.

	Args:
		conversation: The run's part in the conversation.
		state: The run's state.
		asked_tainted: Whether someone untrusted wrote what the run is asked.
		session_id: The session's id, saved with the run: it is resumed in that session only.
	"""

	__slots__ = ("_asked_tainted", "_conversation", "_session_id", "_state")

	def __init__(
		self,
		conversation: RunConversation,
		state: RunState,
		asked_tainted: bool,
		session_id: str,
	) -> None:
		self._conversation = conversation
		self._state = state
		self._asked_tainted = asked_tainted
		self._session_id = session_id

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
		state.ext[SESSION_KEY] = self._session_id  # saved with the run: its notes are its session's
		ahead = getattr(self._conversation, "ahead", None)  # a durable run's turn under way
		if ahead is not None:
			await ahead(state, asked=asked, asked_tainted=self._asked_tainted)
		try:
			result = await run
		except RunError as exc:
			if exc.result is not None:
				await _closed(close, exc.result)
			raise
		await _closed(close, result)
		return result


async def _closed(close: Callable[[RunResult], Awaitable[None]], result: RunResult) -> None:
	"""Append an ended run's turn, shielded from its caller's cancellation.

	A caller that leaves now (a stream's block left after the run's ``finish``, a client gone)
	must not lose a turn whose tools already ran. Bounded by `CLOSE_TIMEOUT`, so a store that
	hangs does not keep a cancelled caller forever.
	"""
	with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT) as bound:
		await close(result)
	if bound.cancelled_caught:
		import logging

		logging.getLogger("openmolt").warning(
			"session turn of run %s not appended: the store took more than %s seconds",
			result.state.run_id,
			CLOSE_TIMEOUT,
		)


def _session(session: Any) -> Session:
	"""``session`` as given to ``run`` or ``resume``, checked to be a `Session`."""
	if not isinstance(session, Session):
		raise ConfigurationError(
			f"run(session=...): expected a Session (InMemorySession, SQLiteSession, or an object "
			f"with session_id, get_items, add_items, pop_item and clear), got "
			f"{type(session).__name__}"
		)
	return session


def fresh_state(session: Any, state: RunState) -> RunState:
	"""The fresh state a session run starts from (a given one fixes its run id and taint).

	Args:
		session: What ``run(session=...)`` was given.
		state: What ``run(history=...)`` was given, loaded (a new `RunState` when nothing).

	Raises:
		ConfigurationError: ``session`` is no session, or ``state`` holds messages.
	"""
	_session(session)
	if state.messages:
		raise ConfigurationError(
			"run(session=...): history must be a fresh state (no messages); to go on with a "
			"parked run of the session, call resume(state, answer=..., session=session)"
		)
	return state
