"""An agent served over MCP (`openmolt_mcp.server`) as the official client sees it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_mcp.server import agent_server

pytestmark = pytest.mark.anyio


async def test_a_client_with_a_progress_token_hears_each_tool_call() -> None:
	"""A progress callback gets one notification per tool call, counting up, naming the tool."""

	@tool(labels=[])
	def lookup(city: str) -> str:
		"""Look a city up.

		Args:
			city: The city.
		"""
		return f"rain in {city}"

	model = ScriptedModel(
		[
			call_tool("local.lookup", city="Oslo"),
			call_tool("local.lookup", city="Bergen"),
			finish({"result": "Rain."}),
			finish({"result": "Still rain."}),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model, tools=[lookup])
	heard: list[tuple[float, Any, Any]] = []

	async def on_progress(progress: float, total: float | None, message: str | None) -> None:
		heard.append((progress, total, message))

	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			result = await client.call_tool(
				"Helper", {"input": "Weather?"}, progress_callback=on_progress
			)
			quiet = await client.call_tool("Helper", {"input": "Again?"})
	await om.aclose()
	assert result.is_error is False
	assert quiet.is_error is False  # no progress token: nothing to report to, the same answer
	assert heard == [(1, None, "calling local.lookup"), (2, None, "calling local.lookup")]


async def test_a_request_the_client_gives_up_on_cancels_its_run() -> None:
	"""The client's timeout sends notifications/cancelled: the run stops in its tool call."""
	entered = anyio.Event()
	left = anyio.Event()
	stopped: list[str] = []

	@tool(labels=[])
	async def slow(city: str) -> str:
		"""Wait forever.

		Args:
			city: The city.
		"""
		entered.set()
		try:
			await anyio.sleep_forever()
		finally:
			stopped.append(city)
			left.set()
		return "never"

	model = ScriptedModel([call_tool("local.slow", city="Oslo"), finish("never")])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model, tools=[slow])
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			with pytest.raises(Exception):  # noqa: B017 - the SDK's own timeout error
				await client.call_tool("Helper", {"input": "Weather?"}, read_timeout_seconds=0.5)
			assert entered.is_set()
			await left.wait()
	await om.aclose()
	assert stopped == ["Oslo"]
	assert len(model.requests) == 1


async def test_a_call_without_input_is_a_tool_error_and_an_unknown_tool_a_protocol_error() -> None:
	"""MCP reports input validation as a tool error (isError) the caller's model can correct, and
	an unknown tool as JSON-RPC -32602; neither runs the agent."""
	model = ScriptedModel([])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model)
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			missing = await client.call_tool("Helper", {"task": "Weather?"})
			with pytest.raises(MCPError) as unknown:
				await client.call_tool("Nobody", {"input": "Weather?"})
	await om.aclose()
	assert missing.is_error is True
	assert "'input' argument is required" in missing.content[0].text
	assert unknown.value.error.code == -32602
	assert model.requests == []
