"""OpenTelemetry spans for runs, steps, model and tool calls, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes
from opentelemetry.trace import SpanKind, StatusCode

from openmolt import OpenMolt, RunError
from openmolt_core.llm import Usage
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, mock_http
from openmolt_otel import CAPTURE_ENV, Telemetry, conventions
from openmolt_weather import weather

pytestmark = pytest.mark.anyio

SECRET = "wx-secret-456"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def _provider(exporter: InMemorySpanExporter) -> TracerProvider:
	provider = TracerProvider()
	provider.add_span_processor(SimpleSpanProcessor(exporter))
	return provider


def weather_api(request: httpx.Request) -> httpx.Response:
	return httpx.Response(200, json={"summary": "rain", "echo": request.headers["X-Api-Key"]})


def _om(telemetry: Telemetry) -> OpenMolt:
	om = OpenMolt(
		entry_points=False,
		http_client=mock_http(weather_api),
		integrations={"weather": {"apiKey": SECRET}},
	)
	om.register_integration("weather", weather.WEATHER)
	telemetry.instrument(om)
	return om


def _by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, ReadableSpan]:
	return {s.name: s for s in spans}


def _script() -> ScriptedModel:
	return ScriptedModel(
		[
			[call_tool("weather.getForecast", city="Oslo"), call_tool("local.shout", text="hi")],
			finish(result="Wet."),
		],
		usage=Usage(input_tokens=100, output_tokens=20, cached_tokens=60),
	)


def shout(text: str) -> str:
	"""Upper-case text."""
	return text.upper()


def test_every_attribute_name_is_the_semantic_conventions_own() -> None:
	"""Each name in openmolt_otel.conventions matches the semconv package's constant."""
	for name in conventions.__all__:
		value = getattr(conventions, name)
		if name == "ERROR_TYPE":
			assert value == error_attributes.ERROR_TYPE
		elif name in ("CHAT", "EXECUTE_TOOL", "INVOKE_AGENT"):
			assert value == gen_ai_attributes.GenAiOperationNameValues[name].value
		elif name in ("TOKEN_INPUT", "TOKEN_OUTPUT"):
			token_type = gen_ai_attributes.GenAiTokenTypeValues[name.removeprefix("TOKEN_")]
			assert value == token_type.value
		elif name.startswith("CLIENT_"):
			assert value == getattr(gen_ai_metrics, f"GEN_AI_{name}"), name
		else:
			assert value == getattr(gen_ai_attributes, f"GEN_AI_{name}"), name


async def test_a_run_makes_a_tree_of_run_step_model_and_tool_spans(
	exporter: InMemorySpanExporter,
) -> None:
	"""invoke_agent > step N > chat / execute_tool, with the GenAI attributes and usage."""
	telemetry = Telemetry(tracer_provider=_provider(exporter))
	agent = _om(telemetry).create_agent(
		name="Umbrella",
		model=_script(),
		integrations=["weather"],
		tools=[shout],
		model_config={"temperature": 0.2, "max_output_tokens": 500},
	)
	result = await agent.run("Oslo?")
	spans = exporter.get_finished_spans()
	names = sorted(s.name for s in spans)
	assert names == sorted(
		[
			"invoke_agent Umbrella",
			"step 1",
			"step 2",
			"chat scripted",
			"chat scripted",
			"execute_tool weather.getForecast",
			"execute_tool local.shout",
		]
	)
	by = _by_name(spans)
	run, step1, step2 = by["invoke_agent Umbrella"], by["step 1"], by["step 2"]
	assert run.parent is None and run.kind is SpanKind.INTERNAL
	assert step1.parent is not None and step1.parent.span_id == run.context.span_id
	assert step2.parent is not None and step2.parent.span_id == run.context.span_id
	chats = [s for s in spans if s.name == "chat scripted"]
	assert {c.parent.span_id for c in chats if c.parent} == {
		step1.context.span_id,
		step2.context.span_id,
	}
	tool = by["execute_tool weather.getForecast"]
	assert tool.parent is not None and tool.parent.span_id == step1.context.span_id
	assert all(s.context.trace_id == run.context.trace_id for s in spans)

	assert run.attributes is not None and dict(run.attributes) == {
		"gen_ai.operation.name": "invoke_agent",
		"gen_ai.provider.name": "custom",
		"gen_ai.agent.name": "Umbrella",
		"gen_ai.conversation.id": result.state.run_id,
		"openmolt.run.id": result.state.run_id,
		"gen_ai.request.model": "scripted",
		"openmolt.run.resumed": False,
		"openmolt.trigger.kind": "api",
		"gen_ai.usage.input_tokens": 200,
		"gen_ai.usage.output_tokens": 40,
		"openmolt.run.status": "success",
		"openmolt.run.steps": 2,
	}
	chat = chats[0]
	assert chat.kind is SpanKind.CLIENT
	attributes = dict(chat.attributes or {})
	assert attributes["gen_ai.operation.name"] == "chat"
	assert attributes["gen_ai.request.model"] == "scripted"
	assert attributes["gen_ai.request.temperature"] == 0.2
	assert attributes["gen_ai.request.max_tokens"] == 500
	assert attributes["gen_ai.usage.input_tokens"] == 100
	assert attributes["gen_ai.usage.output_tokens"] == 20
	assert attributes["gen_ai.usage.cache_read.input_tokens"] == 60
	assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
	tool_attributes = dict(tool.attributes or {})
	assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
	assert tool_attributes["gen_ai.tool.name"] == "weather.getForecast"
	assert tool_attributes["gen_ai.tool.type"] == "extension"
	assert tool_attributes["gen_ai.tool.call.id"] == "1:0"
	assert dict(by["execute_tool local.shout"].attributes or {})["gen_ai.tool.type"] == "function"


async def test_contents_are_left_out_unless_opted_in(
	exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""By default no span carries messages, instructions, tool arguments or results."""
	monkeypatch.delenv(CAPTURE_ENV, raising=False)
	agent = _om(Telemetry(tracer_provider=_provider(exporter))).create_agent(
		name="U", model=_script(), integrations=["weather"], tools=[shout]
	)
	await agent.run("Oslo?")
	content = {
		"gen_ai.input.messages",
		"gen_ai.output.messages",
		"gen_ai.system_instructions",
		"gen_ai.tool.call.arguments",
		"gen_ai.tool.call.result",
	}
	for span in exporter.get_finished_spans():
		assert not content & set(span.attributes or {}), span.name


async def test_opted_in_contents_are_recorded_redacted(
	exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""With the variable set, contents appear in the conventions' shapes, the key masked."""
	monkeypatch.setenv(CAPTURE_ENV, "true")
	agent = _om(Telemetry(tracer_provider=_provider(exporter))).create_agent(
		name="U", model=_script(), integrations=["weather"], tools=[shout]
	)
	await agent.run("Oslo?")
	spans = exporter.get_finished_spans()
	assert all(SECRET not in json.dumps(dict(s.attributes or {})) for s in spans)
	by = _by_name(spans)
	tool = dict(by["execute_tool weather.getForecast"].attributes or {})
	assert json.loads(str(tool["gen_ai.tool.call.arguments"])) == {"city": "Oslo"}
	assert json.loads(str(tool["gen_ai.tool.call.result"])) == {
		"summary": "rain",
		"echo": "[redacted]",
	}
	chat = dict(next(s for s in spans if s.name == "chat scripted").attributes or {})
	(system,) = json.loads(str(chat["gen_ai.system_instructions"]))
	assert system["type"] == "text" and "U" in system["content"]
	(first,) = json.loads(str(chat["gen_ai.input.messages"]))
	assert first["role"] == "user" and first["parts"][0]["type"] == "text"
	assert "Oslo?" in first["parts"][0]["content"]
	(reply,) = json.loads(str(chat["gen_ai.output.messages"]))
	assert reply["role"] == "assistant" and reply["finish_reason"] == "stop"
	assert "weather.getForecast" in reply["parts"][0]["content"]
	run = dict(by["invoke_agent U"].attributes or {})
	(output,) = json.loads(str(run["gen_ai.output.messages"]))
	assert json.loads(output["parts"][0]["content"]) == {"result": "Wet."}


async def test_failures_set_error_status_and_type(exporter: InMemorySpanExporter) -> None:
	"""A failing tool marks its span; a provider failure marks the chat span and the run."""

	def broken() -> str:
		"""Always fails."""
		raise RuntimeError(f"disk full, key {SECRET}")

	def down(request: Any) -> str:
		raise RuntimeError("the model is down")

	model = ScriptedModel([call_tool("local.broken"), down])
	agent = _om(Telemetry(tracer_provider=_provider(exporter))).create_agent(
		name="F", model=model, tools=[broken], integrations=["weather"]
	)
	with pytest.raises(RunError):
		await agent.run("go")
	by = _by_name(exporter.get_finished_spans())
	tool = by["execute_tool local.broken"]
	assert tool.status.status_code is StatusCode.ERROR
	assert dict(tool.attributes or {})["error.type"] == "tool_error"
	chat_errors = [
		s
		for s in exporter.get_finished_spans()
		if s.name == "chat scripted" and s.status.status_code is StatusCode.ERROR
	]
	assert len(chat_errors) == 1
	assert dict(chat_errors[0].attributes or {})["error.type"] == "RuntimeError"
	run = by["invoke_agent F"]
	assert run.status.status_code is StatusCode.ERROR
	assert dict(run.attributes or {})["openmolt.run.status"] == "error"
	assert all(SECRET not in (s.status.description or "") for s in exporter.get_finished_spans())


async def test_a_run_nests_under_the_current_span_and_a_person_gets_a_span(
	exporter: InMemorySpanExporter,
) -> None:
	"""The application's span is the run's parent; a human answer is timed in its own span."""
	provider = _provider(exporter)
	model = ScriptedModel([ask_human("Which city?"), finish(city="Oslo")])
	agent = _om(Telemetry(tracer_provider=provider)).create_agent(
		name="H", model=model, on_human_input_request=lambda q: "Oslo"
	)
	with provider.get_tracer("app").start_as_current_span("request") as outer:
		await agent.run("go")
	by = _by_name(exporter.get_finished_spans())
	run = by["invoke_agent H"]
	assert run.parent is not None and run.parent.span_id == outer.get_span_context().span_id
	human = by["human_input"]
	assert human.parent is not None and human.parent.span_id == by["step 1"].context.span_id


async def test_nothing_is_traced_without_the_observer(exporter: InMemorySpanExporter) -> None:
	"""Off by default: an instance without Telemetry makes no span, even with an SDK set up."""
	provider = _provider(exporter)
	tracer = trace.get_tracer("app", tracer_provider=provider)
	om = OpenMolt(entry_points=False)
	with tracer.start_as_current_span("request"):
		await om.create_agent(name="N", model=ScriptedModel([finish(ok=1)])).run("x")
	assert [s.name for s in exporter.get_finished_spans()] == ["request"]


async def test_events_no_span_stands_for_are_span_events_of_their_step(
	exporter: InMemorySpanExporter,
) -> None:
	"""Taint and a capability's own event reach the trace: span events of their step's span."""
	from dataclasses import dataclass
	from typing import ClassVar

	from openmolt_core.events import Event
	from openmolt_core.hooks import Capability, Run
	from openmolt_core.tools import tool

	@dataclass(slots=True, kw_only=True)
	class Checked(Event):
		name: str = "acme:checked"
		verdict: str = ""

	class Checks(Capability):
		name: ClassVar[str] = "acme-checks"
		events: ClassVar[dict[str, type[Event]]] = {"acme:checked": Checked}

		async def after_tool(self, run: Run, call: Any, tool: Any, entry: Any) -> Any:
			if run.wants("acme:checked"):
				await run.emit(Checked(agent=run.agent, step=run.step, verdict=f"fine {SECRET}"))
			else:
				run.skip_event()
			return entry

	@tool(labels=["untrusted"])
	def read_page() -> str:
		"""Read a web page."""
		return "someone else wrote this"

	om = _om(Telemetry(tracer_provider=_provider(exporter), capture_content=True))
	om.secrets.add(SECRET)
	agent = om.create_agent(
		name="E",
		model=ScriptedModel([call_tool("local.read_page"), finish("read")]),
		tools=[read_page],
		capabilities=[Checks()],
	)
	await agent.run("read")
	step = _by_name(exporter.get_finished_spans())["step 1"]
	named = {e.name: dict(e.attributes or {}) for e in step.events}
	assert set(named) == {"acme:checked", "taint"}
	assert json.loads(str(named["acme:checked"]["openmolt.event.data"])) == {
		"verdict": "fine [redacted]",
		"parent_run_id": "",
		"replayed": False,
	}
	assert json.loads(str(named["taint"]["openmolt.event.data"]))["tool"] == "local.read_page"


async def test_a_session_run_names_its_session_as_the_conversation_and_keeps_its_run_id(
	exporter: InMemorySpanExporter,
) -> None:
	"""gen_ai.conversation.id is the session's id on every span of a session's runs (the run
	id without a session); openmolt.run.id is always the run's own id."""
	from openmolt_core.sessions import InMemorySession

	telemetry = Telemetry(tracer_provider=_provider(exporter))
	agent = _om(telemetry).create_agent(
		name="Chat", model=ScriptedModel([finish(result="a"), finish(result="b")])
	)
	turn = await agent.run("hi", session=InMemorySession("support:ada"))
	plain = await agent.run("alone")
	spans = exporter.get_finished_spans()
	for span in spans:
		attributes = dict(span.attributes or {})
		run_id = attributes["openmolt.run.id"]
		assert run_id in (turn.state.run_id, plain.state.run_id), span.name
		session = "support:ada" if run_id == turn.state.run_id else plain.state.run_id
		assert attributes["gen_ai.conversation.id"] == session, span.name
	assert len(spans) == 6  # each run: invoke_agent, a step, a chat


async def test_a_partial_cost_says_how_many_calls_it_leaves_out(
	exporter: InMemorySpanExporter,
) -> None:
	"""A priced run whose sub-agent's model had no price: the run's span has the cost of the
	priced calls and the count of those left out, so a sum of spans is known to be partial."""
	telemetry = Telemetry(tracer_provider=_provider(exporter))
	om = _om(telemetry)
	sub = om.create_agent(name="helper", model=ScriptedModel([finish(result="4")]))
	model = ScriptedModel(
		[call_tool("local.helper", task="2+2"), finish(result="4")], price=(1.0, 0.1, 2.0, None)
	)
	agent = om.create_agent(name="Caller", model=model, tools=[sub])
	result = await agent.run("go")
	await om.aclose()
	assert result.usage.cost_partial
	run = _by_name(exporter.get_finished_spans())["invoke_agent Caller"]
	attributes = dict(run.attributes or {})
	assert attributes["openmolt.usage.cost_usd"] == result.usage.cost_usd
	assert attributes["openmolt.usage.unpriced_calls"] == 1
