"""A2A as a client developer meets it: the gate's refusals of a body are JSON-RPC errors the
official client reads, and a refused request loses nothing."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from a2a.utils.errors import A2AError

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions

pytestmark = pytest.mark.anyio

TOKEN = "a2a-token-for-tests-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "A2A-Version": "1.0"}


def message(text: str, **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(
			message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
		)
	)


@asynccontextmanager
async def served(model: ScriptedModel) -> AsyncIterator[tuple[str, Any, httpx.AsyncClient]]:
	"""Helper over A2A (a 10 kB body cap); yields its URL, the official client and raw HTTP."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	park_questions(agent)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN, "maxBody": 10_000}})
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=HEADERS, timeout=20) as http,
	):
		url = f"{server.url}/a2a/Helper"
		config = ClientConfig(httpx_client=http, streaming=False)
		yield url, await create_client(url, client_config=config), http
	await om.aclose()


async def test_a_body_past_the_cap_or_too_deep_is_a_json_rpc_error_and_loses_nothing() -> None:
	"""Too large: the official client raises the gate's words (not a bare HTTP 413); too deep or
	not JSON a run can hold: a JSON-RPC error (id null); the task waiting still waits."""
	model = ScriptedModel([ask_human("Which city?")])
	async with served(model) as (url, client, http):
		(first,) = [r async for r in client.send_message(message("Weather?"))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		with pytest.raises(A2AError, match="larger than 10000 bytes"):
			async for _ in client.send_message(message("x" * 20_000, task_id=task.id)):
				pass
		deep = b'{"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": '
		deep += b"[" * 200 + b"]" * 200 + b"}}"
		nan = b'{"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"id": NaN}}'
		for body, code, words in (
			(deep, -32600, "nested deeper than"),
			(nan, -32700, "NaN"),
			(b"{" + b" " * 20_000 + b"}", -32600, "larger than 10000 bytes"),
		):
			answer = await http.post(f"{url}/", content=body)
			assert answer.status_code == 200, answer.text
			refusal = answer.json()
			assert refusal["jsonrpc"] == "2.0"
			assert refusal["id"] is None
			assert refusal["error"]["code"] == code
			assert words in refusal["error"]["message"]
		still = await client.get_task(GetTaskRequest(id=task.id))
		assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
	assert len(model.requests) == 1


async def test_without_the_token_a_json_rpc_call_is_still_http_401() -> None:
	"""Authentication stays the transport's: 401 with WWW-Authenticate, as A2A says."""
	async with served(ScriptedModel([])) as (url, _, _):
		async with httpx.AsyncClient(timeout=20) as stranger:
			body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
			answer = await stranger.post(f"{url}/", json=body)
	assert answer.status_code == 401
	assert answer.headers["WWW-Authenticate"] == "Bearer"


async def test_a_message_asking_for_push_notifications_is_refused_and_runs_nothing() -> None:
	"""The card says no push notifications are sent: a message whose configuration asks for them
	(1.0's taskPushNotificationConfig, 0.3's pushNotificationConfig) is -32003, as the push
	config methods are, whatever the URL; no run starts and nothing is kept to call later."""
	from a2a.types import SendMessageConfiguration, TaskPushNotificationConfig
	from a2a.utils.errors import PushNotificationNotSupportedError

	model = ScriptedModel([ask_human("never asked")])
	async with served(model) as (url, client, http):
		card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
		assert not card["capabilities"].get("pushNotifications")
		for target in ("http://169.254.169.254/latest/meta-data", "https://hooks.example/a2a"):
			asking = message("Weather?")
			push = TaskPushNotificationConfig(url=target, token="caller-token-0001")
			asking.configuration.CopyFrom(
				SendMessageConfiguration(task_push_notification_config=push)
			)
			with pytest.raises(PushNotificationNotSupportedError):
				async for _ in client.send_message(asking):
					pass
			with pytest.raises(PushNotificationNotSupportedError):
				await client.create_task_push_notification_config(
					TaskPushNotificationConfig(task_id="t-1", url=target)
				)
		legacy = {
			"jsonrpc": "2.0",
			"id": 3,
			"method": "message/send",
			"params": {
				"message": {
					"kind": "message",
					"messageId": uuid.uuid4().hex,
					"role": "user",
					"parts": [{"kind": "text", "text": "Weather?"}],
				},
				"configuration": {"pushNotificationConfig": {"url": "https://hooks.example/a"}},
			},
		}
		answer = await http.post(f"{url}/", json=legacy, headers={"A2A-Version": "0.3"})
		assert answer.json()["error"]["code"] == -32003, answer.text
	assert model.requests == []


class _Dripped(httpx.AsyncByteStream):
	"""A body sent as it comes off the network, in pieces (never read into memory at once)."""

	def __init__(self, data: bytes) -> None:
		self.data = data
		self.read = 0

	async def __aiter__(self) -> AsyncIterator[bytes]:
		for i in range(0, len(self.data), 65_536):
			self.read += len(self.data[i : i + 65_536])
			yield self.data[i : i + 65_536]


def _card() -> bytes:
	"""The remote's agent card: its JSON-RPC interface at its own origin."""
	interface = {
		"url": "https://agent.example/a2a/P/",
		"protocolBinding": "JSONRPC",
		"protocolVersion": "1.0",
	}
	card = {
		"name": "Planner",
		"description": "d",
		"version": "1.0.0",
		"supportedInterfaces": [interface],
		"capabilities": {},
		"defaultInputModes": ["text/plain"],
		"defaultOutputModes": ["text/plain"],
	}
	return json.dumps(card).encode()


def _remote_answer(text: str) -> bytes:
	"""A remote's JSON-RPC answer: a completed task whose artifact holds ``text``."""
	task = {
		"id": "t-1",
		"contextId": "c-1",
		"status": {"state": "TASK_STATE_COMPLETED"},
		"artifacts": [{"artifactId": "a", "parts": [{"text": text}]}],
	}
	return json.dumps({"jsonrpc": "2.0", "id": "1", "result": {"task": task}}).encode()


@pytest.mark.parametrize("compressed", [False, True])
async def test_a_remote_agents_answer_is_read_up_to_a_cap(compressed: bool) -> None:
	"""A remote that answers more than max_response_bytes (or a small gzip body that inflates
	past it) is a tool error naming the cap, read no further; one within it is the tool's answer."""
	from openmolt_core.errors import ToolError
	from openmolt_core.tools import ToolContext
	from openmolt_serve.a2a import remote_agent

	huge = _remote_answer("x" * 5_000_000)
	body = gzip.compress(huge) if compressed else huge
	streams: list[_Dripped] = []

	def network(request: httpx.Request) -> httpx.Response:
		if request.url.path.endswith("agent-card.json"):
			return httpx.Response(200, content=_card())
		streams.append(_Dripped(body))
		headers = {"Content-Encoding": "gzip"} if compressed else {}
		return httpx.Response(200, headers=headers, stream=streams[-1])

	planner = remote_agent(
		"https://agent.example/a2a/P",
		transport=httpx.MockTransport(network),
		max_response_bytes=1_000_000,
	)
	context = ToolContext(agent="A", integration="local")
	with pytest.raises(ToolError, match="larger than 1000000 bytes"):
		await planner.function({"message": "hi"}, context)
	assert streams[0].read < 2_000_000  # it stopped reading past the cap
	fine = _remote_answer("fine")
	body = gzip.compress(fine) if compressed else fine
	answer = await planner.function({"message": "hi"}, context)
	assert answer["text"] == "fine"


def test_a_remote_agents_cap_must_be_positive() -> None:
	"""max_response_bytes=0 is refused when the tool is made, naming the parameter."""
	from openmolt_core.errors import ConfigurationError
	from openmolt_serve.a2a import remote_agent

	with pytest.raises(ConfigurationError, match="max_response_bytes must be at least 1"):
		remote_agent("https://agent.example/a2a/P", max_response_bytes=0)
