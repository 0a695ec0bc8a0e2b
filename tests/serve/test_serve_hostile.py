"""Hostile input on the trigger routes: respelled replays, deep bodies, half-sent requests."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx
import pytest
from _serve_fakes import (
	SLACK_SECRET,
	SLACK_TOKEN,
	TOKEN,
	FakeSlack,
	FakeTelegram,
	eventually,
	local_server,
)

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.triggers import TelegramChannel, Triggers
from openmolt_serve import TriggerServer
from openmolt_serve._body import MAX_DEPTH
from openmolt_serve.signatures import sign
from openmolt_serve.telegram import TelegramBot, TelegramError

pytestmark = pytest.mark.anyio

SECRET = "webhook-secret-for-tests"


def deep(levels: int) -> bytes:
	return ("[" * levels + "]" * levels).encode()


def deep_object(levels: int) -> bytes:
	return ('{"a":' * levels + "1" + "}" * levels).encode()


async def serving(
	webhook: dict[str, Any] | None = None,
	*,
	model: ScriptedModel | None = None,
	run_store: Path | None = None,
	channels: list[dict[str, Any]] | None = None,
	more: dict[str, Any] | None = None,
	**server: Any,
) -> AsyncIterator[tuple[httpx.AsyncClient, ScriptedModel, TriggerServer]]:
	model = model or ScriptedModel([finish("ok")] * 5)
	om = OpenMolt(entry_points=False, run_store=run_store)
	agent = om.create_agent(name="Triage", model=model)
	settings: dict[str, Any] = {"channels": channels or [], **(more or {})}
	if webhook is not None:
		settings["webhook"] = {"secret": SECRET, **webhook}
	triggers = Triggers.model_validate(settings)
	async with TriggerServer([(agent, triggers)], port=0, **server) as ts:
		async with httpx.AsyncClient(base_url=ts.url) as client:
			yield client, model, ts
	await om.aclose()


async def post(
	client: httpx.AsyncClient,
	scheme: str,
	body: bytes,
	content_type: str = "application/json",
	**extra: str,
) -> httpx.Response:
	secret = "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQ=" if scheme == "standard" else SECRET
	headers = {**sign(scheme, secret, body), "content-type": content_type, **extra}
	return await client.post("/hooks/Triage", content=body, headers=headers)


@pytest.mark.parametrize("scheme", ["hmac", "github", "stripe", "slack", "standard", "shopify"])
@pytest.mark.parametrize("body", [deep(400_000), deep(MAX_DEPTH + 1), deep_object(2000)])
async def test_a_signed_body_nested_too_deeply_is_422_and_runs_nothing(
	scheme: str, body: bytes
) -> None:
	"""Past the cap on model replies (never a RecursionError and a 500), on every scheme."""
	secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=" if scheme == "standard" else SECRET
	model = ScriptedModel([finish("ok")])
	webhook = {"scheme": scheme, "secret": secret, "maxBody": 2_000_000}
	async for client, _, _ in serving(webhook, model=model):
		response = await post(client, scheme, body)
		assert response.status_code == 422, response.text
		assert response.json()["reason"] == "too_deep"
		assert f"{MAX_DEPTH} levels" in response.json()["error"]
		# The cap itself is accepted (a deep but fair payload still runs).
		fair = await post(client, scheme, deep_object(MAX_DEPTH - 1))
		assert fair.status_code == 202
		await eventually(lambda: len(model.requests) == 1)


async def test_a_forms_payload_field_nested_too_deeply_is_422() -> None:
	"""Slack's interactive payloads come as a form field holding JSON: the same cap applies."""
	model = ScriptedModel([finish("ok")])
	async for client, _, _ in serving({"scheme": "slack", "maxBody": 5_000_000}, model=model):
		for inner in (deep(400_000), deep(MAX_DEPTH + 1)):
			form = urlencode({"payload": inner.decode()}).encode()
			response = await post(client, "slack", form, "application/x-www-form-urlencoded")
			assert response.status_code == 422
		plain = urlencode({"payload": '{"type": "block_actions"}', "x": "1"}).encode()
		ok = await post(client, "slack", plain, "application/x-www-form-urlencoded")
		assert ok.status_code == 202
		await eventually(lambda: len(model.requests) == 1)
	assert json.loads(model.requests[0].messages[0].content)["input"]["x"] == "1"


async def test_slack_events_and_telegram_updates_nested_too_deeply_are_422() -> None:
	"""The chat routes parse with the same cap: 422, no crash, no run."""
	channels = [
		{
			"type": "slack",
			"botToken": SLACK_TOKEN,
			"signingSecret": SLACK_SECRET,
			"allowEveryone": True,
		},
		{
			"type": "telegram",
			"token": TOKEN,
			"mode": "webhook",
			"secretToken": "tg-secret",
			"allowEveryone": True,
		},
	]
	model = ScriptedModel([])
	async for client, _, _ in serving(channels=channels, model=model):
		for body in (deep(400_000), deep(MAX_DEPTH + 1)):
			headers = {**sign("slack", SLACK_SECRET, body), "content-type": "application/json"}
			slack = await client.post("/channels/slack/Triage", content=body, headers=headers)
			assert slack.status_code == 422 and slack.json()["reason"] == "too_deep"
			telegram = await client.post(
				"/channels/telegram/Triage",
				content=body,
				headers={"X-Telegram-Bot-Api-Secret-Token": "tg-secret"},
			)
			assert telegram.status_code == 422 and telegram.json()["reason"] == "too_deep"
		assert (await client.get("/health")).status_code == 200
	assert model.requests == []


UNSAFE_JSON = [
	(b'{"title": "an emoji cut in half \\ud83d"}', "lone surrogate", "title"),
	(b'{"items": [{"name": "\\udc00"}]}', "lone surrogate", "items[0].name"),
	(b'{"\\ud800": 1}', "lone surrogate", ""),
	(b'{"title": "\xed\xa0\x80"}', "lone surrogate", "title"),  # the raw bytes of one
	(b'{"amount": NaN}', "NaN is not a JSON number", ""),
	(b'{"amount": -Infinity}', "-Infinity is not a JSON number", ""),
	(b'{"amount": 1e999}', "1e999 is too large", ""),
]
"""JSON Python reads but a run cannot hold (a lone surrogate is no text; NaN is no JSON number):
each body, the words its refusal names, and where."""


@pytest.mark.parametrize(("body", "says", "where"), UNSAFE_JSON)
async def test_json_a_run_cannot_hold_is_422_on_every_route_and_runs_nothing(
	body: bytes, says: str, where: str, tmp_path: Path
) -> None:
	"""A lone surrogate, NaN or an infinity is refused 422 naming it (on A2A a JSON-RPC parse
	error naming it), never a 500 or a lost run."""
	channels = [
		{
			"type": "slack",
			"botToken": SLACK_TOKEN,
			"signingSecret": SLACK_SECRET,
			"allowEveryone": True,
		},
		{
			"type": "telegram",
			"token": TOKEN,
			"mode": "webhook",
			"secretToken": "tg-secret",
			"allowEveryone": True,
		},
	]
	more = {"a2a": {"token": "a2a-token-for-tests"}, "agui": {"token": "agui-token-for-tests"}}
	rpc = b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {'
	rpc += b'"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}, {"data": '
	rpc += body + b"}]}}}"
	model = ScriptedModel([finish("ok")] * 5)
	webhook = {"scheme": "hmac", "session": "title", "user": "title"}
	async for client, _, _ in serving(
		webhook, model=model, channels=channels, more=more, run_store=tmp_path / "runs.db"
	):
		form = urlencode({"payload": body}).encode()
		answers = {
			"slack": await client.post(
				"/channels/slack/Triage",
				content=body,
				headers={**sign("slack", SLACK_SECRET, body), "content-type": "application/json"},
			),
			"telegram": await client.post(
				"/channels/telegram/Triage",
				content=body,
				headers={"X-Telegram-Bot-Api-Secret-Token": "tg-secret"},
			),
			"a2a": await client.post(
				"/a2a/Triage/",
				content=rpc,
				headers={"Authorization": "Bearer a2a-token-for-tests", "A2A-Version": "1.0"},
			),
			"agui": await client.post(
				"/agui/Triage",
				content=b'{"threadId": "t", "runId": "r", "messages": [], "state": ' + body + b"}",
				headers={"Authorization": "Bearer agui-token-for-tests"},
			),
		}
		if body.isascii():  # a webhook reads bytes that are not UTF-8 replaced (U+FFFD)
			answers["webhook"] = await post(client, "hmac", body)
			answers["webhook as text"] = await post(client, "hmac", body + b" ", "text/plain")
			# Slack's interactive payloads: JSON in a form field
			answers["form's payload"] = await post(
				client, "hmac", form, "application/x-www-form-urlencoded"
			)
		a2a = answers.pop("a2a").json()  # JSON-RPC: an error its client reads (HTTP 200)
		assert a2a["error"]["code"] == -32700, a2a
		assert a2a["error"]["data"] == {"reason": "unsafe_json"}
		assert says in a2a["error"]["message"], a2a
		assert where in a2a["error"]["message"], a2a
		for route, answer in answers.items():
			assert answer.status_code == 422, (route, answer.status_code, answer.text)
			refusal = answer.json()
			assert refusal["reason"] == "unsafe_json", route
			assert says in refusal["error"], (route, refusal)
			assert where in refusal["error"], (route, refusal)
		assert (await client.get("/health")).status_code == 200
	assert model.requests == []


async def test_a_bot_api_answer_nested_too_deeply_is_an_error_the_poller_survives() -> None:
	"""getUpdates answering a 400k-deep body raises TelegramError (retried), not RecursionError."""

	def api(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, content=b'{"ok": true, "result": ' + deep(400_000) + b"}")

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	settings = TelegramChannel.model_validate(
		{"type": "telegram", "token": TOKEN, "allowEveryone": True}
	)
	async with anyio.create_task_group() as tg:
		from openmolt_serve._launch import Launcher

		http = httpx.AsyncClient(transport=httpx.MockTransport(api))
		bot = TelegramBot(agent, settings, Launcher(tg), http)
		with pytest.raises(TelegramError):
			await bot.poll_once()
		await http.aclose()
	await om.aclose()


def respelled(scheme: str, headers: dict[str, str]) -> dict[str, str]:
	name, value = next((k, v) for k, v in headers.items() if "ignature" in k or "Hmac" in k)
	if scheme == "standard":
		b64 = value.removeprefix("v1,")
		return {**headers, name: f"v1,{'A' * 44} v1,{b64.replace('+', '-').rstrip('=')}"}
	if scheme == "shopify":
		return {**headers, name: value.replace("+", "-").replace("/", "_").rstrip("=")}
	if scheme == "stripe":
		t, _, v1 = value.partition(",")
		return {**headers, name: f"{t}, v1={'0' * 64}, {v1.upper().replace('V1=', 'v1=')}"}
	prefix, _, digest = value.partition("=")
	return {**headers, name: f"{prefix}={digest.upper()}"}


@pytest.mark.parametrize("scheme", ["hmac", "github", "stripe", "slack", "standard", "shopify"])
async def test_a_respelled_copy_of_a_signed_request_starts_no_second_run(scheme: str) -> None:
	"""Upper-case hex, spaces or a base64 variant: the same request, so 409 or duplicate."""
	secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=" if scheme == "standard" else SECRET
	model = ScriptedModel([finish("ok")] * 2)
	async for client, _, _ in serving({"scheme": scheme, "secret": secret}, model=model):
		body = json.dumps({"action": "opened", "n": 1}).encode()
		headers = {
			**sign(scheme, secret, body, delivery="msg_1"),
			"content-type": "application/json",
		}
		if scheme == "github":
			headers["X-GitHub-Delivery"] = "d-1"
		first = await client.post("/hooks/Triage", content=body, headers=headers)
		assert first.status_code == 202
		again = respelled(scheme, headers)
		if scheme == "github":
			again["X-GitHub-Delivery"] = "d-2"  # unsigned: a replayer may change it
		second = await client.post("/hooks/Triage", content=body, headers=again)
		assert second.status_code in (200, 409), second.text
		if second.status_code == 200:
			assert second.json()["status"] == "duplicate"
		await anyio.sleep(0.2)
	assert len(model.requests) == 1


@pytest.mark.parametrize("scheme", ["hmac", "github", "shopify"])
async def test_a_signature_without_a_time_is_refused_after_a_restart_with_a_run_store(
	scheme: str, tmp_path: Path
) -> None:
	"""The replay guard keeps what it saw in the run store's file: a restart forgets nothing."""
	store = tmp_path / "runs.db"
	body = json.dumps({"action": "opened"}).encode()
	headers = {**sign(scheme, SECRET, body), "content-type": "application/json"}
	async for client, _, _ in serving({"scheme": scheme}, run_store=store):
		assert (
			await client.post("/hooks/Triage", content=body, headers=headers)
		).status_code == 202
	model = ScriptedModel([finish("again")])
	async for client, _, _ in serving({"scheme": scheme}, run_store=store, model=model):
		replay = await client.post("/hooks/Triage", content=body, headers=headers)
		assert replay.status_code == 409 and replay.json()["reason"] == "replayed"
		other = json.dumps({"action": "closed"}).encode()
		fresh = {**sign(scheme, SECRET, other), "content-type": "application/json"}
		assert (await client.post("/hooks/Triage", content=other, headers=fresh)).status_code == 202
		await eventually(lambda: len(model.requests) == 1)
	# The store keeps a digest of each signature, never the signature (nor the secret).
	import sqlite3

	rows = sqlite3.connect(store).execute("SELECT scope, key FROM openmolt_webhook_seen").fetchall()
	assert rows and all(scope == "hook:Triage" for scope, _ in rows)
	kept = " ".join(key for _, key in rows)
	mac = next(v for k, v in headers.items() if "ignature" in k or "Hmac" in k)
	mac = mac.removeprefix("sha256=")
	assert mac not in kept and SECRET not in kept


async def test_a_stripe_events_retry_after_a_restart_is_a_duplicate(tmp_path: Path) -> None:
	"""The same event id, newly signed after a restart, is the same run (200 duplicate)."""
	store = tmp_path / "runs.db"
	body = json.dumps({"id": "evt_1", "type": "charge.succeeded"}).encode()
	run_ids = []
	for _ in range(2):
		async for client, _, _ in serving({"scheme": "stripe"}, run_store=store):
			headers = {**sign("stripe", SECRET, body), "content-type": "application/json"}
			response = await client.post("/hooks/Triage", content=body, headers=headers)
			assert response.status_code in (200, 202)
			run_ids.append(response.json())
		await anyio.sleep(1.1)  # a new signed time: a new signature for the same event
	assert run_ids[0]["status"] == "accepted" and run_ids[1]["status"] == "duplicate"
	assert run_ids[0]["run_id"] == run_ids[1]["run_id"]


def _open(url: str) -> socket.socket:
	host, port = url.removeprefix("http://").split(":")
	sock = socket.create_connection((host, int(port)), timeout=5)
	return sock


def _closed(sock: socket.socket) -> tuple[bool, bytes]:
	"""Whether the server closed the socket (and what it said before)."""
	sock.settimeout(0.05)
	got = b""
	try:
		while True:
			chunk = sock.recv(4096)
			if not chunk:
				return True, got
			got += chunk
	except TimeoutError:
		return False, got
	except OSError:
		return True, got


async def test_half_sent_requests_are_closed_after_the_header_timeout() -> None:
	"""Requests that never finish their headers (slowloris) are answered 408 and closed."""
	async for client, _, ts in serving({"scheme": "github"}, header_timeout=0.5):
		socks = [_open(ts.url) for _ in range(60)]
		for n, sock in enumerate(socks):
			sock.sendall(b"POST /hooks/Triage HTTP/1.1\r\nHost: x\r\n" if n % 2 else b"")
		started = time.monotonic()
		await anyio.sleep(1.5)
		results = [_closed(sock) for sock in socks]
		assert all(closed for closed, _ in results)
		assert all(said.startswith(b"HTTP/1.1 408") for _, said in results)
		assert time.monotonic() - started < 5
		for sock in socks:
			sock.close()
		assert (await client.get("/health")).status_code == 200


async def test_a_half_sent_body_is_408() -> None:
	"""Headers complete, the body stops half way: 408 and closed after the body timeout."""
	model = ScriptedModel([])
	async for _, _, ts in serving({"scheme": "github"}, body_timeout=0.5, model=model):
		sock = _open(ts.url)
		sock.sendall(
			b"POST /hooks/Triage HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
			b'content-length: 100\r\n\r\n{"a": '
		)
		await anyio.sleep(1.0)
		closed, said = _closed(sock)
		sock.close()
		assert said.startswith(b"HTTP/1.1 408"), said
		assert closed  # the rest of the body may never come: the server does not wait for it
	assert model.requests == []


async def test_connections_past_the_cap_are_refused() -> None:
	"""max_connections open: the next connection is answered 503 and closed; later ones work."""
	async for client, _, ts in serving({"scheme": "github"}, max_connections=5):
		held = [_open(ts.url) for _ in range(5)]
		await anyio.sleep(0.2)
		extra = _open(ts.url)
		await anyio.sleep(0.3)
		closed, said = _closed(extra)
		assert closed and said.startswith(b"HTTP/1.1 503")
		for sock in (*held, extra):
			sock.close()
		await anyio.sleep(0.2)
		assert (await client.get("/health")).status_code == 200


def _accepted(server: Any) -> list[socket.socket]:
	"""The sockets of the connections a uvicorn server holds open now."""
	return [p.transport.get_extra_info("socket") for p in server.server_state.connections]


async def test_every_connection_sends_its_responses_at_once() -> None:
	"""Nagle's algorithm is off on every connection (TCP_NODELAY): uvicorn writes a response's
	head and body apart, and the body waited for the client's delayed ACK (about 40 ms a
	response, for every webhook, chat callback, A2A and AG-UI reply and SSE event)."""
	from openmolt_ui._listen import listen

	with listen("127.0.0.1", 0, who="x") as made:
		assert made.proto == socket.IPPROTO_TCP
	async for client, _, ts in serving({"scheme": "github"}):
		assert (await client.get("/health")).status_code == 200  # kept alive: still open
		accepted = _accepted(ts._server)
		assert accepted
		for sock in accepted:
			assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


async def test_the_guarded_protocol_turns_nagle_off_whatever_the_listening_socket() -> None:
	"""A listening socket made with proto 0 (asyncio then leaves TCP_NODELAY off): the
	protocol sets it on each connection itself."""
	import uvicorn
	from starlette.applications import Starlette
	from starlette.responses import PlainTextResponse
	from starlette.routing import Route

	from openmolt_ui._conn import guarded_protocol

	async def ok(request: Any) -> PlainTextResponse:
		return PlainTextResponse("ok")

	sock = socket.socket()  # proto 0
	sock.bind(("127.0.0.1", 0))
	port = sock.getsockname()[1]
	app = Starlette(routes=[Route("/", ok)])
	config = uvicorn.Config(app, http=guarded_protocol(), lifespan="off", log_level="warning")
	server = uvicorn.Server(config)
	async with anyio.create_task_group() as tg:
		tg.start_soon(lambda: server.serve(sockets=[sock]))
		with anyio.fail_after(10):
			while not server.started:  # noqa: ASYNC110  # uvicorn offers no event to wait on
				await anyio.sleep(0.01)
		async with httpx.AsyncClient() as http:
			assert (await http.get(f"http://127.0.0.1:{port}/")).text == "ok"
			accepted = _accepted(server)
			assert accepted and all(
				s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0 for s in accepted
			)
		server.should_exit = True
	sock.close()


def test_the_limits_must_be_positive() -> None:
	"""A zero or negative limit is refused, naming it."""
	from openmolt_core.errors import ConfigurationError

	with pytest.raises(ConfigurationError, match="max_connections must be more than 0"):
		TriggerServer([], max_connections=0)
	with pytest.raises(ConfigurationError, match="header_timeout"):
		TriggerServer([], header_timeout=-1)


def test_the_replay_guard_keeps_its_entries_in_the_durable_store_when_there_is_no_run_store(
	tmp_path: Path,
) -> None:
	"""A durable store without a run store: a SQLite file in its files folder, per agent."""
	from types import SimpleNamespace

	from openmolt_serve._seen import seen_store
	from openmolt_serve.signatures import ReplayGuard, SignatureError, verify

	def agent(name: str) -> Any:
		durability = SimpleNamespace(files_dir=tmp_path / "files")
		return SimpleNamespace(name=name, om=SimpleNamespace(run_store=None, durability=durability))

	body = b'{"a": 1}'
	verified = verify("hmac", SECRET, body, sign("hmac", SECRET, body))
	ReplayGuard(store=seen_store(agent("Triage"), "hook")).check(verified)
	assert (tmp_path / "files" / "webhook-seen.sqlite").exists()
	with pytest.raises(SignatureError, match="received before"):
		ReplayGuard(store=seen_store(agent("Triage"), "hook")).check(verified)
	ReplayGuard(store=seen_store(agent("Other"), "hook")).check(verified)  # each agent its own
	memory_only: Any = SimpleNamespace(
		name="x", om=SimpleNamespace(run_store=None, durability=None)
	)
	assert seen_store(memory_only, "hook") is None


async def test_a_replayed_slack_event_starts_nothing_even_respelled_and_after_a_restart(
	tmp_path: Path,
) -> None:
	"""The Slack app's requests go through the replay guard too (kept in the run store)."""
	store = tmp_path / "runs.db"
	fake = FakeSlack()
	event = {
		"type": "event_callback",
		"event_id": "Ev1",
		"event": {
			"type": "message",
			"channel": "D1",
			"channel_type": "im",
			"user": "U7",
			"text": "hi",
			"ts": "1.0",
		},
	}
	body = json.dumps(event).encode()
	headers = {**sign("slack", SLACK_SECRET, body), "content-type": "application/json"}
	respelled_headers = {
		**headers,
		"X-Slack-Signature": "v0=" + headers["X-Slack-Signature"][3:].upper(),
	}
	model = ScriptedModel([finish("ok", human_message="once")] * 3)
	async with local_server(fake.app()) as base:
		channels = [
			{
				"type": "slack",
				"botToken": SLACK_TOKEN,
				"signingSecret": SLACK_SECRET,
				"allowEveryone": True,
				"baseUrl": base,
			}
		]
		async for client, _, _ in serving(channels=channels, run_store=store, model=model):
			first = await client.post("/channels/slack/Triage", content=body, headers=headers)
			assert first.status_code == 200
			await eventually(lambda: len(fake.posted) == 1)
			again = await client.post(
				"/channels/slack/Triage", content=body, headers=respelled_headers
			)
			assert again.status_code == 200
		async for client, _, _ in serving(channels=channels, run_store=store, model=model):
			after = await client.post("/channels/slack/Triage", content=body, headers=headers)
			assert after.status_code == 200
			await anyio.sleep(0.3)
	assert len(model.requests) == 1 and len(fake.posted) == 1


async def test_a_websocket_upgrade_is_plain_http_under_the_same_limits() -> None:
	"""No route speaks WebSocket: an upgrade request gets an HTTP answer, not a held socket."""
	async for client, _, _ in serving({"scheme": "github"}):
		response = await client.get(
			"/health",
			headers={
				"Connection": "Upgrade",
				"Upgrade": "websocket",
				"Sec-WebSocket-Version": "13",
				"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
			},
		)
		assert response.status_code == 200 and response.json()["ok"] is True


SLACK_VERIFICATION = "SlackVerificationToken0123"
"""The deprecated verification token Slack still puts in every request it signs."""


async def test_slacks_verification_token_never_reaches_a_webhooks_run(tmp_path: Path) -> None:
	"""A slash command, an interactive payload or an event carries Slack's verification token (a
	credential of the app): the run, the model and the run store see it masked."""
	model = ScriptedModel([finish("ok")] * 3)
	command = urlencode({"token": SLACK_VERIFICATION, "command": "/triage", "text": "the login"})
	action = json.dumps(
		{"type": "block_actions", "token": SLACK_VERIFICATION, "user": {"id": "U1"}}
	)
	event = {"token": SLACK_VERIFICATION, "type": "event_callback", "event_id": "Ev1", "event": {}}
	bodies = [
		(command.encode(), "application/x-www-form-urlencoded"),
		(urlencode({"payload": action}).encode(), "application/x-www-form-urlencoded"),
		(json.dumps(event).encode(), "application/json"),
	]
	async for client, _, ts in serving(
		{"scheme": "slack"}, model=model, run_store=tmp_path / "runs.db"
	):
		for body, kind in bodies:
			response = await post(client, "slack", body, kind)
			assert response.status_code == 202, response.text
		await eventually(lambda: len(model.requests) == 3)
		store = ts.agents["Triage"][0].om.run_store
		assert store is not None
		inputs = [run.input for run in await store.runs()]
	assert len(inputs) == 3
	assert SLACK_VERIFICATION not in json.dumps(inputs)
	said = [request.messages[0].content for request in model.requests]
	assert not [one for one in said if SLACK_VERIFICATION in one]
	assert any("the login" in one for one in said)  # the rest of the payload is there


@pytest.mark.parametrize("authorizations", [[{"user_id": ["U0BOT"]}], [{"user_id": 5}], "U0BOT"])
async def test_a_slack_event_with_fields_of_the_wrong_type_is_answered_not_a_500(
	authorizations: Any,
) -> None:
	"""An event's ``authorizations`` that are not what Slack documents (a list where the app's
	user id goes) are left out: 200, the mention answered, never a 500 that loses the event."""
	slack = FakeSlack()
	model = ScriptedModel([finish("ok")])
	async with local_server(slack.app()) as api:
		channels = [
			{
				"type": "slack",
				"botToken": SLACK_TOKEN,
				"signingSecret": SLACK_SECRET,
				"baseUrl": api,
				"allowEveryone": True,
			}
		]
		async for client, _, _ in serving(channels=channels, model=model):
			event = {
				"type": "event_callback",
				"event_id": "Ev1",
				"authorizations": authorizations,
				"event": {
					"type": "app_mention",
					"user": "U2",
					"channel": "C1",
					"text": "<@U0BOT> hi",
					"ts": "1.1",
				},
			}
			body = json.dumps(event).encode()
			headers = {**sign("slack", SLACK_SECRET, body), "content-type": "application/json"}
			answer = await client.post("/channels/slack/Triage", content=body, headers=headers)
			assert answer.status_code == 200, answer.text
			await eventually(lambda: len(slack.posted) == 1)
	assert slack.posted[0]["text"] == "ok"


@pytest.mark.parametrize(
	"odd",
	[
		{"message_id": "zz"},
		{"message_id": 1.5},
		{"is_topic_message": True, "message_thread_id": True},
	],
)
async def test_a_telegram_update_with_ids_of_the_wrong_type_is_still_answered(
	odd: dict[str, Any],
) -> None:
	"""A message id or topic that is no integer is left out of the reply: the run's answer
	reaches the chat (it was lost: int('zz') failed every sendMessage)."""
	fake = FakeTelegram()
	model = ScriptedModel([finish("ok")])
	async with local_server(fake.app()) as api:
		channels = [
			{
				"type": "telegram",
				"token": TOKEN,
				"mode": "webhook",
				"secretToken": "tg-secret",
				"baseUrl": api,
				"allowEveryone": True,
			}
		]
		async for client, _, _ in serving(channels=channels, model=model):
			message = {
				"message_id": 7,
				"from": {"id": 42, "is_bot": False, "first_name": "Ada"},
				"chat": {"id": 42, "type": "private"},
				"text": "hi",
				**odd,
			}
			answer = await client.post(
				"/channels/telegram/Triage",
				json={"update_id": 1, "message": message},
				headers={"X-Telegram-Bot-Api-Secret-Token": "tg-secret"},
			)
			assert answer.status_code == 200, answer.text
			await eventually(lambda: len(fake.sent) == 1)
	[sent] = fake.sent
	assert sent["text"] == "ok" and "message_thread_id" not in sent


@pytest.mark.parametrize("kind", ["", "text/plain", "application/octet-stream"])
async def test_slacks_verification_token_is_masked_whatever_the_content_type(
	kind: str, tmp_path: Path
) -> None:
	"""A slash command's form (and an interactive payload's) under another content type (none,
	text/plain: a proxy's, a test client's) was run as its text: the token was read from a
	form only, so the model and the run store saw it. The body as a form is read too."""
	model = ScriptedModel([finish("ok")] * 2)
	command = urlencode({"token": SLACK_VERIFICATION, "command": "/triage", "text": "the login"})
	action = json.dumps({"type": "block_actions", "token": SLACK_VERIFICATION})
	bodies = [command.encode(), urlencode({"payload": action}).encode()]
	async for client, _, ts in serving(
		{"scheme": "slack"}, model=model, run_store=tmp_path / "runs.db"
	):
		for body in bodies:
			response = await post(client, "slack", body, kind)
			assert response.status_code == 202, response.text
		await eventually(lambda: len(model.requests) == 2)
		store = ts.agents["Triage"][0].om.run_store
		assert store is not None
		inputs = [run.input for run in await store.runs()]
	assert len(inputs) == 2 and SLACK_VERIFICATION not in json.dumps(inputs)
	said = [request.messages[0].content for request in model.requests]
	assert not [one for one in said if SLACK_VERIFICATION in one]
