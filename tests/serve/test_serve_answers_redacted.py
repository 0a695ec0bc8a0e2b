"""No served answer carries a secret of the instance: A2A, chats, webhooks (AG-UI: test_serve_agui)."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import httpx
import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest
from google.protobuf.json_format import MessageToJson
from starlette.requests import Request

from openmolt import OpenMolt
from openmolt_core.errors import OpenMoltError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers, WebhookTrigger
from openmolt_serve import TriggerServer
from openmolt_serve.signatures import sign
from openmolt_serve.webhooks import Webhook, handle_webhook

pytestmark = pytest.mark.anyio

SECRET = "sk-live-served-secret-7a6b5c"
SPELLINGS = [SECRET, base64.b64encode(SECRET.encode()).decode()]
A2A_TOKEN = "a2a-token-for-tests-0123456789"


def leaky(model: ScriptedModel) -> tuple[OpenMolt, Any]:
	"""An agent whose tool echoes the secret, and whose model repeats it in every spelling."""
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)

	@tool(labels=[])
	def leak() -> str:
		"""Echo the key."""
		return f"the key is {SECRET}"

	agent = om.create_agent(name="Helper", model=model, instructions="Help.", tools=[leak])
	return om, agent


def echoing() -> ScriptedModel:
	said = " / ".join(SPELLINGS)
	return ScriptedModel(
		[call_tool("local.leak"), finish({"result": f"key {said}"}, human_message=f"key {said}")]
	)


def assert_clean(text: str) -> None:
	for spelling in SPELLINGS:
		assert spelling not in text
	assert "[redacted]" in text


async def test_a2a_artifacts_and_status_messages_are_redacted() -> None:
	"""The completed task's artifact (text and data) and its status message mask the secret."""
	om, agent = leaky(echoing())
	triggers = Triggers.model_validate({"a2a": {"token": A2A_TOKEN}})
	headers = {"Authorization": f"Bearer {A2A_TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		config = ClientConfig(httpx_client=http, streaming=False)
		client = await create_client(f"{server.url}/a2a/Helper", client_config=config)
		request = SendMessageRequest(
			message=Message(
				message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text="go")]
			)
		)
		(response,) = [r async for r in client.send_message(request)]
	await om.aclose()
	assert_clean(MessageToJson(response.task))


async def _asked_in_a_chat(agent: Any, fake: FakeTelegram) -> None:
	"""Serve ``agent`` to a Telegram chat, ask it for the key, and wait for its one reply."""
	async with local_server(fake.app()) as base:
		settings = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedUsers": [42],
		}
		triggers = Triggers.model_validate({"channels": [settings]})
		async with TriggerServer([(agent, triggers)], port=0):
			fake.message("what is the key?")
			await eventually(lambda: len(fake.sent) == 1)


async def test_a_chat_reply_is_redacted() -> None:
	"""The reply a chat gets (the run's human message) masks the secret."""
	fake = FakeTelegram()
	om, agent = leaky(echoing())
	await _asked_in_a_chat(agent, fake)
	await om.aclose()
	assert_clean(json.dumps(fake.sent))


class _Failing:
	"""A launcher whose run cannot start, for a reason that names the secret."""

	sessions = staticmethod(lambda sid: None)

	async def start(self, *args: Any, **kwargs: Any) -> str:
		raise OpenMoltError(f"the provider refused the key {SECRET}")


async def test_a_webhook_error_body_is_redacted() -> None:
	"""A run that cannot start is a 500 whose body masks the secret."""
	om, agent = leaky(ScriptedModel([]))
	hook = Webhook.create(agent, WebhookTrigger(secret="whsec-0123456789abcdef", scheme="hmac"))
	body = b'{"x": 1}'
	signed = sign("hmac", "whsec-0123456789abcdef", body, header=hook.config.header)
	scope = {
		"type": "http",
		"method": "POST",
		"path": "/hooks/Helper",
		"headers": [
			(b"content-type", b"application/json"),
			*((k.lower().encode(), v.encode()) for k, v in signed.items()),
		],
		"path_params": {"agent": "Helper"},
	}
	sent = False

	async def receive() -> dict[str, Any]:
		nonlocal sent
		sent = True
		return {"type": "http.request", "body": body, "more_body": False}

	answer = await handle_webhook(Request(scope, receive), hook, _Failing())  # type: ignore[arg-type]
	await om.aclose()
	assert answer.status_code == 500
	assert_clean(bytes(answer.body).decode())


async def test_a_chat_reply_masks_every_live_instances_secrets() -> None:
	"""A secret of another instance of the process is masked in the reply a chat gets, as in
	every served response (chats masked with their own instance's secrets only)."""
	other = OpenMolt(entry_points=False)
	theirs = "sk-other-instance-key-4d2e9f01"
	other.secrets.add(theirs)
	fake = FakeTelegram()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([finish({"result": "ok"}, human_message=f"the key is {theirs}")])
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	await _asked_in_a_chat(agent, fake)
	await om.aclose()
	await other.aclose()
	sent = json.dumps(fake.sent)
	assert theirs not in sent and "[redacted]" in sent
