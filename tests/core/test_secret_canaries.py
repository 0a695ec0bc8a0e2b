"""Canary secrets of every credential kind never show, on every failure path, with DEBUG logging.

Agents run against a server on 127.0.0.1 that echoes what it receives (headers, query) back in
error bodies and headers, redirects to another origin, hangs, and issues OAuth2 tokens; a
function tool raises with a secret in its message. With the ``openmolt``, ``httpx``,
``httpcore``, ``aiohttp``, ``hpack`` and ``botocore`` loggers at DEBUG, no canary may appear in any log
record, event, error, state, ``repr``/``str``, or message sent to the model; nor in the records of
a logger no list names (an SDK's, asyncio's, the application's).
"""

import base64
import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.events import EVENT_NAMES
from openmolt_core.integrations import (
	ApiSetup,
	BasicCredential,
	BearerCredential,
	Credential,
	CustomCredential,
	FunctionTool,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations._client import PooledTransport
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext
from openmolt_integrations._aws import AUTHS

pytestmark = pytest.mark.anyio

CANARIES = {
	"bearer": "CANARYbearer0001",
	"header": "CANARYheader0002",
	"query": "CANARYquery00003",
	"basic": "CANARYbasicpw004",
	"oauth_refresh": "CANARYrefresh005",
	"oauth_secret": "CANARYclientsec6",
	"oauth_new": "CANARYrefreshed7",
	"oauth_rotated": "CANARYrotated008",
	"aws_secret": "CANARYawssecret9",
	"aws_session": "CANARYawssession10",
}
BASIC_TOKEN = base64.b64encode(f"AC123:{CANARIES['basic']}".encode()).decode()
LOGGERS = ["openmolt", "httpx", "httpcore", "aiohttp", "hpack", "botocore"]


def _response(status: int, body: bytes, headers: dict[str, str]) -> bytes:
	lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
	lines += [f"{k}: {v}" for k, v in headers.items()]
	return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _handle(stream: SocketStream) -> None:
	raw = b""
	while b"\r\n\r\n" not in raw:
		chunk = await stream.receive()
		raw += chunk
	head = raw.split(b"\r\n\r\n")[0].decode("latin-1")
	target = head.split(" ")[1]
	echo = head.replace("\r\n", " | ")
	if target.startswith("/token"):
		tokens = {
			"access_token": CANARIES["oauth_new"],
			"refresh_token": CANARIES["oauth_rotated"],
			"expires_in": 3600,
		}
		await stream.send(
			_response(200, json.dumps(tokens).encode(), {"Content-Type": "application/json"})
		)
	elif target.startswith("/fail"):
		body = json.dumps({"error": {"message": f"bad request: {echo}"}}).encode()
		await stream.send(
			_response(500, body, {"Content-Type": "application/json", "X-Echo": echo[:400]})
		)
	elif target.startswith("/denied"):
		await stream.send(_response(401, echo.encode(), {"WWW-Authenticate": echo[:200]}))
	elif target.startswith("/away"):
		await stream.send(_response(302, b"", {"Location": f"http://other.example/?{echo[:200]}"}))
	elif target.startswith("/hang"):
		await anyio.sleep(30)
	else:
		body = json.dumps({"seen": echo}).encode()
		await stream.send(
			_response(200, body, {"Content-Type": "application/json", "X-Seen": echo[:400]})
		)


@asynccontextmanager
async def echo_server() -> AsyncIterator[int]:
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")

	async def serve(stream: SocketStream) -> None:
		async with stream:
			try:
				await _handle(stream)
			except (anyio.BrokenResourceError, anyio.EndOfStream, anyio.ClosedResourceError):
				pass

	async with listener, anyio.create_task_group() as group:
		group.start_soon(listener.serve, serve)
		try:
			yield listener.extra(anyio.abc.SocketAttribute.local_port)
		finally:
			group.cancel_scope.cancel()


def credential(kind: str, port: int) -> tuple[Credential, dict[str, Any]]:
	if kind == "bearer":
		return BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}
		), {"apiKey": CANARIES["bearer"]}
	if kind == "header":
		return CustomCredential(type="custom", headers={"X-Api-Key": "{{ config.apiKey }}"}), {
			"apiKey": f"  {CANARIES['header']}\n"
		}
	if kind == "query":
		return CustomCredential(type="custom", query_params={"key": "{{ config.token }}"}), {
			"token": CANARIES["query"]
		}
	if kind == "basic":
		return BasicCredential(
			type="basic", username="{{ config.sid }}", password="{{ config.pw }}"
		), {
			"sid": "AC123",
			"pw": CANARIES["basic"],
		}
	if kind == "oauth2":
		return OAuth2Credential(type="oauth2", token_url=f"http://127.0.0.1:{port}/token"), {
			"accessToken": "expired-token-value",
			"expiryDate": "2000-01-01T00:00:00Z",
			"refreshToken": CANARIES["oauth_refresh"],
			"clientId": "client-id",
			"clientSecret": CANARIES["oauth_secret"],
		}
	pytest.importorskip("botocore")
	from openmolt_integrations._aws import sigv4_credential

	return sigv4_credential("execute-api", "us-east-1"), {
		"accessKeyId": "AKIDEXAMPLE",
		"secretAccessKey": CANARIES["aws_secret"],
		"sessionToken": CANARIES["aws_session"],
	}


async def explode(i: dict[str, Any], context: ToolContext) -> Any:
	secret = next(iter(v for v in context.config.values() if isinstance(v, str) and "CANARY" in v))
	raise RuntimeError(f"boom with {secret} inside")


def integration(kind: str, port: int) -> tuple[Integration, dict[str, Any]]:
	cred, config = credential(kind, port)
	tools: list[Any] = [
		HttpTool(handle=name, description="d", endpoint=f"/{name}")
		for name in ("ok", "fail", "denied", "away", "hang")
	]
	tools.append(
		HttpTool(handle="post", description="d", method="POST", endpoint="/fail", body={"k": "v"})
	)
	tools.append(
		HttpTool(handle="bad", description="d", endpoint="/x", headers={"X-Bad": "{{ input.v }}"})
	)
	tools.append(FunctionTool(handle="explode", description="d", function=explode))
	spec = Integration(
		name="Echo",
		api_setup=ApiSetup(base_url=f"http://127.0.0.1:{port}", timeout=0.5),
		credential_setup=[cred],
		tools=tools,
		auths=AUTHS,
	)
	return spec, config


def texts_of_records(records: list[logging.LogRecord]) -> list[str]:
	formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
	out = []
	for record in records:
		out.append(formatter.format(record))
		out.append(repr({k: v for k, v in record.__dict__.items() if k != "exc_info"}))
		if record.exc_info:
			out.append(formatter.formatException(record.exc_info))
	return out


@pytest.mark.parametrize("fast", [False, True], ids=["httpx", "aiohttp"])
@pytest.mark.parametrize("kind", ["bearer", "header", "query", "basic", "oauth2", "aws_sigv4"])
async def test_no_canary_anywhere_on_the_failure_paths(
	kind: str, fast: bool, caplog: pytest.LogCaptureFixture
) -> None:
	"""Every failure path of every credential kind, DEBUG on: the secrets never show."""
	for name in LOGGERS:
		caplog.set_level(logging.DEBUG, logger=name)
	caplog.set_level(logging.DEBUG)
	seen: list[str] = []
	async with echo_server() as port:
		spec, config = integration(kind, port)
		client = httpx.AsyncClient(transport=PooledTransport(fast=fast))
		om = OpenMolt(entry_points=False, http_client=client)
		om.register_integration("echo", spec)
		script = [
			call_tool("echo.ok"),
			call_tool("echo.fail"),
			call_tool("echo.post"),
			call_tool("echo.denied"),
			call_tool("echo.away"),
			call_tool("echo.hang"),
			call_tool("echo.bad", v="x\x0by"),
			call_tool("echo.explode"),
			call_tool("echo.nope"),
			finish(result="done"),
		]
		model = ScriptedModel(script)
		agent = om.create_agent(
			name="Canary",
			model=model,
			integrations=[{"integration": "echo", "credential": {"config": config}}],
		)
		for event in EVENT_NAMES:
			if event != "schedule":
				agent.on(event, lambda e: seen.append(repr(e)))
		result = await agent.run("go")
		seen += [repr(result), str(result), repr(result.state), json.dumps(result.output)]
		seen += [repr(m) for request in model.requests for m in request.messages]
		seen += [repr(agent), str(agent), repr(om)]
		for bound in agent._tools.values():
			seen += [repr(bound), str(bound), repr(bound.context), str(bound.context)]
			seen += [repr(bound.context.auth), str(bound.integration)]
		await om.aclose()
		await client.aclose()
	seen += texts_of_records(caplog.records)
	assert result.output == {"result": "done"}
	assert any("HTTP Request" in t for t in seen)  # httpx's INFO lines were captured
	if not fast:
		assert any("receive_response_headers" in t for t in seen)  # and httpcore's DEBUG trace
	assert any("the tool failed: RuntimeError" in t for t in seen)
	for text in seen:
		for name, canary in [*CANARIES.items(), ("basic token", BASIC_TOKEN)]:
			assert canary not in text, (kind, name, text[:500])


async def test_the_filter_masks_tracebacks_and_arguments_of_any_record(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A record's args, traceback and stack are masked for any live redactor's secrets."""
	from openmolt_core.secrets import Redactor

	keep = Redactor(frozenset({"CANARYfilter0011"}))
	log = logging.getLogger("httpx")
	caplog.set_level(logging.DEBUG, logger="httpx")
	try:
		raise ValueError("failed with CANARYfilter0011")
	except ValueError:
		log.debug("url %s", "https://x/?k=CANARYfilter0011", exc_info=True, stack_info=True)
	later = logging.getLogger("httpcore.made_later")
	Redactor(frozenset({"CANARYfilter0011"}))  # a new redactor installs on new loggers too
	later.warning("value=%r", {"k": "CANARYfilter0011"})
	text = "\n".join(texts_of_records(caplog.records)) + caplog.text
	assert "CANARYfilter0011" not in text and text.count("[redacted]") >= 3
	del keep


@pytest.mark.parametrize(
	"name",
	[
		"httpx2",  # the MCP SDK's HTTP client: the request line, with its query, at INFO
		"httpcore2.http11",  # and its DEBUG trace of headers
		"a2a.server.events.event_queue_v2",  # logs each dequeued event whole at DEBUG
		"dbos",
		"sqlalchemy.engine.Engine",
		"uvicorn.error",
		"asyncio",  # "Task exception was never retrieved", with the exception
		"an.application.module",
		"",  # the root logger
	],
)
def test_a_logger_no_list_names_is_masked_too(name: str, caplog: pytest.LogCaptureFixture) -> None:
	"""Every logger of the process is masked, not only those of `LOGGERS`: unknown is unsafe."""
	from openmolt_core.secrets import Redactor

	keep = Redactor(frozenset({"CANARYanylogger12"}))
	log = logging.getLogger(name or None)
	caplog.set_level(logging.DEBUG, logger=name or None)
	log.info("HTTP Request: GET %s", "https://mcp.example/mcp?api_key=CANARYanylogger12")
	try:
		raise ValueError("refused CANARYanylogger12")
	except ValueError:
		log.exception("the call failed")
	log.warning("a format its arguments do not fit %d", "CANARYanylogger12")
	assert len([r for r in caplog.records if r.name == (name or "root")]) == 3
	text = "\n".join(texts_of_records(caplog.records)) + caplog.text
	assert "CANARYanylogger12" not in text and text.count("[redacted]") >= 3
	del keep


async def test_the_mcp_sdks_http_client_logs_no_key(caplog: pytest.LogCaptureFixture) -> None:
	"""httpx2 (the MCP SDK's client) logs each request line at INFO: the key in it is masked."""
	httpx2 = pytest.importorskip("httpx2")
	from openmolt_core.secrets import Redactor

	keep = Redactor(frozenset({"CANARYmcpquery13"}))
	caplog.set_level(logging.DEBUG)
	transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json={}))
	async with httpx2.AsyncClient(transport=transport) as client:
		await client.get("https://mcp.example/mcp", params={"api_key": "CANARYmcpquery13"})
	lines = [r for r in caplog.records if r.name == "httpx2"]
	assert lines and "HTTP Request: GET https://mcp.example/mcp?api_key=" in caplog.text
	assert "CANARYmcpquery13" not in caplog.text + "\n".join(texts_of_records(lines))
	del keep


@pytest.mark.parametrize("name", ["openmolt", "httpx", "an.application.module"])
def test_a_record_that_shows_no_secret_is_left_as_it_was(
	name: str, caplog: pytest.LogCaptureFixture
) -> None:
	"""Masking every logger keeps the records it need not touch: format, arguments, traceback."""
	from openmolt_core.secrets import Redactor

	keep = Redactor(frozenset({"CANARYanylogger12"}))
	caplog.set_level(logging.DEBUG, logger=name)
	try:
		raise ValueError("nothing secret")
	except ValueError:
		logging.getLogger(name).exception("user %s tried %d times", "ann", 3)
	(record,) = [r for r in caplog.records if r.name == name]
	assert (record.msg, record.args) == ("user %s tried %d times", ("ann", 3))
	assert record.exc_info is not None and record.exc_info[0] is ValueError
	del keep


def test_secret_holders_mask_their_reprs() -> None:
	"""ToolContext, IntegrationBinding and credential models never print secret values."""
	from openmolt_core.integrations.binding import IntegrationBinding

	ctx = ToolContext(agent="a", integration="i", config={"apiKey": CANARIES["bearer"]})
	binding = IntegrationBinding(integration="i", config={"apiKey": CANARIES["bearer"]})
	cred = OAuth2Credential(
		type="oauth2",
		token_url="https://t.example/token",
		client_secret=CANARIES["oauth_secret"],
		refresh_token=CANARIES["oauth_refresh"],
	)
	for text in (repr(ctx), str(ctx), repr(binding), str(binding), repr(cred), str(cred)):
		assert all(c not in text for c in CANARIES.values()), text
	assert "apiKey" in repr(ctx)
	assert dataclasses.fields(binding)  # still a dataclass


async def test_a_tool_error_for_a_bad_header_does_not_echo_the_value() -> None:
	"""Refusing a header with a control character names the header, not its (secret) value."""
	from openmolt_core.integrations.http import execute_http_tool

	spec, _ = integration("header", 9)
	tool = next(t for t in spec.tools if getattr(t, "handle", "") == "bad")
	ctx = ToolContext(
		agent="a",
		integration="echo",
		config={},
		http=lambda: httpx.AsyncClient(
			transport=httpx.MockTransport(lambda r: httpx.Response(200))
		),
	)
	with pytest.raises(ToolError) as info:
		await execute_http_tool(tool, spec, {"v": f"{CANARIES['header']}\x1b"}, ctx)
	assert CANARIES["header"] not in info.value.message and "X-Bad" in info.value.message


# every secret kind the instance knows, in every spelling, on every surface -----------------

KINDS = {
	"provider": "sk-CANARYprov+/=\u00e9 ~01",  # llm_providers: + / = non-ASCII and a space
	"provider_env": "CANARYenvprov+/=0123",  # OPENMOLT_ANTHROPIC_API_KEY
	"integration": "CANARY/integ+key=77",  # an integration's credential config
	"mcp_header": "CANARYmcpHeader+99",  # an MCP server's header, through ${VAR}
	"mcp_url": "CANARYmcpUrlPath-55",  # in an MCP server's URL path, through ${VAR}
	"mcp_query": "CANARYmcpQuery/=66",  # in its query (?api_key=...)
	"mcp_arg": "CANARYmcpArg+/=42",  # a stdio server's argument, through ${VAR}
	"mcp_env": "CANARYmcpEnv=88",  # a stdio server's env
	"webhook": "CANARYwebhook-secret+5",  # openmolt serve: a webhook's signing secret
	"bot": "123456:CANARYbot-token_ABC",  # openmolt serve: a Telegram bot token
}


def every_spelling(secret: str) -> dict[str, str]:
	"""The spellings a secret may take on the way out: none of them may show anywhere."""
	from urllib.parse import quote, quote_plus

	out = {"raw": secret}
	for safe in ("", "/"):
		for name, encoded in (
			(f"quote[{safe}]", quote(secret, safe=safe)),
			(f"quote_plus[{safe}]", quote_plus(secret, safe=safe)),
		):
			out[name] = encoded
			out[f"{name} lower"] = __import__("re").sub(
				r"%[0-9A-F]{2}", lambda m: m[0].lower(), encoded
			)
	data = secret.encode()
	for name, encode in (("b64", base64.b64encode), ("b64url", base64.urlsafe_b64encode)):
		out[name] = encode(data).decode()
		out[f"{name} nopad"] = encode(data).decode().rstrip("=")
		for user in ("u", "us", "user"):  # HTTP Basic's user:secret, at each alignment
			out[f"{name} {user}:"] = encode(f"{user}:{secret}".encode()).decode()
	out["json"] = json.dumps(secret)[1:-1]
	out["json raw"] = json.dumps(secret, ensure_ascii=False)[1:-1]
	return out


def leaky_integration() -> Integration:
	async def leak(i: dict[str, Any], context: ToolContext) -> Any:
		"""Return every secret in every spelling, and send them in a URL (httpx logs it)."""
		http = context.http()
		from urllib.parse import quote

		await http.get(
			f"https://api.example/bot{KINDS['bot']}/getMe",
			params={k: v for k, v in KINDS.items()},
		)
		await http.get(f"https://api.example/{quote(KINDS['provider'], safe='')}/x")
		logging.getLogger("mcp.client.stdio").debug("started with args %s", [KINDS["mcp_arg"]])
		logging.getLogger("mcp.client.made_late").info("env %r", {"K": KINDS["mcp_env"]})
		return {kind: every_spelling(secret) for kind, secret in KINDS.items()}

	return Integration(
		name="Leaky",
		api_setup=ApiSetup(base_url="https://api.example"),
		credential_setup=[
			BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
		],
		tools=[FunctionTool(handle="leak", description="d", function=leak)],
	)


async def _logs_of(store: Any, run_id: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
	"""What ``openmolt logs`` prints of the store and of the run, as text and as JSON."""
	import contextlib
	import io

	from openmolt_core.cli import main as openmolt_main

	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(store))
	out = []
	for args in (["logs"], ["logs", run_id], ["logs", run_id, "--json"], ["logs", "--json"]):
		printed = io.StringIO()

		def run(args: list[str] = args, printed: io.StringIO = printed) -> int:
			with contextlib.redirect_stdout(printed):
				return openmolt_main(args)

		assert await anyio.to_thread.run_sync(run) == 0
		out.append(printed.getvalue())
	assert "tool:response" in out[1]
	return out


def stored_text(path: Any) -> str:
	"""Every value of every table of a SQLite file, as text."""
	import sqlite3

	out = []
	with sqlite3.connect(path) as db:
		tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
		for table in tables:
			out += [repr(row) for row in db.execute(f"SELECT * FROM {table}")]
	return "\n".join(out)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the viewer's server runs on asyncio
async def test_every_secret_kind_in_every_spelling_never_shows_anywhere(
	tmp_path: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""Provider keys, credentials, MCP and bot secrets returned by a tool: masked everywhere.

	The run store, the events, the viewer's JSON, the OpenTelemetry spans (contents captured),
	what the model reads, and the httpx, httpcore, mcp and openmolt logs at DEBUG.
	"""
	pytest.importorskip("openmolt_otel")
	pytest.importorskip("openmolt_ui")
	pytest.importorskip("openmolt_mcp")
	pytest.importorskip("openmolt_serve")
	from opentelemetry.sdk.trace import TracerProvider
	from opentelemetry.sdk.trace.export import SimpleSpanProcessor
	from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

	from openmolt_core.runstore import RunStore
	from openmolt_core.triggers import TelegramChannel, WebhookTrigger
	from openmolt_mcp import MCP
	from openmolt_otel import CAPTURE_ENV, Telemetry
	from openmolt_serve.telegram import TelegramBot
	from openmolt_serve.webhooks import Webhook
	from openmolt_ui import Viewer

	for name in [*LOGGERS, "mcp"]:
		caplog.set_level(logging.DEBUG, logger=name)
	caplog.set_level(logging.DEBUG)
	monkeypatch.setenv(CAPTURE_ENV, "true")
	monkeypatch.setenv("OPENMOLT_ANTHROPIC_API_KEY", KINDS["provider_env"])
	for var in ("mcp_header", "mcp_url", "mcp_query", "mcp_arg"):
		monkeypatch.setenv(f"CANARY_{var.upper()}", KINDS[var])

	def api(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, json={"ok": True, "result": {"saw": str(request.url)}})

	exporter = InMemorySpanExporter()
	tracing = TracerProvider()
	tracing.add_span_processor(SimpleSpanProcessor(exporter))
	store = tmp_path / "runs.db"
	om = OpenMolt(
		{"openai": {"api_key": KINDS["provider"]}},
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		run_store=store,
	)
	Telemetry(tracer_provider=tracing).instrument(om)
	om.register_integration("leaky", leaky_integration())
	om.register_integration(
		"remote",
		MCP.http(
			"https://mcp.example/${CANARY_MCP_URL}/mcp?api_key=${CANARY_MCP_QUERY}",
			headers={"Authorization": "Bearer ${CANARY_MCP_HEADER}"},
		),
	)
	om.register_integration(
		"stdio",
		MCP.stdio(
			"/nonexistent/server", ["--token", "${CANARY_MCP_ARG}"], env={"K": KINDS["mcp_env"]}
		),
	)
	# an agent bound to the MCP servers (never run): their secrets join the instance's set
	om.create_agent(name="Binder", model=ScriptedModel([]), integrations=["remote", "stdio"])
	model = ScriptedModel([call_tool("leaky.leak"), finish(result="done")])
	agent = om.create_agent(
		name="Leaker",
		model=model,
		integrations=[
			{"integration": "leaky", "credential": {"config": {"apiKey": KINDS["integration"]}}}
		],
	)
	Webhook.create(agent, WebhookTrigger(scheme="github", secret=KINDS["webhook"]))
	bot = TelegramBot(
		agent,
		TelegramChannel(type="telegram", token=KINDS["bot"], allowed_users=[1]),
		launcher=None,
	)  # type: ignore[arg-type]
	await bot.call("getMe", {})
	seen: list[str] = []
	for event in EVENT_NAMES:
		if event != "schedule":
			agent.on(event, lambda e: seen.append(repr(e)))
	result = await agent.run("go")
	assert result.output == {"result": "done"}
	seen += [repr(result), json.dumps(result.state.to_dict()), repr(om), repr(om.secrets)]
	seen += [m.content for request in model.requests for m in request.messages]
	seen.append(stored_text(store))
	async with Viewer(store=RunStore(store), poll=0.1) as viewer, httpx.AsyncClient() as http:
		base = f"http://127.0.0.1:{viewer.port}"
		headers = {"x-openmolt-token": viewer.token}
		view = await http.get(f"{base}/api/runs/{result.state.run_id}", headers=headers)
		assert view.status_code == 200 and "tool:response" in view.text
		seen += [view.text, (await http.get(f"{base}/api/state", headers=headers)).text]
		for path in ("/api/runs", f"/api/runs/{result.state.run_id}/export", "/api/overview"):
			answer = await http.get(f"{base}{path}", headers=headers)
			assert answer.status_code == 200, path
			seen.append(answer.text)
	spans = exporter.get_finished_spans()
	assert any("gen_ai.tool.call.result" in (s.attributes or {}) for s in spans)
	for span in spans:
		seen.append(json.dumps(dict(span.attributes or {}), ensure_ascii=False))
		seen.append(str(span.status.description))
		for span_event in span.events:  # a guardrail's, an error's...: data captured
			seen.append(span_event.name)
			seen.append(json.dumps(dict(span_event.attributes or {}), ensure_ascii=False))
	assert any(
		e.attributes and "openmolt.event.data" in e.attributes for s in spans for e in s.events
	)
	seen += await _logs_of(store, result.state.run_id, monkeypatch)
	for name in ("remote", "stdio"):
		seen.append(repr(om.plugins.integration(name)))
	await om.aclose()
	seen += texts_of_records(caplog.records)
	seen.append(caplog.text)
	assert any("HTTP Request: GET https://api.example/bot" in t for t in seen)  # httpx's INFO
	assert any("started with args" in t for t in seen) and any("env {" in t for t in seen)
	leaked = [
		(kind, spelling, text[:300])
		for text in seen
		for kind, secret in KINDS.items()
		for spelling, value in every_spelling(secret).items()
		if value in text
	]
	assert not leaked, leaked[:5]
