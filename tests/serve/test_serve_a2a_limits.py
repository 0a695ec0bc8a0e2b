"""A2A tasks are bounded in memory, and a parked task survives a restart when a run store is set."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import get_text_parts
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

import openmolt_serve.a2a as a2a_module
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions

pytestmark = pytest.mark.anyio

TOKEN = "a2a-token-for-tests-0123456789"


def message(text: str, **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(
			message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
		)
	)


@asynccontextmanager
async def served(om: OpenMolt, model: ScriptedModel) -> AsyncIterator[Any]:
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	park_questions(agent)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		config = ClientConfig(httpx_client=http, streaming=False)
		client = await create_client(f"{server.url}/a2a/Helper", client_config=config)
		yield client, server.a2a["Helper"].handler.agent_executor


async def send(client: Any, request: SendMessageRequest) -> Any:
	(response,) = [r async for r in client.send_message(request)]
	return response.task


async def test_past_the_limit_the_oldest_parked_task_expires_with_a_clear_answer(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Parked runs are kept up to MAX_PARKED; the oldest one's answer is a failed 'task expired'."""
	monkeypatch.setattr(a2a_module, "MAX_PARKED", 2)
	model = ScriptedModel([ask_human("Which city?")] * 3 + [finish({"result": "Rain."})])
	om = OpenMolt(entry_points=False)
	async with served(om, model) as (client, executor):
		tasks = [await send(client, message(f"Weather {n}?")) for n in range(3)]
		assert {t.status.state for t in tasks} == {TaskState.TASK_STATE_INPUT_REQUIRED}
		assert len(executor.parked) == 2
		oldest = tasks[0]
		late = await send(client, message("Oslo", task_id=oldest.id, context_id=oldest.context_id))
		assert late.status.state == TaskState.TASK_STATE_FAILED
		said = get_text_parts(late.status.message.parts)[0]
		assert "task expired" in said
		newest = tasks[2]
		done = await send(client, message("Oslo", task_id=newest.id, context_id=newest.context_id))
		assert done.status.state == TaskState.TASK_STATE_COMPLETED
	await om.aclose()
	assert len(model.requests) == 4  # the expired task ran nothing


async def test_the_task_store_keeps_at_most_max_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
	"""Past MAX_TASKS the oldest task is forgotten: GetTask says it is not found."""
	monkeypatch.setattr(a2a_module, "MAX_TASKS", 2)
	model = ScriptedModel([finish({"result": "Sunny."})] * 3)
	om = OpenMolt(entry_points=False)
	async with served(om, model) as (client, _):
		tasks = [await send(client, message(f"Weather {n}?")) for n in range(3)]
		with pytest.raises(Exception, match=r"(?i)not found"):
			await client.get_task(GetTaskRequest(id=tasks[0].id))
		again = await client.get_task(GetTaskRequest(id=tasks[2].id))
		assert again.status.state == TaskState.TASK_STATE_COMPLETED
	await om.aclose()


async def test_with_a_run_store_a_parked_task_survives_a_restart(tmp_path: Path) -> None:
	"""The run store is the source of truth: a new server (a new process) resumes the task."""
	store = tmp_path / "runs.db"
	first = ScriptedModel([ask_human("Which city?")])
	om = OpenMolt(entry_points=False, run_store=store)
	async with served(om, first) as (client, executor):
		task = await send(client, message("Weather?"))
		assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		assert not executor.parked  # nothing kept in memory: the store has it
	await om.aclose()
	second = ScriptedModel([finish({"result": "Rain in Oslo."})])
	om = OpenMolt(entry_points=False, run_store=store)
	async with served(om, second) as (client, _):
		again = await client.get_task(GetTaskRequest(id=task.id))
		assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		done = await send(client, message("Oslo", task_id=task.id, context_id=task.context_id))
		assert done.status.state == TaskState.TASK_STATE_COMPLETED
	await om.aclose()
	assert "Oslo" in second.requests[0].messages[-1].content


async def test_two_servers_on_one_run_store_read_the_task_as_the_other_left_it(
	tmp_path: Path,
) -> None:
	"""A task answered on another server of the run store is read completed here, never as this
	server saw it last (its copy in memory said input-required, and a message to it failed the
	completed task as expired)."""
	from a2a.types import ListTasksRequest

	store = tmp_path / "runs.db"
	one = OpenMolt(entry_points=False, run_store=store)
	two = OpenMolt(entry_points=False, run_store=store)
	asks = ScriptedModel([ask_human("Which city?")])
	answers = ScriptedModel([finish({"result": "Rain in Oslo."})])
	async with served(one, asks) as (a, _), served(two, answers) as (b, _):
		task = await send(a, message("Weather?"))
		done = await send(b, message("Oslo", task_id=task.id, context_id=task.context_id))
		assert done.status.state == TaskState.TASK_STATE_COMPLETED
		again = await a.get_task(GetTaskRequest(id=task.id))
		assert again.status.state == TaskState.TASK_STATE_COMPLETED
		(listed,) = (await a.list_tasks(ListTasksRequest())).tasks
		assert listed.status.state == TaskState.TASK_STATE_COMPLETED
		late = await send(a, message("Bergen", task_id=task.id, context_id=task.context_id))
		assert late.status.state == TaskState.TASK_STATE_COMPLETED
		assert get_text_parts(late.status.message.parts) == ["Rain in Oslo."]
	await one.aclose()
	await two.aclose()


async def test_after_a_restart_list_tasks_lists_the_callers_tasks_of_the_store(
	tmp_path: Path,
) -> None:
	"""A new server on the same run store lists the tasks from before it (it listed none), the caller's only."""
	from a2a.types import ListTasksRequest

	store = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=store)
	model = ScriptedModel([finish({"result": "Sunny."}), ask_human("Which city?")])
	async with served(om, model) as (client, _):
		done = await send(client, message("Weather in Rome?"))
		waiting = await send(client, message("Weather?"))
	await om.aclose()
	om = OpenMolt(entry_points=False, run_store=store)
	async with served(om, ScriptedModel([])) as (client, _):
		listed = (await client.list_tasks(ListTasksRequest())).tasks
		assert sorted(t.id for t in listed) == sorted([done.id, waiting.id])
		states = {t.id: t.status.state for t in listed}
		assert states[done.id] == TaskState.TASK_STATE_COMPLETED
		assert states[waiting.id] == TaskState.TASK_STATE_INPUT_REQUIRED
		asking = ListTasksRequest(status=TaskState.TASK_STATE_INPUT_REQUIRED)
		assert [t.id for t in (await client.list_tasks(asking)).tasks] == [waiting.id]
	await om.aclose()


async def test_the_task_file_keeps_about_max_tasks_and_a_new_store_reads_it(
	tmp_path: Path,
) -> None:
	"""Past the limit the file drops its oldest tasks (every 100 saves); the newest are read back."""
	from a2a.server.context import ServerCallContext
	from a2a.types import Task, TaskStatus

	from openmolt_serve._a2a_store import A2ATaskStore

	path = tmp_path / "runs.db"
	store = A2ATaskStore(max_tasks=3, path=path, scope="a2a:Helper")
	context = ServerCallContext()
	done = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
	for n in range(250):
		await store.save(Task(id=f"t{n}", context_id="c", status=done), context)
	store.close()
	again = A2ATaskStore(max_tasks=3, path=path, scope="a2a:Helper")
	assert await again.get("t0", context) is None  # pruned at the 100th save
	assert await again.get("t199", context) is not None
	newest = await again.get("t249", context)
	assert newest is not None and newest.status.state == TaskState.TASK_STATE_COMPLETED
	other = A2ATaskStore(path=path, scope="a2a:Other")
	assert await other.get("t249", context) is None  # each agent its own
	other.close()
	assert file_rows(path) <= 3 + 100
	again.close()


def file_rows(path: Path) -> int:
	import sqlite3

	with sqlite3.connect(path) as db:
		return int(db.execute("SELECT count(*) FROM openmolt_a2a_tasks").fetchone()[0])


async def test_a_context_id_past_its_limit_fails_the_task_and_runs_nothing() -> None:
	"""The contextId names a session: one longer than MAX_CONTEXT_ID is refused, naming it."""
	model = ScriptedModel([finish({"result": "Rain."})])
	om = OpenMolt(entry_points=False)
	async with served(om, model) as (client, _):
		long = "c" * (a2a_module.MAX_CONTEXT_ID + 1)
		task = await send(client, message("Weather?", context_id=long))
		assert task.status.state == TaskState.TASK_STATE_FAILED
		assert "contextId: at most 256" in get_text_parts(task.status.message.parts)[0]
		ok = await send(client, message("Weather?", context_id="c" * a2a_module.MAX_CONTEXT_ID))
		assert ok.status.state == TaskState.TASK_STATE_COMPLETED
	await om.aclose()
	assert len(model.requests) == 1  # only the task within the limit ran
