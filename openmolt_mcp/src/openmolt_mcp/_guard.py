"""The SSRF guard for MCP servers over Streamable HTTP: the same policy as ``httpRequest``.

Every request to the server, and every redirect hop, goes through `GuardedTransport`: its host is
resolved once and each address checked by the core's `openmolt_core.integrations._ssrf.SsrfGuard`
(loopback, private, link-local, shared, reserved and cloud metadata addresses are refused), then
the connection is pinned to the checked address (the ``Host`` header and, for HTTPS, SNI and the
certificate keep the name), so a name cannot resolve to a public address for the check and to an
internal one for the connection. An internal server is reachable only when the server's config
lists it in ``allowInternalHosts`` (host names, ``*.corp.example``, or networks such as
``10.20.0.0/16``; never "everything").

What the server sends back is bounded too, since a server someone else named may be hostile: the
requests ask for no compression (``Accept-Encoding: identity``) and a compressed reply is refused
(httpx would inflate each chunk without a bound: a small gzip bomb is gigabytes), and a reply
other than an event stream is read up to `MAX_REPLY_BYTES` (the SDK bounds each event of a
stream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx2

from openmolt_core.errors import ToolError
from openmolt_core.integrations._ssrf import SsrfGuard

if TYPE_CHECKING:
	from collections.abc import AsyncIterator, Sequence

	from openmolt_core.integrations._ssrf import Resolver

__all__ = ["MAX_REPLY_BYTES", "GuardedTransport", "SsrfRefused"]

MAX_REPLY_BYTES = 64 * 1024 * 1024
"""The largest reply body read from an MCP server, event streams aside."""


class SsrfRefused(httpx2.TransportError):
	"""The guard refused a request to an MCP server (the message says why and how to allow it)."""


class _Capped(httpx2.AsyncByteStream):
	"""A reply body that fails once more than ``limit`` bytes came."""

	def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
		self.inner = inner
		self.limit = limit

	async def __aiter__(self) -> AsyncIterator[bytes]:
		taken = 0
		async for chunk in self.inner:
			taken += len(chunk)
			if taken > self.limit:
				raise httpx2.ReadError(
					f"the MCP server's reply is larger than {self.limit} bytes; not read"
				)
			yield chunk

	async def aclose(self) -> None:
		await self.inner.aclose()


class GuardedTransport(httpx2.AsyncBaseTransport):
	"""An httpx2 transport that checks and pins every request's host (see the module docstring).

	Args:
		allow_internal_hosts: The server config's ``allowInternalHosts``.
		inner: The transport that sends the pinned requests (default: a new
			``httpx2.AsyncHTTPTransport``).
		resolver: Resolves host names (tests pass a fake one); default: the system resolver.
	"""

	def __init__(
		self,
		allow_internal_hosts: Sequence[str] = (),
		*,
		inner: httpx2.AsyncBaseTransport | None = None,
		resolver: Resolver | None = None,
	) -> None:
		self._guard = SsrfGuard(internal=list(allow_internal_hosts), resolver=resolver)
		self._inner = inner or httpx2.AsyncHTTPTransport()

	async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
		"""Check the request's host, then send it to the checked address.

		Raises:
			SsrfRefused: The scheme is not HTTP(S), the URL carries credentials, or the host is
				or resolves to an address that must not be reached.
		"""
		url = request.url
		if url.scheme not in ("http", "https"):
			raise SsrfRefused(f"only http and https MCP servers are allowed, not {url.scheme!r}")
		if url.userinfo:
			raise SsrfRefused("an MCP server URL with a user name or password is not allowed")
		host = url.host
		port = url.port or (443 if url.scheme == "https" else 80)
		try:
			address = await self._guard.check(host, port)
		except ToolError as exc:
			raise SsrfRefused(
				f"{exc.message}; for an MCP server, list the host in the server's "
				"allowInternalHosts"
			) from None
		headers = httpx2.Headers(request.headers)
		headers["Host"] = url.netloc.decode("ascii")
		headers["Accept-Encoding"] = "identity"
		extensions = dict(request.extensions)
		if url.scheme == "https":
			extensions["sni_hostname"] = host
			headers["Connection"] = "close"  # a connection opened for one name is never reused
		pinned = httpx2.Request(
			request.method,
			url.copy_with(host=str(address)),
			headers=headers,
			stream=request.stream,
			extensions=extensions,
		)
		response = await self._inner.handle_async_request(pinned)
		response.request = request
		encoding = response.headers.get("content-encoding", "identity").strip().lower()
		if encoding not in ("", "identity"):
			await response.aclose()
			raise httpx2.DecodingError(
				f"the MCP server compressed its reply ({encoding[:40]}) though it was asked not to; "
				"not read",
				request=request,
			)
		ctype = response.headers.get("content-type", "")
		if isinstance(response.stream, httpx2.AsyncByteStream) and not ctype.startswith(
			"text/event-stream"
		):
			response.stream = _Capped(response.stream, MAX_REPLY_BYTES)
		return response

	async def aclose(self) -> None:
		"""Close the inner transport."""
		await self._inner.aclose()
