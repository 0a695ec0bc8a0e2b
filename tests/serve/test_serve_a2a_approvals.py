"""An A2A task waiting for the operator's approval follows its run once the operator decides.

The caller cannot decide (its own words asked for the call); the operator does, in the run viewer,
where the run goes on. The task then reads ``completed`` with its artifact (or ``failed`` for a
denied call that ends the run) at the caller's next ``GetTask``, whether the run went on in this
process or in another one sharing the run store.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import get_data_parts, get_text_parts
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

from openmolt import OpenMolt, RunState
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve._launch import run_id_for

pytestmark = pytest.mark.anyio

TOKEN = "a2a-token-for-approvals-0123456789"


class Parked(RunObserver):
	"""Keeps the state of each run that parked, as the run viewer of this process does."""

	def __init__(self) -> None:
		self.states: list[RunState] = []

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		if outcome.result is not None and outcome.result.status == "approval_required":
			self.states.append(outcome.result.state)


def make(om: OpenMolt, ran: list[str], model: ScriptedModel) -> Any:
	@tool(labels=[])
	def refund(order: str) -> str:
		"""Refund an order.

		Args:
			order: The order.
		"""
		ran.append(order)
		return "refunded"

	return om.create_agent(
		name="Helper", model=model, tools=[refund], requires_approval=["local.refund"]
	)


def script() -> ScriptedModel:
	return ScriptedModel(
		[
			call_tool("local.refund", order="A1"),
			finish({"refund": "A1"}, human_message="Refunded A1."),
		]
	)


def message(text: str, **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(
			message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
		)
	)


async def _client(url: str, http: httpx.AsyncClient, *, streaming: bool = False) -> Any:
	config = ClientConfig(httpx_client=http, streaming=streaming)
	return await create_client(url, client_config=config)


class Follower:
	"""A ``SubscribeToTask`` stream of one task, run in a task group: what it heard, and when."""

	def __init__(self, client: Any, task_id: str) -> None:
		self.client, self.task_id = client, task_id
		self.heard: list[Any] = []
		self.first = anyio.Event()  # the stream's first event (the task) arrived
		self.ended_at: float | None = None

	async def __call__(self) -> None:
		from a2a.types import SubscribeToTaskRequest

		async for response in self.client.subscribe(SubscribeToTaskRequest(id=self.task_id)):
			self.heard.append(response)
			self.first.set()
		self.ended_at = anyio.current_time()

	def states(self) -> list[int]:
		"""The task's state in each event heard (a task's, or a status update's)."""
		return [
			r.status_update.status.state if r.HasField("status_update") else r.task.status.state
			for r in self.heard
			if r.HasField("status_update") or r.HasField("task")
		]


def _http() -> httpx.AsyncClient:
	return httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=20)


async def _decide(agent: Any, state: RunState, *, approve: bool) -> Any:
	"""What the run viewer does with the operator's click: decide, and resume the run."""
	(request,) = agent.approval_requests(state)
	decision = request.approve() if approve else request.deny("not this one")
	return await agent.resume(state, decision=decision)


@dataclass
class Served:
	"""An agent served over A2A with no run store, the caller's client, what it parked and ran."""

	agent: Any
	client: Any
	parked: Parked
	ran: list[str]
	server: TriggerServer

	async def send(self, text: str = "Refund A1") -> Any:
		"""Send a message as a new task; its task as the first answer gave it."""
		(sent,) = [r async for r in self.client.send_message(message(text))]
		return sent.task


@asynccontextmanager
async def served(model: ScriptedModel, *, streaming: bool = False) -> AsyncIterator[Served]:
	ran: list[str] = []
	om = OpenMolt(entry_points=False)
	parked = Parked()
	om.observers.append(parked)
	agent = make(om, ran, model)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	async with TriggerServer([(agent, triggers)], port=0) as server, _http() as http:
		client = await _client(f"{server.url}/a2a/Helper", http, streaming=streaming)
		yield Served(agent, client, parked, ran, server)
	await om.aclose()


async def test_a_run_approved_in_this_process_completes_its_task() -> None:
	"""No run store: the run goes on here; GetTask then gives completed, the output as artifact."""
	async with served(script()) as a2a:
		task = await a2a.send()
		assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
		waiting = await a2a.client.get_task(GetTaskRequest(id=task.id))
		assert waiting.status.state == TaskState.TASK_STATE_AUTH_REQUIRED  # nothing decided yet
		(state,) = a2a.parked.states
		result = await _decide(a2a.agent, state, approve=True)
		assert result.status == "success" and a2a.ran == ["A1"]
		done = await a2a.client.get_task(GetTaskRequest(id=task.id))
		assert done.status.state == TaskState.TASK_STATE_COMPLETED
		assert "Refunded A1." in get_text_parts(done.status.message.parts)
		(artifact,) = done.artifacts
		assert get_data_parts(artifact.parts) == [{"refund": "A1"}]
		again = await a2a.client.get_task(GetTaskRequest(id=task.id))
		assert len(again.artifacts) == 1  # settled once


async def test_a_run_decided_by_another_process_settles_its_task_from_the_run_store(
	tmp_path: Path,
) -> None:
	"""The viewer of another process resumed the run: the store tells this server how it ended."""
	store = tmp_path / "runs.db"
	ran: list[str] = []
	om = OpenMolt(entry_points=False, run_store=store)
	agent = make(om, ran, script())
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	async with TriggerServer([(agent, triggers)], port=0) as server, _http() as http:
		client = await _client(f"{server.url}/a2a/Helper", http)
		(sent,) = [r async for r in client.send_message(message("Refund A1"))]
		task = sent.task
		assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
		run_id = run_id_for("a2a", "Helper", task.id)

		other = OpenMolt(entry_points=False, run_store=store)  # the operator's viewer process
		viewer_agent = make(
			other, ran, ScriptedModel([finish({"refund": "A1"}, human_message="Refunded A1.")])
		)
		assert other.run_store is not None
		state = await other.run_store.state(run_id)
		assert state is not None
		result = await _decide(viewer_agent, state, approve=True)
		assert result.status == "success" and ran == ["A1"]
		await other.aclose()

		done = await client.get_task(GetTaskRequest(id=task.id))
		assert done.status.state == TaskState.TASK_STATE_COMPLETED
		assert "Refunded A1." in get_text_parts(done.status.message.parts)
		assert get_data_parts(done.artifacts[0].parts) == [{"refund": "A1"}]
	await om.aclose()


async def test_a_denied_call_the_run_reports_reaches_the_task_and_a_parked_one_stays() -> None:
	"""A denial lets the run go on to its end (the model reads it); until then the task waits."""
	model = ScriptedModel(
		[
			call_tool("local.refund", order="A1"),
			finish(status="failure", human_message="The refund was refused."),
		]
	)
	async with served(model) as a2a:
		task = await a2a.send()
		(state,) = a2a.parked.states
		result = await _decide(a2a.agent, state, approve=False)
		assert result.status == "failure" and a2a.ran == []
		done = await a2a.client.get_task(GetTaskRequest(id=task.id))
		assert done.status.state == TaskState.TASK_STATE_FAILED
		assert "The refund was refused." in " ".join(get_text_parts(done.status.message.parts))


async def test_a_list_of_tasks_shows_them_settled_too() -> None:
	"""ListTasks reads the tasks as GetTask does: a decided run's task is listed completed."""
	from a2a.types import ListTasksRequest

	async with served(script()) as a2a:
		sent = await a2a.send()
		(state,) = a2a.parked.states
		await _decide(a2a.agent, state, approve=True)
		listed = await a2a.client.list_tasks(ListTasksRequest(include_artifacts=True))
		(task,) = [t for t in listed.tasks if t.id == sent.id]
		assert task.status.state == TaskState.TASK_STATE_COMPLETED
		assert get_data_parts(task.artifacts[0].parts) == [{"refund": "A1"}]
		got = await a2a.client.get_task(GetTaskRequest(id=sent.id))
		assert len(got.artifacts) == 1  # settled once, by the list


async def test_a_list_filtered_by_status_sees_the_settled_status() -> None:
	"""A list of the tasks still waiting leaves out one whose run the operator decided."""
	from a2a.types import ListTasksRequest

	async with served(script()) as a2a:
		sent = await a2a.send()
		waiting = ListTasksRequest(status=TaskState.TASK_STATE_AUTH_REQUIRED)
		assert [t.id for t in (await a2a.client.list_tasks(waiting)).tasks] == [sent.id]
		(state,) = a2a.parked.states
		await _decide(a2a.agent, state, approve=True)
		assert list((await a2a.client.list_tasks(waiting)).tasks) == []


async def test_a_subscription_to_a_waiting_task_hears_how_its_run_went_on(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""SubscribeToTask on a task waiting for the operator: the task first, then, once the
	operator has decided in this process, the completed status and the artifact, and the end."""
	from openmolt_serve import a2a as served_a2a

	monkeypatch.setattr(served_a2a, "FOLLOW_POLL", 30.0)  # woken, not found by a later read
	async with served(script(), streaming=True) as a2a:
		sent = [r async for r in a2a.client.send_message(message("Refund A1"))]
		task_id = next(r.task.id for r in sent if r.HasField("task"))
		follower = Follower(a2a.client, task_id)
		# The stream ends by itself once the decision reached it: the group then exits.
		with anyio.fail_after(10):
			async with anyio.create_task_group() as group:
				group.start_soon(follower)
				await follower.first.wait()  # the stream's first event: the task, still waiting
				assert follower.states() == [TaskState.TASK_STATE_AUTH_REQUIRED]
				(state,) = a2a.parked.states
				result = await _decide(a2a.agent, state, approve=True)
				assert result.status == "success" and a2a.ran == ["A1"]
				decided = anyio.current_time()
		assert follower.ended_at is not None and follower.ended_at - decided < 2
		assert follower.states()[-1] == TaskState.TASK_STATE_COMPLETED
		heard = follower.heard
		artifacts = [r.artifact_update.artifact for r in heard if r.HasField("artifact_update")]
		assert [get_data_parts(a.parts) for a in artifacts] == [[{"refund": "A1"}]]
		done = await a2a.client.get_task(GetTaskRequest(id=task_id))
		assert done.status.state == TaskState.TASK_STATE_COMPLETED
		assert len(done.artifacts) == 1  # the stream and the read settled it once


async def test_a_cancelled_waiting_task_ends_its_subscriptions_at_once(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""CancelTask on a task a stream follows: the stream hears ``cancelled`` now, not at its next
	read. What an earlier settle of the task reported (kept for the streams of that settle) is
	not told again: the stream tells what happened while it followed."""
	from a2a.types import CancelTaskRequest, TaskStatus, TaskStatusUpdateEvent

	from openmolt_serve import a2a as served_a2a

	monkeypatch.setattr(served_a2a, "FOLLOW_POLL", 30.0)  # a read would come far too late
	async with served(script(), streaming=True) as a2a:
		sent = [r async for r in a2a.client.send_message(message("Refund A1"))]
		task = next(r.task for r in sent if r.HasField("task"))
		executor = a2a.server.a2a["Helper"].handler.agent_executor
		assert isinstance(executor, served_a2a.OpenMoltExecutor)
		earlier = TaskStatusUpdateEvent(
			task_id=task.id,
			context_id=task.context_id,
			status=TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED),
		)
		executor.reported[task.id] = [earlier]  # as a settle before this wait left it
		follower = Follower(a2a.client, task.id)
		with anyio.fail_after(10):
			async with anyio.create_task_group() as group:
				group.start_soon(follower)
				await follower.first.wait()
				await a2a.client.cancel_task(CancelTaskRequest(id=task.id))
				cancelled = anyio.current_time()
		assert follower.ended_at is not None and follower.ended_at - cancelled < 2
		assert follower.states() == [
			TaskState.TASK_STATE_AUTH_REQUIRED,
			TaskState.TASK_STATE_CANCELED,
		]
		assert a2a.ran == []


async def test_a_stopping_server_ends_the_subscriptions_that_wait() -> None:
	"""The server stops while a stream waits for the operator: the stream ends (the task still
	waiting) and the server does not wait out its graceful shutdown for the connection."""
	ran: list[str] = []
	om = OpenMolt(entry_points=False)
	agent = make(om, ran, script())
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	async with _http() as http:
		with anyio.fail_after(10):
			async with anyio.create_task_group() as group:
				async with TriggerServer([(agent, triggers)], port=0) as server:
					client = await _client(f"{server.url}/a2a/Helper", http, streaming=True)
					sent = [r async for r in client.send_message(message("Refund A1"))]
					task_id = next(r.task.id for r in sent if r.HasField("task"))
					follower = Follower(client, task_id)
					group.start_soon(follower)
					await follower.first.wait()
					stopping = anyio.current_time()
				stopped = anyio.current_time()
	assert stopped - stopping < 1.5  # the graceful shutdown's 2 s were not waited out
	assert follower.ended_at is not None
	assert follower.states() == [TaskState.TASK_STATE_AUTH_REQUIRED]
	assert ran == []
	await om.aclose()


async def test_a_subscription_hears_a_run_decided_by_another_process(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The viewer of another process resumed the run (a shared run store): the stream reads the
	task again every FOLLOW_POLL seconds, and ends with the completed task."""
	from openmolt_serve import a2a as served_a2a

	monkeypatch.setattr(served_a2a, "FOLLOW_POLL", 0.05)
	store = tmp_path / "runs.db"
	ran: list[str] = []
	om = OpenMolt(entry_points=False, run_store=store)
	agent = make(om, ran, script())
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	async with TriggerServer([(agent, triggers)], port=0) as server, _http() as http:
		client = await create_client(
			f"{server.url}/a2a/Helper",
			client_config=ClientConfig(httpx_client=http, streaming=True),
		)
		sent = [r async for r in client.send_message(message("Refund A1"))]
		task_id = next(r.task.id for r in sent if r.HasField("task"))
		follower = Follower(client, task_id)
		with anyio.fail_after(10):
			async with anyio.create_task_group() as group:
				group.start_soon(follower)
				await follower.first.wait()
				other = OpenMolt(entry_points=False, run_store=store)  # the operator's viewer
				viewer_agent = make(
					other, ran, ScriptedModel([finish({"refund": "A1"}, human_message="Done.")])
				)
				assert other.run_store is not None
				state = await other.run_store.state(run_id_for("a2a", "Helper", task_id))
				assert state is not None
				await _decide(viewer_agent, state, approve=True)
				await other.aclose()
		states = follower.states()
		assert states[0] == TaskState.TASK_STATE_AUTH_REQUIRED
		assert len(states) > 1 and states[-1] == TaskState.TASK_STATE_COMPLETED
	await om.aclose()
