"""A2A callers with tokens of their own: each sees and answers only its own tasks and contexts.

Through the real server and the official a2a-sdk client: caller ``crm`` parks a task; caller
``web``, holding a valid token of its own, gets "task not found" for it whatever it does (as
for an unknown id), lists only its own, and its message with crm's ``contextId`` does not read
crm's turns.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import (
	CancelTaskRequest,
	GetTaskRequest,
	ListTasksRequest,
	Message,
	Part,
	Role,
	SendMessageRequest,
	SubscribeToTaskRequest,
	TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from openmolt import OpenMolt
from openmolt_core.secrets import Redactor
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve._launch import session_id
from openmolt_serve.chats import park_questions

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CRM = "crm-a2a-token-0123456789abcdef"
WEB = "web-a2a-token-0123456789abcdef"


@asynccontextmanager
async def serving(
	model: ScriptedModel, om: OpenMolt | None = None, **a2a: Any
) -> AsyncIterator[tuple[str, OpenMolt]]:
	"""Helper served over A2A to the callers crm and web (tokens in the environment)."""
	om = om or OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	park_questions(agent)
	callers = {"crm": {"tokenEnv": "CRM_A2A_TOKEN"}, "web": {"token": WEB}}
	triggers = Triggers.model_validate({"a2a": {"callers": callers, **a2a}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		yield f"{server.url}/a2a/Helper", om


@pytest.fixture(autouse=True)
def _crm_token(monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setenv("CRM_A2A_TOKEN", CRM)


def message(text: str, **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(
			message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
		)
	)


def http_as(token: str) -> httpx.AsyncClient:
	headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
	return httpx.AsyncClient(headers=headers, timeout=20)


async def client_as(url: str, http: httpx.AsyncClient, *, streaming: bool = False) -> Any:
	config = ClientConfig(httpx_client=http, streaming=streaming)
	return await create_client(url, client_config=config)


async def rpc(http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> Any:
	answer = await http.post(
		f"{url}/", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
	)
	assert answer.status_code == 200, answer.text
	return answer.json()


def said(model: ScriptedModel, index: int) -> str:
	return json.dumps([m.content for m in model.requests[index].messages])


async def test_each_callers_token_is_taken_and_a_wrong_one_is_401() -> None:
	"""crm's token (from its variable) and web's (given) both reach the methods; another is 401."""
	async with serving(ScriptedModel([])) as (url, _):
		for token in (CRM, WEB):
			async with http_as(token) as http:
				answer = await rpc(http, url, "ListTasks", {})
				assert "result" in answer, answer
		for token in ("nope", CRM + "x", CRM[:-1], f"{CRM} {WEB}"):
			async with http_as(token) as http:
				refused = await http.post(f"{url}/", json={"jsonrpc": "2.0", "id": 1})
				assert refused.status_code == 401, token


async def test_another_callers_task_is_not_found_whatever_it_does() -> None:
	"""web gets crm's parked task, cancels it, subscribes to it, answers it, messages it: each
	is the error an unknown id gets; it lists none of crm's; crm's task still waits and its
	answer ends it."""
	model = ScriptedModel([ask_human("Which invoice?"), finish({"result": "paid INV-2"})])
	async with serving(model) as (url, _), http_as(CRM) as crm_http, http_as(WEB) as web_http:
		crm = await client_as(url, crm_http)
		(first,) = [r async for r in crm.send_message(message("pay it", context_id="c-1"))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		unknown = uuid.uuid4().hex
		for method, params in (
			("GetTask", {"id": "{id}"}),
			("CancelTask", {"id": "{id}"}),
			(
				"SendMessage",
				{
					"message": {
						"messageId": "m",
						"role": "ROLE_USER",
						"taskId": "{id}",
						"contextId": task.context_id,
						"parts": [{"text": "INV-2"}],
					}
				},
			),
		):
			theirs = json.loads(json.dumps(params).replace("{id}", task.id))
			nobodys = json.loads(json.dumps(params).replace("{id}", unknown))
			refused = await rpc(web_http, url, method, theirs)
			assert "error" in refused, (method, refused)
			unknowns = (await rpc(web_http, url, method, nobodys))["error"]
			as_unknown = json.dumps(refused["error"]).replace(task.id, "<id>")
			assert as_unknown == json.dumps(unknowns).replace(unknown, "<id>"), method
		web = await client_as(url, web_http, streaming=True)
		with pytest.raises(TaskNotFoundError) as subscribed:
			async for _ in web.subscribe(SubscribeToTaskRequest(id=task.id)):
				pass
		assert "not found" in str(subscribed.value).lower()
		with pytest.raises(TaskNotFoundError) as answered:
			async for _ in web.send_message(
				message("INV-2", task_id=task.id, context_id=task.context_id)
			):
				pass
		assert "not found" in str(answered.value).lower()
		assert list((await web.list_tasks(ListTasksRequest())).tasks) == []
		listed = (await crm.list_tasks(ListTasksRequest())).tasks
		assert [t.id for t in listed] == [task.id]
		assert len(model.requests) == 1  # nothing of web's reached the run
		still = await crm.get_task(GetTaskRequest(id=task.id))
		assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		answer = message("INV-2", task_id=task.id, context_id=task.context_id)
		(second,) = [r async for r in crm.send_message(answer)]
		assert second.task.status.state == TaskState.TASK_STATE_COMPLETED
		with pytest.raises(TaskNotFoundError):  # web cannot cancel it either way
			await web.cancel_task(CancelTaskRequest(id=task.id))


async def test_a_context_id_is_each_callers_own_conversation() -> None:
	"""web's message with crm's contextId does not read crm's turn; crm's next message does."""
	model = ScriptedModel([finish("noted"), finish("nothing"), finish("alpha it is")])
	async with serving(model) as (url, _), http_as(CRM) as crm_http, http_as(WEB) as web_http:
		crm = await client_as(url, crm_http)
		web = await client_as(url, web_http)
		[_ async for _ in crm.send_message(message("the code word is alpha", context_id="c-1"))]
		[_ async for _ in web.send_message(message("what is the code word?", context_id="c-1"))]
		[_ async for _ in crm.send_message(message("and the code word?", context_id="c-1"))]
	assert "alpha" not in said(model, 1)  # web's run
	assert "code word is alpha" in said(model, 2)  # crm's own conversation goes on


async def test_each_callers_rate_limit_is_its_own() -> None:
	"""At one request a minute, crm's second is 429 while web's first still goes through."""
	async with serving(ScriptedModel([]), rateLimit=1) as (url, _):
		async with http_as(CRM) as crm, http_as(WEB) as web:
			assert "result" in await rpc(crm, url, "ListTasks", {})
			limited = await crm.post(f"{url}/", json={"jsonrpc": "2.0", "id": 1})
			assert limited.status_code == 429
			assert "result" in await rpc(web, url, "ListTasks", {})


async def test_a_task_keeps_its_caller_across_a_restart(tmp_path: Path) -> None:
	"""With a run store, a parked task read after a restart is still crm's: web gets "task not
	found", crm reads it waiting and its answer ends the run."""
	store = tmp_path / "runs.db"
	model = ScriptedModel([ask_human("Which invoice?"), finish({"result": "paid"})])
	om = OpenMolt(entry_points=False, run_store=store)
	async with serving(model, om) as (url, _), http_as(CRM) as crm_http:
		crm = await client_as(url, crm_http)
		(first,) = [r async for r in crm.send_message(message("pay it"))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
	await om.aclose()
	again = OpenMolt(entry_points=False, run_store=store)
	async with (
		serving(model, again) as (url, _),
		http_as(CRM) as crm_http,
		http_as(WEB) as web_http,
	):
		web = await client_as(url, web_http)
		with pytest.raises(TaskNotFoundError) as refused:
			await web.get_task(GetTaskRequest(id=task.id))
		assert "not found" in str(refused.value).lower()
		crm = await client_as(url, crm_http)
		still = await crm.get_task(GetTaskRequest(id=task.id))
		assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		answer = message("INV-2", task_id=task.id, context_id=task.context_id)
		(second,) = [r async for r in crm.send_message(answer)]
		assert second.task.status.state == TaskState.TASK_STATE_COMPLETED
	await again.aclose()


def test_a_named_callers_session_names_it_and_the_default_keeps_todays_id() -> None:
	"""``a2a:<agent>:<caller>:<context>`` for a named caller; ``default`` keeps the old id, and a
	context id holding a ':' never meets another caller's session."""
	assert session_id("a2a", "Helper", "c-1") == "a2a:Helper:c-1"
	assert session_id("a2a", "Helper", "c-1", caller="default") == "a2a:Helper:c-1"
	assert session_id("a2a", "Helper", "c-1", caller="crm") == "a2a:Helper:crm:c-1"
	assert session_id("a2a", "Helper", "crm:c-1") != session_id(
		"a2a", "Helper", "c-1", caller="crm"
	)


async def test_the_callers_tokens_are_secrets_of_the_instance() -> None:
	"""Both tokens (the one read from the environment too) are masked by the instance."""
	async with serving(ScriptedModel([])) as (_, om):
		assert {CRM, WEB} <= set(om.secrets.values())
		assert CRM not in Redactor(known=om.secrets)(f"Bearer {CRM}")
