"""Where the features that left the loop today meet others: sessions, fallback, budgets, observers.

Each moved to a capability of its own (sessions through ``wrap_call``, fallback through
``wrap_model``, budgets through ``before_step``); these tests run two of them in one run, and
check that observers replaced after an agent is made still hear its runs (creation shares one
getter of ``om.observers`` per instance).
"""

from __future__ import annotations

import json

import pytest

from openmolt import InMemorySession, OpenMolt, ProviderError
from openmolt_core.events import Event
from openmolt_core.llm import ModelRequest, ModelResponse, Usage
from openmolt_core.observe import ObservedRun, RunObserver
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


class Overloaded:
	"""A primary model that is always overloaded: every step falls back."""

	name = "primary"
	model = "big"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		raise ProviderError("overloaded (529)", provider="primary", status_code=529, retryable=True)


class Backup:
	"""Answers with the input it read (a session's turn), or calls ``add`` while told to."""

	name = "backup"
	model = "small"

	def __init__(self, calls: int = 0) -> None:
		self.requests: list[ModelRequest] = []
		self.calls = calls

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(request)
		if self.calls:
			self.calls -= 1
			commands = [call_tool("local.add", a=1, b=2)]
		else:
			said = json.loads(request.messages[0].content)["input"]
			commands = [finish(f"you said {said}", human_message=f"you said {said}")]
		return ModelResponse(text=json.dumps({"commands": commands}), usage=Usage(100, 10, calls=1))


def add(a: int, b: int) -> int:
	"""Add two numbers.

	Args:
		a: One.
		b: Two.
	"""
	return a + b


async def test_a_session_turn_that_fell_back_is_kept_and_read_by_the_next_turn() -> None:
	backup = Backup()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Chat", model=[Overloaded(), backup])
	session = InMemorySession("u")
	moves: list[Event] = []
	agent.on("model:fallback", moves.append)

	first = await agent.run("hello", session=session)
	second = await agent.run("again", session=session)

	assert (first.status, second.status) == ("success", "success")
	assert len(moves) == 2  # each turn fell back
	earlier = json.loads(backup.requests[1].messages[0].content)["earlier"]
	assert [e["content"] for e in earlier] == ["hello", "you said hello"]
	assert list(second.usage_by_model) == ["backup:small"]


async def test_a_token_budget_counts_what_the_fallback_model_used() -> None:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Adder", model=[Overloaded(), Backup(calls=5)], tools=[add], max_tokens=150
	)
	result = await agent.run("add")
	assert (result.status, result.error) == ("limit_reached", "220 of 150 tokens used")
	assert result.steps == 2


class Heard(RunObserver):
	"""Keeps the names of the events it hears."""

	def __init__(self) -> None:
		self.names: list[str] = []

	async def event(self, run: ObservedRun, event: Event) -> None:
		self.names.append(event.name)


async def test_observers_given_after_the_agent_was_made_hear_its_runs() -> None:
	om = OpenMolt(entry_points=False, observers=[Heard()])
	agent = om.create_agent(name="A", model=ScriptedModel([finish("ok"), finish("ok")]))
	replaced = Heard()
	om.observers = [replaced]  # a new list, not the one the agent was made with
	await agent.run("go")
	appended = Heard()
	om.observers.append(appended)
	await agent.run("go")
	assert "finish" in replaced.names and "finish" in appended.names
	assert replaced.names.count("finish") == 2
