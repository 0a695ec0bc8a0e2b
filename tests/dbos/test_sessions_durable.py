"""Sessions on a durable instance: the run is a workflow, the conversation goes on the same way."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import HumanInputUnavailable, InMemorySession, OpenMolt, RunState, SQLiteSession
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


async def _waited(path: Path) -> None:
	"""Wait for the other process to make ``path`` (polled in a thread: the file is its word)."""

	def wait() -> None:
		deadline = time.monotonic() + 90
		while not path.exists():
			assert time.monotonic() < deadline, f"{path.name} never appeared"
			time.sleep(0.05)

	await anyio.to_thread.run_sync(wait)


@pytest.mark.timeout(180)
async def test_a_turn_whose_caller_died_is_appended_by_the_session_s_next_run(
	url: str, tmp_path: Path, spawn: Any
) -> None:
	"""The caller's process is killed while its durable run is in a tool; another process takes
	the run over and finishes it, and the session's next run finds the turn and appends it.

	The turn was appended by the caller only: it was lost, and the next run read a conversation
	without the question or its answer.
	"""
	from session_agent import build, durability

	db, held = tmp_path / "sessions.db", tmp_path / "held"
	caller = spawn(["session_agent.py", url, str(db), str(held)], name="caller")
	await _waited(held)
	caller.kill()
	[pending] = [i for i in await SQLiteSession("guest", db).get_items()]
	assert pending["role"] == "pending" and pending["content"] == "buy tea"
	model = ScriptedModel(
		[
			finish("bought", human_message="Tea bought."),
			finish("more", human_message="Milk too."),
			finish("no", human_message="No."),
		]
	)
	om = OpenMolt(durability=durability(url, "w2"), entry_points=False)
	agent = build(om, model)
	try:
		await om.durability.start()  # type: ignore[union-attr]
		with anyio.fail_after(90):  # w2 takes the dead worker's run over and finishes it
			done = await om.durability.result(pending["run_id"])  # type: ignore[union-attr]
		assert done.status == "success" and done.human_message == "Tea bought."
		assert [i["role"] for i in await SQLiteSession("guest", db).get_items()] == ["pending"]
		after = await agent.run("and milk?", session=SQLiteSession("guest", db))
		again = await agent.run("anything else?", session=SQLiteSession("guest", db))
	finally:
		await om.aclose()
	assert after.status == again.status == "success"
	turn = json.loads(model.requests[-2].messages[0].content)
	assert [e["content"] for e in turn["earlier"]] == ["buy tea", "Tea bought."]
	items = await SQLiteSession("guest", db).get_items()
	assert [(i["role"], i.get("content")) for i in items if i["role"] != "pending"] == [
		("user", "buy tea"),
		("agent", "Tea bought."),
		("user", "and milk?"),
		("agent", "Milk too."),
		("user", "anything else?"),
		("agent", "No."),
	]  # the recovered turn once, in its place


async def test_a_parked_turn_answered_outside_the_session_gets_its_reply_appended(
	url: str,
) -> None:
	"""A durable session turn parks on a question, and the answer comes through
	``om.durability.answer`` (a chat, another process): nobody appended the run's reply; the
	session's next run does, once, and a turn that ended in place is never appended twice."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[ask_human("which size?")],
			[finish("two", human_message="A mug, size M.")],
			[finish("three", human_message="Yes.")],
			[finish("four", human_message="Done.")],
		]
	)
	agent = om.create_agent(name="Host", model=model, on_human_input_request=_later)
	session = InMemorySession("guest")
	try:
		parked = await agent.run("buy a mug", session=session)
		assert parked.status == "human_input_required"
		await om.durability.answer(parked.state.run_id, "M")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			done = await om.durability.result(parked.state.run_id)  # type: ignore[union-attr]
		assert done.status == "success"
		await agent.run("is that all?", session=session)
		await agent.run("thanks", session=session)
	finally:
		await om.aclose()
	turn = json.loads(model.requests[-2].messages[0].content)
	assert [e["content"] for e in turn["earlier"]] == ["buy a mug", "which size?", "A mug, size M."]
	last = json.loads(model.requests[-1].messages[0].content)
	assert [e["content"] for e in last["earlier"]].count("A mug, size M.") == 1


async def test_the_pending_item_goes_with_its_turn_and_an_undone_turn_stays_undone(
	url: str,
) -> None:
	"""A turn appended in place takes its pending item back, so an application that undoes the
	turn (``pop_item`` twice) removes it for good: the item left behind brought it back."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			finish("a", human_message="Wrong answer."),
			finish("b", human_message="Right answer."),
			finish("c", human_message="ok"),
		]
	)
	agent = om.create_agent(name="Host", model=model)
	session = InMemorySession("guest")
	try:
		await agent.run("question one", session=session)
		assert [i["role"] for i in await session.get_items()] == ["user", "agent"]
		await session.pop_item()
		await session.pop_item()
		await agent.run("question again", session=session)
		await agent.run("third", session=session)
	finally:
		await om.aclose()
	turn = json.loads(model.requests[-1].messages[0].content)
	assert [e["content"] for e in turn["earlier"]] == ["question again", "Right answer."]


async def test_a_resume_delivered_twice_and_later_notes_are_kept_once(url: str) -> None:
	"""A parked turn resumed in the session, then again (refused: it was answered): its reply is
	in the conversation once. A parked turn answered elsewhere after another run wrote notes:
	its reply is appended, the later notes stand."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[ask_human("which size?")],
			[finish("two", human_message="A mug, size M.")],
			[ask_human("which colour?")],
			[update_memory("likes tea"), finish("b", human_message="Noted: tea.")],
			[update_memory("blue"), finish("a", human_message="A blue cup.")],
			[finish("c", human_message="ok")],
		]
	)
	agent = om.create_agent(name="Host", model=model, on_human_input_request=_later)
	session = InMemorySession("guest")
	try:
		parked = await agent.run("buy a mug", session=session)
		assert (await agent.resume(parked.state, answer="M", session=session)).ok
		with pytest.raises(Exception, match=r"answer|resum|decided"):
			await agent.resume(parked.state, answer="M", session=session)
		cup = await agent.run("buy a cup", session=session)
		assert cup.status == "human_input_required"
		await agent.run("I like tea", session=session)
		await om.durability.answer(cup.state.run_id, "blue")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			await om.durability.result(cup.state.run_id)  # type: ignore[union-attr]
		await agent.run("anything else?", session=session)
	finally:
		await om.aclose()
	turn = json.loads(model.requests[-1].messages[0].content)
	said = [e["content"] for e in turn["earlier"]]
	assert said.count("A mug, size M.") == 1 and said.count("A blue cup.") == 1
	assert said[-1] == "A blue cup."  # appended when found ended, after the turns since
	assert turn["memory"]["shortTerm"] == "likes tea"


async def test_notes_of_a_turn_answered_elsewhere_stand_when_another_user_came_since(
	url: str,
) -> None:
	"""Alice's parked turn answered elsewhere after Bob's turn: her notes are kept for her (Bob's
	later turn kept his own notes, which do not replace hers)."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[ask_human("which colour?")],
			[update_memory("bob likes tea"), finish("b", human_message="Noted: tea.")],
			[update_memory("alice: blue"), finish("a", human_message="A blue cup.")],
			[finish("c", human_message="ok")],
		]
	)
	agent = om.create_agent(name="Host", model=model, on_human_input_request=_later)
	session = InMemorySession("group")
	try:
		cup = await agent.run("buy a cup", session=session, user="alice")
		assert cup.status == "human_input_required"
		await agent.run("I like tea", session=session, user="bob")
		await om.durability.answer(cup.state.run_id, "blue")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			await om.durability.result(cup.state.run_id)  # type: ignore[union-attr]
		await agent.run("anything else?", session=session, user="alice")
	finally:
		await om.aclose()
	turn = json.loads(model.requests[-1].messages[0].content)
	assert turn["memory"]["shortTerm"] == "alice: blue"


async def test_an_output_of_a_turn_answered_elsewhere_is_read_by_its_users_runs_only(
	url: str,
) -> None:
	"""Alice's parked turn answered elsewhere ends with an output only (no humanMessage): the
	session's next run appends it, and Bob's run reads that nothing was said; Alice's reads it."""
	om = OpenMolt(durability=url, entry_points=False)
	inbox = {"inbox": ["overdraft mail from the bank"]}
	model = ScriptedModel(
		[
			[ask_human("which folder?")],
			[finish("b", human_message="Hi Bob.")],
			[finish(inbox)],
			[finish("b2", human_message="Hi again.")],
			[finish("a", human_message="ok")],
		]
	)
	agent = om.create_agent(name="Host", model=model, on_human_input_request=_later)
	session = InMemorySession("group")
	try:
		mail = await agent.run("check my inbox", session=session, user="alice")
		assert mail.status == "human_input_required"
		await agent.run("hello", session=session, user="bob")
		await om.durability.answer(mail.state.run_id, "bank")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			await om.durability.result(mail.state.run_id)  # type: ignore[union-attr]
		await agent.run("hello again", session=session, user="bob")
		await agent.run("what was there?", session=session, user="alice")
	finally:
		await om.aclose()
	bob = json.loads(model.requests[3].messages[0].content)
	assert "overdraft" not in json.dumps(bob)
	assert [e["content"] for e in bob["earlier"] if e["role"] == "agent"] == [
		"which folder?",
		"Hi Bob.",
		None,
	]
	alice = json.loads(model.requests[4].messages[0].content)
	assert inbox in [e["content"] for e in alice["earlier"]]


async def test_a_run_id_delivered_twice_appends_its_turn_once(url: str) -> None:
	"""A new run started again under its taken id (a webhook delivery retried to a second server,
	whose replay guard never saw it) attaches to the run: its turn is in the session once, ended
	or parked, and a parked one's reply from elsewhere is appended once by the next run."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			finish("one", human_message="Done once."),
			[ask_human("which size?")],
			[finish("two", human_message="A mug, size M.")],
			[finish("three", human_message="ok")],
		]
	)
	agent = om.create_agent(name="Hook", model=model, on_human_input_request=_later)
	session = InMemorySession("hook:Hook:42")
	try:
		first = await agent.run("payload", history=RunState(run_id="hook-a"), session=session)
		again = await agent.run("payload", history=RunState(run_id="hook-a"), session=session)
		assert first.output == again.output == "one"
		parked = await agent.run("buy", history=RunState(run_id="hook-b"), session=session)
		twice = await agent.run("buy", history=RunState(run_id="hook-b"), session=session)
		assert parked.status == twice.status == "human_input_required"
		items = await session.get_items()
		assert [i["role"] for i in items] == ["user", "agent", "user", "agent", "pending"]
		await om.durability.answer("hook-b", "M")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			await om.durability.result("hook-b")  # type: ignore[union-attr]
		await agent.run("is that all?", session=session)
	finally:
		await om.aclose()
	assert len(model.requests) == 4  # each run's model asked once
	turn = json.loads(model.requests[-1].messages[0].content)
	said = [e["content"] for e in turn["earlier"]]
	assert said == ["payload", "Done once.", "buy", "which size?", "A mug, size M."]


async def test_a_run_delivered_again_while_parked_here_returns_its_park_at_once(url: str) -> None:
	"""Another delivery of a run parked on a question in this process returns the park at once.

	The run had parked before the second delivery began to wait, and that wait listened for the
	run's next outcome in this process only: it read the park from the store after 20 polls
	(10 s at the default poll; 40 s at this test's 2 s)."""
	om = OpenMolt(durability={"url": url, "poll": 2}, entry_points=False)
	model = ScriptedModel([[ask_human("which size?")], [finish("two", human_message="M it is.")]])
	agent = om.create_agent(name="Hook", model=model, on_human_input_request=_later)
	try:
		parked = await agent.run("buy", history=RunState(run_id="hook-b"))
		began = time.monotonic()
		twice = await agent.run("buy", history=RunState(run_id="hook-b"))
		took = time.monotonic() - began
		assert parked.status == twice.status == "human_input_required"
		assert twice.state.run_id == "hook-b" and twice.state.steps == parked.state.steps
		assert took < 20, took  # a look at the store: well under a second on an idle machine
		began = time.monotonic()
		saved = await agent.run(history=parked.state)  # its saved state, delivered again
		took = time.monotonic() - began
		assert saved.status == "human_input_required" and saved.state.steps == parked.state.steps
		assert took < 20, took
		await om.durability.answer("hook-b", "M")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			done = await om.durability.result("hook-b")  # type: ignore[union-attr]
	finally:
		await om.aclose()
	assert done.output == "two"
	assert len(model.requests) == 2  # the second delivery asked the model nothing


async def test_a_turn_settled_by_the_next_run_takes_back_its_own_item_only(url: str) -> None:
	"""The next run appends the turn of a run answered elsewhere and takes back that run's item,
	not the latest one: another run's turn, still under way, keeps its item (it was taken back
	with the first run's turn, and that run's end was never appended)."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[ask_human("which size?")],
			[finish("two", human_message="A mug, size M.")],
			[finish("three", human_message="Yes.")],
		]
	)
	agent = om.create_agent(name="Host", model=model, on_human_input_request=_later)
	session = InMemorySession("guest")
	try:
		parked = await agent.run("buy a mug", session=session)
		# Another run of the session under way, whose caller is gone (its item, last).
		await session.add_items([{"role": "pending", "run_id": "elsewhere", "new": True}])
		await om.durability.answer(parked.state.run_id, "M")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			await om.durability.result(parked.state.run_id)  # type: ignore[union-attr]
		await agent.run("is that all?", session=session)
	finally:
		await om.aclose()
	items = await session.get_items()
	assert [i.get("run_id") for i in items if i["role"] == "pending"] == ["elsewhere"]
	assert [i.get("content") for i in items if i["role"] == "agent"] == [
		"which size?",
		"A mug, size M.",
		"Yes.",
	]
