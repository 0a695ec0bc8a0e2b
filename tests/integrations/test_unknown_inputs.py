"""A built-in HTTP tool refuses an input it does not know, as function tools do, never drops it."""

from __future__ import annotations

import importlib
import json
import pkgutil

import httpx
import pytest

import openmolt_integrations
from openmolt import OpenMolt
from openmolt_core.integrations import HttpTool
from openmolt_core.testing import ScriptedModel, call_tool, finish

MODULES = [m.name for m in pkgutil.iter_modules(openmolt_integrations.__path__) if m.name[0] != "_"]
HTTP_TOOLS = [
	pytest.param(tool, id=f"{name}.{tool.handle}")
	for name in MODULES
	for tool in importlib.import_module(f"openmolt_integrations.{name}").INTEGRATION.tools
	if isinstance(tool, HttpTool)
]


@pytest.mark.parametrize("tool", HTTP_TOOLS)
def test_every_built_in_http_tool_checks_inputs_against_the_ones_it_declares(
	tool: HttpTool,
) -> None:
	"""An input the tool neither declares nor reads would be dropped: it is refused instead."""
	checked = tool.checked_input_schema()
	assert checked["additionalProperties"] is False
	assert checked["properties"] == tool.input_schema["properties"]


@pytest.mark.anyio
async def test_a_misspelt_input_is_refused_not_dropped() -> None:
	"""createIssue with 'lables' opened an issue without labels; now nothing is sent."""
	seen: list[httpx.Request] = []

	def service(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(201, json={"number": 1})

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
	call = call_tool("github.createIssue", owner="o", repo="r", title="Bug", lables=["bug"])
	model = ScriptedModel([call, finish(done=True)])
	config = {"apiKey": "ghp_abcdefgh123456"}
	agent = om.create_agent(
		name="T",
		model=model,
		integrations=[{"integration": "github", "credential": {"config": config}}],
	)
	async with om:
		await agent.run()
	assert seen == []
	[reply] = [m.content for m in model.requests[1].messages if '"results"' in m.content]
	assert "lables: unknown field; remove it" in json.loads(reply)["results"][0]["error"]


def _tool(schema: dict[str, object], body: object) -> HttpTool:
	return HttpTool(
		handle="t", description="d", method="POST", endpoint="/x", body=body, input_schema=schema
	)


def test_a_schema_stays_open_where_an_undeclared_input_may_be_read() -> None:
	"""Kept open: the schema's own additionalProperties, properties a branch declares, a template
	reading an undeclared input or the whole input; a GraphQL $input in a body is not a read."""
	props = {"a": {"type": "string"}}
	base = {"type": "object", "properties": props}
	open_cases = [
		_tool({**base, "additionalProperties": True}, {"a": "{{ input.a }}"}),
		_tool({**base, "anyOf": [{"properties": {"b": {}}}]}, {"a": "{{ input.a }}"}),
		_tool(base, {"a": "{{ input.a }}", "b": "{{ input.b }}"}),
		_tool(base, {"raw": "{{ input | json }}"}),
	]
	for tool in open_cases:
		assert "additionalProperties" not in tool.checked_input_schema() or (
			tool.input_schema.get("additionalProperties") is True
		)
	graphql = _tool(
		base, {"query": "mutation M($input: X!) { m(input: $input) { id } }", "v": "{{ input.a }}"}
	)
	assert graphql.checked_input_schema()["additionalProperties"] is False


@pytest.mark.anyio
async def test_an_imported_openapi_tool_refuses_an_input_it_does_not_declare() -> None:
	"""The refusal is the engine's, so a tool imported from an OpenAPI document gets it too."""
	from openmolt_core.integrations.openapi import from_openapi

	document = {
		"openapi": "3.1.0",
		"info": {"title": "Pets", "version": "1"},
		"servers": [{"url": "https://pets.example.com"}],
		"paths": {
			"/pets": {
				"post": {
					"operationId": "addPet",
					"requestBody": {
						"required": True,
						"content": {
							"application/json": {
								"schema": {
									"type": "object",
									"properties": {"name": {"type": "string"}},
									"required": ["name"],
								}
							}
						},
					},
					"responses": {"201": {"description": "Added."}},
				}
			}
		},
	}
	seen: list[httpx.Request] = []

	def service(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(201, json={"id": 1})

	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(service))
	)
	om.register_integration("pets", from_openapi(document, id="pets"))
	model = ScriptedModel([call_tool("pets.addPet", name="Rex", nmae="Rex"), finish(done=True)])
	agent = om.create_agent(name="T", model=model, integrations=["pets"])
	async with om:
		await agent.run()
	assert seen == []
	[reply] = [m.content for m in model.requests[1].messages if '"results"' in m.content]
	assert "nmae: unknown field; remove it" in json.loads(reply)["results"][0]["error"]
