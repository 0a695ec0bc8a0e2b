"""CancelTask of a task whose run is parked cancels the run where it is kept (the run store, the
durable store): it no longer waits, and a later answer from any surface is refused."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import CancelTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

from openmolt import OpenMolt
from openmolt_core.errors import OpenMoltError
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve._launch import run_id_for
from openmolt_serve.chats import park_questions

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TOKEN = "a2a-token-for-tests-0123456789"


def message(text: str, **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(
			message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
		)
	)


async def _park_and_cancel(om: OpenMolt) -> str:
	"""Serve Helper, park its run on a question, cancel the task; the run's id."""
	agent = om.create_agent(
		name="Helper", model=ScriptedModel([ask_human("Which invoice?"), finish("paid")])
	)
	park_questions(agent)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=30) as http,
	):
		config = ClientConfig(httpx_client=http, streaming=False)
		client = await create_client(f"{server.url}/a2a/Helper", client_config=config)
		(first,) = [r async for r in client.send_message(message("pay it"))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
		assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
	return run_id_for("a2a", "Helper", task.id)


async def test_a_parked_run_in_the_run_store_is_cancelled_with_its_task(tmp_path: Path) -> None:
	"""The store's row is cancelled, waits for nothing: the viewer offers no answer to it."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	run_id = await _park_and_cancel(om)
	assert om.run_store is not None
	row = await om.run_store.run(run_id)
	assert row is not None
	assert (row.status, row.pending) == ("cancelled", None)
	assert "CancelTask" in (row.error or "")
	await om.aclose()


@pytest.fixture
async def durable(tmp_path: Path) -> AsyncIterator[str]:
	yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
	from dbos import DBOS

	from openmolt_dbos import _engine

	engine = _engine._ENGINE
	if engine is not None and engine.launched:
		await engine.shutdown()
	DBOS.destroy()
	_engine.reset_engine()


@pytest.mark.xdist_group("dbos-shared")
async def test_a_parked_durable_run_is_cancelled_with_its_task(durable: str) -> None:
	"""The engine cancels it: it is no longer pending, and an answer to it is refused."""
	om = OpenMolt(durability=durable, entry_points=False)
	run_id = await _park_and_cancel(om)
	assert [p.run_id for p in await om.pending()] == []
	with pytest.raises(OpenMoltError) as answered:
		await om.answer(run_id, "INV-2")
	assert run_id in str(answered.value) or "cancel" in str(answered.value).lower()
	await om.aclose()


@pytest.mark.xdist_group("dbos-shared")
async def test_a_durable_run_parked_on_an_approval_is_cancelled_with_its_task(
	durable: str,
) -> None:
	"""Parked on an approval (``auth-required``), its workflow returned the park: CancelTask looked
	for a parked question only, left the run waiting, and an approval given later paid."""
	from openmolt_core.testing import call_tool
	from openmolt_core.tools import tool

	paid: list[int] = []

	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	om = OpenMolt(durability=durable, entry_points=False)
	agent = om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=1), finish("paid")]),
		tools=[pay],
		requires_approval=["local.pay"],
	)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=30) as http,
	):
		config = ClientConfig(httpx_client=http, streaming=False)
		client = await create_client(f"{server.url}/a2a/Payer", client_config=config)
		(first,) = [r async for r in client.send_message(message("pay it"))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
		cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
		assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
	run_id = run_id_for("a2a", "Payer", task.id)
	with pytest.raises(OpenMoltError, match="cancelled"):
		await om.result(run_id, wait=False)  # a decision given now is refused the same way
	runs = await om.durability.runs()  # type: ignore[union-attr]
	assert [(r["run_id"], r["status"]) for r in runs] == [(run_id, "cancelled")]
	await om.aclose()
	assert paid == []


@pytest.mark.xdist_group("dbos-shared")
async def test_a_task_whose_approval_is_being_delivered_elsewhere_is_cancelled_with_it(
	durable: str,
) -> None:
	"""The operator approves the parked call outside the A2A handler (their viewer), and the
	caller cancels the task while the approved payment is under way: CancelTask looked for a
	parked run only, found it going, and left it: the task said canceled while the run went on
	to its next call."""
	import anyio

	from openmolt_core.testing import call_tool
	from openmolt_core.tools import tool

	paid: list[int] = []
	noted: list[str] = []
	paying, release = anyio.Event(), anyio.Event()

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		paying.set()
		await release.wait()
		return "paid"

	@tool(labels=["outbound"])
	def note(text: str) -> str:
		"""Write to the customer.

		Args:
			text: What to say.
		"""
		noted.append(text)
		return "sent"

	om = OpenMolt(durability=durable, entry_points=False)
	agent = om.create_agent(
		name="Payer",
		model=ScriptedModel(
			[call_tool("local.pay", amount=1), call_tool("local.note", text="paid"), finish("ok")]
		),
		tools=[pay, note],
		requires_approval=["local.pay"],
	)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	delivered: list[object] = []
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=30) as http,
		anyio.create_task_group() as tg,
	):
		config = ClientConfig(httpx_client=http, streaming=False)
		client = await create_client(f"{server.url}/a2a/Payer", client_config=config)
		(first,) = [r async for r in client.send_message(message("pay it"))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
		run_id = run_id_for("a2a", "Payer", task.id)
		with anyio.fail_after(30):  # the task says so as the workflow's end is being recorded
			parked = await om.result(run_id, wait=True)
		assert parked is not None and parked.status == "approval_required"
		(request,) = agent.approval_requests(parked.state)

		async def approve() -> None:  # the operator, outside the A2A handler
			try:
				delivered.append(await agent.resume(parked.state, decision=request.approve()))
			except Exception as exc:
				delivered.append(exc)

		tg.start_soon(approve)
		with anyio.fail_after(30):
			await paying.wait()
		cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
		assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
		release.set()
	await anyio.sleep(1)
	assert paid == [1] and noted == []  # the call under way stopped there; nothing after it
	assert "was cancelled" in str(delivered[0])
	with pytest.raises(OpenMoltError, match="cancelled"):
		await om.result(run_id, wait=False)
	await om.aclose()
