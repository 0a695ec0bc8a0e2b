"""Every field of a JSON value, and the value with one field replaced or removed (for sweeps)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

DELETE = "DELETE"
"""The replacement that removes the field."""

OTHERS: list[Any] = [DELETE, None, 7, "x", [], {}, True, -5, 2.5, [None], {"a": None}]
"""A value of each JSON type (and removal), to put in place of each field."""


def paths(node: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
	"""Every field's path in a JSON value, the value itself (``()``) first."""
	yield at
	if isinstance(node, dict):
		for key, value in node.items():
			yield from paths(value, (*at, key))
	elif isinstance(node, list):
		for i, value in enumerate(node):
			yield from paths(value, (*at, i))


def changed(value: Any, at: tuple[Any, ...], other: Any) -> Any:
	"""A copy of ``value`` with the field at ``at`` replaced by ``other`` (`DELETE`: removed)."""
	if not at:
		return other
	out = copy.deepcopy(value)
	parent = out
	for step in at[:-1]:
		parent = parent[step]
	if other == DELETE:
		del parent[at[-1]]
	else:
		parent[at[-1]] = other
	return out


def variants(value: Any) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
	"""Each ``(path, replacement, changed value)`` of `OTHERS` at each field of ``value``."""
	for at in paths(value):
		for other in OTHERS:
			if other == DELETE and not at:
				continue
			yield at, other, changed(value, at, other)
