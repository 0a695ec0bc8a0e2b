"""The shared client's transport (aiohttp under asyncio when installed, httpx's pool otherwise)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from openmolt_core.integrations._client import PooledTransport, fast_path, new_client


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


async def _handle(stream: SocketStream, seen: list[dict[str, object]]) -> None:
	reader = BufferedByteReceiveStream(stream)
	async with stream:
		while True:
			try:
				head = await reader.receive_until(b"\r\n\r\n", 65536)
			except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
				return
			lines = head.decode("latin-1").split("\r\n")
			method, path, _ = lines[0].split(" ", 2)
			headers: dict[str, list[str]] = {}
			for line in lines[1:]:
				name, _, value = line.partition(":")
				headers.setdefault(name.strip().lower(), []).append(value.strip())
			length = int(headers.get("content-length", ["0"])[0])
			body = await reader.receive_exactly(length) if length else b""
			seen.append({"method": method, "path": path, "headers": headers, "body": body})
			if path == "/slow":
				await anyio.sleep(0.05)
			reply = json.dumps({"path": path, "echo": body.decode()}).encode()
			extra = "set-cookie: session=abc; Path=/\r\n" if path == "/login" else ""
			status = "404 Not Found" if path == "/missing" else "200 OK"
			await stream.send(
				(
					f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}"
					f"content-length: {len(reply)}\r\n\r\n"
				).encode()
				+ reply
			)


@asynccontextmanager
async def local_server() -> AsyncIterator[tuple[str, list[dict[str, object]]]]:
	seen: list[dict[str, object]] = []
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	async with listener:
		async with anyio.create_task_group() as tg:
			tg.start_soon(listener.serve, lambda s: _handle(s, seen))
			try:
				yield f"http://127.0.0.1:{port}", seen
			finally:
				tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_requests_and_replies_round_trip_over_the_transport() -> None:
	"""POST bodies, headers, statuses and JSON replies pass through the client unchanged."""
	async with local_server() as (base, seen), new_client() as client:
		response = await client.post(
			f"{base}/v1/responses", content=b'{"x": 1}', headers={"x-test": "yes"}
		)
		assert response.status_code == 200
		assert response.json() == {"path": "/v1/responses", "echo": '{"x": 1}'}
		assert seen[0]["method"] == "POST"
		headers = seen[0]["headers"]
		assert isinstance(headers, dict)
		assert headers["x-test"] == ["yes"]
		assert headers["user-agent"] == ["openmolt"]
		missing = await client.get(f"{base}/missing")
		assert missing.status_code == 404
		assert missing.json()["path"] == "/missing"


@pytest.mark.anyio
async def test_concurrent_requests_all_get_their_own_reply() -> None:
	"""Fifty requests in flight at once each receive the reply to their own body."""
	got: dict[int, str] = {}
	async with local_server() as (base, seen), new_client() as client:

		async def one(i: int) -> None:
			response = await client.post(f"{base}/slow", content=str(i).encode())
			got[i] = response.json()["echo"]

		async with anyio.create_task_group() as tg:
			for i in range(50):
				tg.start_soon(one, i)
	assert got == {i: str(i) for i in range(50)}
	assert len(seen) == 50


@pytest.mark.anyio
async def test_cookies_are_kept_by_neither_jar() -> None:
	"""A cookie the server sets is never sent back, by httpx's jar or the pool's.

	The client is shared by every agent, user and integration: a session cookie one agent's call
	got would otherwise ride along on another user's request to that host.
	"""
	async with local_server() as (base, seen), new_client() as client:
		await client.get(f"{base}/login")
		await client.get(f"{base}/next")
		assert not client.cookies
	headers = seen[1]["headers"]
	assert isinstance(headers, dict)
	assert "cookie" not in headers


@pytest.mark.anyio
async def test_an_unreachable_host_raises_an_httpx_transport_error() -> None:
	"""A refused connection surfaces as httpx.TransportError, which the providers retry."""
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	await listener.aclose()
	async with new_client() as client:
		with pytest.raises(httpx.TransportError):
			await client.get(f"http://127.0.0.1:{port}/")


@pytest.mark.anyio
async def test_the_fast_pool_is_used_under_asyncio_when_busy(anyio_backend: str) -> None:
	"""A loop starts on httpx's pool; once busy, asyncio moves to aiohttp's (when installed)."""
	transport = PooledTransport()
	assert type(transport._pool()).__name__ == "AsyncHTTPTransport"
	async with local_server() as (base, _), httpx.AsyncClient(transport=transport) as client:
		async with anyio.create_task_group() as tg:
			for _ in range(20):
				tg.start_soon(client.get, f"{base}/slow")
		expected = (
			"AiohttpTransport"
			if anyio_backend == "asyncio" and fast_path()
			else "AsyncHTTPTransport"
		)
		assert type(transport._pool()).__name__ == expected


def test_one_client_works_across_two_event_loops() -> None:
	"""A client used in one event loop keeps working in the next one, with a fresh pool."""
	client = new_client()

	async def call() -> int:
		async with local_server() as (base, _):
			response = await client.get(f"{base}/again")
			return response.status_code

	assert anyio.run(call) == 200
	assert anyio.run(call) == 200

	async def close() -> None:
		await client.aclose()

	anyio.run(close)


@pytest.mark.anyio
async def test_urls_are_sent_byte_for_byte_as_built() -> None:
	"""Percent-escapes and odd segments reach the server unchanged (what a signature covers)."""
	targets = ["/bucket/a%2Fb%20c.txt?prefix=x%2Fy&list-type=2", "/v1/%7Euser/x", "/plain?q=1"]
	async with local_server() as (base, seen), new_client() as client:
		for target in targets:
			response = await client.get(httpx.URL(base + target))
			assert response.status_code == 200
	assert [s["path"] for s in seen] == targets
