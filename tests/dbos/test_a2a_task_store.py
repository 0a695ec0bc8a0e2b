"""A2A tasks on a durable store: servers on several machines read and move each other's tasks.

Behind one address, a caller's next request may reach another server. On PostgreSQL the servers
share the store's database and nothing else (each machine its own files folder): the tasks are
kept in its table (`openmolt_dbos._a2a_tasks.StoreTasks`). On SQLite they share a machine and
the task file beside the store. Either way the kept task is the truth each server reads: a task
another server moved on is never read as it was.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from _harness import STORES, make_store
from a2a.client import ClientConfig, create_client
from a2a.types import (
	CancelTaskRequest,
	GetTaskRequest,
	ListTasksRequest,
	Message,
	Part,
	Role,
	SendMessageRequest,
	TaskState,
)

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_dbos._a2a_tasks import StoreTasks
from openmolt_serve import TriggerServer
from openmolt_serve._a2a_store import SqliteTasks, task_rows
from openmolt_serve.chats import park_questions

pytestmark = pytest.mark.anyio

TOKEN = "a2a-token-for-tests-0123456789"


@pytest.fixture(params=STORES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
	"""An engine on a fresh store, on SQLite and on PostgreSQL."""
	from openmolt_dbos._workers import make_engine

	stores = make_store(request.param, tmp_path)
	made = make_engine(next(stores))
	yield made
	made.dispose()
	for _ in stores:
		pass


def test_the_rows_keep_each_agents_and_each_callers_tasks_apart(engine: sa.Engine) -> None:
	"""A task is kept, replaced by its newer state, read back by its owner only, listed newest
	first, deleted; another agent's scope never sees it; the oldest go past the limit."""
	one, two = StoreTasks(engine, "a2a:Helper"), StoreTasks(engine, "a2a:Helper")
	one.put("", "t1", b"first")
	two.put("", "t1", b"second")  # another server saves the task's next state
	assert one.get("", "t1") == b"second"
	assert one.get("web", "t1") is None  # another caller's
	assert StoreTasks(engine, "a2a:Other").get("", "t1") is None
	for n in range(2, 6):
		one.put("", f"t{n}", f"task {n}".encode())
	assert one.newest("", 2) == [b"task 5", b"task 4"]
	one.delete("", "t5")
	assert one.get("", "t5") is None
	one.prune(2)
	assert one.newest("", 10) == [b"task 4", b"task 3"]
	assert "password" not in repr(one) and "scope='a2a:Helper'" in repr(one)


def test_an_id_with_a_nul_is_no_row_on_every_store(engine: sa.Engine) -> None:
	"""A caller's id holding a NUL (a task id, a threadId: PostgreSQL's text cannot hold one)
	names no row on either store: reads find nothing, takes take nothing, never an error."""
	rows = StoreTasks(engine, "agui:Helper")
	rows.put("crm", "t", b"kept")
	assert rows.get("crm", "t\x00") is None and rows.get("crm\x00", "t") is None
	assert rows.take("crm", "t\x00", b"kept") is False
	rows.delete("crm", "t\x00")
	assert rows.newest("crm\x00", 5) == []
	assert rows.get("crm", "t") == b"kept"


def test_servers_saving_one_task_at_once_keep_one_row(engine: sa.Engine) -> None:
	"""Eight servers save the same task together: no error, one row, one of their states."""
	stores = [StoreTasks(engine, "a2a:Helper") for _ in range(8)]
	barrier = threading.Barrier(len(stores))
	errors: list[BaseException] = []

	def save(store: StoreTasks, n: int) -> None:
		barrier.wait()
		try:
			store.put("", "same", f"state {n}".encode())
		except BaseException as exc:  # pragma: no cover - what the test is for
			errors.append(exc)

	threads = [threading.Thread(target=save, args=(s, n)) for n, s in enumerate(stores)]
	for t in threads:
		t.start()
	for t in threads:
		t.join(30)
	assert errors == []
	assert len(stores[0].newest("", 10)) == 1


def test_a_row_is_taken_once_and_only_as_it_was_read(engine: sa.Engine) -> None:
	"""Of eight servers taking one row at once, one does; a row saved again since it was read is
	not taken; another caller's, or another scope's, is never taken."""
	stores = [StoreTasks(engine, "agui:Helper") for _ in range(8)]
	stores[0].put("crm", "t-1", b"park 1")
	assert not StoreTasks(engine, "a2a:Helper").take("crm", "t-1", b"park 1")
	assert not stores[0].take("web", "t-1", b"park 1")
	barrier = threading.Barrier(len(stores))
	taken: list[bool] = []

	def take(store: StoreTasks) -> None:
		barrier.wait()
		taken.append(store.take("crm", "t-1", b"park 1"))

	threads = [threading.Thread(target=take, args=(s,)) for s in stores]
	for t in threads:
		t.start()
	for t in threads:
		t.join(30)
	assert sorted(taken) == [False] * 7 + [True]
	assert stores[0].get("crm", "t-1") is None
	stores[0].put("crm", "t-1", b"park 2")  # the run parked again: a park of its own
	assert not stores[1].take("crm", "t-1", b"park 1")
	assert stores[1].get("crm", "t-1") == b"park 2"


@pytest.mark.parametrize("kind", ["engine", "file"])
def test_a_row_is_added_once_and_swapped_only_as_it_was_read(
	engine: sa.Engine, tmp_path: Path, kind: str
) -> None:
	"""Of eight servers adding one row at once, one does; a row is replaced only if it is still
	as it was read (another server's newer one is kept); each scope and owner its own: in the
	durable store's database and in a SQLite file."""
	stores: list[Any] = (
		[StoreTasks(engine, "chat:telegram:Helper") for _ in range(8)]
		if kind == "engine"
		else [SqliteTasks(tmp_path / "rows.sqlite", "chat:telegram:Helper") for _ in range(8)]
	)
	barrier = threading.Barrier(len(stores))
	added: list[bool] = []

	def add(store: Any, n: int) -> None:
		barrier.wait()
		added.append(store.add("(going)", "42", f"mark {n}".encode()))

	threads = [threading.Thread(target=add, args=(s, n)) for n, s in enumerate(stores)]
	for t in threads:
		t.start()
	for t in threads:
		t.join(30)
	assert sorted(added) == [False] * 7 + [True]
	kept = stores[0].get("(going)", "42")
	assert kept is not None and kept.startswith(b"mark ")
	assert stores[1].add("telegram:42", "42", b"another owner's")
	assert not stores[1].swap("(going)", "42", b"not as read", b"renewed")
	assert stores[1].swap("(going)", "42", kept, b"renewed")
	assert not stores[2].swap("(going)", "42", kept, b"renewed again")  # read before: stale
	assert stores[3].get("(going)", "42") == b"renewed"
	assert stores[3].take("(going)", "42", b"renewed")
	assert stores[4].add("(going)", "42", b"next")
	for store in stores:
		store.close()


def message(text: str, **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(
			message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], **ids
		)
	)


async def send(client: Any, request: SendMessageRequest) -> Any:
	(response,) = [r async for r in client.send_message(request)]
	return response.task


async def test_two_servers_on_one_store_read_and_move_each_others_tasks(
	url: str, tmp_path: Path
) -> None:
	"""A task started on one server is answered on the other, read completed on the first (and
	listed so), and a task waiting on the second is cancelled from the first."""
	postgres = not url.startswith("sqlite")
	model = ScriptedModel(
		[ask_human("Which city?"), finish({"result": "Rain in Oslo."}), ask_human("Which day?")]
	)
	servers = []
	for machine in ("a", "b"):
		files = tmp_path / (f"machine-{machine}" if postgres else "files")  # one machine: one
		om = OpenMolt(durability={"url": url, "files_dir": str(files)}, entry_points=False)
		agent = om.create_agent(name="Helper", model=model, instructions="Help.")
		park_questions(agent)
		servers.append((om, agent))
	rows = [task_rows(agent) for _, agent in servers]
	assert all(isinstance(r, SqliteTasks if not postgres else StoreTasks) for r in rows)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	(_, agent_a), (_, agent_b) = servers
	async with (
		TriggerServer([(agent_a, triggers)], port=0) as server_a,
		TriggerServer([(agent_b, triggers)], port=0) as server_b,
		httpx.AsyncClient(headers=headers, timeout=30) as http,
	):
		config = ClientConfig(httpx_client=http, streaming=False)
		a = await create_client(f"{server_a.url}/a2a/Helper", client_config=config)
		b = await create_client(f"{server_b.url}/a2a/Helper", client_config=config)
		task = await send(a, message("Weather?"))
		assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		seen = await b.get_task(GetTaskRequest(id=task.id))
		assert seen.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		done = await send(b, message("Oslo", task_id=task.id, context_id=task.context_id))
		assert done.status.state == TaskState.TASK_STATE_COMPLETED
		again = await a.get_task(GetTaskRequest(id=task.id))
		assert again.status.state == TaskState.TASK_STATE_COMPLETED  # never the state it had
		listed = {t.id: t.status.state for t in (await a.list_tasks(ListTasksRequest())).tasks}
		assert listed[task.id] == TaskState.TASK_STATE_COMPLETED
		late = await send(a, message("Bergen", task_id=task.id, context_id=task.context_id))
		assert late.status.state == TaskState.TASK_STATE_COMPLETED  # not run again, nor expired
		waiting = await send(b, message("Weather tomorrow?"))
		assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		canceled = await a.cancel_task(CancelTaskRequest(id=waiting.id))
		assert canceled.status.state == TaskState.TASK_STATE_CANCELED
		after = await b.get_task(GetTaskRequest(id=waiting.id))
		assert after.status.state == TaskState.TASK_STATE_CANCELED
	assert len(model.requests) == 3
	for om, _ in servers:
		await om.aclose()


def test_pruning_drops_the_oldest_of_the_owner_holding_the_most(engine: sa.Engine) -> None:
	"""A caller who fills the rows loses its own oldest tasks, never another caller's one task."""
	rows = StoreTasks(engine, "a2a:Helper")
	rows.put("bob", "b1", b"bob's")
	rows.put("eve", "e1", b"eve's")
	for n in range(10):
		rows.put("mallory", f"m{n}", f"m{n}".encode())
	StoreTasks(engine, "a2a:Other").put("mallory", "x", b"other agent's")
	rows.prune(3)
	assert rows.get("bob", "b1") == b"bob's"
	assert rows.get("eve", "e1") == b"eve's"
	assert rows.newest("mallory", 10) == [b"m9"]
	assert StoreTasks(engine, "a2a:Other").get("mallory", "x") == b"other agent's"
