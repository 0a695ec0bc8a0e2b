"""Cookie parameters of imported operations reach the service, beside the credential's cookie.

A local server on 127.0.0.1 records every header line it receives, so the tests read the
``Cookie`` header exactly as it went over the wire (tests/ecosystem/test_openapi_prism.py checks
the same requests against Prism).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

from openmolt import OpenMolt
from openmolt_core.integrations import ApiSetup, CustomCredential, HttpTool, Integration
from openmolt_core.integrations.openapi import from_openapi, to_json, to_module
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

KEY = "ck-live-7f3a9b2c4d"


class Recorder:
	"""A tiny HTTP server: records each request's header lines, answers ``answer(lines)``."""

	def __init__(self) -> None:
		self.requests: list[list[tuple[str, str]]] = []
		self.answer: Callable[[list[tuple[str, str]]], tuple[int, bytes]] = lambda _: (200, b"{}")
		self.url = ""

	def cookies(self, index: int = -1) -> list[str]:
		"""The values of the Cookie header lines of a request (one, unless something is wrong)."""
		return [v for k, v in self.requests[index] if k.lower() == "cookie"]

	async def serve(self, stream: SocketStream) -> None:
		async with stream:
			data = b""
			while b"\r\n\r\n" not in data:
				chunk = await stream.receive()
				if not chunk:
					return
				data += chunk
			head, _, rest = data.partition(b"\r\n\r\n")
			lines = head.decode("latin-1").split("\r\n")[1:]
			headers = [
				(k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in lines)
			]
			length = int(next((v for k, v in headers if k.lower() == "content-length"), "0"))
			while len(rest) < length:
				rest += await stream.receive()
			self.requests.append(headers)
			status, body = self.answer(headers)
			await stream.send(
				f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
				f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
				+ body
			)


@pytest.fixture
async def server() -> AsyncIterator[Recorder]:
	"""A `Recorder` listening on 127.0.0.1 (a free port) for the test's length."""
	recorder = Recorder()
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	recorder.url = f"http://127.0.0.1:{port}"
	async with anyio.create_task_group() as tg:
		tg.start_soon(listener.serve, recorder.serve)
		yield recorder
		tg.cancel_scope.cancel()
	await listener.aclose()


def cookie_document(url: str, *, key_in_cookie: bool = True) -> dict[str, Any]:
	"""An operation with cookie parameters of each kind, and an API key sent as a cookie."""
	params = [
		{"name": "session", "in": "cookie", "required": True, "schema": {"type": "string"}},
		{"name": "theme", "in": "cookie", "schema": {"type": "string"}},
		{"name": "debug", "in": "cookie", "schema": {"type": "boolean"}},
		{
			"name": "ids",
			"in": "cookie",
			"explode": False,
			"schema": {"type": "array", "items": {"type": "integer"}},
		},
		{
			"name": "prefs",
			"in": "cookie",
			"schema": {"type": "object", "additionalProperties": {"type": "string"}},
		},
		{"name": "q", "in": "query", "schema": {"type": "string"}},
	]
	schemes = (
		{"key": {"type": "apiKey", "in": "cookie", "name": "sid"}}
		if key_in_cookie
		else {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}
	)
	return {
		"openapi": "3.1.0",
		"info": {"title": "Cookies", "version": "1"},
		"servers": [{"url": url}],
		"security": [{"key": []}],
		"components": {"securitySchemes": schemes},
		"paths": {
			"/items": {
				"get": {
					"operationId": "listItems",
					"parameters": params,
					"responses": {
						"200": {
							"description": "ok",
							"content": {"application/json": {"schema": {"type": "object"}}},
						}
					},
				}
			}
		},
	}


async def run_tool(
	integration: Integration, config: dict[str, Any], **arguments: Any
) -> dict[str, Any]:
	"""Call the integration's first tool once through an agent; the result the model saw."""
	om = OpenMolt(entry_points=False, integrations={"api": config})
	om.register_integration("api", integration)
	handle = integration.tools[0].handle
	model = ScriptedModel([call_tool(f"api.{handle}", **arguments), finish(result="done")])
	binding: dict[str, Any] = {"integration": "api"}
	if integration.credential_setup:
		binding["credential"] = {"type": integration.credential_setup[0].type}
	agent = om.create_agent(name="A", model=model, integrations=[binding])
	await agent.run("go")
	await om.aclose()
	result: dict[str, Any] = json.loads(model.requests[1].messages[-1].content)["results"][0]
	return result


def imported(url: str, **options: Any) -> Integration:
	return from_openapi(
		cookie_document(url, **options), id="api", allow_internal_hosts=["127.0.0.1"]
	)


async def test_cookie_parameters_become_inputs_sent_in_the_cookie_header(server: Recorder) -> None:
	"""session, ids (unexploded), an exploded object and a boolean: each its form-style pair,
	values percent-encoded, after the credential's cookie; no cookie was sent before (the
	parameters were dropped with a note, a required one too)."""
	integration = imported(server.url)
	(tool,) = integration.tools
	assert {"session", "theme", "debug", "ids", "prefs", "q"} <= set(
		tool.input_schema["properties"]
	)
	assert "session" in tool.input_schema["required"]
	assert "is not sent" not in integration.docs
	result = await run_tool(
		integration,
		{"apiKey": KEY},
		session='a b;c=d,e"f\\g',
		ids=[1, 2],
		prefs={"lang": "nb", "tz": "Europe/Oslo"},
		debug=True,
	)
	assert result["ok"] is True, result
	assert server.cookies() == [
		f"sid={KEY}; session=a%20b%3Bc%3Dd%2Ce%22f%5Cg; debug=true; ids=1,2; "
		"lang=nb; tz=Europe%2FOslo"
	]


async def test_unset_cookie_parameters_are_left_out(server: Recorder) -> None:
	"""Only the cookies the call set are sent: no 'theme=' or 'ids=' for the ones not given,
	and an empty value or an empty array is no cookie either."""
	result = await run_tool(imported(server.url), {"apiKey": KEY}, session="s1", theme="", ids=[])
	assert result["ok"] is True, result
	assert server.cookies() == [f"sid={KEY}; session=s1"]


async def test_cookie_parameters_are_the_only_cookie_without_a_cookie_credential(
	server: Recorder,
) -> None:
	"""An API key in a header: the Cookie header holds the parameters alone."""
	result = await run_tool(
		imported(server.url, key_in_cookie=False), {"apiKey": KEY}, session="s1", theme="dark"
	)
	assert result["ok"] is True, result
	assert server.cookies() == ["session=s1; theme=dark"]
	assert dict(server.requests[-1])["X-Key"] == KEY


async def test_a_credential_cookie_and_a_tool_cookie_header_are_both_sent(server: Recorder) -> None:
	"""A hand-written tool's Cookie header and a custom credential's Cookie: the credential
	replaced the tool's header (the service saw only 'sid=...'); now both are sent, once each,
	also when the request is retried."""
	calls = 0

	def answer(_: list[tuple[str, str]]) -> tuple[int, bytes]:
		nonlocal calls
		calls += 1
		return (503, b"{}") if calls == 1 else (200, b"{}")

	server.answer = answer
	integration = Integration(
		id="api",
		name="Api",
		api_setup=ApiSetup(base_url=server.url, allow_internal_hosts=["127.0.0.1"]),
		credential_setup=[
			CustomCredential(type="custom", headers={"Cookie": "sid={{ config.apiKey }}"})
		],
		tools=[
			HttpTool(
				handle="get",
				description="Get.",
				endpoint="/x",
				headers={"Cookie": "consent=yes; region={{ input.region }}"},
				cookies={"page": "{{ input.page }}"},
				input_schema={
					"type": "object",
					"properties": {"region": {"type": "string"}, "page": {"type": "integer"}},
				},
			)
		],
	)
	result = await run_tool(integration, {"apiKey": KEY}, region="eu", page=2)
	assert result["ok"] is True, result
	assert len(server.requests) == 2
	for index in (0, 1):
		assert server.cookies(index) == [f"sid={KEY}; consent=yes; region=eu; page=2"]


async def test_a_cookie_the_input_names_like_the_credential_s_cannot_replace_it(
	server: Recorder,
) -> None:
	"""An exploded object cookie whose key is the credential's cookie name ('sid'): the
	credential's value is sent, the model's is not."""
	result = await run_tool(
		imported(server.url), {"apiKey": KEY}, session="s1", prefs={"sid": "forged", "a": "1"}
	)
	assert result["ok"] is True, result
	assert server.cookies() == [f"sid={KEY}; session=s1; a=1"]


async def test_a_cookie_parameter_named_like_the_api_key_cookie_is_the_credential_s(
	server: Recorder,
) -> None:
	"""A document that also declares the key's cookie ('sid') as a parameter: it is no tool
	input (the model was asked for the key, and its value would have gone beside the real one);
	the docs say the credential sends it."""
	document = cookie_document(server.url)
	document["paths"]["/items"]["get"]["parameters"].append(
		{"name": "sid", "in": "cookie", "required": True, "schema": {"type": "string"}}
	)
	integration = from_openapi(document, id="api", allow_internal_hosts=["127.0.0.1"])
	(tool,) = integration.tools
	assert "sid" not in tool.input_schema["properties"] and "sid" not in tool.cookies
	assert "cookie parameter 'sid'" in integration.docs and "credential" in integration.docs
	result = await run_tool(integration, {"apiKey": KEY}, session="s1")
	assert result["ok"] is True, result
	assert server.cookies() == [f"sid={KEY}; session=s1"]


async def test_the_credential_s_cookie_is_never_logged_or_shown_unmasked(
	server: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
	"""Every log record of the call (httpx and httpcore at DEBUG too) and the error the model
	sees when the service echoes the Cookie header hold the key masked, never raw."""
	server.answer = lambda headers: (
		400,
		json.dumps({"error": f"bad cookie: {dict(headers).get('Cookie')}"}).encode(),
	)
	caplog.set_level(logging.DEBUG)
	result = await run_tool(imported(server.url), {"apiKey": KEY}, session="s1")
	assert server.cookies() == [f"sid={KEY}; session=s1"]
	assert result["ok"] is False and "session=s1" in json.dumps(result)
	assert KEY not in json.dumps(result)
	assert caplog.records and not any(KEY in r.getMessage() for r in caplog.records)


def test_cookie_parameters_survive_the_module_and_json_outputs(tmp_path: Path) -> None:
	"""The written module and JSON carry the tool's cookies."""
	integration = imported("http://127.0.0.1:4010")
	(tool,) = integration.tools
	assert tool.cookies["session"] == "{{ input.session }}"
	assert json.loads(to_json(integration))["tools"][0]["cookies"] == tool.cookies
	source = to_module(integration)
	namespace: dict[str, Any] = {}
	exec(compile(source, "cookies_module.py", "exec"), namespace)
	assert namespace["INTEGRATION"] == integration


def test_a_cookie_style_the_engine_does_not_write_is_noted_not_sent() -> None:
	"""OpenAPI 3.2's 'cookie' style (values sent unencoded) is left out with a note; a style no
	cookie takes (simple) is refused naming the parameter."""
	document = cookie_document("https://api.example.com")
	params = document["paths"]["/items"]["get"]["parameters"]
	params[1] = {**params[1], "style": "cookie"}
	integration = from_openapi(document, id="api")
	assert "theme" not in integration.tools[0].cookies
	assert "cookie parameter 'theme'" in integration.docs and "'cookie' style" in integration.docs
	params[1] = {**params[1], "style": "simple"}
	with pytest.raises(Exception, match=r"parameters/1/style: 'simple' is not a style of a cookie"):
		from_openapi(document, id="api")


@pytest.mark.parametrize("name", ["a b", "a;b", "a=b", ""])
def test_a_tool_cookie_name_that_is_no_token_is_refused(name: str) -> None:
	"""A hand-written tool's cookie name must be a token, or it would add cookies of its own."""
	with pytest.raises(ValueError, match="cookie name"):
		HttpTool(handle="t", description="T.", endpoint="/x", cookies={name: "v"})


async def test_cookie_values_from_the_input_cannot_add_headers_or_cookies(
	server: Recorder,
) -> None:
	"""A value with a line break or '; admin=1' is one percent-encoded cookie value."""
	result = await run_tool(
		imported(server.url), {"apiKey": KEY}, session="x\r\nX-Evil: 1", theme="t; admin=1"
	)
	assert result["ok"] is True, result
	assert server.cookies() == [f"sid={KEY}; session=x%0D%0AX-Evil%3A%201; theme=t%3B%20admin%3D1"]
	assert all(k.lower() != "x-evil" for k, _ in server.requests[-1])


async def test_the_httpx_mock_sees_one_cookie_header(monkeypatch: pytest.MonkeyPatch) -> None:
	"""The request httpx sends holds exactly one Cookie header (no second line a server might
	read instead)."""
	sent: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(200, json={})

	from openmolt_core.integrations import _ssrf

	async def resolve(host: str, port: int) -> list[str]:
		return ["93.184.216.34"]

	monkeypatch.setattr(_ssrf, "resolve_host", resolve)
	integration = from_openapi(cookie_document("https://api.example.com"), id="api")
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		integrations={"api": {"apiKey": KEY}},
	)
	om.register_integration("api", integration)
	model = ScriptedModel([call_tool("api.listItems", session="s1"), finish(result="ok")])
	binding = {"integration": "api", "credential": {"type": "custom"}}
	await om.create_agent(name="A", model=model, integrations=[binding]).run("go")
	await om.aclose()
	(request,) = sent
	assert request.headers.get_list("cookie") == [f"sid={KEY}; session=s1"]
