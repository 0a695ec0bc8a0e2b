"""The session contract: the store of a conversation (``agent.run(input, session=...)``).

The stores are `openmolt_core.sessions`'s; the sessions capability's types import from here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from openmolt_core._support import lazy_exports

__all__ = ["Session"]


@runtime_checkable
class Session(Protocol):
	"""The store of one conversation: what a third party implements to keep sessions elsewhere.

	Items are JSON-serializable dicts with a ``role`` (`openmolt_core.sessions`), kept in the
	order they were added and never rewritten (but a ``pending`` item taken back). A store may
	also have, as the built-in ones do: ``async def replace_pending(run_ids, items)`` (take back
	these runs' ``pending`` items and append ``items`` in one transaction; an item others follow
	keeps its place, as ``{"role": "settled"}``), ``async def get_run(run_id) -> items`` (one
	run's items, oldest first) and ``async def get_latest(limit) -> (skipped, items)`` (how many
	items come before the latest ``limit``, pruned ones too, and those items).
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
