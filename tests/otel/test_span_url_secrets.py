"""A URL's secrets no source knows are masked in spans as in events (`mask_urls`).

The key a model read in its instructions and put in ``httpRequest``'s URL (``?api_key=``) stays
in the run (the model needs it for its next call), and the run store's events mask it. The spans
(with contents captured) are the run's story for people too: the tool call's arguments, its
result, the model's input and output messages and the system instructions mask it the same way.
"""

from __future__ import annotations

import json

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_otel import Telemetry

pytestmark = pytest.mark.anyio

KEY = "k3y-5d1e0f7a9b2c4e6f"
URL = f"https://93.184.216.34/v1/x?api_key={KEY}"


async def test_a_url_key_the_model_called_with_is_masked_in_every_span(
	exporter: InMemorySpanExporter,
) -> None:
	def answer(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, json={"ok": True, "next": f"{URL}&page=2"})

	tracing = TracerProvider()
	tracing.add_span_processor(SimpleSpanProcessor(exporter))
	om = OpenMolt(
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)),
		integrations={"httpRequest": {"allowInternalHosts": ["93.184.216.34"]}},
		observers=[Telemetry(tracer_provider=tracing, capture_content=True)],
	)
	model = ScriptedModel([call_tool("httpRequest.request", url=URL), finish(result="done")])
	agent = om.create_agent(
		name="H", model=model, integrations=["httpRequest"], instructions=f"Call {URL}"
	)
	result = await agent.run("go")
	await om.aclose()
	assert result.status == "success"
	assert KEY in model.requests[0].messages[0].content  # the model read it
	spans = exporter.get_finished_spans()
	recorded = json.dumps(
		[[dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events]] for s in spans],
		default=str,
	)
	assert "93.184.216.34/v1/x" in recorded  # the arguments were captured
	assert KEY not in recorded
	assert "[redacted]" in recorded
