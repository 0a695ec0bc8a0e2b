"""Serve an OpenMolt agent as an MCP server: ``openmolt mcp AGENT_FILE``.

The server has one tool, named after the agent. Its input is ``{"input": "<text or JSON>"}``
(JSON that parses is passed as JSON, like ``openmolt --input``); it runs the agent once and
answers with the output: as ``structuredContent`` under the agent's output schema when that schema
is an object, and as JSON text. A run that does not succeed answers ``isError`` with the status
and the agent's message (so does a call without ``input``: MCP reports input validation as a
tool error; an unknown tool is ``-32602``). Claude Desktop, IDEs and other agents can then call
the agent. A client that sends a progress token hears a progress notification at each tool call
of the run ("calling <tool>").

Nobody can answer the agent's questions over stdio (stdin carries the protocol), so
``requestHumanInput`` is turned off for the served agent. The input was written by another
program's model, not by the operator: each run starts tainted
(`openmolt_core.triggers.starting_taint`, kind ``mcp``), so the agent's taint policy gates its
outbound tools from the first step. What the client reads goes outside the instance: the answer
(its text, its structured content, a failure's message) and the tool's description are masked
with the instance's secrets (`openmolt_core.secrets.Redactor`), as A2A's and AG-UI's answers are.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import RunError
from openmolt_core.events import ToolCallEvent
from openmolt_core.result import RunState
from openmolt_core.secrets import Redactor
from openmolt_core.taint import untrusted_input
from openmolt_core.triggers import starting_taint

if TYPE_CHECKING:
	from mcp.server.lowlevel import Server

	from openmolt_core.agent import Agent

__all__ = ["INPUT_SCHEMA", "agent_server", "serve_stdio", "tool_name"]

INPUT_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"input": {
			"type": "string",
			"description": "The task for the agent: text, or JSON (an object or a list) as text.",
		}
	},
	"required": ["input"],
}
"""The served tool's input schema."""

_DESCRIPTION_CHARS = 1000


def tool_name(agent: Agent) -> str:
	"""The served tool's name: the agent's name made into a valid MCP tool name."""
	return re.sub(r"[^A-Za-z0-9_.-]+", "_", agent.name).strip("_")[:128] or "agent"


def _parse(text: Any) -> Any:
	if not isinstance(text, str):
		return text
	try:
		value = json.loads(text)
	except json.JSONDecodeError:
		return text
	return value if isinstance(value, (dict, list)) else text


def agent_server(agent: Agent) -> Server[Any]:
	"""A low-level MCP server (official SDK) whose one tool runs ``agent``.

	Args:
		agent: The agent to serve.
	"""
	import mcp.types as types
	from mcp import MCPError
	from mcp.server.lowlevel import Server

	from openmolt_core import __version__

	redact = Redactor(known=agent.om.secrets)  # the client is outside the instance
	schema = agent.output_schema
	structured = isinstance(schema, dict) and schema.get("type") == "object"
	name = tool_name(agent)
	description = redact(agent.instructions.strip()) or f"Run the OpenMolt agent {agent.name}."
	if len(description) > _DESCRIPTION_CHARS:
		description = description[: _DESCRIPTION_CHARS - 1].rstrip() + "…"
	tool = types.Tool(
		name=name,
		title=agent.name,
		description=description,
		input_schema=INPUT_SCHEMA,
		output_schema=schema if structured else None,
	)

	async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
		return types.ListToolsResult(tools=[tool])

	async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
		if params.name != name:
			raise MCPError(
				types.INVALID_PARAMS, f"unknown tool {params.name!r}; this server has {name!r}"
			)
		arguments = params.arguments or {}
		if "input" not in arguments:  # input validation: a tool error the model can correct
			return types.CallToolResult(
				content=[types.TextContent(text="the 'input' argument is required: the task")],
				is_error=True,
			)
		source = starting_taint("mcp", where=agent.name)
		history = untrusted_input(source) if source is not None else RunState()
		calls = 0

		async def progress(event: ToolCallEvent) -> None:
			nonlocal calls
			if event.run_id == history.run_id and not event.replayed:
				calls += 1
				await ctx.session.report_progress(calls, message=redact(f"calling {event.tool}"))

		agent.on("tool:call", progress)  # a no-op unless the client sent a progress token
		try:
			result = await agent.run(_parse(arguments["input"]), history=history)
		except RunError as exc:
			return types.CallToolResult(
				content=[types.TextContent(text=redact(f"the run failed: {exc}"))], is_error=True
			)
		except Exception as exc:  # reported to the client; the server keeps serving
			return types.CallToolResult(
				content=[
					types.TextContent(text=redact(f"the run failed: {type(exc).__name__}: {exc}"))
				],
				is_error=True,
			)
		finally:
			agent.off("tool:call", progress)
		if result.status != "success":
			message = result.human_message or result.error or ""
			text = f"the run ended with status {result.status!r}" + (
				f": {message}" if message else ""
			)
			return types.CallToolResult(
				content=[types.TextContent(text=redact(text))], is_error=True
			)
		output = result.output
		if hasattr(output, "model_dump"):
			output = output.model_dump(mode="json")
		output = redact.deep(output)
		text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
		return types.CallToolResult(
			content=[types.TextContent(text=text)],
			structured_content=output if structured and isinstance(output, dict) else None,
		)

	return Server(
		"openmolt",
		version=__version__,
		instructions=f"Calls the OpenMolt agent {agent.name}.",
		on_list_tools=list_tools,
		on_call_tool=call_tool,
	)


async def serve_stdio(agent: Agent) -> None:
	"""Serve ``agent`` over stdin and stdout until the client closes the connection.

	Args:
		agent: The agent; its human-input handler is removed (stdin carries the protocol).
	"""
	from mcp.server.stdio import stdio_server

	agent.on_human_input_request = None
	server = agent_server(agent)
	try:
		async with stdio_server() as (read, write):
			await server.run(read, write, server.create_initialization_options())
	finally:
		from openmolt_core.openmolt import OpenMolt

		await OpenMolt.of(agent).aclose()
