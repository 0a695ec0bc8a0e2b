"""Response decoding for HTTP tools: JSON, text, XML (safely, to a dict), binary, and errors.

Also: base64 media inside JSON saved as files (``response_files``), and failures that services
report inside 200 replies (an integration's ``response_checks``).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import mimetypes
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from email.message import Message
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote
from xml.parsers import expat

from openmolt_core._support.masking import masked_excerpt
from openmolt_core.errors import ToolError
from openmolt_core.integrations._encode import plain_file_name

if TYPE_CHECKING:
	import httpx

	from openmolt_core.files import FileAccess

__all__ = [
	"MAX_DEPTH",
	"MAX_DETAIL_CHARS",
	"decode",
	"error_message",
	"error_messages",
	"graphql_errors",
	"inline_files",
	"loads_json",
	"parse_xml",
	"trimmed_details",
]

MAX_DETAIL_CHARS = 2000
"""The most characters of an error body shown to the model."""

MAX_DEPTH = 100
"""The deepest nesting of arrays, objects or elements a JSON or XML reply may have.

Deeper replies are refused as a tool error: a reply nested thousands deep would otherwise exhaust
the interpreter's recursion limit wherever it is walked later (serialised, validated, redacted)
and end the whole run.
"""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def _too_deep(what: str) -> ToolError:
	return ToolError(f"the {what} is nested more than {MAX_DEPTH} levels deep; refused")


def _json_depth_ok(data: bytes, limit: int) -> bool:
	"""Whether JSON text nests at most ``limit`` deep (strings ignored; fast on large bodies)."""
	brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKET)
	if brackets.count(b"[") + brackets.count(b"{") <= limit:
		return True
	for _ in range(limit):
		# Each pass removes the innermost pairs, so it takes one pass per level.
		shorter = brackets.replace(b"[]", b"").replace(b"{}", b"")
		if not shorter:
			return True
		if shorter == brackets:  # unbalanced: json.loads reports it
			return True
		brackets = shorter
	return False


def loads_json(data: bytes | str, *, what: str = "reply") -> Any:
	"""``json.loads`` refusing more than `MAX_DEPTH` levels of nesting.

	Args:
		data: The JSON text.
		what: What it is, for the message.

	Raises:
		ToolError: The value nests too deep.
		ValueError: It is not JSON.
	"""
	raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
	if not _json_depth_ok(raw, MAX_DEPTH):
		raise _too_deep(what)
	try:
		return json.loads(data)
	except RecursionError:
		raise _too_deep(what) from None


_BINARY_TEXT = re.compile(r"^(text/|application/(json|xml|.*\+json|.*\+xml|x-www-form-urlencoded))")


def parse_xml(data: bytes) -> dict[str, Any]:
	"""Parse XML into a dict, refusing DTDs and entity declarations (no XXE, no entity bombs).

	``<a x="1"><b>t</b><b>u</b></a>`` gives ``{"a": {"@x": "1", "b": ["t", "u"]}}``. Namespace
	prefixes are kept in names; ``xmlns`` attributes are left out; text next to children or
	attributes goes under ``#text``.

	Raises:
		ToolError: The XML is malformed, declares a DTD or entities, or nests deeper than
			`MAX_DEPTH`.
	"""
	parser = expat.ParserCreate()
	parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
	stack: list[tuple[str, dict[str, Any], list[str]]] = [("", {}, [])]

	def refuse(*_: Any) -> None:
		raise ToolError("refused XML with a DTD or entity declaration")

	def start(name: str, attrs: dict[str, str]) -> None:
		if len(stack) > MAX_DEPTH:
			raise _too_deep("XML reply")
		node = {f"@{k}": v for k, v in attrs.items() if k != "xmlns" and not k.startswith("xmlns:")}
		stack.append((name, node, []))

	def end(name: str) -> None:
		_, node, text = stack.pop()
		joined = "".join(text).strip()
		value: Any
		if not node:
			value = joined
		else:
			if joined:
				node["#text"] = joined
			value = node
		parent = stack[-1][1]
		if name in parent:
			existing = parent[name]
			if isinstance(existing, list):
				existing.append(value)
			else:
				parent[name] = [existing, value]
		else:
			parent[name] = value

	# A handler that raises aborts the parse: a DTD or an entity declaration stops it at once.
	parser.StartDoctypeDeclHandler = refuse
	parser.EntityDeclHandler = refuse
	parser.UnparsedEntityDeclHandler = refuse
	parser.ExternalEntityRefHandler = refuse  # type: ignore[assignment]  # the stub wants an int return
	parser.StartElementHandler = start
	parser.EndElementHandler = end
	parser.CharacterDataHandler = lambda text: stack[-1][2].append(text)
	try:
		parser.Parse(data, True)
	except expat.ExpatError as exc:
		raise ToolError(f"the service sent malformed XML: {exc}") from exc
	return stack[0][1]


def _header_value(response: httpx.Response, name: str) -> Any:
	raw = response.headers.get(name)
	if raw is None:
		return None
	if raw[:1] in "{[":
		try:
			return loads_json(raw, what="header")
		except (ValueError, ToolError):
			return raw
	return raw


def _listed_headers(response: httpx.Response, names: Sequence[str]) -> dict[str, Any]:
	"""The listed response headers; a name ending in ``*`` takes every header with that prefix."""
	found: dict[str, Any] = {}
	for name in names:
		if name.endswith("*"):
			prefix = name[:-1].lower()
			for key in response.headers:
				if key.lower().startswith(prefix):
					found[key.lower()] = _header_value(response, key)
		elif (value := _header_value(response, name)) is not None:
			found[name] = value
	return found


def _file_name(response: httpx.Response) -> str:
	disposition = response.headers.get("content-disposition")
	if disposition:
		msg = Message()
		msg["content-disposition"] = disposition
		name = msg.get_filename()
		if name:
			return plain_file_name(name, "download")
	tail = unquote(response.request.url.path.rsplit("/", 1)[-1]) if response.request else ""
	return plain_file_name(tail, "download")


# Codecs a service must not choose: punycode decodes in quadratic time (an 8 MB reply would hold
# the event loop for hours), and idna refuses errors="replace".
_NOT_CHARSETS = frozenset({"punycode", "idna"})


def _charset(response: httpx.Response) -> str:
	"""The reply's declared charset when it names a text encoding fit for a body, else UTF-8."""
	name = response.charset_encoding
	try:
		info = codecs.lookup(name or "utf-8")
	except LookupError:
		return "utf-8"
	if not info._is_text_encoding or info.name in _NOT_CHARSETS:  # base64, zlib, rot13, ...
		return "utf-8"
	return info.name


def _text(data: bytes, response: httpx.Response) -> str:
	return data.decode(_charset(response), errors="replace")


def _b64decode(text: str) -> bytes | None:
	"""Standard or URL-safe base64, padding optional; None when it is not base64."""
	compact = re.sub(r"\s+", "", text).replace("-", "+").replace("_", "/")
	try:
		return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
	except (binascii.Error, ValueError):
		return None


async def _save_payload(
	payload: Any, store: FileAccess, beside: Mapping[str, Any] | None = None
) -> Any:
	"""A base64 string, or an object with ``data`` and ``mimeType``, saved as a file reference.

	``beside`` is the object holding a base64 string: when it gives a ``contentType`` (or
	``mimeType``), that and its ``name`` (or ``filename``) describe the file, as Microsoft Graph's
	fileAttachment does.
	"""
	media_type = "application/octet-stream"
	name = ""
	text = payload
	if isinstance(payload, dict):
		text = payload.get("data")
		media_type = str(payload.get("mimeType") or payload.get("mime_type") or media_type)
	elif beside is not None:
		given = beside.get("contentType") or beside.get("mimeType")
		if isinstance(given, str) and given:
			media_type = given
			named = beside.get("name") or beside.get("filename")
			name = named if isinstance(named, str) else ""
	if not isinstance(text, str) or not text:
		return payload
	data = _b64decode(text)
	if data is None:
		return payload
	ext = mimetypes.guess_extension(media_type) or ".bin"
	return await store.save(data, media_type=media_type, name=name or f"file{ext}")


async def _walk(node: Any, steps: list[tuple[str, bool]], store: FileAccess) -> Any:
	"""Replace the payloads at ``steps`` below ``node``; returns the (possibly new) node."""
	if not steps:
		return await _save_payload(node, store)
	(key, each), rest = steps[0], steps[1:]
	if not isinstance(node, dict) or key not in node:
		return node
	child = node[key]
	if each:
		if isinstance(child, list):
			node[key] = [await _walk(item, rest, store) for item in child]
	elif rest:
		node[key] = await _walk(child, rest, store)
	else:
		node[key] = await _save_payload(child, store, node)
	return node


async def inline_files(value: Any, paths: Sequence[str], store: FileAccess | None) -> Any:
	"""Save the base64 payloads at ``paths`` of a JSON value to the store, in place.

	A path is dotted keys where ``key[]`` walks every item of a list
	(``candidates[].content.parts[].inlineData``). Missing paths are skipped. A payload is a base64
	string (standard or URL-safe, padding optional) or an object with ``data`` and
	``mimeType``/``mime_type``; it becomes ``{"file", "mediaType", "size", "name"}``.

	Raises:
		ToolError: There is no file store.
	"""
	if not paths:
		return value
	if store is None:
		raise ToolError("response_files need a file store; use the tool through an agent")
	for path in paths:
		steps = [(part.removesuffix("[]"), part.endswith("[]")) for part in path.split(".")]
		value = await _walk(value, steps, store)
	return value


def error_messages(errors: Any) -> list[str]:
	"""The messages in an error value: a string, an object's message, or a list of either.

	Args:
		errors: The value (``errors`` of a GraphQL reply, Slack's ``error``).
	"""
	if isinstance(errors, str):
		return [errors]
	if isinstance(errors, dict):
		found = _find_message(errors)
		return [found] if found else []
	if isinstance(errors, list):
		return [m for item in errors for m in error_messages(item)]
	return []


def graphql_errors(value: Any) -> str | None:
	"""A GraphQL reply's failure: a non-empty top-level ``errors`` with ``data`` null or absent.

	Partial results (``errors`` next to ``data``) are returned as they are. A
	`openmolt_core.integrations.extensions.ResponseCheck` for GraphQL APIs (Shopify's Admin API).

	Args:
		value: The decoded reply.
	"""
	if not isinstance(value, dict):
		return None
	errors = value.get("errors")
	if errors and value.get("data") is None:
		return "; ".join(error_messages(errors)) or "GraphQL errors"
	return None


def throttle_finder(
	checks: Sequence[Callable[[Any], float | None]],
) -> Callable[[httpx.Response, bytes], float | None] | None:
	"""What the engine asks of each 2xx reply when an integration has ``throttle_checks``.

	The finder decodes a JSON body and returns the first check's wait (seconds; 0 for the
	retry policy's backoff), or None when no check finds a throttle or the body is not JSON.
	None when there are no checks, so the engine decodes nothing twice for other services.

	Args:
		checks: The integration's ``throttle_checks``
			(`openmolt_core.integrations.extensions.ThrottleCheck`).
	"""
	if not checks:
		return None

	def throttled(response: httpx.Response, data: bytes) -> float | None:
		try:
			value = loads_json(data)
		except ValueError:
			return None
		return next((wait for check in checks if (wait := check(value)) is not None), None)

	return throttled


_REPRESENTATION = frozenset({200, 203, 206})
"""The 2xx statuses whose body is the requested resource itself (RFC 9110 15.3): empty, an
empty file."""


def _whole_file(response: httpx.Response) -> bool:
	"""Whether an empty body is an empty file: a representation's status, not a HEAD's reply."""
	try:
		head = response.request.method == "HEAD"
	except RuntimeError:  # a response built without its request (a test's)
		head = False
	return response.status_code in _REPRESENTATION and not head


async def decode(
	response: httpx.Response,
	data: bytes,
	fmt: str,
	*,
	store: FileAccess | None,
	response_headers: Sequence[str] = (),
	response_files: Sequence[str] = (),
	checks: Sequence[Callable[[Any], str | None]] = (),
	secrets: Iterable[str] = (),
) -> Any:
	"""Decode a 2xx response in a response format.

	Args:
		response: The response (headers, status).
		data: Its body.
		fmt: ``json``, ``text``, ``xml`` or ``binary``.
		store: Where binary bodies (and ``response_files`` payloads) are saved.
		response_headers: Response headers to include in the output; a name ending in ``*``
			(``x-amz-meta-*``) includes every header with that prefix, by its lowercase name.
		response_files: Paths of base64 payloads in a JSON body to save (`inline_files`).
		checks: The integration's checks of 2xx JSON replies (``response_checks``): each
			returns the failure a reply reports, or None.
		secrets: The secrets to mask before a failure's long body is cut (`trimmed_details`).

	Returns:
		For ``binary``: ``{"file", "mediaType", "size", "name"}`` (an empty body too when the
		status carries the file itself: 200, 203, 206, but for a HEAD). For another empty body:
		``{"ok": true, "status": <code>}``. Otherwise the decoded body. When ``response_headers``
		are listed, the binary and empty outputs gain a ``headers`` key, and any other output
		becomes ``{"body": <decoded>, "headers": {...}}``.

	Raises:
		ToolError: The body cannot be decoded, or a check finds a reported failure.
	"""
	headers = _listed_headers(response, response_headers)
	media_type = response.headers.get("content-type", "application/octet-stream").split(";")[0]
	value: Any
	# A download's empty 200 is an empty file (its reference is what the agent passes on); an
	# empty 202 (not ready), 201 (made elsewhere), 204 or 205 (no content), or a HEAD's reply
	# (never a body) holds no file.
	if fmt == "binary" and (data or _whole_file(response)):
		if store is None:
			raise ToolError("binary responses need a file store; use the tool through an agent")
		value = await store.save(data, media_type=media_type, name=_file_name(response))
		return {**value, "headers": headers} if headers else value
	if not data.strip():
		value = {"ok": True, "status": response.status_code}
		return {**value, "headers": headers} if headers else value
	if fmt == "json":
		try:
			value = loads_json(data)
		except ValueError:
			value = _text(data, response)
		failure = next((found for check in checks if (found := check(value))), None)
		if failure:
			raise ToolError(
				f"the service reported an error: {failure}",
				status_code=response.status_code,
				details=_trim(value, secrets),
			)
		value = await inline_files(value, response_files, store)
	elif fmt == "xml":
		value = parse_xml(data)
	elif fmt == "text" or _BINARY_TEXT.match(media_type):
		value = _text(data, response)
	else:
		raise ToolError(f"unknown response format {fmt!r}")
	return {"body": value, "headers": headers} if headers else value


def _find_message(value: Any) -> str | None:
	if isinstance(value, str):
		return value or None
	if not isinstance(value, dict):
		return None
	error = value.get("error")
	if isinstance(error, dict):
		found = _find_message(error.get("message")) or _find_message(error.get("Message"))
		if found:
			return found
	for key in ("message", "Message", "error_description", "description", "detail", "title"):
		found = _find_message(value.get(key))
		if found:
			return found
	errors = value.get("errors")
	if isinstance(errors, list) and errors:
		first = errors[0]
		return _find_message(first.get("message") if isinstance(first, dict) else first)
	if isinstance(error, str):
		return error
	for nested in value.values():
		if isinstance(nested, dict):
			found = _find_message(nested)
			if found:
				return found
	return None


def error_message(body: Any) -> str | None:
	"""The service's error message, from the usual places in an error body."""
	return _find_message(body)


def _trim(value: Any, secrets: Iterable[str]) -> Any:
	text = json.dumps(value, ensure_ascii=False, default=str)
	if len(text) <= MAX_DETAIL_CHARS:
		return value
	return _excerpt(text, secrets)


def _excerpt(text: str, secrets: Iterable[str]) -> str:
	"""A long body's start: masked whole, then cut (a secret across the cut leaves no prefix)."""
	note = f"… [trimmed {len(text) - MAX_DETAIL_CHARS} characters]"
	return masked_excerpt(text, MAX_DETAIL_CHARS, secrets, more=note)


def trimmed_details(response: httpx.Response, data: bytes, secrets: Iterable[str] = ()) -> Any:
	"""The error body for the model: parsed JSON or XML when small enough, else trimmed text.

	Args:
		response: The response (its content type and encoding).
		data: Its body.
		secrets: The secrets to mask before a long body is cut (beside those the process
			knows: `openmolt_core._support.masking.masked_excerpt`).
	"""
	text = _text(data, response)
	ctype = response.headers.get("content-type", "")
	if "json" in ctype or text[:1] in "{[":
		try:
			parsed = loads_json(text)
		except (ValueError, ToolError):
			parsed = None
		if parsed is not None and len(text) <= MAX_DETAIL_CHARS:
			return parsed
	if "xml" in ctype or text.startswith("<?xml"):
		try:
			parsed = parse_xml(data)
		except ToolError:
			parsed = None
		if parsed is not None and len(text) <= MAX_DETAIL_CHARS:
			return parsed
	if len(text) > MAX_DETAIL_CHARS:
		return _excerpt(text, secrets)
	return text or None
