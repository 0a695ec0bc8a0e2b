"""MCP servers as integrations, against in-process servers built with the official SDK."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError as ServerToolError

from openmolt import HumanInputUnavailable, OpenMolt, RunState
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_mcp import MCP
from tests._results import results_at

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()
WAV = base64.b64encode(b"RIFF....WAVEfmt ").decode()


def demo_server() -> MCPServer:
	server = MCPServer("demo")

	@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		return a + b

	@server.tool()
	def note(text: str) -> str:
		"""Keep a note (changes state)."""
		return f"noted: {text}"

	@server.tool()
	def media() -> list[types.ContentBlock]:
		"""An image, a sound, and two resources."""
		return [
			types.TextContent(text="here you go"),
			types.ImageContent(data=PNG, mime_type="image/png"),
			types.AudioContent(data=WAV, mime_type="audio/wav"),
			types.EmbeddedResource(
				resource=types.TextResourceContents(
					uri="file:///notes.txt", mime_type="text/plain", text="hello"
				)
			),
			types.EmbeddedResource(
				resource=types.BlobResourceContents(
					uri="file:///blob.bin",
					mime_type="application/octet-stream",
					blob=base64.b64encode(b"\x00\x01\x02").decode(),
				)
			),
		]

	@server.tool()
	def broken() -> str:
		"""Always fails: isError with the server's message."""
		raise ServerToolError("the disk is full")

	@server.tool()
	def refuse() -> str:
		"""Always fails: a JSON-RPC protocol error."""
		raise MCPError(-32602, "no such record")

	@server.tool()
	async def slow(seconds: float) -> str:
		"""Sleep, then answer."""
		await anyio.sleep(seconds)
		return "done"

	@server.tool()
	async def grow(ctx: Context) -> str:
		"""Add a tool named extra and announce the change."""
		server.add_tool(lambda: "extra!", name="extra", description="An extra tool.")
		await ctx.notify_tools_changed()
		return "grown"

	return server


def _om(**options: Any) -> tuple[OpenMolt, MCPServer]:
	server = demo_server()
	om = OpenMolt(entry_points=False)
	om.register_integration("demo", MCP.server(server, **options))
	return om, server


def _tools(model: ScriptedModel, request: int = 0) -> list[dict[str, Any]]:
	return json.loads(model.requests[request].messages[0].content)["tools"]


async def test_tools_are_listed_with_the_servers_schemas_and_called() -> None:
	"""demo.add is listed with the server's input schema and its structured result comes back."""
	om, _ = _om()
	model = ScriptedModel([call_tool("demo.add", a=2, b=3), finish(result="5")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	result = await agent.run("add")
	assert result.status == "success"
	listed = {t["tool"]: t for t in _tools(model)}
	assert {"demo.add", "demo.note", "demo.media", "demo.broken"} <= set(listed)
	assert listed["demo.add"]["description"] == "Add two numbers."
	assert listed["demo.add"]["inputSchema"]["required"] == ["a", "b"]
	assert listed["demo.add"]["inputSchema"]["properties"]["a"]["type"] == "integer"
	# The server's tools carry no annotations and the config no labels: unknown, so untrusted.
	assert results_at(model, 1) == [
		{"tool": "demo.add", "ok": True, "result": {"result": 5}, "untrusted": True}
	]
	await om.aclose()


async def test_invalid_input_is_refused_before_the_server_is_called() -> None:
	"""The server's schema is enforced by OpenMolt: a string for an integer never reaches it."""
	om, _ = _om()
	model = ScriptedModel([call_tool("demo.add", a="two", b=3), finish(result="x")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("add")
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False and entry["error"].startswith(
		"command 0 (callTool demo.add): invalid input: a"
	)
	await om.aclose()


async def test_structured_content_wins_over_its_text_copy() -> None:
	"""A str-returning SDK tool sends structuredContent {"result"} and its text copy: one result."""
	om, _ = _om()
	model = ScriptedModel([call_tool("demo.note", text="buy milk"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("note")
	assert results_at(model, 1)[0]["result"] == {"result": "noted: buy milk"}
	await om.aclose()


async def test_images_audio_and_blobs_go_to_the_file_store_as_references() -> None:
	"""Media are saved and referenced in the results' text; text resources stay inline."""
	om, _ = _om()
	model = ScriptedModel([call_tool("demo.media"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("media")
	blocks = results_at(model, 1)[0]["result"]
	kinds = [b["type"] for b in blocks]
	assert kinds == ["text", "image", "audio", "resource", "resource"]
	image, audio, text_resource, blob = blocks[1], blocks[2], blocks[3], blocks[4]
	assert image["file"].startswith("openmolt-file:") and image["mediaType"] == "image/png"
	stored = await om.files.open(image["file"])
	assert stored.data == base64.b64decode(PNG)
	assert (await om.files.open(audio["file"])).data == base64.b64decode(WAV)
	assert text_resource == {
		"type": "resource",
		"uri": "file:///notes.txt",
		"mimeType": "text/plain",
		"text": "hello",
	}
	assert blob["uri"] == "file:///blob.bin"
	assert (await om.files.open(blob["file"])).data == b"\x00\x01\x02"
	sent = model.requests[1].messages[-1].content
	assert PNG not in sent and WAV not in sent
	await om.aclose()


async def test_is_error_results_become_tool_errors_the_model_reads() -> None:
	"""A tool that raises on the server gives the model an error entry with the server's text."""
	om, _ = _om()
	model = ScriptedModel([call_tool("demo.broken"), finish(result="x")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("break")
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False and "the disk is full" in entry["error"]
	await om.aclose()


async def test_a_json_rpc_error_becomes_a_tool_error_with_its_code() -> None:
	"""A protocol-level error answer reaches the model as an error entry naming the code."""
	om, _ = _om()
	model = ScriptedModel([call_tool("demo.refuse"), finish(result="x")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("go")
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False
	assert "refused the call: no such record (code -32602)" in entry["error"]
	await om.aclose()


async def test_a_removed_tool_is_a_tool_error() -> None:
	"""A tool removed on the server after listing fails with the server's refusal, not a crash."""
	om, server = _om()
	model = ScriptedModel([call_tool("demo.note", text="x"), finish(result="x")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	source = om.plugins.integration("demo").source
	await source.list_tools()
	server.remove_tool("note")
	await agent.run("go")
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False and "note" in entry["error"]
	await om.aclose()


async def test_every_call_has_a_timeout() -> None:
	"""A call slower than the server's timeout ends as a retryable error, and the run goes on."""
	om, _ = _om(timeout=0.3)
	model = ScriptedModel([call_tool("demo.slow", seconds=5), finish(result="gave up")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	with anyio.fail_after(4):
		result = await agent.run("wait")
	assert result.status == "success"
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False and "did not answer within 0.3 s" in entry["error"]
	await om.aclose()


async def test_a_changed_tool_list_is_seen_at_the_next_run_not_mid_run() -> None:
	"""tools/list_changed marks the list stale; the run in flight keeps its tools."""
	om, _ = _om()
	model = ScriptedModel(
		[
			call_tool("demo.grow"),
			call_tool("demo.extra"),
			finish(result="first"),
			call_tool("demo.extra"),
			finish(result="second"),
		]
	)
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("grow")
	assert "demo.extra" not in [t["tool"] for t in _tools(model, 0)]
	(mid_run,) = results_at(model, 2)
	assert mid_run["ok"] is False and "unknown tool" in mid_run["error"]
	for _ in range(100):  # the change event arrives asynchronously
		if om.plugins.integration("demo").source._stale:
			break
		await anyio.sleep(0.01)
	await agent.run("again")
	assert "demo.extra" in [t["tool"] for t in _tools(model, 3)]
	assert results_at(model, 4)[0] == {
		"tool": "demo.extra",
		"ok": True,
		"result": "extra!",
		"untrusted": True,
	}
	await om.aclose()


async def test_allow_and_deny_lists_choose_the_tools() -> None:
	"""includeTools and excludeTools (globs) decide which tools exist for agents."""
	om, _ = _om(include_tools=["a*", "n*", "m*"], exclude_tools=["media"])
	model = ScriptedModel([finish(result="x")])
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	await agent.run("go")
	assert [t["tool"] for t in _tools(model)] == ["demo.add", "demo.note"]
	await om.aclose()


async def test_read_and_write_scopes_follow_the_read_only_annotation() -> None:
	"""An agent granted only 'read' sees the read-only tools; the others are refused.

	The annotation counts for a server the user trusts (an untrusted server's tools all write:
	tests/ecosystem/test_mcp_claims.py).
	"""
	om, _ = _om(trust_descriptions=True)
	model = ScriptedModel([call_tool("demo.note", text="x"), finish(result="x")])
	agent = om.create_agent(
		name="A", model=model, integrations=[{"integration": "demo", "scopes": ["read"]}]
	)
	await agent.run("go")
	assert [t["tool"] for t in _tools(model)] == ["demo.add"]
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False and "scope" in entry["error"]
	await om.aclose()


async def test_custom_scopes_map_tool_patterns() -> None:
	"""scopes={name: [patterns]} replaces read/write; unknown granted scopes fail early."""
	om, _ = _om(scopes={"math": ["add"], "media": ["media"]})
	model = ScriptedModel([finish(result="x")])
	agent = om.create_agent(
		name="A", model=model, integrations=[{"integration": "demo", "scopes": ["math"]}]
	)
	await agent.run("go")
	visible = [t["tool"] for t in _tools(model)]
	assert "demo.add" in visible and "demo.media" not in visible
	assert "demo.note" not in visible  # no pattern maps it: it needs 'unscoped', not granted
	with pytest.raises(ConfigurationError, match="read"):
		om.create_agent(
			name="B",
			model=ScriptedModel([]),
			integrations=[{"integration": "demo", "scopes": ["read"]}],
		)
	await om.aclose()


async def test_the_server_connection_is_reused_across_runs_and_agents() -> None:
	"""One connection serves every run of every agent of the instance until aclose."""
	om, _ = _om()
	source = om.plugins.integration("demo").source
	for name in ("A", "B"):
		model = ScriptedModel([call_tool("demo.add", a=1, b=1), finish(result="2")])
		agent = om.create_agent(name=name, model=model, integrations=["demo"])
		await agent.run("go")
	connection = source._connection
	assert connection is not None and connection.client is not None
	await om.aclose()
	assert source._connection is None and connection.closed.is_set()


async def test_an_image_a_tool_returns_is_shown_to_the_model_with_theresults_at() -> None:
	"""The PNG is attached to the results turn (base64), once; the text keeps the reference."""
	om, _ = _om()
	model = ScriptedModel(
		[call_tool("demo.media"), call_tool("demo.add", a=1, b=2), finish(result="ok")]
	)
	agent = om.create_agent(name="A", model=model, integrations=["demo"])
	result = await agent.run("media")
	assert result.status == "success"
	turn = model.requests[1].messages[-1]
	assert [(a.media_type, a.data) for a in turn.attachments] == [("image/png", PNG)]
	assert PNG not in turn.content  # the JSON holds the reference only
	later = model.requests[2].messages
	assert later[-3].attachments == turn.attachments  # the history keeps it, once
	assert later[-1].attachments == []  # the next results turn attaches nothing again
	noted = result.state.ext["tool-sources"]
	assert "images" not in noted and noted["listed"]  # nothing pending; the listing kept
	await om.aclose()


async def test_images_past_the_limit_or_not_images_are_not_shown() -> None:
	"""max_tool_images=0 shows none; bytes that are not an image are never attached."""
	om, _ = _om()
	model = ScriptedModel([call_tool("demo.media"), finish(result="ok")])
	agent = om.create_agent(
		name="A", model=model, integrations=["demo"], config={"max_tool_images": 0}
	)
	await agent.run("media")
	assert model.requests[1].messages[-1].attachments == []
	await om.aclose()

	server = MCPServer("liar")

	@server.tool()
	def fake() -> list[types.ContentBlock]:
		"""Text declared as an image."""
		return [
			types.ImageContent(data=base64.b64encode(b"not a png").decode(), mime_type="image/png")
		]

	om = OpenMolt(entry_points=False)
	om.register_integration("liar", MCP.server(server))
	model = ScriptedModel([call_tool("liar.fake"), finish(result="ok")])
	agent = om.create_agent(name="B", model=model, integrations=["liar"])
	await agent.run("fake")
	assert model.requests[1].messages[-1].attachments == []
	assert results_at(model, 1)[0]["result"]["file"].startswith("openmolt-file:")
	await om.aclose()


async def test_an_image_is_shown_only_when_its_base64_fits_every_api() -> None:
	"""An image is shown when its base64 text fits Anthropic's 5 MB per image (the API measures
	the base64): 3.5 MB of PNG (4.7 MB as base64) is shown; 4 MB (5.3 MB as base64), which
	Anthropic refuses, is not, or every later request of the run would carry it and fail."""
	server = MCPServer("shots")
	head = b"\x89PNG\r\n\x1a\n"

	def png(size: int) -> str:
		return base64.b64encode(head + b"\0" * (size - len(head))).decode()

	@server.tool()
	def small() -> list[types.ContentBlock]:
		"""A screenshot that fits."""
		return [types.ImageContent(data=png(7 * 2**19), mime_type="image/png")]

	@server.tool()
	def large() -> list[types.ContentBlock]:
		"""A screenshot whose base64 is over 5 MB."""
		return [types.ImageContent(data=png(4 * 2**20), mime_type="image/png")]

	om = OpenMolt(entry_points=False)
	om.register_integration("shots", MCP.server(server))
	model = ScriptedModel([call_tool("shots.small"), call_tool("shots.large"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["shots"])
	assert (await agent.run("look")).status == "success"
	shown = model.requests[1].messages[-1].attachments
	assert [len(a.data) for a in shown] == [len(png(7 * 2**19))]
	assert len(shown[0].data) <= 5 * 2**20
	assert model.requests[2].messages[-1].attachments == []  # 4 MB of PNG: the reference only
	assert results_at(model, 2)[0]["result"]["file"].startswith("openmolt-file:")
	await om.aclose()


async def test_a_parked_run_keeps_the_images_to_show_after_its_resume() -> None:
	"""Images noted in a step that then parks on a question are shown when the run goes on."""
	om, _ = _om()
	model = ScriptedModel([[call_tool("demo.media"), ask_human("which one?")], finish(result="ok")])

	def later(question: str) -> str:
		raise HumanInputUnavailable("later")

	agent = om.create_agent(
		name="A", model=model, integrations=["demo"], on_human_input_request=later
	)
	parked = await agent.run("media")
	assert parked.status == "human_input_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	assert saved["ext"]["tool-sources"]["images"][0]["file"].startswith("openmolt-file:")
	result = await agent.resume(RunState.from_dict(saved), answer="the first")
	assert result.status == "success"
	attached = [a for m in model.requests[1].messages for a in m.attachments]
	assert [(a.media_type, a.data) for a in attached] == [("image/png", PNG)]
	await om.aclose()
