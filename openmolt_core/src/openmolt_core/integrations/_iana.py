"""The address data the SSRF guard decides with: IANA's special-purpose registries, as data.

Each `Row` is one row of a registry, as IANA publishes it (block, name, RFC, and the
"Globally Reachable" column: True, False, or None for "N/A"):

- IPv4: https://www.iana.org/assignments/iana-ipv4-special-registry/ (IANA IPv4 Special-Purpose
  Address Registry, RFC 6890), every row as of its 2025 revision;
- IPv6: https://www.iana.org/assignments/iana-ipv6-special-registry/ (IANA IPv6 Special-Purpose
  Address Registry, RFC 6890), every row as of its 2025 revision.

Two more IANA facts complete them: the IPv4 multicast block 224.0.0.0/4
(https://www.iana.org/assignments/multicast-addresses/) and the IPv6 global unicast space
2000::/3 (https://www.iana.org/assignments/ipv6-address-space/): an IPv6 address outside it is
multicast (ff00::/8), unique-local, link-local, the deprecated site-local fec0::/10, or reserved
by the IETF, and never a public host.

`METADATA` lists the cloud metadata and host-service endpoints: every one is refused, even inside
a network the application allowed, unless the application names that exact address. Most sit in
a refused block already (169.254.0.0/16, fd00::/8, 100.64.0.0/10, 192.0.0.0/24); Azure's
WireServer 168.63.129.16 is in public address space and is refused only because it is listed.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = [
	"GLOBAL_UNICAST_V6",
	"IPV4_SPECIAL",
	"IPV6_SPECIAL",
	"METADATA",
	"METADATA_NAMES",
	"MULTICAST_V4",
	"Endpoint",
	"Row",
]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class Row:
	"""One row of an IANA special-purpose address registry.

	Args:
		block: The address block.
		name: The registry's name for it.
		rfc: The RFC the registry cites.
		reachable: The "Globally Reachable" column (None: "N/A").
	"""

	block: Network
	name: str
	rfc: str
	reachable: bool | None


def _rows(table: tuple[tuple[str, str, str, bool | None], ...]) -> tuple[Row, ...]:
	return tuple(Row(ipaddress.ip_network(b), n, r, g) for b, n, r, g in table)


IPV4_SPECIAL = _rows((
	("0.0.0.0/8", '"This network"', "RFC 791, Section 3.2", False),
	("0.0.0.0/32", '"This host on this network"', "RFC 1122, Section 3.2.1.3", False),
	("10.0.0.0/8", "Private-Use", "RFC 1918", False),
	("100.64.0.0/10", "Shared Address Space", "RFC 6598", False),
	("127.0.0.0/8", "Loopback", "RFC 1122, Section 3.2.1.3", False),
	("169.254.0.0/16", "Link Local", "RFC 3927", False),
	("172.16.0.0/12", "Private-Use", "RFC 1918", False),
	("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890, Section 2.1", False),
	("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", False),
	("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", False),
	("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", True),
	("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
	("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 Section 2.2", False),
	("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 Section 2.2", False),
	("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", False),
	("192.31.196.0/24", "AS112-v4", "RFC 7535", True),
	("192.52.193.0/24", "AMT", "RFC 7450", True),
	("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", None),
	("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", False),
	("192.168.0.0/16", "Private-Use", "RFC 1918", False),
	("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", True),
	("198.18.0.0/15", "Benchmarking", "RFC 2544", False),
	("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", False),
	("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", False),
	("240.0.0.0/4", "Reserved", "RFC 1112, Section 4", False),
	("255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919 Section 7", False),
))  # fmt: skip
"""Every row of the IANA IPv4 Special-Purpose Address Registry."""

IPV6_SPECIAL = _rows((
	("::1/128", "Loopback Address", "RFC 4291", False),
	("::/128", "Unspecified Address", "RFC 4291", False),
	("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", False),
	("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", True),
	("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", False),
	("100::/64", "Discard-Only Address Block", "RFC 6666", False),
	("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", False),
	("2001::/23", "IETF Protocol Assignments", "RFC 2928", False),
	("2001::/32", "TEREDO", "RFC 4380, RFC 8190", None),
	("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", True),
	("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
	("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", True),
	("2001:2::/48", "Benchmarking", "RFC 5180, RFC Errata 1752", False),
	("2001:3::/32", "AMT", "RFC 7450", True),
	("2001:4:112::/48", "AS112-v6", "RFC 7535", True),
	("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", None),
	("2001:20::/28", "ORCHIDv2", "RFC 7343", True),
	("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", True),
	("2001:db8::/32", "Documentation", "RFC 3849", False),
	("2002::/16", "6to4", "RFC 3056", None),
	("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", True),
	("3fff::/20", "Documentation", "RFC 9637", False),
	("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", False),
	("fc00::/7", "Unique-Local", "RFC 4193, RFC 8190", False),
	("fe80::/10", "Link-Local Unicast", "RFC 4291", False),
))  # fmt: skip
"""Every row of the IANA IPv6 Special-Purpose Address Registry."""

MULTICAST_V4 = ipaddress.IPv4Network("224.0.0.0/4")
"""IPv4 multicast (IANA IPv4 Multicast Address Space Registry, RFC 5771)."""

GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")
"""IPv6 global unicast (IANA Internet Protocol Version 6 Address Space, RFC 4291)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
	"""A cloud metadata or host-service address.

	Args:
		address: The address.
		what: Whose endpoint it is, and what it serves.
	"""

	address: ipaddress.IPv4Address | ipaddress.IPv6Address
	what: str


METADATA = tuple(Endpoint(ipaddress.ip_address(a), w) for a, w in (
	("169.254.169.254", "instance metadata (AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack)"),
	("fd00:ec2::254", "AWS instance metadata (IPv6)"),
	("169.254.170.2", "AWS ECS task metadata and credentials"),
	("169.254.170.23", "AWS EKS Pod Identity credentials"),
	("fd00:ec2::23", "AWS EKS Pod Identity credentials (IPv6)"),
	("169.254.169.253", "AWS VPC DNS resolver"),
	("fd00:ec2::253", "AWS VPC DNS resolver (IPv6)"),
	("169.254.169.123", "AWS Time Sync"),
	("fd00:ec2::123", "AWS Time Sync (IPv6)"),
	("fd20:ce::254", "GCP metadata server (IPv6)"),
	("168.63.129.16", "Azure WireServer and host services"),
	("192.0.0.192", "Oracle Cloud instance metadata"),
	("fd00:c1::a9fe:a9fe", "Oracle Cloud instance metadata (IPv6)"),
	("100.100.100.200", "Alibaba Cloud instance metadata"),
	("169.254.0.23", "Tencent Cloud instance metadata"),
))  # fmt: skip
"""Cloud metadata and host-service endpoints, refused unless allowed by their exact address."""

METADATA_NAMES = frozenset({
	"metadata.google.internal",
	"metadata.goog",
	"metadata.tencentyun.com",
	"instance-data",
	"instance-data.ec2.internal",
})  # fmt: skip
"""Host names of metadata services, refused whatever they resolve to."""
