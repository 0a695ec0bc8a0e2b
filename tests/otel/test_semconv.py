"""The GenAI semantic conventions beyond the span tree: who answered, and the client metrics."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics

from openmolt import OpenMolt, RunError
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse, Usage
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_otel import Telemetry

pytestmark = pytest.mark.anyio

TOKEN_BUCKETS = [
	1,
	4,
	16,
	64,
	256,
	1024,
	4096,
	16384,
	65536,
	262144,
	1048576,
	4194304,
	16777216,
	67108864,
]
DURATION_BUCKETS = [
	0.01,
	0.02,
	0.04,
	0.08,
	0.16,
	0.32,
	0.64,
	1.28,
	2.56,
	5.12,
	10.24,
	20.48,
	40.96,
	81.92,
]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def _provider(exporter: InMemorySpanExporter) -> TracerProvider:
	provider = TracerProvider()
	provider.add_span_processor(SimpleSpanProcessor(exporter))
	return provider


def shout(text: str) -> str:
	"""Upper-case text."""
	return text.upper()


def _overloaded(request: Any) -> Any:
	raise ProviderError("overloaded (529)", provider="openai", status_code=529, retryable=True)


async def test_a_fallback_s_answer_names_the_model_and_provider_that_gave_it(
	exporter: InMemorySpanExporter,
) -> None:
	"""The chat span's gen_ai.response.model and provider are the fallback's when it answered."""
	primary = ScriptedModel([_overloaded, finish(result="ok")], name="openai")
	primary.model = "gpt-x"
	backup = ScriptedModel([call_tool("local.shout", text="a")], name="anthropic")
	backup.model = "claude-x"
	om = OpenMolt(entry_points=False)
	Telemetry(tracer_provider=_provider(exporter)).instrument(om)
	agent = om.create_agent(name="F", model=[primary, backup], tools=[shout])
	result = await agent.run("go")
	assert result.status == "success", result.error
	chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
	assert [s.name for s in chats] == ["chat gpt-x", "chat gpt-x"]
	first, second = (dict(s.attributes or {}) for s in chats)
	assert first["gen_ai.request.model"] == "gpt-x"
	assert first["gen_ai.response.model"] == "claude-x"
	assert first["gen_ai.provider.name"] == "anthropic"
	assert second["gen_ai.response.model"] == "gpt-x"


async def test_a_fallback_of_the_same_model_is_named_as_its_provider_knows_it(
	exporter: InMemorySpanExporter,
) -> None:
	"""Two provider objects of one model (ids ``#1``, ``#2``): the span names the model, not the id."""
	primary = ScriptedModel([_overloaded], name="openai")
	backup = ScriptedModel([finish(result="ok")], name="openai")
	primary.model = backup.model = "gpt-x"
	om = OpenMolt(entry_points=False)
	Telemetry(tracer_provider=_provider(exporter)).instrument(om)
	agent = om.create_agent(name="F", model=[primary, backup])
	assert agent.models == ["openai:gpt-x#1", "openai:gpt-x#2"]
	result = await agent.run("go")
	assert result.state.models == ["openai:gpt-x#2"]
	[chat] = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
	attributes = dict(chat.attributes or {})
	assert attributes["gen_ai.response.model"] == "gpt-x"  # was "gpt-x#2"
	assert attributes["gen_ai.provider.name"] == "openai"


def _points(reader: InMemoryMetricReader) -> dict[str, tuple[Any, list[HistogramDataPoint]]]:
	data = reader.get_metrics_data()
	out: dict[str, tuple[Any, list[HistogramDataPoint]]] = {}
	assert data is not None
	for resource in data.resource_metrics:
		for scope in resource.scope_metrics:
			for metric in scope.metrics:
				out[metric.name] = (metric, list(metric.data.data_points))  # type: ignore[arg-type]
	return out


async def test_model_calls_record_the_client_token_usage_and_duration_metrics(
	exporter: InMemorySpanExporter,
) -> None:
	"""gen_ai.client.token.usage ({token}, by gen_ai.token.type) and gen_ai.client.operation.duration
	(s), with the conventions' bucket boundaries and attributes; a failed call has error.type."""
	reader = InMemoryMetricReader()
	meters = MeterProvider(metric_readers=[reader])
	model = ScriptedModel(
		[[call_tool("local.shout", text="hi")], finish(result="ok")],
		usage=Usage(input_tokens=100, output_tokens=20),
	)
	om = OpenMolt(entry_points=False)
	Telemetry(tracer_provider=_provider(exporter), meter_provider=meters).instrument(om)
	await om.create_agent(name="M", model=model, tools=[shout]).run("go")
	points = _points(reader)
	tokens, token_points = points[gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE]
	assert tokens.unit == "{token}"
	by_type = {p.attributes["gen_ai.token.type"]: p for p in token_points}
	assert set(by_type) == {
		gen_ai_attributes.GenAiTokenTypeValues.INPUT.value,
		gen_ai_attributes.GenAiTokenTypeValues.OUTPUT.value,
	}
	assert by_type["input"].sum == 200 and by_type["input"].count == 2
	assert by_type["output"].sum == 40
	assert list(by_type["input"].explicit_bounds) == TOKEN_BUCKETS
	assert dict(by_type["input"].attributes) == {
		"gen_ai.operation.name": "chat",
		"gen_ai.provider.name": "custom",
		"gen_ai.request.model": "scripted",
		"gen_ai.response.model": "scripted",
		"gen_ai.token.type": "input",
	}
	duration, duration_points = points[gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION]
	assert duration.unit == "s"
	[point] = duration_points
	assert point.count == 2 and list(point.explicit_bounds) == DURATION_BUCKETS
	assert "error.type" not in point.attributes

	def down(request: Any) -> Any:
		raise RuntimeError("down")

	failing = om.create_agent(name="D", model=ScriptedModel([down]))
	with pytest.raises(RunError):
		await failing.run("go")
	_, duration_points = _points(reader)[gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION]
	failed = [p for p in duration_points if "error.type" in p.attributes]
	assert len(failed) == 1 and failed[0].attributes["error.type"] == "RuntimeError"


class _Blocks:
	"""A model whose provider blocks every conversation (its reply billed)."""

	name, model = "anthropic", "claude-x"

	async def generate(self, request: Any) -> ModelResponse:
		return ModelResponse(text="", usage=Usage(900, 12, calls=1), finish_reason="blocked")


async def test_a_blocked_reply_s_tokens_are_recorded_under_the_model_that_blocked(
	exporter: InMemorySpanExporter,
) -> None:
	"""gen_ai.client.token.usage splits a step the fallback answered: the blocked call's tokens
	under the model that blocked it, the answer's under the model that answered."""
	reader = InMemoryMetricReader()
	meters = MeterProvider(metric_readers=[reader])
	backup = ScriptedModel([finish(result="ok")], name="openai", usage=Usage(100, 10))
	backup.model = "gpt-x"
	om = OpenMolt(entry_points=False)
	Telemetry(tracer_provider=_provider(exporter), meter_provider=meters).instrument(om)
	result = await om.create_agent(name="B", model=[_Blocks(), backup]).run("go")
	assert result.status == "success", result.error
	_, token_points = _points(reader)[gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE]
	sums = {
		(p.attributes["gen_ai.response.model"], p.attributes["gen_ai.token.type"]): p.sum
		for p in token_points
	}
	assert sums == {
		("claude-x", "input"): 900,
		("claude-x", "output"): 12,
		("gpt-x", "input"): 100,
		("gpt-x", "output"): 10,
	}


async def test_a_refused_step_s_retry_keys_trace_as_their_step(
	exporter: InMemorySpanExporter,
) -> None:
	"""model:<n>:1 after a context-window refusal and compact:<n>:1 parse as step n: the refused
	call and its retry are two chat spans of that step, the first failed, the run fine."""
	from tests.core.test_compaction_overflow import SmallWindow, Summariser, make

	model = SmallWindow(limit=2500, steps=14)
	agent = make(model, Summariser())
	Telemetry(tracer_provider=_provider(exporter)).instrument(agent.om)
	result = await agent.run("work long")
	assert result.status == "success" and model.refused, result.error
	spans = exporter.get_finished_spans()
	steps = {s.context.span_id: s.name for s in spans if s.name.startswith("step ")}
	assert sorted(steps.values(), key=lambda n: int(n.split()[1])) == [
		f"step {n}" for n in range(1, result.steps + 1)
	]
	chats = [s for s in spans if s.name == "chat small"]
	assert all(s.parent is not None and s.parent.span_id in steps for s in chats)
	failed = [s for s in chats if dict(s.attributes or {}).get("error.type")]
	[refused] = failed
	assert dict(refused.attributes or {})["error.type"] == "ProviderError"
	assert refused.parent is not None
	step = steps[refused.parent.span_id]
	in_step = [s for s in chats if s.parent is not None and steps[s.parent.span_id] == step]
	assert len(in_step) == 2 and len(chats) == result.steps + 1
	run = next(s for s in spans if s.name == "invoke_agent Long")
	assert dict(run.attributes or {})["openmolt.run.status"] == "success"


async def test_a_question_that_parks_says_so_and_the_resume_continues_the_conversation(
	exporter: InMemorySpanExporter,
) -> None:
	"""The parked question's span is marked parked (nobody answered it); the resumed run is a
	new invoke_agent span of the same conversation, resumed, with no span repeated."""
	from openmolt_core import HumanInputUnavailable
	from openmolt_core.testing import ask_human

	def later(question: str) -> str:
		raise HumanInputUnavailable("asked by email")

	om = OpenMolt(entry_points=False)
	Telemetry(tracer_provider=_provider(exporter)).instrument(om)
	agent = om.create_agent(
		name="P",
		model=ScriptedModel([ask_human("Which city?"), finish(city="Oslo")]),
		on_human_input_request=later,
	)
	parked = await agent.run("go")
	assert parked.status == "human_input_required"
	first = {s.name: s for s in exporter.get_finished_spans()}
	human = dict(first["human_input"].attributes or {})
	assert human["openmolt.parked"] is True
	exporter.clear()
	done = await agent.resume(parked.state, answer="Oslo")
	assert done.status == "success"
	second = exporter.get_finished_spans()
	assert sorted(s.name for s in second) == ["chat scripted", "invoke_agent P", "step 2"]
	run = next(s for s in second if s.name == "invoke_agent P")
	attributes = dict(run.attributes or {})
	assert attributes["openmolt.run.resumed"] is True
	assert attributes["gen_ai.conversation.id"] == parked.state.run_id


async def test_every_output_message_has_the_finish_reason_the_conventions_require(
	exporter: InMemorySpanExporter,
) -> None:
	"""gen_ai.output.messages items need role, parts and finish_reason: on the chat spans (the
	model's reason, ``stop`` when it gave none) and on the run span (``stop``: it finished)."""
	import json

	model = ScriptedModel([finish(result="ok")])
	om = OpenMolt(entry_points=False)
	Telemetry(tracer_provider=_provider(exporter), capture_content=True).instrument(om)
	original = model.generate

	async def no_reason(request: Any) -> Any:
		response = await original(request)
		response.finish_reason = None
		return response

	model.generate = no_reason  # type: ignore[method-assign]
	await om.create_agent(name="R", model=model).run("go")
	for span in exporter.get_finished_spans():
		attributes = dict(span.attributes or {})
		if "gen_ai.output.messages" not in attributes:
			continue
		for message in json.loads(str(attributes["gen_ai.output.messages"])):
			assert {"role", "parts", "finish_reason"} <= set(message), span.name
			assert message["finish_reason"] == "stop"


async def test_a_sub_agent_s_events_are_span_events_of_its_own_steps_only(
	exporter: InMemorySpanExporter,
) -> None:
	"""A sub-agent's events also reach its caller's observers: recorded once, on its own step."""
	from openmolt_core.tools import tool

	@tool(labels=["untrusted"])
	def read_page() -> str:
		"""Read a web page."""
		return "someone else wrote this"

	om = OpenMolt(entry_points=False)
	Telemetry(tracer_provider=_provider(exporter)).instrument(om)
	sub = om.create_agent(
		name="reader",
		model=ScriptedModel([call_tool("local.read_page"), finish("read")]),
		tools=[read_page],
	)
	parent = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.reader", task="t"), finish("ok")]),
		tools=[sub],
	)
	await parent.run("go")
	spans = exporter.get_finished_spans()
	runs = {s.context.span_id: s.name for s in spans if s.name.startswith("invoke_agent")}
	taints = {
		runs[s.parent.span_id]: [e.name for e in s.events]
		for s in spans
		if s.name == "step 1" and s.parent is not None
	}
	# the reader's taint on its step; the boss's own (the sub-agent's output is untrusted) on its
	assert taints == {"invoke_agent reader": ["taint"], "invoke_agent boss": ["taint"]}


async def test_a_replayed_event_is_marked_on_its_span_event(exporter: InMemorySpanExporter) -> None:
	"""An event a recovering durable run emits again (delivered: replay_events) says replayed."""
	from types import SimpleNamespace

	from openmolt_core.events import ErrorEvent
	from openmolt_core.observe import RunOutcome
	from openmolt_core.result import RunState

	telemetry = Telemetry(tracer_provider=_provider(exporter))
	agent = OpenMolt(entry_points=False).create_agent(name="R", model=ScriptedModel([]))
	state = RunState()
	run = SimpleNamespace(
		run_id=state.run_id,
		agent=agent,
		agent_name="R",
		provider="custom",
		resumed=True,
		trigger={"kind": "api"},
		input="go",
		state=state,
		redact=lambda value: value,
		session_id=None,
	)
	await telemetry.started(run)  # type: ignore[arg-type]
	for replayed in (True, False):
		event = ErrorEvent(agent="R", step=0, run_id=state.run_id, kind="tool", message="x")
		event.replayed = replayed
		await telemetry.event(run, event)  # type: ignore[arg-type]
	await telemetry.ended(run, RunOutcome("success"))  # type: ignore[arg-type]
	[span] = exporter.get_finished_spans()
	marks = [dict(e.attributes or {}).get("openmolt.event.replayed") for e in span.events]
	assert marks == [True, None]


async def test_a_compaction_summary_is_a_chat_span_with_its_tokens(
	exporter: InMemorySpanExporter,
) -> None:
	"""The summary a compaction asks for is a chat call: a span of its step (marked
	openmolt.compaction), its tokens in the metrics; with a compactor its model is not claimed."""
	from tests.core.test_compaction_overflow import SmallWindow, Summariser, make

	reader = InMemoryMetricReader()
	meters = MeterProvider(metric_readers=[reader])
	model, summariser = SmallWindow(limit=2500, steps=14), Summariser()
	agent = make(model, summariser)  # a compactor: the summariser
	Telemetry(tracer_provider=_provider(exporter), meter_provider=meters).instrument(agent.om)
	result = await agent.run("work long")
	assert result.status == "success" and summariser.calls >= 1
	spans = exporter.get_finished_spans()
	summaries = [s for s in spans if dict(s.attributes or {}).get("openmolt.compaction")]
	assert len(summaries) == summariser.calls
	for span in summaries:
		attributes = dict(span.attributes or {})
		assert span.name == "chat" and "gen_ai.request.model" not in attributes
		assert attributes["gen_ai.operation.name"] == "chat"
		assert attributes["gen_ai.usage.input_tokens"] == 50  # the summariser's usage
		assert span.parent is not None
	_, token_points = _points(reader)[gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE]
	counted = sum(p.count for p in token_points if p.attributes["gen_ai.token.type"] == "input")
	answered = len(model.requests) - len(model.refused)  # a refused call reports no tokens
	assert counted == answered + summariser.calls  # every answered call's, summaries too
