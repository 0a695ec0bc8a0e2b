"""The rows several servers share, against other clocks and hand-edited rows.

Servers behind one address share their rows (`openmolt_serve._rows`): a chat's "a message is
being handled" mark (`openmolt_serve._parks.ParkRows.going`), A2A tasks, parked runs. Their
clocks differ, and an operator may edit a row by hand: a chat is never held for longer than a
mark's lease by a mark nobody renews, never taken from a server that still renews its mark; a
row that cannot be read (or a run record it names) is said so and skipped, never a failure of
every request after it; a row naming another conversation's or person's run answers, resumes
and gives up nothing; an id no store can keep (a NUL) is refused naming it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import anyio
import pytest

import openmolt_serve._parks as parks_module
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_serve._parks import _GOING, ParkRows
from openmolt_serve._rows import SqliteTasks

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def _parks(tmp_path: Path) -> ParkRows:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]), instructions="Help.")
	rows = SqliteTasks(tmp_path / "rows.db", "chat:telegram:Helper")
	return ParkRows(agent, rows, most=10, what="telegram", prefix=lambda _, key: "telegram-")


def _mark(token: str, until: float) -> bytes:
	"""A mark as a server writes it (its lease, and its end on its own clock)."""
	return json.dumps({"going": token, "for": parks_module.GOING_FOR, "until": until}).encode()


async def _entered(parks: ParkRows, seconds: float) -> float | None:
	"""How long taking the chat's mark waited (None: not taken within ``seconds``)."""
	began = time.monotonic()
	async with anyio.create_task_group() as tg:
		with anyio.move_on_after(seconds):
			async with parks.going("42", tg):
				return time.monotonic() - began
	return None


async def test_a_mark_a_server_whose_clock_is_behind_still_renews_is_not_taken_over(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A server an hour behind holds a chat and renews its mark: its marks' times read long past
	here, yet the chat's next message waits until the renewals stop (and a lease more)."""
	monkeypatch.setattr(parks_module, "GOING_FOR", 0.6)
	parks = _parks(tmp_path)
	renewing = anyio.Event()

	async def other_server() -> None:
		for _ in range(8):  # renewed every 0.2 s for 1.6 s, on a clock an hour behind
			parks.rows.put(_GOING, "42", _mark("theirs", time.time() - 3600 + 0.6))
			renewing.set()
			await anyio.sleep(0.2)

	async with anyio.create_task_group() as tg:
		tg.start_soon(other_server)
		await renewing.wait()
		waited = await _entered(parks, 10)
	parks.close()
	assert waited is not None and waited >= 1.5


async def test_a_mark_a_server_whose_clock_is_ahead_left_lapses_within_a_lease(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A server an hour ahead stopped while it held a chat (or a mark was edited to last for
	ever): the chat waits a lease, never an hour."""
	monkeypatch.setattr(parks_module, "GOING_FOR", 0.6)
	parks = _parks(tmp_path)
	parks.rows.put(_GOING, "42", _mark("ahead", time.time() + 3600))
	waited = await _entered(parks, 10)
	parks.close()
	assert waited is not None and waited < 5


async def test_a_mark_this_server_renews_is_read_as_held_by_another_waiting_on_it(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""One server's marks, renewed every third of the lease, hold the chat against a waiter for
	as long as the block runs; the waiter goes on once it is given back."""
	monkeypatch.setattr(parks_module, "GOING_FOR", 0.6)
	parks = _parks(tmp_path)
	waited: list[float | None] = []
	async with anyio.create_task_group() as tg:
		async with parks.going("42", tg):

			async def wait() -> None:
				waited.append(await _entered(parks, 10))

			tg.start_soon(wait)
			await anyio.sleep(1.5)
			assert waited == []
	parks.close()
	assert waited and waited[0] is not None and waited[0] >= 1.4


async def test_a_task_row_that_cannot_be_read_is_not_found_and_the_others_are_listed(
	tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
	"""A task row edited by hand (bytes no task decodes from): GetTask finds no task, ListTasks
	lists the caller's other tasks, and the log names the row; neither fails."""
	from a2a.server.context import ServerCallContext
	from a2a.types import ListTasksRequest, Task, TaskState, TaskStatus

	from openmolt_serve._a2a_store import A2ATaskStore

	path = tmp_path / "runs.db"
	store = A2ATaskStore(path=path, scope="a2a:Helper")
	context = ServerCallContext()
	done = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
	await store.save(Task(id="good", context_id="c", status=done), context)
	await store.save(Task(id="bad", context_id="c", status=done), context)
	with sqlite3.connect(path) as db:
		db.execute(
			"UPDATE openmolt_a2a_tasks SET task = ? WHERE task_id = 'bad'", (b"\xff\xff edited",)
		)
	assert await store.get("bad", context) is None
	listed = await store.list(ListTasksRequest(), context)
	assert [t.id for t in listed.tasks] == ["good"]
	assert "'bad'" in caplog.text and "cannot be read" in caplog.text
	store.close()


async def test_a_chat_row_edited_to_name_another_persons_run_answers_nothing(
	tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
	"""42's question waits in a group; a row of 9's, edited to name 42's run (or a malformed
	one), never lets 9's message answer it: 9's message is a run of 9's own, the question stays
	42's to answer, and the log says why."""
	from _serve_fakes import FakeTelegram, eventually, local_server

	from tests.serve.test_serve_chat_shared import deliver, new_runs, server, texts

	fake = FakeTelegram()
	model = ScriptedModel(
		[
			ask_human("Which invoice?"),
			finish("hi", human_message="Hello 9."),
			finish("odd", human_message="Hello again 9."),
			finish("paid", human_message="Paid."),
		]
	)
	async with local_server(fake.app()) as base, server(model, tmp_path, base, users=(42, 9)) as a:
		await deliver(a, fake, "pay it", user=42, chat=-100)
		await eventually(lambda: len(fake.sent) == 1)
		(bot,) = a.telegram.values()
		parks = bot.conversations.parks
		assert parks is not None
		row = parks.rows.get("telegram:42", "-100")
		assert row is not None
		parks.rows.put("telegram:9", "-100", row)  # edited by hand: 9's row names 42's run
		await deliver(a, fake, "INV-9", user=9, chat=-100, username="bob")
		await eventually(lambda: len(fake.sent) == 2)
		parks.rows.put("telegram:9", "-100", b'{"run": 5, "steps": "two"}')
		await deliver(a, fake, "INV-9 again", user=9, chat=-100, username="bob")
		await eventually(lambda: len(fake.sent) == 3)
		await deliver(a, fake, "INV-2", user=42, chat=-100)
		await eventually(lambda: len(fake.sent) == 4)
	assert texts(fake) == ["Which invoice?", "Hello 9.", "Hello again 9.", "Paid."]
	assert new_runs(model) == 3 and "INV-2" in json.dumps(model.requests[3].messages[-1].content)
	assert "acts for someone else" in caplog.text and "not a waiting run's row" in caplog.text


async def test_an_agui_row_edited_to_name_another_callers_run_resumes_and_cancels_nothing(
	tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
	"""crm's thread waits with a question; web's row of the same thread id, edited to name crm's
	run: web's resume of crm's interrupt is 409, web's new message on the thread gives nothing
	up, and crm's answer still goes on."""
	from tests.serve.test_serve_agui_shared import (
		WEB,
		client,
		interrupt_of,
		post,
		resume,
		run_input,
		server,
		stream,
	)

	model = ScriptedModel([ask_human("Which city?"), finish("web's own"), finish("Rain in Oslo.")])
	async with server(model, tmp_path) as (a, om), client(a) as crm, client(a, WEB) as web:
		asked = interrupt_of(await stream(crm, run_input()))
		rows = a.agui["Helper"].parks.rows
		assert rows is not None
		row = rows.get("crm", "t-1")
		assert row is not None
		rows.put("web", "t-1", row)  # edited by hand: web's thread names crm's run
		status, _ = await post(web, resume(asked, "Bergen"))
		assert status == 409
		mine = await stream(web, run_input("Something else"))
		assert mine[-1]["type"] == "RUN_FINISHED"
		store = om.run_store
		assert store is not None
		kept = await store.run(asked["id"].split(":question:")[0])
		assert kept is not None and kept.status == "human_input_required"
		done = await stream(crm, resume(asked, "Oslo"))
		assert done[-1]["type"] == "RUN_FINISHED"
	assert "Oslo" in json.dumps(model.requests[2].messages[-1].content)
	assert "not one of its conversation's" in caplog.text


async def test_a_parked_run_whose_stored_state_cannot_be_read_never_holds_its_chat(
	tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
	"""The run store's record of 42's parked run is damaged (edited by hand): 42's answer is told
	it was not used and the log names the run, and 42's next message is a run of its own; the
	chat is never stuck asking to send the message again."""
	from _serve_fakes import FakeTelegram, eventually, local_server

	from tests.serve.test_serve_chat_shared import deliver, runs, server, texts

	fake = FakeTelegram()
	model = ScriptedModel([ask_human("Which invoice?"), finish("hi", human_message="Hello.")])
	async with local_server(fake.app()) as base, server(model, tmp_path, base) as a:
		await deliver(a, fake, "pay it")
		await eventually(lambda: len(fake.sent) == 1)
		(run_id,) = await runs(tmp_path)
		with sqlite3.connect(tmp_path / "runs.db") as db:
			db.execute("UPDATE agent_runs SET state = '{damaged' WHERE run_id = ?", (run_id,))
		await deliver(a, fake, "INV-2")
		await eventually(lambda: len(fake.sent) == 2)
		await deliver(a, fake, "hello")
		await eventually(lambda: len(fake.sent) == 3)
	assert texts(fake)[1].startswith("Your answer was not used")
	assert texts(fake)[2] == "Hello."
	assert run_id in caplog.text and "cannot be read" in caplog.text


async def test_an_agui_thread_id_holding_a_nul_is_refused_naming_it(tmp_path: Path) -> None:
	"""A threadId with a NUL (a PostgreSQL store cannot keep its row, so its interrupt would be
	lost) is a 422 naming threadId, and runs nothing."""
	from tests.serve.test_serve_agui_shared import client, post, run_input, server

	model = ScriptedModel([finish("never")])
	async with server(model, tmp_path) as (a, _), client(a) as crm:
		status, body = await post(crm, run_input(thread="t\x00-1"))
	assert status == 422 and "threadId" in str(body) and "NUL" in str(body)
	assert model.requests == []
