"""A run waiting for its user to connect an account: A2A ``auth-required`` and an AG-UI interrupt,
with the consent link (masked); the next message after the user connected goes on."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import get_text_parts
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

from openmolt import OpenMolt
from openmolt_core.accounts import CAPABILITY_NAME
from openmolt_core.hooks import Capability, Park, Proceed
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

pytestmark = pytest.mark.anyio

TOKEN = "a2a-token-for-tests-0123456789"
SECRET = "mail-secret-in-the-link-77"


class Consent(Capability):
	"""Parks each call until ``connected`` is set, as the end users' accounts do.

	It stands in for `openmolt_core.capabilities.accounts.EndUserAccounts` (whose parks
	`authorization_requests` reads by its name): a served run has no end user to connect.
	"""

	name = CAPABILITY_NAME
	__module__ = "openmolt_core.capabilities.accounts"  # the built-in name is the real one's

	def __init__(self) -> None:
		self.connected = False

	async def before_tool(self, run: Any, call: Any, tool: Any) -> Any:
		if self.connected:
			return Proceed()
		request = {
			"integration": "mail",
			"user": "ada",
			"scopes": ["read"],
			"url": f"https://auth.example/consent?client={SECRET}",
			"tool": call.tool,
			"reason": "not_connected",
		}
		return Park(f"{call.tool} waits for ada to connect mail", request, "authorization_required")


@tool(labels=[])
def me() -> str:
	"""Who the user is."""
	return "ada"


def _om() -> tuple[OpenMolt, Any, Consent]:
	om = OpenMolt(entry_points=False, integrations={"mail": {"clientSecret": SECRET}})
	consent = Consent()
	model = ScriptedModel([call_tool("local.me"), finish({"result": "You are ada."})])
	agent = om.create_agent(name="Helper", model=model, tools=[me], capabilities=[consent])
	return om, agent, consent


def message(text: str, **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(
			message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
		)
	)


async def test_a2a_a_run_waiting_for_an_account_is_auth_required_and_goes_on_after() -> None:
	"""auth-required with the consent link (the secret masked); the next message goes on."""
	om, agent, consent = _om()
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		client = await create_client(
			f"{server.url}/a2a/Helper",
			client_config=ClientConfig(httpx_client=http, streaming=False),
		)
		(first,) = [r async for r in client.send_message(message("Who am I?"))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
		[said] = get_text_parts(task.status.message.parts)
		assert "Connect it here" in said and "mail: https://auth.example/consent" in said
		assert SECRET not in said
		consent.connected = True  # the user connected the account
		again = message("done", task_id=task.id, context_id=task.context_id)
		(second,) = [r async for r in client.send_message(again)]
		assert second.task.id == task.id
		assert second.task.status.state == TaskState.TASK_STATE_COMPLETED
	await om.aclose()


async def test_agui_a_run_waiting_for_an_account_ends_with_an_interrupt_and_resumes() -> None:
	"""RUN_FINISHED with an authorization interrupt (link masked), not RUN_ERROR; resume goes on."""
	om, agent, consent = _om()
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "text/event-stream"}

	def body(**more: Any) -> dict[str, Any]:
		return {
			"threadId": "t1",
			"runId": uuid.uuid4().hex,
			"state": {},
			"messages": [{"id": "m1", "role": "user", "content": "Who am I?"}],
			"tools": [],
			"context": [],
			"forwardedProps": {},
			**more,
		}

	async def events(http: httpx.AsyncClient, url: str, payload: dict[str, Any]) -> list[Any]:
		response = await http.post(url, json=payload)
		assert response.status_code == 200, response.text
		return [
			json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")
		]

	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		url = f"{server.url}/agui/Helper"
		first = await events(http, url, body())
		end = first[-1]
		assert end["type"] == "RUN_FINISHED", end
		[interrupt] = end["outcome"]["interrupts"]
		assert interrupt["reason"] == "authorization"
		assert "mail: https://auth.example/consent" in interrupt["message"]
		assert SECRET not in json.dumps(first)
		consent.connected = True
		resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {}}]
		second = await events(http, url, body(resume=resume))
		assert second[-1]["type"] == "RUN_FINISHED"
		assert second[-1]["result"] == {"result": "You are ada."}
	await om.aclose()
