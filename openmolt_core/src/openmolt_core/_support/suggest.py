"""Nearest-name hints for error messages: the closest names first, never a wall of them."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["nearest", "suggestion"]


def nearest(name: str, candidates: Iterable[str], *, n: int = 3) -> list[str]:
	"""The candidates closest to ``name``, best first (case-insensitive, at most ``n``).

	A candidate that contains the name, or is contained in it, counts as close even when
	difflib's ratio is low (``send`` for ``slack.sendMessage``).

	Args:
		name: What was written.
		candidates: The names that exist.
		n: How many to return at most.
	"""
	pool = list(dict.fromkeys(candidates))
	lowered = {c.lower(): c for c in pool}
	key = name.lower()
	close = difflib.get_close_matches(key, list(lowered), n=n, cutoff=0.6)
	out = [lowered[c] for c in close]
	if len(out) < n and len(key) >= 3:
		for low, original in lowered.items():
			if original not in out and (key in low or low.split(".")[-1] in key):
				out.append(original)
				if len(out) == n:
					break
	return out


def suggestion(name: str, candidates: Iterable[str], *, noun: str, n: int = 3) -> str:
	"""A short hint: ``did you mean 'a' or 'b'?`` plus how many exist, or what exists when few.

	Args:
		name: What was written.
		candidates: The names that exist.
		noun: What the names are, plural (``tools``, ``fields``).
		n: How many close names to offer at most.
	"""
	pool = list(dict.fromkeys(candidates))
	if not pool:
		return f"there are no {noun}"
	if len(pool) <= 8:
		close = nearest(name, pool, n=1)
		hint = f"did you mean {close[0]!r}? " if close else ""
		return f"{hint}use one of: {', '.join(pool)}"
	close = nearest(name, pool, n=n)
	if not close:
		return f"none of the {len(pool)} {noun} has a similar name"
	names = " or ".join(repr(c) for c in close)
	rest = len(pool) - len(close)
	return f"did you mean {names}?" + (f" ({rest} other {noun})" if rest > 0 else "")
