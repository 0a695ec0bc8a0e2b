"""The SSRF guard: the IANA-registry refused set, every spelling, every transition form."""

import ipaddress
import socket
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.integrations._iana import IPV4_SPECIAL, IPV6_SPECIAL, METADATA, Row
from openmolt_core.integrations._ssrf import (
	InternalHosts,
	SsrfGuard,
	embedded_ipv4,
	is_public_address,
	parse_ip,
	refusal,
)

pytestmark = pytest.mark.anyio

V4_REFUSED = [r for r in IPV4_SPECIAL if r.reachable is not True]
V4_REACHABLE = [r for r in IPV4_SPECIAL if r.reachable is True]
# Rows the guard decides by unwrapping (their own "N/A" or "True" says nothing about the inside).
_UNWRAPPED = {"::ffff:0:0/96", "64:ff9b::/96", "2002::/16", "2001::/32"}
V6_REFUSED = [r for r in IPV6_SPECIAL if r.reachable is not True and str(r.block) not in _UNWRAPPED]
V6_REACHABLE = [r for r in IPV6_SPECIAL if r.reachable is True and str(r.block) not in _UNWRAPPED]
PUBLIC_V4 = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "151.101.1.69"]


def _inside(row: Row, data: st.DataObject) -> Any:
	"""An address of a row's block that no more specific row claims."""
	block = row.block
	rows = IPV4_SPECIAL if block.version == 4 else IPV6_SPECIAL
	offset = data.draw(st.integers(0, block.num_addresses - 1))
	for k in range(64):
		step = block.num_addresses // 67 + 0x9E3779B97F4A7C15
		address = block[(offset + k * step) % block.num_addresses]
		best = max((r for r in rows if address in r.block), key=lambda r: r.block.prefixlen)
		if best is row:
			return address
	pytest.skip("no address left in this block")  # pragma: no cover


def _spellings(address: ipaddress.IPv4Address) -> list[str]:
	"""Every way getaddrinfo (inet_aton) reads this IPv4 address."""
	n = int(address)
	a, b, c, d = address.packed
	return [
		str(address),
		str(n),
		hex(n),
		f"0{n:o}",
		f"{a}.{(b << 16) | (c << 8) | d}",
		f"{a}.{b}.{(c << 8) | d}",
		f"{hex(a)}.{hex(b)}.{hex(c)}.{hex(d)}",
		f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
		f"{a}.{b}.{c}.{d}.",
	]


def _wrapped(v4: ipaddress.IPv4Address, prefix: str = "2606:4700:0:1") -> list[str]:
	"""Every IPv6 transition form carrying an IPv4 address."""
	n = int(v4)
	hi, lo = n >> 16, n & 0xFFFF
	return [
		f"::ffff:{v4}",
		f"::ffff:{hi:x}:{lo:x}",
		f"::ffff:0:{v4}",
		f"::{v4}",
		f"64:ff9b::{v4}",
		f"64:ff9b::{hi:x}:{lo:x}",
		f"2002:{hi:x}:{lo:x}::1",
		f"2002:{hi:x}:{lo:x}:1:2:3:4:5",
		f"2001:0:{hi:x}:{lo:x}:0:0:abcd:1234",  # Teredo server
		f"2001:0:4136:e378:8000:63bf:{(~hi) & 0xFFFF:x}:{(~lo) & 0xFFFF:x}",  # Teredo client
		f"{prefix}::5efe:{v4}",
		f"{prefix}:0:5efe:{hi:x}:{lo:x}",
		f"{prefix}:200:5efe:{v4}",
		f"{prefix}:100:5efe:{v4}",
		f"{prefix}:300:5efe:{v4}",
	]


@pytest.mark.parametrize("row", V4_REFUSED, ids=lambda r: str(r.block))
@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_refused_ipv4_block_in_every_spelling(row: Row, data: st.DataObject) -> None:
	"""An address of a non-reachable IANA IPv4 block is refused however it is written."""
	address = _inside(row, data)
	for spelling in _spellings(address):
		assert parse_ip(spelling) == address, spelling
		assert not is_public_address(spelling), spelling


@pytest.mark.parametrize("row", V4_REFUSED, ids=lambda r: str(r.block))
@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_refused_ipv4_block_in_every_ipv6_wrapping(row: Row, data: st.DataObject) -> None:
	"""Mapped, translated, compatible, NAT64, 6to4, Teredo and ISATAP forms are unwrapped."""
	address = _inside(row, data)
	for form in _wrapped(address):
		parsed = ipaddress.IPv6Address(form)
		if int(parsed) > 1:  # "::" and "::1" are the unspecified and loopback addresses
			assert address in embedded_ipv4(parsed), form
		assert refusal(parsed) is not None, form


@pytest.mark.parametrize("row", V6_REFUSED, ids=lambda r: str(r.block))
@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_refused_ipv6_block(row: Row, data: st.DataObject) -> None:
	"""An address of a non-reachable IANA IPv6 block is refused, with a scope id or brackets."""
	address = _inside(row, data)
	for spelling in (str(address), f"[{address}]", f"{address}%eth0", address.exploded):
		assert not is_public_address(spelling), spelling


@pytest.mark.parametrize("row", V4_REACHABLE + V6_REACHABLE, ids=lambda r: str(r.block))
def test_globally_reachable_rows_are_allowed(row: Row) -> None:
	"""A row the registry marks globally reachable (anycast services, AS112, AMT) passes."""
	address = row.block[0] if row.block.num_addresses == 1 else row.block[1]
	assert refusal(address) is None, address


@pytest.mark.parametrize("public", PUBLIC_V4)
def test_wrapped_public_ipv4_passes(public: str) -> None:
	"""A transition form carrying a public address, in a public prefix, is public."""
	for form in _wrapped(ipaddress.IPv4Address(public)):
		if form.startswith("::") and not form.startswith("::ffff"):
			continue  # IPv4-compatible: deprecated and outside 2000::/3, always refused
		assert is_public_address(form), form


@given(st.integers(0, 2**32 - 1))
def test_ipv4_decision_matches_the_table(value: int) -> None:
	"""An IPv4 address is refused exactly when a non-reachable row, multicast or metadata has it."""
	address = ipaddress.IPv4Address(value)
	rows = [r for r in IPV4_SPECIAL if address in r.block]
	expected = (
		(bool(rows) and max(rows, key=lambda r: r.block.prefixlen).reachable is not True)
		or address in ipaddress.IPv4Network("224.0.0.0/4")
		or any(e.address == address for e in METADATA)
	)
	assert (refusal(address) is not None) is expected


@given(st.integers(0, 2**128 - 1))
def test_ipv6_outside_global_unicast_is_refused(value: int) -> None:
	"""No IPv6 address outside 2000::/3 passes unless it only wraps a public IPv4 address."""
	address = ipaddress.IPv6Address(value)
	if address in ipaddress.IPv6Network("2000::/3"):
		return
	wraps = any(
		address in ipaddress.IPv6Network(n)
		for n in ("::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96")
	)
	if refusal(address) is None:
		assert wraps, address


@pytest.mark.parametrize("endpoint", METADATA, ids=lambda e: str(e.address))
def test_every_metadata_endpoint_is_refused(endpoint: Any) -> None:
	"""AWS, GCP, Azure, Oracle, Alibaba and Tencent metadata addresses are refused."""
	why = refusal(endpoint.address)
	assert why is not None and "metadata" in why


@pytest.mark.parametrize("spelling", _spellings(ipaddress.IPv4Address("168.63.129.16")))
async def test_azure_wireserver_in_every_spelling_and_through_dns(spelling: str) -> None:
	"""168.63.129.16 sits in public space and is refused only as a listed endpoint."""
	with pytest.raises(ToolError, match="Azure"):
		await SsrfGuard().check(spelling, 80)

	async def resolver(host: str, port: int) -> list[str]:
		return ["93.184.216.34", spelling]

	with pytest.raises(ToolError, match="Azure"):
		await SsrfGuard(resolver=resolver).check("wire.example", 80)
	for form in _wrapped(ipaddress.IPv4Address("168.63.129.16")):
		assert not is_public_address(form)


def test_oracle_metadata_and_isatap_from_the_report() -> None:
	"""The report's misses: 192.0.0.192 and IPv4 inside ISATAP forms."""
	for text in ("192.0.0.192", "::5efe:127.0.0.1", "::200:5efe:169.254.169.254", "2001:db8::"):
		assert not is_public_address(text), text


@pytest.mark.parametrize(
	"name", ["metadata.google.internal", "METADATA.GOOGLE.INTERNAL.", "metadata.goog"]
)
async def test_metadata_names_are_refused_whatever_they_resolve_to(name: str) -> None:
	"""A metadata host name is refused before resolution."""

	async def resolver(host: str, port: int) -> list[str]:
		raise AssertionError("must not resolve")

	with pytest.raises(ToolError, match="metadata"):
		await SsrfGuard(resolver=resolver).check(name, 80)


async def test_every_dns_answer_is_checked_and_the_first_is_pinned() -> None:
	"""One private answer among public ones refuses the host; else the first answer is used."""

	async def mixed(host: str, port: int) -> list[str]:
		return ["8.8.8.8", "::ffff:10.0.0.1"]

	with pytest.raises(ToolError, match=r"10\.0\.0\.1"):
		await SsrfGuard(resolver=mixed).check("rebind.example", 443)

	calls: list[tuple[str, int]] = []

	async def public(host: str, port: int) -> list[str]:
		calls.append((host, port))
		return ["2606:4700:4700::1111", "1.1.1.1"]

	guard = SsrfGuard(resolver=public)
	pinned = await guard(httpx.Request("GET", "https://api.example.org/x?a=1"))
	assert calls == [("api.example.org", 443)]
	assert str(pinned.url) == "https://[2606:4700:4700::1111]/x?a=1"
	assert pinned.headers["host"] == "api.example.org"
	assert pinned.extensions["sni_hostname"] == "api.example.org"

	async def odd(host: str, port: int) -> list[str]:
		return ["not-an-address"]

	with pytest.raises(ToolError, match="resolve"):
		await SsrfGuard(resolver=odd).check("odd.example", 80)


async def test_the_real_resolver_reads_literals_like_the_guard() -> None:
	"""getaddrinfo reads the odd spellings as the same address parse_ip finds."""
	for spelling in _spellings(ipaddress.IPv4Address("127.0.0.1"))[:8]:
		answers = socket.getaddrinfo(spelling, 80, type=socket.SOCK_STREAM)
		assert {a[4][0] for a in answers} == {str(parse_ip(spelling))}


async def test_urls_with_userinfo_or_other_schemes_are_refused() -> None:
	"""Only http(s) without user info is sent."""
	guard = SsrfGuard()
	for url in ("ftp://example.com/", "http://user:pw@example.com/", "file:///etc/passwd"):
		with pytest.raises(ToolError):
			await guard(httpx.Request("GET", url))


@pytest.mark.parametrize(
	"entry",
	["0.0.0.0/0", "::/0", "10.0.0.0/7", "0.0.0.0/1", "8.0.0.0/8", "2000::/3", "*", "*.com", "a b"],
)
def test_internal_hosts_never_mean_everything(entry: str) -> None:
	"""A network with public addresses, or a bare wildcard, is refused with the fix."""
	with pytest.raises(ConfigurationError, match="allowInternalHosts"):
		InternalHosts([entry])


async def test_internal_hosts_open_exactly_what_they_list() -> None:
	"""Listed names and networks pass; metadata stays refused unless listed by address."""

	async def resolver(host: str, port: int) -> list[str]:
		return {
			"gitlab.corp.example": ["10.1.2.3"],
			"ci.corp.example": ["10.9.9.9"],
			"other.example": ["10.1.2.3"],
			"imds.corp.example": ["169.254.169.254"],
		}[host]

	guard = SsrfGuard(
		internal=["gitlab.corp.example", "*.corp.example", "192.168.5.0/24", "fd12::/16"],
		resolver=resolver,
	)
	assert str(await guard.check("gitlab.corp.example", 443)) == "10.1.2.3"
	assert str(await guard.check("ci.corp.example", 443)) == "10.9.9.9"
	assert str(await guard.check("192.168.5.7", 80)) == "192.168.5.7"
	assert str(await guard.check("::ffff:192.168.5.7", 80)) == "::ffff:c0a8:507"
	assert str(await guard.check("fd12::1", 80)) == "fd12::1"
	for refused in ("other.example", "192.168.6.1", "127.0.0.1", "imds.corp.example"):
		with pytest.raises(ToolError, match="allowInternalHosts"):
			await guard.check(refused, 80)
	exact = SsrfGuard(internal=["169.254.0.0/16"], resolver=resolver)
	with pytest.raises(ToolError, match="metadata"):
		await exact.check("169.254.169.254", 80)
	assert str(await exact.check("169.254.10.1", 80)) == "169.254.10.1"
	listed = SsrfGuard(internal=["168.63.129.16"])
	assert str(await listed.check("168.63.129.16", 80)) == "168.63.129.16"
