"""Every served route: a token (or a signature) unless documented open, and a clear 4xx for bad
input, never a 500."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import quote

import httpx
import pytest
from _serve_fakes import SLACK_SECRET, SLACK_TOKEN, TOKEN

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.signatures import sign

pytestmark = pytest.mark.anyio

SECRET = "webhook-secret-for-tests"
A2A = "a2a-token-for-tests-0123456789"
AGUI = "agui-token-for-tests-0123456789"
TG_SECRET = "tg-secret-token-01"


@asynccontextmanager
async def everything(model: ScriptedModel) -> AsyncIterator[httpx.AsyncClient]:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Triage", model=model)
	triggers = Triggers.model_validate(
		{
			"webhook": {"scheme": "hmac", "secret": SECRET},
			"a2a": {"token": A2A, "maxBody": 10_000},
			"agui": {"token": AGUI, "maxBody": 10_000},
			"channels": [
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
					"secretToken": TG_SECRET,
					"allowEveryone": True,
				},
			],
		}
	)
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
			yield client
	await om.aclose()


OPEN = [("GET", "/health"), ("GET", "/a2a/Triage/.well-known/agent-card.json")]
GUARDED = [
	("POST", "/hooks/Triage"),
	("POST", "/agui/Triage"),
	("POST", "/a2a/Triage/"),
	("GET", "/a2a/Triage/"),
	("POST", "/a2a/Triage/.well-known/agent-card.json"),
	("GET", "/a2a/Triage/anything"),
	("POST", "/channels/slack/Triage"),
	("POST", "/channels/telegram/Triage"),
]


async def test_only_the_documented_routes_answer_without_a_credential() -> None:
	"""Health and the agent card are open; every other route refuses a caller without one."""
	model = ScriptedModel([])
	async with everything(model) as client:
		for method, path in OPEN:
			assert (await client.request(method, path)).status_code == 200, path
		for method, path in GUARDED:
			answer = await client.request(method, path, content=b"{}")
			assert answer.status_code in (401, 405), (method, path, answer.status_code)
		callback = await client.get("/auth/callback")  # open: the state is the credential
		assert callback.status_code == 400
	assert model.requests == []


def _bad_bodies() -> list[bytes]:
	return [
		b"",
		b"not json",
		b"[]",
		b"null",
		b'"text"',
		b'{"threadId": 5}',
		b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 5}}',
		b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": ["x"]}}',
		b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": 7}',
		b"\xff\xfe\x00garbage",
		b'{"threadId": "t", "runId": "r", "messages": [{"role": "user"}]}',
	]


async def test_bad_input_on_every_route_is_a_clear_4xx_never_a_500() -> None:
	"""Garbage, wrong types and lies about the size get a 4xx (or a JSON-RPC error), no traceback."""
	model = ScriptedModel([])
	async with everything(model) as client:
		a2a = {"Authorization": f"Bearer {A2A}", "content-type": "application/json"}
		agui = {"Authorization": f"Bearer {AGUI}", "content-type": "application/json"}
		tg = {"X-Telegram-Bot-Api-Secret-Token": TG_SECRET, "content-type": "application/json"}
		for body in _bad_bodies():
			answers = {
				"a2a": await client.post("/a2a/Triage/", content=body, headers=a2a),
				"agui": await client.post("/agui/Triage", content=body, headers=agui),
				"hook": await client.post(
					"/hooks/Triage",
					content=body,
					headers={**sign("hmac", SECRET, body), "content-type": "application/json"},
				),
				"slack": await client.post(
					"/channels/slack/Triage",
					content=body,
					headers={
						**sign("slack", SLACK_SECRET, body),
						"content-type": "application/json",
					},
				),
				"telegram": await client.post(
					"/channels/telegram/Triage", content=body, headers=tg
				),
			}
			for route, answer in answers.items():
				assert answer.status_code < 500, (route, body, answer.status_code, answer.text)
				assert "Traceback" not in answer.text
		odd = [
			{"message": {"text": "hi", "from": {"id": 1, "username": 5}, "chat": {"id": 1}}},
			{"message": {"text": "hi", "from": {"id": [1]}, "chat": {"id": {}}}},
		]
		for update in odd:
			answer = await client.post("/channels/telegram/Triage", json=update, headers=tg)
			assert answer.status_code < 500, (update, answer.text)
		for event in (
			{"type": "event_callback", "authorizations": "x", "event": {"type": "message"}},
			{"type": "event_callback", "authorizations": [5], "event": {"type": "message"}},
			{"type": "url_verification", "challenge": {"a": 1}},
		):
			body = json.dumps(event).encode()
			headers = {**sign("slack", SLACK_SECRET, body), "content-type": "application/json"}
			answer = await client.post("/channels/slack/Triage", content=body, headers=headers)
			assert answer.status_code < 500, (event, answer.text)
		for query in ("state=x", "code=a&state=", "state=a.b&code=c", "error=x&state=%ff"):
			answer = await client.get(f"/auth/callback?{query}")
			assert answer.status_code == 400, (query, answer.text)
		big = b"{" + b" " * 20_000 + b"}"
		too_large = await client.post("/a2a/Triage/", content=big, headers=a2a)
		assert too_large.json()["error"]["code"] == -32600  # JSON-RPC: its client reads why
		assert (await client.post("/agui/Triage", content=big, headers=agui)).status_code == 413


async def test_agui_names_the_field_that_is_wrong() -> None:
	"""A RunAgentInput with a wrong field is 422 naming it."""
	async with everything(ScriptedModel([])) as client:
		headers = {"Authorization": f"Bearer {AGUI}"}
		answer = await client.post("/agui/Triage", json={"threadId": 5}, headers=headers)
	assert answer.status_code == 422
	assert "threadId" in answer.json()["error"] or "thread_id" in answer.json()["error"]


def test_a_telegram_update_with_odd_types_keeps_to_text() -> None:
	"""A username that is not text is dropped, not kept to crash the allow lists later."""
	from openmolt_serve.telegram import incoming

	update = {"message": {"text": "hi", "from": {"id": 1, "username": 5}, "chat": {"id": 1}}}
	found = incoming(update)
	assert found is not None and found.username is None


async def test_an_agui_thread_id_past_the_cap_is_422_naming_it() -> None:
	"""Thread ids become keys the endpoint keeps: one longer than MAX_THREAD_ID is refused."""
	from openmolt_serve.agui import MAX_THREAD_ID

	body = {
		"threadId": "t" * (MAX_THREAD_ID + 1),
		"runId": "r",
		"state": {},
		"messages": [{"id": "m", "role": "user", "content": "hi"}],
		"tools": [],
		"context": [],
		"forwardedProps": {},
	}
	model = ScriptedModel([])
	async with everything(model) as client:
		headers = {"Authorization": f"Bearer {AGUI}"}
		answer = await client.post("/agui/Triage", json=body, headers=headers)
	assert answer.status_code == 422 and "threadId" in answer.json()["error"]
	assert model.requests == []


async def test_an_odd_credential_is_401_on_every_guarded_route() -> None:
	"""Headers decode as Latin-1: a signature or token holding a byte past ASCII is refused (401),
	never a TypeError from the constant-time compare (a 500); so is a signed time of 400 digits
	(never an OverflowError)."""
	now = str(int(time.time())).encode()
	odd = b"\xe9\xff"
	huge = b"9" * 400  # a signed time no float holds
	cases = [
		(
			"/hooks/Triage",
			{b"webhook-id": b"x", b"webhook-timestamp": huge, b"webhook-signature": b"v1,ab"},
		),
		(
			"/channels/slack/Triage",
			{b"X-Slack-Signature": b"v0=ab", b"X-Slack-Request-Timestamp": huge},
		),
		(
			"/hooks/Triage",
			{b"webhook-id": b"x", b"webhook-timestamp": now, b"webhook-signature": b"v1," + odd},
		),
		(
			"/channels/slack/Triage",
			{b"X-Slack-Signature": b"v0=" + odd, b"X-Slack-Request-Timestamp": now},
		),
		("/channels/telegram/Triage", {b"X-Telegram-Bot-Api-Secret-Token": odd}),
		("/agui/Triage", {b"Authorization": b"Bearer " + odd}),
		("/a2a/Triage/", {b"Authorization": b"Bearer " + odd}),
	]
	model = ScriptedModel([])
	async with everything(model) as client:
		for path, headers in cases:
			answer = await client.post(path, content=b"{}", headers=headers)
			assert answer.status_code == 401, (path, answer.status_code, answer.text)
	assert model.requests == []


@pytest.mark.parametrize("scheme", ["hmac", "github", "stripe", "slack"])
async def test_a_webhook_signed_with_a_non_ascii_signature_is_401(scheme: str) -> None:
	"""Every hex scheme refuses a signature holding a byte past ASCII with a 401, not a 500."""
	now = str(int(time.time()))
	headers = {
		"hmac": {"X-Signature-256": "sha256=\xe9"},
		"github": {"X-Hub-Signature-256": "sha256=\xe9"},
		"stripe": {"Stripe-Signature": f"t={now},v1=\xe9"},
		"slack": {"X-Slack-Signature": "v0=\xe9", "X-Slack-Request-Timestamp": now},
	}[scheme]
	model = ScriptedModel([])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Triage", model=model)
	triggers = Triggers.model_validate({"webhook": {"secret": SECRET, "scheme": scheme}})
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(base_url=server.url, timeout=20) as client,
	):
		raw = {k.encode(): v.encode("latin-1") for k, v in headers.items()}
		answer = await client.post("/hooks/Triage", content=b"{}", headers=raw)
	await om.aclose()
	assert answer.status_code == 401, answer.text
	assert answer.json()["reason"] == "invalid"
	assert model.requests == []


async def test_no_spelling_of_a_guarded_route_answers_without_a_credential() -> None:
	"""Other methods, a trailing or doubled slash, another case, a percent-encoded or dotted path:
	none reaches a run or the A2A methods without the credential (a 3xx only points back to the
	guarded route)."""
	paths = [
		"/hooks/Triage",
		"/agui/Triage",
		"/channels/slack/Triage",
		"/channels/telegram/Triage",
		"/a2a/Triage/",
	]
	variants = [
		*paths,
		*(p.rstrip("/") + "/" for p in paths),
		*("/" + p for p in paths),
		*(p.upper() for p in paths),
		"/a2a/Triage",
		"/a2a//Triage/",
		"/a2a/Triage/./",
		"/a2a/Triage/x/../",
		"/a2a/Triage/.well-known/agent-card.json/",
		"/a2a/Triage//.well-known/agent-card.json",
	]
	raw = [b"/a2a%2FTriage/", b"/a2a/Triage%2F", b"/a2a/Triage/%2E%2E/", b"/hooks%2FTriage"]
	rpc = b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}'
	model = ScriptedModel([])
	async with everything(model) as client:
		for path in variants:
			for method in ("GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH"):
				answer = await client.request(method, path, content=rpc)
				assert answer.status_code in (307, 401, 404, 405), (method, path, answer.text)
				assert "tasks" not in answer.text, (method, path)
		for target in raw:
			url = httpx.URL(client.base_url).copy_with(raw_path=target)
			answer = await client.post(url, content=rpc)
			assert answer.status_code in (307, 401, 404, 405), (target, answer.text)
		card = await client.get("/a2a/Triage/%2ewell-known/agent-card.json")
		assert card.status_code == 200 and "Triage" in card.text  # the open card, decoded
	assert model.requests == []


@pytest.mark.parametrize("name", ["ops/prod", "x{y}", "{agent}", "..", "."])
def test_an_agent_name_no_route_can_hold_is_refused_before_serving(name: str) -> None:
	"""A '/' makes its routes unreachable; braces make its A2A mount take other agents'
	addresses (x{y} answered /a2a/xz/ with its own card and token): refused, naming the fix."""
	from openmolt_core.errors import ConfigurationError

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name=name, model=ScriptedModel([]))
	triggers = Triggers.model_validate({"a2a": {"token": "a2a-token-0123456789"}})
	with pytest.raises(ConfigurationError) as refused:
		TriggerServer([(agent, triggers)], port=0)
	assert repr(name) in str(refused.value) and "rename" in str(refused.value)


async def test_agent_names_with_spaces_colons_and_dots_are_served() -> None:
	"""What a path segment can hold, percent-encoded, still reaches its own agent."""
	om = OpenMolt(entry_points=False)
	names = ["openai:gpt-5-mini", "Ops Bot", "v1.2"]
	agents = [om.create_agent(name=name, model=ScriptedModel([])) for name in names]
	triggers = Triggers.model_validate({"a2a": {"token": "a2a-token-0123456789"}})
	async with TriggerServer([(agent, triggers) for agent in agents], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url) as client:
			for name in names:
				card = await client.get(f"/a2a/{quote(name, safe='')}/.well-known/agent-card.json")
				assert card.status_code == 200 and card.json()["name"] == name
	await om.aclose()
