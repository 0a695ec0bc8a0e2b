"""A chat message whose run is under way or parked is remembered through any flood.

`MAX_SEEN` bounds the ids of the messages a channel took (in memory, without a store) and was
fair by sender only: many senders (one message each, past the bound) pushed out the oldest id,
bob's, while his run was still going or parked on a question. The service's retry of his
message (Slack retries when the answer is late, Telegram when the webhook failed) then looked
new and ran again: a payment made twice. Now an id whose run is under way or parked stays, and
the rest is bounded fairly (the oldest of the sender with the most goes).
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio


class _Group:
	def __init__(self) -> None:
		self.started: list[str] = []

	def start_soon(self, *args: object, name: str = "") -> None:
		self.started.append(name)


class _Launcher:
	def __init__(self) -> None:
		self.tg = _Group()
		self.running: set[str] = set()


async def _talks(monkeypatch: pytest.MonkeyPatch, most: int = 3) -> Any:
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import SlackChannel
	from openmolt_serve import chats
	from openmolt_serve.chats import Conversations, Incoming

	monkeypatch.setattr(chats, "MAX_SEEN", most)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))

	async def send(message: Incoming, text: str) -> None:
		return None

	settings = SlackChannel.model_validate({"type": "slack", "allowEveryone": True})
	talks = Conversations(agent, settings, send, launcher=_Launcher())  # type: ignore[arg-type]
	return om, talks


async def _flood(talks: Any, count: int, *, done: bool = True) -> None:
	from openmolt_serve.chats import Incoming

	for n in range(count):
		message = Incoming("slack", f"C{n}", f"U_{n}", "x", f"ev-{n}", team="T1")
		assert await talks.receive(message)
		if done:
			talks._ended_taking(message)  # its run ended: its id may go


async def test_a_message_under_way_is_known_through_many_senders(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	from openmolt_serve.chats import Incoming

	om, talks = await _talks(monkeypatch)
	bob = Incoming("slack", "C_BOB", "U_BOB", "pay 5", "ev-bob", team="T1")
	assert await talks.receive(bob)  # its run goes on (never ends here)
	await _flood(talks, 20)
	assert not await talks.receive(bob)  # the service's retry: known, not run twice
	assert len(talks._seen) <= 3 + 1  # the rest stays bounded
	await om.aclose()


async def test_a_message_whose_run_is_parked_is_known_through_many_senders(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	from openmolt_core.result import RunState
	from openmolt_serve._launch import run_id_for
	from openmolt_serve.chats import Incoming, end_user

	om, talks = await _talks(monkeypatch)
	bob = Incoming("slack", "C_BOB", "U_BOB", "pay 5", "ev-bob", team="T1")
	assert await talks.receive(bob)
	talks._ended_taking(bob)  # its run ended parked on a question, kept in memory
	run_id = run_id_for("slack", "Helper", bob.id, scope=bob.key)
	talks._chat(bob.key, bob).parked[end_user(bob)] = RunState(run_id=run_id)
	await _flood(talks, 20)
	assert not await talks.receive(bob)
	await om.aclose()


async def test_the_rest_is_bounded_by_the_sender_holding_the_most(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	from openmolt_serve.chats import Incoming

	om, talks = await _talks(monkeypatch)
	eve = Incoming("slack", "C_EVE", "U_EVE", "hi", "ev-eve", team="T1")
	assert await talks.receive(eve)
	talks._ended_taking(eve)
	for n in range(10):
		message = Incoming("slack", "C_M", "U_MAL", "x", f"ev-m{n}", team="T1")
		assert await talks.receive(message)
		talks._ended_taking(message)
	assert "ev-eve" in talks._seen and len(talks._seen) == 3
	await om.aclose()
