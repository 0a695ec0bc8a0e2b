"""Form fields and query parameters written as OpenAPI says: by style, or by content type.

OpenAPI gives each query parameter, and each field of an ``application/x-www-form-urlencoded``
or ``multipart/form-data`` body (the Media Type Object's ``encoding``, one `FieldEncoding` per
field), one of two serialisations. The rules are those of OpenAPI 3.1.1 and 3.2.0 ("Encoding
Object", "Encoding By Name"); 3.0.4 recommends the same for 3.0 documents, whose 3.0.3 text left
the role of ``contentType`` in a form body undescribed.

- By style (`style_pairs`): a query parameter always; a field whose encoding names ``style``,
  ``explode`` or ``allowReserved``. The Parameter Object's style table: ``form`` (the default;
  exploded by default: ``tags=x&tags=y``, an object's properties as keys of their own),
  ``spaceDelimited``, ``pipeDelimited`` and ``deepObject`` (``meta[k]=v``). The table leaves
  deepObject undefined for arrays and for nested values; here they get bracketed keys with
  indices (``expand[0]=a``, ``items[0][price]=p``), which is what Stripe, whose document declares
  deepObject for every structured field, reads.
- By content type (`content_text`): a field whose encoding names none of the three. Each value
  is written in its ``contentType``: ``text/plain`` for a string, number or boolean and
  ``application/json`` for an object, unless the encoding names another; an array gives one
  value per item, each under the field's name (``tags=x&tags=y``; in multipart, one part per
  item). So an object field with no encoding is JSON text (``address=%7B%22city%22...``), as the
  specification's "URL Encoded Form with JSON Values" example shows.

In a form body the pairs are percent-encoded as the WHATWG ``application/x-www-form-urlencoded``
serialiser does (``+`` for a space); in multipart they are not encoded at all. ``allowReserved``
leaves RFC 3986's reserved characters and percent-encoded triples as they are, except those a
query or a form cannot hold bare (``[``, ``]``, ``#``, ``&``, ``=``, ``+``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal
from urllib.parse import quote, quote_plus

from pydantic import ConfigDict, field_validator

from openmolt_core.errors import ToolError
from openmolt_core.options import Options, options_config

__all__ = [
	"MEDIA_TYPE",
	"ArrayStyle",
	"FieldEncoding",
	"FormStyle",
	"Mode",
	"content_text",
	"flatten",
	"form_pairs",
	"media_type",
	"multipart_fields",
	"percent",
	"scalar_text",
	"style_pairs",
]

ArrayStyle = Literal["indices", "brackets", "repeat"]
"""How form and multipart bodies write a list of scalars ``k: [a, b]``.

``indices``: ``k[0]=a&k[1]=b`` (the built-in ``form-data``, what Stripe's SDKs send).
``brackets``: ``k[]=a&k[]=b``. ``repeat``: ``k=a&k=b`` (Twilio's ``MediaUrl``). Lists of objects
always use indices.
"""

FormStyle = Literal["form", "spaceDelimited", "pipeDelimited", "deepObject"]
"""The styles of a query parameter or a form field (OpenAPI's Parameter Object, ``in: query``)."""

MEDIA_TYPE = re.compile(
	r"[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+"
	r"(\s*;\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+=(\"[^\"\x00-\x1f\x7f]*\"|[!#$%&'*+.^_`|~0-9A-Za-z-]+))*"
)
"""A media type as RFC 9110 writes it (``type/subtype; name=value``): safe in a header."""
_JSON = re.compile(r"^application/(.+\+)?json\b", re.IGNORECASE)


class FieldEncoding(Options):
	"""How one field of an ``openapi-form`` or ``openapi-multipart`` body is written.

	OpenAPI's Encoding Object, for the field of the same name. Naming ``style``, ``explode`` or
	``allow_reserved`` writes the field by style (the others take their defaults: ``form``,
	exploded for ``form`` only, not reserved) and ignores ``content_type``; naming none of them
	writes it by content type. See `openmolt_core.integrations._form`.

	Attributes:
		content_type: The field's media type (``application/json``, ``text/plain``...); in
			multipart, its part's ``Content-Type``. A comma-separated list or a wildcard
			(``image/png, image/*``) uses its first plain media type. Default: ``text/plain``
			for a string, number or boolean, ``application/json`` for an object or array item.
		style: ``form``, ``spaceDelimited``, ``pipeDelimited`` or ``deepObject``.
		explode: Whether an array or object gives a pair per item (default: for ``form``).
		allow_reserved: Leave RFC 3986's reserved characters unencoded (form bodies only).
	"""

	model_config: ClassVar[ConfigDict] = options_config()

	content_type: str | None = None
	style: FormStyle | None = None
	explode: bool | None = None
	allow_reserved: bool | None = None

	@field_validator("content_type")
	@classmethod
	def _media(cls, value: str | None) -> str | None:
		if value is not None and not all(
			MEDIA_TYPE.fullmatch(part.strip()) for part in value.split(",")
		):
			raise ValueError(
				f"content_type {value[:80]!r} is not a media type (type/subtype, or a list of "
				"them separated by commas)"
			)
		return value

	@property
	def by_style(self) -> bool:
		"""Whether the field is written by style (it names a style, explode or allow_reserved)."""
		return self.style is not None or self.explode is not None or self.allow_reserved is not None

	@property
	def exploded(self) -> bool:
		"""The explode in force: as given, else true for the ``form`` style only."""
		return self.explode if self.explode is not None else self.style in (None, "form")


def media_type(content_type: str | None) -> str | None:
	"""The first plain media type of a ``contentType`` (a list, maybe with wildcards), or None."""
	if not content_type:
		return None
	return next((p.strip() for p in content_type.split(",") if "*" not in p.split(";")[0]), None)


def scalar_text(value: Any) -> str:
	"""One value's text: booleans as ``true``/``false``, an object or array nested in it as JSON."""
	if isinstance(value, bool):
		return "true" if value else "false"
	if isinstance(value, (Mapping, list, tuple)):
		return json.dumps(value, separators=(",", ":"), default=str)
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
			out.extend((key, scalar_text(item)) for item in value if item is not None)
			return out
		for index, item in enumerate(value):
			out.extend(flatten(item, f"{prefix}[{index}]", arrays))
	elif value is not None:
		out.append((prefix, scalar_text(value)))
	return out


_KEPT = ":/?@!$'()*,;"
"""The reserved characters ``allowReserved`` leaves bare: RFC 3986's, but for ``[``, ``]`` and
``#`` (not allowed in a query) and ``&``, ``=`` and ``+`` (a form's delimiters), which OpenAPI
3.1.1 leaves the application to encode."""
_TRIPLE = re.compile(r"(%[0-9A-Fa-f]{2})")


def percent(text: str, *, reserved: bool = False, plus: bool = False) -> str:
	"""Percent-encode text for a query or a form body.

	Args:
		text: The text.
		reserved: Leave reserved characters (but ``[]#&=+``) and ``%XX`` triples as they are.
		plus: Write a space as ``+`` (a form body), not ``%20``.

	Raises:
		ToolError: The text is not valid Unicode (a lone surrogate).
	"""
	encode = quote_plus if plus else quote
	try:
		if not reserved:
			return encode(text, safe="")
		return "".join(
			part if _TRIPLE.fullmatch(part) else encode(part, safe=_KEPT)
			for part in _TRIPLE.split(text)
		)
	except UnicodeEncodeError:
		raise ToolError("a value is not valid Unicode text (it holds a lone surrogate)") from None


Mode = Literal["query", "form", "multipart"]
"""Where pairs go: a URL's query, a form body (``+`` for a space), or multipart parts (bare)."""


def style_pairs(
	value: Any, style: str, explode: bool, name: str, mode: Mode = "query", reserved: bool = False
) -> list[tuple[str, str]]:
	"""A value's name-value pairs in a query style, encoded for ``mode``.

	Args:
		value: The value (None, an empty array or an empty object gives no pair).
		style: ``form``, ``spaceDelimited``, ``pipeDelimited`` or ``deepObject``.
		explode: Whether an array or object gives a pair per item.
		name: The parameter's or field's name.
		mode: ``query`` or ``form`` (percent-encoded) or ``multipart`` (bare).
		reserved: ``allowReserved``: leave reserved characters in values unencoded.

	Raises:
		ToolError: A value is not valid Unicode text.
	"""
	if value is None or (isinstance(value, (Mapping, list, tuple)) and not value):
		return []
	plus = mode == "form"
	if mode == "multipart":

		def key(text: str) -> str:
			return text

		def val(text: str) -> str:
			return text
	else:

		def key(text: str) -> str:
			return percent(text, plus=plus)

		def val(text: str) -> str:
			return percent(text, reserved=reserved, plus=plus)

	if style == "deepObject" and not _is_scalar(value):
		return [(key(k), val(v)) for k, v in flatten(value, name)]
	sep = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(style, ",")
	if mode != "multipart":
		sep = quote(sep, safe=",")
	if isinstance(value, Mapping):
		items = [(key(str(k)), val(scalar_text(v))) for k, v in value.items() if v is not None]
		if explode:
			return items
		return [(key(name), sep.join(f"{k}{sep}{v}" for k, v in items))]
	if isinstance(value, (list, tuple)):
		values = [val(scalar_text(v)) for v in value if v is not None]
		return [(key(name), v) for v in values] if explode else [(key(name), sep.join(values))]
	return [(key(name), val(scalar_text(value)))]


def content_text(value: Any, content_type: str | None, name: str) -> str:
	"""One value's text in its content type: JSON for JSON types and structures, else plain.

	Args:
		value: The value (an array's item, for an array field).
		content_type: The field's media type; None for the default.
		name: The field's name, for the message.

	Raises:
		ToolError: An object or array is to be sent in a media type that is neither JSON nor
			text (``application/xml``): nothing here writes it.
	"""
	if content_type is not None and _JSON.match(content_type):
		return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
	if not _is_scalar(value):
		if content_type is not None and not content_type.lower().startswith("text/"):
			raise ToolError(
				f"field {name!r}: the API takes it as {content_type.split(';')[0]}, which cannot "
				"be written from an object or array; give it as text the API reads"
			)
		return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
	return scalar_text(value)


def _items(value: Any) -> list[Any]:
	items = list(value) if isinstance(value, (list, tuple)) else [value]
	return [item for item in items if item is not None]


def form_pairs(
	body: Mapping[str, Any], encoding: Mapping[str, FieldEncoding]
) -> list[tuple[str, str]]:
	"""An ``application/x-www-form-urlencoded`` body's pairs, percent-encoded.

	Args:
		body: The fields, by the names the request sends.
		encoding: The fields' encodings (a field without one takes the defaults).

	Raises:
		ToolError: A value cannot be written (see `content_text`, `percent`).
	"""
	out: list[tuple[str, str]] = []
	for name, value in body.items():
		field = encoding.get(name)
		if field is not None and field.by_style:
			style = field.style or "form"
			out += style_pairs(
				value, style, field.exploded, name, "form", bool(field.allow_reserved)
			)
			continue
		wanted = media_type(field.content_type) if field is not None else None
		key = percent(name, plus=True)
		out += [
			(key, percent(content_text(item, wanted, name), plus=True)) for item in _items(value)
		]
	return out


def multipart_fields(
	body: Mapping[str, Any], encoding: Mapping[str, FieldEncoding]
) -> list[tuple[str, str, str | None]]:
	"""A ``multipart/form-data`` body's text parts: name, text and ``Content-Type`` (None: plain).

	An object (or an array's object item) without an encoding is a part of its own holding JSON,
	with ``Content-Type: application/json``; an array gives one part per item, each under the
	field's name (RFC 7578 section 4.3). A field written by style gives a part per pair,
	unencoded (OpenAPI 3.2.0: no percent-encoding in multipart).

	Args:
		body: The fields (file fields are not among them), by the names the request sends.
		encoding: The fields' encodings.

	Raises:
		ToolError: A value cannot be written (see `content_text`).
	"""
	out: list[tuple[str, str, str | None]] = []
	for name, value in body.items():
		field = encoding.get(name)
		if field is not None and field.by_style:
			pairs = style_pairs(value, field.style or "form", field.exploded, name, "multipart")
			out += [(k, v, None) for k, v in pairs]
			continue
		wanted = media_type(field.content_type) if field is not None else None
		for item in _items(value):
			kind = wanted or (None if _is_scalar(item) else "application/json")
			out.append((name, content_text(item, kind, name), kind))
	return out
