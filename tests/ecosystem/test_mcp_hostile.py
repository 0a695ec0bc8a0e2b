"""What an MCP server lists is someone else's data: odd names, duplicates and huge schemas."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pytest
from mcp.server.lowlevel import Server

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp import MCP

pytestmark = pytest.mark.anyio

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def listing(tools: list[types.Tool]) -> tuple[Server[Any], list[str]]:
	"""A low-level server that lists ``tools`` (the list can be changed) and notes each call."""
	called: list[str] = []

	async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
		return types.ListToolsResult(tools=list(tools))

	async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
		called.append(params.name)
		return types.CallToolResult(content=[types.TextContent(text=f"called {params.name}")])

	return Server("hostile", on_list_tools=list_tools, on_call_tool=call), called


def _tools(model: ScriptedModel, request: int = 0) -> list[dict[str, Any]]:
	tools: list[dict[str, Any]] = json.loads(model.requests[request].messages[0].content)["tools"]
	return tools


async def test_a_handle_names_the_same_server_tool_whatever_the_listing_order() -> None:
	"""Names that are made safe the same way get handles of their own, not by listing order."""
	names = ["a b", "a_b", "a:b"]

	async def handles(order: list[str]) -> dict[str, str]:
		server, _ = listing([types.Tool(name=n, input_schema=OBJECT) for n in order])
		source = MCP.server(server, id="h").source
		assert source is not None
		try:
			return {t.name: t.handle for t in await source.list_tools()}
		finally:
			await source.aclose()

	first = await handles(names)
	assert first == await handles(list(reversed(names)))
	assert first["a_b"] == "a_b"  # a name that is safe keeps it
	assert len(set(first.values())) == 3


async def test_a_name_listed_twice_is_one_tool() -> None:
	"""A server that lists a name twice gives one tool (calls go by name), not 'x' and 'x_'."""
	server, called = listing(
		[
			types.Tool(name="x", input_schema=OBJECT, description="first"),
			types.Tool(name="x", input_schema=OBJECT, description="second"),
		]
	)
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.server(server))
	model = ScriptedModel([call_tool("h.x"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	await agent.run("go")
	await om.aclose()
	assert [(t["tool"], t["description"]) for t in _tools(model)] == [("h.x", "first")]
	assert called == ["x"]


async def test_a_long_name_is_cut_to_a_handle_that_still_tells_it_apart() -> None:
	"""Two 300-character names that share their first 128 characters are two handles."""
	long_a, long_b = "y" * 299 + "a", "y" * 299 + "b"
	server, _ = listing(
		[types.Tool(name=long_a, input_schema=OBJECT), types.Tool(name=long_b, input_schema=OBJECT)]
	)
	source = MCP.server(server, id="h").source
	assert source is not None
	listed = {t.name: t.handle for t in await source.list_tools()}
	await source.aclose()
	assert all(len(h) <= 128 for h in listed.values())
	assert listed[long_a] != listed[long_b]


async def test_a_tool_whose_input_schema_is_huge_is_left_out_and_said_so(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A schema is sent with every prompt: one past the cap is left out (logged), not sent."""
	huge = {
		"type": "object",
		"properties": {f"p{i}": {"type": "string", "description": "z" * 1000} for i in range(100)},
	}
	assert len(json.dumps(huge)) > 100_000
	server, _ = listing(
		[types.Tool(name="huge", input_schema=huge), types.Tool(name="small", input_schema=OBJECT)]
	)
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.server(server))
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	await agent.run("go")
	await om.aclose()
	assert [t["tool"] for t in _tools(model)] == ["h.small"]
	assert len(model.requests[0].messages[0].content) < 10_000
	assert "'huge' is left out: its input schema" in caplog.text


def _appender(calls: list[str], annotations: types.ToolAnnotations, name: str = "append") -> Any:
	from mcp.server import MCPServer

	server = MCPServer("db")

	@server.tool(name=name, annotations=annotations)
	def append(text: str) -> str:
		"""Append a row."""
		calls.append(text)
		return "ok"

	return server


async def _recover(began: Any, now: Any, **options: Any) -> tuple[Any, list[str]]:
	"""A run began against server ``began``; after a crash in its call, ``now`` lists instead."""
	from openmolt import RunError
	from openmolt_core.agent import HumanInputUnavailable
	from tests.core.test_durability import _DoubtPort

	def nobody(question: str) -> str:
		raise HumanInputUnavailable(question)

	first = OpenMolt(entry_points=False)
	first.register_integration("db", MCP.server(began, **options))
	agent = first.create_agent(name="A", model=ScriptedModel([]), integrations=["db"])
	await agent._refresh_tools()  # the listing the run's first turn is built from
	state = agent.new_state("go")
	await first.aclose()
	calls: list[str] = []
	second = OpenMolt(entry_points=False)
	second.register_integration("db", MCP.server(now, **options))
	model = ScriptedModel([call_tool("db.append", text="a"), finish(result="ok")])
	again = second.create_agent(
		name="A", model=model, integrations=["db"], on_human_input_request=nobody
	)
	try:
		result: Any = await again.execute(state, port=_DoubtPort())
	except RunError as exc:
		result = exc
	finally:
		await second.aclose()
	return result, calls


async def test_a_tool_newly_marked_idempotent_does_not_make_a_recovered_call_run_again() -> None:
	"""The run began with a write whose in-doubt call asks; a relisting of the trusted server
	that calls it idempotent (same description and schema) stops the recovered run: the call is
	not run blindly. (An untrusted server's claim changes nothing: its call asks either way.)"""
	calls: list[str] = []
	closed = types.ToolAnnotations(open_world_hint=False)
	idempotent = types.ToolAnnotations(open_world_hint=False, idempotent_hint=True)
	result, _ = await _recover(
		_appender(calls, closed), _appender(calls, idempotent), trust_descriptions=True
	)
	assert calls == []
	assert "changed 'db.append'" in str(result)
	result, _ = await _recover(_appender(calls, closed), _appender(calls, idempotent))
	assert calls == [] and result.status == "human_input_required"


async def test_a_handle_that_now_names_another_server_tool_stops_a_recovered_run() -> None:
	"""A relisting where the handle of 'a b' is taken by a tool literally named so, listed first
	(same description and schema), stops the recovered run: it never calls the other tool."""
	from openmolt_mcp._source import _handle

	taken = _handle("a b")
	began, _ = listing([types.Tool(name="a b", input_schema=OBJECT)])
	now, called = listing(
		[types.Tool(name=taken, input_schema=OBJECT), types.Tool(name="a b", input_schema=OBJECT)]
	)
	from openmolt import RunError
	from tests.core.test_durability import _DoubtPort

	first = OpenMolt(entry_points=False)
	first.register_integration("h", MCP.server(began, inDoubt={"*": "retry"}))
	agent = first.create_agent(name="A", model=ScriptedModel([]), integrations=["h"])
	await agent._refresh_tools()
	state = agent.new_state("go")
	await first.aclose()
	second = OpenMolt(entry_points=False)
	second.register_integration("h", MCP.server(now, inDoubt={"*": "retry"}))
	model = ScriptedModel([call_tool(f"h.{taken}"), finish(result="ok")])
	again = second.create_agent(name="A", model=model, integrations=["h"])
	with pytest.raises(RunError, match="changed"):
		await again.execute(state, port=_DoubtPort())
	await second.aclose()
	assert called == []


async def test_a_tool_whose_schema_is_no_json_schema_is_left_out_and_said_so(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A provider refuses a request whose tool schema is invalid: that tool is left out (logged)
	and the others serve, rather than every run of the agent failing at its first model call."""
	server, _ = listing(
		[
			types.Tool(
				name="typed", input_schema={"type": "object", "properties": {"x": {"type": 5}}}
			),
			types.Tool(name="props", input_schema={"type": "object", "properties": "nope"}),
			types.Tool(
				name="out", input_schema=OBJECT, output_schema={"type": "object", "required": "x"}
			),
			types.Tool(name="small", input_schema=OBJECT),
		]
	)
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.server(server))
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	with caplog.at_level("WARNING", logger="openmolt.mcp"):
		await agent.run("go")
	await om.aclose()
	assert [t["tool"] for t in _tools(model)] == ["h.small"]
	said = caplog.text
	assert "'typed'" in said and "properties.x.type" in said
	assert "'props'" in said and "'out'" in said and "output schema" in said


async def test_a_draft_7_tuple_schema_is_kept_in_its_2020_12_form() -> None:
	"""A server's draft-7 tuple (``items`` a list, as zod writes one) is no broken schema: the tool
	is kept, sent as 2020-12 (``prefixItems``; ``additionalItems`` as ``items``), and validated."""
	point = {"type": "array", "items": [{"type": "number"}, {"type": "number"}], "minItems": 2}
	pair = {"items": [{"type": "string"}], "additionalItems": False}
	schema = {
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"properties": {
			"at": point,
			"tag": pair,
			"raw": {"type": "object", "default": {"items": [1]}},
		},
		"required": ["at"],
	}
	server, called = listing([types.Tool(name="move", input_schema=schema)])
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.server(server))
	model = ScriptedModel(
		[
			call_tool("h.move", at=["x", 2]),
			call_tool("h.move", at=[1, 2], tag=["a"]),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	await agent.run("go")
	await om.aclose()
	[tool] = _tools(model)
	sent = tool["inputSchema"]
	at, tag = sent["properties"]["at"], sent["properties"]["tag"]
	assert at["prefixItems"] == point["items"] and "items" not in at
	assert tag == {"prefixItems": [{"type": "string"}], "items": False}
	assert sent["properties"]["raw"]["default"] == {"items": [1]}  # a value, not a schema
	assert called == ["move"]  # the first call's input was refused by the tuple's schema


@pytest.mark.parametrize("trusted", [True, False])
async def test_a_call_without_an_answer_is_in_doubt_unless_repeating_it_is_safe(
	trusted: bool,
) -> None:
	"""Timed out, a write may have run: the model reads so; a read-only tool's timeout does not,
	when a server the user trusts says it reads (an untrusted server's claim is not believed)."""
	import anyio
	from mcp.server import MCPServer

	server = MCPServer("slow")

	@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
	async def read() -> str:
		"""Read slowly."""
		await anyio.sleep(5)
		return "read"

	@server.tool()
	async def write() -> str:
		"""Write slowly."""
		await anyio.sleep(5)
		return "written"

	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.server(server, timeout=0.3, trust_descriptions=trusted))
	model = ScriptedModel([[call_tool("h.read"), call_tool("h.write")], finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	with anyio.fail_after(10):
		await agent.run("go")
	await om.aclose()
	reading, writing = json.loads(model.requests[1].messages[-1].content)["results"]
	assert "did not answer within 0.3 s" in reading["error"]
	assert ("taken effect" in reading["error"]) is not trusted
	assert "did not answer within 0.3 s" in writing["error"]
	assert "may or may not have taken effect" in writing["error"]


async def test_a_listing_past_the_cap_keeps_the_tools_that_fit_and_says_so(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""5,000 tools of 2,000-character descriptions (10 MB) put each in every prompt: past the
	listing's cap the rest is left out, with one warning naming how many and the fix."""
	from openmolt_mcp._source import MAX_LISTING_CHARS

	server, _ = listing(
		[types.Tool(name=f"t{i}", description="d" * 1999, input_schema=OBJECT) for i in range(5000)]
	)
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.server(server, id="h"))
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	with caplog.at_level("WARNING", logger="openmolt.mcp"):
		await agent.run("go")
	await om.aclose()
	kept = [t["tool"] for t in _tools(model)]
	assert kept[:2] == ["h.t0", "h.t1"] and 0 < len(kept) < 5000
	assert len(model.requests[0].messages[0].content) < MAX_LISTING_CHARS * 1.2
	(said,) = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
	assert f"{5000 - len(kept)} of its 5000 tools are left out" in said
	assert "includeTools" in said


async def test_a_relisting_that_fails_is_tried_again_not_answered_from_the_old_list() -> None:
	"""The server said its list changed, then failed to list once: the next run lists again and
	binds the new tools, rather than the list the server said was out of date."""
	tools = [types.Tool(name="old", input_schema=OBJECT)]
	failing: list[bool] = []

	async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
		if failing:
			failing.pop()
			raise RuntimeError("listing broke")
		return types.ListToolsResult(tools=list(tools))

	async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
		return types.CallToolResult(content=[types.TextContent(text="ok")])

	source = MCP.server(Server("flaky", on_list_tools=list_tools, on_call_tool=call), id="h").source
	assert source is not None
	assert [t.name for t in await source.list_tools()] == ["old"]
	tools[:] = [types.Tool(name="new", input_schema=OBJECT)]
	source._stale = True  # as notifications/tools/list_changed marks it
	failing.append(True)
	with pytest.raises(Exception, match="did not list its tools"):
		await source.list_tools()
	assert [t.name for t in await source.list_tools()] == ["new"]
	await source.aclose()
