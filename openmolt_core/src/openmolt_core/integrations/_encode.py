"""Request encoding for HTTP tools: query strings, form bodies, multipart, uploads."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus, urlencode

import httpx

from openmolt_core.errors import ToolError

if TYPE_CHECKING:
	from openmolt_core.files import FileStore, StoredFile
	from openmolt_core.integrations.model import ArrayStyle

__all__ = [
	"EncodedBody",
	"append_query",
	"encode_body",
	"flatten",
	"query_pairs",
	"set_query",
]

EncodedBody = tuple[bytes | None, str | None]
"""The body bytes (None: no body) and the Content-Type to send (None: leave as is)."""


def _scalar(value: Any) -> str:
	if isinstance(value, bool):
		return "true" if value else "false"
	if isinstance(value, (dict, list)):
		return json.dumps(value, separators=(",", ":"))
	return str(value)


def _is_scalar(value: Any) -> bool:
	return not isinstance(value, (Mapping, list, tuple))


def flatten(value: Any, prefix: str = "", arrays: ArrayStyle = "indices") -> list[tuple[str, str]]:
	"""Flatten nested values into bracketed keys, the way Stripe and Airtable read them.

	``{"metadata": {"k": "v"}, "items": [{"price": "p"}]}`` gives ``metadata[k]=v`` and
	``items[0][price]=p``. Booleans become ``true``/``false``; None is left out.

	Args:
		value: The value to flatten.
		prefix: The key of ``value`` itself.
		arrays: How lists of scalars are written (see `ArrayStyle`); lists holding objects or
			lists always use indices.
	"""
	out: list[tuple[str, str]] = []
	if isinstance(value, Mapping):
		for key, item in value.items():
			out.extend(flatten(item, f"{prefix}[{key}]" if prefix else str(key), arrays))
	elif isinstance(value, (list, tuple)):
		if arrays != "indices" and prefix and all(_is_scalar(item) for item in value):
			key = prefix if arrays == "repeat" else f"{prefix}[]"
			out.extend((key, _scalar(item)) for item in value if item is not None)
			return out
		for index, item in enumerate(value):
			out.extend(flatten(item, f"{prefix}[{index}]", arrays))
	elif value is not None:
		out.append((prefix, _scalar(value)))
	return out


def query_pairs(params: Mapping[str, Any]) -> list[tuple[str, str]]:
	"""Query parameters as pairs: lists of scalars repeat the key, dicts use bracketed keys.

	Values that are None or the empty string are dropped.
	"""
	out: list[tuple[str, str]] = []
	for key, value in params.items():
		if value is None or value == "":
			continue
		if isinstance(value, (list, tuple)) and all(
			not isinstance(v, (dict, list, tuple)) for v in value
		):
			out.extend((key, _scalar(v)) for v in value if v is not None)
		else:
			out.extend(flatten(value, key))
	return out


def append_query(url: httpx.URL, pairs: list[tuple[str, str]]) -> httpx.URL:
	"""Append encoded pairs to a URL's query, keeping the existing query byte for byte.

	httpx's ``params=`` replaces the query (0.28) and its merge rewrites a bare ``?delete`` as
	``?delete=``, which S3 subresources do not accept.
	"""
	if not pairs:
		return url
	extra = urlencode(pairs)
	query = url.query.decode("ascii")
	return url.copy_with(query=f"{query}&{extra}".encode() if query else extra.encode())


def set_query(url: httpx.URL, pairs: list[tuple[str, str]]) -> httpx.URL:
	"""Set query parameters: drop any present with these names, then append the pairs.

	Setting the same pairs twice (an auth flow running again on a retry) gives the same URL; the
	rest of the query is kept byte for byte.
	"""
	if not pairs:
		return url
	names = {name for name, _ in pairs}
	query = url.query.decode("ascii")
	kept = [
		part
		for part in query.split("&")
		if part and unquote_plus(part.split("=", 1)[0]) not in names
	]
	return append_query(url.copy_with(query="&".join(kept).encode()), pairs)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MEDIA_TYPE = re.compile(
	r"[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+"
	r"(\s*;\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+=(\"[^\"\x00-\x1f\x7f]*\"|[!#$%&'*+.^_`|~0-9A-Za-z-]+))*"
)


def _quote_header(value: str) -> str:
	return _CONTROL.sub("", value.replace("\\", "\\\\").replace('"', '\\"'))


def _media_type(stored: StoredFile) -> str:
	"""A file's media type for a part header, refused unless it is a plain RFC 9110 media type."""
	if not _MEDIA_TYPE.fullmatch(stored.media_type):
		raise ToolError(
			"the file's media type is not a valid media type (type/subtype); refused, since it "
			"would go into a header"
		)
	return stored.media_type


def _multipart(
	fields: list[tuple[str, str]], files: list[tuple[str, StoredFile]]
) -> tuple[bytes, str]:
	boundary = f"openmolt-{secrets.token_hex(12)}"
	chunks: list[bytes] = []
	for name, text in fields:
		chunks.append(
			f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote_header(name)}"\r\n\r\n'.encode()
			+ text.encode()
			+ b"\r\n"
		)
	for name, stored in files:
		head = (
			f"--{boundary}\r\nContent-Disposition: form-data; "
			f'name="{_quote_header(name)}"; filename="{_quote_header(stored.name)}"\r\n'
			f"Content-Type: {_media_type(stored)}\r\n\r\n"
		)
		chunks.append(head.encode() + stored.data + b"\r\n")
	chunks.append(f"--{boundary}--\r\n".encode())
	return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


def _related(metadata: Any, media: StoredFile) -> tuple[bytes, str]:
	boundary = f"openmolt-{secrets.token_hex(12)}"
	body = (
		f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".encode()
		+ json.dumps(metadata or {}, ensure_ascii=False).encode()
		+ f"\r\n--{boundary}\r\nContent-Type: {_media_type(media)}\r\n\r\n".encode()
		+ media.data
		+ f"\r\n--{boundary}--\r\n".encode()
	)
	return body, f"multipart/related; boundary={boundary}"


async def _open(store: FileStore | None, reference: Any, what: str) -> StoredFile:
	if store is None:
		raise ToolError(f"{what} needs a file store; use the tool through an OpenMolt agent")
	if not isinstance(reference, str):
		raise ToolError(f"{what} must be a file reference string, got {type(reference).__name__}")
	return await store.open(reference)


async def encode_body(
	fmt: str,
	body: Any,
	files: Mapping[str, Any],
	store: FileStore | None,
	*,
	arrays: ArrayStyle = "indices",
) -> EncodedBody:
	"""Encode a rendered body in a request format.

	Args:
		fmt: ``json``, ``form-data``, ``multipart``, ``multipart-related``, ``text`` or ``binary``.
		body: The rendered body.
		files: Rendered file fields (field name to file reference), for form-data and multipart.
		store: Resolves file references.
		arrays: How form-data and multipart write lists of scalars.

	Raises:
		ToolError: A file reference cannot be resolved, or the body does not fit the format.
	"""
	if fmt in ("form-data", "multipart") and (files or fmt == "multipart"):
		opened = [
			(name, await _open(store, ref, f"file field {name!r}")) for name, ref in files.items()
		]
		return _multipart(flatten(body or {}, arrays=arrays), opened)
	if body is None:
		return None, None
	if fmt == "json":
		data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
		return data, "application/json"
	if fmt == "form-data":
		if not isinstance(body, Mapping):
			raise ToolError("a form-data body must be an object")
		return urlencode(flatten(body, arrays=arrays)).encode(), "application/x-www-form-urlencoded"
	if fmt == "multipart-related":
		if not isinstance(body, Mapping) or "media" not in body:
			raise ToolError('a multipart-related body needs {"metadata": {...}, "media": <file>}')
		media = await _open(store, body["media"], "media")
		return _related(body.get("metadata"), media)
	if fmt == "text":
		text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
		return text.encode(), "text/plain; charset=utf-8"
	if fmt == "binary":
		stored = await _open(store, body, "the binary body")
		return stored.data, _media_type(stored)
	raise ToolError(f"unknown request format {fmt!r}")
