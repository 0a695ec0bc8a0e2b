"""How the engine builds a tool's URL from its parts, checked against RFC 3986 and httpx.

The base URL is a prefix: the endpoint is joined into its path, and a query the base URL holds
(an OpenAPI server URL ``https://api.example.com/v1?api_key=K``, a user's setting) stays a query,
first, with the tool's own parameters after it; a parameter the tool sends replaces the base
URL's of the same name. A URL that cannot be sent as written (a fragment that would swallow the
endpoint, a ``.`` or ``..`` segment httpx would resolve away, an empty segment a Liquid block
left) is refused with an error naming the part, never sent somewhere else.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from openmolt_core.errors import ToolError
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio


async def _no_sleep(_: float) -> None:
	return None


async def _resolver(host: str, port: int) -> list[str]:
	return ["93.184.216.34"]


def _tool(endpoint: str = "/pets", **fields: Any) -> HttpTool:
	fields.setdefault(
		"input_schema",
		{"type": "object", "properties": {"id": {"type": "string"}, "q": {"type": "string"}}},
	)
	return HttpTool(handle="t", description="d", endpoint=endpoint, **fields)


async def _send(
	tool: HttpTool,
	base_url: str,
	input: dict[str, Any] | None = None,
	*,
	config: dict[str, Any] | None = None,
	**setup: Any,
) -> httpx.Request:
	"""Run the tool on a mock transport; return the one request it sent."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	integration = Integration(
		id="svc", name="Svc", api_setup=ApiSetup(base_url=base_url, **setup), tools=[tool]
	)
	context = ToolContext(
		agent="a",
		integration="svc",
		config=config or {},
		http=lambda: client,
		extras={"retry_policy": RetryPolicy(sleep=_no_sleep), "resolver": _resolver},
	)
	try:
		await execute_http_tool(tool, integration, input or {}, context)
	finally:
		await client.aclose()
	assert len(seen) == 1
	return seen[0]


# -- a base URL with a query --------------------------------------------------------------------


@pytest.mark.parametrize(
	("base", "endpoint", "query", "sent"),
	[
		("https://api.example.com/v1?api_key=K", "/pets", {}, "/v1/pets?api_key=K"),
		("https://api.example.com/v1/?api_key=K", "/pets", {}, "/v1/pets?api_key=K"),
		("https://api.example.com/v1?api_key=K", "pets", {}, "/v1/pets?api_key=K"),
		("https://api.example.com?api_key=K", "/pets", {}, "/pets?api_key=K"),
		("https://api.example.com/v1?", "/pets", {}, "/v1/pets"),
		("https://api.example.com/v1?api_key=K", "", {}, "/v1?api_key=K"),
		# the tool's parameters come after the base URL's
		("https://api.example.com/v1?api_key=K", "/pets", {"limit": "5"}, "/v1/pets?api_key=K&limit=5"),
		("https://api.example.com/v1?api_key=K", "/pets?limit=5", {}, "/v1/pets?api_key=K&limit=5"),
		(
			"https://api.example.com/v1?api_key=K",
			"/pets?limit=5",
			{"page": "2"},
			"/v1/pets?api_key=K&limit=5&page=2",
		),
		# a parameter the tool sends replaces the base URL's of the same name
		("https://api.example.com/v1?api_key=K&limit=1", "/pets", {"limit": "5"}, "/v1/pets?api_key=K&limit=5"),
		("https://api.example.com/v1?limit=1&api_key=K", "/pets?limit=5", {}, "/v1/pets?api_key=K&limit=5"),
		("https://api.example.com/v1?limit=1", "", {"limit": "5"}, "/v1?limit=5"),
		# a bare name (an S3 subresource) and repeated names are kept as written
		("https://api.example.com/v1?delete&k=1&k=2", "/pets", {}, "/v1/pets?delete&k=1&k=2"),
		# a space or a non-ASCII letter a user's setting holds is percent-encoded, as httpx does
		("https://api.example.com/v1?q=a b&é=1", "/pets", {}, "/v1/pets?q=a%20b&%C3%A9=1"),
	],
)  # fmt: skip
async def test_a_base_url_query_stays_a_query_and_the_endpoint_joins_the_path(
	base: str, endpoint: str, query: dict[str, str], sent: str
) -> None:
	"""``https://api.example.com/v1?api_key=K`` + ``/pets`` reaches ``/v1/pets?api_key=K``."""
	request = await _send(_tool(endpoint, query_params=query), base)
	assert request.url.host == "api.example.com"
	assert request.url.raw_path.decode() == sent


async def test_the_api_setups_parameters_also_replace_the_base_urls() -> None:
	"""``ApiSetup.query_params`` are the tool's too: they come after and win over the base URL's."""
	request = await _send(
		_tool("/pets"), "https://api.example.com/v1?v=1&api_key=K", query_params={"v": "2"}
	)
	assert request.url.raw_path == b"/v1/pets?api_key=K&v=2"


@pytest.mark.parametrize(
	("base", "host", "port"),
	[
		("https://[2001:db8::1]/v1?k=1", "2001:db8::1", None),
		("https://[2001:db8::1]:8443/v1?k=1", "2001:db8::1", 8443),
		("https://api.example.com:8443/v1?k=1", "api.example.com", 8443),
		("http://api.example.com:8080/v1/?k=1", "api.example.com", 8080),
	],
)
async def test_ipv6_hosts_and_ports_keep_their_place_with_a_query(
	base: str, host: str, port: int | None
) -> None:
	"""The host and port are the base URL's, the path joined and the query kept."""
	request = await _send(
		_tool("/pets"), base, allow_internal_hosts=["2001:db8::/32"] if "[" in base else []
	)
	assert (request.url.host, request.url.port) == (host, port)
	assert request.url.raw_path == b"/v1/pets?k=1"


async def test_a_base_url_from_the_users_config_may_hold_a_query() -> None:
	"""A base URL the user sets (``{{ config.baseUrl }}``) with a key in its query."""
	request = await _send(
		_tool("/pets/{{ input.id }}"),
		"{{ config.baseUrl }}",
		{"id": "7"},
		config={"baseUrl": "https://api.example.com/v1?api_key=K"},
	)
	assert str(request.url) == "https://api.example.com/v1/pets/7?api_key=K"


async def test_an_input_chosen_url_with_a_query_keeps_it_before_the_tools() -> None:
	"""An upload URL the service returned (a signed query) is kept byte for byte, first."""
	tool = HttpTool(
		handle="t",
		description="d",
		method="PUT",
		base_url="{{ input.url }}",
		endpoint="",
		query_params={"part": "1"},
		input_origins=["https://upload.example.com"],
		input_schema={"type": "object", "properties": {"url": {"type": "string"}}},
	)
	signed = "https://upload.example.com/u/1?X-Sig=a%2Fb%3D&X-Exp=60"
	request = await _send(tool, "https://api.example.com", {"url": signed})
	assert request.url.raw_path == b"/u/1?X-Sig=a%2Fb%3D&X-Exp=60&part=1"


# -- what cannot be sent as written is refused ---------------------------------------------------


async def _refused(
	tool: HttpTool, base: str, input: dict[str, Any] | None = None, **kw: Any
) -> str:
	with pytest.raises(ToolError) as caught:
		await _send(tool, base, input, **kw)
	return caught.value.message


async def test_a_fragment_in_a_base_url_the_user_sets_is_refused_at_the_call() -> None:
	"""``https://api.example.com/v1#top`` + ``/pets`` would send ``/v1``: refused, named."""
	message = await _refused(
		_tool("/pets"),
		"{{ config.baseUrl }}",
		config={"baseUrl": "https://api.example.com/v1?api_key=K#top"},
	)
	assert "base URL" in message and "fragment" in message and "'#" in message
	assert "api_key" not in message  # the query (a key) is not repeated


@pytest.mark.parametrize(
	("field", "setup", "tool"),
	[
		("api_setup.base_url", "https://api.example.com/v1#top", {}),
		("api_setup.base_url", "https://api.example.com/v1?api_key=K1#top", {}),
		("base_url", "https://api.example.com", {"base_url": "https://api.example.com/v1#x"}),
		("endpoint", "https://api.example.com", {"endpoint": "/pets/{{ input.id }}#photos"}),
		(
			"endpoint",
			"https://api.example.com",
			{"endpoint": "/pets{% if input.id %}/{{ input.id }}#x{% endif %}"},
		),
		("endpoint", "https://api.example.com", {"endpoint": "https://api.example.com/a#b"}),
	],
)
def test_a_fragment_written_in_a_url_template_is_refused_when_defined(
	field: str, setup: str, tool: dict[str, str]
) -> None:
	"""A ``#`` in a URL template's text is never sent (RFC 3986, 3.5): said at definition."""
	with pytest.raises(ValueError, match="fragment") as caught:
		Integration(
			id="svc",
			name="Svc",
			api_setup=ApiSetup(base_url=setup),
			tools=[_tool(**{"endpoint": "/pets", **tool})],
		)
	assert f"field {field}" in str(caught.value)
	assert "K1" not in str(caught.value)  # a key in the query is not repeated


def test_a_fragment_in_an_endpoint_is_refused_at_the_call_too() -> None:
	"""The join refuses what a definition check could miss (a ``{% raw %}#`` rendered)."""
	from openmolt_core.integrations._url import split_base

	with pytest.raises(ToolError, match="endpoint '/pets' has a fragment"):
		split_base("https://api.example.com/v1", "/pets#x")
	with pytest.raises(ToolError, match="has a fragment"):
		split_base("", "https://api.example.com/pets#x", absolute=True)
	assert split_base("https://api.example.com/u/1?s=1#f", "") == (
		"https://api.example.com/u/1",
		"s=1",
	)


@pytest.mark.parametrize(
	("base", "endpoint", "config"),
	[
		("https://api.example.com/v1", "/../admin", {}),
		("https://api.example.com/v1", "/pets/./list", {}),
		("https://api.example.com/v1/..", "/pets", {}),
		("https://api.example.com/{{ config.prefix }}", "/pets", {"prefix": ".."}),
		("https://api.example.com/{{ config.prefix }}/v1", "/pets", {"prefix": "a/../.."}),
	],
)
async def test_a_dot_segment_httpx_would_resolve_away_is_refused(
	base: str, endpoint: str, config: dict[str, str]
) -> None:
	"""httpx removes ``.`` and ``..`` segments (RFC 3986, 5.2.4): the request would go elsewhere."""
	message = await _refused(_tool(endpoint), base, config=config)
	assert "'..'" in message or "'.'" in message


@pytest.mark.parametrize(
	"endpoint",
	[
		"/pets/{% if input.id %}{{ input.id }}{% endif %}/photos",
		"/pets/{% for x in input.none %}{{ x }}{% endfor %}/photos",
	],
)
async def test_a_liquid_block_that_renders_an_empty_segment_is_refused(endpoint: str) -> None:
	"""``/pets//photos`` (the id left out) is another resource: refused, the endpoint named."""
	message = await _refused(_tool(endpoint), "https://api.example.com/v1")
	assert "empty" in message and "/pets/" in message


async def test_a_config_value_that_leaves_an_empty_base_url_segment_is_refused() -> None:
	"""``https://host/{{ config.prefix }}/v1`` with an empty prefix is ``//v1``: refused, named."""
	base = "https://api.example.com/{{ config.prefix }}/v1"
	message = await _refused(_tool("/pets"), base, config={"prefix": ""})
	assert "base URL" in message and "empty" in message and "config" in message
	request = await _send(_tool("/pets"), base, config={"prefix": "gitlab"})
	assert request.url.raw_path == b"/gitlab/v1/pets"
	# an empty value at the end leaves only a trailing slash, which the join absorbs
	request = await _send(
		_tool("/pets"), "https://api.example.com/{{ config.p }}", config={"p": ""}
	)
	assert request.url.raw_path == b"/pets"


@pytest.mark.parametrize(
	("endpoint", "input", "sent"),
	[
		# Outlook's way: the slash sits inside the block
		("/folders{% if input.id %}/{{ input.id }}/children{% endif %}", {}, b"/v1/folders"),
		("/folders{% if input.id %}/{{ input.id }}/children{% endif %}", {"id": "a"}, b"/v1/folders/a/children"),
		("/pets/{% if input.id %}{{ input.id }}{% else %}all{% endif %}", {}, b"/v1/pets/all"),
		("/pets/{% if input.id %}{{ input.id }}{% endif %}/photos", {"id": "3"}, b"/v1/pets/3/photos"),
		# an empty segment the endpoint writes itself, or an S3 key kept exactly
		("/a//b", {}, b"/v1/a//b"),
		("/pets/", {}, b"/v1/pets/"),
		# a trailing slash a tag leaves is sent (GitHub's /contents/ is a repository's root)
		("/pets/{% if input.id %}{{ input.id }}{% endif %}", {}, b"/v1/pets/"),
		("/{{ input.id | path_segments: true }}", {"id": "dir/"}, b"/v1/dir/"),
	],
)  # fmt: skip
async def test_blocks_that_leave_no_empty_segment_and_written_slashes_are_sent(
	endpoint: str, input: dict[str, str], sent: bytes
) -> None:
	"""Only an empty segment a block left inside the path is refused."""
	request = await _send(_tool(endpoint), "https://api.example.com/v1", input)
	assert request.url.raw_path == sent


@pytest.mark.parametrize(
	("value", "raw"),
	[
		("a/b", b"/v1/pets/a%2Fb"),
		("a?b=1", b"/v1/pets/a%3Fb%3D1"),
		("a#b", b"/v1/pets/a%23b"),
		("%2F", b"/v1/pets/%252F"),
		("[::1]", b"/v1/pets/%5B%3A%3A1%5D"),
		("é", b"/v1/pets/%C3%A9"),
	],
)
async def test_a_path_value_is_one_segment_whatever_it_holds(value: str, raw: bytes) -> None:
	"""``/``, ``?``, ``#`` and ``%`` in a value are data (percent-encoded), with a base query."""
	request = await _send(
		_tool("/pets/{{ input.id }}"), "https://api.example.com/v1?k=1", {"id": value}
	)
	assert request.url.raw_path == raw + b"?k=1"


@pytest.mark.parametrize("value", ["..", ".", "", "%2e%2e", "a/../b"])
async def test_a_path_value_that_would_climb_is_refused(value: str) -> None:
	"""A value that is (or holds between slashes) ``.``, ``..``, or nothing is refused."""
	message = await _refused(
		_tool("/pets/{{ input.id }}"), "https://api.example.com/v1", {"id": value}
	)
	assert "path" in message


@pytest.mark.parametrize(
	("base", "endpoint", "sent"),
	[
		("HTTPS://API.EXAMPLE.COM/v1?k=1", "/pets", "https://api.example.com/v1/pets?k=1"),
		("https://api.example.com/v1?k=1", "HTTPS://api.example.com/other", "https://api.example.com/other"),
		("https://api.example.com:443/v1", "/pets", "https://api.example.com/v1/pets"),
	],
)  # fmt: skip
async def test_schemes_are_case_insensitive_and_a_default_port_is_the_same_origin(
	base: str, endpoint: str, sent: str
) -> None:
	"""RFC 3986: the scheme and host are case-insensitive; an absolute endpoint is the whole URL."""
	request = await _send(_tool(endpoint), base)
	assert str(request.url) == sent


# -- the OAuth2 authorization URL ------------------------------------------------------------------


@pytest.mark.parametrize(
	("auth_url", "path", "query"),
	[
		("https://auth.example.com/authorize", "/authorize", ""),
		("https://auth.example.com/authorize?tenant=t1", "/authorize", "tenant=t1&"),
		("https://auth.example.com/authorize?", "/authorize", ""),
	],
)
def test_the_authorization_url_keeps_its_query_and_adds_the_flows(
	auth_url: str, path: str, query: str
) -> None:
	"""RFC 6749 3.1: the endpoint's query is retained when the flow's parameters are added."""
	from urllib.parse import urlsplit

	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import authorization_url

	cred = OAuth2Credential(type="oauth2", auth_url=auth_url, token_url="https://t.example/t")
	url = urlsplit(authorization_url(cred, {"clientId": "cid"}, "https://app.example/cb", "s"))
	assert url.path == path and url.fragment == ""
	assert url.query.startswith(f"{query}response_type=code&client_id=cid")


def test_an_authorization_url_with_a_fragment_is_refused() -> None:
	"""RFC 6749 3.1: the endpoint MUST NOT have a fragment; the flow's parameters would go in it."""
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import authorization_url

	cred = OAuth2Credential(
		type="oauth2", auth_url="https://auth.example.com/authorize#x", token_url="https://t/t"
	)
	with pytest.raises(ConfigurationError, match="fragment"):
		authorization_url(cred, {"clientId": "cid"}, "https://app.example/cb", "s")
