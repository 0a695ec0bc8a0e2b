"""Request encoding for HTTP tools: query strings, and the built-in request formats.

The built-in formats are ``json``, ``form-data``, ``multipart``, ``openapi-form``,
``openapi-multipart``, ``text`` and ``binary``; an integration adds its own (or replaces one)
with ``encoders`` (see `openmolt_core.integrations.extensions`). `form_encoder` builds a
``form-data`` encoder that writes lists another way, and `multipart_body` and `flatten` are the
pieces the built-ins use. ``openapi-form`` and ``openapi-multipart`` write each field as an
OpenAPI document's ``encoding`` says (the tool's ``encoding``; `openmolt_core.integrations._form`).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote_plus, urlencode

import httpx

from openmolt_core.errors import ToolError
from openmolt_core.integrations._form import (
	MEDIA_TYPE,
	ArrayStyle,
	FieldEncoding,
	flatten,
	form_pairs,
	multipart_fields,
	scalar_text,
)

if TYPE_CHECKING:
	from openmolt_core.files import FileAccess, StoredFile

__all__ = [
	"ArrayStyle",
	"BodyEncoder",
	"EncodeRequest",
	"Encoded",
	"EncodedBody",
	"append_query",
	"checked_media_type",
	"encode_body",
	"flatten",
	"form_encoder",
	"multipart_body",
	"open_file",
	"plain_file_name",
	"query_pairs",
	"set_query",
]


@dataclass(frozen=True, slots=True)
class EncodedBody:
	"""A request body ready to send.

	Args:
		content: The body bytes; None sends no body.
		content_type: The ``Content-Type`` to send; None leaves the tool's own header.
		headers: More headers computed from the body (a checksum, metadata); every one is
			checked like any other header before it is sent.
	"""

	content: bytes | None
	content_type: str | None = None
	headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EncodeRequest:
	"""What an encoder may use besides the rendered body.

	Args:
		files: The tool's rendered ``files`` fields (field name to a file reference).
		store: The agent's file store, which resolves file references.
		encoding: The tool's ``encoding``: how each field of an ``openapi-form`` or
			``openapi-multipart`` body is written (field name to a `FieldEncoding`).
	"""

	files: Mapping[str, Any]
	store: FileAccess | None
	encoding: Mapping[str, FieldEncoding] = field(default_factory=dict)

	async def open(self, reference: Any, what: str) -> StoredFile:
		"""The bytes, media type and name behind a file reference.

		Args:
			reference: The reference (``openmolt-file:<id>``, a data URL, ``fileSystem:<path>``).
			what: What the reference is, for the message (``"media"``).

		Raises:
			ToolError: There is no file store, or the reference cannot be resolved.
		"""
		return await open_file(self.store, reference, what)


class Encoded(str):
	"""Query text already percent-encoded, with the delimiters of its style left as they are.

	`query_pairs` gives a pair of two for a value a template serialised with ``param_style``
	(``color=blue,black`` keeps its comma: encoded, it would read as one item); `append_query`
	sends such a pair as it is.
	"""

	__slots__ = ()


def query_pairs(params: Mapping[str, Any]) -> list[tuple[str, str]]:
	"""Query parameters as pairs: lists of scalars repeat the key, dicts use bracketed keys.

	Values that are None or the empty string are dropped. A value a template serialised with
	``param_style`` gives its own pairs, already encoded (`Encoded`), named by its key.
	"""
	out: list[tuple[str, str]] = []
	for key, value in params.items():
		if value is None or value == "":
			continue
		styled = getattr(value, "query_pairs", None)  # `templating.Styled`
		if callable(styled):
			out.extend(styled(key))
			continue
		if isinstance(value, (list, tuple)) and all(
			not isinstance(v, (dict, list, tuple)) for v in value
		):
			out.extend((key, scalar_text(v)) for v in value if v is not None)
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
	extra = "&".join(
		f"{name}={value}"
		if isinstance(name, Encoded) and isinstance(value, Encoded)
		else urlencode([(name, value)])
		for name, value in pairs
	)
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


def _quote_header(value: str) -> str:
	return _CONTROL.sub("", value.replace("\\", "\\\\").replace('"', '\\"'))


_SEPARATOR = re.compile(r"[/\\]")
_NAME_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def plain_file_name(name: str, default: str = "file") -> str:
	"""A file name that names no path: slashes and backslashes become ``_``, controls go.

	Used for every name a file is saved or uploaded under (a download's ``Content-Disposition``
	or URL, a multipart part's ``filename``), which the service or a later reader may take as a
	path.

	Args:
		name: The name as found.
		default: The name to use when nothing usable is left, or it is ``.`` or ``..``.
	"""
	plain = _SEPARATOR.sub("_", _NAME_CONTROL.sub("", name)).strip()
	return default if plain in ("", ".", "..") else plain


def checked_media_type(stored: StoredFile) -> str:
	"""A file's media type for a header, refused unless it is a plain RFC 9110 media type.

	Raises:
		ToolError: The media type is malformed (it would go into a header).
	"""
	if not MEDIA_TYPE.fullmatch(stored.media_type):
		raise ToolError(
			"the file's media type is not a valid media type (type/subtype); refused, since it "
			"would go into a header"
		)
	return stored.media_type


def multipart_body(
	fields: Sequence[tuple[str, str] | tuple[str, str, str | None]],
	files: list[tuple[str, StoredFile]],
) -> EncodedBody:
	"""A multipart/form-data body: text fields, then file parts.

	Args:
		fields: Field names and text values (`flatten` makes them from an object), each with
			its part's ``Content-Type`` as a third item if it has one (none: ``text/plain``).
		files: Field names and the files to send under them.

	Raises:
		ToolError: A part's media type is malformed (it would go into a header).
	"""
	boundary = f"openmolt-{secrets.token_hex(12)}"
	chunks: list[bytes] = []
	for name, text, *kind in fields:
		head = f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote_header(name)}"\r\n'
		if kind and kind[0] is not None:
			if not MEDIA_TYPE.fullmatch(kind[0]):
				raise ToolError(f"field {name[:60]!r}: {kind[0][:60]!r} is not a media type")
			head += f"Content-Type: {kind[0]}\r\n"
		chunks.append(f"{head}\r\n".encode() + text.encode() + b"\r\n")
	for name, stored in files:
		head = (
			f"--{boundary}\r\nContent-Disposition: form-data; "
			f'name="{_quote_header(name)}"; filename="{_quote_header(plain_file_name(stored.name))}"\r\n'
			f"Content-Type: {checked_media_type(stored)}\r\n\r\n"
		)
		chunks.append(head.encode() + stored.data + b"\r\n")
	chunks.append(f"--{boundary}--\r\n".encode())
	return EncodedBody(b"".join(chunks), f"multipart/form-data; boundary={boundary}")


async def open_file(store: FileAccess | None, reference: Any, what: str) -> StoredFile:
	"""Resolve a file reference through the store.

	Raises:
		ToolError: There is no store, the reference is not a string, or it cannot be resolved.
	"""
	if store is None:
		raise ToolError(f"{what} needs a file store; use the tool through an OpenMolt agent")
	if not isinstance(reference, str):
		raise ToolError(f"{what} must be a file reference string, got {type(reference).__name__}")
	return await store.open(reference)


async def _files(request: EncodeRequest) -> list[tuple[str, StoredFile]]:
	return [
		(name, await request.open(ref, f"file field {name!r}"))
		for name, ref in request.files.items()
	]


class BodyEncoder(Protocol):
	"""Encodes a rendered body in one request format."""

	async def __call__(self, body: Any, request: EncodeRequest) -> EncodedBody:
		"""Encode ``body``.

		Args:
			body: The rendered body (None when the tool has none, or it rendered to nothing).
			request: The tool's file fields and the file store.

		Raises:
			ToolError: The body does not fit the format, or a file cannot be read.
		"""
		...


def form_encoder(arrays: ArrayStyle = "indices") -> BodyEncoder:
	"""A ``form-data`` encoder: urlencoded nested keys, multipart when a file field is given.

	Args:
		arrays: How lists of scalars are written (see `ArrayStyle`).
	"""

	async def encode(body: Any, request: EncodeRequest) -> EncodedBody:
		if request.files:
			return multipart_body(flatten(body or {}, arrays=arrays), await _files(request))
		if body is None:
			return EncodedBody(None)
		if not isinstance(body, Mapping):
			raise ToolError("a form-data body must be an object")
		content = urlencode(flatten(body, arrays=arrays)).encode()
		return EncodedBody(content, "application/x-www-form-urlencoded")

	return encode


async def _multipart(body: Any, request: EncodeRequest) -> EncodedBody:
	return multipart_body(flatten(body or {}), await _files(request))


async def _openapi_form(body: Any, request: EncodeRequest) -> EncodedBody:
	if request.files:
		raise ToolError("an openapi-form body has no file fields; files go in openapi-multipart")
	if body is None:
		return EncodedBody(None)
	if not isinstance(body, Mapping):
		raise ToolError("an openapi-form body must be an object")
	text = "&".join(f"{name}={value}" for name, value in form_pairs(body, request.encoding))
	return EncodedBody(text.encode("ascii"), "application/x-www-form-urlencoded")


async def _openapi_multipart(body: Any, request: EncodeRequest) -> EncodedBody:
	if body is not None and not isinstance(body, Mapping):
		raise ToolError("an openapi-multipart body must be an object")
	fields = multipart_fields(body or {}, request.encoding)
	return multipart_body(fields, await _files(request))


async def _json(body: Any, request: EncodeRequest) -> EncodedBody:
	if body is None:
		return EncodedBody(None)
	data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
	return EncodedBody(data, "application/json")


async def _text(body: Any, request: EncodeRequest) -> EncodedBody:
	if body is None:
		return EncodedBody(None)
	text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
	return EncodedBody(text.encode(), "text/plain; charset=utf-8")


async def _binary(body: Any, request: EncodeRequest) -> EncodedBody:
	if body is None:
		return EncodedBody(None)
	stored = await request.open(body, "the binary body")
	return EncodedBody(stored.data, checked_media_type(stored))


_BUILTIN: dict[str, BodyEncoder] = {
	"json": _json,
	"form-data": form_encoder(),
	"multipart": _multipart,
	"openapi-form": _openapi_form,
	"openapi-multipart": _openapi_multipart,
	"text": _text,
	"binary": _binary,
}


async def encode_body(
	fmt: str,
	body: Any,
	files: Mapping[str, Any],
	store: FileAccess | None,
	*,
	encoders: Mapping[str, BodyEncoder] | None = None,
	encoding: Mapping[str, FieldEncoding] | None = None,
) -> EncodedBody:
	"""Encode a rendered body in a request format.

	Args:
		fmt: A built-in format, or one of ``encoders``.
		body: The rendered body.
		files: Rendered file fields (field name to file reference), for form-data and multipart.
		store: Resolves file references.
		encoders: The integration's own encoders (one under a built-in name replaces it).
		encoding: How each body field is written (``openapi-form``, ``openapi-multipart``).

	Raises:
		ToolError: A file reference cannot be resolved, or the body does not fit the format.
	"""
	encoder = (encoders or {}).get(fmt) or _BUILTIN.get(fmt)
	if encoder is None:
		raise ToolError(f"unknown request format {fmt!r}")
	return await encoder(body, EncodeRequest(files=files, store=store, encoding=encoding or {}))
