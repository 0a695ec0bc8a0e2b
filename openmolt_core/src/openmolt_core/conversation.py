"""The session contract: the store of a conversation (``agent.run(input, session=...)``).

`Session` is the type ``run``, ``stream`` and ``resume`` take; `openmolt_core.sessions` implements
it (the stores) and re-exports it. A run meets its conversation through the sessions capability
(`openmolt_core.capabilities.sessions`), whose types `SessionHistory` and `RunConversation` keep
their old path here (loaded on first use).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from openmolt_core._support import lazy_exports

__all__ = ["Session"]


@runtime_checkable
class Session(Protocol):
	"""The store of one conversation: what a third party implements to keep sessions elsewhere.

	Items are JSON-serializable dicts with a ``role`` (see `openmolt_core.sessions`); the store
	keeps them in the order they were added and never rewrites one (but a ``pending`` item taken
	back: below).

	A store may also have ``async def replace_pending(run_ids, items)``: take back the
	``pending`` items of these runs and append ``items``, in one transaction (the built-in stores
	do). Durable runs use it to append a turn and take back its item together
	(`openmolt_core.sessions.SessionRun`); without it, a trailing item is taken back first. An
	item that others follow must keep its place (the built-in stores make it
	``{"role": "settled"}``): a summary's ``through`` counts it.

	A store may also have ``async def get_run(run_id) -> items``: one run's items, oldest first,
	wherever they are (the built-in stores do); a turn summarised before its run is recorded
	again is found without reading the whole session.

	A store may also have ``async def get_latest(limit) -> (skipped, items)``: how many items
	come before the latest ``limit`` (items pruned too: a summary's ``through`` counts them), and
	those items, read together (the built-in stores do).
	A run then reads the session from its end, not whole (`openmolt_core.sessions.read_history`).
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


# The sessions capability's types, under their old path (loaded on first use).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(),
	{
		"RunConversation": "openmolt_core.capabilities.sessions",
		"SessionHistory": "openmolt_core.capabilities.sessions",
		"SharedSession": "openmolt_core.capabilities.sessions",
	},
)
