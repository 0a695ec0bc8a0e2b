import json
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations._ssrf import SsrfGuard, is_public_address
from openmolt_core.integrations.http import RetryPolicy
from openmolt_core.integrations.http_request import http_request_integration
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

BLOCKED = [
	"127.0.0.1",
	"127.1.2.3",
	"10.0.0.1",
	"172.16.5.4",
	"192.168.1.1",
	"169.254.169.254",
	"100.100.100.200",
	"0.0.0.0",
	"224.0.0.1",
	"255.255.255.255",
	"::1",
	"::",
	"fe80::1",
	"fc00::1",
	"fd00:ec2::254",
	"ff02::1",
	"::ffff:127.0.0.1",
	"::ffff:169.254.169.254",
	"::127.0.0.1",
	"::ffff:7f00:1",
	"2002:7f00:1::1",
	"2002:a9fe:a9fe::",
	"64:ff9b::127.0.0.1",
	"64:ff9b::a9fe:a9fe",
	"64:ff9b:1::a00:1",
	"fe80::1%eth0",
	"::ffff:0:7f00:1",
	"::ffff:0:a9fe:a9fe",
	"::ffff:0:a00:1",
	"fec0::1",
	"feff:ffff::1",
]


@pytest.mark.parametrize("address", BLOCKED)
def test_non_public_addresses_in_every_spelling_are_refused(address: str) -> None:
	"""Loopback, private, link-local, metadata, unspecified, multicast and IPv6 wrappings are not public."""
	assert not is_public_address(address)


@pytest.mark.parametrize(
	"address",
	[
		"8.8.8.8",
		"1.1.1.1",
		"2606:4700:4700::1111",
		"::ffff:8.8.8.8",
		"64:ff9b::808:808",
		"::ffff:0:808:808",
	],
)
def test_public_addresses_are_allowed(address: str) -> None:
	"""Public IPv4 and IPv6 (also wrapped) addresses pass."""
	assert is_public_address(address)


def tool_and_context(
	handler: Any,
	*,
	resolver: Any = None,
	allow_internal_hosts: tuple[str, ...] = (),
	config: dict[str, Any] | None = None,
) -> tuple[Any, ToolContext, list[httpx.Request]]:
	seen: list[httpx.Request] = []

	def record(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return handler(request)

	client = httpx.AsyncClient(transport=httpx.MockTransport(record))
	spec = http_request_integration(allow_internal_hosts=allow_internal_hosts, resolver=resolver)
	ctx = ToolContext(
		agent="a",
		integration="httpRequest",
		config=config or {},
		http=lambda: client,
		files=FileStore(),
		extras={"retry_policy": RetryPolicy(sleep=lambda s: anyio.lowlevel.checkpoint())},
	)
	return spec.tools[0], ctx, seen


@pytest.mark.parametrize(
	"url",
	[
		"http://127.0.0.1/",
		"http://2130706433/",
		"http://0x7f.1/",
		"http://127.1/",
		"http://017700000001/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::1]:8080/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://0/",
	],
)
async def test_odd_spellings_are_refused_after_real_resolution(url: str) -> None:
	"""getaddrinfo's odd IPv4 forms and IPv6 wrappings resolve to blocked addresses: refused, nothing sent."""
	tool, ctx, seen = tool_and_context(lambda r: httpx.Response(200))
	with pytest.raises(ToolError, match=r"non-public|resolve"):
		await tool.execute({"url": url}, ctx)
	assert seen == []


async def test_dns_name_resolving_to_private_is_refused() -> None:
	"""A name whose DNS answer includes a private address is refused."""

	async def resolver(host: str, port: int) -> list[str]:
		return ["93.184.216.34", "10.0.0.5"]

	tool, ctx, seen = tool_and_context(lambda r: httpx.Response(200), resolver=resolver)
	with pytest.raises(ToolError, match=r"10\.0\.0\.5"):
		await tool.execute({"url": "https://rebind.example/"}, ctx)
	assert seen == []


async def test_connection_is_pinned_to_the_checked_address() -> None:
	"""The request goes to the checked IP, with Host and SNI keeping the name and no pooling."""

	async def resolver(host: str, port: int) -> list[str]:
		assert (host, port) == ("api.example.org", 443)
		return ["93.184.216.34"]

	tool, ctx, seen = tool_and_context(
		lambda r: httpx.Response(200, json={"hi": 1}), resolver=resolver
	)
	out = await tool.execute({"url": "https://api.example.org/x?a=1", "query": {"b": [1, 2]}}, ctx)
	assert out["status"] == 200 and out["body"] == {"hi": 1}
	request = seen[0]
	assert request.url.host == "93.184.216.34"
	assert str(request.url) == "https://93.184.216.34/x?a=1&b=1&b=2"
	assert request.headers["host"] == "api.example.org"
	assert request.extensions["sni_hostname"] == "api.example.org"
	assert request.headers["connection"] == "close"


async def test_each_redirect_is_checked_again() -> None:
	"""A public site redirecting to the metadata address is refused at the redirect."""

	async def resolver(host: str, port: int) -> list[str]:
		return {"public.example": ["93.184.216.34"], "internal.example": ["169.254.169.254"]}[host]

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(
			302, headers={"Location": "http://internal.example/latest/meta-data/"}
		)

	tool, ctx, seen = tool_and_context(handler, resolver=resolver)
	with pytest.raises(ToolError, match=r"169\.254\.169\.254"):
		await tool.execute({"url": "http://public.example/"}, ctx)
	assert len(seen) == 1
	seen.clear()
	with pytest.raises(ToolError, match="non-public"):
		await tool.execute({"url": "http://public.example/", "followRedirects": True}, ctx)
	tool2, ctx2, seen2 = tool_and_context(
		lambda r: httpx.Response(302, headers={"Location": "http://[::ffff:7f00:1]/"}),
		resolver=resolver,
	)
	with pytest.raises(ToolError, match="non-public"):
		await tool2.execute({"url": "http://public.example/"}, ctx2)
	assert len(seen2) == 1


async def test_internal_hosts_allowed_explicitly() -> None:
	"""allow_internal_hosts, or the allowInternalHosts config, lets the listed hosts through."""
	for kwargs in (
		{"allow_internal_hosts": ("127.0.0.0/8",)},
		{"config": {"allowInternalHosts": ["127.0.0.1"]}},
	):
		tool, ctx, seen = tool_and_context(lambda r: httpx.Response(200, text="local"), **kwargs)
		out = await tool.execute({"url": "http://127.0.0.1:8080/x", "responseFormat": "text"}, ctx)
		assert out["body"] == "local" and seen[0].url.host == "127.0.0.1"
		with pytest.raises(ToolError, match="non-public"):
			await tool.execute({"url": "http://10.0.0.1/x"}, ctx)


def test_allow_private_is_refused_with_the_replacement() -> None:
	"""The old everything-or-nothing switch fails clearly and names allow_internal_hosts."""
	with pytest.raises(ConfigurationError, match="allow_internal_hosts"):
		http_request_integration(allow_private=True)


async def test_allow_private_config_is_refused_with_the_replacement() -> None:
	"""The old allowPrivate config is a tool error that names allowInternalHosts."""
	tool, ctx, seen = tool_and_context(lambda r: httpx.Response(200), config={"allowPrivate": True})
	with pytest.raises(ToolError, match="allowInternalHosts"):
		await tool.execute({"url": "http://127.0.0.1/"}, ctx)
	assert seen == []


async def test_body_formats_and_errors() -> None:
	"""form bodies are urlencoded; a non-2xx reply is a ToolError with the service message."""

	async def resolver(host: str, port: int) -> list[str]:
		return ["93.184.216.34"]

	def handler(request: httpx.Request) -> httpx.Response:
		if request.method == "POST":
			return httpx.Response(422, json={"errors": [{"message": "bad field"}]})
		return httpx.Response(
			200, content=b"\x00\x01", headers={"content-type": "application/octet-stream"}
		)

	tool, ctx, seen = tool_and_context(handler, resolver=resolver)
	with pytest.raises(ToolError, match="bad field") as info:
		await tool.execute(
			{
				"url": "https://x.example/f",
				"method": "POST",
				"body": {"a": {"b": 1}},
				"bodyFormat": "form",
			},
			ctx,
		)
	assert info.value.status_code == 422
	assert seen[0].content == b"a%5Bb%5D=1"
	out = await tool.execute({"url": "https://x.example/blob"}, ctx)
	assert out["body"]["file"].startswith("openmolt-file:") and out["body"]["size"] == 2


async def test_registered_by_default_through_the_entry_point() -> None:
	"""httpRequest is available without registering it, and refuses loopback through an agent."""
	model = ScriptedModel(
		[call_tool("httpRequest.request", url="http://127.0.0.1:9/"), finish(result="done")]
	)
	om = OpenMolt(
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
	)
	agent = om.create_agent(name="H", model=model, integrations=["httpRequest"])
	await agent.run("x")
	turns = [json.loads(m.content) for m in model.requests[-1].messages if m.role == "user"]
	last = turns[1]["results"][0]
	assert last["ok"] is False and "non-public" in last["error"]
	om.register_integration(
		"httpRequest", OpenMolt.HttpRequestIntegration(allow_internal_hosts=["127.0.0.1"])
	)
	assert om.plugins.integration("httpRequest").tools[0].handle == "request"


async def test_guard_refuses_other_schemes() -> None:
	"""Only http and https are sent."""
	guard = SsrfGuard()
	with pytest.raises(ToolError, match="only http"):
		await guard(httpx.Request("GET", "ftp://example.com/"))
