"""The durability port's contract, with a journaling port in memory (no engine).

`JournalPort` records each step's value under its key and, given a journal, answers from it while
`replaying`: what a durable engine does after a crash. The loop must then ask for the same keys in
the same order, not emit the events of journaled steps, withhold the replayed ones, and keep the
event numbers of a run that never crashed.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.durability import LOCAL_PORT, RunPort, step_key
from openmolt_core.errors import ConfigurationError
from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS
from openmolt_core.llm import ModelRequest, Usage
from openmolt_core.result import RunState
from openmolt_core.scheduler import RunRecord
from openmolt_core.testing import (
	FakeClock,
	ScriptedModel,
	ask_human,
	call_tool,
	finish,
	update_memory,
	wait,
)
from openmolt_core.tools import CallingRun, ToolContext, tool

pytestmark = pytest.mark.anyio


class JournalPort:
	"""A port that journals steps in memory, numbered as they open, and replays a journal.

	Like a durable engine, it numbers steps in the order they are opened: `reserve` opens a
	concurrent batch's steps in command order; any other step opens when it starts.
	"""

	def __init__(
		self, journal: dict[int, tuple[str, Any]] | None = None, *, deliver: bool = False
	) -> None:
		self.journal = dict(journal or {})
		self.recorded: dict[int, tuple[str, Any]] = {}
		self.reserved: list[list[str]] = []
		self.deliver_replayed = deliver
		self.slept: list[float] = []
		self._next = 0
		self._slots: dict[str, int] = {}

	@property
	def replaying(self) -> bool:
		return self._next <= max(self.journal, default=-1)

	def now(self) -> float:
		return time.monotonic()

	async def deadline(self, seconds: float) -> float:
		return time.monotonic() + seconds

	async def sleep(self, seconds: float) -> None:
		self.slept.append(seconds)

	def reserve(self, keys: Sequence[str]) -> None:
		self.reserved.append(list(keys))
		for key in keys:
			self._slots[key] = self._next
			self._next += 1

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		slot = self._slots.pop(key, None)
		if slot is None:
			slot, self._next = self._next, self._next + 1
		if slot in self.journal:
			journaled_key, value = self.journal[slot]
			assert journaled_key == key, (
				f"replay asked for {key}, the journal holds {journaled_key}"
			)
			self.recorded[slot] = (key, value)
			return value if decode is None else decode(value)
		value = await fn()
		stored = value if encode is None else encode(value)
		self.recorded[slot] = (key, json.loads(json.dumps(stored)))
		return value

	def keys(self) -> list[str]:
		return [self.recorded[slot][0] for slot in sorted(self.recorded)]


def test_the_local_port_passes_through() -> None:
	"""LocalPort is the protocol at no cost: nothing replays, reserving opens nothing."""
	assert isinstance(LOCAL_PORT, RunPort) and isinstance(JournalPort(), RunPort)
	assert LOCAL_PORT.replaying is False and LOCAL_PORT.deliver_replayed is False
	LOCAL_PORT.reserve(["tool:1:0:a", "tool:1:1:b"])
	assert step_key("tool", 3, 1, "svc.pay") == "tool:3:1:svc.pay"


async def test_the_local_deadline_is_the_monotonic_clock_plus_the_budget() -> None:
	"""deadline(s) reads the same clock as now()."""
	before = time.monotonic()
	deadline = await LOCAL_PORT.deadline(5)
	assert before + 5 <= deadline <= time.monotonic() + 5


def _agent(om: OpenMolt, replies: list[Any], events: list[Any], **options: Any) -> Any:
	# Declared with no labels: an undeclared tool would taint the run, and the taint event after
	# the last journaled step is delivered live on a partial replay, outside these numbers.
	@tool(labels=[])
	async def slow(n: int) -> int:
		"""Return n, later for small n.

		Args:
			n: A number.
		"""
		await anyio.sleep(0.03 * (3 - n))
		return n

	agent = om.create_agent(
		name="J",
		model=ScriptedModel(replies),
		tools=[slow],
		max_steps=10,
		memory={"short_term": {"data": "", "on_update": lambda data: None}},
		**options,
	)
	for name in sorted(EVENT_NAMES - STREAM_EVENTS):  # streaming previews are not replayed
		agent.on(name, events.append)
	return agent


REPLIES: list[Any] = [
	[
		update_memory("first"),
		call_tool("local.slow", n=0),
		call_tool("local.slow", n=1),
		call_tool("local.slow", n=2),
	],
	wait(0.5),
	finish(result="done"),
]


async def test_a_replay_answers_from_the_journal_and_keeps_the_event_numbers() -> None:
	"""Replayed in full from its journal: the same result and usage, no model call."""
	om = OpenMolt(entry_points=False)
	first_events: list[Any] = []
	agent = _agent(om, list(REPLIES), first_events)
	port = JournalPort()
	state = agent.new_state("go")
	saved = state.to_dict()
	first = await agent.execute(state, port=port)
	assert first.ok
	assert port.keys() == [
		"model:1",
		"memory:1:0",
		"tool:1:1:local.slow",
		"tool:1:2:local.slow",
		"tool:1:3:local.slow",
		"model:2",
		"model:3",
	]
	assert port.reserved == [["tool:1:1:local.slow", "tool:1:2:local.slow", "tool:1:3:local.slow"]]
	assert port.slept == [0.5]

	# The same state again, with the journal: a recovered run.
	again_events: list[Any] = []
	replayer = _agent(om, [], again_events)  # a model that would fail if it were called
	replay = JournalPort(port.recorded)
	second = await replayer.execute(RunState.from_dict(saved), port=replay)
	assert second.output == first.output
	assert [(m.role, m.content) for m in second.state.messages] == [
		(m.role, m.content) for m in first.state.messages
	]
	assert second.usage.to_dict() == first.usage.to_dict()
	# Journaled steps emit nothing, the events between them are withheld as replayed; what
	# follows the last journaled step is delivered (the engine cannot know it was before).
	assert [(e.name, e.replayed) for e in again_events] == [
		("commandsQueued", False),
		("finish", False),
	]
	assert {(e.seq, e.name) for e in again_events} <= {(e.seq, e.name) for e in first_events}

	# Delivered on request, marked replayed, numbered as the first time.
	shown: list[Any] = []
	shower = _agent(om, [], shown)
	await shower.execute(RunState.from_dict(saved), port=JournalPort(port.recorded, deliver=True))
	assert [e.name for e in shown if not e.replayed] == ["commandsQueued", "finish"]
	assert {e.name for e in shown if e.replayed} >= {"commandsQueued", "memoryUpdate"}
	numbers = {(e.seq, e.name) for e in first_events}
	assert {(e.seq, e.name) for e in shown} <= numbers
	await om.aclose()


async def test_a_partial_replay_goes_on_live_with_the_same_numbers() -> None:
	"""Half the journal replays; the live rest emits events numbered as in the uncrashed run."""
	om = OpenMolt(entry_points=False)
	first_events: list[Any] = []
	agent = _agent(om, list(REPLIES), first_events)
	port = JournalPort()
	state = agent.new_state("go")
	saved = state.to_dict()
	await agent.execute(state, port=port)
	cut = port.keys().index("model:2")
	journal = {slot: port.recorded[slot] for slot in sorted(port.recorded)[:cut]}
	events: list[Any] = []
	resumed = _agent(om, list(REPLIES[1:]), events)
	result = await resumed.execute(RunState.from_dict(saved), port=JournalPort(journal))
	assert result.ok
	live = {(e.seq, e.name) for e in events}
	assert live and not any(e.replayed for e in events)
	want = {(e.seq, e.name) for e in first_events if e.step >= 2}
	assert live == want
	await om.aclose()


async def test_concurrent_calls_are_numbered_in_command_order() -> None:
	"""Calls that finish in reverse order keep their command's event numbers, run after run."""
	runs = []
	for _ in range(2):
		om = OpenMolt(entry_points=False)
		events: list[Any] = []
		agent = _agent(om, [REPLIES[0], finish(result="x")], events)
		await agent.run("go")
		responses = [(e.seq, e.tool) for e in events if e.name == "tool:response"]
		assert [tool for _, tool in responses] == ["local.slow"] * 3
		runs.append(sorted((e.seq, e.name) for e in events))
		by_input = sorted((e.seq, e.input["n"]) for e in events if e.name == "tool:response")
		assert [n for _, n in by_input] == [0, 1, 2]  # numbered by command, not by completion
		assert len({e.seq for e in events}) == len(events)
		await om.aclose()
	assert runs[0] == runs[1]


async def test_a_resumed_run_numbers_its_events_after_the_parked_ones() -> None:
	"""Event numbers are the run's: a resume goes on from state.seq."""

	def park(question: str) -> str:
		raise HumanInputUnavailable(question)

	om = OpenMolt(entry_points=False)
	events: list[Any] = []
	agent = _agent(om, [ask_human("ok?"), finish(result="ok")], events, on_human_input_request=park)
	parked = await agent.run("go")
	before = {e.seq for e in events}
	assert parked.state.seq >= max(before)
	restored = RunState.from_dict(json.loads(json.dumps(parked.state.to_dict())))
	events.clear()
	await agent.resume(restored, answer="yes")
	assert events and min(e.seq for e in events) > max(before)
	await om.aclose()


async def test_idempotency_keys_derive_from_the_run_and_the_call() -> None:
	"""The same run replaying a call sends the same key; another run or call, another key."""
	seen: list[str] = []

	def api(request: httpx.Request) -> httpx.Response:
		seen.append(request.headers["Idempotency-Key"])
		return httpx.Response(200, json={"ok": True})

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(entry_points=False, http_client=http)
	om.register_integration(
		"pay",
		{
			"name": "pay",
			"apiSetup": {"baseUrl": "https://pay.example", "idempotencyHeader": "Idempotency-Key"},
			"tools": [
				{
					"handle": "charge",
					"description": "Charge.",
					"method": "POST",
					"endpoint": "/charges",
					"body": {"amount": "{{ input.amount }}"},
					"inputSchema": {
						"type": "object",
						"properties": {"amount": {"type": "integer"}},
					},
				}
			],
		},
	)
	replies = [
		[call_tool("pay.charge", amount=1), call_tool("pay.charge", amount=1)],
		finish(result="ok"),
	]
	agent = om.create_agent(
		name="Payer", model=ScriptedModel(replies + replies), integrations=["pay"]
	)
	state = agent.new_state("pay")
	state.run_id = "run-1"
	saved = state.to_dict()
	await agent.execute(RunState.from_dict(saved), port=LOCAL_PORT)
	await agent.execute(RunState.from_dict(saved), port=LOCAL_PORT)  # a replay of the same run
	await http.aclose()
	first = [_idempotency_key(f"run-1/tool:1:{i}:pay.charge") for i in (0, 1)]
	assert seen == first + first
	assert first[0] != first[1]
	assert all(uuid.UUID(k).version == 5 for k in first)
	assert _idempotency_key("") != _idempotency_key("")  # no call id: a fresh key each time


async def test_function_tools_see_their_call_id() -> None:
	"""ToolContext.call_id is the run id and the call's step key."""
	ids: list[str] = []

	def note(context: ToolContext) -> str:
		"""Note the call id."""
		ids.append(context.call_id)
		return "ok"

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Ids", model=ScriptedModel([call_tool("local.note"), finish(result="x")]), tools=[note]
	)
	result = await agent.run("x")
	assert ids == [f"{result.state.run_id}/tool:1:0:local.note"]


def _idempotency_key(call_id: str) -> str:
	run = None
	if call_id:
		run_id, _, call = call_id.partition("/")
		run = CallingRun(run_id, call, 1, 0, Usage(), lambda name: False, _no_emit)
	return ToolContext(agent="a", integration="pay", run=run).idempotency_key


async def _no_emit(event: Any) -> None:
	return None


async def test_function_tools_get_the_http_engine_s_idempotency_key_on_every_replay() -> None:
	"""A function tool's ToolContext.idempotency_key: the HTTP header's key, the same on replay."""
	keys: list[str] = []

	def pay(context: ToolContext) -> str:
		"""Pay once."""
		keys.append(context.idempotency_key)
		return "paid"

	om = OpenMolt(entry_points=False)
	replies = [call_tool("local.pay"), finish(result="x")]
	agent = om.create_agent(name="Keys", model=ScriptedModel(replies + replies), tools=[pay])
	state = agent.new_state("go")
	saved = state.to_dict()
	await agent.execute(RunState.from_dict(saved), port=LOCAL_PORT)
	await agent.execute(RunState.from_dict(saved), port=LOCAL_PORT)  # the same call, replayed
	assert keys == [_idempotency_key(f"{state.run_id}/tool:1:0:local.pay")] * 2
	assert uuid.UUID(keys[0]).version == 5


async def test_each_run_a_call_nests_has_its_own_id_and_keys_the_same_on_every_replay() -> None:
	"""A tool's code running its agent twice (two invoices): each run has an id, and its calls an
	idempotency key, of its own (the second charge sent the first one's key, so a service that
	honours keys applied it once), and a replay of the call gives each the same again."""
	import anyio

	keys: list[tuple[str, str]] = []
	om = OpenMolt(entry_points=False)

	def charge(invoice: str, context: ToolContext) -> str:
		"""Charge an invoice.

		Args:
			invoice: The invoice.
		"""
		keys.append((invoice, context.idempotency_key))
		return "charged"

	def pay(request: ModelRequest) -> dict[str, Any]:
		# Each run's reply follows its own conversation, not the order concurrent runs ask in.
		charged = any("charged" in str(m.content) for m in request.messages)
		return finish(result="A") if charged else call_tool("local.charge", invoice="A")

	payer = om.create_agent(name="Payer", model=ScriptedModel([pay] * 12), tools=[charge])
	ids: list[str] = []

	async def settle(context: ToolContext) -> str:
		"""Settle the invoices."""
		first = await payer.run("pay A", parent=context.run)
		async with anyio.create_task_group() as tg:  # two more at once: numbered as they start

			async def one() -> None:
				ids.append((await payer.run("pay", parent=context.run)).state.run_id)

			tg.start_soon(one)
			tg.start_soon(one)
		return first.state.run_id

	replies = [call_tool("local.settle"), finish(result="settled")]
	boss = om.create_agent(name="Boss", model=ScriptedModel(replies * 2), tools=[settle])
	state = boss.new_state("settle")
	saved = state.to_dict()
	await boss.execute(RunState.from_dict(saved), port=LOCAL_PORT)
	first = list(keys)
	await boss.execute(RunState.from_dict(saved), port=LOCAL_PORT)  # the call, replayed
	assert len(first) == 3 and len({k for _, k in first}) == 3
	# The replay gives each run the same key: the first run's first, then the two that run at
	# once, in whichever order their charges come (the scheduler's, which load can change).
	assert keys[3] == first[0] and sorted(keys[3:]) == sorted(first)
	call = f"{state.run_id}.1.0"
	assert sorted(ids) == sorted([f"{call}.2", f"{call}.3"] * 2)


class _CrashAfterBody(JournalPort):
	"""Runs a tool step's body, then 'crashes' before its result is journaled."""

	async def step(self, key: str, fn: Callable[[], Awaitable[Any]], **kw: Any) -> Any:
		if key.startswith("tool:"):
			await fn()
			raise _Killed
		return await super().step(key, fn, **kw)


class _Killed(BaseException):
	pass


async def test_tool_events_say_done_only_once_the_result_is_journaled() -> None:
	"""tool:response comes after the step's result is journaled; none for a call a crash re-runs."""
	order: list[str] = []

	class Watching(JournalPort):
		async def step(self, key: str, fn: Callable[[], Awaitable[Any]], **kw: Any) -> Any:
			value = await super().step(key, fn, **kw)
			order.append(f"journaled {key}")
			return value

	def boom(n: int) -> int:
		"""Fail for odd n.

		Args:
			n: A number.
		"""
		if n % 2:
			raise ValueError("odd")
		return n

	for port in (Watching(), _CrashAfterBody()):
		order.clear()
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(
			name="Order",
			model=ScriptedModel(
				[[call_tool("local.boom", n=2), call_tool("local.boom", n=1)], finish(result="x")]
			),
			tools=[boom],
		)
		for name in ("tool:call", "tool:response", "error"):
			agent.on(name, lambda e: order.append(f"{e.name} {getattr(e, 'tool', '')}".strip()))
		if isinstance(port, _CrashAfterBody):
			killed = []
			try:
				await agent.execute(agent.new_state("go"), port=port)
			except* _Killed as group:  # the batch's calls, each killed after its body
				killed.extend(group.exceptions)
			# A sync tool runs in a worker thread: the first kill may cancel the other call
			# before its body ends (then it was never done either).
			assert 1 <= len(killed) <= 2
			assert "tool:response local.boom" not in order and "error" not in order
			assert "tool:call local.boom" in order  # it started: "started", never "done"
			continue
		await agent.execute(agent.new_state("go"), port=port)
		for key in ("tool:1:0:local.boom", "tool:1:1:local.boom"):
			assert f"journaled {key}" in order
		# The k-th response comes after k results were journaled (the calls run concurrently).
		said = [i for i, e in enumerate(order) if e == "tool:response local.boom"]
		for k, at in enumerate(said, 1):
			assert sum(e.startswith("journaled tool:") for e in order[:at]) >= k, order
		assert order.index("error") > order.index("journaled tool:1:1:local.boom")
		assert order.count("tool:response local.boom") == 2


async def test_schedules_fire_through_their_backend() -> None:
	"""The scheduler decides when; its backend (here a recording one) turns due times into runs."""
	start = datetime(2024, 3, 9, 12, tzinfo=UTC)
	calls: list[tuple[str, datetime]] = []

	class Recording:
		async def starting_point(self, scheduler: Any, schedule: Any, now: datetime) -> Any:
			calls.append(("start", now))
			return None, start - timedelta(seconds=30)  # a shared anchor 30 s ago

		async def fire(self, scheduler: Any, schedule: Any, due: datetime, **options: Any) -> Any:
			calls.append(("fire", due))
			return RunRecord(schedule.id, schedule.agent.name, due, due)

		async def skip(self, scheduler: Any, schedule: Any, due: datetime, note: str) -> Any:
			calls.append(("skip", due))
			return None

	clock = FakeClock(start)
	om = OpenMolt(entry_points=False, clock=clock)
	om.scheduler.backend = Recording()
	agent = om.create_agent(name="Tick", model=ScriptedModel([]))
	agent.schedule({"type": "interval", "value": 60})
	async with om:
		await clock.advance(minutes=2)
	assert calls == [
		("start", start),
		("fire", start + timedelta(seconds=30)),
		("fire", start + timedelta(seconds=90)),
	]


class _DoubtPort(JournalPort):
	"""A durable-like port on which every recorded call had started before (a crash)."""

	def __init__(self) -> None:
		super().__init__()
		self.starts: list[str] = []

	async def call_started(self, key: str) -> bool:
		self.starts.append(key)
		return True


async def test_in_doubt_calls_follow_their_tool_s_policy() -> None:
	"""retry runs again unmarked; ask parks on a question (or asks the handler); fail errs."""
	from openmolt_core.tools import tool

	ran: list[str] = []

	def read(n: int) -> int:
		"""Read.

		Args:
			n: A number.
		"""
		ran.append("read")
		return n

	@tool(labels=["outbound"])
	def send(n: int) -> int:
		"""Send.

		Args:
			n: A number.
		"""
		ran.append("send")
		return n

	@tool(labels=["outbound"], in_doubt="fail")
	def strict(n: int) -> int:
		"""Send, strictly.

		Args:
			n: A number.
		"""
		ran.append("strict")
		return n

	om = OpenMolt(entry_points=False)
	replies = [
		[
			call_tool("local.read", n=1),
			call_tool("local.send", n=2),
			call_tool("local.strict", n=3),
		],
		finish(result="x"),
	]
	agent = om.create_agent(
		name="Doubt",
		model=ScriptedModel(replies),
		tools=[read, send, strict],
		on_human_input_request=lambda q: (_ for _ in ()).throw(HumanInputUnavailable(q)),
	)
	port = _DoubtPort()
	result = await agent.execute(agent.new_state("go"), port=port)
	assert ran == ["read"]  # the read was retried; the two outbound calls were not sent again
	assert port.starts == ["tool:1:1:local.send", "tool:1:2:local.strict"]  # reads: no record
	assert result.status == "human_input_required"
	assert "In doubt" in result.state.pending["message"]
	assert "local.send" in result.state.pending["message"]
	entries = result.state.pending["results"]
	assert entries[1]["ok"] is False and "in doubt" in entries[1]["error"]
	assert entries[2]["ok"] is False and "may or may not have taken effect" in entries[2]["error"]

	# A handler that can answer: the person's word is the call's result.
	answers = []
	om2 = OpenMolt(entry_points=False)
	agent2 = om2.create_agent(
		name="Doubt2",
		model=ScriptedModel([call_tool("local.send", n=2), finish(result="x")]),
		tools=[send],
		on_human_input_request=lambda q: answers.append(q) or "yes, it went through",
	)
	done = await agent2.execute(agent2.new_state("go"), port=_DoubtPort())
	assert done.ok and len(answers) == 1
	assert "yes, it went through" in done.state.messages[2].content
	with pytest.raises(ConfigurationError, match="in_doubt must be"):
		tool(in_doubt="maybe")(read)


async def test_an_in_doubt_call_is_named_by_an_in_doubt_error_whatever_its_policy() -> None:
	"""ask and fail each emit error kind in_doubt naming the call (ask emitted nothing before)."""

	@tool(labels=["outbound"])
	def send(n: int) -> int:
		"""Send.

		Args:
			n: A number.
		"""
		return n

	@tool(labels=["outbound"], in_doubt="fail")
	def strict(n: int) -> int:
		"""Send, strictly.

		Args:
			n: A number.
		"""
		return n

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Doubt",
		model=ScriptedModel([[call_tool("local.send", n=1), call_tool("local.strict", n=2)]]),
		tools=[send, strict],
		on_human_input_request=lambda q: (_ for _ in ()).throw(HumanInputUnavailable(q)),
	)
	errors: list[Any] = []
	agent.on("error", errors.append)
	result = await agent.execute(agent.new_state("go"), port=_DoubtPort())
	assert result.status == "human_input_required"
	named = {e.call: e for e in errors if e.kind == "in_doubt"}
	assert set(named) == {"tool:1:0:local.send", "tool:1:1:local.strict"}
	assert all("may or may not have taken effect" in e.message for e in named.values())
	seqs = [e.seq for e in errors]
	assert len(set(seqs)) == len(seqs)  # each in its call's own slot


async def test_an_in_doubt_answer_whose_str_raises_parks_as_a_failed_handler() -> None:
	"""A handler's answer that cannot be written as text is the handler's failure, in doubt too.

	``requestHumanInput`` reads such an answer as a failed handler (the model hears it); the
	question about a call in doubt let the answer's ``str()`` raise out of its journaled step
	and end the run with the handler's own exception.
	"""

	class Unwritable:
		def __str__(self) -> str:
			raise RuntimeError("no text")

	@tool(labels=["outbound"])
	def send(n: int) -> int:
		"""Send.

		Args:
			n: A number.
		"""
		return n

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Doubt",
		model=ScriptedModel([call_tool("local.send", n=1), finish(result="x")]),
		tools=[send],
		on_human_input_request=lambda question: Unwritable(),
	)
	result = await agent.execute(agent.new_state("go"), port=_DoubtPort())
	assert result.status == "human_input_required"
	assert "(the handler failed: RuntimeError)" in result.error
	assert 'local.send {"n": 1}' in result.state.pending["message"]


async def test_two_calls_of_a_batch_in_doubt_park_on_one_question_about_both() -> None:
	"""Killed during a batch of two outbound calls: the person is asked about each of them.

	The second call's question replaced the first's, so the person was asked about one call
	while the model read "a person is asked whether it did; their answer follows" for both, and
	could make the other call again on the answer about its neighbour.
	"""
	from openmolt_core.tools import tool

	@tool(labels=["outbound"])
	def send(n: int) -> int:
		"""Send.

		Args:
			n: A number.
		"""
		return n

	@tool(labels=["outbound"])
	def pay(n: int) -> int:
		"""Pay.

		Args:
			n: A number.
		"""
		return n

	om = OpenMolt(entry_points=False)
	batch = [call_tool("local.send", n=1), call_tool("local.pay", n=2)]
	agent = om.create_agent(
		name="Doubts",
		model=ScriptedModel([batch, finish(result="x")]),
		tools=[send, pay],
		on_human_input_request=lambda q: (_ for _ in ()).throw(HumanInputUnavailable(q)),
	)
	result = await agent.execute(agent.new_state("go"), port=_DoubtPort())
	assert result.status == "human_input_required"
	question = result.state.pending["message"]
	assert question.count("In doubt") == 2
	assert 'local.send {"n": 1}' in question and 'local.pay {"n": 2}' in question


async def test_a_sub_agent_call_in_doubt_is_as_strict_as_its_strictest_tool() -> None:
	"""A child whose tool must never run twice makes the parent's call of it fail, not retry.

	A sub-agent in doubt would run again from its start (its model asked again): the call takes
	the strictest policy of the child's tools, not only what their labels imply.
	"""
	ran: list[str] = []

	@tool(labels=[], in_doubt="fail")
	def append(text: str) -> str:
		"""Append a line to the ledger (no outbound data, but never twice).

		Args:
			text: The line.
		"""
		ran.append(text)
		return "appended"

	@tool(labels=[])
	def look(text: str) -> str:
		"""Look a line up.

		Args:
			text: The line.
		"""
		ran.append(f"look {text}")
		return "found"

	om = OpenMolt(entry_points=False)
	child = om.create_agent(
		name="Clerk",
		model=ScriptedModel([call_tool("local.append", text="x"), finish(result="ok")]),
		tools=[append],
	)
	reader = om.create_agent(
		name="Reader",
		model=ScriptedModel([call_tool("local.look", text="x"), finish(result="ok")]),
		tools=[look],
	)
	parent = om.create_agent(
		name="Boss",
		model=ScriptedModel(
			[
				[call_tool("local.Reader", task="look"), call_tool("local.Clerk", task="go")],
				finish(),
			]
		),
		tools=[child.as_tool(), reader.as_tool()],
	)
	port = _DoubtPort()
	result = await parent.execute(parent.new_state("go"), port=port)
	assert ran == ["look x"]  # the reader's child ran again; the clerk's did not
	assert port.starts == ["tool:1:1:local.Clerk"]
	entries = json.loads(result.state.messages[2].content)["results"]
	assert entries[0]["ok"] is True  # the reader's tools may all run again: retried
	assert entries[1]["ok"] is False  # the clerk's strictest tool fails when in doubt
	assert "may or may not have taken effect" in entries[1]["error"]


async def test_llm_output_is_emitted_only_once_the_model_step_is_journaled() -> None:
	"""A model call killed before its reply was journaled says nothing; a journaled one says it."""

	class CrashAfterModel(JournalPort):
		async def step(self, key: str, fn: Callable[[], Awaitable[Any]], **kw: Any) -> Any:
			if key.startswith("model:"):
				await fn()
				raise _Killed
			return await super().step(key, fn, **kw)

	for port, killed in ((CrashAfterModel(), True), (JournalPort(), False)):
		seen: list[str] = []
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="Out", model=ScriptedModel([finish(result="x")]))
		agent.on("llmOutput", lambda e, seen=seen: seen.append(e.output))
		if killed:
			with pytest.raises(_Killed):
				await agent.execute(agent.new_state("go"), port=port)
			assert seen == []
		else:
			await agent.execute(agent.new_state("go"), port=port)
			assert len(seen) == 1 and "finish" in seen[0]


@pytest.mark.parametrize("audits", [False, True])
async def test_a_batch_with_gated_calls_journals_its_steps_in_the_order_durable_runs_hold(
	audits: bool,
) -> None:
	"""The journal's step order of a concurrent batch where calls wait for approval.

	A call a rule marks (``requires_approval``) and an outbound call of a tainted run (safety's
	``Approve``) each take an ``approval`` step before their ``tool`` step, then the guardrails'
	verdicts; a plain call takes none. A durable run in flight holds its steps by number in this
	order, so it must not change (the order the retired gate_step and gate_reserve gave).
	"""
	from openmolt_core.guardrails import json_schema
	from openmolt_core.hooks import Capability, Proceed

	class Audit(Capability):
		"""A third-party capability whose decisions the loop journals (``hook:`` steps)."""

		name = "audit"

		async def before_tool(self, run: Any, call: Any, tool: Any) -> Proceed:
			return Proceed()

	@tool(labels=["untrusted"])
	def fetch() -> str:
		"""Fetch a page."""
		return "page"

	@tool(labels=["private"])
	def vault() -> str:
		"""Read the vault."""
		return "secret"

	@tool(labels=["outbound"])
	def send(to: str) -> str:
		"""Send.

		Args:
			to: Whom.
		"""
		return "sent"

	@tool(labels=[])
	def refund(n: int) -> int:
		"""Refund.

		Args:
			n: How much.
		"""
		return n

	@tool(labels=[])
	def note(n: int) -> int:
		"""Note.

		Args:
			n: A number.
		"""
		return n

	batch = [
		call_tool("local.refund", n=1),
		call_tool("local.note", n=2),
		call_tool("local.send", to="a"),
	]
	asked: list[str] = []
	port = JournalPort()
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=ScriptedModel([call_tool("local.fetch"), batch, finish("done")]),
		tools=[fetch, vault, send, refund, note],
		requires_approval=["local.refund"],
		guardrails=[json_schema({"properties": {"to": {"type": "string"}}}, tools=["local.send"])],
		on_approval_request=lambda request: (asked.append(request.tool), request.approve())[1],
		capabilities=[Audit()] if audits else None,
	)
	assert (await agent.execute(None, port=port, input="go")).status == "success"
	assert asked == ["local.refund", "local.send"]
	hook = "hook:2:{}:local.{}"
	batch = [
		*([hook.format(0, "refund")] if audits else []),
		"approval:2:0:local.refund",
		"tool:2:0:local.refund",
		*([hook.format(1, "note")] if audits else []),
		"tool:2:1:local.note",
		*([hook.format(2, "send")] if audits else []),
		"approval:2:2:local.send",
		"tool:2:2:local.send",
		"guard:2:tool_call:2:0",
	]
	assert port.reserved == [batch]
	first = [*(["hook:1:0:local.fetch"] if audits else []), "tool:1:0:local.fetch"]
	assert port.keys() == ["start", "model:1", *first, "model:2", *batch, "model:3"]


async def test_an_in_doubt_write_is_retried_only_when_it_carries_an_idempotency_key() -> None:
	"""An integration's idempotency header makes its POSTs retry in doubt, not its PATCHes.

	The engine puts the key on POST requests only: a PATCH found in doubt has no key for the
	service to deduplicate, so running it again could apply it twice.
	"""
	from openmolt_core.agent import HumanInputUnavailable

	sent: list[str] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(f"{request.method} {request.headers.get('Idempotency-Key', '-')}")
		return httpx.Response(200, json={"ok": True})

	def tool_def(handle: str, method: str) -> dict[str, Any]:
		return {
			"handle": handle,
			"description": f"{method} it.",
			"method": method,
			"endpoint": f"/{handle}",
			"body": {"n": "{{ input.n }}"},
			"inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
		}

	def nobody(question: str) -> str:
		raise HumanInputUnavailable(question)

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(entry_points=False, http_client=http)
	om.register_integration(
		"pay",
		{
			"name": "pay",
			"apiSetup": {"baseUrl": "https://pay.example", "idempotencyHeader": "Idempotency-Key"},
			"tools": [tool_def("charge", "POST"), tool_def("amend", "PATCH")],
		},
	)
	model = ScriptedModel(
		[[call_tool("pay.charge", n=1), call_tool("pay.amend", n=2)], finish(result="ok")]
	)
	agent = om.create_agent(
		name="Payer", model=model, integrations=["pay"], on_human_input_request=nobody
	)
	assert agent.in_doubt == {"pay.charge": "retry", "pay.amend": "ask"}
	port = _DoubtPort()
	result = await agent.execute(agent.new_state("pay"), port=port)
	await http.aclose()
	assert [s.split()[0] for s in sent] == ["POST"]  # the keyed charge ran again, the amend not
	assert not sent[0].endswith(" -")  # with its key
	assert result.status == "human_input_required"
	assert "pay.amend" in result.state.pending["message"]


async def test_a_key_in_the_body_is_the_call_s_on_replay_and_makes_the_write_retry_in_doubt() -> (
	None
):
	"""``{{ call.idempotency_key }}`` in a body (Shopify's @idempotent variable): a replay of
	the run sends the same key per call, each call its own, and a call found in doubt runs again
	(its service deduplicates by the key) rather than asking a person."""
	keys: list[str] = []

	def api(request: httpx.Request) -> httpx.Response:
		keys.append(json.loads(request.content)["variables"]["key"])
		return httpx.Response(200, json={"ok": True})

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(entry_points=False, http_client=http)
	om.register_integration(
		"shop",
		{
			"name": "shop",
			"apiSetup": {"baseUrl": "https://shop.example"},
			"tools": [
				{
					"handle": "refund",
					"description": "Refund.",
					"method": "POST",
					"endpoint": "/graphql",
					"body": {
						"variables": {"key": "{{ call.idempotency_key }}", "n": "{{ input.n }}"}
					},
					"inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
				}
			],
		},
	)
	replies = [
		[call_tool("shop.refund", n=1), call_tool("shop.refund", n=1)],
		finish(result="ok"),
	]
	agent = om.create_agent(
		name="Refunder", model=ScriptedModel(replies + replies), integrations=["shop"]
	)
	assert agent.in_doubt == {"shop.refund": "retry"}
	state = agent.new_state("refund")
	state.run_id = "run-1"
	saved = state.to_dict()
	await agent.execute(RunState.from_dict(saved), port=LOCAL_PORT)
	await agent.execute(RunState.from_dict(saved), port=_DoubtPort())  # in doubt: runs again
	await http.aclose()
	first = [_idempotency_key(f"run-1/tool:1:{i}:shop.refund") for i in (0, 1)]
	assert keys == first + first
	assert first[0] != first[1]
