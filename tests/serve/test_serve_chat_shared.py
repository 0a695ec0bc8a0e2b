"""Chats on a shared run store: a chat's parked run is answered from any server on the store.

Telegram may post a chat's next update to another server behind the same address than the one
whose run asked, or to the same server after a restart. With a run store
(``OpenMolt(run_store=...)``) a chat's parked run is kept in the store's rows
(`openmolt_serve._rows`), so every server on the store finds it, with the checks an answer has
on one server: only the person the run acts for answers it, once.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server

from openmolt import OpenMolt
from openmolt_core.sessions import SQLiteSession
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SECRET = "tg-webhook-secret"


@asynccontextmanager
async def server(
	model: ScriptedModel, folder: Path, base: str, users: tuple[int, ...] = (42,), **more: Any
) -> AsyncIterator[TriggerServer]:
	"""One server of Helper's Telegram bot (webhook mode) on the run store and sessions in
	``folder``, sending to the fake Telegram at ``base``."""
	om = OpenMolt(entry_points=False, run_store=folder / "runs.db")
	agent = om.create_agent(name="Helper", model=model, instructions="Help.", **more)
	channel = {
		"type": "telegram",
		"mode": "webhook",
		"token": TOKEN,
		"secretToken": SECRET,
		"baseUrl": base,
		"allowedUsers": list(users),
	}
	triggers = Triggers.model_validate({"channels": [channel]})

	def sessions(session_id: str) -> SQLiteSession:
		return SQLiteSession(session_id, folder / "sessions.db")

	try:
		async with TriggerServer([(agent, triggers)], port=0, sessions=sessions) as served:
			yield served
	finally:
		await om.aclose()


async def deliver(served: TriggerServer, fake: FakeTelegram, text: str, **who: Any) -> None:
	"""Telegram posts the user's message to this server (webhook mode)."""
	fake.message(text, **who)
	async with httpx.AsyncClient(base_url=served.url) as http:
		answer = await http.post(
			"/channels/telegram/Helper",
			json=fake.updates[-1],
			headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
		)
	assert answer.status_code == 200


def texts(fake: FakeTelegram) -> list[str]:
	return [str(m["text"]) for m in fake.sent]


def new_runs(model: ScriptedModel) -> int:
	"""How many runs the model began (a first request holds one message)."""
	return len([r for r in model.requests if len(r.messages) == 1])


async def runs(folder: Path) -> dict[str, str]:
	"""The run store's runs: their status by id."""
	om = OpenMolt(entry_points=False, run_store=folder / "runs.db")
	try:
		assert om.run_store is not None
		return {r.run_id: r.status for r in await om.run_store.runs()}
	finally:
		await om.aclose()


async def test_a_question_asked_on_one_server_is_answered_on_another(tmp_path: Path) -> None:
	"""A's run asks; the answer reaches B, which resumes that run: one run, ended there."""
	fake = FakeTelegram()
	model = ScriptedModel([ask_human("Which invoice?"), finish("paid", human_message="Paid.")])
	async with (
		local_server(fake.app()) as base,
		server(model, tmp_path, base) as a,
		server(model, tmp_path, base) as b,
	):
		await deliver(a, fake, "pay it")
		await eventually(lambda: len(fake.sent) == 1)
		await deliver(b, fake, "INV-2")
		await eventually(lambda: len(fake.sent) == 2)
	assert texts(fake) == ["Which invoice?", "Paid."]
	assert new_runs(model) == 1 and "INV-2" in json.dumps(model.requests[1].messages[-1].content)
	assert list((await runs(tmp_path)).values()) == ["success"]


async def test_a_question_survives_a_restart_of_its_server(tmp_path: Path) -> None:
	"""The server stops while its run waits; started again on the same store, the next message
	answers the question."""
	fake = FakeTelegram()
	model = ScriptedModel([ask_human("Which invoice?"), finish("paid", human_message="Paid.")])
	async with local_server(fake.app()) as base:
		async with server(model, tmp_path, base) as a:
			await deliver(a, fake, "pay it")
			await eventually(lambda: len(fake.sent) == 1)
		fake.reset()
		async with server(model, tmp_path, base) as again:
			await deliver(again, fake, "INV-2")
			await eventually(lambda: len(fake.sent) == 2)
	assert texts(fake) == ["Which invoice?", "Paid."]
	assert new_runs(model) == 1
	assert list((await runs(tmp_path)).values()) == ["success"]


async def test_the_chats_row_names_the_run_and_never_its_words(tmp_path: Path) -> None:
	"""The row a question leaves holds the run id, its step, a park mark and what it waits for:
	neither the question nor the message."""
	fake = FakeTelegram()
	model = ScriptedModel([ask_human("Which invoice, INV-7?")])
	async with local_server(fake.app()) as base, server(model, tmp_path, base) as a:
		await deliver(a, fake, "pay the secret invoice")
		await eventually(lambda: len(fake.sent) == 1)
		(bot,) = a.telegram.values()
		parks = bot.conversations.parks
		assert parks is not None
		row = parks.rows.get("telegram:42", "42")
	assert row is not None
	kept = json.loads(row)
	assert set(kept) == {"run", "steps", "park", "waits"} and kept["waits"] == "question"
	assert b"INV-7" not in row and b"secret" not in row


async def test_answers_racing_on_two_servers_resume_the_run_once(tmp_path: Path) -> None:
	"""The person sends two messages at once while the question waits, one to each server: one
	answers the run, the other is a run of its own after it; the run is resumed once."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			ask_human("Which invoice?"),
			finish("paid", human_message="Paid."),
			finish("more", human_message="Anything else?"),
		]
	)
	async with (
		local_server(fake.app()) as base,
		server(model, tmp_path, base) as a,
		server(model, tmp_path, base) as b,
	):
		await deliver(a, fake, "pay it")
		await eventually(lambda: len(fake.sent) == 1)
		async with anyio.create_task_group() as tg:
			tg.start_soon(deliver, a, fake, "INV-2")
			tg.start_soon(deliver, b, fake, "INV-3")
		await eventually(lambda: len(fake.sent) == 3)
	assert sorted(texts(fake)[1:]) == ["Anything else?", "Paid."]
	assert texts(fake)[1] == "Paid."  # the second message waited for the first one's run
	assert new_runs(model) == 2
	assert sorted((await runs(tmp_path)).values()) == ["success", "success"]


async def test_a_message_on_another_server_waits_for_the_chats_run_going_on(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""While A's run still works (longer than the chat's mark lasts unrenewed), the person's next
	message reaches B: it waits, and answers the question A's run then asks, as on one server."""
	import openmolt_serve._parks as parks

	monkeypatch.setattr(parks, "GOING_FOR", 0.6)  # renewed every 0.2 s: it outlives that
	release = anyio.Event()
	held: list[str] = []

	@tool(labels=[])
	async def hold() -> str:
		"""Hold until released."""
		held.append("held")
		await release.wait()
		return "held"

	fake = FakeTelegram()
	model = ScriptedModel(
		[
			call_tool("local.hold"),
			ask_human("Which invoice?"),
			finish("paid", human_message="Paid."),
		]
	)
	async with (
		local_server(fake.app()) as base,
		server(model, tmp_path, base, tools=[hold]) as a,
		server(model, tmp_path, base, tools=[hold]) as b,
	):
		await deliver(a, fake, "pay it")
		await eventually(lambda: held == ["held"])
		await deliver(b, fake, "INV-2")
		await anyio.sleep(1.5)  # past the mark's lease: renewed, it still holds the chat
		assert fake.sent == [] and len(model.requests) == 1
		release.set()
		await eventually(lambda: len(fake.sent) == 2)
	assert texts(fake) == ["Which invoice?", "Paid."]
	assert new_runs(model) == 1 and "INV-2" in json.dumps(model.requests[2].messages[-1].content)


async def test_a_mark_its_server_left_lapses_and_the_message_goes_on(tmp_path: Path) -> None:
	"""A server stopped while it held a chat's mark (a crash): the chat's next message waits
	for the mark to lapse, then is handled."""
	from openmolt_serve._parks import _GOING

	fake = FakeTelegram()
	model = ScriptedModel([finish("hi", human_message="Hello.")])
	async with local_server(fake.app()) as base, server(model, tmp_path, base) as a:
		(bot,) = a.telegram.values()
		parks = bot.conversations.parks
		assert parks is not None
		until = time.time() + 1.0
		parks.rows.put(_GOING, "42", json.dumps({"going": "gone", "until": until}).encode())
		await deliver(a, fake, "hello")
		await eventually(lambda: len(fake.sent) == 1)
		assert time.time() >= until
		# given back once the message is handled (a moment after its reply is sent)
		await eventually(lambda: parks.rows.get(_GOING, "42") is None)
	assert texts(fake) == ["Hello."]


async def test_in_a_group_only_the_asker_answers_on_any_server(tmp_path: Path) -> None:
	"""42 asks in a group on A; 9's message on B is a run of 9's own, the question stays 42's;
	42's message on B answers it."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			ask_human("Which invoice?"),
			finish("hi", human_message="Hello 9."),
			finish("paid", human_message="Paid."),
		]
	)
	async with (
		local_server(fake.app()) as base,
		server(model, tmp_path, base, users=(42, 9)) as a,
		server(model, tmp_path, base, users=(42, 9)) as b,
	):
		await deliver(a, fake, "pay it", user=42, chat=-100)
		await eventually(lambda: len(fake.sent) == 1)
		await deliver(b, fake, "INV-9", user=9, chat=-100, username="bob")
		await eventually(lambda: len(fake.sent) == 2)
		await deliver(b, fake, "INV-2", user=42, chat=-100)
		await eventually(lambda: len(fake.sent) == 3)
	assert texts(fake) == ["Which invoice?", "Hello 9.", "Paid."]
	assert new_runs(model) == 2 and "INV-2" in json.dumps(model.requests[2].messages[-1].content)


async def test_an_answer_another_surface_gave_first_is_told_not_used(tmp_path: Path) -> None:
	"""The question is answered from the store (as the run viewer does): the chat's answer, on
	B, is refused and said so; the person's next message is a run of its own."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			ask_human("Which invoice?"),
			finish("viewer", human_message="Paid INV-1."),
			finish("hi", human_message="Hello."),
		]
	)
	async with (
		local_server(fake.app()) as base,
		server(model, tmp_path, base) as a,
		server(model, tmp_path, base) as b,
	):
		await deliver(a, fake, "pay it")
		await eventually(lambda: len(fake.sent) == 1)
		agent = a.agents["Helper"][0]
		store = OpenMolt.of(agent).run_store
		assert store is not None
		(run_id,) = await runs(tmp_path)
		state = await store.state(run_id)
		assert state is not None
		await agent.resume(state, answer="INV-1")  # the viewer
		await deliver(b, fake, "INV-2")
		await eventually(lambda: len(fake.sent) == 2)
		await deliver(b, fake, "hello")
		await eventually(lambda: len(fake.sent) == 3)
	assert texts(fake)[1].startswith("Your answer was not used: ")
	assert "already answered" in texts(fake)[1] and texts(fake)[2] == "Hello."
	assert len(model.requests) == 3 and new_runs(model) == 2


async def test_a_store_that_cannot_be_read_runs_nothing_and_keeps_the_question(
	tmp_path: Path,
) -> None:
	"""The rows fail when the answer comes: the person is asked to send it again and nothing
	runs; sent again once the rows are back, it answers the question."""
	fake = FakeTelegram()
	model = ScriptedModel([ask_human("Which invoice?"), finish("paid", human_message="Paid.")])
	async with local_server(fake.app()) as base, server(model, tmp_path, base) as a:
		await deliver(a, fake, "pay it")
		await eventually(lambda: len(fake.sent) == 1)
		(bot,) = a.telegram.values()
		parks = bot.conversations.parks
		assert parks is not None
		rows = parks.rows
		working = rows.get

		def down(*_: Any) -> bytes | None:
			raise OSError("disk I/O error")

		rows.get = down  # type: ignore[method-assign,assignment]  # the store down
		await deliver(a, fake, "INV-2")
		await eventually(lambda: len(fake.sent) == 2)
		assert "send that again" in texts(fake)[1] and len(model.requests) == 1
		rows.get = working  # type: ignore[method-assign]
		await deliver(a, fake, "INV-2")
		await eventually(lambda: len(fake.sent) == 3)
	assert texts(fake)[2] == "Paid." and new_runs(model) == 1


async def test_without_a_store_a_question_is_the_servers_own(tmp_path: Path) -> None:
	"""No run store, no durable store: the question waits in A's memory (no rows); B takes the
	answer as a new message, and A the next one as the answer."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			ask_human("Which invoice?"),
			finish("new", human_message="A run of its own."),
			finish("paid", human_message="Paid."),
		]
	)
	channel = {
		"type": "telegram",
		"mode": "webhook",
		"token": TOKEN,
		"secretToken": SECRET,
		"allowedUsers": [42],
	}
	agents = []
	for _ in range(2):
		om = OpenMolt(entry_points=False)
		agents.append(om.create_agent(name="Helper", model=model, instructions="Help."))
	async with local_server(fake.app()) as base:
		triggers = Triggers.model_validate({"channels": [{**channel, "baseUrl": base}]})
		async with (
			TriggerServer([(agents[0], triggers)], port=0) as a,
			TriggerServer([(agents[1], triggers)], port=0) as b,
		):
			assert all(bot.conversations.parks is None for bot in a.telegram.values())
			await deliver(a, fake, "pay it")
			await eventually(lambda: len(fake.sent) == 1)
			await deliver(b, fake, "INV-2")
			await eventually(lambda: len(fake.sent) == 2)
			await deliver(a, fake, "INV-3")
			await eventually(lambda: len(fake.sent) == 3)
	for agent in agents:
		await OpenMolt.of(agent).aclose()
	assert texts(fake) == ["Which invoice?", "A run of its own.", "Paid."]
	assert "INV-3" in json.dumps(model.requests[2].messages[-1].content)
