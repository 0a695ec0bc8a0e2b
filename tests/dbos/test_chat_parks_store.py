"""Chats on a durable store: a chat's parked run is answered from any server on the store.

Telegram may post a chat's next update to another server behind the same address than the one
whose run asked. On PostgreSQL the servers share the store's database and nothing else (each
machine its own files folder): the chat's row is kept in its table
(`openmolt_dbos._a2a_tasks.StoreTasks`, scope ``chat:telegram:<agent>``), the run's state read
from the engine; on SQLite they share a machine and the file beside the store. Either way an
answer goes on once, on whichever server it reaches.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome
from openmolt_core.sessions import SQLiteSession
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_dbos._a2a_tasks import StoreTasks
from openmolt_serve import TriggerServer
from openmolt_serve._rows import SqliteTasks
from tests.serve._serve_fakes import TOKEN, FakeTelegram, eventually, local_server

pytestmark = pytest.mark.anyio

SECRET = "tg-webhook-secret"


class Ends(RunObserver):
	"""Each run's status and whether it ended tainted, by run id."""

	def __init__(self) -> None:
		self.runs: dict[str, tuple[str, bool]] = {}

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		self.runs[run.run_id] = (outcome.status, run.state.tainted)


@asynccontextmanager
async def two_servers(
	url: str, tmp_path: Path, model: ScriptedModel, base: str, ends: Ends | None = None
) -> AsyncIterator[tuple[TriggerServer, TriggerServer]]:
	"""Helper's Telegram bot (webhook mode) served by two servers on one durable store (on
	PostgreSQL, two machines' folders), sharing the sessions' file."""
	postgres = not url.startswith("sqlite")
	channel = {
		"type": "telegram",
		"mode": "webhook",
		"token": TOKEN,
		"secretToken": SECRET,
		"baseUrl": base,
		"allowedUsers": [42],
	}
	triggers = Triggers.model_validate({"channels": [channel]})

	def sessions(session_id: str) -> SQLiteSession:
		return SQLiteSession(session_id, tmp_path / "sessions.db")

	agents = []
	for machine in ("a", "b"):
		files = tmp_path / (f"machine-{machine}" if postgres else "files")  # one machine: one
		om = OpenMolt(
			durability={"url": url, "files_dir": str(files)},
			entry_points=False,
			observers=[ends] if ends is not None else [],
		)
		agents.append(om.create_agent(name="Helper", model=model, instructions="Help."))
	try:
		async with (
			TriggerServer([(agents[0], triggers)], port=0, sessions=sessions) as a,
			TriggerServer([(agents[1], triggers)], port=0, sessions=sessions) as b,
		):
			parks = [bot.conversations.parks for s in (a, b) for bot in s.telegram.values()]
			kind = StoreTasks if postgres else SqliteTasks
			assert all(p is not None and isinstance(p.rows, kind) for p in parks)
			yield a, b
	finally:
		for agent in agents:
			await OpenMolt.of(agent).aclose()


async def deliver(served: TriggerServer, fake: FakeTelegram, text: str, **more: Any) -> None:
	"""Telegram posts the user's message to this server (``more``: fields of the message)."""
	fake.message(text)
	fake.updates[-1]["message"].update(more)
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
	return len([r for r in model.requests if len(r.messages) == 1])


async def test_a_question_asked_on_one_server_is_answered_on_another(
	url: str, tmp_path: Path
) -> None:
	"""A's durable run asks; the answer reaches B, which goes on with that run: one run."""
	fake = FakeTelegram()
	model = ScriptedModel([ask_human("Which invoice?"), finish("paid", human_message="Paid.")])
	async with (
		local_server(fake.app()) as base,
		two_servers(url, tmp_path, model, base) as (a, b),
	):
		await deliver(a, fake, "pay it")
		await eventually(lambda: len(fake.sent) == 1, seconds=30)
		await deliver(b, fake, "INV-2")
		await eventually(lambda: len(fake.sent) == 2, seconds=30)
		om = OpenMolt.of(a.agents["Helper"][0])
		assert await om.pending(agent="Helper") == []
	assert texts(fake) == ["Which invoice?", "Paid."]
	assert new_runs(model) == 1 and "INV-2" in json.dumps(model.requests[1].messages[-1].content)


async def test_answers_racing_on_two_servers_go_on_once(url: str, tmp_path: Path) -> None:
	"""Two messages of the person at once, one to each server, while the question waits: one
	answers the run, the other is a run of its own after it."""
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
		two_servers(url, tmp_path, model, base) as (a, b),
	):
		await deliver(a, fake, "pay it")
		await eventually(lambda: len(fake.sent) == 1, seconds=30)
		async with anyio.create_task_group() as tg:
			tg.start_soon(deliver, a, fake, "INV-2")
			tg.start_soon(deliver, b, fake, "INV-3")
		await eventually(lambda: len(fake.sent) == 3, seconds=30)
	# The second message waited for the first one's run, then was a run of its own.
	assert texts(fake)[1:] == ["Paid.", "Anything else?"]
	assert new_runs(model) == 2 and len(model.requests) == 3
