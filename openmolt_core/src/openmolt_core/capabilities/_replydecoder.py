r"""Decode a reply's JSON commands as they arrive (for `openmolt_core.capabilities.streaming`).

`ReplyDecoder` reads the reply text in chunks of any size and reports:

- `TextPiece`: new text of a command's ``humanMessage`` or ``output`` (``finish``) or ``message``
  (``requestHumanInput``), decoded (escapes resolved) as soon as it can be. A string value is
  reported decoded; an ``output`` that is not a string is reported as its JSON source text
  (``raw``). For a valid reply, the pieces of one field concatenate to its final value; an
  ``output`` sent as JSON text (``encoded_output``: the fitted reply schema's) is read as the
  JSON it holds, so its pieces are the output's, not the text's; an output reported as its
  source whose fitted schema made optional properties nullable (``output_repair``) is restored
  as it streams (`openmolt_core.capabilities._rawrestore`), so its pieces hold no null the loop
  drops.
- `CommandDone`: a command's object closed; its decoded JSON. This says the command was fully
  received, not that it is valid: the parser (`openmolt_core._parse`) decides that once the whole
  reply is in, and nothing runs before.

Nothing is reported before it is certain: a piece never ends inside an escape (``\u00e9``, or a
surrogate pair split between two chunks), and a command is done only when its closing brace came.
The decoder accepts the shapes the parser accepts (``{"commands": [...]}``, a bare list, a single
command object, with prose or a Markdown fence before); it skips what comes before the first
``{`` or ``[``, stops after the value it started closes, and stops reporting anything at the
first character that is no JSON (the parser will say what was wrong), and after a command that
ends the reply (``finish``, ``requestHumanInput``: the commands after it never run). It is pure
and holds one reply: a new reply needs a new decoder.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openmolt_core._support.jsonsafe import encodable, encodable_text

if TYPE_CHECKING:
	from openmolt_core._support.schemafit import Repair
	from openmolt_core.capabilities._rawrestore import RawRestorer

__all__ = ["CommandDone", "ReplyDecoder", "ReplyPiece", "TextPiece"]

# The streamed fields, and the command type each belongs to.
_FIELDS = {"humanMessage": "finish", "output": "finish", "message": "requestHumanInput"}
_ENDS = frozenset(_FIELDS.values())
"""The commands that end a reply (`openmolt_core.commands.ENDS_REPLY`): what follows never runs."""
_SPACE = frozenset(" \t\r\n")
_SPECIAL = re.compile(r'["\\]')
_HEX = frozenset("0123456789abcdefABCDEF")


@dataclass(frozen=True, slots=True)
class TextPiece:
	"""New text of one field of one command.

	Args:
		index: The command's position in the reply (0-based).
		field: ``humanMessage``, ``output`` or ``message``.
		text: The new text (decoded; for a ``raw`` output, JSON source).
		raw: Whether ``text`` is JSON source (an ``output`` that is not a string).
	"""

	index: int
	field: str
	text: str
	raw: bool = False


@dataclass(frozen=True, slots=True)
class CommandDone:
	"""A command was fully received (not yet validated).

	Args:
		index: The command's position in the reply (0-based).
		command: Its decoded JSON object.
	"""

	index: int
	command: dict[str, Any]


ReplyPiece = TextPiece | CommandDone
"""What `ReplyDecoder.feed` reports."""


@dataclass(slots=True)
class _Frame:
	"""One open object or array."""

	kind: str  # "{" or "["
	role: str  # "root", "commands", "command" or "other"
	start: int  # offset of its opening bracket in the text
	index: int = -1  # the command's index (role "command", or a root that is one command)
	expect: str = "value"  # objects: "key", "colon", "value", "comma"; arrays: "value", "comma"
	key: str = ""
	type: str | None = None
	items: int = 0  # arrays: values started so far
	has_commands: bool = False


@dataclass(slots=True)
class _String:
	"""The string being read: a key, a streamed value, or another value."""

	start: int  # offset after the opening quote
	target: tuple[int, str] | None  # (command index, field) when streamed
	is_key: bool
	is_type: bool
	flushed: int  # offset up to which the source was reported
	escape: int = 0  # characters of an escape still to come (after the backslash)
	in_escape: bool = False
	backslash: int = -1  # offset of the open escape's backslash
	high: int = -1  # offset of a high-surrogate escape whose pair may follow


_OUTPUT_OPENS = '{"type":"finish","output":'
"""What an output sent as JSON text is read after (`ReplyDecoder.encoded_output`): its text is
the value of a finish's ``output``, read by a decoder of its own."""


@dataclass(slots=True)
class ReplyDecoder:
	"""Reads one reply in chunks and reports text pieces and done commands (see the module).

	Args:
		encoded_output: Whether a ``finish``'s ``output`` is sent as JSON text (a string whose
			content is the output's JSON: the reply schema fitted to a provider's dialect says
			so, `openmolt_core.structured.FittedSchema.output_encoded`). Its text is then read
			as the output's JSON source, so the pieces are what they would be for the output
			itself: a string decoded, any other value as its JSON source (``raw``).
		output_repair: How the fitted schema's `FittedSchema.restore` changes a ``finish``'s
			``output`` (`FittedSchema.output_repair`: whether a null output is dropped, and the
			repair of its value), or None when it leaves it as written. An output reported as
			its JSON source is then restored as it streams (`RawRestorer`: the nulls of
			properties left out removed), so its pieces add up to the output the loop reads.
	"""

	encoded_output: bool = False
	output_repair: tuple[bool, Repair | None] | None = None
	_inner: dict[int, ReplyDecoder] = field(default_factory=dict)  # an encoded output's reader
	_restorer: RawRestorer | None = None  # the raw output's, when it has a repair
	_text: str = ""
	_pos: int = 0
	_stack: list[_Frame] = field(default_factory=list)
	_string: _String | None = None
	_scalar: bool = False  # inside a number, true, false or null
	_raw: tuple[int, int, int] | None = None  # (command index, depth, offset reported to)
	_started: bool = False
	_stopped: bool = False
	# Think tags before the reply's value, counted once each: (opened, closed, the offsets each
	# count goes on from).
	_think: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

	def feed(self, chunk: str) -> list[ReplyPiece]:
		"""Read the next chunk of the reply.

		Args:
			chunk: Any slice of the reply text, following the previous one.

		Returns:
			What this chunk completed, in order.
		"""
		out: list[ReplyPiece] = []
		if self._stopped or not chunk:
			return out
		text, self._text = self._text, ""
		text += chunk  # the only reference: CPython grows it in place instead of copying
		self._text = text
		while self._pos < len(text) and not self._stopped:
			string = self._string
			if string is not None and not string.in_escape:
				# Plain text inside a string is skipped in one search, not a step per character.
				found = _SPECIAL.search(text, self._pos)
				end = len(text) if found is None else found.start()
				if end > self._pos:
					string.high = -1  # a character after a high surrogate breaks the pair
					self._pos = end
					continue
			self._step(text[self._pos], out)
			self._pos += 1
		if not self._stopped:
			self._flush(out)
		return out

	# the state machine ----------------------------------------------------------------------

	def _step(self, c: str, out: list[ReplyPiece]) -> None:
		if self._string is not None:
			self._in_string(c, out)
			return
		if not self._started:
			if c in "{[" and not self._thinking():
				self._started = True
				self._open(c, out)
			return
		if self._scalar:
			if c.isalnum() or c in "+-.":
				return
			self._scalar = False
			self._value_done(out)
			if self._stopped:
				return
		if c in _SPACE:
			return
		frame = self._stack[-1] if self._stack else None
		if frame is None:  # the value closed: the rest is not ours
			self._stopped = True
			return
		if c in "}]":
			self._close(c, frame, out)
		elif c == ",":
			if frame.expect != "comma":
				self._stopped = True
				return
			frame.expect = "key" if frame.kind == "{" else "value"
		elif c == ":":
			if frame.expect != "colon":
				self._stopped = True
				return
			frame.expect = "value"
		elif c == '"':
			self._open_string(frame)
		elif frame.expect != "value":
			self._stopped = True
		elif c in "{[":
			self._open(c, out)
		elif c.isalnum() or c == "-":
			self._start_value(frame)
			self._scalar = True
		else:
			self._stopped = True

	def _start_value(self, frame: _Frame) -> None:
		"""A value of ``frame`` starts at the current offset."""
		if frame.kind == "[":
			frame.items += 1
		frame.expect = "comma"
		if self._raw is None and frame.kind == "{" and frame.key == "output":
			index = self._command_index(frame)
			if index is not None and self._streams(frame):
				self._raw = (index, len(self._stack), self._pos)
				self._restorer = None
				if self.output_repair is not None:
					from openmolt_core.capabilities._rawrestore import RawRestorer

					self._restorer = RawRestorer(*self.output_repair)

	def _open(self, c: str, out: list[ReplyPiece]) -> None:
		parent = self._stack[-1] if self._stack else None
		if parent is None:
			role = "commands" if c == "[" else "root"
			frame = _Frame(c, role, self._pos, index=0 if role == "root" else -1)
		else:
			self._start_value(parent)
			if c == "{" and parent.role == "commands":
				frame = _Frame(c, "command", self._pos, index=parent.items - 1)
			elif c == "[" and parent.role == "root" and parent.key == "commands":
				parent.has_commands = True
				frame = _Frame(c, "commands", self._pos)
			else:
				frame = _Frame(c, "other", self._pos)
		frame.expect = "key" if c == "{" else "value"
		self._stack.append(frame)

	def _close(self, c: str, frame: _Frame, out: list[ReplyPiece]) -> None:
		if (c == "}") != (frame.kind == "{") or frame.expect in ("colon",):
			self._stopped = True
			return
		if frame.expect == "value" and (frame.kind == "{" or frame.items):
			self._stopped = True  # a trailing comma, or a key without a value
			return
		self._stack.pop()
		end = self._pos + 1
		if frame.role == "command" or (frame.role == "root" and not frame.has_commands):
			try:
				command = json.loads(self._text[frame.start : end])
			except ValueError:
				command = None
			if isinstance(command, dict):
				if frame.role == "command" or "type" in command:
					out.append(CommandDone(frame.index, encodable(command)))
				if command.get("type") in _ENDS:
					self._stopped = True  # the commands after it do not run: not previewed
					return
		if self._raw is not None and len(self._stack) == self._raw[1]:
			self._emit_raw(end, out)
			self._raw = None

	def _value_done(self, out: list[ReplyPiece]) -> None:
		"""A scalar value ended just before the current offset."""
		if self._raw is not None and len(self._stack) == self._raw[1]:
			self._emit_raw(self._pos, out)
			self._raw = None

	# strings --------------------------------------------------------------------------------

	def _open_string(self, frame: _Frame) -> None:
		start = self._pos + 1
		if frame.kind == "{" and frame.expect == "key":
			self._string = _String(start, None, True, False, start)
			return
		if frame.expect != "value":
			self._stopped = True
			return
		target = None
		if frame.kind == "{" and frame.key in _FIELDS and self._raw is None:
			index = self._command_index(frame)
			if index is not None and self._streams(frame):
				target = (index, frame.key)
		is_type = frame.kind == "{" and frame.key == "type"
		self._start_value(frame)
		if target is not None:
			self._raw = self._restorer = None  # a string output is reported decoded, not as source
		self._string = _String(start, target, False, is_type, start)

	def _in_string(self, c: str, out: list[ReplyPiece]) -> None:
		s = self._string
		assert s is not None
		if s.in_escape:
			if s.escape == -1:  # the character after the backslash
				if c == "u":
					s.escape = 4
				elif c in '"\\/bfnrt':
					s.in_escape = False
					s.escape = 0
					s.high = -1
				else:
					self._stopped = True
				return
			if c not in _HEX:
				self._stopped = True
				return
			s.escape -= 1
			if s.escape == 0:
				s.in_escape = False
				begin = self._pos - 5  # the backslash
				code = int(self._text[begin + 2 : self._pos + 1], 16)
				if 0xD800 <= code <= 0xDBFF:
					s.high = begin
				else:
					s.high = -1
			return
		if c == "\\":
			s.in_escape = True
			s.escape = -1
			s.backslash = self._pos
			return
		if c == '"':
			self._string = None
			self._end_string(s, out)
			return
		s.high = -1

	def _end_string(self, s: _String, out: list[ReplyPiece]) -> None:
		frame = self._stack[-1]
		value = self._decode(self._text[s.start : self._pos])
		if value is None:
			self._stopped = True
			return
		if s.is_key:
			frame.key = value
			frame.expect = "colon"
			return
		if s.is_type:
			frame.type = value
		if s.target is not None:
			piece = self._decode(self._text[s.flushed : self._pos])
			if piece:
				self._piece(s.target, piece, out)
		if self._raw is not None and len(self._stack) == self._raw[1]:
			self._emit_raw(self._pos + 1, out)
			self._raw = None

	def _flush(self, out: list[ReplyPiece]) -> None:
		"""Report what is certain of the open string, or of the open raw output."""
		s = self._string
		if s is not None and s.target is not None:
			end = self._pos
			if s.in_escape:
				end = s.backslash
			if s.high >= 0:
				end = min(end, s.high)  # its low surrogate may come next
			if end > s.flushed:
				piece = self._decode(self._text[s.flushed : end])
				if piece is None:
					self._stopped = True
					return
				self._piece(s.target, piece, out)
				s.flushed = end
		if self._raw is not None:
			self._emit_raw(self._pos, out)

	def _piece(self, target: tuple[int, str], text: str, out: list[ReplyPiece]) -> None:
		"""Report decoded text of a streamed string field (an encoded output's, read as JSON)."""
		index, name = target
		if name != "output" or not self.encoded_output:
			out.append(TextPiece(index, name, text))
			return
		inner = self._inner.get(index)
		if inner is None:
			inner = self._inner[index] = ReplyDecoder()
			inner.feed(_OUTPUT_OPENS)
		for piece in inner.feed(text):
			if isinstance(piece, TextPiece):
				out.append(TextPiece(index, "output", piece.text, piece.raw))

	def _emit_raw(self, end: int, out: list[ReplyPiece]) -> None:
		assert self._raw is not None
		index, depth, begin = self._raw
		if end > begin:
			source = encodable_text(self._text[begin:end])
			if self._restorer is not None:
				source = self._restorer.feed(source)
			if source:
				out.append(TextPiece(index, "output", source, raw=True))
			self._raw = (index, depth, end)

	# helpers --------------------------------------------------------------------------------

	def _thinking(self) -> bool:
		"""Whether the current offset is inside a ``<think>`` block (the parser drops those).

		The tags are counted as the offset moves on, each once (counting them again in the
		whole text before every bracket took time in the square of its length).
		"""
		counts, pos = self._think, self._pos
		for i, tag in enumerate(("<think", "</think")):
			start = counts[2 + i]
			if pos > start:
				counts[i] += self._text[start:pos].lower().count(tag)
				counts[2 + i] = max(start, pos - len(tag) + 1)  # a tag cut at pos: counted later
		return counts[0] > counts[1]

	def _command_index(self, frame: _Frame) -> int | None:
		"""The command index of an object's fields, when the object is a command."""
		if frame.role == "command" or (frame.role == "root" and not frame.has_commands):
			return frame.index
		return None

	def _streams(self, frame: _Frame) -> bool:
		"""Whether the current key of a command object is a streamed field of its type."""
		if frame.role == "root" and frame.key == "commands":
			return False
		wanted = _FIELDS.get(frame.key)
		return wanted is not None and frame.type in (None, wanted)

	@staticmethod
	def _decode(source: str) -> str | None:
		"""A string's source (between the quotes) decoded, or None when it is no JSON string.

		A lone surrogate (an escape of D800 to DFFF without its pair, which makes the parser
		refuse the reply) is U+FFFD: a preview is sent on as UTF-8 (an AG-UI stream, a chat, a
		terminal), which cannot hold one.
		"""
		if "\\" not in source and '"' not in source:
			return encodable_text(source) if not any(ord(ch) < 0x20 for ch in source) else None
		try:
			value = json.loads(f'"{source}"')
		except ValueError:
			return None
		return encodable_text(value) if isinstance(value, str) else None
