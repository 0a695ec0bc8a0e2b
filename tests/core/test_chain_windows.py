"""Compaction's threshold holds for every model a step may reach, not the first model's alone.

A step asks the agent's first model; model fallback sends it on to the next when that one fails,
so the prompt must fit the smallest window of the chain: a fallback model of a smaller window is
never sent a prompt it must refuse.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, ClassVar

import pytest

from openmolt import Capability, OpenMolt
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import DEFAULT_CONTEXT_WINDOW, estimate_tokens
from openmolt_core.errors import ProviderError
from openmolt_core.hooks import Run
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


class Down:
	"""A model of a large window whose every call fails for good (overloaded)."""

	name = "big"

	def __init__(self) -> None:
		self.calls = 0

	def context_window(self, model: str) -> int:
		return 1_000_000

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		raise ProviderError("overloaded (529)", provider="big", status_code=529, retryable=True)


class Small:
	"""A model whose window is ``limit`` tokens (estimated): past it, the provider's 400."""

	name = "small"

	def __init__(self, limit: int, steps: int) -> None:
		self.limit = limit
		self.steps = steps
		self.requests: list[ModelRequest] = []
		self.refused = 0
		self.answered = 0

	def context_window(self, model: str) -> int:
		return self.limit

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(replace(request, messages=list(request.messages)))
		tokens = estimate_tokens(request.messages, request.system)
		if request.messages and "previousSummary" in request.messages[0].content:
			return ModelResponse(text="summary", usage=Usage(tokens, 5, calls=1))
		if tokens > self.limit:
			self.refused += 1
			raise ProviderError(
				"the prompt is longer than the model's context window (400)",
				provider="small",
				model=request.model,
				status_code=400,
				context_exceeded=True,
			)
		self.answered += 1
		commands = (
			[finish("done")]
			if self.answered >= self.steps
			else [call_tool("local.echo", i=self.answered, pad="x" * 800)]
		)
		return ModelResponse(
			text=json.dumps({"commands": commands}), usage=Usage(tokens, 20, calls=1)
		)


def echo(i: int, pad: str) -> dict[str, Any]:
	"""Echo a step.

	Args:
		i: The step.
		pad: Padding.
	"""
	return {"i": i, "pad": pad}


async def test_a_smaller_fallback_window_sets_the_threshold() -> None:
	"""A fallback model of a smaller window than the first's is never sent a prompt too long."""
	big, small = Down(), Small(4_000, steps=12)
	om = OpenMolt(entry_points=False, max_steps=100)
	agent = om.create_agent(
		name="Chain", model=[big, small], tools=[echo], compaction={"keep_steps": 2}
	)
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert small.refused == 0  # compacted before the prompt passed the small window
	assert result.state.compaction is not None
	assert not (result.state.compaction or {}).get("refused_at")


class Windowed(ScriptedModel):
	"""A scripted model whose provider says its context window (None: it says nothing)."""

	def __init__(self, window: int | None, name: str) -> None:
		super().__init__([finish("ok")], name=name)
		self.window = window

	def context_window(self, model: str) -> int | None:
		return self.window


class ReadsWindow(Capability):
	"""Reads the agent's windows before each step (as compaction does)."""

	name: ClassVar[str] = "reads-window"

	def __init__(self) -> None:
		self.seen: list[tuple[int | None, ...]] = []

	async def before_model(self, run: Run) -> None:
		models = run.models
		assert models is not None
		self.seen.append((models.context_window(), *(models.context_window(m) for m in models.ids)))


@pytest.mark.parametrize(
	("windows", "smallest"),
	[
		((200_000, 8_000), 8_000),
		((8_000, 200_000), 8_000),
		((1_000_000, None), DEFAULT_CONTEXT_WINDOW),  # one that does not say: the default
		((None, None), None),
	],
)
async def test_the_window_is_the_smallest_of_the_chain_and_each_models_own(
	windows: tuple[int | None, int | None], smallest: int | None
) -> None:
	"""``run.models.context_window()`` is the chain's smallest; given a model, that model's."""
	first, second = Windowed(windows[0], "a"), Windowed(windows[1], "b")
	reads = ReadsWindow()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="W", model=[first, second], capabilities=[reads])
	await agent.run("go")
	assert reads.seen == [(smallest, *windows)]


def test_a_sessions_earlier_turns_fit_the_smallest_window() -> None:
	"""The earlier turns a session hands a run take half the threshold of the chain's smallest."""
	from openmolt_core.sessions import _budget

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="S", model=[Windowed(1_000_000, "a"), Windowed(10_000, "b")])
	assert _budget(agent) == int(10_000 * 0.6) // 2
