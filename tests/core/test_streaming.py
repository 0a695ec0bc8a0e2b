"""agent.stream(): events as they happen, the model's text included, and the same result."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import pytest

from openmolt import Capability, OpenMolt, ProviderError, RunError
from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS, Event
from openmolt_core.hooks import Run
from openmolt_core.llm import ModelRequest, ModelResponse, Usage
from openmolt_core.streaming import StreamChunk, StreamingProvider, TextDelta
from openmolt_core.testing import ScriptedModel, call_tool, finish

from ._journal import Journal

pytestmark = pytest.mark.anyio

REPLIES = [
	{"commands": [call_tool("local.add", a=2, b=3)]},
	{"commands": [finish({"result": "5"}, human_message='2 + 3 = 5, "done" ✓ 😀')]},
]


def add(a: int, b: int) -> int:
	"""Add two numbers.

	Args:
		a: One.
		b: Two.
	"""
	return a + b


class Streamer:
	"""A provider that streams its scripted replies a few characters at a time."""

	def __init__(self, replies: list[Any], *, size: int = 3, cut: int | None = None) -> None:
		self.name = "streamer"
		self.model = "s1"
		self.texts = [json.dumps(r, ensure_ascii=True) for r in replies]
		self.size = size
		self.cut = cut
		self.generated = 0
		self.streamed = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.generated += 1
		return self._response(self.texts.pop(0))

	async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		self.streamed += 1
		text = self.texts.pop(0)
		sent = text if self.cut is None else text[: self.cut]
		for i in range(0, len(sent), self.size):
			yield TextDelta(sent[i : i + self.size])
		if self.cut is None:
			yield self._response(text)

	def _response(self, text: str) -> ModelResponse:
		return ModelResponse(text=text, usage=Usage(input_tokens=7, output_tokens=3))


def agent_with(*models: Any) -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="S", model=list(models), tools=[add], max_steps=5)


async def collect(agent: Any, input: str = "go") -> tuple[list[Event], Any]:
	async with agent.stream(input) as run:
		events = [event async for event in run]
		result = await run.result()
	return events, result


def test_the_provider_satisfies_the_protocol() -> None:
	"""A provider with generate and stream is a StreamingProvider; ScriptedModel is not."""
	assert isinstance(Streamer([]), StreamingProvider)
	assert not isinstance(ScriptedModel([]), StreamingProvider)


async def test_stream_yields_text_commands_then_tools_and_the_same_result() -> None:
	"""Deltas make up the human message; a tool call is announced before it runs; same result."""
	model = Streamer(REPLIES)
	events, result = await collect(agent_with(model))
	assert model.streamed == 2 and model.generated == 0
	names = [e.name for e in events]
	ready = names.index("command:ready")
	assert names.index("tool:call") > ready
	assert events[ready].command == REPLIES[0]["commands"][0]
	deltas = [e for e in events if e.name == "text:delta" and e.field == "humanMessage"]
	assert len(deltas) > 3
	assert "".join(d.text for d in deltas) == '2 + 3 = 5, "done" ✓ 😀'
	assert {d.model for d in deltas} == {"streamer:s1"}
	output = "".join(e.text for e in events if e.name == "text:delta" and e.field == "output")
	assert json.loads(output) == {"result": "5"}
	last = {name: i for i, name in enumerate(names)}
	assert names[-1] == "finish" and last["llmOutput"] > last["text:delta"]
	assert all(e.seq == 0 for e in events if e.name in STREAM_EVENTS)
	assert all(e.run_id == result.state.run_id for e in events)

	# The same run, not streamed, with the same listeners: the same numbered events.
	agent = agent_with(ScriptedModel(REPLIES))
	seen: list[tuple[str, int]] = []
	for name in EVENT_NAMES - STREAM_EVENTS:
		agent.on(name, lambda e: seen.append((e.name, e.seq)))
	plain = await agent.run("go")
	assert result.output == plain.output == {"result": "5"}
	assert result.status == plain.status
	assert result.state.seq == plain.state.seq  # previews take no sequence numbers
	assert [(e.name, e.seq) for e in events if e.name not in STREAM_EVENTS] == seen


async def test_a_provider_without_stream_gives_the_whole_reply_at_once() -> None:
	"""ScriptedModel cannot stream: the message comes as one delta, the result is the same."""
	events, result = await collect(agent_with(ScriptedModel(REPLIES)))
	deltas = [e.text for e in events if e.name == "text:delta" and e.field == "humanMessage"]
	assert deltas == ['2 + 3 = 5, "done" ✓ 😀']
	assert result.output == {"result": "5"}


async def test_a_run_nobody_streams_calls_generate() -> None:
	"""Without a streaming listener the loop calls generate, even with other listeners."""
	model = Streamer(REPLIES)
	agent = agent_with(model)
	seen: list[str] = []
	agent.on("llmOutput", lambda e: seen.append(e.name))
	result = await agent.run("go")
	assert (model.generated, model.streamed) == (2, 0)
	assert result.output == {"result": "5"} and seen == ["llmOutput", "llmOutput"]


async def test_a_listener_on_text_delta_streams_a_plain_run() -> None:
	"""agent.on("text:delta") alone makes run() stream."""
	model = Streamer(REPLIES, size=1)
	agent = agent_with(model)
	text: list[str] = []
	agent.on("text:delta", lambda e: text.append(e.text))
	await agent.run("go")
	assert model.streamed == 2
	assert "".join(text).startswith('{"result":')


async def test_a_cut_stream_runs_nothing() -> None:
	"""A stream cut inside the tool call's input runs no tool, and the run fails resumable."""
	model = Streamer(REPLIES, cut=len(json.dumps(REPLIES[0])) - 5)
	agent = agent_with(model)
	async with agent.stream("go") as run:
		events = [event async for event in run]
		with pytest.raises(RunError) as caught:
			await run.result()
	names = [e.name for e in events]
	assert "tool:call" not in names and "command:ready" not in names
	assert "without a complete reply" in str(caught.value)
	assert caught.value.result.state.steps == 0


async def test_a_cut_stream_falls_back_to_the_next_model() -> None:
	"""A stream cut off is retryable: the next model answers the step from the start."""
	cut = Streamer(REPLIES, cut=20)
	cut.name = "cut"
	events, result = await collect(agent_with(cut, ScriptedModel(REPLIES)))
	names = [e.name for e in events]
	assert names.index("model:fallback") < names.index("command:ready")
	assert result.output == {"result": "5"}


async def test_a_provider_error_mid_stream_is_the_runs_error() -> None:
	"""A failure the provider raises mid-stream ends the run as without streaming."""

	class Broken(Streamer):
		async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
			yield TextDelta('{"commands":[')
			raise ProviderError("the request was rejected (400)", provider="streamer")

	async with agent_with(Broken(REPLIES)).stream("go") as run:
		with pytest.raises(RunError, match="rejected"):
			await run.result()
		events = [event async for event in run]
	assert [e.name for e in events if e.name == "error"] == ["error"]


async def test_a_replayed_step_does_not_stream_again() -> None:
	"""A durable run streams its live steps; replayed from the journal, it streams nothing."""
	journal = Journal()
	live = agent_with(Streamer(REPLIES))
	deltas: list[str] = []
	live.on("text:delta", lambda e: deltas.append(e.text))
	first = await live.execute(None, port=journal, input="go", run_id="r1")
	assert deltas and first.output == {"result": "5"}

	replayed = agent_with(Streamer([]))  # any call to the model would fail: nothing is scripted
	again: list[str] = []
	replayed.on("text:delta", lambda e: again.append(e.text))
	second = await replayed.execute(None, port=Journal(journal.values), input="go", run_id="r1")
	assert again == [] and second.output == first.output


async def test_a_concurrent_run_of_the_agent_is_not_in_the_stream() -> None:
	"""The stream has its own run's events only: a concurrent run of the agent is not in it."""
	agent = agent_with(Streamer(REPLIES + REPLIES))
	async with agent.stream("go") as run:
		other = await agent.run("go")
		events = [event async for event in run]
		result = await run.result()
	assert {e.run_id for e in events} == {run.run_id} == {result.state.run_id}
	assert other.state.run_id != run.run_id
	agent.off("text:delta")  # the stream removed its handlers: nothing listens any more
	assert not agent._events.wants("text:delta")


async def test_leaving_the_block_early_cancels_the_run() -> None:
	"""Breaking out of the block stops the run; its handlers are gone."""

	class Slow(Streamer):
		async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
			import anyio

			# (a word that starts the text waits for its end when secrets are known: it may start
			# a base64 line; "a " is sent whatever the environment holds)
			yield TextDelta('{"commands":[{"type":"finish","humanMessage":"a ')
			await anyio.sleep(30)
			yield TextDelta("never")

	agent = agent_with(Slow(REPLIES))
	async with agent.stream("go") as run:
		async for event in run:
			if event.name == "text:delta":
				break
	assert not agent._events.wants("text:delta")
	with pytest.raises(RuntimeError, match="cancelled before it ended"):
		await run.result()
	assert agent.last_state is not None and agent.last_state.run_id == run.run_id


async def test_a_sub_agents_text_is_in_the_stream_with_its_parent() -> None:
	"""A sub-agent's deltas come in the caller's stream, naming the calling run."""
	om = OpenMolt(entry_points=False)
	helper = om.create_agent(
		name="helper",
		instructions="Helps.",
		model=Streamer([{"commands": [finish({"n": 1}, human_message="from the helper")]}]),
	)
	main = om.create_agent(
		name="main",
		model=Streamer(
			[
				{"commands": [call_tool("local.helper", task="x")]},
				{"commands": [finish({"n": 2}, human_message="from main")]},
			]
		),
		tools=[helper],
	)
	async with main.stream("go") as run:
		events = [e async for e in run]
		await run.result()
	texts: dict[str, str] = {}
	for e in events:
		if e.name == "text:delta" and e.field == "humanMessage":
			texts[e.parent_run_id] = texts.get(e.parent_run_id, "") + e.text
	assert texts == {"": "from main", run.run_id: "from the helper"}


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
async def test_a_secret_split_across_deltas_never_reaches_a_listener(size: int) -> None:
	"""Each delta masked alone would let the halves of a secret through: they are held back."""
	secret = "sk-live-7f3a9c2e11"
	reply = {"commands": [finish("ok", human_message=f"the key is {secret}, keep it")]}
	model = Streamer([reply], size=size)
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)
	agent = om.create_agent(name="S", model=model, max_steps=2)
	deltas: list[str] = []
	agent.on("text:delta", lambda e: deltas.append(e.text))
	result = await agent.run("go")
	said = "".join(deltas)
	assert model.streamed == 1 and result.output == "ok"
	assert secret not in said and all(secret[:9] not in d for d in deltas)
	assert "the key is [redacted], keep it" in said


@pytest.mark.parametrize("size", [1, 3])
async def test_a_fields_held_tail_is_sent_before_the_next_field_streams(size: int) -> None:
	"""A field's last characters held back because they may start a secret (``t`` of ``tok-``)
	are sent when the field ends, before the next field's deltas, not at the reply's end."""
	model = Streamer(
		[{"commands": [finish("ok", human_message="the key is safe, keep it")]}], size=size
	)
	om = OpenMolt(entry_points=False)
	om.secrets.add("tok-live-5e3a9c2e")
	agent = om.create_agent(name="S", model=model, max_steps=2)
	deltas: list[tuple[str, str]] = []
	agent.on("text:delta", lambda e: deltas.append((e.field, e.text)))
	await agent.run("go")
	fields = [f for f, text in deltas if text]
	assert "".join(t for f, t in deltas if f == "humanMessage") == "the key is safe, keep it"
	assert fields == sorted(fields, key=fields.index)  # each field's deltas together, in order
	assert len(set(fields)) == 2, fields


# a call made again: the next attempt --------------------------------------------------------


class CutOnce:
	"""Streams its one reply; the first stream is cut halfway (a retryable error), later ones are whole."""

	name = "cutonce"
	model = "c1"

	def __init__(self, reply: dict[str, Any]) -> None:
		self.text = json.dumps(reply, ensure_ascii=True)
		self.streams = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		return ModelResponse(text=self.text, usage=Usage(input_tokens=7, output_tokens=3))

	async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		self.streams += 1
		cut = len(self.text) * 3 // 4 if self.streams == 1 else None
		sent = self.text[:cut]
		for i in range(0, len(sent), 4):
			yield TextDelta(sent[i : i + 4])
		if cut is None:
			yield ModelResponse(text=self.text, usage=Usage(input_tokens=7, output_tokens=3))


class RetryOnce(Capability):
	"""Makes a failed model call once more, on the same model (a third party's retry)."""

	name: ClassVar[str] = "acme-retry"
	model_calls = 2

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		try:
			return await call(request)
		except ProviderError:
			return await call(request)


SAID = "Two and three make five, as asked."
ONE_REPLY = {"commands": [finish({"result": "5"}, human_message=SAID)]}


def _attempts(events: list[Event]) -> dict[int, str]:
	text: dict[int, str] = {}
	for e in events:
		if e.name == "text:delta" and e.field == "humanMessage":  # type: ignore[attr-defined]
			text[e.attempt] = text.get(e.attempt, "") + e.text  # type: ignore[attr-defined]
	return text


async def test_a_call_made_again_on_the_same_model_streams_as_the_next_attempt() -> None:
	"""The cut reply's text is attempt 1, the whole one attempt 2: a consumer can drop the first."""
	model = CutOnce(ONE_REPLY)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="S", model=model, capabilities=[RetryOnce()])
	events, result = await collect(agent)
	assert model.streams == 2
	text = _attempts(events)
	assert sorted(text) == [1, 2]
	assert text[1] and SAID.startswith(text[1]) and text[1] != SAID  # cut before its end
	assert text[2] == SAID == result.human_message
	ready = [e for e in events if e.name == "command:ready"]
	assert [e.attempt for e in ready] == [2]  # type: ignore[attr-defined]
	assert {e.model for e in events if e.name == "text:delta"} == {"cutonce:c1"}  # type: ignore[attr-defined]


async def test_a_fallback_streams_the_next_model_as_the_next_attempt() -> None:
	"""The model that failed wrote attempt 1; the next model of the chain writes attempt 2."""
	cut = CutOnce(ONE_REPLY)
	events, result = await collect(agent_with(cut, Streamer([ONE_REPLY])))
	text = _attempts(events)
	assert sorted(text) == [1, 2] and text[2] == SAID == result.human_message
	models = {e.attempt: e.model for e in events if e.name == "text:delta"}  # type: ignore[attr-defined]
	assert models == {1: "cutonce:c1", 2: "streamer:s1"}


async def test_each_step_counts_its_attempts_from_one() -> None:
	"""A second step's reply is its first attempt again."""
	events, _ = await collect(agent_with(Streamer(REPLIES)))
	steps = {(e.step, e.attempt) for e in events if e.name in STREAM_EVENTS}  # type: ignore[attr-defined]
	assert steps == {(1, 1), (2, 1)}


async def test_a_lone_surrogate_in_a_reply_streams_as_text_that_encodes() -> None:
	"""A reply with a lone ``\\ud800`` (refused, asked again) previews only text UTF-8 can carry."""
	lone = '{"commands":[{"type":"finish","status":"success","humanMessage":"x\\ud800y"}]}'
	model = Streamer([{"commands": [finish("ok", human_message="fine")]}], size=4)
	model.texts.insert(0, lone)
	events, result = await collect(agent_with(model))
	assert result.human_message == "fine"
	previews = [e for e in events if e.name in STREAM_EVENTS]
	said = [e for e in previews if e.name == "text:delta" and e.field == "humanMessage"]
	assert "".join(e.text for e in said if e.step == 1) == "x\ufffdy"
	for event in previews:  # what an AG-UI stream or a chat sends on
		json.dumps(dataclasses.asdict(event), ensure_ascii=False, default=str).encode()


async def test_what_comes_after_the_reply_ends_is_not_previewed() -> None:
	"""Commands after a finish or a question do not run: none of them is previewed either."""
	tail = [finish("no", human_message="not this"), call_tool("local.add", a=1, b=2)]
	replies = [
		{"commands": [finish("ok", human_message="this"), *tail]},
	]
	events, result = await collect(agent_with(Streamer(replies, size=5)))
	assert result.human_message == "this"
	said = [e for e in events if e.name == "text:delta" and e.field == "humanMessage"]
	assert "".join(e.text for e in said) == "this"
	assert {e.index for e in events if e.name in STREAM_EVENTS} == {0}


# a call that fails after some of its text streamed: the text is marked cut ----------------


def _cut_marks(events: list[Event]) -> list[tuple[int, int, str]]:
	return [
		(e.step, e.attempt, e.field)  # type: ignore[attr-defined]
		for e in events
		if e.name == "text:delta" and e.cut  # type: ignore[attr-defined]
	]


async def test_text_of_a_call_made_again_is_marked_cut_before_the_next_attempt() -> None:
	"""The failed call's text is followed at once by an empty delta marked ``cut``: a consumer
	learns the text is not the reply when the call fails, not when (or if) the next one writes."""
	model = CutOnce({"commands": [finish({"result": "5"}, human_message=SAID)]})
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="S", model=model, capabilities=[RetryOnce()])
	events, result = await collect(agent)
	assert _cut_marks(events) == [(1, 1, "output"), (1, 1, "humanMessage")]  # as they streamed
	names = [(e.name, getattr(e, "attempt", 0), getattr(e, "cut", False)) for e in events]
	cuts = [i for i, name in enumerate(names) if name == ("text:delta", 1, True)]
	assert cuts == [cuts[0], cuts[0] + 1]  # together, once the call failed
	assert all(a == 1 for n, a, c in names[: cuts[0]] if n == "text:delta")
	assert all(a == 2 for n, a, c in names[cuts[-1] + 1 :] if n == "text:delta")
	assert all(getattr(e, "text", "?") == "" for e in events if getattr(e, "cut", False))
	assert _attempts(events)[2] == SAID == result.human_message


async def test_text_of_a_call_that_ends_the_run_is_marked_cut_before_the_error() -> None:
	"""A provider that fails mid-message ends the run: its text is marked cut, then the error."""

	class Broken(Streamer):
		async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
			yield TextDelta('{"commands":[{"type":"finish","humanMessage":"Two and three ')
			yield TextDelta("ma")
			raise ProviderError("the request was rejected (400)", provider="streamer")

	async with agent_with(Broken(REPLIES)).stream("go") as run:
		with pytest.raises(RunError, match="rejected"):
			await run.result()
		events = [event async for event in run]
	assert _cut_marks(events) == [(1, 1, "humanMessage")]
	names = [e.name for e in events]
	assert names.index("error") > max(i for i, e in enumerate(events) if e.name == "text:delta")


async def test_a_call_that_completes_marks_nothing_cut() -> None:
	"""A whole reply, or a call that fails before any text, has no ``cut`` delta."""
	events, _ = await collect(agent_with(Streamer(REPLIES)))
	assert _cut_marks(events) == []
	events, _ = await collect(agent_with(Streamer(REPLIES, cut=3), ScriptedModel(REPLIES)))
	assert _cut_marks(events) == []


@pytest.mark.parametrize("history", [42, "state", [("messages", [])], {"messages": 5}])
async def test_stream_refuses_a_history_that_is_no_saved_run_as_run_does(history: Any) -> None:
	"""``stream(history=...)`` reads the history as ``run`` does: what is no saved state is refused.

	It gave a bare TypeError for a number, and took a list of pairs for a state's dict.
	"""
	from openmolt import ConfigurationError

	agent = agent_with(ScriptedModel(REPLIES))
	with pytest.raises(ConfigurationError) as by_run:
		await agent.run("go", history=history)
	with pytest.raises(ConfigurationError) as by_stream:
		agent.stream("go", history=history)
	said = str(by_stream.value)
	assert said.startswith("stream(history=...)")
	assert said.partition(" ")[2] == str(by_run.value).partition(" ")[2]
