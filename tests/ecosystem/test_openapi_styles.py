"""Imported parameters are serialised as the OpenAPI specification's style table says.

The expected values are the "Style Examples" of OpenAPI 3.1.1 (the same in 3.0.4 and 3.2), for a
parameter named ``color`` holding a string, an array or an object: each value is percent-encoded,
the style's delimiters are not (but ``%20`` and ``%7C``, which RFC 3986 does not allow bare).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.openapi import from_openapi
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

STRING = "blue"
ARRAY = ["blue", "black", "brown"]
OBJECT = {"R": 100, "G": 200, "B": 150}
_SCHEMAS = {
	"string": {"type": "string"},
	"array": {"type": "array", "items": {"type": "string"}},
	"object": {
		"type": "object",
		"properties": {k: {"type": "integer"} for k in OBJECT},
	},
}
_VALUES = {"string": STRING, "array": ARRAY, "object": OBJECT}


def _document(where: str, style: str | None, explode: bool | None, kind: str) -> dict[str, Any]:
	param: dict[str, Any] = {"name": "color", "in": where, "schema": _SCHEMAS[kind]}
	if where == "path":
		param["required"] = True
	if style is not None:
		param["style"] = style
	if explode is not None:
		param["explode"] = explode
	path = "/items/{color}" if where == "path" else "/items"
	return {
		"openapi": "3.1.0",
		"info": {"title": "Styles", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			path: {
				"get": {
					"operationId": "getItems",
					"parameters": [param],
					"responses": {"200": {"description": "ok"}},
				}
			}
		},
	}


async def _sent(document: dict[str, Any], value: Any) -> httpx.Request:
	integration = from_openapi(document, id="s")
	sent: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(200, json={"ok": True})

	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(api))
	)
	om.register_integration("s", integration)
	model = ScriptedModel([call_tool("s.getItems", color=value), finish(result="ok")])
	await om.create_agent(name="A", model=model, integrations=["s"]).run("go")
	await om.aclose()
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert len(sent) == 1, results
	return sent[0]


PATH = [
	# style, explode, kind, the path segment
	(None, None, "array", "blue,black,brown"),
	(None, None, "object", "R,100,G,200,B,150"),
	("simple", True, "object", "R=100,G=200,B=150"),
	("label", False, "string", ".blue"),
	("label", False, "array", ".blue,black,brown"),
	("label", True, "array", ".blue.black.brown"),
	("label", False, "object", ".R,100,G,200,B,150"),
	("label", True, "object", ".R=100.G=200.B=150"),
	("matrix", False, "string", ";color=blue"),
	("matrix", False, "array", ";color=blue,black,brown"),
	("matrix", True, "array", ";color=blue;color=black;color=brown"),
	("matrix", False, "object", ";color=R,100,G,200,B,150"),
	("matrix", True, "object", ";R=100;G=200;B=150"),
]


@pytest.mark.parametrize(("style", "explode", "kind", "segment"), PATH)
async def test_path_parameters_follow_the_style_table(
	style: str | None, explode: bool | None, kind: str, segment: str
) -> None:
	"""simple, label and matrix, exploded or not (arrays were sent as 'blueblackbrown', objects
	as a Python repr, label and matrix without their prefix)."""
	request = await _sent(_document("path", style, explode, kind), _VALUES[kind])
	assert request.url.raw_path.decode() == f"/items/{segment}"


QUERY = [
	(None, None, "string", "color=blue"),
	(None, None, "array", "color=blue&color=black&color=brown"),
	(None, None, "object", "R=100&G=200&B=150"),
	("form", False, "array", "color=blue,black,brown"),
	("form", False, "object", "color=R,100,G,200,B,150"),
	("spaceDelimited", False, "array", "color=blue%20black%20brown"),
	("spaceDelimited", False, "object", "color=R%20100%20G%20200%20B%20150"),
	("pipeDelimited", False, "array", "color=blue%7Cblack%7Cbrown"),
	("pipeDelimited", False, "object", "color=R%7C100%7CG%7C200%7CB%7C150"),
	("deepObject", True, "object", "color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"),
]


@pytest.mark.parametrize(("style", "explode", "kind", "query"), QUERY)
async def test_query_parameters_follow_the_style_table(
	style: str | None, explode: bool | None, kind: str, query: str
) -> None:
	"""form objects were sent as deepObject, unexploded commas as %2C, spaces as '+'."""
	request = await _sent(_document("query", style, explode, kind), _VALUES[kind])
	assert request.url.query.decode() == query


HEADER = [
	(None, "string", "blue"),
	(None, "array", "blue,black,brown"),
	(None, "object", "R,100,G,200,B,150"),
	(True, "object", "R=100,G=200,B=150"),
]


@pytest.mark.parametrize(("explode", "kind", "header"), HEADER)
async def test_header_parameters_follow_the_style_table(
	explode: bool | None, kind: str, header: str
) -> None:
	"""An array or object header was sent as a Python repr ("['blue', 'black', 'brown']")."""
	request = await _sent(_document("header", None, explode, kind), _VALUES[kind])
	assert request.headers["color"] == header


async def test_values_are_encoded_and_delimiters_are_not() -> None:
	"""A comma, slash or space inside an item is percent-encoded; the style's own are literal."""
	request = await _sent(_document("path", "matrix", True, "array"), ["a,b", "c/d", "e f"])
	assert request.url.raw_path.decode() == "/items/;color=a%2Cb;color=c%2Fd;color=e%20f"
	request = await _sent(_document("query", "form", False, "array"), ["a,b", "c&d=e"])
	assert request.url.query.decode() == "color=a%2Cb,c%26d%3De"


async def test_a_query_parameter_given_as_json_content_is_sent_as_json_text() -> None:
	"""``content: {application/json: ...}`` is JSON text, percent-encoded (was deepObject keys)."""
	document = _document("query", None, None, "object")
	param = document["paths"]["/items"]["get"]["parameters"][0]
	param["content"] = {"application/json": {"schema": param.pop("schema")}}
	request = await _sent(document, {"R": 1})
	assert request.url.query.decode() == "color=%7B%22R%22%3A1%7D"


@pytest.mark.parametrize(
	("where", "style", "says"),
	[
		("path", "form", r"style: 'form' is not a style of a path parameter"),
		("query", "matrix", r"style: 'matrix' is not a style of a query parameter"),
		("header", "label", r"style: 'label' is not a style of a header parameter"),
	],
)
def test_a_style_the_place_does_not_take_is_refused_naming_the_parameter(
	where: str, style: str, says: str
) -> None:
	"""The document's mistake is said at import, with the parameter's place."""
	with pytest.raises(ConfigurationError, match=r"#/paths/.*/parameters/0/" + says):
		from_openapi(_document(where, style, None, "array"), id="s")


def test_an_explode_that_is_no_boolean_is_refused() -> None:
	"""'false' as a string would have read as true."""
	with pytest.raises(ConfigurationError, match=r"parameters/0/explode: true or false"):
		from_openapi(_document("query", "form", "false", "array"), id="s")  # type: ignore[arg-type]
