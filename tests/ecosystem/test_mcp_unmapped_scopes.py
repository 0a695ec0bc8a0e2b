"""A tool no pattern of an MCP server's ``scopes`` maps is granted by no named scope.

With ``scopes={"math": ["add"]}`` an agent granted only ``math`` saw, and could call, every tool
the patterns left out (``note``, and a ``delete_everything`` the server adds later): a tool with
no scope needed none. Unknown is unsafe: such a tool now needs the scope ``unscoped``, which
only an agent granted it (or every scope) has.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server import MCPServer

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp import MCP
from tests._results import results_at

pytestmark = pytest.mark.anyio


def _server(called: list[str]) -> MCPServer:
	server = MCPServer("demo")

	@server.tool()
	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		return a + b

	@server.tool()
	def delete_everything() -> str:
		"""Delete every record."""
		called.append("delete_everything")
		return "gone"

	return server


def _listed(model: ScriptedModel) -> list[str]:
	import json

	return [t["tool"] for t in json.loads(model.requests[0].messages[0].content)["tools"]]


@pytest.mark.parametrize("granted", [["math"], []])
async def test_an_unmapped_tool_is_neither_shown_nor_called(granted: list[Any]) -> None:
	called: list[str] = []
	om = OpenMolt(entry_points=False)
	om.register_integration("demo", MCP.server(_server(called), scopes={"math": ["add"]}))
	model = ScriptedModel([call_tool("demo.delete_everything"), finish(result="x")])
	agent = om.create_agent(
		name="A", model=model, integrations=[{"integration": "demo", "scopes": granted}]
	)
	await agent.run("go")
	assert "demo.delete_everything" not in _listed(model)
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False and "scope" in entry["error"], entry
	assert called == []
	await om.aclose()


@pytest.mark.parametrize("granted", [["math", "unscoped"], "all", None])
async def test_an_agent_granted_it_or_every_scope_has_it(granted: Any) -> None:
	called: list[str] = []
	om = OpenMolt(entry_points=False)
	om.register_integration("demo", MCP.server(_server(called), scopes={"math": ["add"]}))
	model = ScriptedModel([call_tool("demo.delete_everything"), finish(result="x")])
	entry = "demo" if granted is None else {"integration": "demo", "scopes": granted}
	agent = om.create_agent(name="A", model=model, integrations=[entry])
	await agent.run("go")
	assert "demo.delete_everything" in _listed(model) and called == ["delete_everything"]
	await om.aclose()
