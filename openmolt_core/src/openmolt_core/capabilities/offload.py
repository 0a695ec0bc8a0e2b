r"""Large tool results: stored whole in the file store; the model gets a preview and a handle.

A result whose JSON is longer than the agent's threshold (``config={"max_result_chars": ...}``,
16,000 characters by default, and per tool with ``config={"max_result_chars_per_tool":
{"googleSheets.getValues": 40_000, "notion.*": 8_000}}``) is saved in the instance's file store
(`openmolt_core.files`), nothing cut, and the model reads instead:

```json
{"stored": "openmolt-file:Xy…", "mediaType": "application/json", "chars": 184233,
 "shape": {"messages": [{"id": "string", "threadId": "string"}, "… 500 items"],
           "nextPageToken": "string", "resultSizeEstimate": "integer"},
 "preview": "{\"messages\":[{\"id\":\"18c…", "read": "openmolt.readResult …"}
```

The shape shows keys, array lengths and where the bulk is (``"string(48213 chars)"``); a text
result shows its line count and first lines instead, a binary one (``bytes``) its size. The
built-in tool ``openmolt.readResult`` then reads a slice: a JSON Pointer (``/messages/0/id``), a
JSONPath (``$.messages[0:20].id``, ``$.values[*][0]``, ``$..title``), a line range (``10-80``)
or a byte range (``0-4095``). It is offered from the first result stored in a run (the reply
schema grows to admit it, as for loaded tools; see `openmolt_core.toolsearch`). The handle is
also a file reference, so a tool that takes files can upload the whole result.

A result is stored with the run's secrets masked (a text or JSON result; bytes are stored as they
are), as everything the run hands on: a tool that takes the handle as a file uploads that.

Handles and resumes: each handle is in the conversation and in ``RunState.stored``. The file lives
as long as the file store: the instance's temporary directory (removed by ``OpenMolt.aclose``), or
``OpenMolt(files_dir=...)``, which keeps results across processes: set it when runs resume in
another process. The store is written inside the journaled tool call, so a replayed run gets the
same handle. Compaction (`openmolt_core.compaction`) keeps every handle of the steps it
summarises in its block's ``files``; the files must stay in the store until the run is done.

JSON Pointer and JSONPath are read here, not by a library: core's dependencies are the design
card's short list, and the JSONPath libraries (jsonpath-ng, python-jsonpath) would add one for
the subset models use (names, indexes, slices, wildcards, descent; no filters, which a slice and
a second read replace). Our own walk also says, on a miss, which keys or how many items are
there, which is what a model needs to correct its next read.

As a capability (`OffloadResults`; every agent has one, ``create_agent(config=...)`` sets its
thresholds): a result longer than its threshold is replaced inside the journaled tool call
(`openmolt_core.hooks.Capability.replace_result`: the journal keeps the preview, so a replay gets
the same handle); once one is stored, ``openmolt.readResult`` is callable from the next step
(``visible_tools``), and ``RunState.stored`` lists the handle (``tool_done``, outside the journaled
call, so a replay rebuilds the same state). What every result goes through (`Offload`, its
threshold and the small result's way) and the reader's listing are defined in
`openmolt_core.capabilities`, which every agent loads; this module, loaded when a run stores a
result or reads one, stores (`store`) and reads (`read`), and re-exports them (same objects).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from openmolt_core._execute import MAX_RESULT_CHARS
from openmolt_core.capabilities import (  # every agent has them: defined there (light)
	READ_TOOL,
	Offload,
	OffloadResults,
	ReadResultTool,
	is_stored,
)
from openmolt_core.errors import ToolError
from openmolt_core.prompt import dumps

if TYPE_CHECKING:
	from openmolt_core.files import FileAccess

__all__ = [
	"MAX_RESULT_CHARS",
	"READ_TOOL",
	"Offload",
	"OffloadResults",
	"ReadResultTool",
	"is_stored",
	"read",
	"resolve_pointer",
	"select_path",
	"shape",
	"store",
	"trim",
]

_PREVIEW = 2_500  # characters of a whole preview, at most
_SHAPE = 1_500  # characters of the shape, at most
_KEYS = 30  # keys of one object shown in a shape
_LONG = 80  # a string longer than this shows its length in a shape
_PARSED = 4  # stored JSON documents kept parsed for readResult


def trim(value: Any, limit: int) -> Any:
	"""A result shortened, with a note, when its JSON passes ``limit`` (when nothing can be stored).

	Args:
		value: The tool's result.
		limit: The most characters of JSON the model sees.
	"""
	text = dumps(value)
	if len(text) <= limit:
		return value
	cut = max(limit - 200, 0)
	return {
		"truncated": True,
		"note": f"result shortened from {len(text)} to {cut} characters; ask for less (filters, "
		"smaller pages) if you need the rest",
		"partial": text[:cut],
	}


# shape --------------------------------------------------------------------------------------


def shape(value: Any, *, depth: int = 6, keys: int = _KEYS) -> Any:
	"""The structure of a JSON value: keys, array lengths, types, and where long strings are.

	Args:
		value: A JSON value.
		depth: Levels shown; deeper objects and arrays are summarized in one string.
		keys: Keys shown per object; the rest are counted.

	Returns:
		A small JSON value: objects keep their keys, an array becomes ``[<item shape>, "… N
		items"]``, a scalar its type (``"string(48213 chars)"`` for a long string).
	"""
	if isinstance(value, dict):
		if depth <= 0:
			return f"object({len(value)} keys)"
		out: dict[str, Any] = {}
		for i, (k, v) in enumerate(value.items()):
			if i == keys:
				out["…"] = f"{len(value) - keys} more keys"
				break
			out[str(k)] = shape(v, depth=depth - 1, keys=keys)
		return out
	if isinstance(value, list):
		if not value:
			return []
		if depth <= 0:
			return f"array({len(value)} items)"
		return [_items_shape(value, depth - 1, keys), f"… {len(value)} items"]
	if isinstance(value, str):
		return "string" if len(value) <= _LONG else f"string({len(value)} chars)"
	if isinstance(value, bool):
		return "boolean"
	if isinstance(value, int):
		return "integer"
	if isinstance(value, float):
		return "number"
	return "null" if value is None else type(value).__name__


def _items_shape(items: list[Any], depth: int, keys: int) -> Any:
	"""The shape of an array's items: the first few merged (objects by key), or their types."""
	sample = items[:5]
	if all(isinstance(i, dict) for i in sample):
		merged: Any = shape(sample[0], depth=depth, keys=keys)
		for item in sample[1:]:
			merged = _merge(merged, shape(item, depth=depth, keys=keys))
		return merged
	kinds = list(dict.fromkeys(_kind(i) for i in sample))
	if len(kinds) == 1:
		return shape(sample[0], depth=depth, keys=keys)
	return "mixed: " + ", ".join(kinds)


_COUNT = re.compile(r"\((\d+)")


def _size(text: str) -> int:
	match = _COUNT.search(text) or re.search(r"(\d+) items", text)
	return int(match.group(1)) if match else 0


def _merge(a: Any, b: Any) -> Any:
	"""Two items' shapes as one: keys united, the longer string or array kept (where bulk is)."""
	if isinstance(a, dict) and isinstance(b, dict):
		out = dict(a)
		for k, v in b.items():
			out[k] = _merge(out[k], v) if k in out else v
		return out
	if isinstance(a, list) and isinstance(b, list) and len(a) == 2 and len(b) == 2:
		count = a[1] if _size(str(a[1])) >= _size(str(b[1])) else b[1]
		return [_merge(a[0], b[0]), count]
	if isinstance(a, list) and isinstance(b, list):
		return a or b
	if isinstance(a, str) and isinstance(b, str) and a.split("(")[0] == b.split("(")[0]:
		return a if _size(a) >= _size(b) else b
	if a == "null":
		return b
	return a


def _kind(value: Any) -> str:
	if isinstance(value, dict):
		return "object"
	if isinstance(value, list):
		return "array"
	small = shape(value)
	return small.split("(")[0] if isinstance(small, str) else "value"


def _bounded_shape(value: Any, budget: int) -> Any:
	"""The most detailed shape that fits the budget (as JSON)."""
	for depth, keys in ((6, _KEYS), (4, 20), (3, 12), (2, 8), (1, 8)):
		out = shape(value, depth=depth, keys=keys)
		if len(dumps(out)) <= budget:
			return out
	return shape(value, depth=0)


# JSON Pointer and JSONPath ------------------------------------------------------------------


def _keys_hint(node: dict[str, Any]) -> str:
	names = list(node)[:12]
	more = f" and {len(node) - 12} more" if len(node) > 12 else ""
	return f"its keys are {', '.join(repr(n) for n in names)}{more}" if names else "it is empty"


def resolve_pointer(document: Any, pointer: str) -> Any:
	"""The value a JSON Pointer (RFC 6901) names: ``/messages/0/id``; ``""`` is the whole value.

	Args:
		document: The JSON value.
		pointer: The pointer; ``~1`` stands for ``/`` and ``~0`` for ``~`` in keys.

	Raises:
		ToolError: The pointer is malformed or names nothing; the message says what is there.
	"""
	if pointer in ("", "/") and not (isinstance(document, dict) and "" in document):
		return document
	if not pointer.startswith("/"):
		raise ToolError(f"pointer {pointer!r} must start with '/', e.g. '/messages/0/id'")
	node = document
	where = ""
	for raw in pointer[1:].split("/"):
		key = raw.replace("~1", "/").replace("~0", "~")
		if isinstance(node, dict):
			if key not in node:
				raise ToolError(
					f"pointer {pointer!r}: no key {key!r} at {where or '/'}; {_keys_hint(node)}"
				)
			node = node[key]
		elif isinstance(node, list):
			if not re.fullmatch(r"-?\d+", key):
				raise ToolError(
					f"pointer {pointer!r}: {where or '/'} is an array; use an index, not {key!r}"
				)
			index = int(key)
			if not -len(node) <= index < len(node):
				raise ToolError(
					f"pointer {pointer!r}: index {index} is outside {where or '/'}, which has "
					f"{len(node)} items"
				)
			node = node[index]
		else:
			raise ToolError(
				f"pointer {pointer!r}: {where or '/'} is a {_kind(node)}, which has no {key!r}"
			)
		where = f"{where}/{raw}"
	return node


_STEP = re.compile(
	r"\.\.(?P<deep>[A-Za-z_$@][\w$@-]*|\*)"
	r"|\.(?P<name>[A-Za-z_$@][\w$@-]*|\*)"
	r"|\[(?P<sel>(?:'[^']*'|\"[^\"]*\"|[^\]'\"])*)\]"
)
_SLICE = re.compile(r"^\s*(-?\d*)\s*:\s*(-?\d*)\s*(?::\s*(-?\d+)\s*)?$")
_INDEXES = re.compile(r"^\s*-?\d+\s*(?:,\s*-?\d+\s*)*$")
_NAMES = re.compile(r"^\s*(?:'[^']*'|\"[^\"]*\")\s*(?:,\s*(?:'[^']*'|\"[^\"]*\")\s*)*$")


def _descend(node: Any) -> list[Any]:
	"""A node and everything under it, in document order (for ``..``)."""
	out = []
	stack = [node]
	while stack:
		item = stack.pop()
		out.append(item)
		children = list(item.values()) if isinstance(item, dict) else item
		if isinstance(item, dict | list):
			stack.extend(reversed(children))
	return out


def select_path(document: Any, path: str) -> Any:
	"""The value(s) a JSONPath selects: ``$.messages[0:20].id``, ``$.values[*][0]``, ``$..title``.

	Supported: ``$``, ``.name``, ``['name']``, ``[0]`` (negative counts from the end),
	``[0,2]``, ``[start:end:step]``, ``[*]``, ``.*`` and ``..name`` (at any depth). A path with
	a wildcard, a slice, a list or ``..`` returns a list of matches; otherwise the one value.

	Args:
		document: The JSON value.
		path: The JSONPath (``$`` may be left out: ``messages[0].id``).

	Raises:
		ToolError: The path is malformed, uses what is not supported (filters), or a single
			path names nothing.
	"""
	text = path.strip()
	if text.startswith("$"):
		text = text[1:]
	elif not text.startswith((".", "[")):
		text = "." + text
	nodes = [document]
	many = False
	pos = 0
	while pos < len(text):
		match = _STEP.match(text, pos)
		if match is None:
			raise ToolError(
				f"path {path!r}: cannot read {text[pos : pos + 20]!r}; use steps like .name, [0], "
				"[0:10], [*] or ..name (filters are not supported)"
			)
		pos = match.end()
		nodes, more = _step(nodes, match, path, many)
		many = many or more
	return nodes if many else nodes[0]


def _step(nodes: list[Any], match: re.Match[str], path: str, many: bool) -> tuple[list[Any], bool]:
	deep, name, sel = match.group("deep"), match.group("name"), match.group("sel")
	if deep is not None:
		found: list[Any] = []
		for node in nodes:
			for item in _descend(node):
				if isinstance(item, dict):
					found.extend(
						item.values() if deep == "*" else [item[deep]] if deep in item else []
					)
		return found, True
	if name == "*" or (sel is not None and sel.strip() == "*"):
		found = []
		for node in nodes:
			if isinstance(node, dict):
				found.extend(node.values())
			elif isinstance(node, list):
				found.extend(node)
		return found, True
	if name is not None:
		return _pick(nodes, [name], path, many), False
	assert sel is not None
	if _NAMES.match(sel):
		keys = [s.strip()[1:-1] for s in re.findall(r"'[^']*'|\"[^\"]*\"", sel)]
		return _pick(nodes, keys, path, many), len(keys) > 1
	if _INDEXES.match(sel):
		indexes = [int(s) for s in sel.split(",")]
		found = []
		for node in nodes:
			if not isinstance(node, list):
				if not many:
					raise ToolError(f"path {path!r}: [{sel}] needs an array, found a {_kind(node)}")
				continue
			for i in indexes:
				if -len(node) <= i < len(node):
					found.append(node[i])
				elif not many and len(indexes) == 1:
					raise ToolError(
						f"path {path!r}: index {i} is outside an array of {len(node)} items"
					)
		return found, len(indexes) > 1
	sliced = _SLICE.match(sel)
	if sliced:
		start, stop, step = (int(g) if g else None for g in sliced.groups())
		if step == 0:
			raise ToolError(f"path {path!r}: a slice step cannot be 0")
		found = []
		for node in nodes:
			if isinstance(node, list):
				found.extend(node[slice(start, stop, step)])
		return found, True
	raise ToolError(
		f"path {path!r}: [{sel}] is not supported; use [0], [0,2], [0:10], [*] or ['name'] "
		"(filters are not supported)"
	)


def _pick(nodes: list[Any], keys: list[str], path: str, many: bool) -> list[Any]:
	found = []
	for node in nodes:
		for key in keys:
			if isinstance(node, dict) and key in node:
				found.append(node[key])
			elif not many and len(keys) == 1:
				hint = _keys_hint(node) if isinstance(node, dict) else f"it is a {_kind(node)}"
				raise ToolError(f"path {path!r}: no key {key!r}; {hint}")
	return found


# ranges -------------------------------------------------------------------------------------

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$")


def _range(text: str, what: str, *, first: int) -> tuple[int, int | None]:
	match = _RANGE.match(text)
	if match is None:
		example = "10-80" if what == "lines" else "0-4095"
		raise ToolError(f"{what} must read 'start-end' or 'start-', e.g. '{example}', not {text!r}")
	start = int(match.group(1))
	end = None if not match.group(2) else int(match.group(2))
	if match.group(2) is None and "-" not in text:
		end = start  # a single line or byte
	if start < first or (end is not None and end < start):
		raise ToolError(
			f"{what} {text!r}: the range must start at {first} or later and not end before it "
			"starts"
		)
	return start, end


# storing and reading ------------------------------------------------------------------------

_NOTE = (
	'The whole result is stored. Read parts with openmolt.readResult: {{"result": "{ref}", '
	'"pointer": "/key/0"}}, or "path": "$.items[0:20].id", or "lines": "1-200"{more}.'
)


async def store(
	offload: Offload,
	handle: str,
	value: Any,
	text: str,
	limit: int,
	origin: Mapping[str, Any] | None = None,
) -> Any:
	"""A result too large for the model, stored whole: the preview the model reads instead.

	Without a file store (or when saving fails), the result shortened (`trim`). Bytes the store
	does not keep, since they show a secret (`openmolt_core.files.screen`), are the store's
	record of why (``withheld``). It is saved as every file is (`openmolt_core.files.save_screened`),
	with the call that kept it: a run for another end user finds no such file.

	Args:
		offload: The agent's offload (its file store).
		handle: The tool's handle (for the stored file's name).
		value: The tool's result (made encodable).
		text: Its JSON (empty for bytes).
		limit: The tool's threshold.
		origin: The call whose result it is (``{"run", "call", "user"}``); None: the instance's.
	"""
	files = offload.files
	if files is None:
		return trim(value, limit)
	from openmolt_core.files import save_screened

	kind, data, document = _encode(value, text)
	name = f"{handle.replace('.', '-')}-result{_EXTENSIONS[kind]}"
	try:
		saved = await save_screened(files, data, media_type=kind, name=name, origin=origin)
	except OSError:
		return trim(value, limit)
	if "file" not in saved:  # bytes that show a secret are not kept: the record says why
		return saved
	return _preview(saved["file"], kind, data, document, min(limit, _PREVIEW))


async def read(offload: Offload, input: Mapping[str, Any], files: FileAccess | None) -> Any:
	"""Read a slice of a stored result (`Offload.read`, the ``openmolt.readResult`` tool's work).

	Args:
		offload: The agent's offload (its file store, thresholds and parsed documents).
		input: ``result`` (the handle) and at most one of ``pointer``, ``path``, ``lines``,
			``bytes``.
		files: The agent's view of the file store.

	Raises:
		ToolError: The handle is unknown, the selector malformed or it selects nothing.
	"""
	store = files or offload.files
	ref = str(input.get("result", ""))
	chosen = [k for k in ("pointer", "path", "lines", "bytes") if input.get(k) is not None]
	if len(chosen) > 1:
		raise ToolError(f"give one of pointer, path, lines or bytes, not {' and '.join(chosen)}")
	if store is None:
		raise ToolError("this agent has no file store, so no result was stored")
	cap = offload.threshold(READ_TOOL)
	return await anyio.to_thread.run_sync(
		lambda: _read(offload, store, ref, chosen[0] if chosen else None, input, cap)
	)


def _read(
	offload: Offload,
	store: FileAccess,
	ref: str,
	how: str | None,
	input: Mapping[str, Any],
	cap: int,
) -> Any:
	try:
		stored = store.read(ref)
	except ToolError as exc:
		raise ToolError(
			f"{exc.message}: not a stored result of this OpenMolt instance. Results last as "
			"long as its file store (OpenMolt(files_dir=...) keeps them across processes); "
			"call the tool again to get a new one"
		) from None
	media = stored.media_type
	if how == "bytes" or (how in (None, "lines") and not _textual(media)):
		return _bytes(ref, stored.data, media, str(input.get("bytes") or "0-"), cap)
	if media == "application/json":
		document = offload.document(ref, stored.data, _PARSED)
		if how == "pointer":
			where = str(input["pointer"])
			return _value(ref, {"pointer": where}, resolve_pointer(document, where), cap)
		if how == "path":
			where = str(input["path"])
			return _value(ref, {"path": where}, select_path(document, where), cap)
		if how is None:
			return _value(ref, {}, document, cap)
		text = json.dumps(document, ensure_ascii=False, indent=1)
	elif how in ("pointer", "path"):
		raise ToolError(
			f"{ref} is {media}, not JSON: read it with lines ('1-200') or bytes ('0-4095')"
		)
	else:
		text = stored.data.decode("utf-8", errors="replace")
	return _lines(ref, text, str(input.get("lines") or "1-"), cap)


_EXTENSIONS = {
	"application/json": ".json",
	"text/plain": ".txt",
	"application/octet-stream": ".bin",
}


def _encode(value: Any, text: str) -> tuple[str, bytes, Any]:
	"""The media type, bytes and (for JSON) the parsed value of a result to store."""
	if isinstance(value, bytes | bytearray):
		return "application/octet-stream", bytes(value), None
	if isinstance(value, str):
		stripped = value.lstrip()
		if stripped[:1] in ("{", "["):
			try:
				document = json.loads(value)
			except ValueError:
				pass
			else:
				return "application/json", dumps(document).encode(), document
		return "text/plain", value.encode(), None
	return "application/json", text.encode(), value


def _preview(ref: str, kind: str, data: bytes, document: Any, budget: int) -> dict[str, Any]:
	out: dict[str, Any] = {"stored": ref, "mediaType": kind}
	if kind == "application/octet-stream":
		out["size"] = len(data)
		out["read"] = (
			f'The bytes are stored. Read parts with openmolt.readResult: {{"result": "{ref}", '
			'"bytes": "0-4095"}} (base64); tools that take files accept the handle.'
		)
		return out
	text = data.decode("utf-8", errors="replace")
	out["chars"] = len(text)
	if kind == "application/json":
		out["shape"] = _bounded_shape(document, min(_SHAPE, budget // 2))
		more = ""
	else:
		out["lines"] = text.count("\n") + 1
		more = " (text: lines only)"
	out["read"] = _NOTE.format(ref=ref, more=more)
	room = max(budget - len(dumps(out)) - 40, 200)
	out["preview"] = text[:room] + ("…" if len(text) > room else "")
	return out


def _value(ref: str, where: dict[str, Any], value: Any, cap: int) -> Any:
	text = dumps(value)
	if len(text) <= cap:
		return {"result": ref, **where, "value": value}
	return {
		"result": ref,
		**where,
		"tooLarge": True,
		"chars": len(text),
		"shape": _bounded_shape(value, min(_SHAPE, cap // 2)),
		"preview": text[: min(cap // 4, 1_000)] + "…",
		"note": "this part is too large to show at once: select less (a deeper pointer, a "
		"slice such as [0:20], a path ending in the field you need) or read it by lines",
	}


def _lines(ref: str, text: str, span: str, cap: int) -> dict[str, Any]:
	start, end = _range(span, "lines", first=1)
	lines = text.split("\n")
	total = len(lines)
	if start > total:
		raise ToolError(f"lines {span!r}: the result has {total} lines")
	last = total if end is None else min(end, total)
	shown: list[str] = []
	size = 0
	for number in range(start, last + 1):
		line = lines[number - 1]
		if shown and size + len(line) + 1 > cap:
			last = number - 1
			break
		shown.append(line[:cap] if not shown else line)
		size += len(line) + 1
	out: dict[str, Any] = {"result": ref, "lines": f"{start}-{last}", "of": total}
	out["text"] = "\n".join(shown)
	if last < (total if end is None else min(end, total)):
		out["next"] = f"{last + 1}-{'' if end is None else end}"
	return out


def _textual(media: str) -> bool:
	base = media.split(";")[0].strip().lower()
	return base.startswith("text/") or base.endswith(("json", "xml", "yaml", "csv"))


def _bytes(ref: str, data: bytes, media: str, span: str, cap: int) -> dict[str, Any]:
	start, end = _range(span, "bytes", first=0)
	if start >= len(data):
		raise ToolError(f"bytes {span!r}: the result has {len(data)} bytes (0 to {len(data) - 1})")
	textual = _textual(media)
	room = cap if textual else cap * 3 // 4
	stop = min(len(data) if end is None else end + 1, len(data), start + room)
	part = data[start:stop]
	out: dict[str, Any] = {"result": ref, "bytes": f"{start}-{stop - 1}", "of": len(data)}
	if textual:
		out["text"] = part.decode("utf-8", errors="replace")
	else:
		out["base64"] = base64.b64encode(part).decode()
	wanted = len(data) if end is None else min(end + 1, len(data))
	if stop < wanted:
		out["next"] = f"{stop}-{'' if end is None else end}"
	return out
