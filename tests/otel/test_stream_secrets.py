"""A secret learned during a run, that the model then streams split across deltas and behind
JSON escapes, shows on no surface: the stream, the events, the result, the run store and the
spans (contents captured); the streamed message is the run's message."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openmolt import OpenMolt
from openmolt_core.llm import ModelResponse, Usage
from openmolt_core.streaming import TextDelta
from openmolt_core.testing import call_tool, finish
from openmolt_otel import Telemetry
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

LEARNED = "tok-refreshed-5Hq2/Zk+9wXv"


def _escaped(text: str) -> str:
	"""JSON string content with every third letter ``\\u``-escaped."""
	return "".join(
		f"\\u{ord(c):04x}" if c.isalnum() and i % 3 == 0 else c
		for i, c in enumerate(json.dumps(text)[1:-1])
	)


class Streams:
	"""Streams each reply a few characters at a time."""

	name = "streams"
	model = "s1"

	def __init__(self, *texts: str) -> None:
		self.texts = list(texts)

	async def generate(self, request: Any) -> ModelResponse:  # pragma: no cover - streams
		raise AssertionError("a run that streams asks stream()")

	async def stream(self, request: Any) -> AsyncIterator[Any]:
		text = self.texts.pop(0)
		for i in range(0, len(text), 4):
			yield TextDelta(text[i : i + 4])
		yield ModelResponse(text=text, usage=Usage(input_tokens=3, output_tokens=3))


def _decoded(text: str) -> list[str]:
	"""The text, and as a JSON reader reads it (its escapes decoded, at each depth)."""
	out = [text]
	for _ in range(3):
		out.append(out[-1].encode().decode("unicode_escape", "ignore"))
	return out


@pytest.mark.parametrize("spelling", ["raw", "base64"])
async def test_a_secret_learned_mid_run_and_streamed_shows_on_no_surface(
	spelling: str, tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
	"""The token a tool's call learns (an OAuth refresh) is masked in the next step's stream."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	tracing = TracerProvider()
	tracing.add_span_processor(SimpleSpanProcessor(exporter))
	Telemetry(tracer_provider=tracing, capture_content=True).instrument(om)

	def refresh() -> str:
		"""Refresh the token."""
		om.secrets.add(LEARNED)  # as an integration's refresh does (`SecretSet.add_source`)
		return "refreshed"

	said = LEARNED if spelling == "raw" else base64.b64encode(LEARNED.encode()).decode()
	end = json.dumps({"commands": [finish("ok", human_message="@")]}).replace(
		'"@"', f'"the new token is {_escaped(said)} and {said}, keep it."'
	)
	first = json.dumps({"commands": [call_tool("local.refresh")]})
	agent = om.create_agent(name="A", model=Streams(first, end), tools=[refresh])
	async with agent.stream("go") as run:
		events = [e async for e in run]
		result = await run.result()
	deltas = "".join(
		getattr(e, "text", "") for e in events if getattr(e, "field", "") == "humanMessage"
	)
	assert deltas == result.human_message
	assert result.human_message == "the new token is [redacted] and [redacted], keep it."
	assert om.run_store is not None
	(row,) = await om.run_store.runs()
	stored = await om.run_store.events(row.run_id)
	spans = [
		json.dumps([s.name, dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events]])
		for s in exporter.get_finished_spans()
	]
	surfaces = [
		*(repr(e) for e in events),
		json.dumps(result.to_dict()),
		repr(row),
		*(repr(e) for e in stored),
		*spans,
	]
	assert any("chat" in s for s in spans)  # the model's calls were traced, contents captured
	for surface in surfaces:
		for text in _decoded(surface):
			assert not leaks(text, LEARNED), text
	await om.aclose()
