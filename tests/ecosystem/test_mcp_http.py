"""MCP servers over Streamable HTTP: an SDK server served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import uvicorn
from mcp.server import MCPServer

from openmolt import OpenMolt
from openmolt_core.errors import IntegrationError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp import MCP

pytestmark = pytest.mark.anyio

TOKEN = "mcp-token-9f8e7d6c5b4a"


def _app() -> Any:
	server = MCPServer("http-demo")

	@server.tool()
	def echo_header(text: str) -> str:
		"""Echo the text and the token the server saw."""
		return f"{text} (authorized with {TOKEN})"

	app = server.streamable_http_app()

	async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
		if scope["type"] == "http":
			headers = dict(scope["headers"])
			if headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
				await send({"type": "http.response.start", "status": 401, "headers": []})
				await send({"type": "http.response.body", "body": b"unauthorized"})
				return
		await app(scope, receive, send)

	return guarded, server


@pytest.fixture
async def http_server() -> AsyncIterator[str]:
	app, _ = _app()
	sock = socket.socket()
	sock.bind(("127.0.0.1", 0))
	port = sock.getsockname()[1]
	config = uvicorn.Config(app, log_level="warning", lifespan="on")
	web = uvicorn.Server(config)
	async with anyio.create_task_group() as tg:
		tg.start_soon(lambda: web.serve(sockets=[sock]))
		with anyio.fail_after(10):
			while not web.started:  # noqa: ASYNC110  # uvicorn offers no event to wait on
				await anyio.sleep(0.02)
		yield f"http://127.0.0.1:{port}/mcp"
		web.should_exit = True
	sock.close()


async def test_tools_over_streamable_http_with_a_bearer_header(http_server: str) -> None:
	"""Headers reach the server; the token never reaches the model or the error log."""
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"remote", MCP.http(http_server, headers={"Authorization": f"Bearer {TOKEN}"})
	)
	model = ScriptedModel([call_tool("remote.echo_header", text="hi"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["remote"])
	try:
		await agent.run("go")
	finally:
		await om.aclose()
	last = json.loads(model.requests[1].messages[-1].content)["results"][0]
	assert last["ok"] is True
	assert last["result"] == {"result": "hi (authorized with [redacted])"}
	assert TOKEN not in repr(om.plugins.integration("remote"))


async def test_a_refused_connection_is_an_integration_error_without_the_token(
	http_server: str,
) -> None:
	"""A wrong token: the server answers 401; the error names the URL, never the header."""
	om = OpenMolt(entry_points=False)
	wrong = "wrong-token-1234567"
	om.register_integration(
		"remote",
		MCP.http(http_server, headers={"Authorization": f"Bearer {wrong}"}, startup_timeout=2),
	)
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["remote"])
	with pytest.raises(IntegrationError) as caught:
		await agent.run("go")
	assert str(caught.value).startswith(f"remote: the MCP server ({http_server}) could not be")
	assert wrong not in str(caught.value)
	await om.aclose()
