"""A caller who fills a bounded store forgets its own oldest entries, never another caller's.

The stores of a served agent are bounded (tasks, parked runs, threads, sessions): past the
bound, the caller holding the most gives up its oldest, so one caller cannot push another's
waiting task, question or conversation out (a denial of service by volume).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest
from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskState, TaskStatus

from openmolt_serve._a2a_store import A2ATaskStore
from openmolt_serve._recent import recent
from openmolt_serve._rows import SqliteTasks
from openmolt_serve.a2a import Caller

pytestmark = pytest.mark.anyio

DONE = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)


def call(name: str) -> ServerCallContext:
	return ServerCallContext(user=Caller(name))


@pytest.mark.parametrize("kept", ["memory", "file"])
async def test_a_callers_flood_of_tasks_forgets_its_own_not_anothers(
	kept: str, tmp_path: Path
) -> None:
	"""Bob keeps his one task while Mallory saves 250 (past a bound of 3): hers go instead."""
	path = tmp_path / "runs.db" if kept == "file" else None
	store = A2ATaskStore(max_tasks=3, path=path, scope="a2a:Helper")
	bob, mallory = call("bob"), call("mallory")
	await store.save(Task(id="bobs", context_id="c", status=DONE), bob)
	for n in range(250):
		await store.save(Task(id=f"m{n}", context_id="c", status=DONE), mallory)
	assert await store.get("bobs", bob) is not None
	assert await store.get("m249", mallory) is not None
	assert await store.get("m0", mallory) is None  # the bound still holds, on her
	store.close()


def test_the_rows_prune_the_caller_holding_the_most(tmp_path: Path) -> None:
	"""Pruning the rows to 3 keeps each caller's newest first: the flood's oldest go."""
	rows = SqliteTasks(tmp_path / "rows.db", "a2a:Helper")
	rows.put("bob", "b1", b"bob's")
	rows.put("eve", "e1", b"eve's")
	for n in range(10):
		rows.put("mallory", f"m{n}", f"m{n}".encode())
	rows.prune(3)
	assert rows.get("bob", "b1") == b"bob's"
	assert rows.get("eve", "e1") == b"eve's"
	assert rows.newest("mallory", 10) == [b"m9"]
	rows.close()


def test_recent_forgets_the_oldest_of_the_owner_holding_the_most() -> None:
	"""A bounded map of entries by (caller, id): another caller's idle entry stays."""
	kept: OrderedDict[tuple[str, str], str] = OrderedDict()
	recent(kept, ("bob", "t"), lambda: "bob's", most=3, owner=lambda key: key[0])
	for n in range(10):
		recent(kept, ("mallory", str(n)), lambda: "hers", most=3, owner=lambda key: key[0])
	assert ("bob", "t") in kept
	assert list(kept) == [("bob", "t"), ("mallory", "8"), ("mallory", "9")]


def test_in_memory_sessions_forget_the_flooding_callers_conversations() -> None:
	"""A2A and AG-UI callers' conversations: one caller's many contexts push out its own."""
	import openmolt_serve._launch as launch

	sessions = launch.in_memory_sessions()
	bobs = launch.session_id("a2a", "Helper", "ctx", caller="bob")
	kept = sessions(bobs)
	old = launch.MAX_SESSIONS
	launch.MAX_SESSIONS = 3
	try:
		for n in range(10):
			sessions(launch.session_id("a2a", "Helper", f"c{n}", caller="mallory"))
		assert sessions(bobs) is kept
		first = launch.session_id("a2a", "Helper", "c0", caller="mallory")
		assert sessions(first) is not sessions(
			launch.session_id("a2a", "Helper", "c9", caller="mallory")
		)
	finally:
		launch.MAX_SESSIONS = old


async def test_a_callers_parked_runs_push_out_its_own_not_anothers() -> None:
	"""The A2A executor's parked runs (no run store): bob's question waits through mallory's flood."""
	from openmolt import OpenMolt
	from openmolt_core.result import RunState
	from openmolt_core.testing import ScriptedModel
	from openmolt_serve._launch import in_memory_sessions
	from openmolt_serve.a2a import OpenMoltExecutor

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	executor = OpenMoltExecutor(agent, in_memory_sessions(), max_parked=3)
	executor._park("bobs", RunState(run_id="r-bob", user="a2a:Helper:bob"))
	for n in range(10):
		executor._park(f"m{n}", RunState(run_id=f"r-m{n}", user="a2a:Helper:mallory"))
	assert list(executor.parked) == ["bobs", "m8", "m9"]
	await om.aclose()


def test_agui_threads_of_another_caller_stay_through_a_flood() -> None:
	"""An AG-UI endpoint's threads (a parked run each, in memory): a flood forgets its own."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import AguiTrigger
	from openmolt_serve import agui

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	config = AguiTrigger.model_validate({"token": "t" * 32})
	endpoint = agui.AguiEndpoint(agent, config, launcher=None)  # type: ignore[arg-type]
	old = agui.MAX_THREADS
	agui.MAX_THREADS = 3
	try:
		bobs = endpoint._thread("t", "bob")
		for n in range(10):
			endpoint._thread(f"t{n}", "mallory")
		assert endpoint._thread("t", "bob") is bobs
	finally:
		agui.MAX_THREADS = old
		endpoint.close()


async def test_runs_awaiting_the_operator_and_their_decisions_stay_through_a_flood() -> None:
	"""Bob's task waits for the operator's approval; Mallory parks ten: bob's run is still awaited,
	and once decided, its result is kept for bob's task while hers are decided after it."""
	from types import SimpleNamespace

	from a2a.server.tasks import TaskUpdater

	from openmolt import OpenMolt
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.testing import ScriptedModel
	from openmolt_serve._launch import in_memory_sessions
	from openmolt_serve.a2a import OpenMoltExecutor, _Collected, _Decided

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	executor = OpenMoltExecutor(agent, in_memory_sessions(), max_parked=3)

	def result(run: str, user: str, status: str) -> RunResult:
		state = RunState(run_id=run, user=f"a2a:Helper:{user}")
		return RunResult(None, status, "", [], 1, Usage(), state)  # type: ignore[arg-type]

	async def park(task: str, run: str, user: str) -> None:
		updater = TaskUpdater(_Collected(), task, "c")
		await executor._report(updater, task, result(run, user, "approval_required"))

	await park("bobs", "r-bob", "bob")
	for n in range(10):
		await park(f"m{n}", f"r-m{n}", "mallory")
	assert "r-bob" in executor.awaiting and "bobs" in executor.parked
	decided = _Decided(executor)
	await decided.ended(
		SimpleNamespace(run_id="r-bob"), SimpleNamespace(result=result("r-bob", "bob", "success"))
	)  # type: ignore[arg-type]
	for n in range(7, 10):
		run = f"r-m{n}"
		await decided.ended(
			SimpleNamespace(run_id=run), SimpleNamespace(result=result(run, "mallory", "success"))
		)  # type: ignore[arg-type]
	assert "r-bob" in executor.decided
	await om.aclose()


def test_a_remote_agents_ids_of_one_user_stay_refused_to_another_through_a_flood(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""remote_agent: Mallory's runs get many ids from the remote; Alice's context stays hers.

	An id the tool forgot is refused to everyone (as one from before a restart is): had
	Mallory's flood pushed Alice's ids out, Alice's conversation would have ended.
	"""
	from openmolt_core.errors import ToolError
	from openmolt_serve import _a2a_remote

	monkeypatch.setattr(_a2a_remote, "MAX_KNOWN", 4)
	owners: OrderedDict[str, str | None] = OrderedDict()
	_a2a_remote._keep_owner(owners, {"taskId": "t-alice", "contextId": "c-alice"}, "alice")
	for n in range(10):
		_a2a_remote._keep_owner(owners, {"taskId": f"t{n}", "contextId": f"c{n}"}, "mallory")
	with pytest.raises(ToolError, match="names no conversation"):
		_a2a_remote._check_owner(owners, {"contextId": "c-alice"}, "mallory")
	with pytest.raises(ToolError, match="names no conversation"):
		_a2a_remote._check_owner(owners, {"taskId": "t-alice"}, "mallory")
	_a2a_remote._check_owner(owners, {"taskId": "t-alice", "contextId": "c-alice"}, "alice")
	assert len(owners) == 4


async def test_a_senders_flood_of_chats_forgets_its_own_not_a_waiting_one() -> None:
	"""In memory (no store), bob's chat waiting with his run's question stays through mallory's
	flood of new threads: past the bound the oldest chat of the sender holding the most goes."""
	from openmolt import OpenMolt
	from openmolt_core.result import RunState
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import SlackChannel
	from openmolt_serve import chats
	from openmolt_serve.chats import Conversations, Incoming

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	settings = SlackChannel.model_validate({"type": "slack", "allowEveryone": True})

	async def send(message: Incoming, text: str) -> None:
		return None

	talks = Conversations(agent, settings, send, launcher=None)  # type: ignore[arg-type]
	old = chats.MAX_CHATS
	chats.MAX_CHATS = 3
	try:
		bob = Incoming("slack", "C1", "U_BOB", "hi", "1", thread="100.1", team="T1")
		talks._chat(bob.key, bob).parked["slack:T1:U_BOB"] = RunState(run_id="r-bob")
		for n in range(10):
			flood = Incoming("slack", "C1", "U_MAL", "x", f"m{n}", thread=f"{200 + n}.1", team="T1")
			talks._chat(flood.key, flood)
		assert bob.key in talks.chats and len(talks.chats) == 3
		assert talks.chats[bob.key].parked
	finally:
		chats.MAX_CHATS = old
		await om.aclose()


async def test_a_senders_flood_of_messages_never_makes_anothers_retry_new() -> None:
	"""In memory, the ids of messages taken are bounded: mallory's flood forgets her own ids, so
	Slack's retry of bob's message is still known (a second run would act twice); and a stranger's
	messages, ignored, take no place at all."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import SlackChannel
	from openmolt_serve import chats
	from openmolt_serve.chats import Conversations, Incoming

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	started: list[str] = []

	class Group:
		def start_soon(self, *args: object, name: str = "") -> None:
			started.append(name)

	class Launcher:
		tg = Group()

	async def send(message: Incoming, text: str) -> None:
		return None

	for settings in ({"allowEveryone": True}, {"allowedUsers": ["U_BOB", "U_MAL"]}):
		talks = Conversations(
			agent,
			SlackChannel.model_validate({"type": "slack", **settings}),
			send,
			launcher=Launcher(),  # type: ignore[arg-type]
		)
		old = chats.MAX_SEEN
		chats.MAX_SEEN = 3
		try:
			bob = Incoming("slack", "C1", "U_BOB", "pay 5", "ev-bob", team="T1")
			assert await talks.receive(bob)
			for n in range(10):
				sender = "U_MAL" if settings.get("allowEveryone") else "U_STRANGER"
				await talks.receive(Incoming("slack", "C1", sender, "x", f"ev-m{n}", team="T1"))
			assert not await talks.receive(bob)  # the service's retry: known
		finally:
			chats.MAX_SEEN = old
	await om.aclose()


async def test_many_senders_flooding_chats_never_push_out_a_waiting_one() -> None:
	"""In memory, bob's chat waiting with his run's question stays through a flood from many
	senders (one chat each, past the bound): a chat where nothing waits goes first, whoever
	holds the most. Per-sender fairness alone forgot the oldest chat, bob's, when all held one."""
	from openmolt import OpenMolt
	from openmolt_core.result import RunState
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import SlackChannel
	from openmolt_serve import chats
	from openmolt_serve.chats import Conversations, Incoming

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	settings = SlackChannel.model_validate({"type": "slack", "allowEveryone": True})

	async def send(message: Incoming, text: str) -> None:
		return None

	talks = Conversations(agent, settings, send, launcher=None)  # type: ignore[arg-type]
	old = chats.MAX_CHATS
	chats.MAX_CHATS = 3
	try:
		bob = Incoming("slack", "C1", "U_BOB", "hi", "1", team="T1")
		talks._chat(bob.key, bob).parked["slack:T1:U_BOB"] = RunState(run_id="r-bob")
		eve = Incoming("slack", "D_EVE", "U_EVE", "hi", "2", team="T1")
		talks._chat(eve.key, eve).asked["slack:T1:U_EVE"] = eve  # waits for her account
		for n in range(50):
			flood = Incoming("slack", f"D{n}", f"U_M{n}", "x", f"m{n}", team="T1")
			talks._chat(flood.key, flood)
		assert bob.key in talks.chats and eve.key in talks.chats and len(talks.chats) == 3
		assert talks.chats[bob.key].parked and talks.chats[eve.key].asked
	finally:
		chats.MAX_CHATS = old
		await om.aclose()


def test_recent_forgets_an_entry_where_nothing_waits_first() -> None:
	"""`recent` with ``waits``: many owners of one entry each push out each other's idle
	entries, never a waiting one; past the bound with only waiting ones, the crowded rule holds."""
	kept: OrderedDict[tuple[str, str], str] = OrderedDict()
	recent(kept, ("bob", "t"), lambda: "bob waits", most=3, owner=lambda key: key[0])
	for n in range(20):
		recent(
			kept,
			(f"m{n}", "t"),
			lambda: "theirs",
			most=3,
			owner=lambda key: key[0],
			waits=lambda entry: entry.endswith("waits"),
		)
	assert ("bob", "t") in kept and len(kept) == 3
	for key in kept:
		kept[key] = f"{key[0]} waits"
	recent(
		kept, ("bob", "u"), lambda: "bob waits", most=3, owner=lambda k: k[0], waits=lambda e: True
	)
	assert len(kept) == 3 and ("bob", "t") not in kept and ("bob", "u") in kept


def test_agui_threads_of_one_caller_keep_a_waiting_one_through_a_flood() -> None:
	"""One token for a whole web app (one caller, many people): a flood of new threads pushes
	out threads where nothing waits, never the one whose run waits (in memory)."""
	from openmolt import OpenMolt
	from openmolt_core.result import RunState
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import AguiTrigger
	from openmolt_serve import agui

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	config = AguiTrigger.model_validate({"token": "t" * 32})
	endpoint = agui.AguiEndpoint(agent, config, launcher=None)  # type: ignore[arg-type]
	old = agui.MAX_THREADS
	agui.MAX_THREADS = 3
	try:
		waiting = endpoint._thread("t-bob")
		waiting.parked = RunState(run_id="r-bob")
		for n in range(10):
			endpoint._thread(f"t{n}")
		assert endpoint._thread("t-bob") is waiting and waiting.parked is not None
	finally:
		agui.MAX_THREADS = old
		endpoint.close()


def test_a_remote_agents_waiting_conversation_stays_through_many_users_flood(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""remote_agent: Alice's task waits for her answer (input-required); fifty users with one
	conversation each push out each other's ids, not hers (per-user fairness alone forgot the
	oldest, hers, when each held one)."""
	from openmolt_serve import _a2a_remote

	monkeypatch.setattr(_a2a_remote, "MAX_KNOWN", 4)
	owners = _a2a_remote._Known()  # what the tool keeps
	waiting = {"status": "input-required", "taskId": "t-alice", "contextId": "c-alice"}
	_a2a_remote._keep_owner(owners, waiting, "alice")
	for n in range(50):
		done = {"status": "completed", "taskId": f"t{n}", "contextId": f"c{n}"}
		_a2a_remote._keep_owner(owners, done, f"user{n}")
	_a2a_remote._check_owner(owners, {"taskId": "t-alice", "contextId": "c-alice"}, "alice")
	assert len(owners) == 4
	# Her answer ends the wait: her ids are then kept as any other's.
	_a2a_remote._keep_owner(
		owners, {"status": "completed", "taskId": "t-alice", "contextId": "c-alice"}, "alice"
	)
	for n in range(50, 60):
		done = {"status": "completed", "taskId": f"t{n}", "contextId": f"c{n}"}
		_a2a_remote._keep_owner(owners, done, f"user{n}")
	assert "t-alice" not in owners and len(owners) == 4


async def test_a_callers_flood_of_done_tasks_keeps_its_task_waiting_for_an_answer() -> None:
	"""One token may serve a whole front end (one caller, many people): its 250 finished tasks
	push out each other, never its task that waits for a person's answer (in memory)."""
	store = A2ATaskStore(max_tasks=3, scope="a2a:Helper")
	front = call("front")
	asks = TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED)
	await store.save(Task(id="asks", context_id="c", status=asks), front)
	for n in range(250):
		await store.save(Task(id=f"d{n}", context_id="c", status=DONE), front)
	assert await store.get("asks", front) is not None
	assert await store.get("d249", front) is not None and await store.get("d0", front) is None
	# Answered, it waits no longer: it goes as any other.
	await store.save(Task(id="asks", context_id="c", status=DONE), front)
	for n in range(250, 260):
		await store.save(Task(id=f"d{n}", context_id="c", status=DONE), front)
	assert await store.get("asks", front) is None
	store.close()
