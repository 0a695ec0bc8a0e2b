"""A human message that streamed in part from a model that then failed starts over as a new one.

A fallback chain asks the next model when the first one's stream breaks; the next model writes
the reply from its start, under the same step and command. AG-UI has no event that takes text
back: the broken piece stays a message of its own, closed with a mark that says it was cut off,
the fallback's reply is a new message, and the run's end does not send that text a third time.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse, Usage
from openmolt_core.streaming import TextDelta
from openmolt_core.testing import finish
from openmolt_serve._agui_events import CUT_MARK
from tests.serve.test_serve_agui import run_agent

pytestmark = pytest.mark.anyio

SAID = "Take an umbrella, it rains all day in Oslo."


class Model:
	"""Streams the reply in pieces; ``breaks``: the stream is cut after ``breaks`` characters."""

	def __init__(self, name: str, breaks: int | None = None) -> None:
		self.name = name
		self.model = name
		self.breaks = breaks

	async def generate(self, request: Any) -> ModelResponse:  # pragma: no cover - streams
		raise AssertionError("streamed")

	async def stream(self, request: Any) -> AsyncIterator[Any]:
		text = json.dumps({"commands": [finish({"result": "rain"}, human_message=SAID)]})
		end = len(text) if self.breaks is None else self.breaks
		for i in range(0, end, 5):
			yield TextDelta(text[i : min(i + 5, end)])
		if self.breaks is not None:
			raise ProviderError(
				"the stream ended before the reply was complete",
				provider=self.name,
				model=self.name,
				retryable=True,
			)
		yield ModelResponse(text=text, usage=Usage(5, 5))


def messages(events: list[Any]) -> list[str]:
	"""The text messages, whole, in order (one open at a time)."""
	out: list[str] = []
	open_: str | None = None
	for event in events:
		kind = event.type.value
		if kind == "TEXT_MESSAGE_START":
			assert open_ is None
			open_ = event.message_id
			out.append("")
		elif kind == "TEXT_MESSAGE_CONTENT":
			assert event.message_id == open_
			out[-1] += event.delta
		elif kind == "TEXT_MESSAGE_END":
			assert event.message_id == open_
			open_ = None
	assert open_ is None
	return out


async def test_a_fallback_writes_its_reply_as_a_message_of_its_own() -> None:
	"""The primary's broken piece, then the fallback's whole message, and nothing after it."""
	text = json.dumps({"commands": [finish({"result": "rain"}, human_message=SAID)]})
	cut = text.index("rains")  # inside the humanMessage
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Helper", model=[Model("first", breaks=cut), Model("second")], instructions="Help."
	)
	events = await run_agent(agent)
	await om.aclose()
	said = messages(events)
	assert said[-1] == SAID  # the fallback's reply, whole, once
	assert len(said) == 2 and said[0].endswith(CUT_MARK)  # the broken piece, said to be cut
	piece = said[0].removesuffix(CUT_MARK)
	assert piece and SAID.startswith(piece) and piece != SAID


async def test_a_message_cut_by_a_failure_that_ends_the_run_is_marked_before_the_error() -> None:
	"""The broken piece of a run whose only model fails is marked cut, then ``RUN_ERROR``."""
	text = json.dumps({"commands": [finish({"result": "rain"}, human_message=SAID)]})
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Helper", model=Model("first", breaks=text.index("rains")), instructions="Help."
	)
	events = await run_agent(agent)
	await om.aclose()
	said = messages(events)
	assert len(said) == 1 and said[0].endswith(CUT_MARK)
	assert SAID.startswith(said[0].removesuffix(CUT_MARK))
	kinds = [e.type.value for e in events]
	assert kinds.index("RUN_ERROR") > kinds.index("TEXT_MESSAGE_END")


class Slow(Model):
	"""Streams the start of the message, then waits longer than the run may take."""

	async def stream(self, request: Any) -> AsyncIterator[Any]:
		import anyio

		text = json.dumps({"commands": [finish({"result": "rain"}, human_message=SAID)]})
		yield TextDelta(text[: text.index("rains")])
		await anyio.sleep(30)
		yield TextDelta(text[text.index("rains") :])  # pragma: no cover - the run timed out


async def test_a_message_cut_by_the_run_s_timeout_is_marked_cut() -> None:
	"""A call the run's ``timeout`` stops mid-message: its message is marked cut, then
	``RUN_ERROR`` (limit_reached)."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=Slow("slow"), instructions="Help.", timeout=1)
	events = await run_agent(agent)
	await om.aclose()
	said = messages(events)
	assert len(said) == 1 and said[0].endswith(CUT_MARK)
	assert SAID.startswith(said[0].removesuffix(CUT_MARK))
	assert [e.type.value for e in events][-1] == "RUN_ERROR"


async def test_a_refused_reply_s_message_is_marked_not_used() -> None:
	"""A finish refused once it is whole (its output does not match the schema) streamed its
	message: the message is closed with a mark saying it was not used, and the reply the model
	writes next is the run's message."""
	from openmolt_core.testing import ScriptedModel
	from openmolt_serve._agui_events import NOT_USED_MARK

	schema = {
		"type": "object",
		"properties": {"n": {"type": "integer"}},
		"required": ["n"],
		"additionalProperties": False,
	}
	model = ScriptedModel(
		[
			{"commands": [finish({"n": "one"}, human_message="Done!")]},
			{"commands": [finish({"n": 1}, human_message="Done, really.")]},
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model, instructions="Help.", output_schema=schema)
	events = await run_agent(agent)
	await om.aclose()
	assert messages(events) == [f"Done!{NOT_USED_MARK}", "Done, really."]
