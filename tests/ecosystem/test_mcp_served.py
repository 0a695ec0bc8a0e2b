"""An agent served over MCP (`openmolt_mcp.server`) as the official client sees it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.types import ElicitResult

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
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
			stale = await client.call_tool("Helper", {"input": "Hi"}, request_state="made-up")
			with pytest.raises(MCPError) as unknown:
				await client.call_tool("Nobody", {"input": "Weather?"})
	await om.aclose()
	assert missing.is_error is True
	assert "'input' argument is required" in missing.content[0].text
	assert unknown.value.error.code == -32602
	assert stale.is_error is True  # no question waits under that state: nothing resumes
	assert "answered already, or expired" in stale.content[0].text
	assert model.requests == []


async def test_an_input_that_is_not_text_is_a_tool_error_naming_the_field() -> None:
	"""The schema says ``input`` is a string: null, a number or an object never runs the agent."""
	model = ScriptedModel([])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model)
	answers = []
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			for value in (None, 5, {"city": "Oslo"}, ["Oslo"]):
				answers.append(await client.call_tool("Helper", {"input": value}))
	await om.aclose()
	assert all(a.is_error for a in answers)
	texts = [str(getattr(a.content[0], "text", "")) for a in answers]
	assert all("'input' argument must be text" in t for t in texts), texts
	assert "as JSON text" in texts[2]
	assert model.requests == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_question_asks_a_client_that_declared_elicitation(mode: str) -> None:
	"""With ask_client (as ``openmolt mcp`` serves), the agent's question is an elicitation form
	(in the call's result on MCP 2026-07-28, ``elicitation/create`` on a legacy connection); the
	user's answer goes to the run, a declined one says so, and a client without elicitation is
	told nobody can answer: every call ends with the agent's output."""
	model = ScriptedModel(
		[
			ask_human("Which city?"),
			finish({"result": "Rain in Oslo."}),
			ask_human("Which city?"),
			finish({"result": "No city."}),
			ask_human("Which city?"),
			finish({"result": "Nobody."}),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model)
	asked: list[str] = []
	replies = [
		ElicitResult(action="accept", content={"answer": "Oslo"}),
		ElicitResult(action="decline"),
	]

	async def elicit(context: Any, params: Any) -> ElicitResult:
		asked.append(params.message)
		assert params.requested_schema["required"] == ["answer"]
		return replies.pop(0)

	with anyio.fail_after(30):
		server = agent_server(agent, ask_client=True)
		async with Client(server, cache=None, mode=mode, elicitation_callback=elicit) as client:
			answered = await client.call_tool("Helper", {"input": "Weather?"})
			declined = await client.call_tool("Helper", {"input": "Weather?"})
		async with Client(server, cache=None, mode=mode) as client:
			unasked = await client.call_tool("Helper", {"input": "Weather?"})
	await om.aclose()
	assert asked == ["Which city?", "Which city?"]
	assert [r.structured_content or r.content[0].text for r in (answered, declined, unasked)] == [
		'{"result": "Rain in Oslo."}',
		'{"result": "No city."}',
		'{"result": "Nobody."}',
	]
	said = [
		json.loads(r.messages[-1].content)["results"][0]["result"] for r in model.requests[1::2]
	]
	assert said == [
		"Oslo",
		"(the person chose not to answer)",
		"nobody can answer: the client that called this agent cannot ask its user; go on without",
	]
