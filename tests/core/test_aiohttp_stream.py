"""The aiohttp transport's reply stream: chunks pass through, a broken connection says what it was."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator

import httpx
import pytest

from openmolt_core.integrations._client import fast_path

pytestmark = [
	pytest.mark.anyio,
	pytest.mark.skipif(not fast_path(), reason="httpx-aiohttp is not installed"),
]


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


class _Inner(httpx.AsyncByteStream):
	"""Two chunks, then (when ``cause`` is given) the error httpx-aiohttp raises for it."""

	def __init__(self, cause: BaseException | None = None) -> None:
		self.cause = cause
		self.closed = False

	async def __aiter__(self) -> AsyncIterator[bytes]:
		yield b"ab"
		yield b"cd"
		if self.cause is not None:
			raise httpx.ConnectTimeout("timed out") from self.cause

	async def aclose(self) -> None:
		self.closed = True


async def test_the_stream_passes_the_chunks_through_and_closes_the_inner_one() -> None:
	"""Every chunk arrives in order; closing the stream closes the inner one."""
	from openmolt_core.integrations._aiohttp import _Stream

	inner = _Inner()
	stream = _Stream(inner)
	assert not inspect.isasyncgen(stream.__aiter__())  # its own iterator, no async generator
	assert [chunk async for chunk in stream] == [b"ab", b"cd"]
	await stream.aclose()
	assert inner.closed


async def test_a_connection_dropped_mid_reply_is_not_reported_as_a_timeout() -> None:
	"""A server that hung up during the body reads as a protocol error, after the chunks it sent."""
	import aiohttp

	from openmolt_core.integrations._aiohttp import _Stream

	got: list[bytes] = []
	with pytest.raises(httpx.RemoteProtocolError):
		async for chunk in _Stream(_Inner(aiohttp.ServerDisconnectedError())):
			got.append(chunk)
	assert got == [b"ab", b"cd"]
	with pytest.raises(httpx.ConnectTimeout):  # a real timeout stays one
		async for _ in _Stream(_Inner(TimeoutError())):
			pass
