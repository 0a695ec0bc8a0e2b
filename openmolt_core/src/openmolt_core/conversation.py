"""The session contract: the store of a conversation, and a run's part in one.

A run with ``session=...`` (`Agent.run`, `Agent.stream`, `Agent.resume`) meets its conversation
through a `RunConversation`, made for that run by the instance (`OpenMolt.conversation`): opened
before a new run's first turn (the earlier turns, the session's short-term memory, the taint they
carry), closed when the run ends, parks or fails with a result (the turn appended). The loop knows
only these types; `openmolt_core.sessions` implements them, with the stores, and re-exports
`Session` and `SessionHistory`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
	from openmolt_core.result import RunResult, RunState

__all__ = ["RunConversation", "Session", "SessionHistory"]


@runtime_checkable
class Session(Protocol):
	"""The store of one conversation: what a third party implements to keep sessions elsewhere.

	Items are JSON-serializable dicts with a ``role`` (see `openmolt_core.sessions`); the store
	keeps them in the order they were added and never rewrites one.
	"""

	session_id: str
	"""The conversation's id, chosen by the application."""

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		"""The items, oldest first; with ``limit``, only the latest ``limit`` of them."""
		...

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		"""Append items at the end, in order."""
		...

	async def pop_item(self) -> dict[str, Any] | None:
		"""Remove and return the latest item (None when the session is empty)."""
		...

	async def clear(self) -> None:
		"""Remove every item of the session."""
		...


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

	Made per run (a session belongs to a run, not to an agent); the loop calls `open` once for a
	new run, never for a resumed one, and `close` once when the run returns, parks, or fails with
	a result.
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
