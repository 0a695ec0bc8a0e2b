"""The one place that builds OpenMolt's shared ``httpx.AsyncClient``, and its transport.

httpx 0.28's own connection pool (httpcore) scans every pooled connection for every request, so
its CPU cost per request grows with the number of requests in flight: at 200 concurrent agent
runs it, not the network, is the bottleneck (``benchmarks/README.md`` has the figures). When the
optional ``httpx-aiohttp`` package is installed (``pip install "openmolt-core[fast]"``; the
``openmolt`` distribution installs it), requests made under asyncio go through aiohttp's
connector, whose pool and C HTTP parser cost the same at 1 or 1,000 requests in flight. Under
trio, or without the package, httpx's own pool is used. Either way callers see one
``httpx.AsyncClient``: same requests, responses, errors, timeouts and retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import weakref
from typing import Any

import httpx

__all__ = ["DEFAULT_TIMEOUT", "MAX_CONNECTIONS", "PooledTransport", "fast_path", "new_client"]

DEFAULT_TIMEOUT = 60.0
"""Seconds for reading a reply; connecting gets 10."""

MAX_CONNECTIONS = 200
"""Connections open at once, over all hosts; further requests wait for a free one."""

_KEEPALIVE = 50


def fast_path() -> bool:
	"""Whether the aiohttp transport is installed (``openmolt-core[fast]``); nothing is imported."""
	return importlib.util.find_spec("httpx_aiohttp") is not None


class PooledTransport(httpx.AsyncBaseTransport):
	"""One connection pool per event loop: aiohttp's under asyncio when installed, else httpx's.

	Pools are made on the first request in each event loop, since a pool's sockets belong to the
	loop that opened them; a pool left behind by a closed loop is dropped without I/O.

	Args:
		fast: Use the aiohttp transport under asyncio (default: when it is installed).
	"""

	def __init__(self, *, fast: bool | None = None) -> None:
		self.fast = fast_path() if fast is None else fast
		self._pools: weakref.WeakKeyDictionary[Any, httpx.AsyncBaseTransport] = (
			weakref.WeakKeyDictionary()
		)
		self._other: httpx.AsyncBaseTransport | None = None  # trio and other non-asyncio loops
		self._exact: weakref.WeakKeyDictionary[Any, httpx.AsyncBaseTransport] = (
			weakref.WeakKeyDictionary()
		)

	def prepare(self, loop: Any | None) -> None:
		"""Build the pool for an event loop ahead of its first request (safe in a worker thread).

		Building a pool imports its HTTP library and loads the CA bundle: hundreds of milliseconds
		that would otherwise block the event loop on the first request.

		Args:
			loop: The asyncio loop the pool will serve, or None for a non-asyncio one (trio).
		"""
		if loop is None:
			if self._other is None:
				self._other = _httpx_pool()
		elif loop not in self._pools:
			self._pools[loop] = _aiohttp_pool() if self.fast else _httpx_pool()

	def _pool(self) -> httpx.AsyncBaseTransport:
		try:
			loop = asyncio.get_running_loop()
		except RuntimeError:  # not asyncio (trio): httpx's pool, which runs on anyio
			if self._other is None:
				self._other = _httpx_pool()
			return self._other
		pool = self._pools.get(loop)
		if pool is None:
			for old_loop, old in list(self._pools.items()):
				if old_loop.is_closed():
					_drop(old)
					del self._pools[old_loop]
			pool = _aiohttp_pool() if self.fast else _httpx_pool()
			self._pools[loop] = pool
		return pool

	async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
		"""Send the request through the current event loop's pool.

		aiohttp re-parses the URL with yarl, which normalizes percent-escapes and dot segments;
		a request whose URL would change (an S3 key with ``%2F``, a signed query) goes through
		httpx's pool instead, so the bytes sent are the bytes that were built and signed.
		"""
		pool = self._pool()
		if self.fast and pool is not self._other and not _yarl_keeps(request.url):
			pool = self._exact_pool()
		return await pool.handle_async_request(request)

	def _exact_pool(self) -> httpx.AsyncBaseTransport:
		loop = asyncio.get_running_loop()
		pool = self._exact.get(loop)
		if pool is None:
			pool = self._exact[loop] = _httpx_pool()
		return pool

	async def aclose(self) -> None:
		"""Close the current loop's pool (and the non-asyncio one); drop those of closed loops."""
		try:
			loop: Any = asyncio.get_running_loop()
		except RuntimeError:
			loop = None
		pools = [*self._pools.items(), *self._exact.items()]
		self._pools, self._exact = weakref.WeakKeyDictionary(), weakref.WeakKeyDictionary()
		for owner, pool in pools:
			if owner is loop:
				await pool.aclose()
			else:
				_drop(pool)
		other, self._other = self._other, None
		if other is not None and loop is None:
			await other.aclose()


def _yarl_keeps(url: httpx.URL) -> bool:
	"""Whether aiohttp would send this URL unchanged (no escapes or dot segments to normalize)."""
	raw = url.raw_path
	return b"%" not in raw and b"/." not in raw


def _httpx_pool() -> httpx.AsyncBaseTransport:
	return httpx.AsyncHTTPTransport(
		limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=_KEEPALIVE)
	)


def _aiohttp_pool() -> httpx.AsyncBaseTransport:
	import aiohttp
	from httpx_aiohttp import AiohttpTransport

	limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=_KEEPALIVE)
	transport = AiohttpTransport(limits=limits)

	def session() -> aiohttp.ClientSession:
		connector = aiohttp.TCPConnector(
			limit=MAX_CONNECTIONS,
			keepalive_timeout=limits.keepalive_expiry,
			ssl=transport.ssl_context,
		)
		# httpx keeps the cookies (the client's jar); aiohttp must not keep a second jar.
		return aiohttp.ClientSession(
			connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False
		)

	transport.client = session
	return transport


def _drop(pool: httpx.AsyncBaseTransport) -> None:
	# The loop that owned these sockets is gone: mark the session closed so nothing warns later.
	session = getattr(pool, "client", None)
	detach = getattr(session, "detach", None)
	if detach is None:
		return
	connector = session.connector  # type: ignore[union-attr]  # an aiohttp.ClientSession
	detach()
	if connector is not None:
		with contextlib.suppress(Exception):
			connector._close()  # the sync part of close(); the loop is closed, so it does no I/O


def new_client() -> httpx.AsyncClient:
	"""Create the shared client: timeouts set, redirects off (tools decide), a fast pool.

	Created lazily, once per OpenMolt instance: loading the CA bundle costs tens of milliseconds,
	and it happens on the first request in each event loop, not here.
	"""
	return httpx.AsyncClient(
		transport=PooledTransport(),
		timeout=httpx.Timeout(DEFAULT_TIMEOUT, connect=10.0),
		follow_redirects=False,
		headers={"User-Agent": "openmolt"},
	)
