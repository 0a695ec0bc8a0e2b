"""A capability around the model call: the request for another of the agent's models (``run.models``).

Model fallback is one such capability (`openmolt_core.capabilities.fallback`); these tests hold
the kernel's side for any capability: the request built for another model, sent to that model,
the journal recording who answered, and the numbering of the events the hooks emit.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from openmolt import Capability, OpenMolt
from openmolt_core.errors import ConfigurationError, ProviderError
from openmolt_core.events import Event
from openmolt_core.hooks import Run
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.structured import SchemaDialect, fit
from openmolt_core.testing import ScriptedModel, call_tool, finish

from ._journal import Journal, drive

pytestmark = pytest.mark.anyio


def add(a: int, b: int) -> int:
	"""Add two numbers.

	Args:
		a: One.
		b: Two.
	"""
	return a + b


class Dialected(ScriptedModel):
	"""A scripted model that declares a structured-output dialect."""

	def schema_dialect(self, model: str) -> SchemaDialect:
		return SchemaDialect(f"dialect-of-{self.name}")


# A dialect sends the finish output as JSON text, which only its restore decodes.
ENCODED = {"commands": [{"type": "finish", "status": "success", "output": '{"result": "ok"}'}]}


class Substitute(Capability):
	"""Sends every call of the agent's models to another of them (a third party's routing)."""

	name: ClassVar[str] = "acme-route"

	def __init__(self, to: str) -> None:
		self.to = to
		self.seen: list[tuple[str | None, tuple[str, ...]]] = []

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		models = run.models
		assert models is not None
		self.seen.append((request.model_id, models.ids))
		return await call(models.request(self.to))


def routed(first: Any, second: Any, *caps: Capability) -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="R", model=[first, second], tools=[add], capabilities=list(caps))


async def test_a_capability_sends_the_step_to_another_model_which_the_journal_records() -> None:
	"""The request is built for that model (its prompt, its fitted schema), goes to its provider,
	is read its way; the journal says who answered and a replay reads the step the same."""

	def make() -> tuple[Any, ScriptedModel, Dialected, Substitute]:
		primary = ScriptedModel([], name="first")
		other = Dialected([call_tool("local.add", a=2, b=2), json.dumps(ENCODED)], name="strict")
		route = Substitute("strict:scripted")
		return routed(primary, other, route), primary, other, route

	agent, primary, other, route = make()
	outputs: list[Any] = []
	agent.on("llmOutput", outputs.append)
	journal = Journal()
	live = await drive(agent, journal, "run-1")
	assert primary.requests == []  # asked of nobody but the other model
	assert route.seen == [("first:scripted", ("first:scripted", "strict:scripted"))] * 2
	sent = other.requests[0]
	_, envelope = agent._tool_set().envelope()
	assert sent.response_schema == fit(envelope, SchemaDialect("dialect-of-strict")).schema
	assert (sent.response_mode, sent.model_id) == ("strict", "strict:scripted")
	assert "Examples:" not in sent.system  # its own prompt: enforced output needs none
	assert '"output":{"result":"ok"}' in live.messages[-2].content  # restored its way
	assert live.models == ["strict:scripted"] * 2
	assert [e.model for e in outputs] == ["strict:scripted"] * 2
	assert journal.values["model:1"]["model"] == "strict:scripted"
	again, primary, other, route = make()
	replayed = await drive(again, Journal(replay=journal.values), "run-1")
	assert replayed.to_dict() == live.to_dict()
	assert other.requests == [] and route.seen == []  # answered by the journal


class Around(Capability):
	"""Notes the model each call it wraps was built for."""

	name: ClassVar[str] = "acme-around"

	def __init__(self) -> None:
		self.sent: list[str | None] = []

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		self.sent.append(request.model_id)
		return await call(request)


async def test_a_capability_around_the_call_sees_each_model_the_fallback_tries() -> None:
	"""The fallback capability is outermost: every other wrap_model sees each model's request."""

	class Down:
		name, model = "down", "m"

		async def generate(self, request: ModelRequest) -> ModelResponse:
			raise ProviderError("busy", provider="down", status_code=529, retryable=True)

	down = Down()
	around = Around()
	agent = routed(down, ScriptedModel([finish(result="ok")], name="backup"), around)
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert around.sent == ["down:m", "backup:scripted"]
	assert type(agent.capabilities[0]).name == "model-fallback"


class Rebuilt(Capability):
	"""Builds a new request (the system prompt edited) without copying its model_id."""

	name: ClassVar[str] = "acme-rebuild"

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		return await call(
			ModelRequest(
				model=request.model,
				system=request.system + "\n(edited)",
				messages=request.messages,
				response_schema=request.response_schema,
				config=request.config,
				response_mode=request.response_mode,
			)
		)


async def test_a_request_rebuilt_without_its_model_id_goes_to_the_model_it_was_built_for() -> None:
	"""An inner wrap_model that builds a new request keeps the fallback's model: the backup answers.

	Before, the request lost its model_id and went to the model the call was made for: the
	primary was asked twice while model:fallback said the backup was.
	"""

	def busy(request: ModelRequest) -> ModelResponse:
		raise ProviderError("busy", provider="down", status_code=529, retryable=True)

	primary = ScriptedModel([busy], name="primary")
	backup = ScriptedModel([finish(result="ok")], name="backup")
	agent = routed(primary, backup, Rebuilt())
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert (primary.calls, backup.calls) == (1, 1)
	assert result.state.models == ["backup:scripted"]
	assert backup.requests[0].system.endswith("(edited)")


async def test_a_request_for_a_model_the_agent_lacks_is_refused_naming_its_models() -> None:
	agent = routed(ScriptedModel([]), ScriptedModel([], name="two"), Substitute("openai:nope"))
	with pytest.raises(ConfigurationError, match=r"'openai:nope' is not one of agent 'R'.*two"):
		await agent.run("go")


async def test_a_request_outside_a_model_call_is_refused() -> None:
	class Early(Capability):
		name: ClassVar[str] = "acme-early"

		async def before_model(self, run: Run) -> None:
			assert run.models is not None
			run.models.request(run.models.ids[0])

	agent = OpenMolt(entry_points=False).create_agent(
		name="E", model=ScriptedModel([finish(result="ok")]), capabilities=[Early()]
	)
	with pytest.raises(ConfigurationError, match="no call of the agent's models is in progress"):
		await agent.run("go")


@pytest.mark.parametrize("count", [-1, 1.5, "2", True])
def test_model_call_events_must_be_a_count(count: Any) -> None:
	class Wrong(Capability):
		name: ClassVar[str] = "acme-wrong"
		model_call_events = count

	with pytest.raises(
		ConfigurationError, match=r"Wrong\.model_call_events must be a whole number"
	):
		OpenMolt(entry_points=False).create_agent(
			name="W", model=ScriptedModel([]), capabilities=[Wrong()]
		)


@pytest.mark.parametrize("count", [0, -1, 1.5, "2", True])
def test_model_calls_must_be_a_count_of_one_or_more(count: Any) -> None:
	class Wrong(Capability):
		name: ClassVar[str] = "acme-wrong"
		model_calls = count

	with pytest.raises(ConfigurationError, match=r"Wrong\.model_calls must be a whole number"):
		OpenMolt(entry_points=False).create_agent(
			name="W", model=ScriptedModel([]), capabilities=[Wrong()]
		)


@dataclass(slots=True, kw_only=True)
class Noted(Event):
	"""A third party's event about a model call."""

	name: str = "acme-note:call"


class Note(Capability):
	"""Emits one event per model call, from inside it (``model_call_events`` reserves it)."""

	name: ClassVar[str] = "acme-note"
	events: ClassVar[Mapping[str, type[Event]]] = {"acme-note:call": Noted}
	model_call_events = 1

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		await run.emit(Noted(agent=run.agent, step=run.step))
		return await call(request)


async def test_events_emitted_inside_a_model_call_keep_later_numbers_on_replay() -> None:
	"""They take the call's reserved numbers: a replay (which runs no wrap_model) numbers the
	events after the call as they were."""

	def make(events: list[Any]) -> Any:
		model = ScriptedModel([call_tool("local.add", a=1, b=2), finish(result="3")])
		agent = OpenMolt(entry_points=False).create_agent(
			name="N", model=model, tools=[add], capabilities=[Note()]
		)
		for name in ("acme-note:call", "llmOutput", "commandsQueued", "finish"):
			agent.on(name, events.append)
		return agent

	live: list[Any] = []
	journal = Journal()
	state = await drive(make(live), journal, "run-1")
	notes = [e.seq for e in live if e.name == "acme-note:call"]
	outputs = [e.seq for e in live if e.name == "llmOutput"]
	assert notes == [o + 1 for o in outputs]  # in the call's block, after its llmOutput
	replayed: list[Any] = []
	again = await drive(make(replayed), Journal(journal.values, deliver=True), "run-1")
	assert again.seq == state.seq
	outside = {(e.name, e.step): e.seq for e in live if e.name in ("commandsQueued", "finish")}
	assert {(e.name, e.step): e.seq for e in replayed} == outside and outside


async def test_events_of_a_hook_inside_the_fallback_keep_later_numbers_on_replay() -> None:
	"""Inside the fallback, a wrap_model runs once per model tried: its events take numbers
	reserved for each (they overflowed the call's block, so a replay numbered later events
	differently from the live run)."""

	def busy(request: ModelRequest) -> ModelResponse:
		raise ProviderError("busy", provider="first", status_code=529, retryable=True)

	def make(events: list[Any]) -> Any:
		first = ScriptedModel([busy, busy], name="first")
		backup = ScriptedModel([call_tool("local.add", a=1, b=2), finish(result="3")], name="b")
		agent = routed(first, backup, Note())
		for name in ("acme-note:call", "model:fallback", "llmOutput", "commandsQueued", "finish"):
			agent.on(name, events.append)
		return agent

	live: list[Any] = []
	journal = Journal()
	state = await drive(make(live), journal, "run-1")
	seqs = [e.seq for e in live]
	assert len(set(seqs)) == len(seqs)
	assert [e.name for e in live].count("acme-note:call") == 4  # two models tried, two steps
	replayed: list[Any] = []
	again = await drive(make(replayed), Journal(journal.values, deliver=True), "run-1")
	assert again.seq == state.seq
	outside = {(e.name, e.step): e.seq for e in live if e.name in ("commandsQueued", "finish")}
	assert {(e.name, e.step): e.seq for e in replayed} == outside and outside


def test_the_loop_names_no_model_fallback() -> None:
	"""Fallback attaches as a capability: the loop's modules do not name it (kernel.md)."""
	from pathlib import Path

	import openmolt_core

	root = Path(openmolt_core.__file__).parent
	for module in ("agent.py", "_execute.py"):
		text = (root / module).read_text().lower()
		assert "fallback" not in text and "fall back" not in text and "fell_back" not in text
