"""A summary that did not end normally never replaces the steps it was to summarise.

Compaction swaps a run's older steps for the summary a model writes. The summary's finish reason
was never read: a summary cut off at the output limit, refused, blocked by a safety filter or left
empty replaced the whole older history with what arrived (often nothing), and the run went on
without it. Such a summary now fails the run with a `RunError` that keeps the state as it was (the
steps are all there, and the summary's tokens are counted), and says why and what to change.
"""

from __future__ import annotations

import json

import pytest

from openmolt import InMemorySession, OpenMolt, RunError
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import estimate_tokens
from openmolt_core.testing import call_tool, finish

pytestmark = pytest.mark.anyio


class Worker:
	"""Calls its tool every step, then finishes; counts its prompt like a provider."""

	name = "worker"

	def __init__(self) -> None:
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		step = call_tool("local.echo", pad="x" * 400) if self.calls < 30 else finish("done")
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(
			text=json.dumps({"commands": [step]}), usage=Usage(tokens, 20, calls=1)
		)


class Summariser:
	"""Writes the given text, stopped for the given reason."""

	name = "summariser"

	def __init__(self, text: str, reason: str | None) -> None:
		self.text, self.reason = text, reason

	async def generate(self, request: ModelRequest) -> ModelResponse:
		return ModelResponse(
			text=self.text, usage=Usage(300, 40, calls=1), finish_reason=self.reason
		)


def echo(pad: str) -> str:
	"""Echo."""
	return pad


@pytest.mark.parametrize(
	("text", "reason", "said"),
	[
		("The run looked up", "max_tokens", "cut off at the output token limit"),
		("", "refusal", "refused"),
		("", "safety", "safety filter"),
		("", "blocked", "blocked"),
		("Half a", "incomplete", "stopped before its end"),
		("", "stop", "empty"),
		("  ", None, "empty"),
	],
)
async def test_a_bad_summary_fails_the_run_and_keeps_every_step(
	text: str, reason: str | None, said: str
) -> None:
	"""The older steps stay as they were; the error names the reason and the settings to change."""
	om = OpenMolt(entry_points=False, max_steps=100)
	agent = om.create_agent(
		name="Long",
		model=Worker(),
		tools=[echo],
		compaction={"threshold_tokens": 3000, "keep_steps": 2},
	)
	agent.compactor = lambda: (Summariser(text, reason), "cheap")
	with pytest.raises(RunError) as caught:
		await agent.run("work long")
	message = str(caught.value)
	assert "summary" in message and said in message
	state = caught.value.result.state
	assert state.compaction is None
	assert all('"compacted"' not in m.content for m in state.messages)
	assert state.usage.input_tokens > 300 and state.usage.calls == state.steps + 1


async def test_a_good_summary_still_compacts() -> None:
	"""A summary that ended normally replaces the older steps, as before."""
	om = OpenMolt(entry_points=False, max_steps=100)
	agent = om.create_agent(
		name="Long",
		model=Worker(),
		tools=[echo],
		compaction={"threshold_tokens": 3000, "keep_steps": 2},
	)
	agent.compactor = lambda: (Summariser("The run echoed.", "stop"), "cheap")
	result = await agent.run("work long")
	assert result.status == "success" and result.state.compaction is not None


class Chat:
	"""Answers every turn at once."""

	name = "chat"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		return ModelResponse(text=json.dumps({"commands": [finish("ok")]}), usage=Usage(10, 5))


@pytest.mark.parametrize(("text", "reason"), [("", "refusal"), ("Earlier the", "max_tokens")])
async def test_a_bad_session_summary_is_not_stored(text: str, reason: str) -> None:
	"""The session keeps its turns: no summary item stands for them, and a later run tries again."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=Chat(), compaction={"threshold_tokens": 2000})
	agent.compactor = lambda: (Summariser(text, reason), "cheap")
	session = InMemorySession("long")
	for i in range(40):
		result = await agent.run(f"turn {i} " + "words " * 40, session=session)
		assert result.status == "success"
	items = await session.get_items()
	assert not [i for i in items if i["role"] == "summary"]
