"""When the shared client moves from httpx's pool to aiohttp's, and what stays on httpx's."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from openmolt_core.integrations import _client as _http
from openmolt_core.integrations._client import PooledTransport, fast_path

pytestmark = [
	pytest.mark.anyio,
	pytest.mark.skipif(not fast_path(), reason="httpx-aiohttp is not installed"),
]


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"  # aiohttp's pool is only used under asyncio


async def _handle(stream: SocketStream, seen: list[str]) -> None:
	reader = BufferedByteReceiveStream(stream)
	async with stream:
		while True:
			try:
				head = await reader.receive_until(b"\r\n\r\n", 65536)
			except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
				return
			path = head.split(b" ", 2)[1].decode()
			seen.append(path)
			if path.startswith("/slow"):
				await anyio.sleep(0.05)
			await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")


@asynccontextmanager
async def local_server() -> AsyncIterator[tuple[str, list[str]]]:
	seen: list[str] = []
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	async with listener, anyio.create_task_group() as tg:
		tg.start_soon(listener.serve, lambda s: _handle(s, seen))
		try:
			yield f"http://127.0.0.1:{port}", seen
		finally:
			tg.cancel_scope.cancel()


def kind(transport: PooledTransport) -> str:
	return type(transport._pool()).__name__


def test_a_short_sequential_program_never_imports_aiohttp() -> None:
	"""A few requests one after the other go through httpx's pool; aiohttp is not even imported."""
	code = """
import sys, anyio, httpx
from openmolt_core.integrations._client import new_client

async def main():
	async def handle(stream):
		async with stream:
			await stream.receive()
			await stream.send(b"HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\nok")
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	async with listener, anyio.create_task_group() as tg, new_client() as client:
		tg.start_soon(listener.serve, handle)
		for _ in range(3):
			assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"
		tg.cancel_scope.cancel()

anyio.run(main)
print("aiohttp" in sys.modules, "httpx_aiohttp" in sys.modules)
"""
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	assert out.stdout.split() == ["False", "False"]


async def test_a_long_sequential_program_moves_to_aiohttp_in_the_background() -> None:
	"""After enough requests the aiohttp pool is built in a thread and used from then on."""
	transport = PooledTransport()
	async with local_server() as (base, seen), httpx.AsyncClient(transport=transport) as client:
		for _ in range(_http._WARM + 1):
			assert (await client.get(f"{base}/n")).text == "ok"
		with anyio.fail_after(10):
			while kind(transport) != "AiohttpTransport":
				await client.get(f"{base}/n")
		# URLs that aiohttp would rewrite still go through httpx's pool, byte for byte
		await client.get(httpx.URL(f"{base}/bucket/a%2Fb%20c.txt"))
		await client.get(f"{base}/after")
	assert seen[-2:] == ["/bucket/a%2Fb%20c.txt", "/after"]


async def test_a_cancelled_request_does_not_cancel_the_pool_being_built() -> None:
	"""Requests waiting for aiohttp's pool may be cancelled; the others still get it."""
	transport = PooledTransport()
	async with local_server() as (base, _), httpx.AsyncClient(transport=transport) as client:
		statuses: list[int] = []

		async def get() -> None:
			statuses.append((await client.get(f"{base}/slow")).status_code)

		async with anyio.create_task_group() as tg:
			for _ in range(_http._BUSY + 1):
				tg.start_soon(get)
			with anyio.move_on_after(0.001):  # cancelled while it waits for the new pool
				await client.get(f"{base}/slow")
			for _ in range(10):
				tg.start_soon(get)
		assert statuses == [200] * (_http._BUSY + 11)
		assert kind(transport) == "AiohttpTransport"


async def test_closing_while_the_pool_is_being_built_closes_it_too() -> None:
	"""aclose() during the build waits for it and closes the new pool: no session is left open."""
	transport = PooledTransport()
	async with local_server() as (base, _):
		client = httpx.AsyncClient(transport=transport)
		async with anyio.create_task_group() as tg:
			for _ in range(_http._BUSY):
				tg.start_soon(client.get, f"{base}/slow")
			await anyio.sleep(0.01)
			pools = transport._current()[
				1
			]  # four requests in flight: the next one starts the build
			with anyio.move_on_after(0.001):
				await client.get(f"{base}/slow")
			assert pools.building is not None
		await client.aclose()
	assert pools.sessions == [] or all(session.closed for session in pools.sessions)
	assert pools.fast is None and pools.plain is None
