"""Imported tools name every parameter and body field as a valid, meaningful, unique input.

A document may name a parameter anything: ``StartTime<``, ``created[gte]``, ``filter[name]``,
``X-Request-ID``, ``@type``, ``1st``. The model sees an identifier any provider accepts as a
property name (``StartTimeBefore``, ``created_on_or_after``); the request sends the document's
own name where the document puts it: the path, the query, a header, the body's fields.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations.openapi import from_openapi
from openmolt_core.integrations.schema import input_name
from openmolt_core.testing import ScriptedModel, call_tool, finish

# What the model providers accept as a property name (Anthropic's rule is the strictest), and what
# Liquid reads after a dot.
PROPERTY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
LONG = "x" * 70


def _param(name: str, where: str = "query") -> dict[str, Any]:
	return {"name": name, "in": where, "required": where == "path", "schema": {"type": "string"}}


def _document(
	parameters: list[dict[str, Any]],
	body: dict[str, Any] | None = None,
	media: str = "application/x-www-form-urlencoded",
	path: str = "/calls",
) -> dict[str, Any]:
	operation: dict[str, Any] = {
		"operationId": "ListCall",
		"parameters": parameters,
		"responses": {"200": {"description": "ok"}},
	}
	if body is not None:
		operation["requestBody"] = {"content": {media: {"schema": body}}}
	return {
		"openapi": "3.0.0",
		"info": {"title": "T", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {path: {"post": operation}},
	}


@pytest.mark.parametrize(
	("vendor", "expected"),
	[
		("StartTime<", "StartTimeBefore"),
		("StartTime>", "StartTimeAfter"),
		("StartTime<=", "StartTimeOnOrBefore"),
		("StartTime>=", "StartTimeOnOrAfter"),
		("created[gte]", "created_on_or_after"),
		("created[lte]", "created_on_or_before"),
		("created[gt]", "created_after"),
		("created[lt]", "created_before"),
		("status[ne]", "status_not"),
		("dateCreated[gte]", "dateCreatedOnOrAfter"),
		("start_date<", "start_date_before"),
		("filter[name]", "filter_name"),
		("items[][id]", "items_id"),
		("X-Request-ID", "X_Request_ID"),
		("a b", "a_b"),
		("@type", "type"),
		("@odata.type", "odata_type"),
		("1st", "_1st"),
		("café", "cafe"),
		("<", "value"),
		("_id", "_id"),
	],
)
def test_input_name_spells_every_name_as_an_identifier(vendor: str, expected: str) -> None:
	"""Comparisons become words in the name's case style; any other character separates words."""
	assert input_name(vendor) == expected
	assert PROPERTY.match(input_name(vendor))


# Every kind of name a document may give, in the order it gives them: renamed ones before the
# plain ones they would push aside, names that collide after renaming, one name in two places.
NAMES = [
	("item-id", "path"),
	("item.id", "path"),
	("page-size", "query"),
	("page_size", "query"),
	("filter[name]", "query"),
	("filter.name", "query"),
	("created[gte]", "query"),
	("created[lte]", "query"),
	("StartTime<", "query"),
	("StartTime>", "query"),
	("id", "query"),
	("id", "header"),
	("X-Request-ID", "header"),
	("body", "query"),
	("$top", "query"),
	("@type", "query"),
	("1st", "query"),
	("a b", "query"),
	("limit", "query"),
	(LONG + "-a", "query"),
	(LONG + "-b", "query"),
]
EXPECTED = {
	("item-id", "path"): "item_id",
	("item.id", "path"): "item_id_2",
	("page-size", "query"): "page_size_2",
	("page_size", "query"): "page_size",
	("filter[name]", "query"): "filter_name",
	("filter.name", "query"): "filter_name_2",
	("created[gte]", "query"): "created_on_or_after",
	("created[lte]", "query"): "created_on_or_before",
	("StartTime<", "query"): "StartTimeBefore",
	("StartTime>", "query"): "StartTimeAfter",
	("id", "query"): "id",
	("id", "header"): "id_header",
	("X-Request-ID", "header"): "X_Request_ID",
	("body", "query"): "body",
	("$top", "query"): "top",
	("@type", "query"): "type",
	("1st", "query"): "_1st",
	("a b", "query"): "a_b",
	("limit", "query"): "limit",
	(LONG + "-a", "query"): "x" * 64,
	(LONG + "-b", "query"): "x" * 62 + "_2",
}
# The form body's fields: renamed ones, one colliding with another after renaming.
FIELDS = ["StartTime>", "filter[name]", "filter_name", "To", "item-id"]
FIELD_NAMES = ["StartTimeAfter", "filter_name_2", "filter_name", "To", "item_id"]


def _weird() -> dict[str, Any]:
	parameters = [_param(n, w) for n, w in NAMES]
	body = {
		"type": "object",
		"properties": {f: {"type": "string"} for f in FIELDS},
		"required": ["StartTime>"],
	}
	return _document(parameters, body, path="/items/{item-id}/{item.id}")


def test_every_name_is_a_meaningful_unique_property_and_the_request_keeps_the_documents() -> None:
	"""Each name is an identifier of at most 64 characters, none ends in a bare '_', none repeats."""
	(tool,) = from_openapi(_weird(), id="t").tools
	props = tool.input_schema["properties"]
	names = {k: v for k, v in EXPECTED.items()}
	assert list(props) == [*names.values(), "requestBody"]
	assert all(PROPERTY.match(p) and not p.endswith("_") for p in props)
	body = props["requestBody"]
	assert list(body["properties"]) == FIELD_NAMES
	assert body["required"] == ["StartTimeAfter"]
	# A renamed input says what the request calls it.
	assert props["StartTimeBefore"]["description"] == "Sent as the query parameter 'StartTime<'."
	assert props["id_header"]["description"] == "Sent as the header parameter 'id'."
	assert "'filter[name]'" in body["properties"]["filter_name_2"]["description"]
	assert "description" not in props["page_size"]
	assert tool.endpoint == "/items/{{ input.item_id }}/{{ input.item_id_2 }}"
	assert tool.headers == {
		"id": "{{ input.id_header }}",
		"X-Request-ID": "{{ input.X_Request_ID }}",
	}
	assert tool.query_params["StartTime<"] == "{{ input.StartTimeBefore }}"
	assert tool.query_params["limit"] == '{{ input["limit"] }}'
	assert tool.body == {
		f: f"{{{{ input.requestBody.{k} }}}}" for f, k in zip(FIELDS, FIELD_NAMES, strict=True)
	}


async def _sent(document: dict[str, Any], arguments: dict[str, Any]) -> httpx.Request:
	seen: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"ok": True})

	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(api))
	)
	om.register_integration("t", from_openapi(document, id="t"))
	model = ScriptedModel([call_tool("t.listCall", **arguments), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["t"])
	result = await agent.run("go")
	await om.aclose()
	outcome = json.loads(model.requests[-1].messages[-1].content)["results"][0]
	assert result.status == "success" and outcome["ok"], outcome
	(request,) = seen
	return request


@pytest.mark.anyio
@pytest.mark.parametrize("media", ["application/x-www-form-urlencoded", "application/json"])
async def test_the_request_sends_each_value_under_the_documents_name_in_its_place(
	media: str,
) -> None:
	"""Path, query, header and body fields each arrive under the name the document gives."""
	document = _weird()
	operation = document["paths"]["/items/{item-id}/{item.id}"]["post"]
	content = operation["requestBody"]["content"]
	content[media] = content.pop("application/x-www-form-urlencoded")
	arguments: dict[str, Any] = {key: f"v-{key}" for key in EXPECTED.values()}
	arguments["requestBody"] = {k: f"b-{k}" for k in FIELD_NAMES if k != "item_id"}
	request = await _sent(document, arguments)
	assert request.url.path == "/items/v-item_id/v-item_id_2"
	query = dict(request.url.params.multi_items())
	for (name, where), key in EXPECTED.items():
		if where == "query":
			assert query.pop(name) == f"v-{key}", name
	assert query == {}
	assert request.headers["id"] == "v-id_header"
	assert request.headers["X-Request-ID"] == "v-X_Request_ID"
	expected = {
		"StartTime>": "b-StartTimeAfter",
		"filter[name]": "b-filter_name_2",
		"filter_name": "b-filter_name",
		"To": "b-To",
	}  # item-id was not given: it is not sent
	if media == "application/json":
		assert json.loads(request.content) == expected
	else:
		assert dict(httpx.QueryParams(request.content.decode()).multi_items()) == expected


@pytest.mark.anyio
async def test_a_multipart_body_sends_its_parts_under_the_documents_names() -> None:
	"""Binary and text parts of a multipart body keep the document's names too."""
	body = {
		"type": "object",
		"properties": {
			"meta[title]": {"type": "string"},
			"file-upload": {"type": "string", "format": "binary"},
		},
	}
	document = _document([], body, media="multipart/form-data")
	(tool,) = from_openapi(document, id="t").tools
	assert list(tool.input_schema["properties"]["body"]["properties"]) == [
		"meta_title",
		"file_upload",
	]
	assert tool.body == {"meta[title]": "{{ input.body.meta_title }}"}
	assert tool.files == {"file-upload": "{{ input.body.file_upload }}"}
	request = await _sent(
		document,
		{"body": {"meta_title": "Hi", "file_upload": "data:text/plain;base64,aGVsbG8="}},
	)
	content = request.content.decode()
	assert 'name="meta[title]"\r\n\r\nHi\r\n' in content
	assert 'name="file-upload"' in content and "hello" in content


def test_a_parameter_named_body_keeps_its_name_and_the_request_body_is_request_body() -> None:
	"""The body field is OpenMolt's own name: a document's parameter named body wins it."""
	plain = _document([_param("q")], {"type": "object", "properties": {"a": {"type": "string"}}})
	(tool,) = from_openapi(plain, id="t").tools
	assert list(tool.input_schema["properties"]) == ["q", "body"]
	assert tool.body == "{{ input.body }}"  # nothing renamed: the whole object is sent
	clash = _document([_param("body")], {"type": "object"})
	(tool,) = from_openapi(clash, id="t").tools
	assert list(tool.input_schema["properties"]) == ["body", "requestBody"]
	assert tool.query_params == {"body": "{{ input.body }}"}
	assert tool.body == "{{ input.requestBody }}"


def test_the_same_name_in_the_path_the_query_and_a_header_says_where_each_goes() -> None:
	"""The first keeps the name; the others get their place's word, in the name's case style."""
	document = _document(
		[_param("Sid", "path"), _param("Sid"), _param("Sid", "header"), _param("sid", "header")],
		path="/calls/{Sid}",
	)
	(tool,) = from_openapi(document, id="t").tools
	assert list(tool.input_schema["properties"]) == ["Sid", "SidQuery", "SidHeader", "sid"]
	assert tool.query_params == {"Sid": "{{ input.SidQuery }}"}
	assert tool.headers == {"Sid": "{{ input.SidHeader }}", "sid": "{{ input.sid }}"}


def test_many_names_making_one_input_name_are_numbered_in_linear_time(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""4,000 query parameters spelled 'a' (a-, a--, a.) took 2 s to name: each number was found
	by trying every one before it (8,000 names: 7 s, in one operation of a document). Counted
	in numbers tried (each try asks _snake once), not timed."""
	from openmolt_core.integrations import _openapi_names

	tried = 0
	snake = _openapi_names._snake

	def counted(name: str) -> bool:
		nonlocal tried
		tried += 1
		return snake(name)

	monkeypatch.setattr(_openapi_names, "_snake", counted)
	names = ["a" + "-" * (i % 50) + "." * (i // 50) for i in range(4_000)]
	document = _document([_param(n) for n in names])
	(tool,) = from_openapi(document, id="t").tools
	assert tried <= 3 * len(names)  # one try or so per name (quadratic: about 8 million)
	keys = list(tool.input_schema["properties"])
	assert keys[:3] == ["a", "a_2", "a_3"] and len(set(keys)) == 4_000
	assert tool.query_params["a--"] == "{{ input.a_3 }}"


@pytest.mark.parametrize(
	("summary", "detail", "expected"),
	[
		# the detail restates the summary: said once
		(
			"Retrieve a list of calls.",
			"Retrieve a list of calls made to and from your account.",
			"Retrieve a list of calls made to and from your account.",
		),
		("Fetch a call", "Fetch a call.", "Fetch a call."),
		("Fetch a Call", "fetch a call", "fetch a call"),
		(
			"Delete a call",
			"Use this to delete a call you made. It cannot be undone.",
			"Use this to delete a call you made. It cannot be undone.",
		),
		# the summary says all the detail says: said once
		("Create a call and dial it", "Create a call", "Create a call and dial it"),
		# each says something of its own: both
		(
			"Create a call",
			"Calls are billed per minute.",
			"Create a call. Calls are billed per minute.",
		),
		("List calls", "", "List calls"),
		("", "Lists calls.", "Lists calls."),
		# a summary that ends a sentence otherwise keeps its mark, with no period after it
		(
			"Is the call live?",
			"Calls end after 4 hours.",
			"Is the call live? Calls end after 4 hours.",
		),
		("Hang up!", "The call ends at once.", "Hang up! The call ends at once."),
		('Say "hello."', "Then hang up.", 'Say "hello." Then hang up.'),
		("Details:", "The call's state.", "Details. The call's state."),
	],
)
def test_a_description_says_the_summary_once(summary: str, detail: str, expected: str) -> None:
	"""145 of Twilio's 197 descriptions repeated their summary."""
	document = _document([])
	operation = document["paths"]["/calls"]["post"]
	operation.update({"summary": summary, "description": detail})
	(tool,) = from_openapi(document, id="t").tools
	assert tool.description == expected


@pytest.mark.parametrize(
	("description", "expected"),
	[
		("Only calls that started before this", "Only calls that started before this. Sent as"),
		("Only calls that started before this.", "Only calls that started before this. Sent as"),
		("Is it before this?", "Is it before this? Sent as"),
		("Before this (UTC) ", "Before this (UTC). Sent as"),
		# a sentence ended inside quotes or brackets, and a colon before a list left out: they
		# were 'Say "now.". Sent as' and 'One of:. Sent as' (before: 'One of: Sent as')
		('Say "now."', 'Say "now." Sent as'),
		("(Deprecated.)", "(Deprecated.) Sent as"),
		("One of:", "One of. Sent as"),
		("Start, end;", "Start, end. Sent as"),
		(":", "Sent as"),
	],
)
def test_a_renamed_inputs_own_description_ends_before_the_name_it_is_sent_as(
	description: str, expected: str
) -> None:
	"""'Only calls that started before this Sent as the query parameter' read as one sentence."""
	parameter = _param("StartTime<") | {"description": description}
	(tool,) = from_openapi(_document([parameter]), id="t").tools
	said = tool.input_schema["properties"]["StartTimeBefore"]["description"]
	assert said == f"{expected} the query parameter 'StartTime<'."
