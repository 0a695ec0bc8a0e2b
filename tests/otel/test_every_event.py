"""Every event kind of the registry reaches the spans: a span of its own, or a span event.

The events emitted outside a run (a schedule's fire, end and skip, a stranded durable run)
reached the run store and the viewer but no span: `Telemetry` had no ``outside``, so a skipped
schedule or a stranded run was invisible in a trace.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openmolt import OpenMolt
from openmolt_core._durable import RunStrandedEvent
from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS, Event
from openmolt_core.observe import ObservedRun, RunOutcome, watch_run
from openmolt_core.result import RunState
from openmolt_core.testing import FakeClock, ScriptedModel
from openmolt_otel import Telemetry

pytestmark = pytest.mark.anyio

SECRET = "otel-outside-secret-9876"
T0 = datetime(2024, 3, 9, 12, tzinfo=UTC)


def _telemetry(exporter: InMemorySpanExporter, **options: Any) -> Telemetry:
	tracing = TracerProvider()
	tracing.add_span_processor(SimpleSpanProcessor(exporter))
	return Telemetry(tracer_provider=tracing, **options)


def _recorded(exporter: InMemorySpanExporter) -> str:
	return json.dumps(
		[
			[
				s.name,
				dict(s.attributes or {}),
				[[e.name, dict(e.attributes or {})] for e in s.events],
			]
			for s in exporter.get_finished_spans()
		],
		default=str,
	)


async def test_every_registered_event_reaches_a_span_in_a_run_or_outside_one(
	exporter: InMemorySpanExporter,
) -> None:
	"""Each stored name: a span event of its run (or the span that stands for it), or a span."""
	telemetry = _telemetry(exporter)
	om = OpenMolt(entry_points=False, observers=[telemetry])
	agent = om.create_agent(name="Every", model=ScriptedModel([]))
	names = sorted(EVENT_NAMES - STREAM_EVENTS)
	state = RunState()
	watched = watch_run(agent, state, [telemetry], redact=agent._redactor)
	run: ObservedRun = watched.run
	await telemetry.started(run)
	for n, name in enumerate(names, start=1):
		await telemetry.event(
			run, Event(agent="Every", step=0, name=name, run_id=run.run_id, seq=n)
		)
	await telemetry.ended(run, RunOutcome("success"))
	inside = {e.name for s in exporter.get_finished_spans() for e in s.events}
	spanned = {"llmOutput", "commandsQueued", "tool:call", "tool:response", "humanInput", "finish"}
	assert set(names) - spanned <= inside, sorted(set(names) - spanned - inside)
	exporter.clear()
	for name in names:  # outside a run: a span of its own
		event = Event(agent="Every", step=0, name=name, run_id="")
		await telemetry.outside(agent, event, {"about": name})
	outside = {s.name for s in exporter.get_finished_spans()}
	assert outside == set(names), sorted(set(names) - outside)


async def test_a_schedules_fires_and_skips_and_a_stranded_run_are_spans_masked(
	exporter: InMemorySpanExporter,
) -> None:
	"""schedule:run, :skip and :end, and run:stranded: spans of the agent; no secret shows."""

	class Gated:
		name = "gated"
		model = "gated"

		def __init__(self) -> None:
			self.gate = anyio.Event()

		async def generate(self, request: Any) -> Any:
			from openmolt_core import ModelResponse, Usage

			await self.gate.wait()
			text = json.dumps({"commands": [{"type": "finish", "output": {"ok": True}}]})
			return ModelResponse(text=text, usage=Usage(input_tokens=1, output_tokens=1, calls=1))

	model = Gated()
	clock = FakeClock(T0)
	telemetry = _telemetry(exporter, capture_content=True)
	om = OpenMolt(
		entry_points=False,
		clock=clock,
		observers=[telemetry],
		integrations={"weather": {"apiKey": SECRET}},
	)
	from openmolt_weather import weather

	om.register_integration("weather", weather.WEATHER)
	agent = om.create_agent(name="Ticker", model=model)
	sid = agent.schedule({"type": "interval", "value": 60})
	async with om:
		await clock.advance(minutes=2)
		model.gate.set()
		await clock.advance(seconds=1)
	await agent._events.emit(
		RunStrandedEvent(
			agent="Ticker", step=0, run_id="r-1", version="v1", current="v2", worker=SECRET
		)
	)
	spans = {s.name: s for s in exporter.get_finished_spans()}
	for name in ("schedule:run", "schedule:skip", "schedule:end", "run:stranded"):
		assert name in spans, sorted(spans)
		attributes = dict(spans[name].attributes or {})
		assert attributes["gen_ai.agent.name"] == "Ticker"
	assert dict(spans["schedule:skip"].attributes or {})["openmolt.schedule.id"] == sid
	stranded = dict(spans["run:stranded"].attributes or {})
	assert stranded["gen_ai.conversation.id"] == "r-1"
	assert "v1" in str(stranded["openmolt.event.data"])
	assert SECRET not in _recorded(exporter)
