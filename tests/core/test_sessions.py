"""Sessions: conversations that outlive a run, per user, with their taint and redacted."""

from __future__ import annotations

import itertools
import json
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import (
	ConfigurationError,
	HumanInputUnavailable,
	InMemorySession,
	OpenMolt,
	RunState,
	Session,
	SQLiteSession,
)
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import CompactionConfig, estimate_tokens
from openmolt_core.sessions import SQLAlchemySession, history_of
from openmolt_core.taint import untrusted_input
from openmolt_core.testing import ScriptedModel, finish, update_memory


def _later(question: str) -> str:
	"""A person is not there now: the run parks on its question."""
	raise HumanInputUnavailable(question)


pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def first_turn(request: ModelRequest) -> dict[str, Any]:
	body: dict[str, Any] = json.loads(request.messages[0].content)
	return body


class Echo:
	"""A model that answers every turn with the input it read (and a note, when asked)."""

	name = "echo"

	def __init__(self, note: dict[str, str] | None = None) -> None:
		self.requests: list[ModelRequest] = []
		self.note = note or {}

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(replace(request, messages=list(request.messages)))
		said = str(first_turn(request)["input"])
		commands: list[dict[str, Any]] = []
		if said in self.note:
			commands.append(update_memory(self.note[said]))
		commands.append(finish(f"you said {said}", human_message=f"you said {said}"))
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(
			text=json.dumps({"commands": commands}), usage=Usage(tokens, 10, calls=1)
		)


def sessions(kind: str, tmp_path: Path, session_id: str) -> Session:
	if kind == "memory":
		return InMemorySession(session_id)
	if kind == "sqlite":
		return SQLiteSession(session_id, tmp_path / "state" / "sessions.db")
	pytest.importorskip("sqlalchemy")
	url = f"sqlite:///{tmp_path / 'sa.db'}"
	return SQLAlchemySession(session_id, url)


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy"])
async def test_two_users_interleaved_never_mix(kind: str, tmp_path: Path) -> None:
	"""Alice's turns, replies and notes never reach Bob's runs, and the other way round."""
	model = Echo(note={"remember tea": "alice likes tea", "remember coffee": "bob likes coffee"})
	updates: list[str] = []
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Chat",
		model=model,
		memory={"short_term": {"data": "", "on_update": updates.append}},
	)
	alice = sessions(kind, tmp_path, "alice")
	bob = sessions(kind, tmp_path, "bob")
	for session, text in [
		(alice, "remember tea"),
		(bob, "remember coffee"),
		(alice, "alice two"),
		(bob, "bob two"),
		(alice, "alice three"),
	]:
		result = await agent.run(text, session=session)
		assert result.human_message == f"you said {text}"
	turns = [first_turn(r) for r in model.requests]
	alice_turns = [turns[i] for i in (0, 2, 4)]
	bob_turns = [turns[i] for i in (1, 3)]
	for turn in alice_turns:
		assert "coffee" not in json.dumps(turn) and "bob" not in json.dumps(turn)
	for turn in bob_turns:
		assert "tea" not in json.dumps(turn) and "alice" not in json.dumps(turn)
	# each sees its own earlier turns, in order, and its own notes
	assert [e["content"] for e in alice_turns[2]["earlier"]] == [
		"remember tea",
		"you said remember tea",
		"alice two",
		"you said alice two",
	]
	assert alice_turns[1]["memory"]["shortTerm"] == "alice likes tea"
	assert bob_turns[1]["memory"]["shortTerm"] == "bob likes coffee"
	assert "earlier" not in turns[0] and "earlier" not in turns[1]
	assert updates == []  # the agent's short-term callback is not the session's store
	assert len(await alice.get_items()) == 3 * 2 + 1  # three turns and one note


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_in_one_session_each_users_notes_are_their_own(kind: str, tmp_path: Path) -> None:
	"""In a group chat's session, a run for Bob reads the turns but never Alice's notes."""
	model = Echo(note={"check my inbox": "alice: overdraft mail from the bank", "hi": "bob: hi"})
	agent = OpenMolt(entry_points=False).create_agent(name="Chat", model=model)
	group = sessions(kind, tmp_path, "group")
	await agent.run("check my inbox", session=group, user="slack:T1:alice")
	await agent.run("what do you know?", session=group, user="slack:T1:bob")
	await agent.run("hi", session=group, user="slack:T1:bob")
	await agent.run("and me?", session=group, user="slack:T1:alice")
	await agent.run("and no one?", session=group)
	turns = [first_turn(r) for r in model.requests]
	assert "overdraft" not in json.dumps(turns[1]) and "overdraft" not in json.dumps(turns[2])
	assert [e["content"] for e in turns[1]["earlier"]][:1] == ["check my inbox"]  # the turns
	assert "memory" not in turns[1] and "memory" not in turns[2]  # Bob kept no notes yet
	assert turns[3]["memory"]["shortTerm"] == "alice: overdraft mail from the bank"
	assert "overdraft" not in json.dumps(turns[4].get("memory"))  # a run for no one
	notes = [i for i in await group.get_items() if i.get("role") == "memory"]
	assert [n["user"] for n in notes] == ["slack:T1:alice", "slack:T1:bob"]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy"])
async def test_in_one_session_a_runs_output_is_its_users_and_what_it_said_everyones(
	kind: str, tmp_path: Path
) -> None:
	"""In a group chat's session, Bob's run reads what Alice's runs said, never the output only
	her run's caller got (a chat posts "Done." for a dict); her own later runs still read it."""
	inbox = {"inbox": ["overdraft mail from the bank"]}
	mails = {"result": "Two new mails.", "from": ["bank@example.com"]}
	model = ScriptedModel(
		[
			finish(inbox),  # no humanMessage: nothing said to the chat
			finish(mails),  # its result's text is said; the rest is not
			finish("b", human_message="Hello Bob."),
			finish("a", human_message="Here it is."),
			finish("n", human_message="Hi."),
		]
	)
	agent = OpenMolt(entry_points=False).create_agent(name="Chat", model=model)
	group = sessions(kind, tmp_path, "group")
	await agent.run("check my inbox", session=group, user="slack:T1:alice")
	await agent.run("any mail?", session=group, user="slack:T1:alice")
	await agent.run("hello", session=group, user="slack:T1:bob")
	await agent.run("what did you find?", session=group, user="slack:T1:alice")
	await agent.run("and no one?", session=group)
	turns = [first_turn(r) for r in model.requests]
	bob, alice, nobody = turns[2], turns[3], turns[4]
	for turn in (bob, nobody):
		assert "overdraft" not in json.dumps(turn) and "bank@" not in json.dumps(turn)
	assert [e["content"] for e in bob["earlier"] if e["role"] == "agent"] == [
		None,
		"Two new mails.",
	]
	assert [e["content"] for e in alice["earlier"] if e["role"] == "agent"] == [
		inbox,
		mails,
		"Hello Bob.",  # what Bob was told reaches Alice's run
	]
	assert [e["content"] for e in nobody["earlier"] if e["role"] == "agent"][-2:] == [
		"Hello Bob.",
		"Here it is.",
	]
	replies = [i for i in await group.get_items() if i["role"] == "agent"]
	assert [r.get("user") for r in replies] == [*["slack:T1:alice"] * 2, None, None, None]


@pytest.mark.parametrize("user", [None, "telegram:42"])
async def test_one_persons_session_reads_each_reply_as_its_caller_got_it(user: str | None) -> None:
	"""A session of one person's runs (agent.run, a direct chat) reads a run's whole output."""
	total = {"total": 42, "items": ["tea", "cake"]}
	model = ScriptedModel([finish(total), finish("ok", human_message="Yes.")])
	agent = OpenMolt(entry_points=False).create_agent(name="Chat", model=model)
	session = InMemorySession("one")
	await agent.run("sum it up", session=session, user=user)
	await agent.run("is that all?", session=session, user=user)
	assert first_turn(model.requests[1])["earlier"] == [
		{"role": "user", "content": "sum it up"},
		{"role": "agent", "content": total},
	]


class Outputs:
	"""A model that answers Alice with an output only (her inbox), and anyone else in words."""

	name = "outputs"

	def __init__(self) -> None:
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(replace(request, messages=list(request.messages)))
		asked = str(first_turn(request)["input"])
		if asked.startswith("alice"):
			command = finish({"inbox": f"overdraft mail {asked} " + "words " * 10})
		else:
			command = finish("ok", human_message=f"you said {asked}")
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(
			text=json.dumps({"commands": [command]}), usage=Usage(tokens, 10, calls=1)
		)


class Retelling:
	"""A summariser that retells every turn it was given (a leak into a summary shows)."""

	name = "retelling"

	def __init__(self) -> None:
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(request)
		turns = json.loads(request.messages[0].content)["turns"]
		return ModelResponse(text=json.dumps(turns)[-600:], usage=Usage(50, 10, calls=1))


async def test_a_summary_of_a_users_outputs_is_read_by_that_users_runs_only() -> None:
	"""A summary written as Alice's run read the turns (her outputs in it) is hers: Bob's run reads
	one of what was said, and its summariser never sees her outputs."""
	model = Outputs()
	summariser = Retelling()
	agent = OpenMolt(entry_points=False).create_agent(
		name="Chat", model=model, compaction=CompactionConfig(threshold_tokens=400)
	)
	agent.compactor = lambda: (summariser, "cheap")
	group = InMemorySession("group")
	for i in range(12):
		await agent.run(f"alice {i}", session=group, user="alice")
	assert summariser.requests, "the session was never summarised"
	asked = len(summariser.requests)
	for i in range(3):
		await agent.run(f"bob {i}", session=group, user="bob")
	await agent.run("alice again", session=group, user="alice")
	summaries = [i for i in await group.get_items() if i["role"] == "summary"]
	assert [(s.get("private"), s.get("user")) for s in summaries if "overdraft" in s["content"]]
	for s in summaries:
		assert ("overdraft" in s["content"]) == bool(s.get("private") and s["user"] == "alice")
	for request in model.requests[12:15]:  # Bob's
		assert "overdraft" not in json.dumps(first_turn(request))
	for request in summariser.requests[asked:]:
		if "bob" in request.messages[0].content:
			assert "overdraft" not in request.messages[0].content
	assert "overdraft" in json.dumps(first_turn(model.requests[-1]))  # Alice's own


async def test_only_a_sessions_runs_keep_their_notes_from_the_agents_callback() -> None:
	"""After a run in a session, the agent's run without one calls its short-term callback again."""
	# (The fake model's inputs are its attributes' keys, read for secrets as a provider's are: a
	# key holding "session" would make its note a secret.)
	model = Echo(note={"in a thread": "session note", "alone": "own note"})
	updates: list[str] = []
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Chat", model=model, memory={"short_term": {"data": "", "on_update": updates.append}}
	)
	session = InMemorySession("one")
	await agent.run("in a thread", session=session)
	assert updates == []
	await agent.run("alone")
	assert updates == ["own note"]
	notes = [i["content"] for i in await session.get_items() if i.get("role") == "memory"]
	assert notes == ["session note"]


class _Unnamed(InMemorySession):
	"""A session of the protocol whose id is empty (no store of ours takes one)."""

	@property
	def session_id(self) -> str:
		return ""

	@session_id.setter
	def session_id(self, value: str) -> None:
		pass


@pytest.mark.parametrize("session", [InMemorySession("alice"), _Unnamed("ignored")], ids=str)
async def test_a_session_runs_notes_stay_out_of_the_agents_callback_when_resumed_elsewhere(
	session: Any,
) -> None:
	"""A session run resumed by another process (a durable worker recovering it) keeps its notes.

	The run's state says it belongs to a session: the process that goes on with it never gives
	that user's notes to the agent-wide short-term callback, which every run of the agent shares
	(it did: the marker lived only in the process that started the run).
	"""
	from openmolt_core.testing import ask_human

	def agent_of(om: OpenMolt, updates: list[str], model: Any) -> Any:
		made = om.create_agent(
			name="Chat",
			model=model,
			memory={"short_term": {"data": "", "on_update": updates.append}},
		)
		made.on_human_input_request = _later
		return made

	first: list[str] = []
	started = agent_of(
		OpenMolt(entry_points=False), first, ScriptedModel([[ask_human("tea or coffee?")]])
	)
	parked = await started.run("hello", session=session)
	assert parked.status == "human_input_required"
	saved = parked.state.to_dict()
	assert saved["ext"]["session"] == session.session_id  # an empty id marks the run too

	other: list[str] = []  # another process: same agent, it never saw the session
	model = ScriptedModel([[update_memory("alice likes tea"), finish("noted")]])
	elsewhere = agent_of(OpenMolt(entry_points=False), other, model)
	done = await elsewhere.resume(RunState.from_dict(saved), answer="tea")
	assert done.status == "success", done.error
	assert first == [] and other == []  # the notes are the session's, not the agent's
	assert "alice likes tea" in (done.state.memory.get("shortTerm") or "")


async def test_an_agent_without_sessions_refuses_one() -> None:
	"""An agent built with no session runner says so, and nothing runs."""
	from tests.core._bare import bare_agent

	model = Echo()
	om = OpenMolt(entry_points=False)
	built = om.create_agent(name="Chat", model=model)
	agent = bare_agent(built, model, model="echo")
	with pytest.raises(ConfigurationError, match="takes no session"):
		await agent.run("hi", session=InMemorySession("one"))
	assert model.requests == []


async def test_a_session_continues_after_a_restart(tmp_path: Path) -> None:
	"""A new process (instance, agent, session object) on the same file goes on where it was."""
	path = tmp_path / "state" / "sessions.db"
	first = Echo(note={"my order is 42": "order 42"})
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=first)
	await agent.run("my order is 42", session=SQLiteSession("telegram:7", path))
	assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
	assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700

	again = Echo()
	om2 = OpenMolt(entry_points=False)
	agent2 = om2.create_agent(name="Chat", model=again)
	result = await agent2.run("where is it?", session=SQLiteSession("telegram:7", path))
	turn = first_turn(again.requests[0])
	assert [e["content"] for e in turn["earlier"]] == ["my order is 42", "you said my order is 42"]
	assert turn["memory"]["shortTerm"] == "order 42"
	assert result.status == "success"


async def test_the_prefix_grows_by_appending_between_turns() -> None:
	"""Turn n+1's first message starts with turn n's, up to the end of its earlier turns."""
	model = Echo()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	session = InMemorySession("u")
	for i in range(4):
		await agent.run(f"message {i}", session=session)
	texts = [r.messages[0].content for r in model.requests]
	for before, after in itertools.pairwise(texts[1:]):
		cut = before.index('],"input"')  # the earlier list, without its closing bracket
		assert after.startswith(before[:cut])


class Summariser:
	name = "summariser"

	def __init__(self) -> None:
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(request)
		turns = json.loads(request.messages[0].content)["turns"]
		return ModelResponse(text=f"summary of {len(turns)} turns", usage=Usage(50, 10, calls=1))


async def test_a_500_turn_session_stays_in_its_window_and_keeps_the_prefix() -> None:
	"""Every request stays under the threshold; summaries come in chunks; between them, prefix-stable."""
	model = Echo()
	summariser = Summariser()
	om = OpenMolt(entry_points=False)
	threshold = 3000
	agent = om.create_agent(
		name="Chat", model=model, compaction=CompactionConfig(threshold_tokens=threshold)
	)
	agent.compactor = lambda: (summariser, "cheap")
	session = InMemorySession("long")
	for i in range(500):
		await agent.run(f"turn {i} " + "words " * 20, session=session)
	assert len(model.requests) == 500
	for request in model.requests:
		assert estimate_tokens(request.messages, request.system) < threshold
	# summaries are chunks, not one per turn: most turns keep the cached prefix
	assert 5 <= len(summariser.requests) <= 60
	texts = [r.messages[0].content for r in model.requests]
	stable = 0
	for before, after in itertools.pairwise(texts):
		if '"earlier"' in before and after.startswith(before[: before.index('],"input"')]):
			stable += 1
	assert stable >= 500 - 1 - 2 * len(summariser.requests)
	# the summary carries the older turns: the last request starts from one
	earlier = first_turn(model.requests[-1])["earlier"]
	assert earlier[0]["role"] == "summary" and earlier[0]["content"].startswith("summary of")
	assert "turn 499" in first_turn(model.requests[-1])["input"]
	assert "turn 498" in earlier[-2]["content"]


async def test_without_compaction_old_turns_are_dropped_in_chunks() -> None:
	"""compaction=None: no model call, the oldest turns are dropped in one chunk, marked."""
	model = Echo()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model, compaction=None)
	session = InMemorySession("long")
	big = "x" * 20_000
	for i in range(12):
		await agent.run(f"{i} {big}", session=session)
	earlier = first_turn(model.requests[-1])["earlier"]
	assert earlier[0] == {"role": "summary", "content": "earlier turns were dropped"}
	assert len(model.requests) == 12


async def test_a_strangers_words_taint_the_later_turns() -> None:
	"""A run started tainted marks its items; the next run of the session starts tainted."""
	model = Echo(note={"stranger says hi": "note from a stranger"})
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	session = InMemorySession("chat:1")
	first = await agent.run(
		"stranger says hi", history=untrusted_input("chat:telegram:Bot:999"), session=session
	)
	assert first.state.tainted
	items = await session.get_items()
	assert [i.get("tainted") for i in items] == [True, True, True]

	clean = await agent.run("owner asks", session=session)
	assert clean.state.tainted
	assert clean.state.taint[0]["tool"] == "session:chat:1"
	assert history_of(await session.get_items()).tainted

	# a fresh session is clean
	other = await agent.run("owner asks", session=InMemorySession("chat:2"))
	assert not other.state.tainted


async def test_a_summary_of_tainted_turns_stays_tainted() -> None:
	model = Echo()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Chat", model=model, compaction=CompactionConfig(threshold_tokens=400)
	)
	agent.compactor = lambda: (Summariser(), "cheap")
	session = InMemorySession("s")
	await agent.run("from a stranger " * 10, history=untrusted_input("webhook"), session=session)
	for i in range(12):
		await agent.run(f"owner {i} " * 10, session=session)
	items = await session.get_items()
	summaries = [i for i in items if i["role"] == "summary"]
	assert summaries and all(s.get("tainted") for s in summaries)
	last = await agent.run("owner again", session=session)
	assert last.state.tainted


async def test_turns_stored_before_a_secret_was_known_are_masked_when_summarised() -> None:
	"""The summariser gets the old turns masked with the secrets known now, not when stored.

	A turn may hold a value that became a secret later (a key the user pasted, then added to
	the instance's secrets): the earlier turns sent to the model are masked again, and so must
	the turns sent to the summariser be.
	"""
	secret = "sk-live-LATERSECRET-1234567890"
	model = Echo()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Chat", model=model, compaction=CompactionConfig(threshold_tokens=400)
	)
	summariser = Summariser()
	agent.compactor = lambda: (summariser, "cheap")
	session = InMemorySession("s")
	await agent.run(f"my key is {secret} " * 3, session=session)
	assert secret in json.dumps(await session.get_items())  # not a secret yet when stored
	om.secrets.add(secret)
	before = len(model.requests)
	for i in range(12):
		await agent.run(f"turn {i} " * 10, session=session)
	assert summariser.requests, "the session was never summarised"
	sent = json.dumps([m.content for r in summariser.requests for m in r.messages])
	assert secret not in sent and "[redacted]" in sent
	later = model.requests[before:]
	assert all(secret not in json.dumps([m.content for m in r.messages]) for r in later)


async def test_sessions_store_only_redacted_content(tmp_path: Path) -> None:
	"""A secret in the input, the reply and a note is masked before it reaches the store."""
	secret = "sk-live-SESSIONSECRET-1234567890"
	model = ScriptedModel(
		[[update_memory(f"key {secret}"), finish(f"got {secret}", human_message=f"got {secret}")]]
	)
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)
	agent = om.create_agent(name="Chat", model=model)
	path = tmp_path / "s.db"
	await agent.run(f"my key is {secret}", session=SQLiteSession("u", path))
	items = await SQLiteSession("u", path).get_items()
	assert len(items) == 3
	assert secret not in json.dumps(items)
	assert "[redacted]" in json.dumps(items)
	assert secret.encode() not in path.read_bytes()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy"])
async def test_the_store_protocol(kind: str, tmp_path: Path) -> None:
	"""get (with a limit), add, pop and clear, per session id, in order."""
	a = sessions(kind, tmp_path, "a")
	b = sessions(kind, tmp_path, "b")
	assert isinstance(a, Session)
	await a.add_items([{"role": "user", "content": str(i)} for i in range(5)])
	await b.add_items([{"role": "user", "content": "b"}])
	assert [i["content"] for i in await a.get_items()] == ["0", "1", "2", "3", "4"]
	assert [i["content"] for i in await a.get_items(limit=2)] == ["3", "4"]
	assert await a.get_items(limit=0) == []
	assert (await a.pop_item()) == {"role": "user", "content": "4"}
	await a.clear()
	assert await a.get_items() == [] and await a.pop_item() is None
	assert [i["content"] for i in await b.get_items()] == ["b"]


async def test_bad_sessions_and_items_are_refused_with_the_fix() -> None:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=ScriptedModel([]))
	with pytest.raises(ConfigurationError, match="expected a Session"):
		await agent.run("hi", session="alice")  # type: ignore[arg-type]
	state = RunState()
	state.messages.append(agent.new_state("x").messages[0])
	with pytest.raises(ConfigurationError, match="history must be a fresh state"):
		await agent.run(None, history=state, session=InMemorySession("a"))
	with pytest.raises(ConfigurationError, match="session_id"):
		InMemorySession("  ")
	with pytest.raises(ConfigurationError, match="'role'"):
		await InMemorySession("a").add_items([{"content": "no role"}])
	with pytest.raises(ConfigurationError, match="not JSON-serializable"):
		await InMemorySession("a").add_items([{"role": "user", "content": object()}])
	with pytest.raises(ConfigurationError, match="wrap one item in a list"):
		await InMemorySession("a").add_items({"role": "user", "content": "x"})  # type: ignore[arg-type]
	with pytest.raises(ConfigurationError, match="got int"):
		InMemorySession(42)  # type: ignore[arg-type]


async def test_store_errors_never_echo_an_items_content() -> None:
	secret = "sk-live-ITEMSECRET-0987654321"
	for bad in ({"role": "boss", "content": secret}, {"role": "user", "content": {secret, 1}}):
		with pytest.raises(ConfigurationError) as caught:
			await InMemorySession("a").add_items([bad])
		assert secret not in str(caught.value)


async def test_a_parked_question_resumes_in_its_session() -> None:
	"""A question parks the run; the answer and the final reply are appended on resume."""
	from openmolt_core.testing import ask_human

	model = ScriptedModel(
		[[ask_human("which size?")], [finish("ok", human_message="size M noted")]]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)

	agent.on_human_input_request = _later
	session = InMemorySession("shop")
	parked = await agent.run("buy a shirt", session=session)
	assert parked.status == "human_input_required"
	done = await agent.resume(parked.state, answer="M", session=session)
	assert done.human_message == "size M noted"
	contents = [i["content"] for i in await session.get_items()]
	assert contents == ["buy a shirt", "which size?", "M", "size M noted"]


async def test_a_parked_turn_resumed_in_another_session_is_refused_and_kept() -> None:
	"""A run names its session in its state; resuming it in another one is refused, nothing lost.

	Its turn would otherwise be appended to a conversation that never asked it. The state is
	the same after the refusal (saved and loaded: the id is kept with the run), and resuming it
	in its own session goes on as before.
	"""
	from openmolt_core.testing import ask_human

	model = ScriptedModel(
		[[ask_human("which size?")], [finish("ok", human_message="size M noted")]]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	agent.on_human_input_request = _later
	shop, other = InMemorySession("shop"), InMemorySession("support")
	parked = await agent.run("buy a shirt", session=shop)
	saved = json.loads(json.dumps(parked.state.to_dict()))
	assert saved["ext"]["session"] == "shop"
	loaded = RunState.from_dict(saved)
	with pytest.raises(ConfigurationError, match=r"turn of session 'shop', not 'support'"):
		await agent.resume(loaded, answer="M", session=other)
	assert await other.get_items() == []
	assert loaded.to_dict() == saved
	done = await agent.resume(loaded, answer="M", session=InMemorySession("shop"))
	assert done.human_message == "size M noted"
	assert [i["content"] for i in await shop.get_items()] == ["buy a shirt", "which size?"]


async def test_a_run_saved_before_runs_named_their_session_still_resumes() -> None:
	"""A state saved with the old mark (``True``, no id) resumes in the session it is given."""
	from openmolt_core.testing import ask_human

	model = ScriptedModel(
		[[ask_human("which size?")], [finish("ok", human_message="size M noted")]]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	agent.on_human_input_request = _later
	session = InMemorySession("shop")
	parked = await agent.run("buy a shirt", session=session)
	old = parked.state.to_dict()
	old["ext"]["session"] = True
	done = await agent.resume(RunState.from_dict(old), answer="M", session=session)
	assert done.human_message == "size M noted"
	contents = [i["content"] for i in await session.get_items()]
	assert contents == ["buy a shirt", "which size?", "M", "size M noted"]


async def test_a_conversation_given_to_the_instance_after_its_first_agent_is_used() -> None:
	"""``om.conversation`` is looked up at each call, not kept from when the first agent was made."""
	from openmolt_core.sessions import SessionRun

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=ScriptedModel([finish("ok", human_message="hi")]))
	made: list[str] = []

	def conversation(a: Any, session: Any) -> SessionRun:
		made.append(session.session_id)
		return SessionRun(a, session)

	om.conversation = conversation  # type: ignore[method-assign]
	session = InMemorySession("late")
	result = await agent.run("hello", session=session)
	assert result.status == "success"
	assert made == ["late"]
	assert [i["content"] for i in await session.get_items()] == ["hello", "hi"]


POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")


@pytest.mark.skipif(not POSTGRES_URL, reason="PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
async def test_postgres_sessions_keep_users_apart() -> None:
	import uuid

	import sqlalchemy as sa

	tag = uuid.uuid4().hex
	engine = sa.create_engine(POSTGRES_URL)  # shared, and disposed: no connection left open
	try:
		a = SQLAlchemySession(f"a-{tag}", engine=engine)
		b = SQLAlchemySession(f"b-{tag}", engine=engine)
		await a.add_items([{"role": "user", "content": "one"}, {"role": "agent", "content": "two"}])
		await b.add_items([{"role": "user", "content": "other"}])
		assert [i["content"] for i in await a.get_items()] == ["one", "two"]
		assert (await a.pop_item()) == {"role": "agent", "content": "two"}
		await a.clear()
		await b.clear()
		assert await a.get_items() == [] and await b.get_items() == []
	finally:
		engine.dispose()


@pytest.mark.skipif(not POSTGRES_URL, reason="PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
async def test_postgres_turns_appended_at_once_stay_whole_and_pops_take_each_item_once() -> None:
	"""Eight writers of one session: every turn's items are next to each other; pops never share.

	Without the session's lock, PostgreSQL gave the rows of concurrent inserts interleaved ids:
	about one turn in ten read user, user, agent, agent.
	"""
	import uuid

	import sqlalchemy as sa

	tag = uuid.uuid4().hex
	engine = sa.create_engine(POSTGRES_URL, pool_size=10)
	try:
		writers = [SQLAlchemySession(f"busy-{tag}", engine=engine) for _ in range(8)]
		await writers[0].get_items()  # the table

		async def turns(k: int, session: SQLAlchemySession) -> None:
			for j in range(20):
				await session.add_items(
					[
						{"role": "user", "content": f"{k}.{j}"},
						{"role": "agent", "content": f"{k}.{j}"},
					]
				)

		async with anyio.create_task_group() as tg:
			for k, session in enumerate(writers):
				tg.start_soon(turns, k, session)
		items = await writers[0].get_items()
		assert len(items) == 320
		pairs = [(items[i], items[i + 1]) for i in range(0, len(items), 2)]
		assert all(u["role"] == "user" and u["content"] == a["content"] for u, a in pairs)
		popped: list[Any] = []

		async def pop(session: SQLAlchemySession) -> None:
			for _ in range(10):
				popped.append(await session.pop_item())

		async with anyio.create_task_group() as tg:
			for session in writers:
				tg.start_soon(pop, session)
		assert len({json.dumps(p, sort_keys=True) for p in popped}) == 80
		assert len(await writers[0].get_items()) == 240
		await writers[0].clear()
	finally:
		engine.dispose()


@pytest.mark.skipif(not POSTGRES_URL, reason="PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
def test_processes_that_create_the_session_table_at_once_all_go_on() -> None:
	"""PostgreSQL refuses a concurrent CREATE TABLE even with the existence check: tolerated."""
	import threading
	import uuid

	import sqlalchemy as sa

	assert POSTGRES_URL is not None
	name = f"om_race_{uuid.uuid4().hex[:12]}"
	admin = sa.create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
	with admin.connect() as conn:
		conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
	url = sa.engine.make_url(POSTGRES_URL).set(database=name)
	engines = [sa.create_engine(url) for _ in range(6)]
	barrier = threading.Barrier(len(engines))
	failures: list[BaseException] = []

	def start(engine: Any) -> None:
		session = SQLAlchemySession("s", engine=engine)
		barrier.wait()
		try:
			session._ensure()
		except BaseException as exc:
			failures.append(exc)

	try:
		threads = [threading.Thread(target=start, args=(e,)) for e in engines]
		for t in threads:
			t.start()
		for t in threads:
			t.join()
		assert failures == []
	finally:
		for engine in engines:
			engine.dispose()
		with admin.connect() as conn:
			conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
		admin.dispose()


class Failing:
	name = "failing"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		raise RuntimeError("the summariser is down")


async def test_a_failed_summary_keeps_every_turn_and_the_run_goes_on() -> None:
	"""The run reads the latest turns; nothing is written for the summary; the next run retries."""
	model = Echo()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Chat", model=model, compaction=CompactionConfig(threshold_tokens=400)
	)
	agent.compactor = lambda: (Failing(), "cheap")
	session = InMemorySession("s")
	for i in range(8):
		result = await agent.run(f"turn {i} " * 10, session=session)
		assert result.status == "success"
	items = await session.get_items()
	assert [i["role"] for i in items].count("summary") == 0
	assert len(items) == 16
	last = first_turn(model.requests[-1])["earlier"]
	assert "turn 0" not in json.dumps(last) and "turn 6" in json.dumps(last)
	for request in model.requests:
		assert estimate_tokens(request.messages, request.system) < 400 * 2


class Broken:
	"""A store whose writes fail (a full disk) and whose reads hold junk."""

	session_id = "broken"

	async def get_items(self, limit: int | None = None) -> list[Any]:
		return [
			"junk",
			{"role": "nobody", "content": "x"},
			{"role": "summary", "content": "old", "through": "abc"},
			{"role": "user", "content": "kept"},
			{"role": "memory", "content": 42},
		]

	async def add_items(self, items: list[dict[str, Any]]) -> None:
		raise OSError("disk full")

	async def pop_item(self) -> dict[str, Any] | None:
		return None

	async def clear(self) -> None:
		return None


async def test_a_broken_store_never_loses_the_runs_result(caplog: pytest.LogCaptureFixture) -> None:
	"""Junk items are skipped; a failed write is logged and the result is returned."""
	model = Echo()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	result = await agent.run("hello", session=Broken())
	assert result.status == "success" and result.human_message == "you said hello"
	turn = first_turn(model.requests[0])
	assert turn["earlier"] == [
		{"role": "summary", "content": "old"},
		{"role": "user", "content": "kept"},
	]
	assert turn["memory"]["shortTerm"] == "42"
	assert "could not be added to session broken" in caplog.text and "disk full" in caplog.text


async def test_the_agents_short_term_data_starts_a_new_session() -> None:
	"""A session without notes starts from the agent's short_term; its own notes win later."""
	model = Echo(note={"two": "session note"})
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model, memory={"short_term": "house rules"})
	session = InMemorySession("s")
	await agent.run("one", session=session)
	await agent.run("two", session=session)
	await agent.run("three", session=session)
	notes = [first_turn(r)["memory"]["shortTerm"] for r in model.requests]
	assert notes == ["house rules", "house rules", "house rules\nsession note"]


def test_sqlite_sessions_need_a_file() -> None:
	with pytest.raises(ConfigurationError, match="InMemorySession"):
		SQLiteSession("a", ":memory:")


async def test_runs_of_one_session_asked_at_once_go_one_after_another() -> None:
	"""Two calls of one session at once (an A2A context's two tasks, an app's gather): the second
	run starts once the first has ended, reads its turn, and the turns are kept in order."""
	started = anyio.Event()
	release = anyio.Event()

	class Held(Echo):
		async def generate(self, request: ModelRequest) -> ModelResponse:
			if first_turn(request)["input"] == "first":
				started.set()
				await release.wait()
			return await super().generate(request)

	model = Held()
	agent = OpenMolt(entry_points=False).create_agent(name="Chat", model=model)
	session = InMemorySession("alice")
	other = InMemorySession("bob")
	async with anyio.create_task_group() as tg:
		tg.start_soon(lambda: agent.run("first", session=session))
		await started.wait()
		tg.start_soon(lambda: agent.run("second", session=session))
		await agent.run("bob's own", session=other)  # another session does not wait
		await anyio.sleep(0.05)
		asked = [first_turn(r)["input"] for r in model.requests]
		assert asked == ["bob's own"]  # "first" holds its model call, "second" waits its turn
		release.set()
	second = first_turn(model.requests[-1])
	assert second["input"] == "second"
	assert "you said first" in json.dumps(second["earlier"])
	said = [json.dumps(i) for i in await session.get_items()]
	assert [i for i, t in enumerate(said) if "first" in t] < [
		i for i, t in enumerate(said) if "second" in t
	]


async def test_two_users_at_the_same_time_never_mix() -> None:
	"""Two conversations run side by side on one agent (their steps interleave): no word crosses."""
	import anyio

	class Slow(Echo):
		async def generate(self, request: ModelRequest) -> ModelResponse:
			await anyio.sleep(0.001)
			return await super().generate(request)

	notes = {f"{who} {i}": f"{who} note {i}" for who in ("alice", "bob") for i in range(5)}
	model = Slow(note=notes)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	sessions_by = {"alice": InMemorySession("alice"), "bob": InMemorySession("bob")}

	async def talk(who: str) -> None:
		for i in range(5):
			await agent.run(f"{who} {i}", session=sessions_by[who])

	async with anyio.create_task_group() as tg:
		tg.start_soon(talk, "alice")
		tg.start_soon(talk, "bob")
	assert len(model.requests) == 10
	for request in model.requests:
		turn = first_turn(request)
		who = turn["input"].split()[0]
		other = "bob" if who == "alice" else "alice"
		assert other not in json.dumps(turn)
	for who, session in sessions_by.items():
		items = await session.get_items()
		assert all(who in json.dumps(i) for i in items)


async def test_an_approval_resumed_in_its_session_adds_the_reply_only() -> None:
	"""A decision is no turn of the conversation: the parked reply, then the final one."""
	from openmolt_core.testing import call_tool

	def refund(customer: str, amount: int) -> dict[str, Any]:
		"""Refund a customer.

		Args:
			customer: The customer id.
			amount: Cents.
		"""
		return {"refunded": amount}

	model = ScriptedModel(
		[
			call_tool("local.refund", customer="cus_1", amount=500),
			finish("done", human_message="Refunded."),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Pay", model=model, tools=[refund], requires_approval=["local.refund"]
	)
	session = InMemorySession("pay")
	parked = await agent.run("refund cus_1", session=session)
	assert parked.status == "approval_required"
	[request] = agent.approval_requests(parked.state)
	done = await agent.resume(parked.state, decision=request.approve(), session=session)
	assert done.human_message == "Refunded."
	items = await session.get_items()
	assert [(i["role"], i["status"] if i["role"] == "agent" else None) for i in items] == [
		("user", None),
		("agent", "approval_required"),
		("agent", "success"),
	]


def test_the_session_contract_is_one_type() -> None:
	"""The contract's Session and SessionHistory are the ones sessions and openmolt export."""
	import openmolt
	from openmolt_core import conversation
	from openmolt_core import sessions as module

	assert module.Session is conversation.Session is openmolt.Session
	assert module.SessionHistory is conversation.SessionHistory


async def test_an_instance_chooses_how_its_runs_meet_their_sessions() -> None:
	"""Runs and resumes go through om.conversation: opened once per new run, closed at its end."""
	from openmolt_core.conversation import RunConversation, SessionHistory
	from openmolt_core.result import RunResult
	from openmolt_core.testing import ask_human

	calls: list[tuple[str, Any]] = []

	class Recorded:
		async def open(self, state: RunState) -> SessionHistory:
			calls.append(("open", len(state.messages)))
			earlier = [{"role": "user", "content": "earlier words"}]
			return SessionHistory(earlier, "kept notes", False, 1)

		async def close(
			self, result: RunResult, *, asked: Any, asked_tainted: bool, memory_before: str
		) -> None:
			calls.append(("close", (result.status, asked, asked_tainted, memory_before)))

	class Instance(OpenMolt):
		def conversation(self, agent: Any, session: Session) -> RunConversation:
			return Recorded()

	model = ScriptedModel([[ask_human("which size?")], [finish("ok", human_message="noted")]])
	om = Instance(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)

	agent.on_human_input_request = _later
	session = InMemorySession("shop")
	parked = await agent.run("buy a shirt", session=session)
	turn = json.loads(model.requests[0].messages[0].content)
	assert turn["earlier"] == [{"role": "user", "content": "earlier words"}]
	assert turn["memory"]["shortTerm"] == "kept notes"
	await agent.resume(parked.state, answer="M", session=session)
	assert calls == [
		("open", 0),
		("close", ("human_input_required", "buy a shirt", False, "kept notes")),
		("close", ("success", "M", False, "kept notes")),
	]
	assert await session.get_items() == []  # the instance's conversation kept them elsewhere


async def test_a_resume_whose_conversation_cannot_be_made_leaves_no_drive_behind() -> None:
	"""The error comes out alone: the run's drive, never started, is not left un-awaited."""
	import gc
	import warnings

	from openmolt_core.testing import ask_human

	class Refused(Exception):
		pass

	class Instance(OpenMolt):
		refuse = False

		def conversation(self, agent: Any, session: Session) -> Any:
			if self.refuse:
				raise Refused("no conversation for this session")
			return super().conversation(agent, session)

	model = ScriptedModel([[ask_human("which size?")]])
	om = Instance(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	agent.on_human_input_request = _later
	session = InMemorySession("shop")
	parked = await agent.run("buy a shirt", session=session)
	om.refuse = True
	with warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		with pytest.raises(Refused):
			await agent.resume(parked.state, answer="M", session=session)
		gc.collect()
	assert [str(w.message) for w in caught] == []


def test_sessions_of_one_url_share_one_engine(tmp_path: Path) -> None:
	"""A session per conversation opens no pool of its own: the sessions of a URL share one."""
	pytest.importorskip("sqlalchemy")
	url = f"sqlite:///{tmp_path / 'shared.db'}"
	other = f"sqlite:///{tmp_path / 'other.db'}"
	a, b = SQLAlchemySession("a", url), SQLAlchemySession("b", url)
	c = SQLAlchemySession("c", other)
	assert a.engine is b.engine
	assert c.engine is not a.engine and str(c.engine.url).endswith("other.db")


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy"])
@pytest.mark.parametrize(
	("given", "said"),
	[
		("", "non-empty"),
		("thread\x00one", "control characters"),
		("line\nforged", "control characters"),
		("esc\x1b[31m", "control characters"),
		("x" * 1025, "at most 1024"),
	],
)
def test_a_session_id_a_store_cannot_keep_is_refused(
	kind: str, given: str, said: str, tmp_path: Path
) -> None:
	"""Every store refuses the same ids, naming why: a NUL PostgreSQL refuses, control
	characters a log or page would show, an id too long to index."""
	with pytest.raises(ConfigurationError, match=f"session_id: .*{said}"):
		sessions(kind, tmp_path, given)


def test_a_run_is_a_sessions_whatever_its_sessions_id() -> None:
	"""One predicate says whether a run is a session's: any id marks it (empty, "0"), and the
	``True`` of runs saved before runs named their session; no mark, or another value, does not."""
	from openmolt_core.capabilities import in_session

	for mark in ["", "0", "alice", True]:
		assert in_session(RunState(ext={"session": mark}))
	for ext in [{}, {"session": None}, {"session": False}]:
		assert not in_session(RunState(ext=ext))


def test_ids_of_people_chats_and_threads_are_taken() -> None:
	"""What the surfaces send is taken as it is (unicode, separators, the longest allowed)."""
	for given in ["agui:Helper:t-1", "slack:Bot:C1/17.0001", "élodie:🙂", "x" * 1024]:
		assert InMemorySession(given).session_id == given


async def test_a_later_turn_reads_which_files_an_earlier_one_was_sent() -> None:
	"""A turn's files are named in its item (media type and name, not their bytes) and the next
	turn's model reads them among the earlier turns; a resumed turn names none again."""
	from openmolt_core import Attachment
	from openmolt_core.testing import ask_human

	model = ScriptedModel(
		[
			[ask_human("which total?")],
			[finish("ok", human_message="12 EUR")],
			[finish("ok", human_message="yes")],
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=model)
	agent.on_human_input_request = _later
	session = InMemorySession("receipts")
	scan = Attachment(media_type="image/png", data="iVBORw0KGgo=", name="receipt.png")
	parked = await agent.run("read this", session=session, attachments=[scan])
	await agent.resume(parked.state, answer="the total", session=session)
	await agent.run("and the date?", session=session)
	items = await session.get_items()
	assert [i.get("attachments") for i in items if i["role"] == "user"] == [
		[{"mediaType": "image/png", "name": "receipt.png"}],
		None,
		None,
	]
	earlier = first_turn(model.requests[-1])["earlier"]
	assert earlier[0] == {
		"role": "user",
		"content": "read this",
		"attachments": [{"mediaType": "image/png", "name": "receipt.png"}],
	}
	assert "iVBORw0KGgo=" not in json.dumps(items)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_parked_turn_keeps_its_sessions_history_and_notes_when_resumed_elsewhere(
	kind: str, tmp_path: Path
) -> None:
	"""A session's turn parks on a question; another instance resumes its saved state into the
	same session: the run reads the earlier turns and notes as it started, its notes stay the
	session's (never the agent's callback), and the next turn reads the whole conversation."""
	from openmolt_core.testing import ask_human

	def chat(model: ScriptedModel, updates: list[str]) -> Any:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(
			name="Chat",
			model=model,
			memory={"short_term": {"data": "", "on_update": updates.append}},
		)
		agent.on_human_input_request = _later
		return agent

	updates: list[str] = []
	first = ScriptedModel(
		[
			[update_memory("likes tea"), finish("ok", human_message="Noted.")],
			[ask_human("which size?")],
		]
	)
	agent = chat(first, updates)
	session = sessions(kind, tmp_path, "shop")
	await agent.run("I like tea", session=session)
	parked = await agent.run("buy a mug", session=session)
	assert parked.status == "human_input_required"
	turn = first_turn(first.requests[1])
	assert [e["content"] for e in turn["earlier"]] == ["I like tea", "Noted."]
	assert turn["memory"]["shortTerm"] == "likes tea"
	saved = json.dumps(parked.state.to_dict())

	second = ScriptedModel(
		[
			[update_memory("size M"), finish("ok", human_message="A tea mug, size M.")],
			[finish("ok", human_message="Yes.")],
		]
	)
	elsewhere = chat(second, updates)  # another process: a new instance and session object
	again = sessions(kind, tmp_path, "shop") if kind == "sqlite" else session
	state = RunState.from_dict(json.loads(saved))
	done = await elsewhere.resume(state, answer="M", session=again)
	assert done.human_message == "A tea mug, size M."
	assert done.state.memory["shortTerm"] == "likes tea\nsize M"
	await elsewhere.run("is that all?", session=again)
	turn = first_turn(second.requests[-1])
	assert [e["content"] for e in turn["earlier"]] == [
		"I like tea",
		"Noted.",
		"buy a mug",
		"which size?",
		"M",
		"A tea mug, size M.",
	]
	assert turn["memory"]["shortTerm"] == "likes tea\nsize M"
	assert updates == []  # the notes are the session's, in every process


class _SlowStore(InMemorySession):
	"""A store whose writes take a moment (a database over the network)."""

	async def add_items(self, items: Any) -> None:
		await anyio.sleep(0.05)
		await super().add_items(items)


async def test_a_run_that_ended_keeps_its_turn_when_its_caller_leaves() -> None:
	"""Leaving a stream once its finish came (the run ended) still appends the run's turn."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A", model=ScriptedModel([{"commands": [finish("ok", human_message="hello")]}])
	)
	session = _SlowStore("u1")
	async with agent.stream("hi", session=session) as run:
		async for event in run:
			if event.name == "finish":
				break  # the caller has what it wanted and leaves the block
	assert [(i["role"], i["content"]) for i in await session.get_items()] == [
		("user", "hi"),
		("agent", "hello"),
	]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy"])
async def test_an_input_no_store_can_hold_is_appended_as_json(kind: str, tmp_path: Path) -> None:
	"""A lone surrogate, NaN or an integer too long to write in the input: the turn is kept."""
	om = OpenMolt(entry_points=False)
	said = [{"commands": [finish("ok", human_message="hello")]}] * 2
	agent = om.create_agent(name="A", model=ScriptedModel(said))
	session = sessions(kind, tmp_path, "odd")
	asked = {"text": "a\ud800b", "x": float("nan"), "n": 10**5000}
	result = await agent.run(asked, session=session)
	assert result.human_message == "hello"
	user, reply = await session.get_items()
	assert user["content"]["text"] == "a\ufffdb" and user["content"]["x"] == "NaN"
	assert "digits" in user["content"]["n"] and reply["content"] == "hello"


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy"])
async def test_add_items_refuses_what_a_store_cannot_hold(kind: str, tmp_path: Path) -> None:
	"""An item with a lone surrogate or NaN is refused by every store alike, naming the item."""
	session = sessions(kind, tmp_path, "odd")
	for bad in ("a\ud800", float("nan")):
		with pytest.raises(ConfigurationError, match="session item 1"):
			await session.add_items(
				[{"role": "user", "content": "fine"}, {"role": "user", "content": bad}]
			)
	assert await session.get_items() == []


class _Slow:
	"""A model that answers each input after a moment, noting the earlier turns it read."""

	name = "slow"

	def __init__(self) -> None:
		self.read: list[list[Any]] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		turn = first_turn(request)
		self.read.append([e["content"] for e in turn.get("earlier", [])])
		await anyio.sleep(0.05)
		said = finish("ok", human_message=f"re {turn['input']}")
		return ModelResponse(text=json.dumps({"commands": [said]}))


async def test_two_instances_take_turns_in_one_session() -> None:
	"""Agents of two instances in one process running one session go one after another."""
	session = InMemorySession("shared")
	first, second = _Slow(), _Slow()
	a = OpenMolt(entry_points=False).create_agent(name="A", model=first)
	b = OpenMolt(entry_points=False).create_agent(name="B", model=second)
	async with anyio.create_task_group() as group:
		group.start_soon(lambda: a.run("one", session=session))
		await anyio.sleep(0.01)
		group.start_soon(lambda: b.run("two", session=session))
	assert first.read == [[]]
	assert second.read == [["one", "re one"]]  # B waited for A's turn, then read it


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy"])
async def test_replace_pending_takes_back_the_runs_items_and_appends_at_once(
	kind: str, tmp_path: Path
) -> None:
	"""The given runs' pending items go wherever they are (one others follow keeps its place,
	settled); the others, and other sessions', stay."""
	session = sessions(kind, tmp_path, "s1")
	other = sessions(kind, tmp_path, "s2")
	await session.add_items(
		[
			{"role": "pending", "run_id": "a", "new": True, "content": "hi"},
			{"role": "pending", "run_id": "b", "new": True},
			{"role": "user", "content": "pending", "run_id": "c"},
		]
	)
	await other.add_items([{"role": "pending", "run_id": "a", "new": True}])
	await session.replace_pending(  # type: ignore[attr-defined]
		["a"], [{"role": "agent", "content": "done", "run_id": "a"}]
	)
	assert [(i["role"], i.get("run_id")) for i in await session.get_items()] == [
		("settled", None),
		("pending", "b"),
		("user", "c"),
		("agent", "a"),
	]
	assert [i["run_id"] for i in await other.get_items()] == ["a"]
