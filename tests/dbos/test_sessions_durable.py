"""Sessions on a durable instance: the run is a workflow, the conversation goes on the same way."""

from __future__ import annotations

import json

import pytest

from openmolt import InMemorySession, OpenMolt
from openmolt_core.testing import ScriptedModel, finish, update_memory

pytestmark = pytest.mark.anyio


async def test_a_durable_run_continues_its_session(url: str) -> None:
	"""The second durable run reads the first's turn and notes; the agent's callback is not called."""
	updates: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[update_memory("likes tea"), finish("one", human_message="Noted.")],
			[finish("two", human_message="Tea it is.")],
		]
	)
	agent = om.create_agent(
		name="Host", model=model, memory={"short_term": {"data": "", "on_update": updates.append}}
	)
	session = InMemorySession("guest")
	try:
		first = await agent.run("I like tea", session=session)
		second = await agent.run("what do I drink?", session=session)
	finally:
		await om.aclose()
	assert first.status == second.status == "success"
	turn = json.loads(model.requests[1].messages[0].content)
	assert [e["content"] for e in turn["earlier"]] == ["I like tea", "Noted."]
	assert turn["memory"]["shortTerm"] == "likes tea"
	assert updates == []
