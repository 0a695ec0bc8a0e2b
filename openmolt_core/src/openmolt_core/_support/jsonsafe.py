r"""JSON that a state can always hold: strict decoding of replies, encodable copies of results.

A run's state is JSON, saved as UTF-8 and sent to the provider at every step. Four things Python's
``json`` module accepts (or Python holds) would break that, or make a value ambiguous:

- a lone surrogate (``"\ud800"``): the string cannot be encoded as UTF-8, so the next request and
  every resume of the saved state fail;
- ``NaN`` and ``Infinity``: not JSON, so ``RunResult.to_dict()`` and the store's rows are not JSON;
- an integer of more digits than Python writes (``sys.get_int_max_str_digits()``, 4,300 by
  default): ``json`` can neither read nor write it;
- a key twice in one object: Python keeps the last one without a word.

A model's reply is decoded with `loads`, which refuses all four with a message the model can act
on (`UnsafeJson`); `problem` finds the first three in an already decoded value (a tool input sent
as JSON text and decoded by a repair). A tool's result is not the model's to fix: `encodable`
returns a copy with lone surrogates replaced by U+FFFD, non-finite numbers written as strings and
too long integers as a string that says their length. `dumps` writes any value as compact,
deterministic JSON that is always valid (the turns the loop writes and the results it sends).

`json_in_text` finds the one JSON value of a text the way language models write one: after
``<think>`` blocks, inside a Markdown fence, among prose; it says why when there is none, or
several (`NoJsonValue`), and it is linear in the text's length.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any

from openmolt_core._support import LazyPattern

__all__ = [
	"CYCLE_NOTE",
	"SHALLOW_DEPTH",
	"NoJsonValue",
	"UnsafeJson",
	"canonical",
	"digest",
	"dumps",
	"encodable",
	"encodable_text",
	"json_in_text",
	"loads",
	"nests_within",
	"problem",
	"shallow",
	"within_depth",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical(value: Any) -> Any:
	"""A hashable form of a JSON value, equal for values JSON Schema calls equal.

	``1`` and ``1.0`` are one number, ``true`` is no number, and an object's key order does not
	matter (``const``, ``enum`` and ``uniqueItems`` compare this way).

	Args:
		value: A JSON value (lists, dicts, strings, numbers, booleans, None).
	"""
	if isinstance(value, bool):
		return ("b", value)
	if isinstance(value, int | float):
		return ("n", value)
	if isinstance(value, list | tuple):
		return ("a", tuple(canonical(v) for v in value))
	if isinstance(value, dict):
		return ("o", frozenset((k, canonical(v)) for k, v in value.items()))
	return ("v", value)


def digest(value: Any) -> str:
	"""The SHA-256 hex digest of a value as canonical JSON (sorted keys, no spaces).

	What JSON cannot hold is written as its ``str``. The same value gives the same digest in
	every process: what a durable engine compares (an agent's fingerprint, the record of the
	tools a run began with).

	Args:
		value: The value (JSON, or what its ``str`` stands for).
	"""
	import hashlib

	text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
	return hashlib.sha256(text.encode()).hexdigest()


class UnsafeJson(ValueError):
	"""Decoded JSON a state cannot hold (the message says what and where)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
	out: dict[str, Any] = {}
	for key, value in pairs:
		if key in out:
			raise UnsafeJson(
				f"the key {_show(key)} appears twice in one object; give each key once"
			)
		out[key] = value
	return out


def _constant(name: str) -> Any:
	raise UnsafeJson(f"{name} is not a JSON number; use a number, or null, or a string")


def _float(text: str) -> float:
	value = float(text)
	if not math.isfinite(value):  # 1e999 decodes as infinity
		raise UnsafeJson(f"{text[:40]} is too large for a JSON number; use a smaller number")
	return value


def _show(key: str) -> str:
	return json.dumps(_SURROGATE.sub("\ufffd", key[:40]), ensure_ascii=False)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A surrogate escape in JSON text: only text holding one (or a raw surrogate) needs a walk."""


def loads(text: str) -> Any:
	"""Decode JSON text, refusing duplicate keys, ``NaN``/``Infinity`` and lone surrogates.

	Args:
		text: The JSON text.

	Raises:
		UnsafeJson: The text is JSON a state cannot hold (the message says why).
		ValueError: The text is not JSON (`json.JSONDecodeError`).
	"""
	try:
		value = _DECODER.decode(text)
	except (json.JSONDecodeError, UnsafeJson):
		raise
	except ValueError as exc:  # int(): more digits than Python converts
		raise UnsafeJson(
			f"a number has more than {sys.get_int_max_str_digits()} digits, which cannot be "
			"read; write it as a string"
		) from exc
	if _ESCAPE.search(text) or _SURROGATE.search(text):
		_check(value)  # a valid pair is fine: only the decoded strings can tell
	return value


def nests_within(value: Any, limit: int) -> bool:
	"""Whether a decoded value nests at most ``limit`` levels of objects and arrays.

	Iterative: a deeply nested value cannot make it recurse.
	"""
	stack: list[tuple[Any, int]] = [(value, 1)]
	while stack:
		item, level = stack.pop()
		if isinstance(item, dict):
			children: Any = item.values()
		elif isinstance(item, list):
			children = item
		else:
			continue
		if level > limit:
			return False
		stack.extend((c, level + 1) for c in children if isinstance(c, dict | list))
	return True


def problem(value: Any, depth: int | None = None) -> str | None:
	"""Why a decoded value cannot be held by a state (a lone surrogate, a non-finite number).

	Iterative, so a deeply nested value cannot make it recurse; a value that contains itself (a
	tool's result built in Python can) is a problem too, not an endless walk.

	Args:
		value: Decoded JSON.
		depth: The levels of objects and arrays allowed (None: any number).

	Returns:
		The first problem with its path, or None when the value is fine.
	"""
	# Each entry: the item, where it is (a (parent, key) chain, written out only for a problem),
	# and its level. A container's walk ends with a _LEAVE entry carrying its id.
	stack: list[tuple[Any, Any, int]] = [(value, None, 0)]
	open_: set[int] = set()  # the containers being walked: the current one's enclosing ones
	done: set[int] = set()  # containers checked whole (a value may hold one twice: no cycle)
	limit = -1 if depth is None else depth
	while stack:
		item, where, level = stack.pop()
		kind = type(item)
		if kind is str or isinstance(item, str):
			if _SURROGATE.search(item):
				return f"{_path(where)}: {_SURROGATE_TEXT}"
		elif kind is float or isinstance(item, float):
			if not math.isfinite(item):
				return f"{_path(where)}: {item!r} is not a JSON number; use a number or null"
		elif kind is int:
			if item.bit_length() > _SHORT_BITS and _too_long(item):
				return (
					f"{_path(where)}: an integer of about {_digits(item)} digits, too long to write"
				)
		elif item is _LEAVE:
			open_.discard(where)
			done.add(where)
		elif isinstance(item, dict | list | tuple):
			key = id(item)
			if key in open_:
				return f"{_path(where)}: {_CYCLE_TEXT}"
			if key in done:
				continue
			if level == limit:
				return f"{_path(where)}: nested more than {depth} levels deep"
			open_.add(key)
			stack.append((_LEAVE, key, 0))
			below = level + 1
			if isinstance(item, dict):
				for name, sub in item.items():
					if isinstance(name, str) and _SURROGATE.search(name):
						shown = _SURROGATE.sub("?", _path((where, name)))
						return f"{shown}: the key {_SURROGATE_TEXT}"
					if not isinstance(name, _JSON_KEYS):
						return f"{_path(where)}: a {type(name).__name__} key is not JSON"
					stack.append((sub, (where, name), below))
			else:
				stack.extend((sub, (where, i), below) for i, sub in enumerate(item))
		elif not isinstance(item, _JSON_LEAVES):
			return f"{_path(where)}: a {kind.__name__} is not JSON; it is written as its str()"
	return None


def _path(where: Any) -> str:
	"""A place in a value, written out (``a.b[2]``; ``(root)`` for the value itself)."""
	parts: list[str] = []
	while where is not None:
		where, key = where
		parts.append(f"[{key}]" if type(key) is int else f".{key}")
	text = "".join(reversed(parts)).lstrip(".")
	return text or "(root)"


_LEAVE = object()
"""On `problem`'s stack: the walk of a container (its id, as the path) is over."""

_CYCLE_TEXT = "refers to a value that contains it (a cycle), which JSON cannot write"

CYCLE_NOTE = "(a reference to a value that contains it: cut)"
"""What `encodable` writes where a value refers to one that contains it."""


_SURROGATE_TEXT = (
	"holds a lone surrogate escape (\\ud800-\\udfff without its pair), which is not text; "
	"write the character itself, or a valid pair"
)


def _check(value: Any) -> None:
	found = problem(value)
	if found is not None:
		raise UnsafeJson(found)


_SHORT_BITS = 3 * 640
"""Integers of at most this many bits are always written: the digits limit is 640 or more."""


def _too_long(value: int) -> bool:
	"""Whether Python refuses to write an integer in decimal (its digits limit)."""
	limit = sys.get_int_max_str_digits()
	if not limit or value.bit_length() <= 3 * limit:  # 3 bits make less than one digit
		return False
	try:
		str(value)
	except ValueError:
		return True
	return False


def _digits(value: int) -> int:
	"""About how many decimal digits an integer has (without writing it)."""
	return int(value.bit_length() * math.log10(2)) + 1


SHALLOW_DEPTH = 64
"""The levels of objects and arrays `shallow` keeps (as many as a reply may nest)."""


def shallow(value: Any, depth: int = SHALLOW_DEPTH) -> Any:
	"""A copy of ``value`` with what is nested deeper than ``depth`` levels replaced by a note.

	For a value too deep to encode (a tool's result nested thousands of levels deep: the JSON
	encoder recurses once per level); the copy recurses at most ``depth`` levels.

	Args:
		value: Any JSON-like value.
		depth: The levels of objects and arrays kept.
	"""
	if not isinstance(value, dict | list | tuple):
		return value
	if depth <= 0:
		return f"(nested more than {SHALLOW_DEPTH} levels deep: cut)"
	if isinstance(value, dict):
		return {k: shallow(v, depth - 1) for k, v in value.items()}
	return [shallow(v, depth - 1) for v in value]


def encodable_text(text: str) -> str:
	"""``text`` with every surrogate code point replaced by U+FFFD, so it encodes as UTF-8."""
	return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def encodable(value: Any, depth: int | None = None) -> Any:
	"""A copy of ``value`` a state can hold (surrogates and non-finite numbers replaced).

	Lone surrogates become U+FFFD; ``NaN`` and the infinities become the strings ``"NaN"``,
	``"Infinity"`` and ``"-Infinity"``; an integer too long to write becomes a string that says
	so (``"(an integer of about 5001 digits)"``); a reference to a value that contains it,
	`CYCLE_NOTE`; with ``depth``, what is nested deeper, a note (as `shallow` writes it).

	Values that are fine are returned as they are (no copy).

	Args:
		value: Any JSON-like value (a tool's result).
		depth: The levels of objects and arrays kept (None: all of them).
	"""
	if problem(value, depth) is None:
		return value
	return _clean(value, 0, set(), depth)


def _clean(value: Any, level: int, enclosing: set[int], depth: int | None = None) -> Any:
	if isinstance(value, str):
		return encodable_text(value)
	if isinstance(value, float) and not math.isfinite(value):
		return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
	if type(value) is int and value.bit_length() > _SHORT_BITS and _too_long(value):
		return f"({'-' if value < 0 else ''}an integer of about {_digits(value)} digits)"
	if not isinstance(value, dict | list | tuple):
		return value if isinstance(value, _JSON_LEAVES) else _written(value)
	if id(value) in enclosing:
		return CYCLE_NOTE
	if depth is not None and level >= depth:
		return f"(nested more than {depth} levels deep: cut)"
	if level > 200:
		return value if problem(value) is None else "(too deeply nested)"
	enclosing.add(id(value))
	try:
		if isinstance(value, dict):
			return {_key(k): _clean(v, level + 1, enclosing, depth) for k, v in value.items()}
		return [_clean(v, level + 1, enclosing, depth) for v in value]
	finally:
		enclosing.discard(id(value))


_JSON_KEYS = (str, int, float, bool, type(None))
"""The keys ``json.dumps`` writes (a number, a boolean or null as its text)."""

_JSON_LEAVES = (*_JSON_KEYS, bytes, bytearray, memoryview)
"""What a tool's result may hold as it is: JSON's scalars, and bytes (stored as a file later)."""


def _key(key: Any) -> Any:
	"""A dict key ``json.dumps`` can write: a tuple or an object key becomes its str()."""
	if isinstance(key, str):
		return encodable_text(key)
	return key if isinstance(key, _JSON_KEYS) else _written(key)


def _written(value: Any) -> str:
	"""An object that is not JSON (a date, a set, an enum) as its str(), as ``default=str`` does.

	A str() that raises gives a note instead: the value must not fail the run that holds it.
	"""
	try:
		text = str(value)
	except Exception as exc:
		text = f"(a {type(value).__name__} that cannot be written: its str() raised {type(exc).__name__})"
	return encodable_text(text)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
"""What `dumps` writes with: built once (``json.dumps`` with options builds one per call)."""


def dumps(value: Any) -> str:
	"""Compact, deterministic JSON (the same value always gives the same bytes).

	The text is always valid JSON that encodes as UTF-8, whatever a tool returned: a lone
	surrogate becomes U+FFFD and ``NaN``/``Infinity`` become strings
	(`encodable`), so no result can make a state unsendable or unsaveable.
	A value nested deeper than the encoder can recurse is cut (`shallow`).
	"""
	try:
		text = _ENCODER.encode(value)
	except ValueError:  # NaN, an infinity or an integer too long to write somewhere
		text = json.dumps(encodable(value), ensure_ascii=False, separators=(",", ":"), default=str)
	except RecursionError:  # nested thousands of levels deep (a tool's result)
		text = json.dumps(
			encodable(shallow(value)), ensure_ascii=False, separators=(",", ":"), default=str
		)
	# Surrogates appear as themselves inside string literals: replacing them keeps the JSON valid.
	return encodable_text(text)


# one JSON value in a text, as language models write it -----------------------------------


class NoJsonValue(Exception):  # not a ValueError: `loads`'s errors are, and are told apart
	"""A text from which `json_in_text` takes no one JSON value.

	Args:
		reason: ``empty`` (nothing but blanks and ``<think>`` blocks), ``several`` (more than one
			wanted value in the prose), ``deep`` (nested past the cap) or ``invalid`` (no JSON).
		count: How many wanted values the prose held (``several``).
		error: The decoder's error on the whole text (``invalid``), when it says where.
	"""

	def __init__(
		self, reason: str, *, count: int = 0, error: json.JSONDecodeError | None = None
	) -> None:
		super().__init__(reason)
		self.reason = reason
		self.count = count
		self.error = error


# A think tag, or a string to pass over whole (terminated or not; possessive: no backtracking).
_THINK_OPEN = LazyPattern(r'<think(?:ing)?>|"(?:[^"\\]++|\\.)*+"?', re.I | re.S)
_THINK_CLOSE = LazyPattern(r"</think(?:ing)?>", re.I)
# The opening of a Markdown fence and its info string (```` ```json ````).
_FENCE = LazyPattern(r"```[A-Za-z0-9_+.-]*")
# One token per string (terminated or not) or bracket; possessive, so no backtracking.
_TOKENS = LazyPattern(r'"(?:[^"\\]++|\\.)*+"?|[{}\[\]]', re.S)


def _unthink(text: str) -> str:
	"""``text`` without its ``<think>...</think>`` blocks, in one pass.

	A block is one outside a JSON string: a string is passed over whole, so a value that
	speaks of think tags keeps them (``"output": "wrap it in <think></think>"``; they were cut
	out of it). Each search starts where the last one ended: a block with no end means no later
	one has one either, so the rest stays as it is (a pattern with a lazy ``.*?`` read the rest
	again from every unclosed tag: a megabyte of them took minutes).
	"""
	kept: list[str] = []
	pos = 0
	while (found := _THINK_OPEN().search(text, pos)) is not None:
		if found.group().startswith('"'):
			kept.append(text[pos : found.end()])
			pos = found.end()
			continue
		closed = _THINK_CLOSE().search(text, found.end())
		if closed is None:
			break
		kept.append(text[pos : found.start()])
		pos = closed.end()
	kept.append(text[pos:])
	return "".join(kept)


def _strip(text: str) -> str:
	return _unthink(text).strip() if "<think" in text.lower() else text.strip()


def _unfenced(s: str) -> str:
	"""The text inside the Markdown fence a reply opens with (``s`` itself when it has none).

	The fence may close at the end, before prose, on the same line as it opened, or not at all;
	when the cut is wrong (a string holding three backticks), the reply does not decode whole
	and its values are looked for in the text around the fences (`json_in_text`).
	"""
	if not s.startswith("```"):
		return s
	opening = _FENCE().match(s)
	inner = s[opening.end() if opening else 3 :].rstrip()
	if inner.endswith("```"):
		return inner[:-3].strip()
	end = inner.rfind("```")
	return (inner[:end] if end >= 0 else inner).strip()


def _after_fence(s: str) -> str:
	"""The text after the fence a reply opens with closes ("" when nothing follows it)."""
	opening = _FENCE().match(s)
	last = s.rfind("```")
	return s[last + 3 :] if last >= (opening.end() if opening else 3) else ""


def _wanted_in(s: str, wanted: Callable[[Any], bool]) -> list[Any]:
	"""The top-level groups of a text that decode to a value ``wanted`` accepts.

	Raises:
		UnsafeJson: A group is JSON a state cannot hold.
		NoJsonValue: A group is nested past what the decoder can follow (``deep``).
	"""
	found: list[Any] = []
	for start, end in _values(s):
		try:
			value = loads(s[start:end])
		except UnsafeJson:
			raise
		except RecursionError:
			raise NoJsonValue("deep") from None
		except ValueError:
			continue
		if wanted(value):
			found.append(value)
	return found


def _values(s: str) -> list[tuple[int, int]]:
	"""Spans of the top-level ``{...}`` and ``[...]`` groups of a text, in one linear pass."""
	spans: list[tuple[int, int]] = []
	depth = 0
	start = 0
	opener = ""
	for match in _TOKENS().finditer(s):
		token = match.group()
		if token[0] == '"':
			continue
		if token in "{[":
			if depth == 0:
				start, opener = match.start(), token
			depth += 1
		elif depth > 0:
			depth -= 1
			if depth == 0 and opener + token in ("{}", "[]"):
				spans.append((start, match.end()))
	return spans


def within_depth(value: Any, max_depth: int) -> Any:
	"""``value`` itself, when it nests at most ``max_depth`` levels (`nests_within`).

	Raises:
		NoJsonValue: It nests deeper (reason ``deep``).
	"""
	if not nests_within(value, max_depth):
		raise NoJsonValue("deep")
	return value


def json_in_text(text: str, max_depth: int, wanted: Callable[[Any], bool]) -> Any:
	"""The one JSON value of a text, found the way language models write one, decoded by `loads`.

	``<think>`` blocks are dropped and an opening Markdown fence is unwrapped; the text is then
	decoded whole (a group after the closed fence that ``wanted`` accepts makes two values).
	When it is not JSON, each top-level ``{...}`` and ``[...]`` group of the prose is, and the
	value is the one group that ``wanted`` accepts. Linear in the text's
	length: the decoder runs at most once per group.

	Args:
		text: The text.
		max_depth: The most levels of objects and arrays the value may nest.
		wanted: Whether a group found in prose is the kind of value looked for.

	Raises:
		UnsafeJson: The value is JSON a state cannot hold.
		NoJsonValue: The text holds no such value, or several (the reason says which).
	"""
	s = _strip(text)
	inner = _unfenced(s)
	try:
		value = loads(inner)
	except UnsafeJson:
		raise
	except RecursionError:
		raise NoJsonValue("deep") from None
	except ValueError as exc:
		whole = exc
	else:
		# A fence closed before more text: a value wanted there is a second one (the fenced
		# one is not the answer just for coming first).
		others = len(_wanted_in(_after_fence(s), wanted)) if inner is not s else 0
		if others:
			raise NoJsonValue("several", count=1 + others)
		# Each level opens with a bracket of the text: with few brackets, no walk is needed.
		shallow = inner.count("{") + inner.count("[") <= max_depth
		return value if shallow else within_depth(value, max_depth)
	found = _wanted_in(s, wanted)
	if len(found) > 1:
		raise NoJsonValue("several", count=len(found))
	if found:
		return within_depth(found[0], max_depth)
	if not inner:
		raise NoJsonValue("empty")
	raise NoJsonValue("invalid", error=whole if isinstance(whole, json.JSONDecodeError) else None)
