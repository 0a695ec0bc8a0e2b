"""A screenshot agent's run goes on past the API's image limits: the newest images go, notes the rest.

An MCP server's screenshots are shown to the model with the results of their step, and the run's
history keeps them, so each later request carried every one. On Anthropic, past 20 images of more
than 2000 px the request was refused (400), and so was every later one: the run failed after a
few steps. Now each request keeps the newest 20 and says which steps' images it left out; the
run's state keeps all of them.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import httpx
import mcp.types as types
import pytest
from mcp.server import MCPServer

from openmolt import OpenMolt
from openmolt_core.testing import call_tool, finish
from openmolt_mcp import MCP

pytestmark = pytest.mark.anyio

SHOTS = 23


def _screenshot(width: int, height: int) -> str:
	chunk = b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
	head = (
		b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
	)
	return base64.b64encode(head + b"\0" * 64).decode()


def _reply(command: dict[str, Any]) -> dict[str, Any]:
	text = json.dumps({"commands": [command]})
	return {"stop_reason": "end_turn", "content": [{"type": "text", "text": text}]}


async def test_a_run_past_20_large_screenshots_goes_on_with_the_newest() -> None:
	"""23 screenshots of 2560 px: every request is sent; the last holds the newest 20 and 3 notes."""
	server = MCPServer("browser")

	@server.tool()
	def screenshot() -> list[types.ContentBlock]:
		"""The page as it looks now."""
		return [types.ImageContent(data=_screenshot(2560, 1440), mime_type="image/png")]

	bodies: list[dict[str, Any]] = []
	script = [_reply(call_tool("browser.screenshot")) for _ in range(SHOTS)]
	script.append(_reply(finish(result="seen")))

	def api(request: httpx.Request) -> httpx.Response:
		body = json.loads(request.content)
		bodies.append(body)
		images = sum(
			1
			for m in body["messages"]
			if isinstance(m["content"], list)
			for b in m["content"]
			if b["type"] == "image"
		)
		if images > 20:  # what the API answers (vision guide: 2000x2000 px past 20 images)
			error = {"type": "invalid_request_error", "message": "image dimensions exceed 2000"}
			return httpx.Response(400, json={"type": "error", "error": error})
		return httpx.Response(200, json=script[len(bodies) - 1])

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers={"anthropic": {"api_key": "sk-ant-test"}}, http_client=http)
	om.register_integration("browser", MCP.server(server))
	agent = om.create_agent(
		name="Browser",
		model="anthropic:claude-sonnet-4-5",
		integrations=["browser"],
		max_steps=SHOTS + 5,
	)
	result = await agent.run("Look at the page.")
	assert result.status == "success", result
	assert len(bodies) == SHOTS + 1
	last = bodies[-1]["messages"]
	notes = [
		b["text"]
		for m in last
		if isinstance(m["content"], list)
		for b in m["content"]
		if b["type"] == "text" and b["text"].startswith("[image of")
	]
	assert notes == [
		f"[image of step {n} left out: the request holds the newest 20 images]" for n in (1, 2, 3)
	]
	# Each request before the 21st image went as it was: no note.
	assert not any("[image of" in json.dumps(b) for b in bodies[:21])
	kept = sum(len(m.attachments) for m in result.state.messages)
	assert kept == SHOTS  # the run's state keeps every screenshot
	await om.aclose()
