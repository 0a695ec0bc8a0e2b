"""Budgets that hold: the time budget bounds everything, caps bound what is re-sent."""

import json
import threading
import time
from typing import Any

import anyio
import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core.guardrails import guardrail
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_memory, wait
from openmolt_core.tools import cancelled

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
		FunctionTool(handle="hang", description="", function=forever, input_schema=NONE),
		FunctionTool(handle="quick", description="", function=lambda i, c: "ok", input_schema=NONE),
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


# sync code under the time budget ----------------------------------------------------------


class Blocker:
	"""A sync callable that blocks up to 5 s, checking `cancelled` as a long function should."""

	def __init__(self, returns: Any = "late") -> None:
		self.returns = returns
		self.saw_cancel = threading.Event()
		self.started = threading.Event()
		self.threads: list[str] = []

	def __call__(self, *args: Any, **kwargs: Any) -> Any:
		self.started.set()
		self.threads.append(threading.current_thread().name)
		for _ in range(500):
			if cancelled():
				self.saw_cancel.set()
				return self.returns
			time.sleep(0.01)
		return self.returns

	async def abandoned(self) -> bool:
		"""Whether the background thread saw the cancellation flag (waits up to 2 s)."""
		return bool(await anyio.to_thread.run_sync(self.saw_cancel.wait, 2.0))


async def timed(agent: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
	began = time.perf_counter()
	with anyio.fail_after(10):
		result = await agent.run(*args, **kwargs)
	return result, time.perf_counter() - began


def _plain(blocker: Blocker) -> Any:
	def crawl(url: str = "x") -> str:
		"""Crawl."""
		return str(blocker())

	return crawl


def _legacy(blocker: Blocker) -> Any:
	return FunctionTool(handle="crawl", description="", function=blocker, input_schema=NONE)


@pytest.mark.parametrize("form", [_plain, _legacy], ids=["plain_function", "input_context_form"])
async def test_the_time_budget_interrupts_a_sync_tool(form: Any) -> None:
	"""A blocking sync tool is left to its thread when the time is up: the run ends at once."""
	blocker = Blocker()
	model = ScriptedModel([[call_tool("local.quick"), call_tool("local.crawl")], finish("never")])
	quick = FunctionTool(
		handle="quick", description="", function=lambda i, c: "ok", input_schema=NONE
	)
	agent = OpenMolt(entry_points=False).create_agent(
		name="S", model=model, tools=[quick, form(blocker)], timeout=0.3
	)
	result, took = await timed(agent)
	assert result.status == "limit_reached" and result.error == "0.3 seconds elapsed"
	assert took < 2, f"the run waited {took:.2f} s for a sync tool"
	assert json.loads(result.history[-1].content)["results"] == [
		{"tool": "local.quick", "ok": True, "result": "ok"},
		{"tool": "local.crawl", "ok": False, "error": "interrupted: the time budget ran out"},
	]
	assert blocker.threads[0] != threading.main_thread().name
	assert await blocker.abandoned()  # the thread finishes in the background, told to stop


async def test_the_time_budget_interrupts_a_sync_human_input_handler() -> None:
	"""A sync handler runs in a worker thread; the loop goes on, and the budget ends the run."""
	blocker = Blocker()
	ticks: list[float] = []

	async def ticker() -> None:  # the event loop keeps running while the handler blocks
		while True:
			ticks.append(time.perf_counter())
			await anyio.sleep(0.02)

	agent, _ = agent_with(
		[ask_human("?"), finish("never")], timeout=0.3, on_human_input_request=blocker
	)
	async with anyio.create_task_group() as tg:
		tg.start_soon(ticker)
		result, took = await timed(agent)
		tg.cancel_scope.cancel()
	assert result.status == "limit_reached" and took < 2
	assert json.loads(result.history[-1].content)["results"] == [
		{
			"command": "requestHumanInput",
			"ok": False,
			"error": "interrupted: the time budget ran out",
		}
	]
	assert len(ticks) >= 3  # not stalled for the handler's duration
	assert await blocker.abandoned()


async def test_the_time_budget_interrupts_a_sync_approval_handler() -> None:
	"""A sync approver that does not decide in time does not hold the run."""
	blocker = Blocker()
	agent, _ = agent_with(
		[call_tool("local.quick"), finish("never")],
		timeout=0.3,
		requires_approval=["local.quick"],
		on_approval_request=blocker,
	)
	result, took = await timed(agent)
	assert result.status == "limit_reached" and took < 2
	assert await blocker.abandoned()


@pytest.mark.parametrize("stage", ["input", "tool_call", "tool_result", "output"])
async def test_the_time_budget_interrupts_a_sync_guardrail(stage: str) -> None:
	"""A sync guardrail function at any stage is bounded by the run's time budget."""
	blocker = Blocker(returns=None)
	replies = (
		[finish("done")]
		if stage in ("input", "output")
		else [call_tool("local.quick"), finish("x")]
	)
	agent, _ = agent_with(replies, timeout=0.3, guardrails=[guardrail(stage, name="slow")(blocker)])  # type: ignore[arg-type]
	result, took = await timed(agent, "go")
	assert result.status == "limit_reached" and took < 2
	assert await blocker.abandoned()


async def test_the_time_budget_interrupts_a_parallel_sync_input_guardrail() -> None:
	"""A parallel input guardrail still running at the deadline does not hold the run."""
	blocker = Blocker(returns=None)
	guard = guardrail("input", name="slow", parallel=True)(blocker)  # type: ignore[arg-type]
	agent, _ = agent_with([finish("done")], timeout=0.3, guardrails=[guard])
	result, took = await timed(agent, "go")
	assert result.status == "limit_reached" and took < 2
	assert await blocker.abandoned()


async def test_the_time_budget_interrupts_a_sync_memory_callback() -> None:
	"""A sync ``on_update`` memory callback is bounded like the rest of the step."""
	blocker = Blocker()
	agent, _ = agent_with(
		[update_memory("note"), finish("never")],
		timeout=0.3,
		memory={"short_term": {"data": "", "on_update": blocker}},
	)
	result, took = await timed(agent)
	assert result.status == "limit_reached" and took < 2
	assert await blocker.abandoned()


def test_cancelled_is_false_outside_a_worker_thread() -> None:
	"""Code not run by the loop never reads as cancelled."""
	assert cancelled() is False
