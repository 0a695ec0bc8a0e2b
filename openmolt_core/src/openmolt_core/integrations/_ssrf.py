"""The SSRF guard of the httpRequest integration: public addresses only, checked and pinned.

Python 3.11's ``ipaddress`` does not look inside IPv6 forms that carry an IPv4 address
(``::ffff:127.0.0.1`` is not ``is_loopback``), and ``getaddrinfo`` accepts ``2130706433``,
``0x7f.1`` and ``127.1`` as 127.0.0.1. So the guard:

1. resolves the host itself (``anyio.getaddrinfo``; IP literals in any spelling resolve to
   themselves), and refuses the request when any resolved address is not public: loopback,
   private, link-local (cloud metadata at 169.254.169.254 included), shared (100.64/10),
   unspecified, multicast, reserved, unique-local IPv6, or an IPv6 address whose embedded IPv4
   (IPv4-mapped, IPv4-compatible, 6to4, NAT64 ``64:ff9b::/96`` and ``64:ff9b:1::/48``) is one;
2. pins the connection to the address it checked: the request URL gets the IP as its host while
   the ``Host`` header keeps the name, and for HTTPS the ``sni_hostname`` request extension keeps
   the name for SNI and certificate verification (httpcore verifies the certificate against it).
   A pinned HTTPS request also sends ``Connection: close``, so a connection opened for one name is
   never pooled and reused for another name on the same IP.

It runs before every hop, so each redirect target is resolved, checked and pinned again.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable

import anyio
import httpx

from openmolt_core.errors import ToolError

__all__ = ["Resolver", "SsrfGuard", "embedded_ipv4", "is_public_address", "resolve_host"]

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolves a host and port to IP address strings."""

_NAT64 = (
	ipaddress.ip_network("64:ff9b::/96"),
	ipaddress.ip_network("64:ff9b:1::/48"),
	ipaddress.ip_network("::ffff:0:0:0/96"),  # IPv4-translated (RFC 2765), ::ffff:0:a.b.c.d
)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
	"""The IPv4 address inside an IPv6 one (mapped, translated, compatible, 6to4, NAT64), if any."""
	if address.ipv4_mapped is not None:
		return address.ipv4_mapped
	if address.sixtofour is not None:
		return address.sixtofour
	value = int(address)
	if any(address in net for net in _NAT64) or (value >> 32 == 0 and value > 1):
		return ipaddress.IPv4Address(value & 0xFFFFFFFF)
	return None


def is_public_address(text: str) -> bool:
	"""Whether an IP address (any IPv4/IPv6 text form ``ipaddress`` reads) is publicly routable."""
	try:
		address: IPAddress = ipaddress.ip_address(text.split("%", 1)[0])
	except ValueError:
		return False
	if isinstance(address, ipaddress.IPv6Address):
		if address.is_site_local:  # fec0::/10, deprecated but still routed internally
			return False
		inner = embedded_ipv4(address)
		if inner is not None:
			address = inner
	return address.is_global and not address.is_multicast


async def resolve_host(host: str, port: int) -> list[str]:
	"""Resolve a host to its addresses (the default `Resolver`)."""
	try:
		infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
	except OSError as exc:
		raise ToolError(f"could not resolve {host!r}: {exc.strerror or exc}") from None
	return list(dict.fromkeys(str(info[4][0]) for info in infos))


class SsrfGuard:
	"""Checks and pins each hop of a request (use as ``send(before_send=guard)``).

	Args:
		allow_private: Skip the checks (the user allowed private addresses explicitly).
		resolver: Resolves host names (tests pass a fake one).
	"""

	def __init__(self, *, allow_private: bool = False, resolver: Resolver | None = None) -> None:
		self.allow_private = allow_private
		self.resolver = resolver or resolve_host

	async def __call__(self, request: httpx.Request) -> httpx.Request:
		"""Return the request pinned to a checked public address.

		Raises:
			ToolError: The scheme is not HTTP(S), or the host is or resolves to a non-public
				address.
		"""
		url = request.url
		if url.scheme not in ("http", "https"):
			raise ToolError(f"only http and https URLs are allowed, not {url.scheme!r}")
		if self.allow_private:
			return request
		host = url.host
		port = url.port or (443 if url.scheme == "https" else 80)
		try:
			addresses = [str(ipaddress.ip_address(host))]
		except ValueError:
			addresses = await self.resolver(host, port)
		if not addresses:
			raise ToolError(f"could not resolve {host!r}")
		refused = [a for a in addresses if not is_public_address(a)]
		if refused:
			raise ToolError(
				f"refused: {host!r} is or resolves to a non-public address ({refused[0]}); "
				"loopback, private, link-local and metadata addresses are not allowed"
			)
		headers = httpx.Headers(request.headers)
		extensions = dict(request.extensions)
		if url.scheme == "https":
			extensions["sni_hostname"] = host
			headers["Connection"] = "close"
		return httpx.Request(
			request.method,
			url.copy_with(host=addresses[0]),
			headers=headers,
			content=request.content,
			extensions=extensions,
		)
