"""Repairs: undo a dialect's changes on a decoded value, before the loop validates it.

`openmolt_core._fit.Fitter` builds one repair per fitted sub-schema that needs one; a repair
follows the fitted schema, never the value, so a reply nested deeper than its schema costs
nothing and cannot make it recurse. Repairs change values in place and never raise, except
`Decode` on JSON text a state cannot hold (`openmolt_core._jsonsafe.UnsafeJson`): the parser
refuses the reply with its message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openmolt_core._jsonsafe import UnsafeJson, loads

__all__ = [
	"ArrayRepair",
	"Decode",
	"Match",
	"ObjectRepair",
	"RefRepair",
	"Repair",
	"UnionRepair",
	"kinds_of",
]

Repair = Callable[[Any], Any]
"""Undoes the dialect's changes on one value valid under the fitted sub-schema (in place)."""


@dataclass(frozen=True, slots=True)
class Decode:
	"""A value sent as JSON text: decoded (text that is not JSON stays as it is).

	Raises:
		UnsafeJson: The text holds a key twice, ``NaN``/``Infinity`` or a lone surrogate.
	"""

	def __call__(self, value: Any) -> Any:
		"""Decode ``value`` when it is a string."""
		if not isinstance(value, str):
			return value
		try:
			return loads(value)
		except UnsafeJson:
			raise
		except (ValueError, RecursionError):
			return value


@dataclass(frozen=True, slots=True)
class ObjectRepair:
	"""Repairs the properties of an object.

	Args:
		props: ``(name, drop_null, repair)`` per property that needs work: ``drop_null`` removes
			the property when it is null (the fitted schema made an optional property required and
			nullable), ``repair`` is applied to its value otherwise.
	"""

	props: tuple[tuple[str, bool, Repair | None], ...]

	def __call__(self, value: Any) -> Any:
		"""Repair ``value`` when it is an object."""
		if not isinstance(value, dict):
			return value
		for name, drop_null, repair in self.props:
			if name not in value:
				continue
			if value[name] is None and drop_null:
				del value[name]
			elif repair is not None:
				value[name] = repair(value[name])
		return value


@dataclass(frozen=True, slots=True)
class ArrayRepair:
	"""Repairs every item of an array."""

	items: Repair

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


@dataclass(frozen=True, slots=True)
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


class RefRepair:
	"""The repair of a recursive definition (``$defs``), set once the definition is fitted.

	A value is nested at most as deep as the parser's depth cap, so following it cannot recurse
	without end.
	"""

	__slots__ = ("target",)

	def __init__(self) -> None:
		self.target: Repair | None = None

	def __call__(self, value: Any) -> Any:
		"""Repair ``value`` as the definition's repair says."""
		return self.target(value) if self.target is not None else value


@dataclass(frozen=True, slots=True)
class UnionRepair:
	"""Repairs a value with the repair of the first ``anyOf`` branch it could match.

	The fitter checks that branches a value could match at once share one repair, so the first
	match is always right for a valid value.
	"""

	branches: tuple[tuple[Match, Repair | None], ...]

	def __call__(self, value: Any) -> Any:
		"""Repair ``value`` as its branch says."""
		for match, repair in self.branches:
			if match(value):
				return repair(value) if repair is not None else value
		return value
