"""The SSRF guard: a request reaches only public addresses (or internal ones the app allowed).

What is refused (`refusal`) comes from data, `openmolt_core.integrations._iana`: every block of
IANA's IPv4 and IPv6 special-purpose registries that is not globally reachable (loopback,
private-use, shared, link-local, documentation, benchmarking, reserved, unique-local, NAT64
local-use, ...), IPv4 multicast, IPv6 outside global unicast (2000::/3), and the cloud metadata
endpoints. ``ipaddress.is_global`` is not used: on Python 3.11 it calls several special-purpose
blocks global.

An IPv6 address that carries an IPv4 address is unwrapped first, and every address inside it
must pass: IPv4-mapped (``::ffff:a.b.c.d``), IPv4-translated (``::ffff:0:a.b.c.d``),
IPv4-compatible (``::a.b.c.d``), NAT64 (``64:ff9b::/96``; the local-use ``64:ff9b:1::/48`` is
refused whole), 6to4 (``2002:AABB:CCDD::``), Teredo (server and client), and ISATAP (an
interface identifier ``0000:5efe``/``0200:5efe`` followed by the IPv4 address, in any prefix).

Host names are resolved once (``anyio.getaddrinfo``; an IPv4 literal in any spelling
``inet_aton`` reads, such as ``2130706433``, ``0x7f.1`` or ``127.1``, is read as the address it
names). Every answer is checked, and the connection goes to the first checked address: the
request URL gets the IP as its host while the ``Host`` header keeps the name, and for HTTPS the
``sni_hostname`` request extension keeps the name for SNI and certificate verification. A
pinned HTTPS request sends ``Connection: close``, so a connection opened for one name is never
pooled and reused for another on the same IP.

`InternalHosts` is the one way to reach an internal service (a self-hosted API on a private
network): named hosts or networks the application lists, never "everything".
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence

import anyio
import httpx

from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.integrations._iana import (
	GLOBAL_UNICAST_V6,
	IPV4_SPECIAL,
	IPV6_SPECIAL,
	METADATA,
	METADATA_NAMES,
	MULTICAST_V4,
	Row,
)

__all__ = [
	"InternalHosts",
	"Resolver",
	"SsrfGuard",
	"embedded_ipv4",
	"is_public_address",
	"parse_ip",
	"refusal",
	"resolve_host",
	"unpinned_url",
]

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolves a host and port to IP address strings."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIXTOFOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_METADATA = {endpoint.address: endpoint.what for endpoint in METADATA}
_NUMERIC_HOST = re.compile(r"^[0-9a-fA-FxX.]+$")


def _longest(rows: tuple[Row, ...], address: IPAddress) -> Row | None:
	best: Row | None = None
	for row in rows:
		if address in row.block and (best is None or row.block.prefixlen > best.block.prefixlen):
			best = row
	return best


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
	"""Every IPv4 address an IPv6 address carries (the transition forms of the module docstring).

	Args:
		address: The IPv6 address.

	Returns:
		The embedded addresses (Teredo carries two), or an empty tuple.
	"""
	value = int(address)
	found: list[ipaddress.IPv4Address] = []
	low = ipaddress.IPv4Address(value & 0xFFFFFFFF)
	if address in _MAPPED or address in _TRANSLATED or address in _NAT64:
		found.append(low)
	elif address in _COMPATIBLE and value > 1:
		found.append(low)
	elif address in _SIXTOFOUR:
		found.append(ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF))
	elif address in _TEREDO:
		found.append(ipaddress.IPv4Address((value >> 64) & 0xFFFFFFFF))
		found.append(ipaddress.IPv4Address(~value & 0xFFFFFFFF))
	# ISATAP (RFC 5214): the interface identifier is [0-3]00:5efe:<IPv4>, u/g bits either way.
	if (value >> 32) & 0xFCFFFFFF == 0x00005EFE:
		found.append(low)
	return tuple(found)


def _representation(address: ipaddress.IPv6Address) -> bool:
	"""Forms whose only destination is the IPv4 address inside (the outer block says nothing)."""
	return address in _MAPPED or address in _TRANSLATED or address in _NAT64


def _ipv4_refusal(address: ipaddress.IPv4Address) -> str | None:
	if address in _METADATA:
		return f"a cloud metadata endpoint ({_METADATA[address]})"
	row = _longest(IPV4_SPECIAL, address)
	if row is not None and row.reachable is not True:
		return f"{row.name} ({row.block}, {row.rfc})"
	if address in MULTICAST_V4:
		return f"multicast ({MULTICAST_V4})"
	return None


def refusal(address: IPAddress) -> str | None:
	"""Why an address must not be reached, or None when it is public.

	Args:
		address: An IPv4 or IPv6 address (an IPv6 scope id is ignored).

	Returns:
		A short reason naming the registry block (``Loopback (127.0.0.0/8, RFC 1122...)``).
	"""
	if isinstance(address, ipaddress.IPv4Address):
		return _ipv4_refusal(address)
	address = ipaddress.IPv6Address(int(address))  # drop a scope id
	if address in _METADATA:
		return f"a cloud metadata endpoint ({_METADATA[address]})"
	inner = embedded_ipv4(address)
	for v4 in inner:
		why = _ipv4_refusal(v4)
		if why is not None:
			return f"{address} carries {v4}: {why}"
	if _representation(address):
		return None
	row = _longest(IPV6_SPECIAL, address)
	if row is not None and row.reachable is False:
		return f"{row.name} ({row.block}, {row.rfc})"
	if row is not None and row.reachable is None and not inner:
		return f"{row.name} ({row.block}, {row.rfc})"
	if row is None and address not in GLOBAL_UNICAST_V6:
		return f"outside the IPv6 global unicast space ({GLOBAL_UNICAST_V6})"
	return None


def parse_ip(host: str) -> IPAddress | None:
	"""The IP address a URL host names, in any spelling the system resolver reads, or None.

	``127.0.0.1``, ``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1`` and ``[::1]`` (with or
	without brackets or a scope id) are addresses; a name is None.

	Args:
		host: The host of a URL.
	"""
	text = host.strip("[]").split("%", 1)[0]
	try:
		return ipaddress.ip_address(text)
	except ValueError:
		pass
	if _NUMERIC_HOST.match(text) and not text.endswith(".."):
		try:
			return ipaddress.IPv4Address(socket.inet_aton(text.rstrip(".")))
		except OSError:
			return None
	return None


def is_public_address(text: str) -> bool:
	"""Whether an IP address (any spelling `parse_ip` reads) is publicly routable."""
	address = parse_ip(text)
	return address is not None and refusal(address) is None


async def resolve_host(host: str, port: int) -> list[str]:
	"""Resolve a host to its addresses (the default `Resolver`).

	Raises:
		ToolError: The name does not resolve.
	"""
	try:
		infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
	except OSError as exc:
		raise ToolError(f"could not resolve {host!r}: {exc.strerror or exc}") from None
	return list(dict.fromkeys(str(info[4][0]) for info in infos))


_HOST_NAME = re.compile(r"^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_-]{1,63}$")


def _non_public_network(network: IPNetwork) -> bool:
	"""Whether every address of a network is non-public (it lies inside one refused block)."""
	if network.num_addresses == 1:
		return True
	if isinstance(network, ipaddress.IPv4Network):
		blocks: Iterable[IPNetwork] = [
			*(r.block for r in IPV4_SPECIAL if r.reachable is not True),
			MULTICAST_V4,
		]
	else:
		blocks = [r.block for r in IPV6_SPECIAL if r.reachable is False]
		blocks = [*blocks, ipaddress.IPv6Network("fec0::/10"), ipaddress.IPv6Network("ff00::/8")]
	return any(
		network.version == block.version and network.subnet_of(block)  # type: ignore[arg-type]  # same version checked
		for block in blocks
	)


class InternalHosts:
	"""Internal hosts an application lets its tools reach (off by default: none).

	Each entry is a host name (``gitlab.corp.example``, or ``*.corp.example`` for its
	subdomains), an address, or a network (``10.20.0.0/16``, ``fd12:3456::/32``). A network must
	lie inside one non-public block, so it can never stand for "everything" (``0.0.0.0/0`` and
	``10.0.0.0/7`` are refused). A cloud metadata endpoint stays refused unless an entry is its
	exact address.

	Args:
		entries: The names, addresses and networks.

	Raises:
		ConfigurationError: An entry is not a host name or a network of internal addresses.
	"""

	__slots__ = ("entries", "names", "networks", "suffixes")

	def __init__(self, entries: Iterable[str] = ()) -> None:
		entries = [entries] if isinstance(entries, str) else list(entries)
		self.entries: tuple[str, ...] = tuple(entries)
		names: set[str] = set()
		suffixes: set[str] = set()
		networks: list[IPNetwork] = []
		for entry in entries:
			if not isinstance(entry, str) or not entry.strip():
				raise ConfigurationError(
					f"allowInternalHosts: {entry!r} is not a host name or a network; list names "
					"like 'gitlab.corp.example' or networks like '10.20.0.0/16'"
				)
			text = entry.strip().lower().rstrip(".")
			try:
				network = ipaddress.ip_network(text.strip("[]"), strict=False)
			except ValueError:
				network = None
			if network is not None:
				if not _non_public_network(network):
					raise ConfigurationError(
						f"allowInternalHosts: {entry!r} covers public addresses; list the internal "
						"hosts or networks themselves (e.g. '10.20.0.0/16'), never everything"
					)
				networks.append(network)
			elif _HOST_NAME.match(text) and text.count(".") >= (2 if text.startswith("*.") else 0):
				if text.startswith("*."):
					suffixes.add(text[1:])
				else:
					names.add(text)
			else:
				raise ConfigurationError(
					f"allowInternalHosts: {entry!r} is not a host name, '*.<domain>' or a network; "
					"a wildcard needs a domain of its own ('*.corp.example')"
				)
		self.names = frozenset(names)
		self.suffixes = tuple(sorted(suffixes))
		self.networks = tuple(networks)

	def __bool__(self) -> bool:
		return bool(self.names or self.suffixes or self.networks)

	def __repr__(self) -> str:
		return f"InternalHosts({list(self.entries)!r})"

	def __add__(self, other: InternalHosts) -> InternalHosts:
		return InternalHosts([*self.entries, *other.entries])

	def names_host(self, host: str) -> bool:
		"""Whether a host name is listed (exactly, or under a ``*.`` entry)."""
		name = host.lower().rstrip(".")
		return name in self.names or any(name.endswith(s) for s in self.suffixes)

	def allows(self, host: str, address: IPAddress) -> bool:
		"""Whether a refused address may be reached for this host.

		Args:
			host: The host name of the URL.
			address: One of its addresses (refused by `refusal`).
		"""
		forms: list[IPAddress] = [address]
		if isinstance(address, ipaddress.IPv6Address):
			plain = ipaddress.IPv6Address(int(address))  # without a scope id
			forms = [plain, *embedded_ipv4(plain)]
		exact = any(n.num_addresses == 1 and a in n for n in self.networks for a in forms)
		if any(a in _METADATA for a in forms):
			return exact
		inside = any(a in n for n in self.networks for a in forms)
		return exact or inside or self.names_host(host)


def internal_hosts(value: InternalHosts | Sequence[str] | str | None) -> InternalHosts:
	"""Read an ``allowInternalHosts`` setting (None or empty: no internal host).

	Raises:
		ConfigurationError: The setting is malformed (see `InternalHosts`).
	"""
	if isinstance(value, InternalHosts):
		return value
	if value is None:
		return InternalHosts()
	if isinstance(value, str):
		value = [value]
	if not isinstance(value, (list, tuple, set, frozenset)):
		raise ConfigurationError(
			f"allowInternalHosts must be a list of host names or networks, got "
			f"{type(value).__name__}"
		)
	return InternalHosts(value)


def unpinned_url(request: httpx.Request) -> httpx.URL:
	"""The URL a request was built for, before the guard pinned it to an address (for tests).

	Args:
		request: A request as the transport received it.
	"""
	host = request.headers.get("host")
	return request.url.copy_with(netloc=host.encode("ascii")) if host else request.url


def _default_resolver() -> Resolver:
	# Looked up at call time, so a test can replace this module's resolve_host.
	return resolve_host


class SsrfGuard:
	"""Checks and pins one hop of a request.

	Args:
		internal: Internal hosts the application allows (`InternalHosts`); none by default.
		resolver: Resolves host names (tests pass a fake one); default: `resolve_host`.
	"""

	def __init__(
		self,
		*,
		internal: InternalHosts | Sequence[str] | None = None,
		resolver: Resolver | None = None,
	) -> None:
		self.internal = internal_hosts(internal)
		self.resolver = resolver

	async def check(self, host: str, port: int) -> IPAddress:
		"""Resolve a host once and check every answer.

		Args:
			host: The URL's host (a name, or an IP literal in any spelling).
			port: The port (passed to the resolver).

		Returns:
			The first checked address, to connect to.

		Raises:
			ToolError: The host is or resolves to an address that must not be reached.
		"""
		name = host.lower().rstrip(".")
		if name in METADATA_NAMES and not self.internal.names_host(name):
			raise ToolError(f"refused: {host!r} is a cloud metadata service")
		literal = parse_ip(host)
		if literal is not None:
			addresses: list[IPAddress] = [literal]
		else:
			resolver = self.resolver or _default_resolver()
			answers = await resolver(host, port)
			addresses = []
			for answer in answers:
				parsed = parse_ip(str(answer))
				if parsed is None:
					raise ToolError(f"could not resolve {host!r}: odd answer {answer!r}")
				addresses.append(parsed)
		if not addresses:
			raise ToolError(f"could not resolve {host!r}")
		for address in addresses:
			why = refusal(address)
			if why is not None and not self.internal.allows(name, address):
				raise ToolError(
					f"refused: {host!r} is or resolves to a non-public address ({address}: "
					f"{why}); loopback, private, link-local and metadata addresses are not "
					"reachable unless the application lists the host in allowInternalHosts"
				)
		return addresses[0]

	async def __call__(self, request: httpx.Request) -> httpx.Request:
		"""Return the request pinned to a checked address.

		Raises:
			ToolError: The scheme is not HTTP(S), the URL carries credentials, or the host is or
				resolves to an address that must not be reached.
		"""
		url = request.url
		if url.scheme not in ("http", "https"):
			raise ToolError(f"only http and https URLs are allowed, not {url.scheme!r}")
		if url.userinfo:
			raise ToolError("a URL with a user name or password is not allowed; use headers")
		host = url.host
		if not host:
			raise ToolError("the URL has no host")
		port = url.port or (443 if url.scheme == "https" else 80)
		address = await self.check(host, port)
		headers = httpx.Headers(request.headers)
		headers["Host"] = url.netloc.decode("ascii")
		extensions = dict(request.extensions)
		if url.scheme == "https":
			extensions["sni_hostname"] = host
			headers["Connection"] = "close"
		return httpx.Request(
			request.method,
			url.copy_with(host=str(address)),
			headers=headers,
			content=request.content,
			extensions=extensions,
		)
