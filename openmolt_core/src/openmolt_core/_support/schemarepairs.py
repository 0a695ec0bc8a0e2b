"""The repairs of arrays and of ``anyOf`` unions, and the test of which branch a value takes.

`openmolt_core._support.schemafit.Fitter` builds them only where a fitted array's items or a
union's branches need a repair (`schemafit` re-exports them on first use): a schema without such
a part, as a one-shot run's reply envelope and plain tools' inputs are, never loads this module,
and a run does not pay for building three frozen dataclasses (their methods are compiled from
generated source: about 2 M instructions each). Like `schemafit`, it knows JSON Schema and
nothing of agents; it imports nothing of it (a repair's type, `schemafit.Repair`, is written out).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ArrayRepair", "Match", "UnionRepair", "kinds_of"]


@dataclass(frozen=True, slots=True, eq=False)  # never compared: no __eq__, __hash__
class ArrayRepair:
	"""Repairs every item of an array."""

	items: Callable[[Any], Any]
	"""The repair of one item (a `schemafit.Repair`)."""

	def __call__(self, value: Any) -> Any:
		"""Repair ``value`` when it is an array."""
		if isinstance(value, list):
			for i, item in enumerate(value):
				value[i] = self.items(item)
		return value


def kinds_of(value: Any) -> frozenset[str]:
	"""The JSON types a decoded value has (an integral number is both ``integer`` and ``number``)."""
	if isinstance(value, bool):
		return frozenset({"boolean"})
	if isinstance(value, int):
		return frozenset({"integer", "number"})
	if isinstance(value, float):
		return frozenset({"integer", "number"} if value.is_integer() else {"number"})
	kind = {str: "string", dict: "object", list: "array", type(None): "null"}.get(type(value))
	return frozenset({kind} if kind else ())


@dataclass(frozen=True, slots=True, eq=False)  # never compared: no __eq__, __hash__
class Match:
	"""What a value must look like to be valid under one fitted ``anyOf`` branch (a necessary test).

	Args:
		kinds: JSON types the branch accepts (``number`` includes ``integer``).
		required: For objects, the keys that must be present.
		allowed: For objects, the only keys allowed (None: any).
	"""

	kinds: frozenset[str]
	required: frozenset[str] = frozenset()
	allowed: frozenset[str] | None = None

	def __call__(self, value: Any) -> bool:
		"""Whether ``value`` could be valid under the branch."""
		if not kinds_of(value) & self.kinds:
			return False
		if isinstance(value, dict):
			keys = value.keys()
			return self.required <= keys and (self.allowed is None or keys <= self.allowed)
		return True

	def overlaps(self, other: Match) -> bool:
		"""Whether one value could match both branches."""
		common = self.kinds & other.kinds
		if not common:
			return False
		if common != {"object"}:
			return True
		allowed = (
			other.allowed
			if self.allowed is None
			else self.allowed
			if other.allowed is None
			else self.allowed & other.allowed
		)
		return allowed is None or (self.required | other.required) <= allowed


@dataclass(frozen=True, slots=True, eq=False)  # never compared: no __eq__, __hash__
class UnionRepair:
	"""Repairs a value with the repair of the first ``anyOf`` branch it could match.

	The fitter checks that branches a value could match at once share one repair, so the first
	match is always right for a valid value.
	"""

	branches: tuple[tuple[Match, Callable[[Any], Any] | None], ...]
	"""Each branch's test and its repair (a `schemafit.Repair`, or None: the value stays)."""

	def __call__(self, value: Any) -> Any:
		"""Repair ``value`` as its branch says."""
		for match, repair in self.branches:
			if match(value):
				return repair(value) if repair is not None else value
		return value
