"""Rewrite an output's JSON source as it streams, so it reads as the loop will read it.

Where a dialect makes every property required (OpenAI's strict mode), an optional property the
model leaves out comes as ``null``, and `openmolt_core.structured.FittedSchema.restore` removes
it before the loop validates the reply. An ``output`` that is not a string previews as its JSON
source (`openmolt_core.capabilities._replydecoder.TextPiece`, ``raw``), so its pieces showed
those nulls, and did not add up to the run's output. `RawRestorer` follows the output's repair
(`openmolt_core._support.schemafit`) through the source as it comes:

- a member whose property drops its null is held from its comma to its value's first
  character: written with the value, or dropped with it when that is ``null`` (the commas
  between members are written by the restorer, so none is left over);
- objects, arrays and references (`RefRepair`) are followed as they stream; a value under any
  other repair (an ``anyOf`` whose branch only the whole value tells, JSON text to decode) is
  held until it is whole, then written repaired, in one piece;
- strings, numbers and the other literals go as they come.

The pieces it returns add up to the repaired value's compact JSON. Whitespace outside strings is
dropped. It is pure and holds one value: a new value needs a new restorer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openmolt_core._support.jsonsafe import encodable_text
from openmolt_core._support.schemafit import ArrayRepair, ObjectRepair, RefRepair

if TYPE_CHECKING:
	from openmolt_core._support.schemafit import Repair

__all__ = ["RawRestorer"]

_SPACE = frozenset(" \t\r\n")
_SPECIAL = re.compile(r'["\\]')
_NOTHING: tuple[bool, Repair | None] = (False, None)


@dataclass(slots=True)
class _Frame:
	"""One open object or array of the output."""

	kind: str  # "{" or "["
	props: dict[str, tuple[bool, Repair | None]] = field(default_factory=dict)  # objects
	items: Repair | None = None  # arrays: each item's repair
	written: int = 0  # objects: members written so far (each after the first takes a comma)
	expect: str = "value"  # "key", "colon", "value" or "comma"
	member: tuple[bool, Repair | None] = _NOTHING  # objects: the current member's


def _followed(repair: Repair | None) -> Repair | None:
	"""The repair a reference stands for (its definition's, set once fitted)."""
	while isinstance(repair, RefRepair):
		repair = repair.target
	return repair


class RawRestorer:
	"""Restores one value's JSON source as it streams (see the module).

	Args:
		drop_null: Whether the value itself is dropped when it is ``null`` (its property was
			made required and nullable).
		repair: The value's repair (None: none).
	"""

	__slots__ = (
		"_capture",
		"_depth",
		"_escape",
		"_held",
		"_key",
		"_mode",
		"_next",
		"_quoted",
		"_stack",
	)

	def __init__(self, drop_null: bool, repair: Repair | None) -> None:
		self._stack: list[_Frame] = []
		self._next: tuple[bool, Repair | None] = (drop_null, repair)  # the value awaited
		self._mode = "value"  # value, between, string, key, scalar, skip, capture, done
		self._held = ""  # a member's comma, key and colon: written with its value
		self._key: list[str] = []
		self._escape = False
		self._capture: list[str] = []
		self._depth = 0  # open brackets of the value held
		self._quoted = False  # whether the value held is inside one of its strings

	def feed(self, text: str) -> str:
		"""Read the next piece of the value's source; return the restored text it completes.

		Args:
			text: Any slice of the source, following the previous one.
		"""
		out: list[str] = []
		i, end = 0, len(text)
		while i < end:
			mode = self._mode
			if mode == "done":
				break
			if not self._escape and (
				mode in ("string", "key") or (mode == "capture" and self._in_string())
			):
				# Plain text inside a string is taken in one search, not a step per character.
				found = _SPECIAL.search(text, i)
				stop = end if found is None else found.start()
				if stop > i:
					piece = text[i:stop]
					if mode == "string":
						out.append(piece)
					elif mode == "key":
						self._key.append(piece)
					else:
						self._capture.append(piece)
					i = stop
					continue
			self._step(text[i], out)
			i += 1
		return "".join(out)

	# the state machine ----------------------------------------------------------------------

	def _step(self, c: str, out: list[str]) -> None:
		mode = self._mode
		if mode == "string":
			out.append(c)
			if self._string_char(c):
				self._ended()
		elif mode == "key":
			self._key.append(c)
			if self._string_char(c):
				self._key_done()
		elif mode == "capture":
			self._captured(c, out)
		elif mode in ("scalar", "skip"):
			if c.isalnum() or c in "+-.":
				if mode == "scalar":
					out.append(c)
				return
			self._ended()
			self._between(c, out)
		elif mode == "value":
			if c in _SPACE:
				return
			if c in "]}":
				self._between(c, out)  # an empty array, or a value missing: as it comes
				return
			self._start(c, out)
		else:
			self._between(c, out)

	def _string_char(self, c: str) -> bool:
		"""Follow one character of a string; True when it closed the string."""
		if self._escape:
			self._escape = False
		elif c == "\\":
			self._escape = True
		elif c == '"':
			return True
		return False

	def _start(self, c: str, out: list[str]) -> None:
		"""The first character of the awaited value."""
		drop, repair = self._next
		repair = _followed(repair)
		if drop and c == "n":
			self._held = ""  # a null that stands for a property left out: the member goes
			self._mode = "skip"
			return
		out.append(self._held)
		self._held = ""
		if self._stack and self._stack[-1].kind == "{":
			self._stack[-1].written += 1
		if c == "{" and (repair is None or isinstance(repair, ObjectRepair)):
			props = {name: (d, r) for name, d, r in repair.props} if repair is not None else {}
			self._stack.append(_Frame("{", props, expect="key"))
			out.append(c)
			self._mode = "between"
		elif c == "[" and (repair is None or isinstance(repair, ArrayRepair)):
			items = repair.items if repair is not None else None
			self._stack.append(_Frame("[", items=items))
			out.append(c)
			self._next = (False, items)
			self._mode = "value"
		elif c == '"' and (repair is None or isinstance(repair, ObjectRepair | ArrayRepair)):
			out.append(c)  # a repair of objects or arrays leaves a string as it is
			self._mode = "string"
		elif c in '{["':
			self._capture = [c]
			self._quoted = c == '"'
			self._depth = 0 if self._quoted else 1
			self._next = (False, repair)  # the repair to apply once it is whole
			self._mode = "capture"
		else:
			out.append(c)  # a number, true, false or null: no repair changes one
			self._mode = "scalar"

	def _between(self, c: str, out: list[str]) -> None:
		"""A character outside any value: a comma, a colon, a key's quote, a closing bracket."""
		if c in _SPACE:
			return
		frame = self._stack[-1] if self._stack else None
		if frame is None:
			self._mode = "done"
			return
		if c == ":" and frame.expect == "colon":
			self._held += ":"
			frame.expect = "value"
			self._next = frame.member
			self._mode = "value"
		elif c == ",":
			if frame.kind == "[":
				out.append(c)
				self._next = (False, frame.items)
				self._mode = "value"
			else:
				frame.expect = "key"  # the comma is written with the next member written
		elif c == '"' and frame.kind == "{" and frame.expect == "key":
			self._key = [c]
			self._mode = "key"
		elif c in "}]":
			out.append(c)
			self._stack.pop()
			self._ended()
		else:
			out.append(c)  # no JSON: the decoder stops before the parser says what is wrong

	def _key_done(self) -> None:
		frame = self._stack[-1]
		source = "".join(self._key)
		try:
			name = json.loads(source)
		except ValueError:
			name = source
		frame.member = frame.props.get(name, _NOTHING) if isinstance(name, str) else _NOTHING
		self._held = ("," if frame.written else "") + source
		frame.expect = "colon"
		self._mode = "between"

	def _captured(self, c: str, out: list[str]) -> None:
		"""One character of a value held until it is whole."""
		self._capture.append(c)
		if self._quoted:
			if self._string_char(c):
				self._quoted = False
				if self._depth == 0:  # the value was this string
					self._release(out)
			return
		if c == '"':
			self._quoted = True
		elif c in "{[":
			self._depth += 1
		elif c in "}]":
			self._depth -= 1
			if self._depth == 0:
				self._release(out)

	def _in_string(self) -> bool:
		"""Whether the held value's next character is inside one of its strings."""
		return self._quoted

	def _release(self, out: list[str]) -> None:
		"""Write a held value, repaired, now that it is whole."""
		source = "".join(self._capture)
		self._capture = []
		repair = self._next[1]
		try:
			value = json.loads(source)
			if repair is not None:
				value = repair(value)
			text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
		except Exception:  # JSON text a state cannot hold (UnsafeJson): shown as it came
			text = source
		out.append(encodable_text(text))
		self._ended()

	def _ended(self) -> None:
		"""The current value ended: its container expects a comma or its end."""
		if not self._stack:
			self._mode = "done"
			return
		self._stack[-1].expect = "comma"
		self._mode = "between"
