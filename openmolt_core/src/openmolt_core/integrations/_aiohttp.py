"""The aiohttp transport with its errors reported as what they are.

``httpx-aiohttp`` maps every ``aiohttp.ClientConnectionError`` to ``httpx.ConnectTimeout``: a
refused connection, an unknown host, a server that hung up mid-reply and a reset all read as
"timed out", which misleads the model and the user, and makes the engine retry a POST whose
connection dropped after it was sent as if it had never left. Here the aiohttp error behind
each httpx error decides: a failed connect is ``httpx.ConnectError``, a server that closed the
connection is ``httpx.RemoteProtocolError``, another broken connection ``httpx.ReadError``; real
timeouts stay timeouts. Imported only when the aiohttp transport is used.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport as _Base

__all__ = ["AiohttpTransport", "remap"]


def remap(exc: httpx.TransportError) -> httpx.TransportError:
	"""The httpx error that says what the aiohttp error behind ``exc`` was.

	Args:
		exc: An error raised by httpx-aiohttp (its ``__cause__`` is the aiohttp error).
	"""
	cause = exc.__cause__
	if not isinstance(exc, httpx.ConnectTimeout) or cause is None:
		return exc
	if isinstance(cause, (aiohttp.ServerTimeoutError, asyncio.TimeoutError, TimeoutError)):
		return exc
	if isinstance(cause, aiohttp.ClientConnectorError):
		kind: type[httpx.TransportError] = httpx.ConnectError
	elif isinstance(cause, aiohttp.ServerDisconnectedError):
		kind = httpx.RemoteProtocolError
	else:
		kind = httpx.ReadError
	try:
		request: httpx.Request | None = exc.request
	except RuntimeError:  # httpx-aiohttp raises without one
		request = None
	return kind(str(exc) or type(cause).__name__, request=request)


class _Stream(httpx.AsyncByteStream):
	# Its own iterator, not an async generator: a reply then makes one async generator fewer
	# (each is registered with the loop, weakly referenced and finalized).

	def __init__(self, inner: httpx.AsyncByteStream) -> None:
		self.inner = inner
		self._chunks: AsyncIterator[bytes] | None = None

	def __aiter__(self) -> _Stream:
		self._chunks = self.inner.__aiter__()
		return self

	async def __anext__(self) -> bytes:
		chunks = self._chunks
		if chunks is None:
			chunks = self._chunks = self.inner.__aiter__()
		try:
			return await chunks.__anext__()
		except httpx.TransportError as exc:
			raise remap(exc) from exc.__cause__

	async def aclose(self) -> None:
		await self.inner.aclose()


class AiohttpTransport(_Base):
	"""``httpx_aiohttp.AiohttpTransport`` whose errors are remapped (see `remap`)."""

	async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
		"""Send the request; a connection error is reported as what it is."""
		try:
			response = await super().handle_async_request(request)
		except httpx.TransportError as exc:
			raise remap(exc) from exc.__cause__
		if isinstance(response.stream, httpx.AsyncByteStream):
			response.stream = _Stream(response.stream)
		return response
