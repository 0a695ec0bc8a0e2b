"""Engine features for uploads and signed stores: accepted statuses, encoder headers."""

import base64
import hashlib
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
)
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.integrations.templating import render
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio


async def no_sleep(_: float) -> None:
	return None


def context(handler: Any, *, files: FileStore | None = None) -> ToolContext:
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	return ToolContext(
		agent="a",
		integration="svc",
		config={},
		http=lambda: http,
		files=files,
		extras={"retry_policy": RetryPolicy(sleep=no_sleep)},
	)


def integration(*tools: HttpTool) -> Integration:
	return Integration(
		id="svc", name="Svc", api_setup=ApiSetup(base_url="https://api.example.com"), tools=tools
	)


# accept_statuses

CHUNK = HttpTool(
	handle="chunk",
	description="d",
	method="PUT",
	endpoint="/upload",
	headers={"Content-Range": "bytes {{ input.start }}-{{ input.end }}/{{ input.total }}"},
	request_format="binary",
	body="{{ input.file }}#bytes={{ input.start }}-{{ input.end }}",
	accept_statuses=[308],
	response_headers=["Range"],
)


async def test_an_accepted_308_without_location_is_an_answer_with_its_headers(tmp_path) -> None:
	"""Google's 308 Resume Incomplete comes back as ok with its Range header, once, not an error."""
	store = FileStore(tmp_path)
	saved = await store.save(b"0123456789", media_type="video/mp4", name="v.mp4")
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(308, headers={"Range": "bytes=0-3"})

	out = await execute_http_tool(
		CHUNK,
		integration(CHUNK),
		{"file": saved["file"], "start": 0, "end": 3, "total": 10},
		context(handler, files=store),
	)
	assert out == {"ok": True, "status": 308, "headers": {"Range": "bytes=0-3"}}
	(request,) = seen
	assert request.headers["content-range"] == "bytes 0-3/10"
	assert request.content == b"0123"


async def test_an_accepted_status_with_a_location_is_not_followed() -> None:
	"""A listed 308 is returned even when it carries a Location, instead of being redirected."""
	tool = CHUNK.model_copy(
		update={"request_format": "json", "body": None, "response_headers": ["Location"]}
	)
	seen: list[str] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(str(request.url))
		return httpx.Response(308, headers={"Location": "https://api.example.com/elsewhere"})

	out = await execute_http_tool(
		tool, integration(tool), {"start": 0, "end": 0, "total": 1}, context(handler)
	)
	assert out["status"] == 308
	assert out["headers"] == {"Location": "https://api.example.com/elsewhere"}
	assert seen == ["https://api.example.com/upload"]


async def test_without_accept_statuses_a_308_still_redirects_and_a_bare_308_fails() -> None:
	"""Other tools keep following a 308 with Location, and a 308 without one is an error."""
	plain = HttpTool(handle="get", description="d", endpoint="/a")
	hops: list[str] = []

	def redirecting(request: httpx.Request) -> httpx.Response:
		hops.append(request.url.path)
		if request.url.path == "/a":
			return httpx.Response(308, headers={"Location": "/b"})
		return httpx.Response(200, json={"at": "b"})

	assert await execute_http_tool(plain, integration(plain), {}, context(redirecting)) == {
		"at": "b"
	}
	assert hops == ["/a", "/b"]
	with pytest.raises(ToolError, match="answered 308") as info:
		await execute_http_tool(
			plain, integration(plain), {}, context(lambda r: httpx.Response(308))
		)
	assert info.value.status_code == 308


def test_accept_statuses_refuses_success_rate_limit_and_server_codes() -> None:
	"""2xx, 429 and 5xx cannot be listed: they are success or retried failures already."""
	for wrong in (200, 429, 503):
		with pytest.raises(ValidationError, match="accept_statuses"):
			HttpTool(handle="t", description="d", endpoint="/", accept_statuses=[wrong])
	assert HttpTool.model_validate(
		{"handle": "t", "description": "d", "endpoint": "/", "acceptStatuses": [308, 404]}
	).accept_statuses == [308, 404]


# checksum


def s3_like(*tools: HttpTool) -> Integration:
	"""An integration with S3's encoders (headers computed from the body)."""
	from openmolt_integrations._aws import object_body, xml_body

	return Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		tools=tools,
		encoders={"s3-object": object_body, "s3-xml": xml_body},
	)


async def test_content_md5_is_computed_over_the_encoded_body() -> None:
	"""An encoder's Content-MD5 is the base64 MD5 of exactly the bytes that are sent."""
	tool = HttpTool(
		handle="del",
		description="d",
		method="POST",
		endpoint="/?delete",
		request_format="s3-xml",
		body="<Delete>{% for k in input.keys %}<Key>{{ k | escape }}</Key>{% endfor %}</Delete>",
	)
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200)

	await execute_http_tool(tool, s3_like(tool), {"keys": ["a&b", "c"]}, context(handler))
	(request,) = seen
	assert request.content == b"<Delete><Key>a&amp;b</Key><Key>c</Key></Delete>"
	expected = base64.b64encode(hashlib.md5(request.content).digest()).decode()
	assert request.headers["content-md5"] == expected
	assert request.headers["content-type"] == "application/xml"
	assert str(request.url) == "https://api.example.com/?delete"


# headers an encoder computes from the body (S3 metadata)

PUT = HttpTool(
	handle="put",
	description="d",
	method="PUT",
	endpoint="/o",
	request_format="s3-object",
	body={"file": "{{ input.file }}", "metadata": "{{ input.metadata }}"},
)
FILE = "data:text/plain;base64,aGk="


async def test_encoder_headers_expand_an_object_and_skip_a_missing_one() -> None:
	"""Each metadata key becomes x-amz-meta-<key>; without the input no such header is sent."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200)

	ctx = context(handler, files=FileStore())
	metadata = {"author": "ana", "pages": 3, "x": None}
	await execute_http_tool(PUT, s3_like(PUT), {"file": FILE, "metadata": metadata}, ctx)
	await execute_http_tool(PUT, s3_like(PUT), {"file": FILE}, ctx)
	with_meta, without = seen
	assert with_meta.content == b"hi"
	assert with_meta.headers["x-amz-meta-author"] == "ana"
	assert with_meta.headers["x-amz-meta-pages"] == "3"
	assert "x-amz-meta-x" not in with_meta.headers
	assert not [k for k in without.headers if k.startswith("x-amz-meta-")]


@pytest.mark.parametrize(
	("metadata", "message"),
	[
		("text", "needs an object"),
		({"bad name": "v"}, "not a valid header name"),
		({"k": "a\r\nInjected: 1"}, "line break"),
		({"k": "café"}, "non-ASCII"),
		({"k": ["a"]}, "text value"),
	],
)
async def test_encoder_headers_refuse_bad_values(metadata: Any, message: str) -> None:
	"""Non-objects, bad names, line breaks, non-ASCII text and lists are refused clearly."""
	seen: list[httpx.Request] = []
	with pytest.raises(ToolError, match=message):
		await execute_http_tool(
			PUT,
			s3_like(PUT),
			{"file": FILE, "metadata": metadata},
			context(lambda r: seen.append(r) or httpx.Response(200), files=FileStore()),
		)
	assert seen == []


async def test_response_headers_with_a_star_collect_a_prefix() -> None:
	"""``x-amz-meta-*`` returns every metadata header by its lowercase name."""
	tool = HttpTool(
		handle="head",
		description="d",
		method="HEAD",
		endpoint="/o",
		response_headers=["ETag", "x-amz-meta-*"],
	)
	headers = {"ETag": '"e1"', "X-Amz-Meta-Author": "ana", "x-amz-meta-pages": "3"}
	out = await execute_http_tool(
		tool, integration(tool), {}, context(lambda r: httpx.Response(200, headers=headers))
	)
	assert out["headers"] == {"ETag": '"e1"', "x-amz-meta-author": "ana", "x-amz-meta-pages": "3"}


# templates are parsed when an integration is defined


def test_a_liquid_keyword_as_a_field_name_is_reported_with_the_tool_and_field() -> None:
	"""``input.limit`` inside a template fails at definition, naming the tool, field and fix."""
	tool = HttpTool(
		handle="listThings",
		description="d",
		endpoint="/things",
		query_params={"limit": "{{ input.limit | default: 10 }}"},
	)
	with pytest.raises(ValidationError) as info:
		integration(tool)
	text = str(info.value)
	assert "tool 'listThings', field query_params.limit" in text
	assert 'input["limit"]' in text


def test_the_bracketed_lookup_parses_and_renders() -> None:
	"""The suggested ``input["limit"]`` form works (exact ``{{ input.limit }}`` works as well)."""
	tool = HttpTool(
		handle="listThings",
		description="d",
		endpoint="/things",
		query_params={
			"limit": '{{ input["limit"] | default: 10 }}',
			"offset": "{{ input.offset }}",
		},
	)
	integration(tool)
	assert render(tool.query_params, {"input": {"offset": 5}}) == {"limit": "10", "offset": 5}


@pytest.mark.parametrize(
	("field", "value", "where"),
	[
		("endpoint", "/a/{% if %}", "field endpoint"),
		("body", {"outer": {"inner": "{{ input.x | }}"}}, "field body.outer.inner"),
		("headers", {"X-A": "{% for %}"}, "field headers.X-A"),
		("files", {"f": "{{ input.in }}x"}, "field files.f"),
	],
)
def test_broken_templates_name_their_field(field: str, value: Any, where: str) -> None:
	"""A template that does not parse is reported with the path of the field holding it."""
	kwargs: dict[str, Any] = {"handle": "t", "description": "d", "endpoint": "/"}
	kwargs[field] = value
	with pytest.raises(ValidationError, match=f"tool 't', {where}"):
		integration(HttpTool(**kwargs))


def test_api_setup_and_credential_templates_are_checked() -> None:
	"""Templates in the API setup and credentials are parsed at definition too."""
	with pytest.raises(ValidationError, match=r"api_setup\.headers\.X-Key"):
		Integration(name="S", api_setup=ApiSetup(headers={"X-Key": "{{ config.key | }}"}))
	with pytest.raises(ValidationError, match=r"credential_setup\[0\]\.headers\.Authorization"):
		Integration(
			name="S",
			credential_setup=[
				BearerCredential(
					type="bearer", headers={"Authorization": "Bearer {{ config.if }}x"}
				)
			],
		)
