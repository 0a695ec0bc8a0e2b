"""The openapi-form and openapi-multipart formats write each field as OpenAPI's Encoding Object says.

Expected bytes come from the specification (OAI/OpenAPI-Specification, versions/3.1.1.md and
3.2.0.md): the "Style Examples" table for a field named ``color`` (a form body drops the ``?``),
and the "URL Encoded Form with JSON Values" example for a body without ``encoding``.
"""

from __future__ import annotations

import base64
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations import FieldEncoding, HttpTool, Integration
from openmolt_core.integrations._encode import EncodedBody, encode_body

pytestmark = pytest.mark.anyio

STRING = "blue"
ARRAY = ["blue", "black", "brown"]
OBJECT = {"R": 100, "G": 200, "B": 150}
VALUES = {"string": STRING, "array": ARRAY, "object": OBJECT}


async def _form(body: Any, **encoding: dict[str, Any]) -> bytes:
	encoded = await encode_body(
		"openapi-form",
		body,
		{},
		None,
		encoding={k: FieldEncoding.model_validate(v) for k, v in encoding.items()},
	)
	assert encoded.content_type == "application/x-www-form-urlencoded"
	assert encoded.content is not None
	return encoded.content


STYLE_TABLE = [
	# style, explode, kind, the body (the table's query without its "?")
	("form", False, "string", "color=blue"),
	("form", False, "array", "color=blue,black,brown"),
	("form", False, "object", "color=R,100,G,200,B,150"),
	("form", True, "string", "color=blue"),
	("form", True, "array", "color=blue&color=black&color=brown"),
	("form", True, "object", "R=100&G=200&B=150"),
	("spaceDelimited", False, "array", "color=blue%20black%20brown"),
	("spaceDelimited", False, "object", "color=R%20100%20G%20200%20B%20150"),
	("pipeDelimited", False, "array", "color=blue%7Cblack%7Cbrown"),
	("pipeDelimited", False, "object", "color=R%7C100%7CG%7C200%7CB%7C150"),
	("deepObject", True, "object", "color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"),
]


@pytest.mark.parametrize(("style", "explode", "kind", "expected"), STYLE_TABLE)
async def test_a_styled_field_follows_the_style_table(
	style: str, explode: bool, kind: str, expected: str
) -> None:
	"""Every defined cell of the table's form, spaceDelimited, pipeDelimited and deepObject rows."""
	body = await _form({"color": VALUES[kind]}, color={"style": style, "explode": explode})
	assert body.decode() == expected


async def test_explode_alone_chooses_the_form_style_and_style_alone_its_explode() -> None:
	"""Naming one of style, explode, allowReserved gives the others their defaults."""
	assert await _form({"color": ARRAY}, color={"explode": False}) == b"color=blue,black,brown"
	assert await _form({"color": OBJECT}, color={"style": "form"}) == b"R=100&G=200&B=150"
	assert (
		await _form({"color": ARRAY}, color={"style": "pipeDelimited"})
		== b"color=blue%7Cblack%7Cbrown"
	)


async def test_without_encoding_a_form_body_is_the_specification_s_json_example() -> None:
	"""OpenAPI 3.2.0 "URL Encoded Form with JSON Values": the object is JSON text (it was sent as
	address[streetAddress]=..., a key the API does not declare)."""
	address = {
		"streetAddress": "123 Example Dr.",
		"city": "Somewhere",
		"state": "CA",
		"zip": "99999+1234",
	}
	body = await _form({"id": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "address": address})
	assert body == (
		b"id=f81d4fae-7dec-11d0-a765-00a0c91e6bf6&address=%7B%22streetAddress%22%3A%22123+Example"
		b"+Dr.%22%2C%22city%22%3A%22Somewhere%22%2C%22state%22%3A%22CA%22%2C%22zip%22%3A%2299999"
		b"%2B1234%22%7D"
	)
	# 3.1.1's copy of the example leaves ':' and ',' bare; both decode to the same text.
	assert await _form({"id": "f81d4fae"}, id={"contentType": "application/json"}) == (
		b"id=%22f81d4fae%22"
	)


async def test_without_encoding_an_array_repeats_its_key_and_object_items_are_json() -> None:
	"""Encoding By Name: one value per array item under the field's name (was tags[0]=x)."""
	assert await _form({"tags": ["x", "y z"], "n": 3, "ok": True}) == (
		b"tags=x&tags=y+z&n=3&ok=true"
	)
	assert await _form({"items": [{"p": 1}, {"p": 2}]}) == (
		b"items=%7B%22p%22%3A1%7D&items=%7B%22p%22%3A2%7D"
	)
	assert await _form({"empty": [], "none": None}) == b""


async def test_deep_object_arrays_and_nesting_use_indexed_brackets() -> None:
	"""The table leaves them undefined; Stripe reads expand[0]=a and items[0][price]=p."""
	body = {"expand": ["a", "b"], "items": [{"price": "p", "tags": ["t"]}], "metadata": ""}
	encoding = {name: {"style": "deepObject", "explode": True} for name in body}
	assert await _form(body, **encoding) == (
		b"expand%5B0%5D=a&expand%5B1%5D=b&items%5B0%5D%5Bprice%5D=p&items%5B0%5D%5Btags%5D%5B0%5D=t"
		b"&metadata="
	)


async def test_allow_reserved_leaves_reserved_characters_but_a_form_s_own() -> None:
	"""'/', ':', '?' and %XX stay; '&', '=', '+', '[', ']', '#' and '^' are encoded."""
	value = "a/b:c?d&e=f+g[h]#i^j%2Fk 50%"
	plain = await _form({"v": value}, v={"style": "form"})
	kept = await _form({"v": value}, v={"allowReserved": True})
	assert plain == b"v=a%2Fb%3Ac%3Fd%26e%3Df%2Bg%5Bh%5D%23i%5Ej%252Fk+50%25"
	assert kept == b"v=a/b:c?d%26e%3Df%2Bg%5Bh%5D%23i%5Ej%2Fk+50%25"


async def test_an_object_the_api_takes_as_xml_is_refused_naming_the_field() -> None:
	"""Nothing writes XML from a JSON value: the model is told, nothing mislabelled is sent."""
	with pytest.raises(ToolError, match=r"field 'addr': the API takes it as application/xml"):
		await _form({"addr": {"a": 1}}, addr={"contentType": "application/xml"})


async def test_an_openapi_form_body_must_be_an_object() -> None:
	"""A list or text body cannot be written as form fields."""
	with pytest.raises(ToolError, match="openapi-form body must be an object"):
		await encode_body("openapi-form", ["a"], {}, None)


def _parts(encoded: EncodedBody) -> list[tuple[str, str | None, bytes]]:
	"""(name, Content-Type, content) of each part of a multipart body."""
	assert encoded.content_type is not None and encoded.content is not None
	boundary = encoded.content_type.split("boundary=")[1].encode()
	out = []
	for chunk in encoded.content.split(b"--" + boundary)[1:-1]:
		head, _, data = chunk[2:-2].partition(b"\r\n\r\n")
		name = re.search(rb'name="([^"]*)"', head)
		kind = re.search(rb"Content-Type: (.+)", head)
		assert name is not None
		out.append((name.group(1).decode(), kind.group(1).decode() if kind else None, data))
	return out


async def _multipart(body: Any, files: dict[str, str] | None = None, **encoding: Any) -> Any:
	refs = {
		k: f"data:text/csv;base64,{base64.b64encode(v.encode()).decode()}"
		for k, v in (files or {}).items()
	}
	with tempfile.TemporaryDirectory() as folder:
		encoded = await encode_body(
			"openapi-multipart",
			body,
			refs,
			FileStore(Path(folder)),
			encoding={k: FieldEncoding.model_validate(v) for k, v in encoding.items()},
		)
	return _parts(encoded)


async def test_multipart_objects_are_json_parts_and_arrays_one_part_per_item() -> None:
	"""The defaults of "Encoding multipart Media Types" (was address[city] and tags[0] parts)."""
	parts = await _multipart(
		{"id": "7", "address": {"city": "Oslo"}, "tags": ["x", "y"], "points": [{"x": 1}]},
		files={"file": "a,b"},
	)
	assert parts == [
		("id", None, b"7"),
		("address", "application/json", b'{"city":"Oslo"}'),
		("tags", None, b"x"),
		("tags", None, b"y"),
		("points", "application/json", b'{"x":1}'),
		("file", "text/csv", b"a,b"),
	]


async def test_multipart_takes_the_encoding_s_content_type_or_style() -> None:
	"""A contentType is the part's header (its first plain type); a style gives a bare part per
	pair, as Stripe's document asks for PostFiles (file_link_data[create], expand[0])."""
	parts = await _multipart(
		{"note": "hi", "when": "2024", "expand": ["a"], "file_link_data": {"create": True}},
		note={"contentType": "text/markdown; charset=utf-8"},
		when={"contentType": "image/*, text/plain"},
		expand={"style": "deepObject", "explode": True},
		file_link_data={"style": "deepObject", "explode": True},
	)
	assert parts == [
		("note", "text/markdown; charset=utf-8", b"hi"),
		("when", "text/plain", b"2024"),
		("expand[0]", None, b"a"),
		("file_link_data[create]", None, b"true"),
	]


def test_a_content_type_that_is_no_media_type_is_refused() -> None:
	"""It would go into a part's header: a line break could add headers of its own."""
	with pytest.raises(ValueError, match="is not a media type"):
		FieldEncoding(content_type="text/plain\r\nX-Evil: 1")


def test_encoding_on_a_format_that_ignores_it_is_refused() -> None:
	"""form-data never reads encoding: the integration says so instead of sending other bytes."""
	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/t",
		request_format="form-data",
		encoding={"tags": FieldEncoding(explode=True)},
	)
	with pytest.raises(
		ValueError, match="encoding applies to the openapi-form and openapi-multipart"
	):
		Integration(name="X", tools=[tool])
