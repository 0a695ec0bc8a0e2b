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


async def test_leaving_a_durable_stream_early_cancels_the_run(url: str) -> None:
	"""The block left at the first call: the run is cancelled where it is kept, no call follows.

	The stream's task stopped waiting, but the workflow went on: it made the next call and
	ended success, though leaving the block cancels the run (as in process).
	"""
	import anyio

	from openmolt_core.errors import RunCancelledError
	from openmolt_core.testing import ScriptedModel

	calls: list[int] = []

	async def slow(n: int) -> int:
		"""Take a while.

		Args:
			n: Which call.
		"""
		calls.append(n)
		await anyio.sleep(0.5)
		return n

	script = [call_tool("local.slow", n=1), call_tool("local.slow", n=2), finish("done")]
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Leaver", model=ScriptedModel(script), tools=[slow])
	try:
		async with agent.stream("go") as run:
			async for event in run:
				if event.name == "tool:call":
					break
		with anyio.fail_after(30), pytest.raises(RunCancelledError):
			await om.result(run.run_id)
		await anyio.sleep(1.5)  # the second call would have begun by now
		assert calls == [1]
	finally:
		await om.aclose()
