"""The one place that builds OpenMolt's shared ``httpx.AsyncClient``, and its transport.

httpx 0.28's own connection pool (httpcore) scans every pooled connection for every request, so
its CPU cost per request grows with the number of requests in flight: at 200 concurrent agent
runs it, not the network, is the bottleneck (``benchmarks/README.md`` has the figures). When the
optional ``httpx-aiohttp`` package is installed (``pip install "openmolt-core[fast]"``; the
``openmolt`` distribution installs it), an asyncio event loop that turns busy moves to aiohttp's
connector, whose pool and C HTTP parser cost the same at 1 or 1,000 requests in flight. Until
then, under trio, or without the package, httpx's own pool is used: importing aiohttp costs more
than a one-shot run saves with it. Either way callers see one ``httpx.AsyncClient``: same
requests, responses, errors, timeouts and retries.

Only public APIs are used, so that a patch release of httpx, httpx-aiohttp or aiohttp cannot
break the fast path: the aiohttp transport is configured through its constructor, the sessions it
opens are recorded by the factory we give it, and they are closed with ``ClientSession.close()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import importlib.util
import ssl
import threading
import weakref
from collections.abc import AsyncGenerator, Coroutine
from typing import Any

import httpx

from openmolt_core._tls import client_context

__all__ = [
	"DEFAULT_TIMEOUT",
	"MAX_CONNECTIONS",
	"PooledTransport",
	"fast_path",
	"keep_no_cookies",
	"new_client",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds for reading a reply; connecting gets 10."""

MAX_CONNECTIONS = 200
"""Connections open at once, over all hosts; further requests wait for a free one."""

_KEEPALIVE = 50


def fast_path() -> bool:
	"""Whether the aiohttp transport is installed (``openmolt-core[fast]``); nothing is imported."""
	return importlib.util.find_spec("httpx_aiohttp") is not None


_BUSY = 4
"""Requests in flight at once on one event loop from which aiohttp's pool is worth its import."""

_WARM = 64
"""Requests sent on one event loop after which aiohttp's pool is built in the background."""


class _Pools:
	"""The pools of one event loop (or one trio run), and the watcher that closes them at its end.

	``plain`` is httpx's pool: cheap to import, so every loop starts with it, and it keeps the URLs
	that aiohttp would rewrite. ``fast`` is aiohttp's, built in a worker thread once the loop is
	busy (`_BUSY` requests in flight) or has sent `_WARM` requests: its import (about a quarter of
	a one-shot run's start-up) is paid only by programs that gain from it.
	"""

	__slots__ = ("building", "fast", "in_flight", "plain", "sent", "sessions", "watcher")

	def __init__(self, plain: httpx.AsyncBaseTransport | None = None) -> None:
		self.plain = plain
		self.fast: httpx.AsyncBaseTransport | None = None
		self.building: asyncio.Future[httpx.AsyncBaseTransport] | None = None
		self.sessions: list[Any] = []  # the aiohttp sessions `fast` opened
		self.in_flight = 0
		self.sent = 0
		self.watcher: AsyncGenerator[None, None] | None = None

	async def aclose(self) -> None:
		"""Close the pools in the loop that owns their sockets."""
		pools = [p for p in (self.fast, self.plain) if p is not None]
		self.fast = self.plain = None
		for pool in pools:
			await pool.aclose()

	def drop(self) -> None:
		"""Mark the pools closed after their loop closed, without I/O and without warnings."""
		for session in self.sessions:
			_end_without_loop(session.close())
		self.sessions = []


class PooledTransport(httpx.AsyncBaseTransport):
	"""One connection pool per event loop: httpx's, then aiohttp's under load when installed.

	Pools are made on the first request in each event loop, since a pool's sockets belong to the
	loop that opened them. Under asyncio with ``httpx-aiohttp`` installed, a loop that turns busy
	moves to aiohttp's pool (see `_Pools`); under trio, or without it, httpx's pool serves all.
	Pools are closed when their loop ends (`asyncio.run`, `anyio.run` and trio finalize the async
	generator that watches them), so a program that never calls `aclose` exits without
	"Unclosed connector" warnings. A pool left behind by a loop that was closed without that step
	is dropped without I/O on the next request.

	Args:
		fast: Use the aiohttp transport under asyncio (default: when it is installed).
	"""

	def __init__(self, *, fast: bool | None = None) -> None:
		self.fast = fast_path() if fast is None else fast
		self._pools: weakref.WeakKeyDictionary[Any, _Pools] = weakref.WeakKeyDictionary()
		self._other: _Pools | None = None  # trio and other non-asyncio loops
		self._sweeping = threading.Lock()
		self._ssl: ssl.SSLContext | None = None

	def prepare(self, loop: Any | None) -> None:
		"""Build the pool for an event loop ahead of its first request (safe in a worker thread).

		Building a pool imports its HTTP library: tens of milliseconds that would otherwise block
		the event loop on the first request. (The CA bundle is read at the first TLS handshake,
		`openmolt_core._tls`.)

		Args:
			loop: The asyncio loop the pool will serve, or None for a non-asyncio one (trio).
		"""
		if loop is None:
			if self._other is None:
				self._other = _Pools(self._httpx_pool())
			elif self._other.plain is None:
				self._other.plain = self._httpx_pool()
		else:
			pools = self._pools.get(loop)
			if pools is None:
				pools = self._pools[loop] = self._new_pools()
			if pools.plain is None:
				pools.plain = self._httpx_pool()

	def _ssl_context(self) -> ssl.SSLContext:
		# One CA bundle per transport, shared by its pools, read at the first TLS handshake:
		# reading it holds the GIL for tens of milliseconds, even in a worker thread, and a
		# program that only speaks plain HTTP (a local model server) never needs it.
		if self._ssl is None:
			self._ssl = client_context()
		return self._ssl

	def _httpx_pool(self) -> httpx.AsyncBaseTransport:
		return _httpx_pool(self._ssl_context())

	def _new_pools(self) -> _Pools:
		with self._sweeping:  # prepare() runs in a worker thread
			for old_loop, old in list(self._pools.items()):
				if old_loop.is_closed():  # closed without shutting its async generators down
					old.drop()
					del self._pools[old_loop]
		return _Pools()

	def _current(self) -> tuple[Any, _Pools]:
		try:
			loop = asyncio.get_running_loop()
		except RuntimeError:  # not asyncio (trio): httpx's pool, which runs on anyio
			if self._other is None:
				self._other = _Pools()
			return None, self._other
		pools = self._pools.get(loop)
		if pools is None:
			pools = self._pools[loop] = self._new_pools()
		return loop, pools

	def _pool(self) -> httpx.AsyncBaseTransport:
		"""The pool the next plain request of this loop goes through (for tests)."""
		pools = self._current()[1]
		if pools.fast is not None:
			return pools.fast
		if pools.plain is None:
			pools.plain = self._httpx_pool()
		return pools.plain

	async def _choose(self, loop: Any, pools: _Pools, url: httpx.URL) -> httpx.AsyncBaseTransport:
		if pools.fast is not None and _yarl_keeps(url):
			return pools.fast
		if loop is not None and self.fast and _yarl_keeps(url):
			pools.sent += 1
			if pools.building is None and (pools.in_flight >= _BUSY or pools.sent > _WARM):
				pools.building = loop.run_in_executor(
					None, _aiohttp_pool, self._ssl_context(), pools.sessions
				)
				pools.building.add_done_callback(_retrieve)
			building = pools.building
			if building is not None and (building.done() or pools.in_flight >= _BUSY):
				try:
					# shielded: a cancelled request must not cancel the build the others wait for
					pools.fast = await asyncio.shield(building)
				except Exception:  # aiohttp is broken here: stay on httpx's pool
					self.fast = False
				else:
					return pools.fast
		if pools.plain is None:
			pools.plain = self._httpx_pool()
		return pools.plain

	async def _watch(self, loop: Any, pools: _Pools) -> None:
		"""Start the async generator whose ``finally`` closes the pools when the loop ends."""
		watcher = self._until_loop_ends(loop, pools)
		pools.watcher = watcher
		await watcher.asend(None)

	async def _until_loop_ends(self, loop: Any, pools: _Pools) -> AsyncGenerator[None, None]:
		# The loop's async-generator hooks see this generator on its first step; when the loop
		# ends, asyncio.run (shutdown_asyncgens) and trio close it, which runs the finally block
		# while the loop can still do I/O.
		try:
			yield
		finally:
			if self._forget(loop, pools):
				with contextlib.suppress(Exception):
					await pools.aclose()

	def _forget(self, loop: Any, pools: _Pools) -> bool:
		if loop is None:
			if self._other is not pools:
				return False
			self._other = None
			return True
		if self._pools.get(loop) is not pools:
			return False
		del self._pools[loop]
		return True

	async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
		"""Send the request through the current event loop's pool.

		aiohttp re-parses the URL with yarl, which normalizes percent-escapes and dot segments;
		a request whose URL would change (an S3 key with ``%2F``, a signed query) goes through
		httpx's pool instead, so the bytes sent are the bytes that were built and signed.
		"""
		loop, pools = self._current()
		if pools.watcher is None:
			await self._watch(loop, pools)
		pool = await self._choose(loop, pools, request.url)
		pools.in_flight += 1
		try:
			return await pool.handle_async_request(request)
		finally:
			pools.in_flight -= 1

	async def aclose(self) -> None:
		"""Close the current loop's pools (and the non-asyncio ones); drop those of closed loops."""
		try:
			loop: Any = asyncio.get_running_loop()
		except RuntimeError:
			loop = None
		everything = list(self._pools.items())
		self._pools = weakref.WeakKeyDictionary()
		for owner, pools in everything:
			if owner is loop:
				await _close(pools)
			else:
				pools.drop()
		other, self._other = self._other, None
		if other is not None and loop is None:
			await _close(other)


def _retrieve(done: asyncio.Future[Any]) -> None:
	# A build that failed while nobody waited must not be logged as "never retrieved".
	if not done.cancelled():
		done.exception()


async def _close(pools: _Pools) -> None:
	watcher, pools.watcher = pools.watcher, None
	if pools.building is not None and not pools.building.done():
		with contextlib.suppress(Exception):
			pools.fast = await asyncio.shield(pools.building)  # its sessions must close too
	await pools.aclose()
	if watcher is not None:
		await watcher.aclose()  # its pools are no longer registered: closes nothing twice


def _end_without_loop(close: Coroutine[Any, Any, Any]) -> None:
	"""Run a close coroutine whose event loop is gone to its end, without a loop.

	aiohttp's ``ClientSession.close()`` marks the session and its connector closed and returns at
	once when the loop is closed (there is no socket left to wait for); awaiting it here would
	need a running loop, so it is stepped once by hand instead.
	"""
	try:
		close.send(None)
	except StopIteration:
		return
	except Exception:  # closing must not fail the request that noticed the dead loop
		return
	close.close()  # it wanted to wait for I/O after all: give up, the loop is gone


def _yarl_keeps(url: httpx.URL) -> bool:
	"""Whether aiohttp would send this URL unchanged (no escapes or dot segments to normalize)."""
	raw = url.raw_path
	return b"%" not in raw and b"/." not in raw


def _httpx_pool(ssl_context: ssl.SSLContext) -> httpx.AsyncBaseTransport:
	return httpx.AsyncHTTPTransport(
		verify=ssl_context,
		limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=_KEEPALIVE),
	)


def _aiohttp_pool(ssl_context: ssl.SSLContext, sessions: list[Any]) -> httpx.AsyncBaseTransport:
	import aiohttp

	from openmolt_core.integrations._aiohttp import AiohttpTransport  # errors remapped

	limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=_KEEPALIVE)

	def session() -> aiohttp.ClientSession:
		connector = aiohttp.TCPConnector(
			limit=MAX_CONNECTIONS, keepalive_timeout=limits.keepalive_expiry, ssl=ssl_context
		)
		# The shared client keeps no cookies (`_NoCookies`); aiohttp must not keep a jar either.
		opened = aiohttp.ClientSession(
			connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False
		)
		sessions.append(opened)
		return opened

	# Everything is passed through the constructor (an SSLContext as ``verify`` is used as is).
	return AiohttpTransport(verify=ssl_context, limits=limits, client=session)


class _StoresNone(http.cookiejar.DefaultCookiePolicy):
	"""Stores no cookie a response sets; sends those its owner put in the jar (`keep_no_cookies`)."""

	def set_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
		"""Refuse to store any cookie a response sets."""
		return False


class _NoCookies(_StoresNone):
	"""Keeps no cookie: the client is shared by every agent, user and integration of an instance.

	A cookie one service set for one agent's request (a session after a credentialed call) would
	otherwise ride along on every later request to that host, another user's or the model's own
	``httpRequest`` included. A tool that needs a cookie sends it as a header.
	"""

	def return_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
		"""Refuse to send any stored cookie."""
		return False


def _reads_none(cookies: httpx.Cookies) -> None:
	"""Skip reading each response's cookies while the jar's policy stores none of them.

	httpx reads every response's ``Set-Cookie`` headers (`httpx.Cookies.extract_cookies`: a
	urllib request rebuilt from the httpx one, the headers copied into an email message, the
	jar asked): about 60 µs of CPU a response, more than building a model request's body, for
	nothing under `_StoresNone`. A policy set on the jar later (the application's own) is obeyed:
	the responses are read again.

	Args:
		cookies: The client's cookies (``client.cookies``), changed in place.
	"""
	extract = cookies.extract_cookies

	def extract_cookies(response: httpx.Response) -> None:
		if not isinstance(cookies.jar._policy, _StoresNone):  # type: ignore[attr-defined]
			extract(response)

	cookies.extract_cookies = extract_cookies  # type: ignore[method-assign]


def keep_no_cookies(client: httpx.AsyncClient) -> None:
	"""Make a client an application gave an instance keep no cookie a response sets.

	It is shared by every agent, user and integration of the instance, as the client the
	instance makes (`new_client`, `_NoCookies`): a session cookie a service set in one user's call
	would otherwise ride along on another user's request to that host. The cookies the
	application put in the client itself (``AsyncClient(cookies=...)``) are still sent: the
	operator's, on every request, as before.

	Args:
		client: The client given (``OpenMolt(http_client=...)``).
	"""
	client.cookies.jar.set_policy(_StoresNone())
	_reads_none(client.cookies)


def new_client(transport: PooledTransport | None = None) -> httpx.AsyncClient:
	"""Create the shared client: timeouts set, redirects off (tools decide), a fast pool, no cookies.

	Created lazily, once per OpenMolt instance: its pools are built on the first request in each
	event loop (or by `PooledTransport.prepare`), not here, and the CA bundle is read at the first
	TLS handshake.

	Args:
		transport: The pool to send through (the caller keeps it to call
			`PooledTransport.prepare`); a new one by default.
	"""
	client = httpx.AsyncClient(
		transport=transport if transport is not None else PooledTransport(),
		timeout=httpx.Timeout(DEFAULT_TIMEOUT, connect=10.0),
		follow_redirects=False,
		headers={"User-Agent": "openmolt"},
		cookies=http.cookiejar.CookieJar(policy=_NoCookies()),
	)
	_reads_none(client.cookies)
	return client
