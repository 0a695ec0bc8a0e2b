import json
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations.credentials import make_auth
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

SECRET = "sk-live-abcdef123456"


class Sleeps:
	def __init__(self) -> None:
		self.calls: list[float] = []

	async def __call__(self, seconds: float) -> None:
		self.calls.append(seconds)


def make(
	handler: Any,
	*,
	config: dict[str, Any] | None = None,
	auth: Any = None,
	files: FileStore | None = None,
	sleeps: Sleeps | None = None,
) -> ToolContext:
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	config = config or {}
	return ToolContext(
		agent="a",
		integration="svc",
		config=config,
		http=lambda: client,
		auth=auth,
		redact=frozenset(v for v in config.values() if isinstance(v, str) and len(v) >= 6),
		files=files,
		extras={"retry_policy": RetryPolicy(sleep=sleeps or Sleeps())},
	)


def integration(tool: HttpTool, **setup: Any) -> Integration:
	return Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com/v1", **setup),
		tools=[tool],
	)


async def test_json_request_with_types_query_lists_and_dropped_optionals() -> None:
	"""Body keeps input types, lists repeat query keys, missing optionals vanish."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"ok": 1})

	tool = HttpTool(
		handle="create",
		description="d",
		method="post",
		endpoint="/users/{{ input.userId }}/items",
		query_params={
			"labelIds": "{{ input.labels }}",
			"q": "{{ input.q }}",
			"sort": {"field": "name"},
		},
		headers={"X-Trace": "{{ input.trace }}"},
		body={
			"count": "{{ input.count }}",
			"draft": "{{ input.draft }}",
			"meta": {"note": "{{ input.note }}"},
		},
	)
	out = await execute_http_tool(
		tool,
		integration(tool),
		{"userId": "u 1", "labels": ["A", "B"], "count": 2, "draft": True},
		make(handler),
	)
	assert out == {"ok": 1}
	request = seen[0]
	assert request.method == "POST"
	assert request.url.raw_path.decode().startswith("/v1/users/u%201/items?")
	assert parse_qsl(request.url.query.decode()) == [
		("labelIds", "A"),
		("labelIds", "B"),
		("sort[field]", "name"),
	]
	assert "x-trace" not in request.headers
	# meta's only key was a missing optional: the object is left out, not sent empty
	assert json.loads(request.content) == {"count": 2, "draft": True}
	assert request.headers["content-type"] == "application/json"


async def test_model_input_with_liquid_syntax_is_sent_literally() -> None:
	"""A {{ }} or {% %} in the model's input reaches the service unchanged and unrendered."""
	bodies: list[Any] = []

	def handler(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		return httpx.Response(200, json={})

	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/x",
		body={"text": "{{ input.text }}", "wrapped": "say: {{ input.text }}"},
	)
	evil = "{{ config.apiKey }}{% for i in (1..3) %}!{% endfor %}"
	await execute_http_tool(
		tool, integration(tool), {"text": evil}, make(handler, config={"apiKey": SECRET})
	)
	assert bodies == [{"text": evil, "wrapped": f"say: {evil}"}]


async def test_header_with_line_break_is_refused() -> None:
	"""A rendered header value containing CR/LF is refused before sending."""
	tool = HttpTool(
		handle="t", description="d", endpoint="/x", headers={"X-Name": "{{ input.name }}"}
	)
	with pytest.raises(ToolError, match="line break"):
		await execute_http_tool(
			tool, integration(tool), {"name": "a\r\nX-Evil: 1"}, make(lambda r: httpx.Response(200))
		)


async def test_form_data_nests_keys_the_stripe_way() -> None:
	"""form-data sends urlencoded metadata[k] and items[0][price], booleans as true/false."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"id": "cus_1"})

	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/customers",
		request_format="form-data",
		body={
			"email": "{{ input.email }}",
			"metadata": "{{ input.metadata }}",
			"items": "{{ input.items }}",
			"live": "{{ input.live }}",
		},
	)
	await execute_http_tool(
		tool,
		integration(tool),
		{
			"email": "a@b.co",
			"metadata": {"k": "v"},
			"items": [{"price": "p_1", "quantity": 2}],
			"live": False,
		},
		make(handler),
	)
	assert seen[0].headers["content-type"] == "application/x-www-form-urlencoded"
	assert parse_qsl(seen[0].content.decode()) == [
		("email", "a@b.co"),
		("metadata[k]", "v"),
		("items[0][price]", "p_1"),
		("items[0][quantity]", "2"),
		("live", "false"),
	]


async def test_form_data_with_a_file_becomes_multipart(tmp_path: Any) -> None:
	"""form-data with files set is sent as multipart/form-data holding fields and the file."""
	store = FileStore(tmp_path)
	saved = await store.save(b"PNGDATA", media_type="image/png", name="pic.png")
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={})

	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/files",
		request_format="form-data",
		body={"purpose": "x", "meta": {"a": 1}},
		files={"file": "{{ input.file }}"},
	)
	await execute_http_tool(
		tool, integration(tool), {"file": saved["file"]}, make(handler, files=store)
	)
	ctype = seen[0].headers["content-type"]
	assert ctype.startswith("multipart/form-data; boundary=")
	body = seen[0].content
	assert b'name="purpose"\r\n\r\nx\r\n' in body
	assert b'name="meta[a]"\r\n\r\n1\r\n' in body
	assert b'name="file"; filename="pic.png"\r\nContent-Type: image/png\r\n\r\nPNGDATA\r\n' in body


async def test_multipart_related_for_google_uploads() -> None:
	"""Google's multipart-related encoder sends a JSON metadata part then the media part."""
	from openmolt_integrations._google import ENCODERS

	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"id": "f1"})

	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/upload",
		request_format="multipart-related",
		body={"metadata": {"name": "{{ input.name }}"}, "media": "{{ input.media }}"},
	)
	with pytest.raises(ValueError, match="multipart-related"):
		integration(tool)  # no engine format of that name: Google's integrations register it
	spec = Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com/v1"),
		tools=[tool],
		encoders=ENCODERS,
	)
	await execute_http_tool(
		tool,
		spec,
		{"name": "n.txt", "media": "data:text/plain;base64,aGVsbG8="},
		make(handler, files=FileStore()),
	)
	assert seen[0].headers["content-type"].startswith("multipart/related; boundary=")
	body = seen[0].content
	assert b'Content-Type: application/json; charset=UTF-8\r\n\r\n{"name": "n.txt"}' in body
	assert b"Content-Type: text/plain\r\n\r\nhello\r\n" in body


async def test_text_and_binary_request_bodies(tmp_path: Any) -> None:
	"""text sends the rendered string; binary sends the bytes of a file reference."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(204)

	text_tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/t",
		request_format="text",
		body="Hello {{ input.who }}",
	)
	out = await execute_http_tool(text_tool, integration(text_tool), {"who": "you"}, make(handler))
	assert out == {"ok": True, "status": 204}
	assert seen[0].content == b"Hello you"
	assert seen[0].headers["content-type"] == "text/plain; charset=utf-8"
	store = FileStore(tmp_path)
	saved = await store.save(b"\x00\x01bin", media_type="application/pdf", name="a.pdf")
	bin_tool = HttpTool(
		handle="b",
		description="d",
		method="PUT",
		endpoint="/b",
		request_format="binary",
		body="{{ input.file }}",
	)
	await execute_http_tool(
		bin_tool, integration(bin_tool), {"file": saved["file"]}, make(handler, files=store)
	)
	assert seen[1].content == b"\x00\x01bin"
	assert seen[1].headers["content-type"] == "application/pdf"


async def test_response_formats_text_xml_and_binary(tmp_path: Any) -> None:
	"""text returns a string, xml a dict, binary a file reference with the bytes stored."""

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path.endswith("/text"):
			return httpx.Response(200, text="plain words")
		if request.url.path.endswith("/xml"):
			return httpx.Response(
				200,
				content=b'<?xml version="1.0"?><ListBucketResult xmlns="http://s3"><Name>b</Name><Contents><Key>a</Key></Contents><Contents><Key>b</Key></Contents><Item id="7">t</Item></ListBucketResult>',
				headers={"content-type": "application/xml"},
			)
		return httpx.Response(
			200,
			content=b"\x89PNG" * 1000,
			headers={
				"content-type": "image/png",
				"content-disposition": 'attachment; filename="cat.png"',
				"Dropbox-API-Result": '{"size": 4000}',
			},
		)

	store = FileStore(tmp_path)
	ctx = make(handler, files=store)
	for handle, fmt, expected in (
		("text", "text", "plain words"),
		(
			"xml",
			"xml",
			{
				"ListBucketResult": {
					"Name": "b",
					"Contents": [{"Key": "a"}, {"Key": "b"}],
					"Item": {"@id": "7", "#text": "t"},
				}
			},
		),
	):
		tool = HttpTool(handle=handle, description="d", endpoint=f"/{handle}", response_format=fmt)
		assert await execute_http_tool(tool, integration(tool), {}, ctx) == expected
	tool = HttpTool(
		handle="img",
		description="d",
		endpoint="/img",
		response_format="binary",
		response_headers=["Dropbox-API-Result"],
	)
	out = await execute_http_tool(tool, integration(tool), {}, ctx)
	assert out["file"].startswith("openmolt-file:")
	assert out["mediaType"] == "image/png" and out["size"] == 4000 and out["name"] == "cat.png"
	assert out["headers"] == {"Dropbox-API-Result": {"size": 4000}}
	assert (await store.open(out["file"])).data == b"\x89PNG" * 1000


async def test_xml_with_a_dtd_or_entities_is_refused() -> None:
	"""XML declaring a DTD or entities (XXE, billion laughs) is refused."""
	bomb = (
		b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><r>&b;</r>'
	)
	xxe = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'
	tool = HttpTool(handle="t", description="d", endpoint="/x", response_format="xml")
	for payload in (bomb, xxe):
		ctx = make(lambda r, p=payload: httpx.Response(200, content=p))
		with pytest.raises(ToolError, match="DTD"):
			await execute_http_tool(tool, integration(tool), {}, ctx)


async def test_non_2xx_gives_a_structured_error_with_the_service_message() -> None:
	"""A 404 raises ToolError with status, the service's message and the trimmed body."""
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	ctx = make(
		lambda r: httpx.Response(
			404, json={"error": {"message": "No such page", "code": "missing"}}
		)
	)
	with pytest.raises(ToolError) as info:
		await execute_http_tool(tool, integration(tool), {}, ctx)
	assert info.value.status_code == 404
	assert "No such page" in info.value.message
	assert info.value.details == {"error": {"message": "No such page", "code": "missing"}}
	big = make(lambda r: httpx.Response(400, text="E" * 50_000))
	with pytest.raises(ToolError) as info:
		await execute_http_tool(tool, integration(tool), {}, big)
	assert len(info.value.details) < 2100 and "trimmed" in info.value.details


async def test_429_is_retried_honouring_retry_after() -> None:
	"""A 429 with Retry-After waits that long, then the retry succeeds."""
	calls = []

	def handler(request: httpx.Request) -> httpx.Response:
		calls.append(1)
		if len(calls) < 3:
			return httpx.Response(429, headers={"Retry-After": "2"}, json={"message": "slow down"})
		return httpx.Response(200, json={"done": True})

	sleeps = Sleeps()
	tool = HttpTool(handle="t", description="d", method="POST", endpoint="/x")
	assert await execute_http_tool(tool, integration(tool), {}, make(handler, sleeps=sleeps)) == {
		"done": True
	}
	assert sleeps.calls == [2.0, 2.0]


async def test_rate_limit_reset_header_and_bounded_attempts() -> None:
	"""X-RateLimit-Reset is honoured; after the attempt budget the error reaches the model."""
	sleeps = Sleeps()

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(503, headers={"X-RateLimit-Reset": "5"}, json={"message": "busy"})

	tool = HttpTool(handle="t", description="d", endpoint="/x")
	with pytest.raises(ToolError) as info:
		await execute_http_tool(tool, integration(tool), {}, make(handler, sleeps=sleeps))
	assert sleeps.calls == [5.0, 5.0, 5.0]
	assert info.value.status_code == 503 and info.value.retryable


async def test_a_wait_longer_than_allowed_is_not_slept() -> None:
	"""A Retry-After beyond the per-wait bound stops retrying at once."""
	sleeps = Sleeps()
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	ctx = make(lambda r: httpx.Response(429, headers={"Retry-After": "3600"}), sleeps=sleeps)
	with pytest.raises(ToolError):
		await execute_http_tool(tool, integration(tool), {}, ctx)
	assert sleeps.calls == []


async def test_5xx_backoff_without_hint_is_exponential() -> None:
	"""Without a hint, waits grow exponentially."""
	sleeps = Sleeps()
	calls = []

	def handler(request: httpx.Request) -> httpx.Response:
		calls.append(1)
		return httpx.Response(502) if len(calls) < 4 else httpx.Response(200, json=[1])

	tool = HttpTool(handle="t", description="d", endpoint="/x")
	assert await execute_http_tool(tool, integration(tool), {}, make(handler, sleeps=sleeps)) == [1]
	assert sleeps.calls == [0.5, 1.0, 2.0]


async def test_credentialed_tool_does_not_follow_a_cross_origin_redirect() -> None:
	"""An API key in a custom header or the query never follows a redirect to another host."""
	hosts: list[str] = []

	def handler(request: httpx.Request) -> httpx.Response:
		hosts.append(request.url.host)
		if request.url.host == "api.example.com":
			return httpx.Response(302, headers={"Location": "https://evil.example.net/steal"})
		return httpx.Response(200, json={})

	from openmolt_core.integrations import (
		CustomCredential,
	)

	tool = HttpTool(handle="t", description="d", endpoint="/x")
	spec = integration(tool).model_copy(
		update={
			"credential_setup": [
				CustomCredential(
					type="custom",
					headers={"X-Api-Key": "{{ config.apiKey }}"},
					query_params={"key": "{{ config.apiKey }}"},
				)
			]
		}
	)
	config = {"apiKey": SECRET}
	auth = make_auth(
		spec, spec.credential_setup[0], config, on_token_refresh=None, http=lambda: None
	)  # type: ignore[arg-type,return-value]
	with pytest.raises(ToolError, match="another origin") as info:
		await execute_http_tool(tool, spec, {}, make(handler, config=config, auth=auth))
	assert hosts == ["api.example.com"]
	assert SECRET not in str(info.value)


async def test_same_origin_redirect_is_followed_and_303_becomes_get() -> None:
	"""A same-origin redirect is followed; 303 turns a POST into a GET without body."""
	seen: list[tuple[str, str, bytes]] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append((request.method, request.url.path, request.content))
		if request.url.path == "/v1/x":
			return httpx.Response(303, headers={"Location": "/v1/result"})
		return httpx.Response(200, json={"r": 1})

	tool = HttpTool(handle="t", description="d", method="POST", endpoint="/x", body={"a": 1})
	assert await execute_http_tool(
		tool, integration(tool), {}, make(handler, config={"apiKey": SECRET})
	) == {"r": 1}
	assert seen == [("POST", "/v1/x", b'{"a":1}'), ("GET", "/v1/result", b"")]


async def test_secrets_are_redacted_from_errors() -> None:
	"""A service echoing the key in its error never shows the key to the model."""

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(401, json={"message": f"bad key {request.headers['authorization']}"})

	tool = HttpTool(
		handle="t",
		description="d",
		endpoint="/x",
		headers={"Authorization": "Bearer {{ config.apiKey }}"},
	)
	with pytest.raises(ToolError) as info:
		await execute_http_tool(
			tool, integration(tool), {}, make(handler, config={"apiKey": SECRET})
		)
	assert SECRET not in info.value.message
	assert SECRET not in json.dumps(info.value.to_dict())
	assert "[redacted]" in info.value.message


async def test_timeout_is_set_and_reported() -> None:
	"""Requests carry the API setup's timeout; a timeout becomes a retryable ToolError."""
	timeouts: list[Any] = []

	def handler(request: httpx.Request) -> httpx.Response:
		timeouts.append(request.extensions["timeout"])
		raise httpx.ReadTimeout("slow", request=request)

	tool = HttpTool(handle="t", description="d", method="POST", endpoint="/x")
	with pytest.raises(ToolError, match="in time") as info:
		await execute_http_tool(tool, integration(tool, timeout=12.0), {}, make(handler))
	assert timeouts[0]["read"] == 12.0
	assert info.value.retryable


async def test_endpoint_query_is_kept_byte_for_byte() -> None:
	"""A bare subresource like S3's ?delete survives, and query params are appended after it."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, content=b"")

	tool = HttpTool(
		handle="t",
		description="d",
		method="POST",
		endpoint="/{{ input.bucket }}?delete",
		query_params={"x-id": "DeleteObjects"},
	)
	await execute_http_tool(tool, integration(tool), {"bucket": "b"}, make(handler))
	assert seen[0].url.raw_path == b"/v1/b?delete&x-id=DeleteObjects"


@pytest.mark.parametrize(
	("status", "is_file"),
	[(200, True), (203, True), (206, True), (201, False), (202, False), (204, False), (205, False)],
)
async def test_an_empty_download_is_an_empty_file_and_no_content_is_none(
	tmp_path: Any, status: int, is_file: bool
) -> None:
	"""A binary tool that downloaded a 0-byte file (Dropbox, Drive, S3 answer 200 with an empty
	body) returned ``{"ok": true}`` and stored nothing: an agent told to pass the file on had no
	reference. The empty body of a status whose body is the resource (200, 203, 206: RFC 9110)
	is an empty file; an empty 202 (not ready), 201, 204 or 205 holds none, and says its status."""

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(status, content=b"", headers={"content-type": "text/csv"})

	store = FileStore(tmp_path)
	tool = HttpTool(handle="get", description="d", endpoint="/get", response_format="binary")
	out = await execute_http_tool(tool, integration(tool), {}, make(handler, files=store))
	if not is_file:
		assert out == {"ok": True, "status": status}
		return
	assert out["file"].startswith("openmolt-file:") and out["size"] == 0
	assert out["mediaType"] == "text/csv"
	assert (await store.open(out["file"])).data == b""


async def test_a_head_request_downloads_no_file(tmp_path: Any) -> None:
	"""A HEAD's 200 has no body by definition (RFC 9110 9.3.2): it is no empty file."""

	def handler(request: httpx.Request) -> httpx.Response:
		assert request.method == "HEAD"
		return httpx.Response(200, headers={"content-type": "image/png", "content-length": "9"})

	store = FileStore(tmp_path)
	tool = HttpTool(
		handle="head", description="d", method="HEAD", endpoint="/x", response_format="binary"
	)
	out = await execute_http_tool(tool, integration(tool), {}, make(handler, files=store))
	assert out == {"ok": True, "status": 200}
