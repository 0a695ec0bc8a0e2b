"""Budgets that hold: the time budget bounds everything, caps bound what is re-sent."""

import json
from typing import Any

import anyio
import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_memory, wait

pytestmark = pytest.mark.anyio

NONE = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def results(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


async def forever(input: dict[str, Any], context: Any) -> None:
	await anyio.Event().wait()  # never set: only the time budget can end this


def agent_with(replies: list[Any], **options: Any) -> tuple[Any, ScriptedModel]:
	model = ScriptedModel(replies)
	om = OpenMolt(entry_points=False)
	tools = [
		FunctionTool(handle="hang", description="", function=forever, input_schema=NONE, labels=[]),
		FunctionTool(
			handle="quick", description="", function=lambda i, c: "ok", input_schema=NONE, labels=[]
		),
	]
	return om.create_agent(name="B", model=model, tools=tools, **options), model


async def test_the_time_budget_interrupts_a_tool_call_and_ends_the_run() -> None:
	"""A tool still running when the time is up is interrupted, recorded, and the run ends at once."""
	agent, model = agent_with(
		[[call_tool("local.quick"), call_tool("local.hang")], finish("never")], timeout=0.3
	)
	with anyio.fail_after(10):
		result = await agent.run()
	assert result.status == "limit_reached" and result.error == "0.3 seconds elapsed"
	assert model.calls == 1  # no extra call after the budget
	last = json.loads(result.history[-1].content)["results"]
	assert last == [
		{"tool": "local.quick", "ok": True, "result": "ok"},
		{"tool": "local.hang", "ok": False, "error": "interrupted: the time budget ran out"},
	]


async def test_the_time_budget_bounds_a_wait() -> None:
	"""A wait longer than the time left is cut at the budget."""
	agent, model = agent_with([wait(60), finish("never")], timeout=0.2)
	with anyio.fail_after(10):
		result = await agent.run()
	assert result.status == "limit_reached" and model.calls == 1
	assert json.loads(result.history[-1].content)["results"][0]["error"] == (
		"interrupted: the time budget ran out"
	)


async def test_the_time_budget_bounds_a_persons_answer() -> None:
	"""A person who does not answer in time does not hold the run past its budget."""

	async def slow(question: str) -> str:
		await anyio.Event().wait()
		return "late"

	agent, _ = agent_with(
		[ask_human("?"), finish("never")], timeout=0.2, on_human_input_request=slow
	)
	with anyio.fail_after(10):
		result = await agent.run()
	assert result.status == "limit_reached"
	assert json.loads(result.history[-1].content)["results"] == [
		{
			"command": "requestHumanInput",
			"ok": False,
			"error": "interrupted: the time budget ran out",
		}
	]


async def test_the_time_budget_bounds_a_model_call() -> None:
	"""A model call still running at the deadline is abandoned; the state ends on a user turn."""

	async def stuck(request: Any) -> Any:
		await anyio.Event().wait()

	agent, _ = agent_with([stuck], timeout=0.2)
	with anyio.fail_after(10):
		result = await agent.run()
	assert result.status == "limit_reached" and "during a model call" in (result.error or "")
	assert result.history[-1].role == "user" and result.steps == 0


async def test_memory_updates_past_the_cap_are_refused() -> None:
	"""A memory that would exceed max_memory_chars is refused with the way out; smaller ones pass."""
	agent, model = agent_with(
		[
			update_memory("x" * 900, memory="longTerm"),
			update_memory("y" * 200, memory="longTerm"),
			update_memory("short", memory="longTerm", mode="replace"),
			finish("ok"),
		],
		config={"max_memory_chars": 1000},
	)
	result = await agent.run()
	assert results(model, 1) == [{"command": "updateMemory", "ok": True}]
	[refused] = results(model, 2)
	assert "would hold 1101 characters, more than the 1000 allowed" in refused["error"]
	assert "shorter summary" in refused["error"]
	assert results(model, 3) == [{"command": "updateMemory", "ok": True}]
	assert result.state.memory["longTerm"] == "short"


async def test_a_persons_long_answer_is_shortened_for_the_model() -> None:
	"""Answers past max_answer_chars are cut with a note, like tool results."""
	agent, model = agent_with(
		[ask_human("?"), finish("ok")],
		on_human_input_request=lambda q: "z" * 5000,
		config={"max_answer_chars": 100},
	)
	await agent.run()
	answer = results(model, 1)[0]["result"]
	assert answer.startswith("z" * 100) and "shortened from 5000 to 100 characters" in answer
	assert len(answer) < 200


async def test_limits_in_config_are_checked() -> None:
	"""A cap given in config must be a whole number; the message names the key."""
	from openmolt import ConfigurationError

	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match="maxReplyChars"):
		om.create_agent(name="x", model=ScriptedModel([]), config={"maxReplyChars": "big"})
	agent = om.create_agent(name="y", model=ScriptedModel([]), config={"maxReplyChars": 10})
	assert agent.limits.max_reply_chars == 10
