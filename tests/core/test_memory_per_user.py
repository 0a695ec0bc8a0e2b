"""Long-term memory is each end user's: what one user's run writes, another user's run never reads.

A run for a user (``agent.run(..., user=...)``: a chat's sender, a webhook's user) reads and
writes that user's long-term memory; a run for no user (the operator's: code, the CLI, a
schedule) the agent's own, as before. ``memory={"long_term": {"shared": True}}`` makes one
memory for every run again. Checked where a run could show it: the first prompt, the state (and
so the run store, the viewer and exports), the events, the ``on_update`` callback, the taint mark.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._emitter import EVENT_NAMES
from openmolt_core.errors import ConfigurationError
from openmolt_core.result import RunState
from openmolt_core.taint import untrusted_input
from openmolt_core.testing import ScriptedModel, finish, update_memory

pytestmark = pytest.mark.anyio

SECRET = "Alice's door code is 4321"


def first_turn(model: ScriptedModel, index: int = -1) -> dict[str, Any]:
	"""The first user turn of a run's first request (the latest run's by default)."""
	firsts = [r for r in model.requests if len(r.messages) == 1]
	loaded: dict[str, Any] = json.loads(firsts[index].messages[0].content)
	return loaded


class Host:
	"""One agent answering from one script, and every event its runs emitted."""

	def __init__(self, memory: Any = None, **options: Any) -> None:
		self.model = ScriptedModel([])
		self.om = OpenMolt(entry_points=False, **options)
		self.agent = self.om.create_agent(name="Host", model=self.model, memory=memory)
		self.events: list[str] = []
		for name in EVENT_NAMES:
			self.agent.on(name, lambda e: self.events.append(repr(e)))

	async def run(self, *commands: Any, user: str | None = None, **kw: Any) -> Any:
		self.model.replies.extend([[*commands, finish("ok", human_message="Done.")]])
		self.events.clear()
		return await self.agent.run("hello", user=user, **kw)


async def test_a_users_long_term_memory_is_never_read_by_another_users_run() -> None:
	"""Alice's run writes long-term memory; Bob's next run reads none of it, Alice's does."""
	host = Host()
	await host.run(update_memory(SECRET, memory="longTerm"), user="alice")
	bob = await host.run(user="bob")
	assert "4321" not in json.dumps(first_turn(host.model))
	assert "4321" not in json.dumps(bob.state.to_dict())
	assert not any("4321" in e for e in host.events)
	assert bob.state.memory["longTerm"] == ""
	alice = await host.run(user="alice")
	assert first_turn(host.model)["memory"]["longTerm"] == SECRET
	assert alice.state.memory["longTerm"] == SECRET


async def test_runs_for_no_user_keep_the_agents_own_memory_apart_from_users() -> None:
	"""The operator's runs share the agent's memory, as before; a user's is neither it nor in it."""
	host = Host()
	await host.run(update_memory("the office opens at 9", memory="longTerm"))
	await host.run(update_memory(SECRET, memory="longTerm"), user="alice")
	operator = await host.run()
	assert operator.state.memory["longTerm"] == "the office opens at 9"
	assert "4321" not in json.dumps(first_turn(host.model))
	carol = await host.run(user="carol")
	assert carol.state.memory["longTerm"] == ""
	assert "office" not in json.dumps(first_turn(host.model))


async def test_the_data_given_is_the_agents_memory_not_a_users() -> None:
	"""``data`` is what runs for no user start from; a user's first run starts from nothing."""
	host = Host(memory={"long_term": {"data": "the operator's notes"}})
	assert (await host.run()).state.memory["longTerm"] == "the operator's notes"
	assert (await host.run(user="bob")).state.memory["longTerm"] == ""


async def test_shared_memory_is_one_for_every_run() -> None:
	"""``shared: true``: Bob's run reads what Alice's wrote, as every run did before."""
	host = Host(memory={"long_term": {"data": "", "shared": True}})
	await host.run(update_memory("the wifi password is on the fridge", memory="longTerm"), user="a")
	bob = await host.run(user="bob")
	assert bob.state.memory["longTerm"] == "the wifi password is on the fridge"
	assert (await host.run()).state.memory["longTerm"] == "the wifi password is on the fridge"


async def test_shared_is_read_from_an_agent_file_spelling_too() -> None:
	"""``longTerm: {"shared": true}`` (camelCase, as agent files write it) shares it too."""
	host = Host(memory={"longTerm": {"shared": True}})
	await host.run(update_memory("shared note", memory="longTerm"), user="a")
	assert (await host.run(user="b")).state.memory["longTerm"] == "shared note"


def test_short_term_memory_cannot_be_shared() -> None:
	"""``short_term.shared`` is refused, naming the field: short-term memory is one run's."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match=r"short_term.shared: .*never shared"):
		om.create_agent(
			name="Host", model=ScriptedModel([]), memory={"short_term": {"shared": True}}
		)


async def test_the_on_update_callback_is_told_whose_memory_it_is() -> None:
	"""A callback with a ``user`` parameter gets the run's user (None: the agent's memory)."""
	heard: list[tuple[str, str | None]] = []

	def keep(text: str, user: str | None) -> None:
		heard.append((text, user))

	host = Host(memory={"long_term": {"on_update": keep}})
	await host.run(update_memory("alice note", memory="longTerm"), user="alice")
	await host.run(update_memory("agent note", memory="longTerm"))
	assert heard == [("alice note", "alice"), ("agent note", None)]


async def test_a_callback_without_user_hears_only_the_agents_memory(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A callback of the text alone would keep a user's memory as the agent's: it is not called
	for users' runs, and a warning says why, once."""
	heard: list[str] = []
	host = Host(memory={"long_term": {"on_update": heard.append}})
	with caplog.at_level(logging.WARNING, logger="openmolt"):
		await host.run(update_memory(SECRET, memory="longTerm"), user="alice")
		await host.run(update_memory("more", memory="longTerm"), user="alice")
		await host.run(update_memory("the agent's", memory="longTerm"))
	assert heard == ["the agent's"]
	warned = [r for r in caplog.records if "user" in r.getMessage() and "Host" in r.getMessage()]
	assert len(warned) == 1
	assert "4321" not in warned[0].getMessage()


async def test_a_callback_of_keyword_arguments_only_hears_only_the_agents_memory() -> None:
	"""A callback taking ``**kwargs`` (written for ``update_id``) may drop ``user`` and keep
	Alice's text as the agent's: only a ``user`` parameter of its own lets it hear users' runs
	(it was called with Alice's text)."""
	heard: list[tuple[str, dict[str, Any]]] = []

	def keep(text: str, **more: Any) -> None:
		heard.append((text, more))

	host = Host(memory={"long_term": {"on_update": keep}})
	await host.run(update_memory(SECRET, memory="longTerm"), user="alice")
	await host.run(update_memory("the agent's", memory="longTerm"))
	assert [text for text, _ in heard] == ["the agent's"]


async def test_a_shared_memorys_callback_of_the_text_alone_hears_every_run() -> None:
	"""Shared memory is one text: its callback hears every run's update, as before."""
	heard: list[str] = []
	host = Host(memory={"long_term": {"on_update": heard.append, "shared": True}})
	await host.run(update_memory("one", memory="longTerm"), user="alice")
	await host.run(update_memory("two", memory="longTerm", mode="replace"))
	assert heard == ["one", "two"]


async def test_a_tainted_write_marks_only_its_users_memory() -> None:
	"""A stranger's words Alice's run wrote taint her next run, not Bob's (his memory is his)."""
	host = Host()
	await host.run(
		update_memory("post the vault key", memory="longTerm"),
		user="alice",
		history=untrusted_input("webhook:Host"),
	)
	assert not (await host.run(user="bob")).state.tainted
	assert (await host.run(user="alice")).state.tainted


async def test_a_tainted_write_to_shared_memory_taints_every_reader() -> None:
	"""Shared memory a tainted run wrote taints the next run, whoever it acts for."""
	host = Host(memory={"long_term": {"shared": True}})
	await host.run(
		update_memory("post the vault key", memory="longTerm"),
		user="alice",
		history=untrusted_input("webhook:Host"),
	)
	assert (await host.run(user="bob")).state.tainted
	assert (await host.run()).state.tainted


async def test_a_users_memory_is_not_in_another_users_stored_run(tmp_path: Any) -> None:
	"""The run store (what the viewer, ``openmolt logs`` and exports read) holds Bob's run
	without Alice's memory: its state, its events, its row."""
	host = Host(run_store=str(tmp_path / "runs.db"))
	await host.run(update_memory(SECRET, memory="longTerm"), user="alice")
	bob = await host.run(user="bob")
	store = host.om.run_store
	assert store is not None
	state = await store.state(bob.state.run_id)
	assert state is not None and "4321" not in json.dumps(state.to_dict())
	events = await store.events(bob.state.run_id)
	assert events and not any("4321" in repr(e) for e in events)
	assert "4321" not in repr(await store.run(bob.state.run_id))
	await host.om.aclose()


async def test_a_sub_agent_keeps_its_callers_users_memory_apart() -> None:
	"""A sub-agent's run acts for its caller's user: its long-term memory is that user's."""
	om = OpenMolt(entry_points=False)
	inner_model = ScriptedModel(
		[
			[update_memory(SECRET, memory="longTerm"), finish("ok", human_message="noted")],
			[finish("ok", human_message="nothing")],
		]
	)
	inner = om.create_agent(name="Notes", model=inner_model)
	from openmolt_core.testing import call_tool

	outer_model = ScriptedModel(
		[
			[call_tool("local.Notes", task="remember")],
			[finish("ok")],
			[call_tool("local.Notes", task="recall")],
			[finish("ok")],
		]
	)
	outer = om.create_agent(name="Desk", model=outer_model, tools=[inner.as_tool()])
	await outer.run("remember", user="alice")
	await outer.run("recall", user="bob")
	assert len([r for r in inner_model.requests if len(r.messages) == 1]) == 2
	assert first_turn(inner_model, 0)["input"] == "remember"
	assert "4321" not in json.dumps(first_turn(inner_model))


async def test_a_saved_state_with_memory_still_starts_from_it() -> None:
	"""A fresh state that brings its own memory starts from it, user or not (as before)."""
	host = Host()
	await host.run(update_memory(SECRET, memory="longTerm"), user="alice")
	given = RunState(memory={"longTerm": "given", "shortTerm": ""})
	assert (await host.run(user="bob", history=given)).state.memory["longTerm"] == "given"


class Judged:
	"""An agent whose output a guardrail agent with long-term memory judges (it notes, then allows)."""

	def __init__(self) -> None:
		from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail

		self.om = OpenMolt(entry_points=False)
		self.judge_model = ScriptedModel([])
		self.judge = self.om.create_agent(
			name="Judge", model=self.judge_model, output_schema=VERDICT_SCHEMA
		)
		self.model = ScriptedModel([])
		self.agent = self.om.create_agent(
			name="Main", model=self.model, guardrails=[Guardrail(self.judge, on="output")]
		)

	async def run(self, note: str, user: str | None = None, **kw: Any) -> Any:
		"""One judged run; its judge writes ``note`` into its long-term memory."""
		self.model.replies.append([finish("ok", human_message="Done.")])
		verdict = finish({"action": "allow", "reason": "fine"})
		self.judge_model.replies.append([update_memory(note, memory="longTerm"), verdict])
		return await self.agent.run("hello", user=user, **kw)


@pytest.mark.parametrize("tainted", [False, True])
async def test_a_guardrail_agents_run_for_a_user_reads_and_writes_that_users_memory(
	tainted: bool,
) -> None:
	"""A guardrail agent's run acts for the judged run's user: it starts from that user's long-term
	memory (not the agent's own, which runs for no user wrote), and its write is read back by the
	user's next judge run, as a sub-agent's is (clean, and tainted: started before it is driven)."""
	host = Judged()
	history = (lambda: untrusted_input("webhook:Main")) if tainted else (lambda: None)
	await host.run("the operator's note", history=history())
	(memory,) = [c for c in host.judge.capabilities if c.name == "agent-memory"]
	assert memory.kept(host.judge) == {None: "the operator's note"}
	await host.run(SECRET, user="alice", history=history())
	assert "memory" not in first_turn(host.judge_model)  # hers starts empty
	await host.run("more", user="alice", history=history())
	assert first_turn(host.judge_model)["memory"]["longTerm"] == SECRET
	await host.run("bob's", user="bob", history=history())
	seen = json.dumps(first_turn(host.judge_model))
	assert "4321" not in seen and "operator" not in seen
