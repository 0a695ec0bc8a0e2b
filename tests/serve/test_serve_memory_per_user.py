"""A chat served to many people: what one sender's run writes to long-term memory, another's never reads.

Each message's run acts for its sender (``telegram:<id>``), so its long-term memory is the
sender's own: in their private chats and in a group they share alike.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish, update_memory
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

pytestmark = pytest.mark.anyio

SECRET = "my door code is 4321"


async def bot(model: ScriptedModel, fake: FakeTelegram) -> AsyncIterator[Any]:
	async with local_server(fake.app()) as base:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="Helper", model=model, instructions="Help.")
		settings = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedUsers": [42, 43],
		}
		triggers = Triggers.model_validate({"channels": [settings]})
		async with TriggerServer([(agent, triggers)], port=0):
			yield agent
		await om.aclose()


def memories(model: ScriptedModel) -> list[Any]:
	"""The memory each run's first turn showed (None: none)."""
	return [
		json.loads(r.messages[0].content).get("memory")
		for r in model.requests
		if len(r.messages) == 1
	]


@pytest.mark.parametrize("chat", ["private", "group"])
async def test_one_senders_long_term_memory_never_reaches_anothers_run(chat: str) -> None:
	"""Ada tells the agent her door code (kept in long-term memory); Bob's run reads none of
	it, in his own chat or in the group they share; Ada's next run reads it."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			[update_memory(SECRET, memory="longTerm"), finish("a", human_message="Noted.")],
			finish("b", human_message="Hi Bob."),
			finish("c", human_message="It is 4321."),
		]
	)
	ada, bob = (42, 43) if chat == "private" else (-100, -100)
	async for _ in bot(model, fake):
		fake.message(SECRET, chat=ada)
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("what do you remember?", user=43, chat=bob, username="bob")
		await eventually(lambda: len(fake.sent) == 2)
		fake.message("my door code?", chat=ada)
		await eventually(lambda: len(fake.sent) == 3)
	seen = memories(model)
	assert seen[1] is None  # Bob's run: no memory at all
	assert seen[2]["longTerm"] == SECRET  # Ada's own
	bobs = [r for r in model.requests if len(r.messages) == 1][1]
	assert "4321" not in json.dumps(json.loads(bobs.messages[0].content).get("memory"))
