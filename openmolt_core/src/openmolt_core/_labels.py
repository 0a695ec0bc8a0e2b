"""Tool labels: what a tool does with data, as every tool source declares it (the contract).

The taint policy (`openmolt_core.taint`) reads them; this module holds what the kernel and the
tool record need of them without the policy: the labels, their check, and `declared_labels`, the
one place a tool's declared labels come from whatever its source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any, Literal, get_args

from openmolt_core.errors import ConfigurationError

__all__ = ["LABELS", "UNKNOWN", "UNKNOWN_LABELS", "Label", "check_labels", "declared_labels"]

Label = Literal["private", "untrusted", "outbound"]
"""What a tool does with data (see `openmolt_core.taint`)."""

LABELS: frozenset[str] = frozenset(get_args(Label))
"""Every label."""

UNKNOWN_LABELS: tuple[Label, ...] = ("untrusted", "outbound")
"""The labels of a tool that declares none, under the default policy (fail closed)."""

UNKNOWN: frozenset[str] = frozenset(UNKNOWN_LABELS)
"""`UNKNOWN_LABELS` as a set: what a tool record holds until a policy resolves its labels."""

_NO_LABELS: frozenset[str] = frozenset()


def check_labels(labels: Iterable[str], where: str) -> tuple[Label, ...]:
	"""Read a list of labels, refusing unknown ones.

	Args:
		labels: The labels as given.
		where: The option's name, for the message.

	Raises:
		ConfigurationError: A label is not one of `LABELS`.
	"""
	if isinstance(labels, str):
		labels = [labels]
	out: list[Label] = []
	for label in labels:
		if label not in LABELS:
			raise ConfigurationError(
				f"{where}: {label!r} is not a label; use {', '.join(sorted(LABELS))}"
			)
		out.append(label)  # type: ignore[arg-type]  # checked against LABELS just above
	return tuple(out)


def declared_labels(bound: Any) -> frozenset[str] | None:
	"""The labels a bound tool declares: its own ``labels`` and its integration's table.

	This is the one place a tool's labels come from, whatever its source (an integration, a
	function, an MCP server, an OpenAPI import, an agent used as a tool, a skill, a
	capability's tool). A tool declares labels when it has a ``labels`` attribute that is not
	None (``()`` declares that it does none of the three things) or when a key of its
	integration's table matches it (a tool name or a shell-style pattern such as ``send*``;
	``[]`` declares none). A tool that declares nothing gives None: the policy treats it as
	`UNKNOWN_LABELS`.

	Args:
		bound: The tool as an agent sees it (`openmolt_core._binding.BoundTool`: its ``tool``,
			``integration`` and ``handle``).

	Returns:
		The declared labels, or None when the tool declares nothing.

	Raises:
		ConfigurationError: The tool's own ``labels`` hold something that is not a label (a
			misspelt label must not pass for "none").
	"""
	own = getattr(bound.tool, "labels", None)
	table: Mapping[str, Sequence[str]] = getattr(bound.integration, "labels", None) or {}
	declared = own is not None
	out: set[str] = set()
	if own:
		out.update(check_labels(own, f"tool {bound.handle!r}: labels"))
	if table:
		name = bound.tool.handle
		exact = table.get(name)
		if exact is not None:
			declared = True
			out.update(exact)
		for pattern in _patterns(table):
			if pattern != name and fnmatchcase(name, pattern):
				declared = True
				out.update(table[pattern])
	if not declared:
		return None
	return frozenset(out & LABELS) if out else _NO_LABELS


_WILDCARD = re.compile(r"[*?\[]")
_PATTERNS: dict[int, tuple[Mapping[str, Sequence[str]], int, tuple[str, ...]]] = {}


def _patterns(table: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
	"""The keys of a labels table that are shell-style patterns, found once per table.

	A table is usually one integration's, read by every agent created with it: the plain keys
	are looked up directly, and only the patterns are matched one by one.
	"""
	entry = _PATTERNS.get(id(table))
	if entry is None or entry[0] is not table or entry[1] != len(table):
		if len(_PATTERNS) > 1024:  # tables made on the fly (tests): keep the cache small
			_PATTERNS.clear()
		entry = (table, len(table), tuple(k for k in table if _WILDCARD.search(k)))
		_PATTERNS[id(table)] = entry
	return entry[2]
