"""A chat appends the turn of a run it followed outside its session's call once (`_record`).

A durable run answered through the store, or followed after a restart, ends where no session
call appends its turn: the chat server does, under the session's turn, and takes the run's
``pending`` item back with it. Two servers on one store (or a server and the session's next
run) must not append it twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.sessions import SQLiteSession
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.triggers import Triggers
from openmolt_serve.chats import Conversations

pytestmark = pytest.mark.anyio


async def _chat(tmp_path: Path) -> tuple[OpenMolt, Conversations, Any, SQLiteSession]:
	"""A chat server's conversations, a run that ended (success) and its session, parked."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Helper", model=ScriptedModel([finish("paid", human_message="Paid INV-2.")])
	)
	channel = {"type": "telegram", "token": "1:TEST-telegram-token", "allowedUsers": [42]}
	settings = Triggers.model_validate({"channels": [channel]}).channels[0]

	async def send(_: Any, __: str) -> None:
		return None

	chats = Conversations(agent, cast(Any, settings), send, launcher=cast(Any, None))
	result = await agent.run("INV-2")
	run_id = result.state.run_id
	session = SQLiteSession("telegram:Helper:42", tmp_path / "sessions.sqlite")
	await session.add_items(
		[
			{"role": "user", "content": "pay it", "run_id": run_id},
			{
				"role": "agent",
				"content": "Which?",
				"status": "human_input_required",
				"run_id": run_id,
			},
			{"role": "pending", "run_id": run_id, "new": False},
		]
	)
	return om, chats, result, session


def _roles(items: list[dict[str, Any]]) -> list[tuple[str, Any]]:
	return [(i["role"], i.get("status")) for i in items]


async def test_a_recorded_turn_takes_back_its_pending_item(tmp_path: Path) -> None:
	"""The answered run's turn is appended and its pending item goes with it."""
	om, chats, result, session = await _chat(tmp_path)
	await chats._record(session, result, "INV-2", asked_tainted=False)
	items = await session.get_items()
	assert _roles(items) == [
		("user", None),
		("agent", "human_input_required"),
		("user", None),
		("agent", "success"),
	]
	assert items[2]["content"] == "INV-2"
	await chats._record(session, result, "INV-2", asked_tainted=False)  # followed again
	assert len(await session.get_items()) == 4
	await om.aclose()


async def test_a_turn_another_server_appends_meanwhile_is_not_appended_again(
	tmp_path: Path,
) -> None:
	"""The record waits for the session's turn held elsewhere, then finds the turn appended."""
	om, chats, result, session = await _chat(tmp_path)
	run_id = result.state.run_id
	other = SQLiteSession(session.session_id, session.path)  # another process on the file
	recorded, held, done = anyio.Event(), anyio.Event(), anyio.Event()

	async def record() -> None:
		await chats._record(session, result, "INV-2", asked_tainted=False)
		recorded.set()

	async def hold() -> None:
		async with other.turn():
			held.set()
			await done.wait()

	async with anyio.create_task_group() as tg:
		tg.start_soon(hold)
		await held.wait()
		tg.start_soon(record)
		await anyio.sleep(0.3)
		assert not recorded.is_set()  # it waits for the turn the other server holds
		# The other server's run of the session found the run ended (reconcile) meanwhile.
		await other.replace_pending(
			[run_id],
			[{"role": "agent", "content": "Paid INV-2.", "status": "success", "run_id": run_id}],
		)
		done.set()
	items = await session.get_items()
	assert [i for i in items if i.get("status") == "success"] == [items[-1]]
	assert _roles(items)[-1] == ("agent", "success") and len(items) == 3
	await om.aclose()
