"""A2A as a client developer meets it: the gate's refusals of a body are JSON-RPC errors the
official client reads, and a refused request loses nothing."""

from __future__ import annotations

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
