"""The HTTP engine and httpRequest against hostile input: redirects, origins, headers, bodies."""

import gzip
import json
import os
import tracemalloc
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations import (
	ApiSetup,
	Credential,
	CustomCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations._paths import MAX_DEPTH, MAX_NAME_BYTES, MAX_PATH_BYTES
from openmolt_core.integrations._sandbox import Sandbox, read_capped
from openmolt_core.integrations.credentials import make_auth
from openmolt_core.integrations.filesystem import file_system_integration
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.integrations.http_request import http_request_integration
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

SECRET = "sk-live-abcdef123456"
NAMES = {"api.example.com": "93.184.216.34", "cdn.example.net": "151.101.1.69"}


async def resolver(host: str, port: int) -> list[str]:
	return [NAMES.get(host, "10.0.0.5" if host.endswith(".internal") else "8.8.8.8")]


async def no_sleep(seconds: float) -> None:
	await anyio.lowlevel.checkpoint()


def context(
	handler: Any,
	*,
	config: dict[str, Any] | None = None,
	auth: Any = None,
	integration_id: str = "svc",
) -> ToolContext:
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	config = config or {}
	return ToolContext(
		agent="a",
		integration=integration_id,
		config=config,
		http=lambda: client,
		auth=auth,
		redact=frozenset(v for v in config.values() if isinstance(v, str) and len(v) >= 6),
		files=FileStore(),
		extras={"retry_policy": RetryPolicy(sleep=no_sleep), "resolver": resolver},
	)


def spec(
	tool: HttpTool,
	*,
	credentials: list[Credential] | None = None,
	encoders: dict[str, Any] | None = None,
	**setup: Any,
) -> Integration:
	setup.setdefault("base_url", "https://api.example.com/v1")
	from openmolt_integrations._google import ENCODERS

	return Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(**setup),
		credential_setup=credentials or [],
		tools=[tool],
		encoders={**ENCODERS, **(encoders or {})},
	)


def recorder(first: httpx.Response | Any) -> tuple[Any, list[httpx.Request]]:
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if len(seen) == 1:
			return first(request) if callable(first) else first
		return httpx.Response(200, json={"second": True})

	return handler, seen


def http_request_tool() -> Any:
	return http_request_integration().tools[0]


# -- 2. every redirect hop is guarded ----------------------------------------------------------

INTERNAL_TARGETS = [
	"http://127.0.0.1/",
	"http://[::1]:8080/",
	"http://169.254.169.254/latest/meta-data/",
	"http://2130706433/",
	"http://[::ffff:a9fe:a9fe]/",
	"http://168.63.129.16/machine",
	"http://192.0.0.192/",
	"http://db.internal/",
	"http://metadata.google.internal/computeMetadata/v1/",
]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("target", INTERNAL_TARGETS)
async def test_engine_redirects_to_internal_addresses_are_refused(status: int, target: str) -> None:
	"""A tool without credentials never follows a redirect to loopback, private or metadata."""
	handler, seen = recorder(httpx.Response(status, headers={"Location": target}))
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	with pytest.raises(ToolError, match=r"non-public|metadata"):
		await execute_http_tool(tool, spec(tool), {}, context(handler))
	assert len(seen) == 1


async def test_without_credentials_redirects_are_guarded_too() -> None:
	"""A credentialed download that follows without credentials still cannot go inside."""
	handler, seen = recorder(httpx.Response(302, headers={"Location": "http://10.1.2.3/v.mp4"}))
	tool = HttpTool(
		handle="t", description="d", endpoint="/x", follow_redirects="without-credentials"
	)
	creds = [CustomCredential(type="custom", headers={"X-Api-Key": "{{ config.apiKey }}"})]
	integration = spec(tool, credentials=creds)
	config = {"apiKey": SECRET}
	auth = make_auth(integration, creds[0], config, on_token_refresh=None, http=lambda: None)  # type: ignore[arg-type,return-value]
	with pytest.raises(ToolError, match="non-public"):
		await execute_http_tool(tool, integration, {}, context(handler, config=config, auth=auth))
	assert len(seen) == 1


async def test_a_redirect_hop_goes_to_the_checked_address() -> None:
	"""A followed hop is pinned: the request goes to the resolved IP, Host keeps the name."""
	handler, seen = recorder(
		httpx.Response(302, headers={"Location": "https://cdn.example.net/file"})
	)
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	assert await execute_http_tool(tool, spec(tool), {}, context(handler)) == {"second": True}
	assert seen[1].url.host == "151.101.1.69"
	assert seen[1].headers["host"] == "cdn.example.net"
	assert seen[1].extensions["sni_hostname"] == "cdn.example.net"


async def test_self_hosted_redirects_need_allow_internal_hosts() -> None:
	"""A self-hosted service redirecting to itself on a private address needs the option."""

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path == "/api/x":
			return httpx.Response(302, headers={"Location": "/api/y"})
		return httpx.Response(200, json={"ok": 1})

	tool = HttpTool(handle="t", description="d", endpoint="/x")
	integration = spec(tool, base_url="{{ config.baseUrl }}/api")
	config: dict[str, Any] = {"baseUrl": "https://git.internal"}
	with pytest.raises(ToolError, match="allowInternalHosts"):
		await execute_http_tool(tool, integration, {}, context(handler, config=config))
	config["allowInternalHosts"] = ["git.internal"]
	assert await execute_http_tool(tool, integration, {}, context(handler, config=config)) == {
		"ok": 1
	}
	config["allowInternalHosts"] = ["0.0.0.0/0"]
	with pytest.raises(ToolError, match="never everything"):
		await execute_http_tool(tool, integration, {}, context(handler, config=config))


# -- 4, 5. what a hop to another origin carries -------------------------------------------------

SENT_HEADERS = {
	"X-Api-Key": SECRET,
	"Authorization": f"Bearer {SECRET}",
	"Cookie": f"s={SECRET}",
	"X-Custom-Token": SECRET,
	"Proxy-Authorization": SECRET,
	"Accept": "application/json",
}


@pytest.mark.parametrize(
	("url", "location"),
	[
		("https://api.example.com/a", "https://cdn.example.net/b"),
		("https://api.example.com/a", "http://api.example.com/b"),  # downgrade, same host
		("https://api.example.com/a", "https://api.example.com:8443/b"),
	],
)
async def test_cross_origin_and_downgrade_hops_keep_only_safe_headers(
	url: str, location: str
) -> None:
	"""Model-supplied credential headers never follow to another origin or over plain http."""
	handler, seen = recorder(httpx.Response(302, headers={"Location": location}))
	tool = http_request_tool()
	await tool.execute({"url": url, "headers": SENT_HEADERS}, context(handler))
	second = {k.lower() for k in seen[1].headers}
	assert second <= {"accept", "accept-encoding", "user-agent", "host", "connection"}
	assert seen[1].headers["accept"] == "application/json"
	assert SECRET not in str(seen[1].headers) and SECRET not in str(seen[1].url)


async def test_same_origin_hops_keep_the_headers() -> None:
	"""A redirect within the origin keeps what the caller sent."""
	handler, seen = recorder(httpx.Response(302, headers={"Location": "/b"}))
	await http_request_tool().execute(
		{"url": "https://api.example.com/a", "headers": {"X-Api-Key": "k"}}, context(handler)
	)
	assert seen[1].headers["x-api-key"] == "k" and seen[1].url.path == "/b"


@pytest.mark.parametrize("status", [307, 308])
async def test_a_body_is_never_resent_to_another_origin(status: int) -> None:
	"""A 307/308 of a request with a body (a config secret in it) to another origin is refused."""
	handler, seen = recorder(
		httpx.Response(status, headers={"Location": "https://cdn.example.net/"})
	)
	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/x",
		body={"token": "{{ config.apiKey }}"},
		follow_redirects="without-credentials",
	)
	with pytest.raises(ToolError, match="body") as info:
		await execute_http_tool(tool, spec(tool), {}, context(handler, config={"apiKey": SECRET}))
	assert len(seen) == 1 and SECRET not in str(info.value)
	handler, seen = recorder(
		httpx.Response(status, headers={"Location": "https://cdn.example.net/"})
	)
	with pytest.raises(ToolError, match="body"):
		await http_request_tool().execute(
			{"url": "https://api.example.com/", "method": "PUT", "body": {"k": SECRET}},
			context(handler),
		)
	assert len(seen) == 1


# -- 6. malformed redirect targets are the tool's own error -------------------------------------

BAD_LOCATIONS = [
	"data:text/plain,hello",
	"javascript:alert(1)",
	"ftp://files.example.com/x",
	"file:///etc/passwd",
	"http://user:pw@cdn.example.net/",
	"https://:pw@cdn.example.net/",
	"http://[::1",
	"http://cdn.example.net:99999/",
	"http:///nohost",
	"http://exa mple.com/",
	"http://xn--/",
	"gopher://x/",
]


@pytest.mark.parametrize("location", BAD_LOCATIONS)
async def test_malformed_or_unsupported_redirect_targets_are_tool_errors(location: str) -> None:
	"""data:, other schemes, user info and unparsable URLs end as a ToolError, nothing sent."""
	for run in ("engine", "httpRequest"):
		handler, seen = recorder(httpx.Response(302, headers={"Location": location}))
		with pytest.raises(ToolError):
			if run == "engine":
				tool = HttpTool(handle="t", description="d", endpoint="/x")
				await execute_http_tool(tool, spec(tool), {}, context(handler))
			else:
				await http_request_tool().execute(
					{"url": "https://api.example.com/"}, context(handler)
				)
		assert len(seen) == 1, (run, location)


@settings(
	max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=60))
async def test_any_redirect_target_is_followed_safely_or_refused(location: str) -> None:
	"""Whatever a service puts in Location, the result is a reply or a ToolError."""
	handler, seen = recorder(
		httpx.Response(302, headers=[(b"Location", location.encode("latin-1"))])
	)
	try:
		await http_request_tool().execute({"url": "https://api.example.com/a"}, context(handler))
	except ToolError:
		pass
	for request in seen[1:]:
		assert request.url.scheme in ("http", "https") and not request.url.userinfo


# -- 3. the model never chooses the origin -----------------------------------------------------

SCHEMES = ["https", "{{ input.s }}", "{{ config.scheme }}"]
USERINFO = ["", "{{ input.u }}@", "{{ config.user }}@"]
HOSTS = [
	"api.example.com",
	"{{ input.h }}",
	"{{ input.h }}.example.com",
	"api.{{ input.h | downcase }}.com",
	"{{ config.shop }}.myshopify.com",
	"{{ config.h | append: input.h }}",
]
PORTS = ["", ":{{ input.p }}", ":{{ config.port }}", ":8443"]
PATHS = ["", "/v1", "/{{ input.x }}", "?q={{ input.q }}"]


@settings(max_examples=200, deadline=None)
@given(
	st.sampled_from(SCHEMES),
	st.sampled_from(USERINFO),
	st.sampled_from(HOSTS),
	st.sampled_from(PORTS),
	st.sampled_from(PATHS),
	st.booleans(),
)
def test_a_template_whose_origin_uses_input_is_refused_at_registration(
	scheme: str, userinfo: str, host: str, port: str, path: str, as_endpoint: bool
) -> None:
	"""Input in the scheme, user info, host or port is refused; config there is fine."""
	template = f"{scheme}://{userinfo}{host}{port}{path}"
	origin = f"{scheme}://{userinfo}{host}{port}"
	if as_endpoint and not template.startswith("https"):
		return  # only a literal http(s):// endpoint is a whole URL
	fields = {"endpoint": template} if as_endpoint else {"endpoint": "/x", "base_url": template}
	tool = HttpTool(handle="t", description="d", **fields)
	if "input" in origin:
		with pytest.raises(ValueError, match="may not come from the model's input"):
			spec(tool)
	else:
		spec(tool)


@pytest.mark.parametrize(
	"template",
	[
		"{% assign h = input.h %}https://{{ h }}/v1",
		"{% if input.a %}https://evil.example{% else %}https://api.example.com{% endif %}/x",
		"https://{{ ['input'].h }}/v1",
		"{% capture h %}{{ input.h }}{% endcapture %}https://{{ h }}/",
		"{{ input.url }}",
		"https://api.example.com{{ input.port }}/x",
		"https://{%- if config.x -%}{{ input.h }}{%- endif -%}/x",
		"{% for h in input.hosts %}https://{{ h }}{% endfor %}/x",
	],
)
def test_origin_tricks_are_refused(template: str) -> None:
	"""Tags, captures, computed names and branches on input cannot shape the origin."""
	tool = HttpTool(handle="t", description="d", endpoint="/x", base_url=template)
	with pytest.raises(ValueError, match="may not come from the model's input"):
		spec(tool)


async def test_an_endpoint_cannot_become_an_absolute_url() -> None:
	"""A relative endpoint rendering to 'http://evil' stays a path of the configured host."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", endpoint="{{ input.a }}://{{ input.b }}/x")
	await execute_http_tool(tool, spec(tool), {"a": "http", "b": "evil.example"}, context(handler))
	assert seen[0].url.host == "api.example.com"


async def test_config_chosen_hosts_stay_allowed_and_are_not_guarded() -> None:
	"""A shop domain or self-hosted base URL from config is the application's choice."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", endpoint="/orders/{{ input.id }}")
	integration = spec(tool, base_url="https://{{ config.shop }}.myshopify.com/admin")
	await execute_http_tool(tool, integration, {"id": "1"}, context(handler, config={"shop": "s"}))
	assert str(seen[0].url) == "https://s.myshopify.com/admin/orders/1"


@pytest.mark.parametrize("where", ["tool", "api_setup"])
@pytest.mark.parametrize(
	("value", "sent"),
	[
		("acct-1", "https://api.example.com/v1/acct-1/x?k=fixed"),
		("a b/c?d#e", "https://api.example.com/v1/a%20b%2Fc%3Fd%23e/x?k=fixed"),
		("../../admin?steal=1#", None),
		("..", None),
	],
)
async def test_input_in_a_base_url_path_is_one_encoded_segment(
	where: str, value: str, sent: str | None
) -> None:
	"""Input after a fixed origin in a base URL is encoded like an endpoint value, never raw."""
	handler, seen = recorder(httpx.Response(200, json={}))
	base = "https://api.example.com/v1/{{ input.acct }}"
	tool = HttpTool(
		handle="t",
		description="d",
		endpoint="/x?k=fixed",
		**({"base_url": base} if where == "tool" else {}),
	)
	integration = spec(tool, **({"base_url": base} if where == "api_setup" else {}))
	if sent is None:
		with pytest.raises(ToolError, match=r"'\.\.'"):
			await execute_http_tool(tool, integration, {"acct": value}, context(handler))
		assert seen == []
	else:
		await execute_http_tool(tool, integration, {"acct": value}, context(handler))
		assert str(seen[0].url) == sent


async def test_a_base_url_query_from_input_cannot_add_parameters() -> None:
	"""A query written in a base URL encodes its input values: no '&' adds a parameter."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(
		handle="t",
		description="d",
		endpoint="",
		base_url="https://api.example.com/v1/items?q={{ input.q }}&account={{ config.acct }}",
	)
	ctx = context(handler, config={"acct": "mine"})
	await execute_http_tool(tool, spec(tool), {"q": "x&account=theirs"}, ctx)
	assert seen[0].url.params.get_list("account") == ["mine"]
	assert seen[0].url.params["q"] == "x&account=theirs"


async def test_config_in_a_base_url_path_keeps_its_slashes() -> None:
	"""A path prefix from config (a self-hosted API under /gitlab/api/v4) is not encoded."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", endpoint="/projects/{{ input.id }}")
	integration = spec(tool, base_url="https://{{ config.host }}/{{ config.prefix }}")
	ctx = context(handler, config={"host": "api.example.com", "prefix": "gitlab/api/v4"})
	await execute_http_tool(tool, integration, {"id": "g/p"}, ctx)
	assert str(seen[0].url) == "https://api.example.com/gitlab/api/v4/projects/g%2Fp"


def origin_tool(origins: list[str]) -> HttpTool:
	return HttpTool(
		handle="upload",
		description="d",
		method="PUT",
		base_url="{{ input.url }}",
		endpoint="",
		input_origins=origins,
	)


@pytest.mark.parametrize(
	("origins", "url", "ok"),
	[
		(["https://files.slack.com"], "https://files.slack.com/upload/v1/abc", True),
		(["https://files.slack.com"], "https://evil.example/upload", False),
		(["https://files.slack.com"], "https://files.slack.com.evil.example/", False),
		(["https://files.slack.com"], "https://files.slack.com@evil.example/", False),
		(["https://files.slack.com"], "https://x@files.slack.com/", False),
		(["https://files.slack.com"], "http://files.slack.com/", False),
		(["https://files.slack.com"], "https://files.slack.com:8443/", False),
		(["https://*.tiktokapis.com"], "https://open-upload.tiktokapis.com/v", True),
		(["https://*.tiktokapis.com"], "https://a.b.tiktokapis.com/v", True),
		(["https://*.tiktokapis.com"], "https://tiktokapis.com/v", False),
		(["https://*.tiktokapis.com"], "https://eviltiktokapis.com/v", False),
		(["https://*.{{ config.zone }}"], "https://b.zone.example/v", True),
	],
)
async def test_input_chosen_hosts_must_be_listed(origins: list[str], url: str, ok: bool) -> None:
	"""A host from the input goes only to an input_origins origin, and through the guard."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = origin_tool(origins)
	ctx = context(handler, config={"zone": "zone.example"})
	if ok:
		await execute_http_tool(tool, spec(tool), {"url": url}, ctx)
		assert seen[0].headers["host"] == httpx.URL(url).host
		assert seen[0].url.host == "8.8.8.8"  # pinned to the address the guard checked
	else:
		with pytest.raises(ToolError):
			await execute_http_tool(tool, spec(tool), {"url": url}, ctx)
		assert seen == []


async def test_input_chosen_hosts_resolving_inside_are_refused() -> None:
	"""A listed origin whose name resolves to a private address is still refused."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = origin_tool(["https://*.internal"])
	with pytest.raises(ToolError, match="non-public"):
		await execute_http_tool(tool, spec(tool), {"url": "https://db.internal/"}, context(handler))
	assert seen == []


def test_input_origins_may_not_use_input() -> None:
	"""The allowed origins are the integration's, never the model's."""
	with pytest.raises(ValueError, match="config only"):
		spec(origin_tool(["https://{{ input.h }}"]))


# -- 7. control characters in every header path ------------------------------------------------

CONTROLS = [chr(c) for c in [*range(0x00, 0x20), 0x7F]]


def header_paths(bad: str) -> list[tuple[str, Any]]:
	"""(name, coroutine factory) for each way a header gets set."""
	value = f"a{bad}b"

	def tool_header() -> Any:
		tool = HttpTool(
			handle="t", description="d", endpoint="/x", headers={"X-V": "{{ input.v }}"}
		)
		return lambda ctx: execute_http_tool(tool, spec(tool), {"v": value}, ctx)

	def encoded() -> Any:
		# A header an integration's encoder computes from the body (S3's x-amz-meta-*).
		from openmolt_core.integrations.extensions import EncodedBody

		async def meta(body: Any, request: Any) -> EncodedBody:
			return EncodedBody(b"x", "text/plain", {f"x-m-{k}": v for k, v in body.items()})

		tool = HttpTool(
			handle="t",
			description="d",
			method="POST",
			endpoint="/x",
			request_format="meta",
			body={"k": "{{ input.m }}"},
		)
		integration = spec(tool, encoders={"meta": meta})
		return lambda ctx: execute_http_tool(tool, integration, {"m": value}, ctx)

	def request_header() -> Any:
		return lambda ctx: http_request_tool().execute(
			{"url": "https://api.example.com/", "headers": {"X-V": value}}, ctx
		)

	def credential() -> Any:
		tool = HttpTool(handle="t", description="d", endpoint="/x")
		creds = [CustomCredential(type="custom", headers={"X-Key": "{{ config.key }}"})]
		integration = spec(tool, credentials=creds)
		config = {"key": f"secret{value}"}
		auth = make_auth(integration, creds[0], config, on_token_refresh=None, http=lambda: None)  # type: ignore[arg-type,return-value]
		return lambda ctx: execute_http_tool(
			tool, integration, {}, _with(ctx, auth=auth, config=config)
		)

	return [
		("tool header", tool_header()),
		("encoder header", encoded()),
		("httpRequest header", request_header()),
		("credential header", credential()),
	]


def _with(ctx: ToolContext, **changes: Any) -> ToolContext:
	from dataclasses import replace

	return replace(ctx, **changes)


@pytest.mark.parametrize("bad", CONTROLS, ids=lambda c: f"0x{ord(c):02x}")
async def test_control_characters_are_refused_on_every_header_path(bad: str) -> None:
	"""VT, FF, ESC, DEL and every other control character never reach the transport."""
	for name, run in header_paths(bad):
		handler, seen = recorder(httpx.Response(200, json={}))
		with pytest.raises(ToolError, match=r"control character|header") as info:
			await run(context(handler))
		assert seen == [], name
		assert "secret" not in info.value.message, name


@pytest.mark.parametrize("bad", ["\x0b", "\x1b", "\x7f", "\r\nX-Evil: 1", " tok\t"])
async def test_a_refreshed_oauth2_token_with_control_characters_is_refused(bad: str) -> None:
	"""An access token from the token endpoint is checked like any header value."""
	sent: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path == "/token":
			return httpx.Response(200, json={"access_token": f"new{bad}token", "expires_in": 3600})
		sent.append(request)
		return httpx.Response(200, json={})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	creds = [OAuth2Credential(type="oauth2", token_url="https://api.example.com/token")]
	integration = spec(tool, credentials=creds)
	config = {"refreshToken": "refresh-123456", "clientId": "c"}
	auth = make_auth(integration, creds[0], config, on_token_refresh=None, http=lambda: client)
	ctx = _with(context(handler, config=config), auth=auth, http=lambda: client)
	with pytest.raises(ToolError, match="control character"):
		await execute_http_tool(tool, integration, {}, ctx)
	assert sent == []


CLIENT_HEADERS = [
	("Content-Length", "1"),
	("Transfer-Encoding", "chunked"),
	("transfer-encoding", "identity"),
	("Connection", "keep-alive, Upgrade"),
	("Upgrade", "websocket"),
	("Host", "internal.example"),
	("TE", "trailers"),
	("Keep-Alive", "timeout=5"),
	("Trailer", "X-Sig"),
	("Proxy-Connection", "keep-alive"),
]


@pytest.mark.parametrize(("name", "value"), CLIENT_HEADERS)
async def test_http_request_refuses_headers_the_client_sets(name: str, value: str) -> None:
	"""The model cannot set how a body is framed, the connection or the Host (no smuggling)."""
	handler, seen = recorder(httpx.Response(200, json={}))
	with pytest.raises(ToolError, match=rf"{name}.*set by the HTTP client") as info:
		await http_request_tool().execute(
			{
				"url": "https://api.example.com/",
				"method": "POST",
				"headers": {name: value},
				"body": {"a": "GET /admin HTTP/1.1"},
			},
			context(handler),
		)
	assert value not in info.value.message
	assert seen == []


@pytest.mark.parametrize(("name", "value"), CLIENT_HEADERS)
async def test_a_tool_header_the_client_sets_is_refused(name: str, value: str) -> None:
	"""An HTTP tool (an imported one too) cannot send a framing, connection or Host header."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(
		handle="t", description="d", method="POST", endpoint="/x", headers={name: "{{ input.v }}"}
	)
	with pytest.raises(ToolError, match=rf"{name}.*set by the HTTP client"):
		await execute_http_tool(tool, spec(tool), {"v": value}, context(handler))
	assert seen == []


# -- 8. text the encoders cannot take, stripped credentials, empty query values --------------


@pytest.mark.parametrize(
	("fields", "where"),
	[
		({"endpoint": "/x/{{ input.v }}"}, "input.v"),
		({"endpoint": "/x", "query_params": {"q": "{{ input.v }}"}}, "input.v"),
		({"endpoint": "/x", "method": "POST", "body": {"a": "{{ input.v }}"}}, "input.v"),
		({"endpoint": "/x", "headers": {"X-V": "{{ input.v }}"}}, "input.v"),
	],
)
async def test_lone_surrogates_are_a_clear_error_in_every_slot(
	fields: dict[str, Any], where: str
) -> None:
	"""A lone surrogate in a path, query, body or header value names the field; nothing crashes."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", **fields)
	with pytest.raises(ToolError, match=rf"{where}.*Unicode"):
		await execute_http_tool(tool, spec(tool), {"v": "a\ud800b"}, context(handler))
	with pytest.raises(ToolError, match="Unicode"):
		await http_request_tool().execute(
			{"url": "https://api.example.com/", "query": {"q": "\udfff"}}, context(handler)
		)
	assert seen == []


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=20))
async def test_any_path_value_is_encoded_or_refused_without_echo(value: str) -> None:
	"""Any text in a path value is one encoded segment, or refused without repeating it."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", endpoint="/items/{{ input.v }}")
	try:
		await execute_http_tool(tool, spec(tool), {"v": value}, context(handler))
	except ToolError as exc:
		assert len(value) < 3 or value not in exc.message
		return
	assert seen[0].url.host == "api.example.com"
	assert seen[0].url.raw_path.count(b"/") == 3


async def test_credentials_with_surrounding_whitespace_are_sent_stripped() -> None:
	"""A key pasted with spaces or a newline is sent as the key, in headers and queries."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	creds = [
		CustomCredential(
			type="custom",
			headers={"Authorization": "Bearer {{ config.key }}"},
			query_params={"key": "{{ config.key }}"},
		)
	]
	integration = spec(tool, credentials=creds)
	config = {"key": "  abc123xyz \n"}
	auth = make_auth(integration, creds[0], config, on_token_refresh=None, http=lambda: None)  # type: ignore[arg-type,return-value]
	await execute_http_tool(
		tool, integration, {}, _with(context(handler, config=config), auth=auth)
	)
	assert seen[0].headers["authorization"] == "Bearer abc123xyz"
	assert seen[0].url.params["key"] == "abc123xyz"


async def test_an_empty_query_value_inside_an_endpoint_is_sent() -> None:
	"""'?cursor=' with an empty value is a query, not a path segment."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", endpoint="/list?cursor={{ input.c }}&n=1")
	await execute_http_tool(tool, spec(tool), {"c": ""}, context(handler))
	assert seen[0].url.raw_path == b"/v1/list?cursor=&n=1"
	await execute_http_tool(tool, spec(tool), {"c": "a&b=c"}, context(handler))
	assert seen[1].url.params["cursor"] == "a&b=c"


@pytest.mark.parametrize(
	("url", "disposition"),
	[
		("https://api.example.com/v1/dl/..%252F..%252Fetc%252Fpasswd", None),
		("https://api.example.com/v1/dl/..%255C..%255Cwin.ini", None),
		("https://api.example.com/v1/dl/x", 'attachment; filename=".."'),
		("https://api.example.com/v1/dl/x", "attachment; filename*=UTF-8''..%2F..%2Fx"),
		("https://api.example.com/v1/dl/x", 'attachment; filename="a\r\nb"'),
	],
)
async def test_a_downloaded_file_name_carries_no_path(url: str, disposition: str | None) -> None:
	"""The name a download is saved under has no slash, backslash, control character or dot name."""
	headers = {"content-type": "application/octet-stream"}
	if disposition:
		headers["content-disposition"] = disposition

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path.endswith("/start"):
			return httpx.Response(302, headers={"Location": url})
		return httpx.Response(200, content=b"data", headers=headers)

	tool = HttpTool(handle="t", description="d", endpoint="/start", response_format="binary")
	out = await execute_http_tool(tool, spec(tool), {}, context(handler))
	name = out["name"]
	assert name not in ("", ".", "..")
	assert not any(c in name for c in "/\\\r\n")


async def test_a_multipart_file_name_carries_no_path() -> None:
	"""A stored name with path separators is sent as a plain file name in a multipart part."""
	from openmolt_core.files import StoredFile
	from openmolt_core.integrations._encode import multipart_body

	for name, sent in [
		("../../etc/passwd", ".._.._etc_passwd"),
		("..\\..\\boot.ini", ".._.._boot.ini"),
		("..", "file"),
		("a\x00b.txt", "ab.txt"),
	]:
		body = multipart_body([], [("f", StoredFile(b"x", "text/plain", name))])
		assert f'filename="{sent}"'.encode() in (body.content or b""), name


# -- 15. nesting depth -------------------------------------------------------------------------


async def test_deep_xml_and_json_are_tool_errors_and_the_run_goes_on() -> None:
	"""A reply nested 5,000 deep is refused as a tool error; the agent still finishes."""
	deep_xml = b"<a>" * 5000 + b"</a>" * 5000
	deep_json = b"[" * 5000 + b"]" * 5000

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path.endswith("xml"):
			return httpx.Response(200, content=deep_xml, headers={"content-type": "text/xml"})
		return httpx.Response(200, content=deep_json, headers={"content-type": "application/json"})

	integration = Integration(
		name="Deep",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		tools=[
			HttpTool(handle="xml", description="d", endpoint="/xml", response_format="xml"),
			HttpTool(handle="json", description="d", endpoint="/json"),
		],
	)
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
	)
	om.register_integration("deep", integration)
	model = ScriptedModel([call_tool("deep.xml"), call_tool("deep.json"), finish(result="done")])
	agent = om.create_agent(name="D", model=model, integrations=["deep"])
	result = await agent.run("x")
	assert result.output == {"result": "done"}
	errors = [
		json.loads(m.content)["results"][0]
		for m in model.requests[-1].messages
		if m.role == "user" and '"results"' in m.content
	]
	assert [e["ok"] for e in errors] == [False, False]
	assert all("nested more than" in e["error"] for e in errors)


async def test_nesting_within_the_limit_still_decodes() -> None:
	"""Ordinary nesting (100 levels, brackets inside strings) decodes as before."""
	body = json.dumps({"s": "[[[[{{{{" * 100, "v": json.loads("[" * 99 + "]" * 99)})

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(
			200, content=body.encode(), headers={"content-type": "application/json"}
		)

	tool = HttpTool(handle="t", description="d", endpoint="/x")
	out = await execute_http_tool(tool, spec(tool), {}, context(handler))
	assert out["s"].startswith("[[[[{{{{")


# -- 16. decoded size is capped while streaming ------------------------------------------------


class Chunks(httpx.AsyncByteStream):
	def __init__(self, data: bytes, size: int = 65536) -> None:
		self.data, self.size = data, size

	async def __aiter__(self) -> AsyncIterator[bytes]:
		for at in range(0, len(self.data), self.size):
			yield self.data[at : at + self.size]


def bomb(encoding: str, decoded: int) -> bytes:
	"""A small body that decompresses to ``decoded`` zero bytes (made without holding them)."""
	packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | (16 if encoding == "gzip" else 0))
	block = bytes(1024 * 1024)
	parts = [packer.compress(block) for _ in range(decoded // len(block))]
	return b"".join(parts) + packer.flush()


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compression_bomb_stops_at_the_cap_without_inflating(encoding: str) -> None:
	"""64 MB of zeros in a 64 KB body: refused after at most the cap, memory stays small."""
	payload = bomb(encoding, 64 * 1024 * 1024)

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(
			200,
			headers={"content-encoding": encoding, "content-type": "application/json"},
			stream=Chunks(payload),
		)

	tool = HttpTool(handle="t", description="d", endpoint="/x", max_response_bytes=2 * 1024 * 1024)
	tracemalloc.start()
	try:
		with pytest.raises(ToolError, match="larger than 2097152 bytes"):
			await execute_http_tool(tool, spec(tool), {}, context(handler))
		_, peak = tracemalloc.get_traced_memory()
	finally:
		tracemalloc.stop()
	assert peak < 16 * 1024 * 1024


async def test_compressed_replies_within_the_cap_decode() -> None:
	"""gzip, zlib deflate, raw deflate and stacked encodings decode when within the cap."""
	data = json.dumps({"v": "x" * 50_000}).encode()
	raw = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
	raw_deflate = raw.compress(data) + raw.flush()
	cases = {
		"gzip": gzip.compress(data),
		"deflate": zlib.compress(data),
		"x-gzip": gzip.compress(data),
		"deflate ": raw_deflate,
		"gzip, gzip": gzip.compress(gzip.compress(data)),
		"identity": data,
	}
	for encoding, body in cases.items():

		def handler(
			request: httpx.Request, body: bytes = body, encoding: str = encoding
		) -> httpx.Response:
			return httpx.Response(
				200,
				headers={"content-encoding": encoding.strip(), "content-type": "application/json"},
				stream=Chunks(body, 1000),
			)

		tool = HttpTool(handle="t", description="d", endpoint="/x")
		out = await execute_http_tool(tool, spec(tool), {}, context(handler))
		assert out == {"v": "x" * 50_000}, encoding


async def test_the_engine_asks_only_for_encodings_it_bounds() -> None:
	"""Requests ask for gzip and deflate, which the bounded decoder reads."""
	handler, seen = recorder(httpx.Response(200, json={}))
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	await execute_http_tool(tool, spec(tool), {}, context(handler))
	await http_request_tool().execute({"url": "https://api.example.com/"}, context(handler))
	assert [r.headers["accept-encoding"] for r in seen] == ["gzip, deflate", "gzip, deflate"]


@pytest.mark.parametrize(
	"media", ["text/plain\r\nX-Evil: 1", "text/plain\x0b", "a b/c", "image/png\n"]
)
@pytest.mark.parametrize("fmt", ["multipart", "binary", "multipart-related"])
async def test_a_file_media_type_cannot_inject_headers(media: str, fmt: str) -> None:
	"""A model-made data: URL's media type goes into a header only when it is a media type."""
	handler, seen = recorder(httpx.Response(200, json={}))
	body: Any
	files: dict[str, str] = {}
	if fmt == "multipart":
		body, files = {"a": "1"}, {"file": "{{ input.f }}"}
	elif fmt == "binary":
		body = "{{ input.f }}"
	else:
		body = {"metadata": {"n": 1}, "media": "{{ input.f }}"}
	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/up",
		request_format=fmt,  # type: ignore[arg-type]
		body=body,
		files=files,
	)
	reference = f"data:{media};base64,aGk="
	with pytest.raises(ToolError, match=r"media type|control character"):
		await execute_http_tool(tool, spec(tool), {"f": reference}, context(handler))
	assert seen == []
	await execute_http_tool(tool, spec(tool), {"f": "data:image/png;base64,aGk="}, context(handler))
	assert b"X-Evil" not in seen[0].content and len(seen) == 1


# -- 2c. FileSystem: paths over PATH_MAX, NAME_MAX or the depth cap are refused ---------------


def fs_tools(root: Path) -> dict[str, Any]:
	return {t.handle: t for t in file_system_integration(root).tools}


async def fs_call(t: dict[str, Any], handle: str, **input: Any) -> Any:
	return await t[handle].execute(input, ToolContext(agent="a", integration="fileSystem"))


def fs_tree(root: Path) -> list[str]:
	return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def every_use(path: str) -> list[tuple[str, dict[str, Any]]]:
	"""Every operation that takes a path, with ``path`` at each of its ends."""
	return [
		("read", {"path": path}),
		("write", {"path": path, "content": "x"}),
		("append", {"path": path, "content": "x"}),
		("list", {"path": path}),
		("stat", {"path": path}),
		("mkdir", {"path": path}),
		("delete", {"path": path}),
		("search", {"path": path, "query": "x"}),
		("move", {"source": path, "destination": "ok.txt"}),
		("move", {"source": "ok.txt", "destination": path}),
		("copy", {"source": path, "destination": "copy.txt"}),
		("copy", {"source": "ok.txt", "destination": path}),
	]


BAD_PATHS = {
	"2,100 levels": "a/" * 2100 + "f.txt",
	"5,030 characters": "p" * 5030,
	"4,096 bytes of 2-byte characters": "\u00e9" * 2048,
	"65 levels": "/".join(["d"] * 65),
	"100 levels of 1 character": "/".join(["d"] * 100),
	"a 256-byte name": "n" * 256,
	"a 256-byte name of 2-byte characters": "d/" + "\u00e9" * 128,
	"a 258-byte name of 3-byte characters": "\u20ac" * 86,
	"a 256-byte name of 4-byte characters": "\U0001f600" * 64,
	"a NUL": "a\x00b",
	"a NUL at the end": "ok.txt\x00",
	"a tab": "a\tb",
	"DEL": "a\x7fb",
	"a C1 control": "a\x85b",
	"a line separator": "a\u2028b",
	"a right-to-left override": "invoice\u202etxt.exe",
	"a backslash": "dir\\..\\x",
	"percent-encoded dots": "%2e%2e/x",
}


@pytest.mark.parametrize("kind", list(BAD_PATHS))
async def test_fs_paths_over_the_caps_are_refused_everywhere(tmp_path: Path, kind: str) -> None:
	"""Every operation, both ends of move and copy: a clear error, nothing written, no host path."""
	root = tmp_path / "root"
	root.mkdir()
	(root / "ok.txt").write_text("x")
	t = fs_tools(root)
	before = fs_tree(root)
	for handle, args in every_use(BAD_PATHS[kind]):
		with pytest.raises(ToolError, match=r"too long|too deep|control characters") as info:
			await fs_call(t, handle, **args)
		message = info.value.message
		assert str(tmp_path) not in message, (handle, message)
		assert "4095" in message or "255" in message or "64" in message or "control" in message
		assert fs_tree(root) == before, handle


@pytest.mark.parametrize("kind", list(BAD_PATHS))
async def test_fs_references_over_the_caps_are_refused(tmp_path: Path, kind: str) -> None:
	"""``fileSystem:`` references (what other tools upload) go through the same checks."""
	root = tmp_path / "root"
	root.mkdir()
	store = FileStore(tmp_path / "store", file_system=Sandbox([root]).file)
	with pytest.raises(ToolError, match=r"too long|too deep|control characters") as info:
		await store.open(f"fileSystem:{BAD_PATHS[kind]}")
	assert str(tmp_path) not in info.value.message


async def test_fs_paths_at_the_caps_still_work(tmp_path: Path) -> None:
	"""64 levels, 255-byte names, and the longest path that fits PATH_MAX with its directory."""
	root = tmp_path / "root"
	root.mkdir()
	t = fs_tools(root)
	deep = "/".join(["d"] * MAX_DEPTH)
	assert (await fs_call(t, "write", path=deep, content="x"))["size"] == 1
	assert (await fs_call(t, "read", path=deep))["content"] == "x"
	name = "\u00e9" * 127 + "n"  # 255 bytes
	assert len(name.encode()) == MAX_NAME_BYTES
	await fs_call(t, "write", path=name, content="y")
	assert (root / name).read_text() == "y"
	room = MAX_PATH_BYTES - len(os.fsencode(root)) - 1  # the bytes left below the directory
	blocks = (room - 1) // 251
	longest = "n" * 250 + "/"
	longest = longest * blocks + "m" * (room - blocks * 251)
	assert len(os.fsencode(root / longest)) == MAX_PATH_BYTES
	await fs_call(t, "write", path=longest, content="z")
	assert (await fs_call(t, "read", path=longest))["content"] == "z"
	with pytest.raises(ToolError, match="too long"):
		await fs_call(t, "write", path=longest + "m", content="z")


async def test_fs_a_path_too_long_with_its_directory_creates_no_parents(tmp_path: Path) -> None:
	"""Short enough as text, too long on the host: refused before any directory is made."""
	root = tmp_path / "root"
	root.mkdir()
	t = fs_tools(root)
	path = "/".join(["n" * 250] * 16) + "/" + "m" * 70  # 4,086 bytes below the directory
	assert len(path.encode()) <= MAX_PATH_BYTES < len(os.fsencode(root / path))
	for handle, args in [
		("write", {"path": path, "content": "x"}),
		("append", {"path": path, "content": "x"}),
		("mkdir", {"path": path}),
	]:
		with pytest.raises(ToolError, match=r"too long \(\d+ bytes with its directory"):
			await fs_call(t, handle, **args)
	assert fs_tree(root) == []
	absolute = f"{root}/{path}"
	with pytest.raises(ToolError, match="too long"):
		await fs_call(t, "write", path=absolute, content="x")
	assert fs_tree(root) == []


async def test_fs_a_symlink_cannot_lead_past_the_caps(tmp_path: Path) -> None:
	"""The caps count the place a path leads to, symlinks resolved."""
	root = tmp_path / "root"
	deep = "/".join(["s"] * 60)
	(root / deep).mkdir(parents=True)
	os.symlink(deep, root / "link")
	t = fs_tools(root)
	await fs_call(t, "mkdir", path="link/a/b/c/d")  # 64 levels once resolved
	with pytest.raises(ToolError, match="too deep"):
		await fs_call(t, "mkdir", path="link/a/b/c/d/e")
	assert not (root / deep / "a/b/c/d/e").exists()


@pytest.mark.parametrize("handle", ["copy", "move"])
async def test_fs_a_tree_moved_or_copied_deeper_than_the_caps_is_refused(
	tmp_path: Path, handle: str
) -> None:
	"""A tree's own depth counts at its destination: nothing is copied or moved."""
	root = tmp_path / "root"
	(root / "/".join(["t"] * 40)).mkdir(parents=True)
	(root / "/".join(["t"] * 40) / "f.txt").write_text("x")
	(root / "/".join(["u"] * 30)).mkdir(parents=True)
	t = fs_tools(root)
	before = fs_tree(root)
	for destination in ["/".join(["u"] * 30), "/".join(["u"] * 30) + "/v"]:
		with pytest.raises(ToolError, match="levels deep") as info:
			await fs_call(t, handle, source="t", destination=destination)
		assert str(tmp_path) not in info.value.message
		assert fs_tree(root) == before
	await fs_call(t, handle, source="t", destination="/".join(["u"] * 20))  # 20 + 41 levels fit
	assert (root / "/".join(["u"] * 20) / "/".join(["t"] * 40) / "f.txt").read_text() == "x"


def test_fs_reads_stop_at_the_cap_even_when_the_file_grows() -> None:
	"""read_capped (FileSystem read and search, skills) never holds more than the cap plus one."""
	reader, writer = os.pipe()
	try:
		os.write(writer, b"x" * 100)
		assert read_capped(reader, 10) is None  # more than the cap: refused, 11 bytes read
		assert os.read(reader, 1000) == b"x" * 89
		os.write(writer, b"y" * 5)
		os.close(writer)
		writer = -1
		assert read_capped(reader, 5) == b"y" * 5  # exactly the cap
	finally:
		os.close(reader)
		if writer != -1:
			os.close(writer)
