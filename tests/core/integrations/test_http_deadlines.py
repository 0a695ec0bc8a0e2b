"""Total deadlines, cancellation mid-body, and connection errors, against servers on 127.0.0.1."""

import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

from openmolt_core.errors import ToolError
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations._client import PooledTransport
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.integrations.http_request import http_request_integration
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

TRANSPORTS = [pytest.param(False, id="httpx"), pytest.param(True, id="aiohttp")]
Handler = Callable[[SocketStream, dict[str, Any]], Awaitable[None]]


@asynccontextmanager
async def server(handler: Handler) -> AsyncIterator[tuple[int, dict[str, Any]]]:
	"""A raw TCP server on 127.0.0.1 running ``handler`` per connection; yields (port, state)."""
	state: dict[str, Any] = {"connections": 0, "closed": anyio.Event()}
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)

	async def serve(stream: SocketStream) -> None:
		state["connections"] += 1
		async with stream:
			try:
				await handler(stream, state)
			except (
				anyio.BrokenResourceError,
				anyio.ClosedResourceError,
				anyio.EndOfStream,
				OSError,
			):
				state["closed"].set()

	async with listener, anyio.create_task_group() as group:
		group.start_soon(listener.serve, serve)
		try:
			yield port, state
		finally:
			group.cancel_scope.cancel()


async def drip(stream: SocketStream, state: dict[str, Any]) -> None:
	"""Answer 200 with a 100-byte body, one byte every 0.3 s."""
	await stream.receive()
	await stream.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n")
	for _ in range(100):
		await anyio.sleep(0.3)
		await stream.send(b"x")
	state["finished"] = True


async def unavailable(stream: SocketStream, state: dict[str, Any]) -> None:
	"""Answer 503, asking to retry in 0.4 s, forever."""
	while await stream.receive():
		await stream.send(
			b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0.4\r\nContent-Length: 0\r\n\r\n"
		)


async def hang_up(stream: SocketStream, state: dict[str, Any]) -> None:
	"""Read the request, then close without answering."""
	await stream.receive()


CLIENTS: list[httpx.AsyncClient] = []


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
	yield
	while CLIENTS:
		await CLIENTS.pop().aclose()


def context(fast: bool, config: dict[str, Any] | None = None) -> ToolContext:
	client = httpx.AsyncClient(transport=PooledTransport(fast=fast))
	CLIENTS.append(client)
	return ToolContext(
		agent="a",
		integration="local",
		config=config or {},
		http=lambda: client,
		extras={"retry_policy": RetryPolicy()},
	)


def local(port: int, *, timeout: float = 1.0, method: str = "GET") -> tuple[HttpTool, Integration]:
	tool = HttpTool(
		handle="t", description="d", method=method, endpoint="/x", response_format="text"
	)
	spec = Integration(
		name="Local",
		api_setup=ApiSetup(base_url=f"http://127.0.0.1:{port}", timeout=timeout),
		tools=[tool],
	)
	return tool, spec


@pytest.mark.parametrize("fast", TRANSPORTS)
async def test_a_dripping_body_is_cut_at_the_tools_timeout(fast: bool) -> None:
	"""One byte every 0.3 s (30 s in all) ends at the 1 s tool timeout, not after."""
	async with server(drip) as (port, state):
		tool, spec = local(port)
		began = time.monotonic()
		with pytest.raises(ToolError, match="within 1 s"):
			await execute_http_tool(tool, spec, {}, context(fast))
		assert time.monotonic() - began < 4
		assert "finished" not in state


@pytest.mark.parametrize("fast", TRANSPORTS)
async def test_http_request_timeout_bounds_the_whole_call(fast: bool) -> None:
	"""httpRequest's timeout is a total deadline too (the host listed as internal)."""
	async with server(drip) as (port, _):
		tool = http_request_integration(allow_internal_hosts=["127.0.0.1"]).tools[0]
		began = time.monotonic()
		with pytest.raises(ToolError, match="within 1 s"):
			await tool.execute(
				{"url": f"http://127.0.0.1:{port}/", "timeout": 1, "responseFormat": "text"},
				context(fast),
			)
		assert time.monotonic() - began < 4


async def test_retries_and_their_waits_stay_within_the_deadline() -> None:
	"""A service that keeps asking to retry cannot hold the call past the tool's timeout."""
	async with server(unavailable) as (port, _):
		tool, spec = local(port, timeout=1.0)
		began = time.monotonic()
		with pytest.raises(ToolError, match=r"within 1 s|answered 503"):
			await execute_http_tool(tool, spec, {}, context(False))
		assert time.monotonic() - began < 4


@pytest.mark.parametrize("fast", TRANSPORTS)
async def test_an_outer_cancel_scope_aborts_a_streaming_read_cleanly(fast: bool) -> None:
	"""The run's budget (an outer scope) stops a read mid-body; the connection is closed."""
	async with server(drip) as (port, state):
		tool, spec = local(port, timeout=60.0)
		ctx = context(fast)
		began = time.monotonic()
		with anyio.move_on_after(0.8) as scope:
			await execute_http_tool(tool, spec, {}, ctx)
		assert scope.cancelled_caught and time.monotonic() - began < 3
		with anyio.fail_after(5):
			await state["closed"].wait()  # the server's next write fails: the socket is gone


@pytest.mark.parametrize("fast", TRANSPORTS)
async def test_a_refused_connection_is_reported_as_such(fast: bool) -> None:
	"""Connecting to a closed port is 'could not connect', never a timeout."""
	probe = socket.socket()
	probe.bind(("127.0.0.1", 0))
	port = probe.getsockname()[1]
	probe.close()
	tool, spec = local(port, timeout=5.0)
	ctx = context(fast)
	ctx.extras["retry_policy"] = RetryPolicy(attempts=1)
	with pytest.raises(ToolError, match="could not connect") as info:
		await execute_http_tool(tool, spec, {}, ctx)
	assert "in time" not in info.value.message
	assert ctx.http is not None
	with pytest.raises(httpx.ConnectError):
		await ctx.http().get(f"http://127.0.0.1:{port}/")


@pytest.mark.parametrize("fast", TRANSPORTS)
async def test_a_server_hanging_up_is_not_a_timeout_and_a_post_is_not_resent(fast: bool) -> None:
	"""A connection closed after the request was sent is reported as such, and not replayed."""
	async with server(hang_up) as (port, state):
		tool, spec = local(port, timeout=5.0, method="POST")
		with pytest.raises(ToolError) as info:
			await execute_http_tool(tool, spec, {}, context(fast))
		assert "in time" not in info.value.message
		assert state["connections"] == 1
