"""Triggers on a durable store (openmolt-dbos, SQLite): a restart loses no trigger.

These start real DBOS engines (one per process), so they run in the "dbos-shared" xdist group
with the durable tests of no one store, one after another.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server, restart

from openmolt import OpenMolt
from openmolt_core.durability import PendingRun
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve._rows import task_rows
from openmolt_serve.chats import Conversations
from openmolt_serve.signatures import sign

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("dbos-shared"), pytest.mark.timeout(120)]

SECRET = "durable-webhook-secret"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[str]:
	yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
	await restart()


@pytest.fixture(params=["sqlite", "postgres"])
async def either(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
	"""A fresh store: a SQLite file, or a new PostgreSQL database (where the servers on several
	machines keep their claims: `openmolt_dbos._seen`). PostgreSQL needs
	``OPENMOLT_TEST_POSTGRES_URL`` (``.ci/postgres start``)."""
	import os
	import uuid

	if request.param == "sqlite":
		yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
		await restart()
		return
	admin = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
	if not admin:
		pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL (.ci/run starts a cluster)")
	import psycopg

	name = f"om_{uuid.uuid4().hex[:12]}"
	with psycopg.connect(admin, autocommit=True) as conn:
		conn.execute(f'CREATE DATABASE "{name}"')
	try:
		yield f"{admin.rpartition('/')[0]}/{name}"
		await restart()
	finally:
		with psycopg.connect(admin, autocommit=True) as conn:
			conn.execute(
				"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
				(name,),
			)
			conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


async def test_a_webhook_run_is_recorded_before_the_202_and_readable_by_its_id(store: str) -> None:
	"""The 202's run id is the workflow's: om.result reads the run from the store."""
	om = OpenMolt(durability=store, entry_points=False)
	agent = om.create_agent(
		name="Hooked", model=ScriptedModel([finish("done", human_message="ok")])
	)
	triggers = Triggers.model_validate({"webhook": {"scheme": "github", "secret": SECRET}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url) as client:
			body = json.dumps({"action": "opened"}).encode()
			headers = {**sign("github", SECRET, body), "X-GitHub-Delivery": "delivery-1"}
			response = await client.post("/hooks/Hooked", content=body, headers=headers)
	assert response.status_code == 202
	run_id = response.json()["run_id"]
	result = await om.result(run_id)
	assert result is not None and result.status == "success" and result.human_message == "ok"
	rows = await om.durability.runs(agent="Hooked")  # type: ignore[union-attr]
	assert [r["run_id"] for r in rows] == [run_id]
	await om.aclose()


async def test_a_signed_request_without_a_delivery_id_retried_to_another_server_runs_once(
	store: str,
) -> None:
	"""An hmac request (no delivery id) reaching a second server that has not seen it: one run.

	Servers on other machines share the durable store, not the replay guard's file (it lives in
	each one's file folder): the run id comes from the signature, so the retry attaches to the
	run the first server started instead of starting another.
	"""
	from openmolt_serve.signatures import ReplayGuard

	om = OpenMolt(durability=store, entry_points=False)
	model = ScriptedModel([finish("done"), finish("again")])
	agent = om.create_agent(name="Hooked", model=model)
	triggers = Triggers.model_validate({"webhook": {"scheme": "hmac", "secret": SECRET}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url) as client:
			body = json.dumps({"action": "opened"}).encode()
			headers = sign("hmac", SECRET, body)
			first = await client.post("/hooks/Hooked", content=body, headers=headers)
			assert first.status_code == 202
			assert (await om.result(first.json()["run_id"])) is not None
			# The other server: the same store, a replay guard that saw nothing.
			server.webhooks["Hooked"].guard = ReplayGuard()
			second = await client.post("/hooks/Hooked", content=body, headers=headers)
	assert second.status_code in (200, 202)
	assert second.json()["run_id"] == first.json()["run_id"]
	assert len(model.requests) == 1
	rows = await om.durability.runs(agent="Hooked")  # type: ignore[union-attr]
	assert len(rows) == 1
	await om.aclose()


def helper(om: OpenMolt, model: ScriptedModel) -> Any:
	return om.create_agent(name="Helper", model=model, instructions="Help.")


def test_a_question_parked_before_a_restart_is_answered_by_the_next_message(
	tmp_path: Path,
) -> None:
	"""The run parks on a question asked in the chat; after a restart, the next message answers it.

	Its chat's row is gone (a run parked before chats kept rows: `openmolt_serve._parks`): the
	question is found among the store's pending ones. Each "process" is an event loop of its own
	(DBOS binds its executor to the loop it starts in).
	"""
	import anyio

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	fake: FakeTelegram | None = None
	parked_id = ""

	def triggers(base: str) -> Triggers:
		channel = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedUsers": [42],
		}
		return Triggers.model_validate({"channels": [channel]})

	async def before() -> None:
		nonlocal fake, parked_id
		fake = FakeTelegram()
		async with local_server(fake.app()) as base:
			om = OpenMolt(durability=store, entry_points=False)
			agent = helper(om, ScriptedModel([ask_human("Which invoice?")]))
			async with TriggerServer([(agent, triggers(base))], port=0):
				fake.message("pay it")
				await eventually(lambda: len(fake.sent) == 1, seconds=30)
			[parked] = await om.pending(agent="Helper")
			parked_id = parked.run_id
			rows = task_rows(agent, "chat:telegram")
			assert rows is not None and rows.get("telegram:42", "42") is not None
			rows.delete("telegram:42", "42")
			rows.close()
			await om.aclose()
		await restart()

	model = ScriptedModel([finish("paid", human_message="Paid INV-2.")])

	async def after() -> None:
		assert fake is not None
		fake.reset()
		async with local_server(fake.app()) as base:
			om = OpenMolt(durability=store, entry_points=False)
			agent = helper(om, model)  # the same agent; the model is asked only after the answer
			pending = om.pending

			async def moved_on(*, agent: str | None = None) -> list[PendingRun]:
				# The run as a chat would see it had another answer taken the question first.
				return [replace(p, step=p.step - 1) for p in await pending(agent=agent)]

			om.pending = moved_on  # type: ignore[method-assign]
			async with TriggerServer([(agent, triggers(base))], port=0):
				fake.message("INV-1")  # answers a question the run has moved past: refused
				await eventually(lambda: len(fake.sent) == 2, seconds=30)
				assert [p.run_id for p in await pending(agent="Helper")] == [parked_id]
				om.pending = pending  # type: ignore[method-assign]
				fake.message("INV-2")
				await eventually(lambda: len(fake.sent) == 3, seconds=30)
			assert await om.pending(agent="Helper") == []
			result = await om.result(parked_id)
			assert result is not None and result.status == "success"
			await om.aclose()
		await restart()

	anyio.run(before)
	assert fake is not None and fake.sent[0]["text"] == "Which invoice?"
	anyio.run(after)
	assert fake.sent[1]["text"].startswith("Your answer was not used: ")
	assert "already answered" in fake.sent[1]["text"]
	# The refusal's own words are the operator's (the run's id, a command): not the chat's.
	assert "telegram-helper-" not in fake.sent[1]["text"]
	assert "openmolt runs" not in fake.sent[1]["text"]
	assert fake.sent[2]["chat_id"] == "42" and fake.sent[2]["text"] == "Paid INV-2."
	assert "INV-2" in model.requests[0].messages[-1].content
	assert len(model.requests) == 1  # the refused answer never reached the run


def _group_triggers(base: str) -> Triggers:
	"""A Telegram channel at ``base`` where users 42 and 9 may write."""
	channel = {
		"type": "telegram",
		"token": TOKEN,
		"baseUrl": base,
		"pollTimeout": 1,
		"allowedUsers": [42, 9],
	}
	return Triggers.model_validate({"channels": [channel]})


async def _park_a_group_question(store: str, fake: FakeTelegram, parked: list[PendingRun]) -> None:
	"""User 42 asks in a group; the durable run parks on its question; the process restarts."""
	async with local_server(fake.app()) as base:
		om = OpenMolt(durability=store, entry_points=False)
		agent = helper(om, ScriptedModel([ask_human("Which invoice?")]))
		async with TriggerServer([(agent, _group_triggers(base))], port=0):
			fake.message("pay it", user=42, chat=-100)
			await eventually(lambda: len(fake.sent) == 1, seconds=30)
		parked.extend(await om.pending(agent="Helper"))
		await om.aclose()
	await restart()


def test_a_question_parked_before_a_restart_is_answered_only_by_the_person_it_acts_for(
	tmp_path: Path,
) -> None:
	"""In a group, after a restart, another trusted member's message starts a run of its own.

	The run acts for the member who asked (their connected accounts): the stored question
	names them (``PendingRun.user``) and only their message answers it.
	"""
	import anyio

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	fake = FakeTelegram()
	parked: list[PendingRun] = []

	model = ScriptedModel(
		[finish("hi", human_message="Hello 9."), finish("paid", human_message="Paid INV-2.")]
	)

	async def after() -> None:
		fake.reset()
		async with local_server(fake.app()) as base:
			om = OpenMolt(durability=store, entry_points=False)
			agent = helper(om, model)
			async with TriggerServer([(agent, _group_triggers(base))], port=0):
				fake.message("INV-9", user=9, chat=-100)  # not the asker: a run of its own
				await eventually(lambda: len(fake.sent) == 2, seconds=30)
				assert [p.run_id for p in await om.pending(agent="Helper")] == [parked[0].run_id]
				fake.message("INV-2", user=42, chat=-100)
				await eventually(lambda: len(fake.sent) == 3, seconds=30)
			assert await om.pending(agent="Helper") == []
			result = await om.result(parked[0].run_id)
			assert result is not None and result.status == "success"
			await om.aclose()
		await restart()

	anyio.run(_park_a_group_question, store, fake, parked)
	assert [(p.user, p.to_dict()["user"]) for p in parked] == [("telegram:42", "telegram:42")]
	anyio.run(after)
	assert [m["text"] for m in fake.sent] == ["Which invoice?", "Hello 9.", "Paid INV-2."]
	assert "INV-9" in model.requests[0].messages[-1].content  # 9's own run
	assert "INV-2" in model.requests[1].messages[-1].content  # the answer to 42's question


def test_a_stored_question_that_names_nobody_is_not_answered_by_a_group_member(
	tmp_path: Path,
) -> None:
	"""In a group, a stored question without its user (an older record) is nobody's to answer:
	a member's message starts a run of its own and the question stays parked."""
	import anyio

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	fake = FakeTelegram()
	parked: list[PendingRun] = []

	model = ScriptedModel([finish("hi", human_message="Hello 9.")])

	async def after() -> None:
		fake.reset()
		async with local_server(fake.app()) as base:
			om = OpenMolt(durability=store, entry_points=False)
			agent = helper(om, model)
			pending = om.pending

			async def nameless(*, agent: str | None = None) -> list[PendingRun]:
				return [replace(p, user=None) for p in await pending(agent=agent)]

			om.pending = nameless  # type: ignore[method-assign]
			async with TriggerServer([(agent, _group_triggers(base))], port=0):
				fake.message("INV-9", user=9, chat=-100)
				await eventually(lambda: len(fake.sent) == 2, seconds=30)
			assert [p.run_id for p in await pending(agent="Helper")] == [parked[0].run_id]
			await om.aclose()
		await restart()

	anyio.run(_park_a_group_question, store, fake, parked)
	anyio.run(after)
	assert [m["text"] for m in fake.sent] == ["Which invoice?", "Hello 9."]
	assert "INV-9" in model.requests[0].messages[-1].content  # 9's own run


def test_an_a2a_task_parked_before_a_restart_is_answered_after_it(tmp_path: Path) -> None:
	"""The task and its run's question survive the restart: the caller's answer resumes the run."""
	import uuid

	import anyio
	from a2a.client import ClientConfig, create_client
	from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	token = "a2a-token-for-tests-0123456789"
	triggers = Triggers.model_validate({"a2a": {"token": token}})
	found: dict[str, Any] = {}

	def message(text: str, **ids: str) -> SendMessageRequest:
		return SendMessageRequest(
			message=Message(
				message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
			)
		)

	async def send(model: ScriptedModel, request: Any = None, *, get: str = "") -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		agent = helper(om, model)
		from openmolt_serve.chats import park_questions

		park_questions(agent)
		headers = {"Authorization": f"Bearer {token}"}
		async with (
			TriggerServer([(agent, triggers)], port=0) as server,
			httpx.AsyncClient(headers=headers, timeout=30) as http,
		):
			config = ClientConfig(httpx_client=http, streaming=False)
			client = await create_client(f"{server.url}/a2a/Helper", client_config=config)
			if get:
				found["again"] = await client.get_task(GetTaskRequest(id=get))
			(response,) = [r async for r in client.send_message(request)]
		await om.aclose()
		await restart()
		return response.task

	async def before() -> None:
		found["task"] = await send(ScriptedModel([ask_human("Which invoice?")]), message("pay it"))

	model = ScriptedModel([finish("paid", human_message="Paid INV-2.")])

	async def after() -> None:
		task = found["task"]
		answer = message("INV-2", task_id=task.id, context_id=task.context_id)
		found["done"] = await send(model, answer, get=task.id)

	anyio.run(before)
	assert found["task"].status.state == TaskState.TASK_STATE_INPUT_REQUIRED
	anyio.run(after)
	assert found["again"].status.state == TaskState.TASK_STATE_INPUT_REQUIRED
	assert found["done"].status.state == TaskState.TASK_STATE_COMPLETED
	assert "INV-2" in model.requests[0].messages[-1].content


def test_an_a2a_answer_after_a_restart_that_leads_to_a_second_question_reports_it(
	tmp_path: Path,
) -> None:
	"""The answered run asks again: the task is input-required with the new question, at once
	(om.result would wait for the run's end, which only the caller's next answer brings)."""
	import uuid

	import anyio
	from a2a.client import ClientConfig, create_client
	from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	token = "a2a-token-for-tests-0123456789"
	triggers = Triggers.model_validate({"a2a": {"token": token}})
	found: dict[str, Any] = {}

	def message(text: str, **ids: str) -> SendMessageRequest:
		return SendMessageRequest(
			message=Message(
				message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
			)
		)

	async def send(model: ScriptedModel, request: Any) -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		agent = helper(om, model)
		from openmolt_serve.chats import park_questions

		park_questions(agent)
		headers = {"Authorization": f"Bearer {token}"}
		try:
			async with (
				TriggerServer([(agent, triggers)], port=0) as server,
				httpx.AsyncClient(headers=headers, timeout=60) as http,
			):
				config = ClientConfig(httpx_client=http, streaming=False)
				client = await create_client(f"{server.url}/a2a/Helper", client_config=config)
				with anyio.fail_after(30):
					(response,) = [r async for r in client.send_message(request)]
		finally:
			await om.aclose()
			await restart()
		return response.task

	async def before() -> None:
		found["task"] = await send(ScriptedModel([ask_human("Which invoice?")]), message("pay it"))

	async def after() -> None:
		task = found["task"]
		model = ScriptedModel([ask_human("From which account?"), finish("paid")])
		answer = message("INV-2", task_id=task.id, context_id=task.context_id)
		found["again"] = await send(model, answer)

	anyio.run(before)
	anyio.run(after)
	again = found["again"]
	assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
	assert "From which account?" in str(again.status.message)


def test_an_a2a_answer_another_surface_gave_first_is_told_not_used(tmp_path: Path) -> None:
	"""`openmolt answer` answered the task's question first: the caller's answer is refused and
	the task says why (it said "the run failed" while the run went on with the other answer)."""
	import uuid

	import anyio
	from a2a.client import ClientConfig, create_client
	from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	token = "a2a-token-for-tests-0123456789"
	triggers = Triggers.model_validate({"a2a": {"token": token}})
	model = ScriptedModel([ask_human("Which invoice?"), finish("paid", human_message="Paid.")])

	def message(text: str, **ids: str) -> SendMessageRequest:
		return SendMessageRequest(
			message=Message(
				message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
			)
		)

	async def main() -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		agent = helper(om, model)
		from openmolt_serve.chats import park_questions

		park_questions(agent)
		headers = {"Authorization": f"Bearer {token}"}
		try:
			async with (
				TriggerServer([(agent, triggers)], port=0) as server,
				httpx.AsyncClient(headers=headers, timeout=60) as http,
			):
				config = ClientConfig(httpx_client=http, streaming=False)
				client = await create_client(f"{server.url}/a2a/Helper", client_config=config)
				with anyio.fail_after(30):
					(first,) = [r async for r in client.send_message(message("pay it"))]
					task = first.task
					assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
					(waiting,) = await om.pending()
					await om.answer(waiting.run_id, "INV-1", step=waiting.step)  # the CLI
					assert (await om.result(waiting.run_id)).status == "success"
					late = message("INV-2", task_id=task.id, context_id=task.context_id)
					(second,) = [r async for r in client.send_message(late)]
		finally:
			await om.aclose()
			await restart()
		return second.task

	task = anyio.run(main)
	assert task.status.state == TaskState.TASK_STATE_FAILED
	said = task.status.message.parts[0].text
	assert "not used" in said and "already answered" in said, said
	assert "INV-1" in model.requests[1].messages[-1].content
	assert len(model.requests) == 2


def test_a_chat_answer_another_surface_gave_first_is_told_not_used(tmp_path: Path) -> None:
	"""The chat's question was answered with `openmolt answer` first: the chat's own answer is
	refused, and the person reads why (they read "Sorry, I could not finish that (error).")."""
	import anyio

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	fake = FakeTelegram()
	model = ScriptedModel([ask_human("Which invoice?"), finish("paid", human_message="Paid.")])

	async def main() -> None:
		async with local_server(fake.app()) as base:
			channel = {
				"type": "telegram",
				"token": TOKEN,
				"baseUrl": base,
				"pollTimeout": 1,
				"allowedUsers": [42],
			}
			om = OpenMolt(durability=store, entry_points=False)
			agent = helper(om, model)
			try:
				triggers = Triggers.model_validate({"channels": [channel]})
				async with TriggerServer([(agent, triggers)], port=0):
					fake.message("pay it")
					await eventually(lambda: len(fake.sent) == 1, seconds=30)
					(waiting,) = await om.pending(agent="Helper")
					await om.answer(waiting.run_id, "INV-1", step=waiting.step)  # the CLI
					assert (await om.result(waiting.run_id)).status == "success"
					fake.message("INV-2")
					await eventually(lambda: len(fake.sent) == 2, seconds=30)
			finally:
				await om.aclose()
				await restart()

	anyio.run(main)
	said = fake.sent[1]["text"]
	assert said.startswith("Your answer was not used: ") and "already answered" in said, said
	assert "INV-1" in model.requests[1].messages[-1].content and len(model.requests) == 2


class _Held:
	"""A durable instance whose agent, Helper, holds each run in a tool until `close`.

	Args:
		store: The durable store's URL.
		runs: How many runs the agent will start (each calls the tool once).
		worker: The worker id of this "process" (None: the default, this process's).
	"""

	def __init__(self, store: str, runs: int, worker: str | None = None) -> None:
		import anyio

		from openmolt_core.testing import call_tool

		self.holding = anyio.Event()
		self.entered: list[str] = []

		async def hold() -> str:
			"""Hold until the test ends."""
			self.entered.append("x")
			await self.holding.wait()
			return "held"

		durability = store if worker is None else {"url": store, "worker_id": worker}
		self.om = OpenMolt(durability=durability, entry_points=False)
		model = ScriptedModel([call_tool("local.hold") for _ in range(runs)])
		self.agent = self.om.create_agent(
			name="Helper", model=model, instructions="Help.", tools=[hold]
		)

	def started_by(self, beats: dict[str, float], runs: dict[str, str]) -> None:
		"""Make runs another worker's, as if it had started them, and give each worker a row.

		Args:
			beats: Each worker's id and its last beat (epoch seconds: an hour ago is gone).
			runs: The run each worker started, by the worker's id.
		"""
		import sqlalchemy as sa

		from openmolt_dbos._workers import WORKERS

		engine = self.om.durability.engine  # type: ignore[union-attr]
		client = engine.client()
		table = client._sys_db.tables.workflow_status
		with client._sys_db.engine.begin() as conn:
			for who, run_id in runs.items():
				conn.execute(
					sa.update(table).where(table.c.workflow_uuid == run_id).values(executor_id=who)
				)
		with engine.tables.begin() as conn:
			for who, beat in beats.items():
				conn.execute(
					sa.insert(WORKERS).values(
						executor_id=who,
						token="t",
						app_version=engine.app_version,
						host="elsewhere",
						pid=1,
						started_at=beat,
						beat_at=beat,
						state="live",
					)
				)

	async def close(self) -> None:
		"""Let the held runs end and close the instance."""
		self.holding.set()
		await self.om.aclose()


def _followed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
	"""The runs a chat follows at a server's start (noted, no longer followed)."""
	followed: list[str] = []

	async def follow(self: Any, run_id: str) -> None:
		followed.append(run_id)

	monkeypatch.setattr(Conversations, "_follow", follow)
	return followed


def _chat(base: str) -> Triggers:
	"""A Telegram chat served by the fake API at ``base``."""
	channel = {"type": "telegram", "token": TOKEN, "pollTimeout": 1, "allowedUsers": [42]}
	return Triggers.model_validate({"channels": [{**channel, "baseUrl": base}]})


async def test_a_restart_follows_only_the_chat_runs_whose_caller_is_gone(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""At a start, a chat follows the runs of a worker that stopped beating (its caller is gone),
	not those of another live server on the store, which sends their replies itself (followed
	here too, a reply would reach the chat twice)."""
	import time

	from openmolt_serve._launch import run_id_for

	held = _Held(store, 2)
	ids = {who: run_id_for("telegram", "Helper", None) for who in ("other-live", "other-gone")}
	for run_id in ids.values():
		await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 2, seconds=30)
	now = time.time()
	held.started_by({"other-live": now, "other-gone": now - 3600}, ids)
	followed = _followed(monkeypatch)
	async with local_server(FakeTelegram().app()) as base:
		async with TriggerServer([(held.agent, _chat(base))], port=0):  # it follows at its start
			await eventually(lambda: len(followed) == 1)
	await held.close()
	assert followed == [ids["other-gone"]]


def test_a_named_a2a_callers_task_answered_after_a_restart_goes_on_for_that_caller(
	tmp_path: Path,
) -> None:
	"""crm's durable run parks on a question (it acts for a2a:Helper:crm); after a restart, web's
	answer to the task is "task not found", and crm's answer resumes the run, still for crm."""
	import uuid

	import anyio
	from a2a.client import ClientConfig, create_client
	from a2a.types import Message, Part, Role, SendMessageRequest, TaskState
	from a2a.utils.errors import TaskNotFoundError

	from openmolt_serve._launch import run_id_for

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	tokens = {"crm": "crm-a2a-token-0123456789abcdef", "web": "web-a2a-token-0123456789abcdef"}
	callers = {name: {"token": token} for name, token in tokens.items()}
	triggers = Triggers.model_validate({"a2a": {"callers": callers}})
	found: dict[str, Any] = {}

	def message(text: str, **ids: str) -> SendMessageRequest:
		return SendMessageRequest(
			message=Message(
				message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
			)
		)

	async def send(model: ScriptedModel, request: Any, *, refused: Any = None) -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		agent = helper(om, model)
		from openmolt_serve.chats import park_questions

		park_questions(agent)
		try:
			async with TriggerServer([(agent, triggers)], port=0) as server:
				url = f"{server.url}/a2a/Helper"
				clients = {}
				for name, token in tokens.items():
					http = httpx.AsyncClient(
						headers={"Authorization": f"Bearer {token}"}, timeout=60
					)
					config = ClientConfig(httpx_client=http, streaming=False)
					clients[name] = (http, await create_client(url, client_config=config))
				try:
					with anyio.fail_after(30):
						if refused is not None:
							with pytest.raises(TaskNotFoundError):
								[r async for r in clients["web"][1].send_message(refused)]
						(response,) = [r async for r in clients["crm"][1].send_message(request)]
						task = response.task
						result = await om.result(run_id_for("a2a", "Helper", task.id), wait=False)
						found.setdefault("users", []).append(result.state.user if result else None)
				finally:
					for http, _ in clients.values():
						await http.aclose()
		finally:
			await om.aclose()
			await restart()
		return task

	async def before() -> None:
		found["task"] = await send(ScriptedModel([ask_human("Which invoice?")]), message("pay it"))

	model = ScriptedModel([finish("paid", human_message="Paid INV-2.")])

	async def after() -> None:
		task = found["task"]
		answer = message("INV-2", task_id=task.id, context_id=task.context_id)
		theirs = message("INV-9", task_id=task.id, context_id=task.context_id)
		found["done"] = await send(model, answer, refused=theirs)

	anyio.run(before)
	assert found["task"].status.state == TaskState.TASK_STATE_INPUT_REQUIRED
	anyio.run(after)
	assert found["done"].status.state == TaskState.TASK_STATE_COMPLETED
	assert found["users"] == ["a2a:Helper:crm", "a2a:Helper:crm"]
	assert "INV-2" in model.requests[0].messages[-1].content
	assert "INV-9" not in json.dumps([m.content for m in model.requests[0].messages])


async def test_a_named_agui_callers_durable_run_parks_and_resumes_for_that_caller(
	store: str,
) -> None:
	"""crm's durable run asks (it acts for agui:Helper:crm); web's resume is 409; crm's answer
	goes on with it, still for crm; the default caller's run acts for no user."""
	import uuid

	from ag_ui.core import Event, EventType, RunAgentInput, UserMessage
	from pydantic import TypeAdapter

	from openmolt_serve.chats import park_questions

	events: TypeAdapter[Any] = TypeAdapter(Event)
	tokens = {
		"crm": "crm-agui-token-0123456789abcdef",
		"web": "web-agui-token-0123456789abcdef",
		"default": "dflt-agui-token-0123456789abcdef",
	}

	def body(text: str = "hi", thread: str = "t-1", **more: Any) -> dict[str, Any]:
		given = RunAgentInput(
			thread_id=thread,
			run_id=uuid.uuid4().hex,
			messages=[UserMessage(id=uuid.uuid4().hex, role="user", content=text)],
			**more,
		)
		return given.model_dump(mode="json", by_alias=True, exclude_none=True)

	async def post(http: httpx.AsyncClient, caller: str, given: dict[str, Any]) -> Any:
		headers = {"Authorization": f"Bearer {tokens[caller]}"}
		response = await http.post("/agui/Helper", json=given, headers=headers)
		frames = [f for f in response.text.split("\n\n") if f.strip()]
		if response.status_code != 200:
			return response
		return [events.validate_json(f.removeprefix("data: ")) for f in frames]

	om = OpenMolt(durability=store, entry_points=False)
	model = ScriptedModel([ask_human("Which city?"), finish("Rain in Oslo."), finish("hi")])
	agent = helper(om, model)
	park_questions(agent)
	callers = {name: {"token": token} for name, token in tokens.items()}
	triggers = Triggers.model_validate({"agui": {"callers": callers}})
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(base_url=server.url, timeout=60) as http,
	):
		asked = await post(http, "crm", body("Weather?"))
		(parked,) = await om.pending()
		assert parked.user == "agui:Helper:crm"
		finished = asked[-1]
		assert finished.type == EventType.RUN_FINISHED
		outcome = finished.outcome.root if hasattr(finished.outcome, "root") else finished.outcome
		(interrupt,) = outcome.interrupts
		entry = {"interruptId": interrupt.id, "status": "resolved", "payload": "Oslo"}
		refused = await post(http, "web", body("", resume=[entry]))
		assert refused.status_code == 409
		resumed = await post(http, "crm", body("", resume=[entry]))
		assert resumed[-1].type == EventType.RUN_FINISHED
		result = await om.result(parked.run_id)
		assert result is not None
		assert (result.status, result.state.user) == ("success", "agui:Helper:crm")
		await post(http, "default", body("hello", thread="t-2"))
		rows = await om.durability.runs(agent="Helper")  # type: ignore[union-attr]
		others = [r for r in rows if r["run_id"] != parked.run_id]
		assert len(others) == 1
		theirs = await om.result(others[0]["run_id"])
		assert theirs is not None and theirs.state.user is None
	await om.aclose()


async def test_a_gone_workers_chat_run_is_followed_by_one_of_two_servers_starting(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Two servers on the store start at once (a deploy) after a third one died: each found the
	dead worker's chat run and followed it, so its reply reached the chat twice. The follow is now
	claimed in the store: one server follows it."""
	import time

	from openmolt_serve._launch import run_id_for

	held = _Held(store, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	held.started_by({"gone": time.time() - 3600}, {"gone": run_id})  # a server now gone
	followed = _followed(monkeypatch)
	decided: list[int] = []  # how many runs each server's start decided to follow
	recover = Conversations.recover

	async def counted(self: Conversations) -> int:
		count = await recover(self)
		decided.append(count)
		return count

	monkeypatch.setattr(Conversations, "recover", counted)
	async with local_server(FakeTelegram().app()) as base:
		servers = [(held.agent, _chat(base))]
		async with TriggerServer(servers, port=0):  # two servers start on the store
			async with TriggerServer(servers, port=0):  # each decided before it was entered
				assert sorted(decided) == [0, 1]  # before: [1, 1], its reply sent twice
				await eventually(lambda: len(followed) == 1)
	await held.close()
	assert followed == [run_id]


async def test_a_servers_own_chat_run_is_followed_at_each_of_its_restarts(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The claim is for a gone worker's runs only: a server that restarts twice under its id while
	its run goes on follows it at each start (no other server follows a live worker's runs)."""
	from openmolt_serve._launch import run_id_for

	held = _Held(store, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	followed = _followed(monkeypatch)
	async with local_server(FakeTelegram().app()) as base:
		for starts in (1, 2):
			async with TriggerServer([(held.agent, _chat(base))], port=0):
				await eventually(lambda n=starts: len(followed) == n)  # type: ignore[misc]
	await held.close()
	assert followed == [run_id, run_id]


async def test_a_server_running_when_another_dies_follows_its_chat_run(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A server already running when another one dies follows the gone server's chat run: only a
	server's start looked for such runs, so no server sent its reply until one started."""
	import time

	import sqlalchemy as sa

	from openmolt_dbos._workers import WORKERS
	from openmolt_serve import chats
	from openmolt_serve._launch import run_id_for

	monkeypatch.setattr(chats, "FOLLOW_LOOK", 0.2, raising=False)
	held = _Held(store, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	held.started_by({"other": time.time()}, {"other": run_id})  # a live server's run
	followed = _followed(monkeypatch)
	async with local_server(FakeTelegram().app()) as base:
		async with TriggerServer([(held.agent, _chat(base))], port=0):
			await anyio.sleep(1)
			assert followed == []  # the other server follows its run itself
			engine = held.om.durability.engine  # type: ignore[union-attr]
			with engine.tables.begin() as conn:  # the other server dies
				conn.execute(
					sa.update(WORKERS)
					.where(WORKERS.c.executor_id == "other")
					.values(beat_at=time.time() - 3600)
				)
			await eventually(lambda: followed == [run_id], seconds=30)  # before: never
			await anyio.sleep(1)
	await held.close()
	assert followed == [run_id]  # once


async def test_a_chat_run_this_servers_engine_took_over_is_followed_once(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The dead server's run is taken over by this server's engine before any look saw it under
	the dead worker: it is followed still, under the dead worker's key (a server that saw it
	there first would hold that key, and only one of them follows it)."""
	import time

	import sqlalchemy as sa

	from openmolt_dbos._taken import taken_from
	from openmolt_dbos._workers import WORKERS
	from openmolt_serve import chats
	from openmolt_serve._launch import run_id_for

	monkeypatch.setattr(chats, "FOLLOW_LOOK", 0.2, raising=False)
	held = _Held(store, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	held.started_by({"other": time.time()}, {"other": run_id})
	engine = held.om.durability.engine  # type: ignore[union-attr]
	followed = _followed(monkeypatch)
	looking = anyio.Event()
	going = Conversations._going_runs

	async def held_back(self: Conversations) -> list[dict[str, Any]]:
		await looking.wait()  # no look until this server's engine took the run over
		return await going(self)

	async with local_server(FakeTelegram().app()) as base:
		async with TriggerServer([(held.agent, _chat(base))], port=0):
			monkeypatch.setattr(Conversations, "_going_runs", held_back)
			with engine.tables.begin() as conn:  # the other server dies
				conn.execute(
					sa.update(WORKERS)
					.where(WORKERS.c.executor_id == "other")
					.values(beat_at=time.time() - 3600)
				)
			await eventually(lambda: bool(taken_from(engine.tables, [run_id])), seconds=30)
			looking.set()
			await eventually(lambda: followed == [run_id], seconds=30)
			await anyio.sleep(1)
	await held.close()
	assert followed == [run_id]


def test_a_run_taken_over_before_a_restart_is_followed_for_the_gone_worker_once(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A server whose engine took a gone server's chat run over, and which restarts, follows it
	under the gone server's key: another server that took that follow sends the reply. Which
	worker a run was taken from was kept in the engine's memory only: after the restart the run
	was this server's own, followed with no claim, and its reply reached the chat twice. Each
	"process" is an event loop of its own."""
	import time

	import sqlalchemy as sa

	from openmolt_dbos._workers import WORKERS
	from openmolt_serve._launch import run_id_for
	from openmolt_serve._seen import seen_store

	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	run_id = run_id_for("telegram", "Helper", None)

	async def rows(held: _Held) -> list[dict[str, Any]]:
		found = await held.om.durability.runs(agent="Helper")  # type: ignore[union-attr]
		return [r for r in found if r["run_id"] == run_id]

	async def gone() -> None:  # the server that started the run dies
		held = _Held(store, 1, worker="other")
		await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
		await eventually(lambda: len(held.entered) == 1, seconds=30)
		await held.om.aclose()
		await restart()
		engine = held.om.durability.engine  # type: ignore[union-attr]
		with engine.tables.begin() as conn:
			conn.execute(sa.update(WORKERS).values(beat_at=0.0))

	async def taker() -> None:  # this server's engine takes the run over
		held = _Held(store, 1)
		await held.om.durability.start()  # type: ignore[union-attr]
		await eventually(lambda: len(held.entered) == 1, seconds=30)
		(row,) = await rows(held)
		assert (row["worker"], row["taken_from"]) == (held.om.durability.worker_id, "other")  # type: ignore[union-attr]
		claims = seen_store(held.agent, "chat:telegram")
		assert claims is not None
		now = time.time()  # a server that saw the run under the gone worker took its follow
		assert claims.take({f"follow:{run_id}:other": now + 3600}, now) is None
		await held.om.aclose()  # the run stays pending, under this worker's id
		await restart()

	async def restarted() -> None:
		held = _Held(store, 1)
		async with local_server(FakeTelegram().app()) as base:
			async with TriggerServer([(held.agent, _chat(base))], port=0):
				await eventually(lambda: len(held.entered) == 1, seconds=30)
				await anyio.sleep(1)
		await held.close()
		await restart()

	anyio.run(gone)
	anyio.run(taker)
	followed = _followed(monkeypatch)
	anyio.run(restarted)
	assert followed == []  # the other server follows it


async def test_a_chat_run_taken_over_from_this_server_is_answered_by_its_follower_only(
	store: str,
) -> None:
	"""A server paused past its lease (SIGSTOP, a long pause) whose chat run another worker took
	over, and another server follows for it: when it goes on and the run ends, it sends nothing;
	the follower sends the reply. It waited for the run's end (from the store) and replied too:
	the chat got the reply twice. The pause is played by the store's records a takeover and a
	follower leave: the run taken over from this server's worker, the follow claimed."""
	import time

	from openmolt_dbos._taken import record_taken
	from openmolt_serve._seen import seen_store

	gate = anyio.Event()
	entered: list[str] = []

	async def hold() -> str:
		"""Hold until the test lets go."""
		entered.append("x")
		await gate.wait()
		return "held"

	fake = FakeTelegram()
	om = OpenMolt(durability=store, entry_points=False)
	model = ScriptedModel([call_tool("local.hold"), finish("done", human_message="Done.")])
	agent = om.create_agent(name="Helper", model=model, instructions="Help.", tools=[hold])
	async with local_server(fake.app()) as base:
		async with TriggerServer([(agent, _chat(base))], port=0):
			fake.message("pay it")
			await eventually(lambda: len(entered) == 1, seconds=30)
			(row,) = await om.durability.runs(agent="Helper")  # type: ignore[union-attr]
			me = om.durability.worker_id  # type: ignore[union-attr]
			engine = om.durability.engine  # type: ignore[union-attr]
			record_taken(engine.tables, [row["workflow_id"]], me, "other")
			claims = seen_store(agent, "chat:telegram")
			assert claims is not None
			now = time.time()  # the other server follows the run for this server's caller
			assert claims.take({f"follow:{row['run_id']}:{me}": now + 3600}, now) is None
			gate.set()
			await eventually(lambda: len(model.requests) == 2, seconds=30)  # the run ends
			await anyio.sleep(1.5)  # its reply would be sent by now
	await om.aclose()
	assert [m["text"] for m in fake.sent if m.get("text") == "Done."] == []


async def test_a_chat_run_taken_over_is_followed_when_its_gone_worker_beats_again_first(
	either: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The dead server's run is taken over by this server's engine, and the dead server's id beats
	again (it restarted under its id, its caller gone) before this server's first look: the run
	still belongs to the gone caller, and is followed under its key. The store's rows said it was
	taken from nobody once that worker beat again: this server took it for its own (its caller
	here follows it: none does), the restarted one for another live worker's: nobody followed it."""
	import time

	import sqlalchemy as sa

	from openmolt_dbos._taken import taken_from
	from openmolt_dbos._workers import WORKERS
	from openmolt_serve import chats
	from openmolt_serve._launch import run_id_for

	monkeypatch.setattr(chats, "FOLLOW_LOOK", 0.2, raising=False)
	held = _Held(either, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	held.started_by({"other": time.time()}, {"other": run_id})
	engine = held.om.durability.engine  # type: ignore[union-attr]
	followed = _followed(monkeypatch)
	looking = anyio.Event()
	going = Conversations._going_runs

	async def held_back(self: Conversations) -> list[dict[str, Any]]:
		await looking.wait()  # no look until the gone worker beats again
		return await going(self)

	async with local_server(FakeTelegram().app()) as base:
		async with TriggerServer([(held.agent, _chat(base))], port=0):
			monkeypatch.setattr(Conversations, "_going_runs", held_back)
			with engine.tables.begin() as conn:  # the other server dies
				conn.execute(
					sa.update(WORKERS)
					.where(WORKERS.c.executor_id == "other")
					.values(beat_at=time.time() - 3600)
				)
			await eventually(lambda: bool(taken_from(engine.tables, [run_id])), seconds=30)
			with engine.tables.begin() as conn:  # it starts again under its id, and beats
				conn.execute(
					sa.update(WORKERS)
					.where(WORKERS.c.executor_id == "other")
					.values(beat_at=time.time() + 3600, state="live", taken_by=None)
				)
			looking.set()
			await eventually(lambda: followed == [run_id], seconds=30)  # before: never
			await anyio.sleep(1)
	await held.close()
	assert followed == [run_id]


async def test_a_gone_servers_chat_run_another_live_worker_took_over_is_followed(
	either: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A gone server's chat run taken over by a worker that serves no chat (``openmolt worker``)
	is followed by a server on the store, under the gone server's key: the servers left it to
	the live worker it runs on, which has no caller, and nobody sent its reply."""
	import time

	from openmolt_dbos._taken import record_taken
	from openmolt_serve import chats
	from openmolt_serve._launch import run_id_for

	monkeypatch.setattr(chats, "FOLLOW_LOOK", 0.2, raising=False)
	held = _Held(either, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	now = time.time()
	held.started_by({"gone": now - 3600, "plain": now + 3600}, {"plain": run_id})
	engine = held.om.durability.engine  # type: ignore[union-attr]
	record_taken(engine.tables, [run_id], "gone", "plain")  # the plain worker took it over
	followed = _followed(monkeypatch)
	async with local_server(FakeTelegram().app()) as base:
		async with TriggerServer([(held.agent, _chat(base))], port=0):
			await eventually(lambda: followed == [run_id], seconds=30)  # before: never
			async with TriggerServer([(held.agent, _chat(base))], port=0):  # a second server
				await anyio.sleep(1)
	await held.close()
	assert followed == [run_id]  # once: the first server holds the follow


async def test_a_gone_servers_chat_run_is_followed_again_when_its_follower_dies(
	either: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The server that follows a gone server's chat run stops (it dies in turn): another server on
	the store follows the run then, and not while the first one follows it. The first one's claim
	held for a day: nobody sent the run's reply."""
	import time

	from openmolt_serve import chats
	from openmolt_serve._launch import run_id_for

	monkeypatch.setattr(chats, "FOLLOW_LOOK", 0.2, raising=False)
	monkeypatch.setattr(chats, "FOLLOW_HOLD", 10, raising=False)  # a claim lasts 2 s
	held = _Held(either, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	held.started_by({"gone": time.time() - 3600}, {"gone": run_id})
	followed: list[str] = []
	looks: dict[int, list[float]] = {}  # each server's looks (by its Conversations), and when
	going = Conversations._going_runs

	async def counted(self: Conversations) -> list[dict[str, Any]]:
		rows = await going(self)
		looks.setdefault(id(self), []).append(time.monotonic())
		return rows

	async def follow(self: Any, run_id: str) -> None:
		followed.append(run_id)
		await anyio.sleep_forever()  # it waits for the run's end while its server lives

	monkeypatch.setattr(Conversations, "_follow", follow)
	monkeypatch.setattr(Conversations, "_going_runs", counted)

	async def serve(base: str, stop: anyio.Event) -> None:
		async with TriggerServer([(held.agent, _chat(base))], port=0):
			await stop.wait()

	first, second = anyio.Event(), anyio.Event()
	async with local_server(FakeTelegram().app()) as base, anyio.create_task_group() as tg:
		tg.start_soon(serve, base, first)
		await eventually(lambda: followed == [run_id], seconds=30)
		seen = set(looks)
		tg.start_soon(serve, base, second)
		await eventually(lambda: len(looks) == len(seen) + 1, seconds=30)
		(theirs,) = set(looks) - seen
		lapsed = time.monotonic() + 3  # past a claim not renewed
		await eventually(lambda: sum(t > lapsed for t in looks[theirs]) >= 5, seconds=60)
		assert followed == [run_id]  # the first server follows it while it lives
		first.set()  # it stops renewing its claim: as when it dies
		await eventually(lambda: followed == [run_id, run_id], seconds=30)  # before: never
		second.set()
	await held.close()


async def test_a_chat_runs_reply_is_sent_once_by_two_servers_that_follow_it(
	either: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Two servers both follow a chat run to its end (a follower paused past its claim, clocks
	apart: both passed their claim to follow it): the reply is sent once. Each sent it."""
	from openmolt_dbos._taken import record_taken
	from openmolt_serve import chats

	monkeypatch.setattr(chats, "FOLLOW_LOOK", 0.2, raising=False)
	monkeypatch.setattr(Conversations, "_takes_follow", lambda self, run_id, caller, **_: True)
	gate = anyio.Event()
	entered: list[str] = []

	async def hold() -> str:
		"""Hold until the test lets go."""
		entered.append("x")
		await gate.wait()
		return "held"

	fake = FakeTelegram()
	om = OpenMolt(durability=either, entry_points=False)
	model = ScriptedModel([call_tool("local.hold"), finish("done", human_message="Done.")])
	agent = om.create_agent(name="Helper", model=model, instructions="Help.", tools=[hold])
	following = Conversations._follow
	followers: list[str] = []

	async def counted(self: Conversations, run_id: str) -> None:
		followers.append(run_id)
		await following(self, run_id)

	monkeypatch.setattr(Conversations, "_follow", counted)
	after = Conversations._after
	decided: list[str] = []  # each server that reached the run's end and decided to send or not

	async def sent(self: Conversations, *args: Any) -> None:
		await after(self, *args)
		decided.append("x")

	monkeypatch.setattr(Conversations, "_after", sent)
	async with local_server(fake.app()) as base:
		async with TriggerServer([(agent, _chat(base))], port=0):
			fake.message("pay it")
			await eventually(lambda: len(entered) == 1, seconds=30)
			(row,) = await om.durability.runs(agent="Helper")  # type: ignore[union-attr]
			me = om.durability.worker_id  # type: ignore[union-attr]
			engine = om.durability.engine  # type: ignore[union-attr]
			record_taken(engine.tables, [row["workflow_id"]], me, "other")
			async with TriggerServer([(agent, _chat(base))], port=0):  # a second server
				await eventually(lambda: followers == [row["run_id"]], seconds=30)
				gate.set()
				await eventually(lambda: len(model.requests) == 2, seconds=30)  # the run ends
				await eventually(lambda: len(decided) == 2, seconds=30)  # both reached its end
	await om.aclose()
	assert [m["text"] for m in fake.sent if m.get("text") == "Done."] == ["Done."]  # before: 2


async def test_a_store_error_at_a_look_for_gone_runs_leaves_the_looks_going(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The replay guard fails (a database hiccup) while a server takes the follow of a run whose
	worker died: the server follows the run at a later look. The error left the look's task and
	ended the server's task group: no look again, and no reply for any chat run after it."""
	import time

	import sqlalchemy as sa

	from openmolt_dbos._workers import WORKERS
	from openmolt_serve import chats
	from openmolt_serve._launch import run_id_for

	monkeypatch.setattr(chats, "FOLLOW_LOOK", 0.2, raising=False)
	held = _Held(store, 1)
	run_id = run_id_for("telegram", "Helper", None)
	await held.agent.start({"message": "pay it", "chat": "7"}, run_id=run_id)
	await eventually(lambda: len(held.entered) == 1, seconds=30)
	held.started_by({"other": time.time() + 3600}, {"other": run_id})  # a live server's run
	engine = held.om.durability.engine  # type: ignore[union-attr]
	followed = _followed(monkeypatch)
	failed: list[str] = []
	real = chats.seen_store

	class Failing:
		"""The store's replay guard, whose first take of a follow fails."""

		def __init__(self, inner: Any) -> None:
			self.inner = inner

		def take(self, entries: dict[str, float], now: float) -> Any:
			if not failed and any(k.startswith("follow:") for k in entries):
				failed.append("x")
				raise OSError("database is locked")
			return self.inner.take(entries, now)

		def __getattr__(self, name: str) -> Any:
			return getattr(self.inner, name)

	monkeypatch.setattr(chats, "seen_store", lambda agent, kind: Failing(real(agent, kind)))
	async with local_server(FakeTelegram().app()) as base:
		async with TriggerServer([(held.agent, _chat(base))], port=0):
			await anyio.sleep(0.5)  # a look or two: the run is a live server's
			with engine.tables.begin() as conn:  # the other server dies
				conn.execute(
					sa.update(WORKERS)
					.where(WORKERS.c.executor_id == "other")
					.values(beat_at=time.time() - 3600)
				)
			await eventually(lambda: followed == [run_id], seconds=30)  # before: never
	await held.close()
	assert failed == ["x"]
