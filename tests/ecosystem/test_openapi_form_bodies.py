"""Imported operations send form bodies and query parameters as their document describes.

A form body follows its Media Type Object's ``encoding`` and OpenAPI's defaults (an array repeats
its key, an object is JSON text, in multipart a JSON part); a query parameter's
``allowReserved`` leaves reserved characters bare; a path parameter its path does not name is
left out with a note. Expected bytes are the OpenAPI 3.1.1 specification's where it gives them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.openapi import from_openapi
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


def _document(operation: dict[str, Any], path: str = "/items") -> dict[str, Any]:
	return {
		"openapi": "3.1.0",
		"info": {"title": "Forms", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			path: {
				"post": {
					"operationId": "send",
					"responses": {"200": {"description": "ok"}},
					**operation,
				}
			}
		},
	}


def _form(media: str, encoding: dict[str, Any] | None = None) -> dict[str, Any]:
	schema = {
		"type": "object",
		"properties": {
			"name": {"type": "string"},
			"tags": {"type": "array", "items": {"type": "string"}},
			"address": {"type": "object", "properties": {"city": {"type": "string"}}},
			"meta": {"type": "object", "additionalProperties": {"type": "string"}},
		},
	}
	content: dict[str, Any] = {"schema": schema}
	if encoding is not None:
		content["encoding"] = encoding
	return {"requestBody": {"content": {media: content}}}


async def _sent(document: dict[str, Any], **arguments: Any) -> httpx.Request:
	integration = from_openapi(document, id="f")
	sent: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(200, json={"ok": True})

	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(api))
	)
	om.register_integration("f", integration)
	model = ScriptedModel([call_tool("f.send", **arguments), finish(result="ok")])
	await om.create_agent(name="A", model=model, integrations=["f"]).run("go")
	await om.aclose()
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert len(sent) == 1, results
	return sent[0]


BODY = {"name": "a b", "tags": ["x", "y"], "address": {"city": "Oslo"}, "meta": {"k": "v"}}


async def test_a_form_body_without_encoding_takes_openapi_s_defaults() -> None:
	"""tags=x&tags=y and the object as JSON text (was tags[0]=x&tags[1]=y&address[city]=Oslo)."""
	request = await _sent(_document(_form("application/x-www-form-urlencoded")), body=BODY)
	assert request.headers["content-type"] == "application/x-www-form-urlencoded"
	assert request.content == (
		b"name=a+b&tags=x&tags=y&address=%7B%22city%22%3A%22Oslo%22%7D&meta=%7B%22k%22%3A%22v%22%7D"
	)


async def test_a_form_body_follows_its_encoding() -> None:
	"""deepObject, an exploded form object, a pipe-delimited array, as the document says."""
	encoding = {
		"tags": {"style": "pipeDelimited"},
		"address": {"style": "form", "explode": True},
		"meta": {"style": "deepObject", "explode": True},
		"unknown": {"style": "form"},  # names no field: ignored, as the specification says
	}
	document = _document(_form("application/x-www-form-urlencoded", encoding))
	tool = from_openapi(document, id="f").tools[0]
	assert tool.request_format == "openapi-form" and set(tool.encoding) == {
		"tags",
		"address",
		"meta",
	}
	request = await _sent(document, body=BODY)
	assert request.content == b"name=a+b&tags=x%7Cy&city=Oslo&meta%5Bk%5D=v"


async def test_a_multipart_body_sends_json_parts_and_one_part_per_item() -> None:
	"""The object is one application/json part, each tag a part (were address[city], tags[0])."""
	request = await _sent(_document(_form("multipart/form-data")), body=BODY)
	parts = re.findall(
		rb'name="([^"]+)"\r\n(?:Content-Type: ([^\r]+)\r\n)?\r\n([^\r]*)\r\n', request.content
	)
	assert parts == [
		(b"name", b"", b"a b"),
		(b"tags", b"", b"x"),
		(b"tags", b"", b"y"),
		(b"address", b"application/json", b'{"city":"Oslo"}'),
		(b"meta", b"application/json", b'{"k":"v"}'),
	]


@pytest.mark.parametrize(
	("entry", "says"),
	[
		({"style": "matrix"}, r"encoding/tags/style: 'matrix' is not a style of a form field"),
		({"explode": "yes"}, r"encoding/tags/explode: true or false"),
		({"allowReserved": 1}, r"encoding/tags/allowReserved: true or false"),
		({"contentType": "text/plain\r\nX-A: b"}, r"encoding/tags/contentType: .*not a media type"),
		("form", r"encoding/tags: an Encoding Object must be an object"),
	],
)
def test_an_encoding_the_engine_cannot_follow_is_refused_at_import(entry: Any, says: str) -> None:
	"""The document's mistake is said with its place, not sent as something else."""
	document = _document(_form("application/x-www-form-urlencoded", {"tags": entry}))
	with pytest.raises(ConfigurationError, match=r"requestBody/content/.*/" + says):
		from_openapi(document, id="f")


async def test_allow_reserved_query_parameters_are_the_specification_s_example() -> None:
	"""OpenAPI 3.1.1 Appendix C: '/' stays bare, '+' and '^' are encoded (was b=x%2Fy)."""
	formulas = {"type": "object", "additionalProperties": {"type": "string"}}
	words = {"type": "array", "items": {"type": "string"}}
	parameters = [
		{"name": "formulas", "in": "query", "schema": formulas, "explode": True},
		{"name": "words", "in": "query", "schema": words},
	]
	data = {"formulas": {"a": "x+y", "b": "x/y", "c": "x^y"}, "words": ["math", "is", "fun"]}
	request = await _sent(_document({"parameters": parameters}), **data)
	assert request.url.query == b"a=x%2By&b=x%2Fy&c=x%5Ey&words=math&words=is&words=fun"
	parameters[0]["allowReserved"] = True
	parameters[1].update(style="spaceDelimited", explode=False)
	request = await _sent(_document({"parameters": parameters}), **data)
	assert request.url.query == b"a=x%2By&b=x/y&c=x%5Ey&words=math%20is%20fun"


async def test_an_allow_reserved_string_keeps_slashes_and_percent_triples() -> None:
	"""A plain string parameter with allowReserved (was sent as path=a%2Fb%3Fc)."""
	parameters = [{"name": "p", "in": "query", "allowReserved": True, "schema": {"type": "string"}}]
	request = await _sent(_document({"parameters": parameters}), p="a/b?c=%2F&d e")
	assert request.url.query == b"p=a/b?c%3D%2F%26d%20e"


def test_an_allow_reserved_that_is_no_boolean_is_refused() -> None:
	"""'true' as a string is the document's mistake, said at import."""
	parameters = [{"name": "p", "in": "query", "allowReserved": "true", "schema": {}}]
	with pytest.raises(ConfigurationError, match=r"parameters/0/allowReserved: true or false"):
		from_openapi(_document({"parameters": parameters}), id="f")


async def test_a_path_parameter_the_path_does_not_name_is_left_out_with_a_note() -> None:
	"""It was a required input that no request sent; now it is no input, and the docs say why."""
	parameters = [
		{"name": "ghost", "in": "path", "required": True, "schema": {"type": "string"}},
		{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
	]
	document = _document({"parameters": parameters}, path="/items/{id}")
	integration = from_openapi(document, id="f")
	(tool,) = integration.tools
	assert set(tool.input_schema["properties"]) == {"id"}
	assert tool.input_schema["required"] == ["id"]
	assert (
		"`send`: path parameter 'ghost' (#/paths/~1items~1{id}/post/parameters/0) is not in the "
		"path '/items/{id}', so no request could send it; left out of the tool"
	) in integration.docs
	request = await _sent(document, id="7")
	assert request.url.path == "/items/7"


async def test_cookie_parameters_are_inputs_sent_as_cookies() -> None:
	"""Cookie parameters were dropped with a note, a required one too (every call then lacked
	it); they are inputs now, sent in the Cookie header (tests/ecosystem/test_openapi_cookies.py
	has the details)."""
	parameters = [
		{"name": "session", "in": "cookie", "required": True, "schema": {"type": "string"}},
		{"name": "theme", "in": "cookie", "schema": {"type": "string"}},
	]
	document = _document({"parameters": parameters})
	integration = from_openapi(document, id="f")
	(tool,) = integration.tools
	assert set(tool.input_schema["properties"]) == {"session", "theme"}
	assert tool.input_schema["required"] == ["session"]
	assert "cookie parameter" not in integration.docs
	request = await _sent(document, session="s 1", theme="dark")
	assert request.headers["cookie"] == "session=s%201; theme=dark"
