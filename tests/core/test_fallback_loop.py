"""Model fallback in the loop: same messages, a request per model, a record of who answered."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from openmolt import OpenMolt, ProviderError, RunError, RunState
from openmolt_core.errors import ConfigurationError
from openmolt_core.fallback import ModelChain, ModelSlot, fallback_reason, model_list, split_id
from openmolt_core.llm import ModelRequest, ModelResponse, Usage
from openmolt_core.structured import SchemaDialect, fit
from openmolt_core.testing import ScriptedModel, call_tool, finish

from ._journal import Journal, drive

pytestmark = pytest.mark.anyio

REPORT = {
	"type": "object",
	"properties": {"result": {"type": "string"}},
	"required": ["result"],
	"additionalProperties": False,
}


class Down:
	"""A provider that fails every call with a given error."""

	def __init__(self, error: BaseException, name: str = "down") -> None:
		self.error = error
		self.name = name
		self.model = "m"
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(request)
		raise self.error


def overloaded() -> ProviderError:
	return ProviderError("overloaded (529)", provider="down", status_code=529, retryable=True)


def add(a: int, b: int) -> int:
	"""Add two numbers.

	Args:
		a: One.
		b: Two.
	"""
	return a + b


def agent_with(*models: Any, **options: Any) -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(
		name="F", model=list(models), tools=[add], output_schema=REPORT, **options
	)


@pytest.mark.parametrize(
	("error", "reason"),
	[
		(ProviderError("x", provider="p", status_code=500, retryable=True), "server_error"),
		(ProviderError("x", provider="p", status_code=502, retryable=True), "server_error"),
		(ProviderError("x", provider="p", status_code=429, retryable=True), "rate_limited"),
		(ProviderError("x", provider="p", status_code=503, retryable=True), "overloaded"),
		(ProviderError("x", provider="p", status_code=529, retryable=True), "overloaded"),
		(ProviderError("x", provider="p", status_code=408, retryable=True), "timeout"),
		(ProviderError("x", provider="p", retryable=True), "unreachable"),
		(TimeoutError("slow"), "timeout"),
		(ProviderError("key rejected", provider="p", status_code=401), None),
		(ProviderError("bad request", provider="p", status_code=400), None),
		(ProviderError("no model", provider="p", status_code=404), None),
		(ConfigurationError("no key"), None),
		(ValueError("a bug"), None),
	],
)
def test_which_failures_fall_back(error: BaseException, reason: str | None) -> None:
	"""Only what the retry policy gave up on moves to the next model."""
	assert fallback_reason(error) == reason


def test_a_timeout_cause_is_told_from_an_unreachable_host() -> None:
	"""A retryable error without status caused by a timeout is a timeout."""

	class ReadTimeout(Exception):
		pass

	error = ProviderError("could not reach", provider="p", retryable=True)
	error.__cause__ = ReadTimeout()
	assert fallback_reason(error) == "timeout"


async def test_a_failed_step_goes_to_the_next_model_with_the_same_messages() -> None:
	"""The fallback model gets the same conversation; the next step starts at the primary again."""
	primary = ScriptedModel([lambda r: (_ for _ in ()).throw(overloaded()), finish(result="ok")])
	primary.name = "first"
	backup = ScriptedModel([call_tool("local.add", a=1, b=2)], name="second")
	events: list[Any] = []
	agent = agent_with(primary, backup)
	agent.on("model:fallback", events.append)
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert [m.content for m in backup.requests[0].messages] == [
		m.content for m in primary.requests[0].messages
	]
	assert backup.requests[0].system == primary.requests[0].system
	assert result.state.models == ["second:scripted", "first:scripted"]
	[event] = events
	assert (event.from_model, event.to_model, event.reason) == (
		"first:scripted",
		"second:scripted",
		"overloaded",
	)
	assert event.status_code == 529 and "overloaded" in event.error and event.step == 1
	assert set(result.usage_by_model) == {"first:scripted", "second:scripted"}
	assert result.usage_by_model["second:scripted"].calls == 1
	assert result.to_dict()["usage_by_model"]["first:scripted"]["calls"] == 1
	assert agent.models == ["first:scripted", "second:scripted"]


async def test_authentication_and_validation_errors_do_not_fall_back() -> None:
	"""A rejected key fails the run clearly; the next model is never asked."""
	primary = Down(ProviderError("the API key was rejected (401)", provider="p", status_code=401))
	backup = ScriptedModel([finish(result="never")])
	with pytest.raises(RunError, match="API key was rejected") as info:
		await agent_with(primary, backup).run("go")
	assert backup.calls == 0
	assert info.value.result.state.models == []


async def test_when_every_model_fails_the_error_names_each() -> None:
	"""The run fails with every model's failure in the message, its state kept."""
	a = Down(overloaded(), name="a")
	b = Down(
		ProviderError("server error (500)", provider="b", status_code=500, retryable=True), name="b"
	)
	with pytest.raises(RunError, match=r"every model failed: down: overloaded.*b: server error"):
		await agent_with(a, b).run("go")


@pytest.mark.parametrize(
	"last",
	[
		TimeoutError("read timed out"),
		ProviderError("server error (500)", provider="b", status_code=500, retryable=True),
	],
)
async def test_when_every_model_fails_the_error_names_each_whatever_failed_last(
	last: BaseException,
) -> None:
	"""A timeout of the last model still names the first's failure (it said only 'TimeoutError')."""
	a = Down(overloaded(), name="a")
	b = Down(last, name="b")
	with pytest.raises(RunError, match=r"every model failed: down: overloaded \(529\); b") as info:
		await agent_with(a, b).run("go")
	assert "timed out" in str(info.value) or "server error" in str(info.value)
	cause = info.value.__cause__
	assert isinstance(cause, ProviderError) and cause.retryable


async def test_a_fallback_model_without_its_key_fails_the_run_with_its_state() -> None:
	"""The first model was asked (and failed): a backup missing its key is a RunError naming both
	failures, with the state to resume once the key is set, not a ConfigurationError without it."""
	from openmolt_core.errors import ConfigurationError

	a = Down(overloaded(), name="a")
	b = Down(ConfigurationError("openai: no API key; set OPENMOLT_OPENAI_API_KEY"), name="b")
	with pytest.raises(
		RunError, match=r"every model failed: down: overloaded \(529\); b:m: .*no API key"
	) as info:
		await agent_with(a, b).run("go")
	assert info.value.result is not None and info.value.result.state.messages
	assert len(a.requests) == 1 and len(b.requests) == 1


def test_model_lists_are_checked() -> None:
	"""An empty list or a model listed twice is refused with the fix."""
	with pytest.raises(ConfigurationError, match="at least one"):
		model_list([])
	with pytest.raises(ConfigurationError, match="listed twice"):
		model_list("openai:gpt-5", ["openai:gpt-5"])
	assert model_list(["a:b"], ["c:d"]) == ["a:b", "c:d"]


# each model gets its own request ------------------------------------------------------------


class Dialected(ScriptedModel):
	"""A scripted model that declares a structured-output dialect (closed objects, no limits)."""

	def schema_dialect(self, model: str) -> SchemaDialect:
		return SchemaDialect(f"dialect-of-{self.name}")


# Without an output schema, a dialect sends the finish output as JSON text (it has no other strict
# form), which the dialect's restore decodes; a model without a dialect gets no such decoding.
ENCODED = {"commands": [{"type": "finish", "status": "success", "output": '{"result": "ok"}'}]}


def free_output(*models: Any, **options: Any) -> Any:
	"""An agent with no output schema (any JSON value is a valid output)."""
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="F", model=list(models), tools=[add], **options)


async def test_each_model_gets_its_prompt_and_schema_and_replies_are_read_its_way() -> None:
	"""The fallback model's request has its dialect's schema and prompt; its reply, its restore."""
	primary = Down(overloaded())
	backup = Dialected([json.dumps(ENCODED)], name="strict")
	agent = free_output(primary, backup)
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert result.output == {"result": "ok"}  # decoded: read as the backup's reply
	sent = backup.requests[0]
	_, envelope = agent._tool_set().envelope()
	assert sent.response_schema == fit(envelope, SchemaDialect("dialect-of-strict")).schema
	assert sent.response_schema != primary.requests[0].response_schema
	assert sent.response_mode == "strict"
	assert primary.requests[0].response_mode is None
	assert "Examples:" in primary.requests[0].system and "Examples:" not in sent.system


# a replayed run is deterministic ------------------------------------------------------------


async def test_a_replayed_run_parses_each_step_as_the_model_that_answered() -> None:
	"""The journal keeps which model answered: a replay reads its reply and usage the same way."""

	def make() -> Any:
		return free_output(
			Down(overloaded()),
			Dialected([call_tool("local.add", a=2, b=2), json.dumps(ENCODED)], name="strict"),
		)

	journal = Journal()
	live = await drive(make(), journal, "run-1")
	assert journal.values["model:1"]["model"] == "strict:scripted"
	reply = live.messages[-2]  # the finish, as restored by the dialect that wrote it
	assert reply.role == "assistant" and '"output":{"result":"ok"}' in reply.content
	replayed = await drive(make(), Journal(replay=journal.values), "run-1")
	assert replayed.to_dict() == live.to_dict()
	assert replayed.models == ["strict:scripted", "strict:scripted"]


async def test_models_and_usage_survive_a_resume_from_json() -> None:
	"""The state's per-model record round-trips through JSON."""
	state = RunState(models=["a:b"], usage_by_model={"a:b": Usage(3, 4, cost_usd=0.5, calls=1)})
	again = RunState.from_dict(json.loads(json.dumps(state.to_dict())))
	assert again.models == ["a:b"]
	assert again.usage_by_model["a:b"].cost_usd == 0.5


async def test_two_provider_objects_of_the_same_name_get_distinct_ids() -> None:
	"""Ids stay unique, so usage per model does not mix two models up."""

	def factory(m: Any) -> Callable[[], Any]:
		return lambda: m

	a, b = ScriptedModel([]), ScriptedModel([])
	chain = ModelChain(
		[
			ModelSlot("scripted:scripted", "", "s", factory(a)),
			ModelSlot("scripted:scripted", "", "s", factory(b)),
		]
	)
	assert [s.id for s in chain.slots] == ["scripted:scripted#1", "scripted:scripted#2"]


@pytest.mark.parametrize(
	("model_id", "parts"),
	[
		("openai:gpt-5-mini", ("openai", "gpt-5-mini")),
		("openai:gpt-5-mini#2", ("openai", "gpt-5-mini")),
		("openrouter:meta/llama:free#10", ("openrouter", "meta/llama:free")),
		("custom:m#beta", ("custom", "m#beta")),
	],
)
def test_an_id_splits_into_provider_and_model_without_the_copy_number(
	model_id: str, parts: tuple[str, str]
) -> None:
	"""split_id undoes unique_ids' #n, which no provider knows, and keeps the rest of the name."""
	assert split_id(model_id) == parts


async def test_a_compaction_summary_falls_back_too() -> None:
	"""The summary of a long run goes to the next model when the first is down."""
	from openmolt_core.compaction import CompactionConfig

	def summary_or_step(request: ModelRequest) -> Any:
		if "previousSummary" in request.messages[0].content:
			return "a summary"
		return call_tool("local.add", a=1, b=1)

	steps = [summary_or_step] * 12 + [finish(result="ok")] * 3
	backup = ScriptedModel(steps, name="backup", usage=Usage(5_000, 5))
	events: list[Any] = []
	agent = agent_with(
		Down(overloaded()),
		backup,
		compaction=CompactionConfig(threshold_tokens=4_000, keep_steps=2),
		max_steps=8,
	)
	agent.on("model:fallback", events.append)
	result = await agent.run("go")
	assert result.state.compaction is not None
	summaries = [r for r in backup.requests if "previousSummary" in r.messages[0].content]
	assert summaries and all(r.model == "scripted" for r in summaries)
	assert len(events) == len(backup.requests)


async def test_a_summary_a_fallback_model_wrote_costs_that_model_s_price() -> None:
	"""The summary's response names the model that answered, so it is priced at its price."""
	from openmolt_core.compaction import CompactionConfig

	class PricedDown(Down):
		def price(self, model: str) -> tuple[float, float, float, None]:
			return (1000.0, 0.0, 1000.0, None)

	def summary_or_step(request: ModelRequest) -> Any:
		if "previousSummary" in request.messages[0].content:
			return "a summary"
		return call_tool("local.add", a=1, b=1)

	steps = [summary_or_step] * 12 + [finish(result="ok")] * 3
	usage = Usage(5_000, 5)
	backup = ScriptedModel(steps, name="backup", usage=usage, price=(1.0, 0.0, 1.0, None))
	agent = agent_with(
		PricedDown(overloaded()),
		backup,
		compaction=CompactionConfig(threshold_tokens=4_000, keep_steps=2),
		max_steps=8,
	)
	result = await agent.run("go")
	assert result.state.compaction is not None
	each = (5_000 + 5) / 1e6  # one call at the backup's price
	assert result.usage.cost_usd == pytest.approx(len(backup.requests) * each)


async def test_a_less_constrained_fallback_gets_the_schemas_the_first_turn_left_out() -> None:
	"""A strict primary lists tools without input schemas; an unconstrained fallback is told them."""
	primary = Dialected([lambda r: (_ for _ in ()).throw(overloaded())], name="strict")
	backup = ScriptedModel([finish(result="ok")], name="plain")
	agent = agent_with(primary, backup)
	result = await agent.run("go")
	assert result.status == "success", result.error
	first = json.loads(backup.requests[0].messages[0].content)
	assert [t["tool"] for t in first["tools"]] == ["local.add"]
	assert "inputSchema" not in first["tools"][0]  # the strict reply schema holds it
	assert "Input schemas of your tools" not in primary.requests[0].system
	tail = backup.requests[0].system.split("Input schemas of your tools: ", 1)[1]
	assert json.loads(tail)["local.add"]["required"] == ["a", "b"]


async def test_fallback_events_keep_every_later_event_number_on_replay() -> None:
	"""model:fallback events are numbered from the model call's block: a replay numbers alike."""

	def make(events: list[Any]) -> Any:
		agent = agent_with(
			Down(overloaded()),
			ScriptedModel([call_tool("local.add", a=1, b=2), finish(result="3")], name="backup"),
		)
		for name in ("model:fallback", "llmOutput", "commandsQueued", "finish"):
			agent.on(name, events.append)
		return agent

	live_events: list[Any] = []
	journal = Journal()
	live = await drive(make(live_events), journal, "run-1")
	seqs = [e.seq for e in live_events]
	assert len(set(seqs)) == len(seqs)  # each number once
	fallbacks = [e for e in live_events if e.name == "model:fallback"]
	outputs = [e for e in live_events if e.name == "llmOutput"]
	assert [f.seq for f in fallbacks] == [o.seq + 1 for o in outputs]  # in the call's block
	replayed_events: list[Any] = []
	replayed = await drive(make(replayed_events), Journal(journal.values, deliver=True), "run-1")
	assert replayed.seq == live.seq
	# What runs outside the journaled steps is emitted again, with the numbers it had live.
	outside = {
		(e.name, e.step): e.seq for e in live_events if e.name in ("commandsQueued", "finish")
	}
	again = {(e.name, e.step): e.seq for e in replayed_events}
	assert again == outside and outside


def test_the_fingerprint_knows_the_fallback_models_and_tool_search() -> None:
	"""A durable run is recovered only by an agent with the same models and tool loading."""

	def make(*models: str, **options: Any) -> str:
		om = OpenMolt()
		agent = om.create_agent(name="F", model=list(models), tools=[add], **options)
		return str(agent.fingerprint())

	one = make("openai:gpt-5-mini")
	assert make("openai:gpt-5-mini") == one
	two = make("openai:gpt-5-mini", "anthropic:claude-sonnet-4-5")
	assert two not in (one, make("openai:gpt-5-mini", "google:gemini-2.5-flash"))
	assert make("openai:gpt-5-mini", tool_loading="search") != one
