"""Response decoding for HTTP tools: JSON, text, XML (safely, to a dict), binary, and errors."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from email.message import Message
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote
from xml.parsers import expat

from openmolt_core.errors import ToolError

if TYPE_CHECKING:
	import httpx

	from openmolt_core.files import FileStore

__all__ = ["MAX_DETAIL_CHARS", "decode", "error_message", "parse_xml", "trimmed_details"]

MAX_DETAIL_CHARS = 2000
"""The most characters of an error body shown to the model."""

_BINARY_TEXT = re.compile(r"^(text/|application/(json|xml|.*\+json|.*\+xml|x-www-form-urlencoded))")


def parse_xml(data: bytes) -> dict[str, Any]:
	"""Parse XML into a dict, refusing DTDs and entity declarations (no XXE, no entity bombs).

	``<a x="1"><b>t</b><b>u</b></a>`` gives ``{"a": {"@x": "1", "b": ["t", "u"]}}``. Namespace
	prefixes are kept in names; ``xmlns`` attributes are left out; text next to children or
	attributes goes under ``#text``.

	Raises:
		ToolError: The XML is malformed or declares a DTD or entities.
	"""
	parser = expat.ParserCreate()
	parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
	stack: list[tuple[str, dict[str, Any], list[str]]] = [("", {}, [])]

	def refuse(*_: Any) -> None:
		raise ToolError("refused XML with a DTD or entity declaration")

	def start(name: str, attrs: dict[str, str]) -> None:
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

	parser.StartDoctypeDeclHandler = refuse
	parser.EntityDeclHandler = refuse
	parser.UnparsedEntityDeclHandler = refuse
	parser.ExternalEntityRefHandler = refuse
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
			return json.loads(raw)
		except ValueError:
			return raw
	return raw


def _file_name(response: httpx.Response) -> str:
	disposition = response.headers.get("content-disposition")
	if disposition:
		msg = Message()
		msg["content-disposition"] = disposition
		name = msg.get_filename()
		if name:
			return name.replace("/", "_").replace("\\", "_")
	tail = unquote(response.request.url.path.rsplit("/", 1)[-1]) if response.request else ""
	return tail.replace("\\", "_") or "download"


def _text(data: bytes, response: httpx.Response) -> str:
	return data.decode(response.charset_encoding or "utf-8", errors="replace")


async def decode(
	response: httpx.Response,
	data: bytes,
	fmt: str,
	*,
	store: FileStore | None,
	response_headers: Sequence[str] = (),
) -> Any:
	"""Decode a 2xx response in a response format.

	Args:
		response: The response (headers, status).
		data: Its body.
		fmt: ``json``, ``text``, ``xml`` or ``binary``.
		store: Where binary bodies are saved.
		response_headers: Response headers to include in the output.

	Returns:
		For ``binary``: ``{"file", "mediaType", "size", "name"}``. For an empty body:
		``{"ok": true, "status": <code>}``. Otherwise the decoded body. When ``response_headers``
		are listed, the binary and empty outputs gain a ``headers`` key, and any other output
		becomes ``{"body": <decoded>, "headers": {...}}``.
	"""
	headers = {n: v for n in response_headers if (v := _header_value(response, n)) is not None}
	media_type = response.headers.get("content-type", "application/octet-stream").split(";")[0]
	value: Any
	if fmt == "binary" and data:
		if store is None:
			raise ToolError("binary responses need a file store; use the tool through an agent")
		value = await store.save(data, media_type=media_type, name=_file_name(response))
		return {**value, "headers": headers} if headers else value
	if not data.strip():
		value = {"ok": True, "status": response.status_code}
		return {**value, "headers": headers} if headers else value
	if fmt == "json":
		try:
			value = json.loads(data)
		except ValueError:
			value = _text(data, response)
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


def trimmed_details(response: httpx.Response, data: bytes) -> Any:
	"""The error body for the model: parsed JSON or XML when small enough, else trimmed text."""
	text = _text(data, response)
	ctype = response.headers.get("content-type", "")
	if "json" in ctype or text[:1] in "{[":
		try:
			parsed = json.loads(text)
		except ValueError:
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
		return f"{text[:MAX_DETAIL_CHARS]}… [trimmed {len(text) - MAX_DETAIL_CHARS} characters]"
	return text or None
