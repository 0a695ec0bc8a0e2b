"""Liquid rendering of integration definitions: type-preserving, bounded, and cached.

Only strings written in an integration definition are templates. Values from the model (the tool
input) and from the user (the credential config) are data: Liquid inserts them as text and never
parses them, and a string that is exactly ``{{ input.x }}`` is replaced by the value itself.

Each template string is parsed once (an LRU cache keyed by the string), so a tool call costs a walk
over the definition and the renders of the strings that hold Liquid. Every render runs under
resource limits (loop iterations, output size, context depth, local namespace).

The file filters (``file_base64``, ``file_media_type``) read files: they work only inside
`reading_files`, which the HTTP engine enters (in a worker thread) for tools that use them. A string
that is exactly ``{{ input.x | file_base64 }}`` (or ``file_media_type``) with ``x`` missing drops the
object that holds it, not just its key: that object describes a file that was not given.

``call`` holds what the engine knows of the call itself, never shown to the model: its one field
is ``call.idempotency_key`` (`IDEMPOTENCY_KEY`), the call's own key
(`openmolt_core.tools.ToolContext.idempotency_key`: the same on a retry and on a durable replay,
another for every other call). A tool whose service reads the key from the body or the variables
of a GraphQL document (Shopify's ``@idempotent(key:)``) writes ``"{{ call.idempotency_key }}"``
there, so the model neither invents nor reuses one.

An exact ``{{ input.x }}`` over a null drops its key too, unless ``x`` is among the ``nulls``
`render` is given: the top-level inputs whose schema takes null (`null_inputs`), which the HTTP
engine passes for a body, so a service reads ``"icon": null`` as "remove the icon".

``param_style`` serialises a value as an OpenAPI parameter style says (the OpenAPI importer writes
it; `PARAM_STYLES`): ``{{ input.ids | param_style: "matrix", true, "ids" }}`` in an endpoint is
``;ids=1;ids=2``, each value percent-encoded and the style's delimiters not. In a header it is the
text (``simple``: ``1,2``); a query parameter that is exactly such a template sends the style's
own pairs (``form`` exploded: ``R=100&G=200``), named by its key. ``reserved: true`` (OpenAPI's
``allowReserved``) leaves a query value's reserved characters bare:
``{{ input.path | param_style: "form", true, reserved: true }}`` sends ``path=a/b``.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol
from urllib.parse import quote, quote_plus, unquote

from liquid import Environment, Undefined
from liquid.builtin.output import Output, OutputNode
from liquid.exceptions import LiquidError
from liquid.stringify import to_liquid_string

from openmolt_core.errors import ToolError
from openmolt_core.integrations._encode import Encoded
from openmolt_core.integrations._form import scalar_text as _style_scalar
from openmolt_core.integrations._form import style_pairs
from openmolt_core.integrations._url import check_empty_segments

if TYPE_CHECKING:
	from openmolt_core.files import StoredFile

__all__ = [
	"BUILTIN_FILTERS",
	"CALL_FIELDS",
	"FILE_FILTERS",
	"IDEMPOTENCY_KEY",
	"MAX_INLINE_FILE_BYTES",
	"MISSING",
	"PARAM_STYLES",
	"FileSource",
	"Filters",
	"Styled",
	"check_call_reads",
	"holds_markup",
	"liquid_text",
	"null_inputs",
	"parse_template",
	"reading_files",
	"render",
	"render_endpoint",
	"render_string",
	"uses_filter",
]

MAX_INLINE_FILE_BYTES = 20 * 1024 * 1024
"""The default cap of ``file_base64``: larger files belong in an upload, not a JSON body."""

CALL_FIELDS = ("idempotency_key",)
"""The fields of the ``call`` a template reads (the engine fills them per call; no input)."""

IDEMPOTENCY_KEY = "{{ call.idempotency_key }}"
"""A template value the engine replaces by the call's idempotency key (a UUID string).

The same key on the engine's retries and when a durable run replays the call; another one for
every other call. Put it where the service reads a key and the integration's
``idempotency_header`` does not reach: a JSON body field, a GraphQL variable."""


_READ_CALL = re.compile(r'(?<![.\w$])call(?:\.([A-Za-z_$][\w$-]*)|\[\\?"([^"\\]*)\\?"\])')
_LIQUID = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


def liquid_text(values: Any) -> str:
	"""The Liquid of every template in ``values`` (texts, lists, mappings), joined.

	Args:
		values: Templates as an integration holds them; text outside ``{{ }}`` is left out.
	"""
	return " ".join(_LIQUID.findall(json.dumps(values, default=str)))


def check_call_reads(values: Any, filled: tuple[str, ...], where: str) -> set[str]:
	"""Refuse a template that reads a ``call`` field the engine does not fill there.

	A field no one fills renders to nothing: the header, parameter or body field would be sent
	without it, with no word. Every template an integration holds is checked where it is
	defined: a tool's (`HttpTool`), the setup its tools share (`ApiSetup`) and its credentials'
	(rendered with the config alone: ``filled`` is empty).

	Args:
		values: The templates.
		filled: The ``call`` fields filled where they are rendered (`CALL_FIELDS`, or none).
		where: What holds them, for the message (``"a credential's header"``).

	Returns:
		The fields read (each one of ``filled``).

	Raises:
		ValueError: A template reads another field; the message names it and what to use.
	"""
	read = {a or b or "" for a, b in _READ_CALL.findall(liquid_text(values))}
	unknown = sorted(read - set(filled))
	if not unknown:
		return read
	shown = ", ".join(f"call.{name}" for name in unknown)
	if filled:
		raise ValueError(
			f"{shown}: a template reads only call.idempotency_key from the call (write "
			f"{IDEMPOTENCY_KEY!r}); take anything else from input or config"
		)
	raise ValueError(
		f"{shown}: {where} is rendered with the config alone and reads nothing from the call; "
		"take it from the config"
	)


FILE_FILTERS = ("file_base64", "file_media_type")
"""The filters that read files (the engine renders tools using them in a worker thread)."""


class FileSource(Protocol):
	"""What the file filters read through (a `openmolt_core.files.FileAccess`); blocking calls."""

	def read(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""The bytes of a reference, refusing more than ``max_bytes``."""
		...

	def describe(self, reference: str) -> dict[str, Any]:
		"""``{"file", "size", "mediaType", "name"}`` of a reference, without reading it."""
		...


Filters = Mapping[str, Callable[..., Any]]
"""Liquid filters by name: an integration's own, added to the built-in ones."""

_SOURCE: ContextVar[FileSource | None] = ContextVar("openmolt_file_source", default=None)


class _Missing:
	__slots__ = ()

	def __repr__(self) -> str:
		return "MISSING"

	def __bool__(self) -> bool:
		return False


MISSING: Any = _Missing()
"""Returned for an exact ``{{ input.x }}`` whose field is absent or null; dicts drop the key.

A null is kept (and sent) only for the top-level inputs `render` is given as ``nulls``: those
whose schema lets them be null (`null_inputs`)."""

# An exact file filter over a missing input: the enclosing object is dropped.
_DROP_OBJECT: Any = _Missing()

# A lookup path: ``.name``, ``[0]`` or ``["any name"]`` (for names such as ``max-keys``).
_PATH = r'((?:\.[A-Za-z_$][\w$-]*|\[\d+\]|\["[^"\\{}]*"\])*)'
_EXACT = re.compile(r"^\s*\{\{-?\s*(input|config|call)" + _PATH + r"\s*-?\}\}\s*$", re.ASCII)
_PART = re.compile(r'\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\["([^"\\{}]*)"\]', re.ASCII)
_EXACT_STYLE = re.compile(
	r"^\s*\{\{-?\s*(input|config)" + _PATH + r"\s*\|\s*param_style\s*:\s*\"(\w+)\"\s*"
	r"(?:,\s*(true|false)\s*)?(?:,\s*\"([^\"\\{}]*)\"\s*)?"
	r"(?:,\s*reserved\s*:\s*(true|false)\s*)?-?\}\}\s*$",
	re.ASCII,
)
_EXACT_FILE = re.compile(
	r"^\s*\{\{-?\s*(input|config)" + _PATH + r"\s*\|\s*"
	r"(?:file_base64(?:\s*:\s*\d+)?|file_media_type)\s*-?\}\}\s*$",
	re.ASCII,
)


class _PathSafe(str):
	"""Text already encoded for a URL path (the result of ``path_segments``)."""

	__slots__ = ()


def _quote(value: str) -> str:
	try:
		return quote(value, safe="")
	except UnicodeEncodeError:
		raise ToolError(
			"a value in the URL is not valid Unicode text (it holds a lone surrogate)"
		) from None


# Where a server may split a path after decoding it: %2F decoded to a slash (nginx normalises
# the decoded path), and a backslash read as a slash (IIS, some frameworks).
_SEPARATORS = re.compile(r"[/\\]")


def _dot_piece(text: str) -> bool:
	return any(piece in (".", "..") for piece in _SEPARATORS.split(text))


def _segment(value: str) -> str:
	plain = unquote(value)
	if (
		plain == ""
		or "\x00" in value
		or _dot_piece(plain)
		# Fullwidth dots and slashes, the two-dot leader: NFKC and Windows' best-fit mapping
		# turn them into ASCII dots and slashes on a server that applies either.
		or (not plain.isascii() and _dot_piece(unicodedata.normalize("NFKC", plain)))
	):
		# The value itself is not repeated: it may be long, or not meant to be shown.
		raise ToolError(
			"a value in the URL path is empty, '.' or '..' (or holds one between slashes or "
			"backslashes, or NUL), which would change the path; give a plain name"
		)
	return _quote(value)


def _url_value(value: Any, encode: Callable[[str], str]) -> str:
	"""A value written into a URL, encoded: a list of plain values as ``a,b`` (the simple style).

	Anything else but an object is one encoded piece.

	Raises:
		ToolError: The value is an object, or a list holding one (its text would be Python's).
	"""
	if isinstance(value, _PathSafe):
		return str(value)
	if isinstance(value, (Mapping, list, tuple)):
		if isinstance(value, Mapping) or any(isinstance(v, (Mapping, list, tuple)) for v in value):
			raise ToolError(
				"a value in the URL is an object (or a list of them), which has no plain form "
				"there; the integration should write it with param_style"
			)
		items = [encode(_style_scalar(v)) for v in value if v is not None]
		return ",".join(items) if items else encode("")
	return encode(to_liquid_string(value, False))


def _query_value(value: Any) -> str:
	return _url_value(value, _quote)


def _path_segments(value: Any, exact: Any = False) -> str:
	"""Each ``/``-separated segment of a value, encoded; the slashes between them kept bare.

	By default a leading or trailing slash is dropped and an empty segment refused (a file path:
	``docs/a.md``). With ``exact: true`` every slash stays where it is, so ``folder/`` and
	``/a//b`` reach those very names, not ``folder`` or ``a/b`` (an S3 key is any text; botocore
	sends it so). ``.`` and ``..`` segments are refused either way: a client or server resolves
	them, and the request would reach another resource.
	"""
	text = to_liquid_string(value, False)
	if exact is True:
		if text == "":
			_segment("")  # refused: an empty value
		return _PathSafe("/".join(_segment(part) if part else "" for part in text.split("/")))
	return _PathSafe("/".join(_segment(part) for part in text.strip("/").split("/")))


def _json(value: Any) -> str:
	return json.dumps(value, separators=(",", ":"), default=str)


PARAM_STYLES = (
	"simple",
	"label",
	"matrix",
	"form",
	"spaceDelimited",
	"pipeDelimited",
	"deepObject",
)
"""The styles ``param_style`` writes (OpenAPI's; the first three for paths and headers, the rest
for queries)."""

_QUERY_STYLES = frozenset(PARAM_STYLES[3:])


def _undefined(value: Any) -> bool:
	"""Whether RFC 6570 calls the value undefined: absent, null, or an empty array or object."""
	return (
		value is None
		or value is MISSING
		or isinstance(value, Undefined)
		or (isinstance(value, (Mapping, list, tuple)) and not value)
	)


def _style_args(
	style: Any, explode: Any, name: Any, reserved: Any = False
) -> tuple[str, bool, str | None, bool]:
	if style not in PARAM_STYLES:
		raise ToolError(f"param_style: {style!r} is not a style; one of {', '.join(PARAM_STYLES)}")
	if not isinstance(explode, bool):
		raise ToolError(f"param_style: explode is true or false, not {explode!r}")
	if name is not None and not isinstance(name, str):
		raise ToolError(f"param_style: the parameter's name is text, not {name!r}")
	if not isinstance(reserved, bool):
		raise ToolError(f"param_style: reserved is true or false, not {reserved!r}")
	return style, explode, name or None, reserved


def _style_text(
	value: Any, style: str, explode: bool, name: str, encode: Callable[[str], str]
) -> str:
	"""A path or header style's text (simple, label, matrix), each name and value encoded."""

	def one(item: Any) -> str:
		return encode(_style_scalar(item))

	if isinstance(value, Mapping):
		pairs = [(encode(str(k)), one(v)) for k, v in value.items() if v is not None]
		if explode and style == "matrix":
			return "".join(f";{k}={v}" for k, v in pairs)
		body = (
			("." if style == "label" else ",").join(f"{k}={v}" for k, v in pairs)
			if explode
			else ",".join(f"{k},{v}" for k, v in pairs)
		)
	elif isinstance(value, (list, tuple)):
		items = [one(v) for v in value if v is not None]
		if explode and style == "matrix":
			return "".join(f";{encode(name)}={v}" for v in items)
		body = ("." if explode and style == "label" else ",").join(items)
	else:
		body = one(value)
	if style == "label":
		return f".{body}"
	if style == "matrix":
		return f";{encode(name)}={body}"
	return body


class Styled(str):
	"""A value ``param_style`` serialised: its text, and its query pairs.

	The text is what a header sends (a query style's: its pairs, encoded, joined by ``&``); a
	query parameter sends `query_pairs`, named by its key when the template names none. With
	``reserved`` (OpenAPI's ``allowReserved``) a query value keeps RFC 3986's reserved
	characters that a query can hold bare (`openmolt_core.integrations._form.percent`).
	"""

	value: Any
	style: str
	explode: bool
	name: str | None
	reserved: bool

	def __new__(
		cls, value: Any, style: str, explode: bool, name: str | None, reserved: bool = False
	) -> Styled:
		"""Serialise ``value`` in ``style``.

		Raises:
			ToolError: The style needs the parameter's name (matrix) and none is given.
		"""
		if style in _QUERY_STYLES:
			pairs = style_pairs(value, style, explode, name or "", "query", reserved)
			text = "&".join(f"{k}={v}" for k, v in pairs)
		else:
			if style == "matrix" and not name:
				raise ToolError("param_style: the matrix style needs the parameter's name")
			text = _style_text(value, style, explode, name or "", str)
		made = super().__new__(cls, text)
		made.value, made.style, made.explode, made.name = value, style, explode, name
		made.reserved = reserved
		return made

	def query_pairs(self, key: str) -> list[tuple[str, str]]:
		"""The pairs a query sends for this value, already percent-encoded (`Encoded`).

		Args:
			key: The query parameter's name, when the template gave none.
		"""
		if self.style not in _QUERY_STYLES:  # a path style in a query: one value, its text
			return [(Encoded(_quote(self.name or key)), Encoded(_quote(str(self))))]
		pairs = style_pairs(
			self.value, self.style, self.explode, self.name or key, "query", self.reserved
		)
		return [(Encoded(k), Encoded(v)) for k, v in pairs]


def _param_style(
	value: Any, style: Any, explode: Any = False, name: Any = None, reserved: Any = False
) -> Any:
	"""The ``param_style`` filter outside URLs: a `Styled` text (empty when undefined)."""
	args = _style_args(style, explode, name, reserved)
	return "" if _undefined(value) else Styled(value, *args)


def _param_style_path(
	value: Any, style: Any, explode: Any = False, name: Any = None, reserved: Any = False
) -> str:
	"""The ``param_style`` filter in an endpoint's path: encoded text, delimiters left bare.

	Each value and name is one encoded piece, refused as `_segment` refuses one (empty, ``.``
	or ``..``), so no value can climb the path; ``reserved`` (a query's ``allowReserved``) has
	no effect here.
	"""
	style, explode, name, _ = _style_args(style, explode, name, reserved)
	if style in _QUERY_STYLES:
		raise ToolError(f"param_style: {style!r} is a query style, not one for a URL's path")
	if style == "matrix" and not name:
		raise ToolError("param_style: the matrix style needs the parameter's name")
	if _undefined(value):
		_segment("")  # refused, as an empty value in the path is
	return _PathSafe(_style_text(value, style, explode, name or "", _segment))


def _param_style_query(
	value: Any, style: Any, explode: Any = False, name: Any = None, reserved: Any = False
) -> str:
	"""The ``param_style`` filter after an endpoint's ``?``: the encoded pairs (or text)."""
	args = _style_args(style, explode, name, reserved)
	if _undefined(value):
		return ""
	styled = Styled(value, *args)
	return _PathSafe("&".join(f"{k}={v}" for k, v in styled.query_pairs(name or "")))


def _base64(value: Any) -> str:
	data = value if isinstance(value, bytes) else to_liquid_string(value, False).encode()
	return base64.b64encode(data).decode("ascii")


def _base64url(value: Any) -> str:
	data = value if isinstance(value, bytes) else to_liquid_string(value, False).encode()
	return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _url_encode(value: Any) -> str:
	try:
		return quote_plus(to_liquid_string(value, False))
	except UnicodeEncodeError:
		raise ToolError("url_encode: the value is not valid Unicode text") from None


def _file_source(name: str, value: Any) -> FileSource:
	source = _SOURCE.get()
	if source is None:
		raise ToolError(f"{name} can only read files in an HTTP tool run by an agent")
	if not isinstance(value, str) or not value:
		raise ToolError(f"{name} needs a file reference string (openmolt-file:<id>, ...)")
	return source


def _file_base64(value: Any, max_bytes: Any = None) -> str:
	source = _file_source("file_base64", value)
	try:
		limit = MAX_INLINE_FILE_BYTES if max_bytes is None else int(max_bytes)
	except (TypeError, ValueError):
		raise ToolError(f"file_base64's size cap must be a number, got {max_bytes!r}") from None
	return base64.b64encode(source.read(value, max_bytes=limit).data).decode("ascii")


def _file_media_type(value: Any) -> str:
	return str(_file_source("file_media_type", value).describe(value)["mediaType"])


@contextmanager
def reading_files(source: FileSource | None) -> Iterator[None]:
	"""Let the file filters read through ``source`` while the block runs (blocking reads).

	Args:
		source: The file store; None makes the filters fail with a clear message.
	"""
	token = _SOURCE.set(source)
	try:
		yield
	finally:
		_SOURCE.reset(token)


def holds_markup(text: str) -> bool:
	"""Whether a definition's string holds Liquid markup (an output ``{{`` or a tag ``{%``).

	Args:
		text: The string, as the definition writes it.
	"""
	return "{{" in text or "{%" in text


def uses_filter(value: Any, *names: str) -> bool:
	"""Whether any template string in a definition (dicts and lists walked) names a filter."""
	if isinstance(value, str):
		return holds_markup(value) and any(name in value for name in names)
	if isinstance(value, Mapping):
		return any(uses_filter(v, *names) for v in value.values())
	if isinstance(value, (list, tuple)):
		return any(uses_filter(v, *names) for v in value)
	return False


class _Env(Environment):
	# python-liquid has no limits on loops, output size or namespace size by default.
	loop_iteration_limit: ClassVar[int | None] = 10_000
	output_stream_limit: ClassVar[int | None] = 5_000_000
	local_namespace_limit: ClassVar[int | None] = 1_000_000
	context_depth_limit: ClassVar[int] = 20
	block_nesting_limit: ClassVar[int] = 20

	def __init__(self, extra: Mapping[str, Callable[..., Any]] | None = None) -> None:
		super().__init__()
		for name, func in {**_FILTERS, **(extra or {})}.items():
			self.add_filter(name, func)


class _PathOutputNode(OutputNode):
	"""An output statement in an endpoint: its value becomes one encoded path segment."""

	__slots__ = ()

	def render_to_output(self, context: Any, buffer: Any) -> int:
		value = self.expression.evaluate(context)
		return int(buffer.write(_url_value(value, _segment)))


class _PathOutput(Output):
	node_class = _PathOutputNode


class _QueryOutputNode(OutputNode):
	"""An output statement in an endpoint's query: its value is percent-encoded, may be empty."""

	__slots__ = ()

	def render_to_output(self, context: Any, buffer: Any) -> int:
		return int(buffer.write(_query_value(self.expression.evaluate(context))))


class _QueryOutput(Output):
	node_class = _QueryOutputNode


class _PathEnv(_Env):
	output: ClassVar[type[Output]] = _PathOutput

	def __init__(self, extra: Mapping[str, Callable[..., Any]] | None = None) -> None:
		super().__init__(extra)
		self.add_tag(self.output)
		# echo, liquid and cycle would write values without going through the encoding output
		# node (cycle writes its arguments as they are: '../../admin?k=v' would be sent raw).
		for tag in ("echo", "liquid", "cycle"):
			self.tags.pop(tag, None)
		# In a URL, param_style writes encoded text with the style's delimiters left bare.
		styled: Callable[..., str] = _param_style_query if self.query else _param_style_path
		self.add_filter("param_style", styled)

	query: ClassVar[bool] = False


class _QueryEnv(_PathEnv):
	output = _QueryOutput
	query = True


_FILTERS: dict[str, Callable[..., Any]] = {
	"json": _json,
	"param_style": _param_style,
	"base64": _base64,
	"base64url": _base64url,
	"file_base64": _file_base64,
	"file_media_type": _file_media_type,
	"path_segments": _path_segments,
	"url_encode": _url_encode,
}
BUILTIN_FILTERS = tuple(_FILTERS)
"""The filters every template can use, besides Liquid's own (an integration adds more)."""


class _Envs:
	"""The three environments (plain, path, query) of one set of extra filters."""

	__slots__ = ("__weakref__", "modes")

	def __init__(self, extra: Mapping[str, Callable[..., Any]] | None = None) -> None:
		self.modes: dict[str, _Env] = {
			"": _Env(extra),
			"path": _PathEnv(extra),
			"query": _QueryEnv(extra),
		}


_DEFAULT_ENVS = _Envs()
_ENV = _DEFAULT_ENVS.modes[""]
_FILTER_SETS: dict[tuple[tuple[str, Callable[..., Any]], ...], _Envs] = {}


def _envs(filters: Mapping[str, Callable[..., Any]] | None) -> _Envs:
	"""The environments for an integration's filters (made once per distinct set)."""
	if not filters:
		return _DEFAULT_ENVS
	key = tuple(sorted(filters.items(), key=lambda item: item[0]))
	envs = _FILTER_SETS.get(key)
	if envs is None:
		clash = sorted(set(filters) & set(_FILTERS))
		if clash:
			raise ToolError(f"filter(s) {clash} are built in; give yours another name")
		envs = _FILTER_SETS[key] = _Envs(filters)
	return envs


_MARKUP = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
_BLOCK = re.compile(r"\{%-?\s*(end)?(if|unless|for|case|capture|raw|comment|tablerow)\b")


def _split_query(source: str) -> tuple[str, str | None]:
	"""An endpoint split at its first plain-text ``?`` outside any block: (path, query)."""
	depth = 0
	at = 0
	for match in [*_MARKUP.finditer(source), None]:
		end = match.start() if match else len(source)
		if depth == 0:
			mark = source.find("?", at, end)
			if mark >= 0:
				return source[:mark], source[mark + 1 :]
		if match is None:
			break
		block = _BLOCK.match(match.group())
		if block:
			depth = max(depth - 1, 0) if block.group(1) else depth + 1
		at = match.end()
	return source, None


def _parts(path: str) -> tuple[str | int, ...]:
	return tuple(
		int(index) if index else (name or quoted) for name, index, quoted in _PART.findall(path)
	)


@lru_cache(maxsize=4096)
def _compile(source: str, mode: str = "", envs: _Envs = _DEFAULT_ENVS) -> tuple[str, Any]:
	exact = _EXACT.match(source)
	if exact:
		return "exact", (exact.group(1), _parts(exact.group(2)))
	styled = _EXACT_STYLE.match(source) if mode == "" else None
	if styled:
		root, path, style, explode, name, reserved = styled.groups()
		# A wrong style is said when the integration is defined.
		args = _style_args(style, explode == "true", name, reserved == "true")
		return "styled", (root, _parts(path), args)
	if "{{" not in source and "{%" not in source:
		return "literal", source
	try:
		template = envs.modes[mode].from_string(source)
	except LiquidError as exc:
		raise ToolError(f"invalid template {source[:80]!r} in the integration: {exc}") from exc
	file_filter = _EXACT_FILE.match(source)
	if file_filter:
		return "file", (file_filter.group(1), _parts(file_filter.group(2)), template)
	return "template", template


def parse_template(source: str, *, path: bool = False, filters: Filters | None = None) -> None:
	"""Parse a template string once (and cache it), so that a broken one fails early.

	`openmolt_core.integrations.Integration` calls this for every template of every HTTP tool
	when the integration is defined, so a typo or a Liquid keyword used as a field name
	(``input.limit``: write ``input["limit"]``) is reported before any agent runs.

	Args:
		source: The template.
		path: Parse it as an endpoint (every output statement is one path segment, or one
			query value after the endpoint's ``?``).
		filters: The integration's own filters (see `openmolt_core.integrations.extensions`).

	Raises:
		ToolError: The template does not parse, or a filter shadows a built-in one.
	"""
	envs = _envs(filters)
	if path:
		part, query = _split_query(source)
		_compile(part, "path", envs)
		if query is not None:
			_compile(query, "query", envs)
	else:
		_compile(source, "", envs)


def _accepts_null(schema: Any, root: Mapping[str, Any], depth: int = 0) -> bool:
	"""Whether a property's schema lets it be null (local ``$ref``s followed, a few levels)."""
	if not isinstance(schema, Mapping) or depth > 8:
		return False
	ref = schema.get("$ref")
	if isinstance(ref, str) and ref.startswith("#/"):
		target: Any = root
		for part in ref[2:].split("/"):
			target = target.get(part) if isinstance(target, Mapping) else None
		if _accepts_null(target, root, depth + 1):
			return True
	kind = schema.get("type")
	if kind == "null" or (isinstance(kind, list) and "null" in kind):
		return True
	if schema.get("nullable") is True or ("const" in schema and schema["const"] is None):
		return True
	values = schema.get("enum")
	if isinstance(values, list) and None in values:
		return True
	return any(
		_accepts_null(branch, root, depth + 1)
		for key in ("anyOf", "oneOf")
		if isinstance(schema.get(key), list)
		for branch in schema[key]
	)


def null_inputs(input_schema: Mapping[str, Any]) -> frozenset[str]:
	"""The top-level inputs whose schema lets them be null: the only ones a request sends as null.

	A service clears a field with an explicit ``null`` (Notion's ``"icon": null``, GitHub's
	``"milestone": null``); a tool says a field may be cleared so by letting its schema take null
	(``{"type": ["integer", "null"]}``, or a ``{"type": "null"}`` branch of ``anyOf``). Every other
	null is dropped, as an absent input is.

	Args:
		input_schema: The tool's input schema (an object schema).
	"""
	props = input_schema.get("properties")
	if not isinstance(props, Mapping):
		return frozenset()
	return frozenset(name for name, prop in props.items() if _accepts_null(prop, input_schema))


_NO_NULLS: frozenset[str] = frozenset()


def _lookup(
	data: Mapping[str, Any],
	root: str,
	parts: tuple[str | int, ...],
	nulls: frozenset[str] = _NO_NULLS,
) -> Any:
	value: Any = data.get(root, MISSING)
	for part in parts:
		if isinstance(part, int):
			ok = isinstance(value, list) and part < len(value)
		else:
			ok = isinstance(value, Mapping) and part in value
		value = value[part] if ok else MISSING
		if value is MISSING:
			return MISSING
	if value is None and root == "input" and len(parts) == 1 and parts[0] in nulls:
		return None  # the schema lets this input be null: the service reads it (a field cleared)
	return MISSING if value is None else value


def render_string(
	source: str, data: Mapping[str, Any], *, path: bool = False, filters: Filters | None = None
) -> Any:
	"""Render one template string.

	Args:
		source: The template, from an integration definition (never from a model).
		data: ``{"input": ..., "config": ..., "call": ...}``.
		path: Encode every output statement as one URL path segment (for endpoints).
		filters: The integration's own filters.

	Returns:
		The value itself for an exact ``{{ input.x }}`` (`MISSING` when absent), else text.

	Raises:
		ToolError: The template is invalid, or a limit or a filter refused the values.
	"""
	return _render_mode(source, data, "path" if path else "", _envs(filters))


def _render_mode(
	source: str, data: Mapping[str, Any], mode: str, envs: _Envs, nulls: frozenset[str] = _NO_NULLS
) -> Any:
	kind, compiled = _compile(source, mode, envs)
	if kind == "literal":
		return compiled
	if kind == "exact":
		root, parts = compiled
		value = _lookup(data, root, parts, nulls if mode == "" else _NO_NULLS)
		if mode == "path" and value is not MISSING:
			return _url_value(value, _segment)
		if mode == "query" and value is not MISSING:
			return _query_value(value)
		return value
	if kind == "styled":
		root, parts, args = compiled
		value = _lookup(data, root, parts)
		return MISSING if _undefined(value) or value == "" else Styled(value, *args)
	if kind == "file":
		root, parts, compiled = compiled
		if _lookup(data, root, parts) is MISSING:
			return _DROP_OBJECT
	try:
		return compiled.render(**data)
	except ToolError:
		raise
	except LiquidError as exc:
		raise ToolError(f"could not render {source[:80]!r}: {exc}") from exc


def _render(
	value: Any, data: Mapping[str, Any], top: bool, envs: _Envs, nulls: frozenset[str]
) -> Any:
	if isinstance(value, str):
		return _render_mode(value, data, "", envs, nulls)
	if isinstance(value, Mapping):
		out = {}
		for key, item in value.items():
			rendered = _render(item, data, False, envs, nulls)
			if rendered is _DROP_OBJECT and not top:
				return MISSING
			if rendered is not MISSING and rendered is not _DROP_OBJECT:
				out[key] = rendered
		# A nested object written with keys, all of whose values were missing optionals, is left
		# out rather than sent empty (TikTok's post_info, Outlook's location, Dropbox's options).
		return MISSING if value and not out and not top else out
	if isinstance(value, (list, tuple)):
		items = (_render(v, data, False, envs, nulls) for v in value)
		return [r for r in items if r is not MISSING and r is not _DROP_OBJECT]
	return value


def render(
	value: Any,
	data: Mapping[str, Any],
	*,
	filters: Filters | None = None,
	nulls: frozenset[str] = _NO_NULLS,
) -> Any:
	"""Render strings recursively through dicts and lists, dropping missing optionals.

	A dict key or list item whose value renders to `MISSING` is left out, and so is a nested dict
	whose keys were all left out (an object is never sent empty unless written as ``{}``). A
	nested dict holding an exact file filter (``{{ input.x | file_base64 }}``) over a missing
	input is left out as a whole; at the top level (headers, query, body) only that key is.
	Non-string leaves (numbers, booleans, None) are kept as they are.

	Args:
		value: The definition's value (a body, the query, the headers).
		data: ``{"input": ..., "config": ..., "call": ...}``.
		filters: The integration's own filters.
		nulls: Top-level input names whose null an exact ``{{ input.x }}`` keeps (renders to
			None) rather than drops: the tool's `null_inputs`, for a JSON body.
	"""
	rendered = _render(value, data, True, _envs(filters), nulls)
	return MISSING if rendered is _DROP_OBJECT else rendered


def render_endpoint(source: str, data: Mapping[str, Any], *, filters: Filters | None = None) -> str:
	"""Render an endpoint: each value is URL-encoded as one path segment; ``.``/``..`` refused.

	A value is refused too when ``.`` or ``..`` stands between its slashes or backslashes
	(``../admin`` is sent as ``..%2Fadmin``, which a server that decodes ``%2F`` before it
	normalises the path would climb with).

	After a plain-text ``?`` (a query written into the endpoint), each value is percent-encoded
	as a query value instead, and may be empty. ``filters`` are the integration's own filters.

	Raises:
		ToolError: A value would be empty, ``.`` or ``..`` as a segment, or the template failed.
	"""
	envs = _envs(filters)
	part, query = _split_query(source)
	value = _render_mode(part, data, "path", envs)
	if value is MISSING:
		raise ToolError(f"the endpoint {source[:80]!r} needs an input value that is missing")
	check_empty_segments(part, str(value), "the endpoint")
	if query is None:
		return str(value)
	rest = _render_mode(query, data, "query", envs)
	return f"{value}?{'' if rest is MISSING else rest}"
