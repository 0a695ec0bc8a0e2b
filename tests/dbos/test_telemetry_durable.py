"""Telemetry on a durable run: a step the journal answers makes no span, so none is repeated."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_otel import Telemetry

pytestmark = pytest.mark.anyio


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


def shout(text: str) -> str:
	"""Upper-case text."""
	return text.upper()


async def test_a_parked_durable_run_and_its_resume_trace_each_call_once(url: str) -> None:
	"""Model and tool calls journaled before the park get one span each, across both drives."""
	exporter = InMemorySpanExporter()
	provider = TracerProvider()
	provider.add_span_processor(SimpleSpanProcessor(exporter))
	om = OpenMolt(durability=url, entry_points=False)
	Telemetry(tracer_provider=provider).instrument(om)
	model = ScriptedModel(
		[[call_tool("local.shout", text="hi"), ask_human("Which colour?")], finish(result="blue")]
	)
	agent = om.create_agent(name="Asker", model=model, tools=[shout], on_human_input_request=park)
	parked = await agent.run("paint")
	assert parked.status == "human_input_required"
	done = await agent.resume(parked.state, answer="blue")
	assert done.ok, done.error
	await om.aclose()
	names = sorted(s.name for s in exporter.get_finished_spans())
	assert names.count("chat scripted") == len(model.requests) == 2
	assert names.count("execute_tool local.shout") == 1
	assert names.count("human_input") == 1
	runs = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent Asker"]
	assert len(runs) == 2
	assert {dict(s.attributes or {})["gen_ai.conversation.id"] for s in runs} == {
		parked.state.run_id
	}
