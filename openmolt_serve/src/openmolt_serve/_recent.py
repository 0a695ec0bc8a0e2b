"""A server's per-conversation entries, kept by the id a caller chooses, at most so many.

An AG-UI thread, a chat of a channel, an in-memory session: each is made on its first request and
kept by an id the caller chooses, so each kind is bounded: past its most, the least recently used
entry that is not busy is forgotten. Where entries have owners (callers, end users), the one
forgotten is the oldest of the owner holding the most (`crowded`): a caller who fills the bound
pushes out its own entries, never another caller's waiting one. Where something may wait in an
entry (a parked run), one where nothing waits goes first (``waits``): many owners of one entry
each (a chat open to everyone) push out each other's, not a waiting one.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

__all__ = ["crowded", "recent"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def recent(
	kept: OrderedDict[K, T],
	key: K,
	make: Callable[[], T],
	*,
	most: int,
	busy: Callable[[T], bool] = lambda entry: False,
	owner: Callable[[K], Hashable] | None = None,
	waits: Callable[[T], bool] | None = None,
) -> T:
	"""The entry of ``key`` (made if missing), now the most recent; past ``most`` an idle one goes.

	Args:
		kept: The entries, least recently used first.
		key: The id.
		make: Makes a missing entry.
		most: The most entries kept.
		busy: Whether an entry is in use (a request holds its lock): it is not forgotten.
		owner: Whose entry a key is (None: all one owner's): the idle entry forgotten is the
			oldest of the owner holding the most (`crowded`).
		waits: Whether something waits in an entry (a parked run, a question): such an entry
			goes only when every other idle one is waiting too. Many owners of one entry each
			(a chat channel open to everyone) then push out each other's, not a waiting one.
	"""
	entry = kept.get(key)
	if entry is None:
		entry = kept[key] = make()
	kept.move_to_end(key)
	if len(kept) > most:
		idle = None
		if waits is not None:  # what nothing waits in goes first, whoever holds the most
			idle = _forgotten(kept, key, owner, lambda e: busy(e) or waits(e))
		if idle is None:
			idle = _forgotten(kept, key, owner, busy)
		if idle is not None:
			del kept[idle]
	return entry


def _forgotten(
	kept: OrderedDict[K, T],
	key: K,
	owner: Callable[[K], Hashable] | None,
	spare: Callable[[T], bool],
) -> K | None:
	"""The entry `recent` forgets among those not spared (nor ``key``, just used), or None."""
	if owner is None:  # the least recent one, found without counting
		return next((k for k, e in kept.items() if k != key and not spare(e)), None)
	return crowded(kept, owner, spare=lambda k: k == key or spare(kept[k]))


def crowded(
	keys: Iterable[K],
	owner: Callable[[K], Hashable],
	*,
	spare: Callable[[K], bool] = lambda key: False,
) -> K | None:
	"""The key a bounded store forgets: the oldest of the owner holding the most, or None.

	An owner whose entries are all spared (busy) is passed over for the next largest.

	Args:
		keys: The store's keys, oldest first.
		owner: Whose entry a key is (a caller, an end user).
		spare: Whether a key must stay (in use, the one just added).
	"""
	keys = list(keys)
	owners = [owner(key) for key in keys]
	for who, _ in Counter(owners).most_common():
		for key, whose in zip(keys, owners, strict=True):
			if whose == who and not spare(key):
				return key
	return None
