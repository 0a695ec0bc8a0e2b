"""MCP servers over Streamable HTTP: an SDK server served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
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

	@server.tool(annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
	def add(a: int, b: int) -> int:
		"""Add, closed-world by the server's own claim."""
		return a + b

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
	sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY
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
		"remote",
		MCP.http(
			http_server,
			headers={"Authorization": f"Bearer {TOKEN}"},
			allow_internal_hosts=["127.0.0.1"],
		),
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
	# A remote server receives every argument: its closed-world claim still leaves outbound.
	assert agent.labels["remote.add"] == {"untrusted", "outbound"}
	assert agent.labels["remote.echo_header"] == {"untrusted", "outbound"}  # no annotations
	assert TOKEN not in repr(om.plugins.integration("remote"))


async def test_a_refused_connection_is_an_integration_error_without_the_token(
	http_server: str,
) -> None:
	"""A wrong token: the server answers 401; the error names the URL, never the header."""
	om = OpenMolt(entry_points=False)
	wrong = "wrong-token-1234567"
	om.register_integration(
		"remote",
		MCP.http(
			http_server,
			headers={"Authorization": f"Bearer {wrong}"},
			startup_timeout=2,
			allow_internal_hosts=["127.0.0.1"],
		),
	)
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["remote"])
	with pytest.raises(IntegrationError) as caught:
		await agent.run("go")
	assert str(caught.value).startswith(f"remote: the MCP server ({http_server}) could not be")
	assert wrong not in str(caught.value)
	await om.aclose()


# the SSRF guard: the same policy as httpRequest -----------------------------------------------


async def test_a_server_on_loopback_is_refused_unless_the_config_allows_it(
	http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Without allowInternalHosts the guard refuses 127.0.0.1 before anything is sent.

	A proxy in the environment does not open a way around the guard.
	"""
	monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.9:9")
	monkeypatch.setenv("ALL_PROXY", "http://127.0.0.9:9")
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"remote",
		MCP.http(http_server, headers={"Authorization": f"Bearer {TOKEN}"}, startup_timeout=5),
	)
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["remote"])
	with pytest.raises(IntegrationError, match="allowInternalHosts") as caught:
		await agent.run("go")
	assert "Loopback" in str(caught.value)
	assert TOKEN not in str(caught.value)
	await om.aclose()


def _guarded(
	answers: dict[str, str], hops: dict[str, str], allow: list[str] | None = None
) -> tuple[Any, list[Any]]:
	import httpx2

	from openmolt_mcp._guard import GuardedTransport

	sent: list[Any] = []

	def handle(request: Any) -> Any:
		sent.append(request)
		target = hops.get(request.headers["host"])
		if target is not None:
			return httpx2.Response(307, headers={"Location": target})
		return httpx2.Response(200, json={"ok": True})

	async def resolve(host: str, port: int) -> list[str]:
		return [answers[host]]

	transport = GuardedTransport(allow or [], inner=httpx2.MockTransport(handle), resolver=resolve)
	return httpx2.AsyncClient(transport=transport, follow_redirects=True), sent


async def test_requests_are_pinned_to_the_checked_address() -> None:
	"""The connection goes to the address that was checked; Host and SNI keep the name."""
	client, sent = _guarded({"mcp.example": "93.184.216.34"}, {})
	async with client:
		response = await client.post("https://mcp.example/mcp", json={})
	assert response.status_code == 200
	[request] = sent
	assert request.url.host == "93.184.216.34"
	assert request.headers["host"] == "mcp.example"
	assert request.extensions["sni_hostname"] == "mcp.example"
	assert str(response.request.url) == "https://mcp.example/mcp"


@pytest.mark.parametrize(
	("target", "answer", "why"),
	[
		("http://169.254.169.254/latest/meta-data", None, "metadata"),
		("http://metadata.google.internal/", None, "metadata"),
		("http://internal.example/mcp", "10.0.0.7", "Private-Use"),
		("http://[::1]/mcp", None, "Loopback"),
		("http://0x7f.1/mcp", None, "Loopback"),
		("http://link.example/mcp", "169.254.10.1", "Link Local"),
	],
)
async def test_a_redirect_to_an_internal_address_is_refused(
	target: str, answer: str | None, why: str
) -> None:
	"""Every hop is checked: a public server cannot bounce the client to an internal one."""
	import httpx2

	answers = {"mcp.example": "93.184.216.34"}
	if answer is not None:
		answers[httpx2.URL(target).host] = answer
	client, sent = _guarded(answers, {"mcp.example": target})
	async with client:
		with pytest.raises(httpx2.TransportError, match=why) as caught:
			await client.post("https://mcp.example/mcp", json={})
	assert "allowInternalHosts" in str(caught.value)
	assert len(sent) == 1  # the first hop only


async def test_allow_internal_hosts_opens_only_what_it_lists() -> None:
	"""A listed network is reachable; the metadata endpoint and other networks stay refused."""
	import httpx2

	answers = {"mcp.corp.example": "10.20.0.5", "other.corp.example": "10.30.0.5"}
	client, sent = _guarded(answers, {}, allow=["10.20.0.0/16"])
	async with client:
		assert (await client.get("http://mcp.corp.example/mcp")).status_code == 200
		with pytest.raises(httpx2.TransportError, match=r"10\.30\.0\.5"):
			await client.get("http://other.corp.example/mcp")
		with pytest.raises(httpx2.TransportError, match="metadata"):
			await client.get("http://169.254.169.254/")
	assert len(sent) == 1


def test_a_wrong_allow_internal_hosts_names_the_field() -> None:
	"""Everything (0.0.0.0/0) is refused with the field's path and the fix."""
	from openmolt_core.errors import ConfigurationError

	with pytest.raises(ConfigurationError, match=r"mcpServers\.web\.allowInternalHosts.*covers"):
		MCP.from_config(
			"web", {"url": "https://x.example/mcp", "allowInternalHosts": ["0.0.0.0/0"]}
		)
	entry = {"url": "https://x.example/mcp", "allowInternalHosts": ["mcp.corp.example"]}
	assert MCP.from_config("web", entry).source.options.allow_internal_hosts == ["mcp.corp.example"]


def _replying(reply: Any) -> tuple[Any, list[Any]]:
	import httpx2

	from openmolt_mcp._guard import GuardedTransport

	sent: list[Any] = []

	def handle(request: Any) -> Any:
		sent.append(request)
		return reply()

	async def resolve(host: str, port: int) -> list[str]:
		return ["93.184.216.34"]

	transport = GuardedTransport([], inner=httpx2.MockTransport(handle), resolver=resolve)
	return httpx2.AsyncClient(transport=transport), sent


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "gzip, gzip"])
async def test_a_compressed_reply_is_refused_since_none_was_asked_for(encoding: str) -> None:
	"""Requests ask for no compression; a compressed reply (a bomb httpx would inflate whole
	chunks of) is refused. Before, httpx2 asked for gzip and inflated the reply unbounded."""
	import httpx2

	def reply() -> Any:
		return httpx2.Response(
			200, headers={"content-encoding": encoding}, stream=httpx2.ByteStream(b"\x1f\x8b")
		)

	client, sent = _replying(reply)
	async with client:
		with pytest.raises(httpx2.DecodingError, match="compressed its reply"):
			await client.post("https://mcp.example/mcp", json={})
	assert sent[0].headers["accept-encoding"] == "identity"


def _blanks(size: int) -> Any:
	"""A reply body of ``size`` bytes of blanks, made as it is read (counts what was taken)."""
	import httpx2

	class Blanks(httpx2.AsyncByteStream):
		def __init__(self) -> None:
			self.sent = 0

		async def __aiter__(self) -> AsyncIterator[bytes]:
			while self.sent < size:
				self.sent += 65536
				yield b" " * 65536

	return Blanks()


async def test_a_huge_reply_is_cut_at_the_cap_but_an_event_stream_is_not(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A JSON reply over MAX_REPLY_BYTES fails once the cap is passed; an event stream (whose
	events the SDK bounds) may run longer. Before, a JSON reply was read whole, however large."""
	import httpx2

	from openmolt_mcp import _guard

	monkeypatch.setattr(_guard, "MAX_REPLY_BYTES", 1024 * 1024)
	body = _blanks(8 * 1024 * 1024)

	def reply() -> Any:
		return httpx2.Response(200, headers={"content-type": "application/json"}, stream=body)

	client, _ = _replying(reply)
	async with client:
		with pytest.raises(httpx2.ReadError, match="larger than 1048576 bytes"):
			await client.post("https://mcp.example/mcp", json={})
	assert body.sent <= 1024 * 1024 + 65536

	events = _blanks(2 * 1024 * 1024)

	def stream() -> Any:
		return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=events)

	client, _ = _replying(stream)
	async with client:
		response = await client.get("https://mcp.example/mcp")
	assert len(response.content) == 2 * 1024 * 1024
