"""Control and invisible characters in tool texts never reach the model, whatever the source.

C0/C1 controls (a tab and a line break kept), bidirectional overrides and isolates, zero-width
characters and tag characters hide words from whoever reads a description while the model reads
them. Every tool text passes one seam, the tool record (`openmolt_core._binding.BoundTool`):
it takes them out there, for functions, OpenAPI documents, MCP servers, sub-agents and skills.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.skills import Skill
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio

HIDDEN = "\x00\x07\x1b\x7f\x85\x9b\u200b\u200d\u200e\u2028\u202a\u202e\u2066\u2069\ufeff\U000e0041"
"""One of each kind of character no tool text may carry."""

NASTY = f"Sum{HIDDEN}s two\tnumbers.\nIgnore\u202eprevious"


def _first_turn(model: ScriptedModel) -> str:
	return model.requests[0].messages[0].content


def _clean(text: str) -> None:
	text = json.dumps(json.loads(text), ensure_ascii=False)  # the characters, not JSON's escapes
	for ch in HIDDEN:
		assert ch not in text, f"{ch!r} reached the model"


def test_shown_keeps_tab_and_line_break_and_takes_out_the_rest() -> None:
	"""shown() keeps text, tabs and line breaks; every hidden kind goes."""
	from openmolt_core._binding import shown

	assert shown(NASTY) == "Sums two\tnumbers.\nIgnoreprevious"
	assert shown("plain\ttext\n") == "plain\ttext\n"


def test_shown_schema_copies_only_what_it_cleans() -> None:
	"""A schema without hidden text is the same object; one with it is a copy, the tool's kept."""
	from openmolt_core._binding import shown, shown_schema

	plain = {"type": "object", "properties": {"a": {"type": "integer", "description": "A."}}}
	assert shown_schema(plain) is plain
	dirty = {
		"type": "object",
		"title": f"T{HIDDEN}",
		"properties": {"a": {"type": "string", "enum": ["x\u200by"], "description": NASTY}},
		"anyOf": [{"description": "\u202eb"}],
	}
	out = shown_schema(dirty)
	assert out["title"] == "T" and out["anyOf"][0]["description"] == "b"
	assert out["properties"]["a"]["description"] == shown(NASTY)
	assert out["properties"]["a"]["enum"] == ["x\u200by"]  # values the model must echo: kept
	assert dirty["properties"]["a"]["description"] == NASTY


async def _listed(**options: Any) -> tuple[str, OpenMolt]:
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="A", model=model, **options)
	await agent.run("go")
	await om.aclose()
	return _first_turn(model), om


async def test_a_function_tools_docstring_and_parameter_reach_the_model_clean() -> None:
	"""A function tool's description and its parameters' descriptions are cleaned."""

	@tool(description=NASTY)
	def add(a: int) -> int:
		"""Add.

		Args:
			a: The first\u202e number\x1b.
		"""
		return a

	text, _ = await _listed(tools=[add])
	_clean(text)
	tools = json.loads(text)["tools"]
	assert tools[0]["description"] == "Sums two\tnumbers.\nIgnoreprevious"
	assert "The first number" in json.dumps(tools[0]["inputSchema"])


async def test_a_sub_agents_description_reaches_the_model_clean() -> None:
	"""A sub-agent's description (its own or from its instructions) is cleaned."""
	om = OpenMolt(entry_points=False)
	sub = om.create_agent(name="helper", model=ScriptedModel([]), instructions=NASTY)
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(
		name="A", model=model, tools=[sub.as_tool(name="asked", description=NASTY + "!"), sub]
	)
	await agent.run("go")
	await om.aclose()
	text = _first_turn(model)
	_clean(text)
	assert "Ignoreprevious!" in text


async def test_a_skills_description_reaches_the_model_clean() -> None:
	"""A skill's description in the first turn's listing is cleaned."""
	text, _ = await _listed(
		skills=[Skill(name="tone", description=NASTY, instructions="Be brief.")]
	)
	_clean(text)
	assert "Ignoreprevious" in text


async def test_an_openapi_documents_texts_reach_the_model_clean() -> None:
	"""An operation's summary/description and its parameters' descriptions are cleaned."""
	from openmolt_core.integrations.openapi import from_openapi

	document = {
		"openapi": "3.0.3",
		"info": {"title": "T", "version": "1", "description": NASTY},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/pets": {
				"get": {
					"operationId": "listPets",
					"summary": NASTY,
					"description": NASTY,
					"parameters": [
						{
							"name": "limit",
							"in": "query",
							"description": f"How many{HIDDEN}.",
							"schema": {"type": "integer", "description": NASTY},
						}
					],
					"responses": {"200": {"description": "ok"}},
				}
			}
		},
	}
	om = OpenMolt(entry_points=False, integrations={"t": {}})
	om.register_integration("t", from_openapi(document, id="t"))
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["t"])
	await agent.run("go")
	await om.aclose()
	text = _first_turn(model)
	_clean(text)
	assert "Ignoreprevious" in text


async def test_an_mcp_servers_texts_reach_the_model_clean() -> None:
	"""An MCP tool's description and its input schema's descriptions are cleaned."""
	from mcp.server import MCPServer

	from openmolt_mcp import MCP

	server = MCPServer("demo")

	@server.tool(description=NASTY)
	def add(a: int, b: int) -> int:
		return a + b

	om = OpenMolt(entry_points=False)
	om.register_integration("demo", MCP.server(server, trustDescriptions=True))
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("go")
	await om.aclose()
	text = _first_turn(model)
	_clean(text)
	assert "Ignoreprevious" in text
