"""What an MCP server lists (names, descriptions, schemas) is untrusted content, unless trusted.

The model reads a tool's description before any call: a server can put instructions there (tool
poisoning, ``hostile_stdio_server.py``'s ``poisoned``) and change them at any listing. They never
counted as untrusted input: an agent that reads private data and can post sent its first post
before any tool result had arrived, whatever the descriptions said. Now a run of an agent that may
call a tool a server listed is tainted from its first model call, unless the server's config says
``trustDescriptions``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.result import RunResult
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_mcp import MCP

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
SERVER = {"command": sys.executable, "args": [str(HERE / "hostile_stdio_server.py")]}
RECORD = {"call": "tools:h", "tool": "the tool list of h", "step": 0}


@tool(labels=["private"])
def vault() -> str:
	"""Read the vault."""
	return "the vault"


def _post(sent: list[str]) -> Any:
	@tool(labels=["outbound"])
	def post(text: str) -> str:
		"""Post a text publicly.

		Args:
			text: The text.
		"""
		sent.append(text)
		return "posted"

	return post


async def _run(
	entry: dict[str, Any], sent: list[str], events: list[Any] | None = None, **options: Any
) -> tuple[RunResult, ScriptedModel]:
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.from_config("h", entry))
	model = ScriptedModel([call_tool("local.post", text="hello"), finish(result="ok")])
	agent = om.create_agent(
		name="A", model=model, integrations=["h"], tools=[vault, _post(sent)], **options
	)
	if events is not None:
		agent.on("taint", events.append)
	try:
		with anyio.fail_after(60):
			return await agent.run("go"), model
	finally:
		await om.aclose()


async def test_a_servers_listing_taints_the_run_from_its_first_model_call() -> None:
	"""The first post, before any MCP call, is refused: the run read the server's descriptions."""
	sent: list[str] = []
	events: list[Any] = []
	result, model = await _run(
		{**SERVER, "includeTools": ["poisoned"]}, sent, events, taint_policy="refuse"
	)
	assert sent == []
	assert result.state.taint == [RECORD]
	(refused,) = json.loads(model.requests[1].messages[-1].content)["results"]
	assert refused["ok"] is False and "the tool list of h" in refused["error"]
	assert [(e.tool, e.call, e.step) for e in events] == [("the tool list of h", "tools:h", 0)]


async def test_by_default_the_post_waits_for_approval_and_the_record_is_kept_once() -> None:
	"""Under the default policy the post parks; resumed and approved, it runs: one record still."""
	sent: list[str] = []
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.from_config("h", SERVER))
	model = ScriptedModel([call_tool("local.post", text="hello"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"], tools=[vault, _post(sent)])
	try:
		with anyio.fail_after(60):
			parked = await agent.run("go")
			assert parked.status == "approval_required", parked.status
			(request,) = agent.approval_requests(parked.state)
			assert "the tool list of h" in request.rule
			done = await agent.resume(parked.state, decision=request.approve())
	finally:
		await om.aclose()
	assert done.status == "success" and sent == ["hello"]
	assert done.state.taint == [RECORD]


async def test_a_server_marked_trusted_taints_nothing() -> None:
	"""trustDescriptions: the listing is the user's word, and the post runs at once."""
	sent: list[str] = []
	result, _ = await _run({**SERVER, "trustDescriptions": True}, sent, taint_policy="refuse")
	assert sent == ["hello"] and result.state.taint == []


async def test_a_server_whose_tools_the_agent_may_not_call_taints_nothing() -> None:
	"""No tool of the server is the agent's to call (no scope granted): the model reads none."""
	sent: list[str] = []
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.from_config("h", SERVER))
	model = ScriptedModel([call_tool("local.post", text="hello"), finish(result="ok")])
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[{"integration": "h", "scopes": []}],
		tools=[vault, _post(sent)],
		taint_policy="refuse",
	)
	try:
		with anyio.fail_after(60):
			result = await agent.run("go")
	finally:
		await om.aclose()
	assert sent == ["hello"] and result.state.taint == []


async def test_an_in_process_server_is_untrusted_too_unless_marked() -> None:
	"""MCP.server(obj): the object may relay another server; trust_descriptions=True trusts it."""
	from mcp.server import MCPServer

	def server() -> MCPServer:
		made = MCPServer("relay")

		@made.tool()
		def lookup(q: str) -> str:
			"""Look something up."""
			return q

		return made

	for trusted, taint in ((False, [RECORD]), (True, [])):
		sent: list[str] = []
		om = OpenMolt(entry_points=False)
		om.register_integration("h", MCP.server(server(), trust_descriptions=trusted))
		model = ScriptedModel([call_tool("local.post", text="hi"), finish(result="ok")])
		agent = om.create_agent(
			name="A",
			model=model,
			integrations=["h"],
			tools=[vault, _post(sent)],
			taint_policy="refuse",
		)
		try:
			result = await agent.run("go")
		finally:
			await om.aclose()
		assert result.state.taint == taint
		assert sent == ([] if taint else ["hi"])
