"""A server's per-conversation entries, kept by the id a caller chooses, at most so many.

An AG-UI thread, a chat of a channel, an in-memory session: each is made on its first request and
kept by an id the caller chooses, so each kind is bounded: past its most, the least recently used
entry that is not busy is forgotten.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

__all__ = ["recent"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def recent(
	kept: OrderedDict[K, T],
	key: K,
	make: Callable[[], T],
	*,
	most: int,
	busy: Callable[[T], bool] = lambda entry: False,
) -> T:
	"""The entry of ``key`` (made if missing), now the most recent; past ``most`` an idle one goes.

	Args:
		kept: The entries, least recently used first.
		key: The id.
		make: Makes a missing entry.
		most: The most entries kept.
		busy: Whether an entry is in use (a request holds its lock): it is not forgotten.
	"""
	entry = kept.get(key)
	if entry is None:
		entry = kept[key] = make()
	kept.move_to_end(key)
	if len(kept) > most:
		idle = next((k for k, e in kept.items() if not busy(e)), None)
		if idle is not None and idle != key:
			del kept[idle]
	return entry
