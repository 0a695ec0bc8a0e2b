"""Sessions on a durable instance: the run is a workflow, the conversation goes on the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openmolt import HumanInputUnavailable, InMemorySession, OpenMolt, RunState
from openmolt_core.testing import ScriptedModel, ask_human, finish, update_memory

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


def _later(question: str) -> str:
	raise HumanInputUnavailable(question)  # nobody is there now: the run parks


async def test_a_durable_session_turn_parks_and_resumes_into_its_session(url: str) -> None:
	"""A durable turn parks on a question and is resumed from its saved state into the session:
	it kept the earlier turns and notes it started with, its notes stay the session's, and the
	next durable turn reads the whole conversation."""
	updates: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[update_memory("likes tea"), finish("one", human_message="Noted.")],
			[ask_human("which size?")],
			[update_memory("size M"), finish("two", human_message="A mug, size M.")],
			[finish("three", human_message="Yes.")],
		]
	)
	agent = om.create_agent(
		name="Host",
		model=model,
		memory={"short_term": {"data": "", "on_update": updates.append}},
		on_human_input_request=_later,
	)
	session = InMemorySession("guest")
	try:
		await agent.run("I like tea", session=session)
		parked = await agent.run("buy a mug", session=session)
		assert parked.status == "human_input_required"
		state = RunState.from_dict(json.loads(json.dumps(parked.state.to_dict())))
		done = await agent.resume(state, answer="M", session=session)
		last = await agent.run("is that all?", session=session)
	finally:
		await om.aclose()
	assert done.status == last.status == "success", done.error
	assert done.state.memory["shortTerm"] == "likes tea\nsize M"
	turn = json.loads(model.requests[-1].messages[0].content)
	assert [e["content"] for e in turn["earlier"]] == [
		"I like tea",
		"Noted.",
		"buy a mug",
		"which size?",
		"M",
		"A mug, size M.",
	]
	assert turn["memory"]["shortTerm"] == "likes tea\nsize M"
	assert updates == []


async def test_durable_runs_of_a_shared_store_take_turns(url: str, tmp_path: Path) -> None:
	"""Durable runs with a store processes share (SQLite, its lock file per session): each run's
	workflow goes on inside its turn, two runs of one session at once append whole turns in the
	order they were asked, and the second reads the first's."""
	import anyio

	from openmolt import SQLiteSession

	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([[finish("one", human_message="First.")], [finish("two")]])
	agent = om.create_agent(name="Host", model=model)
	db = tmp_path / "sessions.db"
	results = []
	try:

		async def ask(text: str) -> None:
			results.append(await agent.run(text, session=SQLiteSession("guest", db)))

		async with anyio.create_task_group() as tg:
			tg.start_soon(ask, "first question")
			await anyio.sleep(0.05)
			tg.start_soon(ask, "second question")
	finally:
		await om.aclose()
	assert [r.status for r in results] == ["success", "success"]
	turn = json.loads(model.requests[1].messages[0].content)
	assert [e["content"] for e in turn["earlier"]] == ["first question", "First."]
	items = await SQLiteSession("guest", db).get_items()
	assert [i["content"] for i in items if i["role"] in ("user", "agent")] == [
		"first question",
		"First.",
		"second question",
		"two",
	]
