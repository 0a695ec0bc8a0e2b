"""The input names of an imported operation: every one a valid, meaningful and unique property.

A document's parameter or body field may be named anything (``StartTime<``, ``created[gte]``,
``filter[name]``, ``X-Request-ID``, ``@type``). A tool's input names must be identifiers a model
provider accepts as JSON Schema property names and Liquid reads after a dot, so each is spelled
by `openmolt_core.integrations.schema.input_name` (``StartTimeBefore``, ``created_on_or_after``);
the request still sends the document's own name. Two names that would be the same are told apart
by what differs: where they are sent (``id`` and ``id_header``), or else a number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from openmolt_core.integrations.schema import input_name

__all__ = ["MAX_NAME_CHARS", "field_names", "is_plain", "request_body_name"]

MAX_NAME_CHARS = 64
"""The longest property name the model providers accept (Anthropic, OpenAI, Gemini)."""

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLACE_WORDS = {"path": "Path", "query": "Query", "header": "Header", "body": "Field"}


def is_plain(name: str) -> bool:
	"""Whether ``name`` is an input name as it is: an identifier of at most 64 characters."""
	return bool(_PLAIN.fullmatch(name)) and len(name) <= MAX_NAME_CHARS


def _snake(name: str) -> bool:
	return "_" in name.strip("_") or name == name.lower()


def _joined(base: str, word: str) -> str:
	"""``base`` and ``word`` in the base's case style (``id_header``, ``RequestIdHeader``)."""
	tail = f"_{word.lower()}" if _snake(base) else word
	return base[: MAX_NAME_CHARS - len(tail)] + tail


def _numbered(base: str, taken: set[str], tries: dict[str, int] | None = None) -> str:
	"""``base`` with the first number from 2 that makes a name not ``taken`` (``a_2``, ``A2``).

	``tries`` keeps, by base, the last number given, so many names making one base take linear
	time rather than trying every number before theirs again.
	"""
	n = (tries or {}).get(base, 1) + 1
	while True:
		tail = f"_{n}" if _snake(base) else str(n)
		key = base[: MAX_NAME_CHARS - len(tail)] + tail
		if key not in taken:
			if tries is not None:
				tries[base] = n
			return key
		n += 1


def field_names(wanted: Sequence[tuple[str, str]], taken: set[str] | None = None) -> list[str]:
	"""The input name of each (name, place) an operation sends, in the same order.

	Names the document spells as identifiers keep them, before any renamed one is given a name
	(so ``page-size`` never pushes ``page_size`` aside). A name already held by something sent
	elsewhere gets its place's word (``id`` in the header is ``id_header`` when a query parameter
	is ``id``); one held by something sent in the same place gets a number (``filter[name]`` and
	``filter.name``: ``filter_name`` and ``filter_name_2``).

	Args:
		wanted: Each parameter or field's name as the document spells it, and where it is sent
			(``path``, ``query``, ``header`` or ``body``).
		taken: Names already used; the chosen names are added to it.
	"""
	taken = taken if taken is not None else set()
	held: dict[str, str] = {}  # input name -> the place of what holds it
	tries: dict[str, int] = {}  # base -> the last number `_numbered` gave it
	keys = [input_name(name)[:MAX_NAME_CHARS] for name, _ in wanted]
	out = [""] * len(wanted)
	order = sorted(range(len(wanted)), key=lambda i: (keys[i] != wanted[i][0], i))
	for i in order:
		place = wanted[i][1]
		key = keys[i]
		if key in taken:
			other = held.get(key)
			if other is not None and other != place:
				key = _joined(key, _PLACE_WORDS.get(place, place.title()))
			if key in taken:
				key = _numbered(keys[i], taken, tries)
		taken.add(key)
		held[key] = place
		out[i] = key
	return out


def request_body_name(taken: set[str]) -> str:
	"""The request body's input name: ``body``, or ``requestBody`` when a parameter is ``body``."""
	for key in ("body", "requestBody"):
		if key not in taken:
			taken.add(key)
			return key
	key = _numbered("requestBody", taken)
	taken.add(key)
	return key
