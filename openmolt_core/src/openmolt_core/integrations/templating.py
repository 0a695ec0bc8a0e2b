"""Liquid rendering of integration definitions: type-preserving, bounded, and cached.

Only strings written in an integration definition are templates. Values from the model (the tool
input) and from the user (the credential config) are data: Liquid inserts them as text and never
parses them, and a string that is exactly ``{{ input.x }}`` is replaced by the value itself.

Each template string is parsed once (an LRU cache keyed by the string), so a tool call costs a walk
over the definition and the renders of the strings that hold Liquid. Every render runs under
resource limits (loop iterations, output size, context depth, local namespace).

The ``file_base64`` filter reads files: it works only inside `reading_files`, which the HTTP engine
enters (in a worker thread) for tools whose templates use it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from email.errors import MessageError
from email.message import EmailMessage
from email.policy import SMTP
from functools import lru_cache
from typing import Any, ClassVar
from urllib.parse import quote, quote_plus, unquote

from liquid import Environment
from liquid.builtin.output import Output, OutputNode
from liquid.exceptions import LiquidError
from liquid.stringify import to_liquid_string

from openmolt_core.errors import ToolError

__all__ = [
	"MAX_INLINE_FILE_BYTES",
	"MISSING",
	"FileReader",
	"reading_files",
	"render",
	"render_endpoint",
	"render_string",
	"uses_filter",
]

MAX_INLINE_FILE_BYTES = 20 * 1024 * 1024
"""The default cap of ``file_base64``: larger files belong in an upload, not a JSON body."""

FileReader = Callable[[str, int], bytes]
"""Reads a file reference's bytes, refusing more than the given number of bytes (blocking)."""

_READER: ContextVar[FileReader | None] = ContextVar("openmolt_file_reader", default=None)


class _Missing:
	__slots__ = ()

	def __repr__(self) -> str:
		return "MISSING"

	def __bool__(self) -> bool:
		return False


MISSING: Any = _Missing()
"""Returned for an exact ``{{ input.x }}`` whose field is absent or null; dicts drop the key."""

_EXACT = re.compile(
	r"^\s*\{\{-?\s*(input|config)((?:\.[A-Za-z_$][\w$-]*|\[\d+\])*)\s*-?\}\}\s*$", re.ASCII
)
_PART = re.compile(r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]", re.ASCII)


class _PathSafe(str):
	"""Text already encoded for a URL path (the result of ``path_segments``)."""

	__slots__ = ()


def _segment(value: str) -> str:
	if unquote(value) in ("", ".", "..") or "\x00" in value:
		raise ToolError(f"path segment {value!r} is not allowed (empty, '.' or '..')")
	return quote(value, safe="")


def _path_segments(value: Any) -> str:
	text = to_liquid_string(value, False)
	return _PathSafe("/".join(_segment(part) for part in text.strip("/").split("/")))


def _json(value: Any) -> str:
	return json.dumps(value, separators=(",", ":"), default=str)


def _base64(value: Any) -> str:
	data = value if isinstance(value, bytes) else to_liquid_string(value, False).encode()
	return base64.b64encode(data).decode("ascii")


def _base64url(value: Any) -> str:
	data = value if isinstance(value, bytes) else to_liquid_string(value, False).encode()
	return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _url_encode(value: Any) -> str:
	return quote_plus(to_liquid_string(value, False))


def _addresses(value: Any) -> str:
	return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


# 7bit: bodies get a quoted-printable or base64 transfer encoding and non-ASCII headers become
# RFC 2047 encoded words, so the message is pure ASCII whatever the text.
_MAIL_POLICY = SMTP.clone(cte_type="7bit")


def _rfc2822(value: Any) -> str:
	if not isinstance(value, Mapping):
		raise ToolError("rfc2822 needs an object with to, subject and body")
	msg = EmailMessage(policy=_MAIL_POLICY)
	try:
		for key, header in (("from", "From"), ("to", "To"), ("cc", "Cc"), ("bcc", "Bcc")):
			if value.get(key):
				msg[header] = _addresses(value[key])
		msg["Subject"] = str(value.get("subject", ""))
		if value.get("inReplyTo"):
			msg["In-Reply-To"] = str(value["inReplyTo"])
		if value.get("references"):
			msg["References"] = _addresses(value["references"]).replace(",", "")
		msg.set_content(str(value.get("body", "")))
		if value.get("html"):
			msg.add_alternative(str(value["html"]), subtype="html")
		return msg.as_bytes().decode("ascii")
	except (ValueError, TypeError, IndexError, MessageError) as exc:
		raise ToolError(f"could not build the email: {exc}") from None


def _file_base64(value: Any, max_bytes: Any = None) -> str:
	reader = _READER.get()
	if reader is None:
		raise ToolError("file_base64 can only read files in an HTTP tool run by an agent")
	if not isinstance(value, str) or not value:
		raise ToolError("file_base64 needs a file reference string (openmolt-file:<id>, ...)")
	try:
		limit = MAX_INLINE_FILE_BYTES if max_bytes is None else int(max_bytes)
	except (TypeError, ValueError):
		raise ToolError(f"file_base64's size cap must be a number, got {max_bytes!r}") from None
	return base64.b64encode(reader(value, limit)).decode("ascii")


@contextmanager
def reading_files(reader: FileReader | None) -> Iterator[None]:
	"""Let ``file_base64`` read files with ``reader`` while the block runs (blocking reads).

	Args:
		reader: Returns a reference's bytes, refusing more than the given size; None disables.
	"""
	token = _READER.set(reader)
	try:
		yield
	finally:
		_READER.reset(token)


def uses_filter(value: Any, name: str) -> bool:
	"""Whether any template string in a definition (dicts and lists walked) names a filter."""
	if isinstance(value, str):
		return name in value and ("{{" in value or "{%" in value)
	if isinstance(value, Mapping):
		return any(uses_filter(v, name) for v in value.values())
	if isinstance(value, (list, tuple)):
		return any(uses_filter(v, name) for v in value)
	return False


class _Env(Environment):
	# python-liquid has no limits on loops, output size or namespace size by default.
	loop_iteration_limit: ClassVar[int | None] = 10_000
	output_stream_limit: ClassVar[int | None] = 5_000_000
	local_namespace_limit: ClassVar[int | None] = 1_000_000
	context_depth_limit: ClassVar[int] = 20
	block_nesting_limit: ClassVar[int] = 20

	def __init__(self) -> None:
		super().__init__()
		for name, func in _FILTERS.items():
			self.add_filter(name, func)


class _PathOutputNode(OutputNode):
	"""An output statement in an endpoint: its value becomes one encoded path segment."""

	__slots__ = ()

	def render_to_output(self, context: Any, buffer: Any) -> int:
		value = self.expression.evaluate(context)
		text = (
			str(value) if isinstance(value, _PathSafe) else _segment(to_liquid_string(value, False))
		)
		return int(buffer.write(text))


class _PathOutput(Output):
	node_class = _PathOutputNode


class _PathEnv(_Env):
	def __init__(self) -> None:
		super().__init__()
		self.add_tag(_PathOutput)
		# echo and liquid would write values without going through the encoding output node.
		for tag in ("echo", "liquid"):
			self.tags.pop(tag, None)


_FILTERS = {
	"json": _json,
	"base64": _base64,
	"base64url": _base64url,
	"file_base64": _file_base64,
	"path_segments": _path_segments,
	"rfc2822": _rfc2822,
	"url_encode": _url_encode,
}
_ENV = _Env()
_PATH_ENV = _PathEnv()


@lru_cache(maxsize=4096)
def _compile(source: str, path: bool = False) -> tuple[str, Any]:
	exact = _EXACT.match(source)
	if exact:
		parts = tuple(
			int(index) if index else name for name, index in _PART.findall(exact.group(2))
		)
		return "exact", (exact.group(1), parts)
	if "{{" not in source and "{%" not in source:
		return "literal", source
	try:
		return "template", (_PATH_ENV if path else _ENV).from_string(source)
	except LiquidError as exc:
		raise ToolError(f"invalid template {source[:80]!r} in the integration: {exc}") from exc


def _lookup(data: Mapping[str, Any], root: str, parts: tuple[str | int, ...]) -> Any:
	value: Any = data.get(root, MISSING)
	for part in parts:
		if isinstance(part, int):
			ok = isinstance(value, list) and part < len(value)
		else:
			ok = isinstance(value, Mapping) and part in value
		value = value[part] if ok else MISSING
		if value is MISSING:
			return MISSING
	return MISSING if value is None else value


def render_string(source: str, data: Mapping[str, Any], *, path: bool = False) -> Any:
	"""Render one template string.

	Args:
		source: The template, from an integration definition (never from a model).
		data: ``{"input": ..., "config": ...}``.
		path: Encode every output statement as one URL path segment (for endpoints).

	Returns:
		The value itself for an exact ``{{ input.x }}`` (`MISSING` when absent), else text.

	Raises:
		ToolError: The template is invalid, or a limit or a filter refused the values.
	"""
	kind, compiled = _compile(source, path)
	if kind == "literal":
		return compiled
	if kind == "exact":
		value = _lookup(data, *compiled)
		if path and value is not MISSING:
			return (
				value if isinstance(value, _PathSafe) else _segment(to_liquid_string(value, False))
			)
		return value
	try:
		return compiled.render(**data)
	except ToolError:
		raise
	except LiquidError as exc:
		raise ToolError(f"could not render {source[:80]!r}: {exc}") from exc


def render(value: Any, data: Mapping[str, Any]) -> Any:
	"""Render strings recursively through dicts and lists, dropping missing optionals.

	A dict key or list item whose value renders to `MISSING` is left out. Non-string leaves
	(numbers, booleans, None) are kept as they are.
	"""
	if isinstance(value, str):
		return render_string(value, data)
	if isinstance(value, Mapping):
		out = {}
		for key, item in value.items():
			rendered = render(item, data)
			if rendered is not MISSING:
				out[key] = rendered
		return out
	if isinstance(value, (list, tuple)):
		return [r for r in (render(v, data) for v in value) if r is not MISSING]
	return value


def render_endpoint(source: str, data: Mapping[str, Any]) -> str:
	"""Render an endpoint: each value is URL-encoded as one path segment; ``.``/``..`` refused.

	Raises:
		ToolError: A value would be empty, ``.`` or ``..`` as a segment, or the template failed.
	"""
	value = render_string(source, data, path=True)
	if value is MISSING:
		raise ToolError(f"the endpoint {source!r} needs an input value that is missing")
	return str(value)
