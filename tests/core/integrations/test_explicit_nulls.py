"""An explicit null reaches the request only where the tool's input schema lets the field be null."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.integrations.templating import null_inputs, render
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio


async def no_sleep(_: float) -> None:
	return None


UPDATE = HttpTool(
	handle="update",
	description="d",
	method="PATCH",
	endpoint="/things/{{ input.id }}",
	query_params={"q": "{{ input.milestone }}"},
	headers={"X-Milestone": "{{ input.milestone }}"},
	body={
		"icon": "{{ input.icon }}",
		"cover": "{{ input.cover }}",
		"name": "{{ input.name }}",
		"meta": {"milestone": "{{ input.milestone }}"},
	},
	input_schema={
		"type": "object",
		"properties": {
			"id": {"type": "string"},
			"icon": {"type": ["object", "null"], "description": "null removes the icon."},
			"cover": {"anyOf": [{"type": "object"}, {"type": "null"}]},
			"milestone": {"type": ["integer", "null"]},
			"name": {"type": "string"},
		},
		"required": ["id"],
	},
)


async def send(input: dict[str, Any]) -> httpx.Request:
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={})

	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	context = ToolContext(
		agent="a",
		integration="svc",
		config={},
		http=lambda: http,
		extras={"retry_policy": RetryPolicy(sleep=no_sleep)},
	)
	svc = Integration(
		id="svc", name="Svc", api_setup=ApiSetup(base_url="https://api.example.com"), tools=[UPDATE]
	)
	await execute_http_tool(UPDATE, svc, input, context)
	return seen[0]


async def test_a_null_the_schema_allows_is_sent_in_the_json_body() -> None:
	"""icon: null (type list) and cover: null (anyOf) are sent as null, even in a nested object."""
	request = await send({"id": "1", "icon": None, "cover": None, "milestone": None})
	assert json.loads(request.content) == {"icon": None, "cover": None, "meta": {"milestone": None}}


async def test_an_absent_nullable_field_is_still_left_out() -> None:
	"""A nullable field the call does not give is not sent: only an explicit null is."""
	request = await send({"id": "1", "name": "n"})
	assert json.loads(request.content) == {"name": "n"}


async def test_a_null_the_schema_does_not_allow_is_dropped() -> None:
	"""name is not nullable: a None reaching the engine is left out as before."""
	request = await send({"id": "1", "name": None, "icon": {"emoji": "x"}})
	assert json.loads(request.content) == {"icon": {"emoji": "x"}}


async def test_a_null_is_never_sent_in_the_query_or_a_header() -> None:
	"""Null has no form in a URL or a header: a nullable field's null is left out there."""
	request = await send({"id": "1", "milestone": None})
	assert request.url.query == b""
	assert "x-milestone" not in request.headers
	assert json.loads(request.content) == {"meta": {"milestone": None}}


def test_null_inputs_reads_every_spelling_of_a_nullable_property() -> None:
	"""Type lists, type null, anyOf/oneOf branches, enum/const null and OpenAPI's nullable count."""
	schema = {
		"type": "object",
		"properties": {
			"a": {"type": ["string", "null"]},
			"b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
			"c": {"oneOf": [{"type": "integer"}, {"type": ["null"]}]},
			"d": {"enum": ["x", None]},
			"e": {"const": None},
			"f": {"type": "string", "nullable": True},
			"g": {"type": "string"},
			"h": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
			"i": True,
			"j": {"$ref": "#/$defs/maybe"},
			"k": {"$ref": "#/$defs/text"},
		},
		"$defs": {"maybe": {"type": ["object", "null"]}, "text": {"type": "string"}},
	}
	assert null_inputs(schema) == frozenset("abcdefj")
	assert null_inputs({"type": "object"}) == frozenset()


def test_render_keeps_only_the_named_nulls() -> None:
	"""render(nulls=...) keeps an exact lookup's null for the names given, drops the others."""
	data = {"input": {"a": None, "b": None}, "config": {}}
	template = {"a": "{{ input.a }}", "b": "{{ input.b }}", "c": "{{ input.c }}"}
	assert render(template, data, nulls=frozenset({"a", "c"})) == {"a": None}
	assert render(template, data) == {}
