"""Serve an OpenMolt agent as an MCP server: ``openmolt mcp AGENT_FILE``.

The server has one tool, named after the agent. Its input is ``{"input": "<text or JSON>"}``
(JSON that parses is passed as JSON, like ``openmolt --input``); it runs the agent once and
answers with the output: as ``structuredContent`` under the agent's output schema when that schema
is an object, and as JSON text. A run that does not succeed answers ``isError`` with the status
and the agent's message (so does a call without ``input``, or whose ``input`` is not text: MCP
reports input validation as a tool error; an unknown tool is ``-32602``). Claude Desktop, IDEs and other agents can then call
the agent. A client that sends a progress token hears a progress notification at each tool call
of the run ("calling <tool>").

Over stdio (``serve_stdio``) the agent's questions (``requestHumanInput``) and its tool calls
that wait for approval are asked of the client's user by MCP elicitation, when the client
declared it (`openmolt_mcp._ask`); a client that did not is answered "nobody can answer", its
calls that wait for approval are denied (not made), and the run goes on. The input was written by
another program's model, not by the operator: each run starts tainted
(`openmolt_core.triggers.starting_taint`, kind ``mcp``), so the agent's taint policy gates its
outbound tools from the first step, and it is recorded as started by ``mcp`` (the agent's name
as ``where``: `openmolt_core.observe.started_by`). What the client reads goes outside the instance: the answer
(its text, its structured content, a failure's message) and the tool's description are masked
with the instance's secrets (`openmolt_core.secrets.Redactor`), as A2A's and AG-UI's answers are.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from openmolt_core._support.masking import mask_url_logins, mask_url_logins_deep
from openmolt_core._support.words import json_kind
from openmolt_core.errors import RunError
from openmolt_core.events import ToolCallEvent
from openmolt_core.observe import started_by
from openmolt_core.result import RunState
from openmolt_core.secrets import Redactor
from openmolt_core.taint import untrusted_input
from openmolt_core.triggers import starting_taint
from openmolt_mcp import _ask

if TYPE_CHECKING:
	from mcp.server.lowlevel import Server

	from openmolt_core.agent import Agent
	from openmolt_core.decisions import ApprovalDecision

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


def _parse(text: str) -> Any:
	try:
		value = json.loads(text)
	except json.JSONDecodeError:
		return text
	return value if isinstance(value, (dict, list)) else text


def _decisions(agent: Agent, parked: _ask.Parked) -> list[ApprovalDecision]:
	"""The decisions a client's replies make for the calls its run parked on (unasked: denied)."""
	replies = parked.replies or {}
	return [
		_ask.decision_of(request, replies.get(request.call))
		for request in agent.approval_requests(parked.state)
	]


def agent_server(agent: Agent, *, ask_client: bool = False) -> Server[Any]:
	"""A low-level MCP server (official SDK) whose one tool runs ``agent``.

	Args:
		agent: The agent to serve.
		ask_client: Answer the agent's questions by asking the calling client's user (MCP
			elicitation, when the client declares it): this replaces the agent's own
			``on_human_input_request``. Its tool calls that wait for approval are asked of the
			client's user too, unless the agent has an ``on_approval_request`` of its own; a
			client that cannot ask denies them (`openmolt_mcp._ask`).
	"""
	import mcp.types as types
	from mcp import MCPError
	from mcp.server.lowlevel import Server

	from openmolt_core import __version__

	redact = Redactor(known=agent.om.secrets)  # the client is outside the instance

	def told(text: str) -> str:
		"""Text the client's user reads: a URL's login masked too, its links kept working."""
		return mask_url_logins(redact(text))

	schema = agent.output_schema
	structured = isinstance(schema, dict) and schema.get("type") == "object"
	name = tool_name(agent)
	description = redact(agent.instructions.strip()) or f"Run the OpenMolt agent {agent.name}."
	if len(description) > _DESCRIPTION_CHARS:
		description = description[: _DESCRIPTION_CHARS - 1].rstrip() + "…"
	questions = _ask.Questions()
	if ask_client:
		agent.on_human_input_request = _ask.asks_client(told)
	# The operator's own approval handler decides, when the agent has one; else the client's user.
	asks_approvals = ask_client and agent.on_approval_request is None
	if asks_approvals:
		agent.on_approval_request = _ask.approves_client(told)
	tool = types.Tool(
		name=name,
		title=agent.name,
		description=description,
		input_schema=INPUT_SCHEMA,
		output_schema=schema if structured else None,
	)

	async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
		return types.ListToolsResult(tools=[tool])

	def failed(text: str) -> types.CallToolResult:
		return types.CallToolResult(content=[types.TextContent(text=told(text))], is_error=True)

	async def call_tool(
		ctx: Any, params: types.CallToolRequestParams
	) -> types.CallToolResult | types.InputRequiredResult:
		if params.name != name:
			raise MCPError(
				types.INVALID_PARAMS, f"unknown tool {params.name!r}; this server has {name!r}"
			)
		arguments = params.arguments or {}
		resumed = questions.take(params) if params.request_state is not None else None
		if params.request_state is not None and resumed is None:
			return failed("this form was answered already, or expired: call the tool again")
		if resumed is None and "input" not in arguments:  # a tool error the model can correct
			return failed("the 'input' argument is required: the task")
		if resumed is None and not isinstance(arguments["input"], str):
			return failed(
				f"the 'input' argument must be text, not {json_kind(arguments['input'])}: the task, "
				"or an object or a list as JSON text"
			)
		if resumed is not None:
			history = resumed.state  # a run parked on a form, and what the user gave it
		else:
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
			# the run store, the viewer and `openmolt logs` say an MCP client started it
			with _ask.asking(ctx), started_by("mcp", where=agent.name):
				if resumed is not None and resumed.replies is not None:
					result = await agent.resume(history, decision=_decisions(agent, resumed))
				elif resumed is not None:
					result = await agent.resume(history, answer=resumed.answer)
				else:
					result = await agent.run(_parse(arguments["input"]), history=history)
		except RunError as exc:
			return failed(f"the run failed: {exc}")
		except Exception as exc:  # reported to the client; the server keeps serving
			return failed(f"the run failed: {type(exc).__name__}: {exc}")
		finally:
			agent.off("tool:call", progress)
		if result.status == "human_input_required" and ask_client and _ask.in_result(ctx):
			question = str((result.state.pending or {}).get("message", ""))
			return questions.park(result.state, told(question))
		if result.status == "approval_required" and asks_approvals and _ask.in_result(ctx):
			requests = agent.approval_requests(result.state)
			return questions.park_approvals(result.state, requests, told)
		if result.status == "approval_required":  # decided elsewhere: nothing waits here
			tools = ", ".join(sorted({r.tool for r in agent.approval_requests(result.state)}))
			return failed(
				f"the run stopped: {tools} waits for an approval this server does not ask for; "
				"nothing it would do was done"
			)
		if result.status != "success":
			message = result.human_message or result.error or ""
			text = f"the run ended with status {result.status!r}" + (
				f": {message}" if message else ""
			)
			return types.CallToolResult(content=[types.TextContent(text=told(text))], is_error=True)
		output = result.output
		if hasattr(output, "model_dump"):
			output = output.model_dump(mode="json")
		output = mask_url_logins_deep(redact.deep(output))  # a URL's login too, links kept
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
		agent: The agent; its questions go to the client (stdin carries the protocol, not a
			person's answers).
	"""
	from mcp.server.stdio import stdio_server

	server = agent_server(agent, ask_client=True)
	try:
		async with stdio_server() as (read, write):
			await server.run(read, write, server.create_initialization_options())
	finally:
		from openmolt_core.openmolt import OpenMolt

		await OpenMolt.of(agent).aclose()
