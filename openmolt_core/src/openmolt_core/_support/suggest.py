"""Nearest-name hints for error messages: the closest names first, never a wall of them."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["edits", "nearest", "same_act", "suggestion", "typo_of"]

_ACTS = (
	frozenset({"send", "post", "create", "add", "insert", "new", "write", "publish"}),
	frozenset({"get", "read", "fetch", "retrieve", "show", "find", "lookup", "view"}),
	frozenset({"list", "search", "query", "find", "browse", "get"}),
	frozenset({"update", "edit", "modify", "patch", "change", "set", "rename"}),
	frozenset({"delete", "remove", "destroy", "drop"}),
	frozenset({"upload", "put"}),
	frozenset({"download", "get", "export"}),
)
"""Verbs that APIs use for one act: ``sendMessage`` is Slack's ``postMessage``."""

_VERB = re.compile(r"^([a-z]+)(?=[A-Z_]|$)")


def same_act(name: str, candidates: Iterable[str]) -> list[str]:
	"""The candidates that are ``name`` with another verb for the same act, in their order.

	A tool's name starts with a verb that another API says differently: ``slack.sendMessage``
	is ``slack.postMessage``, ``getIssues`` is ``listIssues``, ``removeLabel`` is
	``deleteLabel``. Spelling alone offers ``scheduleMessage``, which does something else.

	Args:
		name: What was written (``slack.sendMessage``, ``sendMessage``).
		candidates: The names that exist.
	"""
	prefix, _, last = name.rpartition(".")
	found = _VERB.match(last)
	if found is None:
		return []
	verb, rest = found[1], last[found.end() :]
	others = {v for group in _ACTS if verb in group for v in group} - {verb}
	if not others:
		return []
	head = f"{prefix}." if prefix else ""
	wanted = {f"{head}{other}{rest}".lower() for other in others}
	acts = [c for c in dict.fromkeys(candidates) if c.lower() in wanted]
	return sorted(acts, key=lambda c: -difflib.SequenceMatcher(None, name, c).ratio())


def nearest(name: str, candidates: Iterable[str], *, n: int = 3) -> list[str]:
	"""The candidates closest to ``name``, best first (case-insensitive, at most ``n``).

	A candidate that is the name with another verb for its act comes first (`same_act`:
	``postMessage`` for ``sendMessage``). A candidate that contains the name, or is contained in
	it, counts as close even when difflib's ratio is low (``send`` for ``slack.sendMessage``).

	Args:
		name: What was written.
		candidates: The names that exist.
		n: How many to return at most.
	"""
	pool = list(dict.fromkeys(candidates))
	lowered = {c.lower(): c for c in pool}
	key = name.lower()
	close = difflib.get_close_matches(key, list(lowered), n=n, cutoff=0.6)
	# The same name spelt otherwise (post_message, postMessage), then a near-exact one
	# (getMessage, getMessages), then another verb for the act, then the merely similar.
	norm = _normal(name)
	out = [c for c in pool if _normal(c) == norm][:n]
	out += [lowered[c] for c in close if _ratio(key, c) >= _NEAR and lowered[c] not in out]
	out += [c for c in same_act(name, pool) if c not in out]
	out += [lowered[c] for c in close if lowered[c] not in out]
	out = out[:n]
	if len(out) < n and len(key) >= 3:
		for low, original in lowered.items():
			if original not in out and (key in low or low.split(".")[-1] in key):
				out.append(original)
				if len(out) == n:
					break
	return out


_NEAR = 0.9
"""difflib's ratio above which a name is the one meant, before another verb for its act."""


def _normal(name: str) -> str:
	return name.replace("_", "").replace("-", "").lower()


def _ratio(a: str, b: str) -> float:
	return difflib.SequenceMatcher(None, a, b).ratio()


def edits(a: str, b: str) -> int:
	"""The edits that turn ``a`` into ``b``: a letter added, dropped or changed, or two swapped.

	Two neighbours swapped count as one edit (``modles``, ``iu``), which difflib's ratio scores
	low in a short word: ``iu`` is only 0.5 like ``ui``.
	"""
	prev2: list[int] = []
	prev = list(range(len(b) + 1))
	for i, x in enumerate(a, 1):
		row = [i]
		for j, y in enumerate(b, 1):
			cost = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x != y))
			if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
				cost = min(cost, prev2[j - 2] + 1)
			row.append(cost)
		prev2, prev = prev, row
	return prev[-1]


def typo_of(word: str, candidates: Iterable[str], *, cutoff: float = 0.6) -> str | None:
	"""The one candidate ``word`` most likely mistypes, or None.

	Case and leading dashes aside, a candidate one edit away (two for a word of five letters or
	more; a swap of neighbours is one, see `edits`) wins, the fewest edits first; else
	difflib's closest at ``cutoff``. ``--jsno`` gives ``--json``, ``iu`` ``ui``, ``hlep``
	``help``.

	Args:
		word: What was written.
		candidates: The words that exist.
		cutoff: difflib's ratio a candidate needs when no candidate is a few edits away.
	"""
	pool = {c.lstrip("-").lower(): c for c in reversed(list(dict.fromkeys(candidates)))}
	key = word.lstrip("-").lower()
	if not key:
		return None
	allowed = 1 if len(key) < 5 else 2
	scored = sorted((edits(key, low), low) for low in pool if low)
	best = [low for count, low in scored if count == scored[0][0]] if scored else []
	if best and scored[0][0] <= allowed:
		return pool[best[0]]
	close = difflib.get_close_matches(key, list(pool), n=1, cutoff=cutoff)
	return pool[close[0]] if close else None


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
