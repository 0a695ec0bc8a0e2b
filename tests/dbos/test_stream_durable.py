"""A durable run streams its live steps on DBOS, and returns the result a plain run returns."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from openmolt import OpenMolt
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.streaming import StreamChunk, TextDelta
from openmolt_core.testing import call_tool, finish

pytestmark = pytest.mark.anyio


class Typist:
	"""Streams scripted replies three characters at a time."""

	def __init__(self, *replies: object) -> None:
		self.name = "typist"
		self.model = "t"
		self.texts = [json.dumps({"commands": [r]}) for r in replies]

	async def generate(self, request: ModelRequest) -> ModelResponse:
		return ModelResponse(text=self.texts.pop(0))

	async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		text = self.texts.pop(0)
		for i in range(0, len(text), 3):
			yield TextDelta(text[i : i + 3])
		yield ModelResponse(text=text)


def add(a: int, b: int) -> int:
	"""Add two numbers.

	Args:
		a: One.
		b: Two.
	"""
	return a + b


async def test_a_durable_run_streams(url: str) -> None:
	"""Deltas and command:ready arrive from the workflow; the result is the run's."""
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="DurableStreamer",
		model=Typist(
			call_tool("local.add", a=1, b=2), finish({"sum": 3}, human_message="It is 3.")
		),
		tools=[add],
	)
	async with agent.stream("add") as run:
		events = [event async for event in run]
		result = await run.result()
	await om.aclose()
	assert result.ok and result.output == {"sum": 3}
	names = [e.name for e in events]
	assert names.index("command:ready") < names.index("tool:call")
	text = "".join(e.text for e in events if e.name == "text:delta" and e.field == "humanMessage")
	assert text == "It is 3."
