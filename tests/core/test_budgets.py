"""Budgets that hold: the time budget bounds everything, caps bound what is re-sent."""

import json
import threading
import time
from typing import Any

import anyio
import pytest

from openmolt import ConfigurationError, FunctionTool, OpenMolt
from openmolt_core.guardrails import guardrail
from openmolt_core.llm import Usage
from openmolt_core.testing import (
	ScriptedModel,
	ask_human,
	call_tool,
	finish,
	update_memory,
	update_plan,
	wait,
)
from openmolt_core.tools import cancelled, tool

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
	# 1 s: the quick call runs in a worker thread, which a loaded machine (a full test run on
	# two cores) once left unscheduled past 0.3 s; the hanging one is still cut at the budget.
	agent, model = agent_with(
		[[call_tool("local.quick"), call_tool("local.hang")], finish("never")], timeout=1.0
	)
	with anyio.fail_after(10):
		result = await agent.run()
	assert result.status == "limit_reached" and result.error == "1 seconds elapsed"
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
		handle="quick", description="", function=lambda i, c: "ok", input_schema=NONE, labels=[]
	)
	# 1 s: room for the quick call on a loaded machine; the blocker holds its thread for 5 s.
	agent = OpenMolt(entry_points=False).create_agent(
		name="S", model=model, tools=[quick, form(blocker)], timeout=1
	)
	result, took = await timed(agent)
	assert result.status == "limit_reached" and result.error == "1 seconds elapsed"
	assert took < 3.5, f"the run waited {took:.2f} s for a sync tool"
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


# the cost budget ------------------------------------------------------------------------------

PRICE = (0.001, 0.0, 4000.0, None)
"""USD per million tokens: 5 output tokens (ScriptedModel's usage) cost $0.02, input next to none."""
SMALL = {"max_output_tokens": 5}  # the next call is expected to cost $0.02 as well


def priced(replies: list[Any], price: Any = PRICE, **options: Any) -> tuple[Any, ScriptedModel]:
	model = ScriptedModel(replies, price=price)
	om = OpenMolt(entry_points=False)
	options.setdefault("model_config", SMALL)
	return om.create_agent(name="Spender", model=model, **options), model


def notices(model: ScriptedModel) -> list[str | None]:
	"""The notice each request's last user turn carries, if any."""
	out = []
	for request in model.requests:
		last = json.loads(request.messages[-1].content)
		out.append(last.get("notice") if isinstance(last, dict) else None)
	return out


async def test_no_model_call_starts_once_the_cost_budget_is_spent() -> None:
	"""$0.02 a call under a $0.05 budget: three calls, then limit_reached naming the budget."""
	agent, model = priced([update_plan("a")] * 5 + [finish("x")], max_cost=0.05)
	result = await agent.run()
	assert result.status == "limit_reached"
	assert model.calls == 3
	assert result.error == "$0.06 of the $0.05 cost budget (max_cost) spent"
	assert result.usage.cost_usd == pytest.approx(0.06)


async def test_a_call_expected_to_cross_the_cost_budget_is_told_it_is_the_last() -> None:
	"""The estimate: request size at the input price plus max_output_tokens at the output price."""
	agent, model = priced([update_plan("a"), update_plan("b"), finish("x")], max_cost=0.05)
	result = await agent.run()
	assert result.status == "success"
	told = notices(model)
	assert told[0] is None and told[1] is None
	assert "last step (the $0.05 cost budget)" in (told[2] or "")


async def test_without_max_output_tokens_a_large_output_is_assumed() -> None:
	"""An unset max_output_tokens counts as ASSUMED_OUTPUT_TOKENS: the first call is the last."""
	from openmolt_core._cost import ASSUMED_OUTPUT_TOKENS

	agent, model = priced([finish("x")], max_cost=0.05, model_config={})
	await agent.run()
	assert ASSUMED_OUTPUT_TOKENS * PRICE[2] / 1e6 > 0.05  # 4096 tokens at $4000/M
	assert "cost budget" in (notices(model)[0] or "")


async def test_a_cost_the_provider_reports_wins_over_the_price_table() -> None:
	"""usage.cost_usd from the provider is the call's cost."""
	model = ScriptedModel(
		[update_plan("a")] * 4 + [finish("x")],
		price=PRICE,
		usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.5),
	)
	agent = OpenMolt(entry_points=False).create_agent(
		name="S", model=model, max_cost=1.2, model_config=SMALL
	)
	result = await agent.run()
	assert result.status == "limit_reached" and model.calls == 3
	assert result.usage.cost_usd == pytest.approx(1.5)


async def test_sub_agents_called_at_once_share_what_the_run_has_left() -> None:
	"""Two sub-agents in one batch each reserve half of what is left: together they cannot each
	spend all of it (they count into the caller only when they end)."""
	om = OpenMolt(entry_points=False)
	children = []
	for name in ("Left", "Right"):
		child_model = ScriptedModel([update_plan("a")] * 10 + [finish("x")], price=PRICE)
		children.append(
			(om.create_agent(name=name, model=child_model, model_config=SMALL), child_model)
		)
	both = [call_tool("local.Left", task="a"), call_tool("local.Right", task="b")]
	model = ScriptedModel([both, finish("done")], price=PRICE)
	parent = om.create_agent(
		name="Parent",
		model=model,
		tools=[agent for agent, _ in children],
		max_cost=0.09,
		model_config=SMALL,
	)
	result = await parent.run()
	# $0.07 left after the parent's first call: $0.035 each, so two $0.02 calls each (the
	# second crosses it), whichever ends first; without the shares each child's cap is all that
	# is left when it starts (here the first took four calls and left the other nothing; with
	# real latency both take four: $0.18 for a $0.09 budget).
	assert [child_model.calls for _, child_model in children] == [2, 2]
	assert result.usage.cost_usd == pytest.approx(0.02 + 4 * 0.02)
	assert result.status == "limit_reached"


async def test_a_single_sub_agent_call_gets_all_that_is_left() -> None:
	"""A sub-agent called alone (or beside plain tools) is not split: it may spend the rest."""

	def plain() -> str:
		"""A tool that spends nothing."""
		return "ok"

	om = OpenMolt(entry_points=False)
	child_model = ScriptedModel([update_plan("a")] * 10 + [finish("x")], price=PRICE)
	child = om.create_agent(name="Only", model=child_model, model_config=SMALL)
	both = [call_tool("local.Only", task="a"), call_tool("local.plain")]
	model = ScriptedModel([both, finish("done")], price=PRICE)
	parent = om.create_agent(
		name="Parent", model=model, tools=[child, plain], max_cost=0.09, model_config=SMALL
	)
	await parent.run()
	assert child_model.calls == 4  # $0.07 left: stops once $0.08 >= $0.07


@pytest.mark.parametrize(
	"where",
	["create_agent", "config", "config_snake", "instance", "fallback", "sub_agent"],
)
def test_an_unknown_price_is_an_error_at_creation(where: str) -> None:
	"""max_cost with a model that has no price is refused when the agent is created."""
	om = OpenMolt(entry_points=False, max_cost=1.0 if where == "instance" else None)
	unpriced = ScriptedModel([])
	options: dict[str, Any] = {"model": unpriced}
	if where == "create_agent":
		options["max_cost"] = 1.0
	elif where == "config":
		options["config"] = {"maxCost": 1.0}
	elif where == "config_snake":
		options["config"] = {"max_cost": 1.0}
	elif where == "fallback":
		options.update(model=[ScriptedModel([], price=PRICE), unpriced], max_cost=1.0)
	elif where == "sub_agent":
		helper = OpenMolt(entry_points=False).create_agent(name="helper", model=unpriced)
		options.update(model=ScriptedModel([], price=PRICE), tools=[helper], max_cost=1.0)
	with pytest.raises(
		ConfigurationError, match=r"max_cost.*price of 'scripted:scripted(#2)?'.*unknown"
	):
		om.create_agent(name="A", **options)


def test_a_priced_model_passes_and_no_budget_needs_no_price() -> None:
	"""A known price, or no max_cost at all, creates the agent."""
	om = OpenMolt(entry_points=False)
	assert om.create_agent(name="A", model=ScriptedModel([], price=PRICE), max_cost=2).max_cost == 2
	assert om.create_agent(name="B", model=ScriptedModel([])).max_cost is None
	assert (
		OpenMolt(entry_points=False, max_cost=0.5)
		.create_agent(name="C", model=ScriptedModel([], price=PRICE))
		.max_cost
		== 0.5
	)


@pytest.mark.parametrize("value", [0, -1, "1", True, float("inf"), float("nan")])
@pytest.mark.parametrize("where", ["create_agent", "config", "instance"])
def test_a_wrong_max_cost_is_refused_naming_it(value: Any, where: str) -> None:
	"""max_cost must be US dollars > 0, wherever it is given."""
	model = ScriptedModel([], price=PRICE)
	with pytest.raises(ConfigurationError, match=r"(max_cost|maxCost).* must be US dollars > 0"):
		if where == "instance":
			OpenMolt(entry_points=False, max_cost=value)
		elif where == "config":
			OpenMolt(entry_points=False).create_agent(
				name="A", model=model, config={"maxCost": value}
			)
		else:
			OpenMolt(entry_points=False).create_agent(name="A", model=model, max_cost=value)


async def test_a_fallback_models_price_counts() -> None:
	"""The model that answered is priced: here the fallback, at three times the primary's price."""
	from openmolt import ProviderError

	class Down:
		name = "down"
		model = "m"

		def price(self, model: str) -> Any:
			return (1.0, 1.0, 1.0, None)

		async def generate(self, request: Any) -> Any:
			raise ProviderError(
				"overloaded (529)", provider="down", status_code=529, retryable=True
			)

	backup = ScriptedModel([update_plan("a")] * 5 + [finish("x")], price=(0.001, 0, 12000.0, None))
	agent = OpenMolt(entry_points=False).create_agent(
		name="F", model=[Down(), backup], max_cost=0.1, model_config=SMALL
	)
	result = await agent.run()
	assert result.status == "limit_reached" and backup.calls == 2
	assert result.usage.cost_usd == pytest.approx(0.12)


async def test_sub_agents_costs_count_toward_the_callers_budget() -> None:
	"""A sub-agent's spend is the caller's; the sub-agent stops where the caller's budget ends."""
	worker_model = ScriptedModel([update_plan("a")] * 10 + [finish("x")], price=PRICE)
	worker = OpenMolt(entry_points=False).create_agent(
		name="worker", model=worker_model, model_config=SMALL
	)
	boss_model = ScriptedModel(
		[call_tool("local.worker", task="go"), update_plan("b"), finish("x")], price=PRICE
	)
	boss = OpenMolt(entry_points=False).create_agent(
		name="boss", model=boss_model, tools=[worker], max_cost=0.1, model_config=SMALL
	)
	result = await boss.run()
	# boss: one call ($0.02) leaves $0.08; the worker stops after four calls ($0.08)
	assert worker_model.calls == 4
	entry = json.loads(result.state.messages[-1].content)["results"][0]
	assert (
		entry["ok"] is False and "cost budget (max_cost) the calling run had left" in entry["error"]
	)
	assert result.status == "limit_reached" and boss_model.calls == 1
	assert result.usage.cost_usd == pytest.approx(0.1)


async def test_a_resumed_run_keeps_what_it_spent() -> None:
	"""The cost travels with the state: a resumed run counts what was spent before."""
	from openmolt import HumanInputUnavailable, RunState

	def nobody(question: str) -> str:
		raise HumanInputUnavailable("later")

	agent, _ = priced(
		[update_plan("a"), ask_human("?")],
		max_cost=0.07,
		on_human_input_request=nobody,
	)
	parked = await agent.run()
	assert parked.status == "human_input_required"
	assert parked.usage.cost_usd == pytest.approx(0.04)
	state = RunState.from_dict(json.loads(json.dumps(parked.state.to_dict())))
	again, model2 = priced([update_plan("b"), update_plan("c"), finish("x")], max_cost=0.07)
	result = await again.resume(state, answer="yes")
	assert result.status == "limit_reached" and model2.calls == 2
	assert result.usage.cost_usd == pytest.approx(0.08)


def test_an_agent_file_takes_max_cost(tmp_path: Any) -> None:
	"""maxCost in an agent file (and in its config) reaches the agent; a wrong one is refused."""
	from openmolt_core.cli._agentfile import AgentFile

	spec = AgentFile.model_validate({"name": "a", "model": "openai:gpt-5-mini", "maxCost": 0.25})
	assert spec.max_cost == 0.25
	with pytest.raises(ValueError, match=r"max_cost|maxCost"):
		AgentFile.model_validate({"name": "a", "model": "openai:gpt-5-mini", "maxCost": 0})


@pytest.mark.parametrize("form", ["decorator", "function_tool"])
async def test_a_per_tool_timeout_interrupts_sync_code_and_the_run_goes_on(form: str) -> None:
	"""A tool's own timeout ends its call with an error the model reads; the run goes on."""
	blocker = Blocker()
	if form == "decorator":

		@tool(timeout=0.2)
		def crawl() -> str:
			"""Crawl."""
			return str(blocker())

		made: Any = crawl
	else:
		made = FunctionTool(
			handle="crawl", description="", function=blocker, input_schema=NONE, timeout=0.2
		)
	model = ScriptedModel([call_tool("local.crawl"), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(name="P", model=model, tools=[made])
	result, took = await timed(agent)
	assert result.status == "success" and took < 2
	entry = json.loads(model.requests[1].messages[-1].content)["results"][0]
	assert entry["ok"] is False
	assert entry["error"] == "the tool did not finish within its 0.2 s timeout"
	assert await blocker.abandoned()


@pytest.mark.parametrize("value", [0, -1, "5", True, float("inf")])
def test_a_wrong_per_tool_timeout_is_refused(value: Any) -> None:
	with pytest.raises(TypeError, match=r"'crawl': timeout must be seconds > 0"):
		FunctionTool(handle="crawl", description="", function=len, timeout=value)


async def test_the_time_budget_interrupts_an_async_event_listener() -> None:
	"""An async agent.on(...) listener that hangs is interrupted when the time is up."""

	async def hang(event: Any) -> None:
		await anyio.Event().wait()

	agent, _ = agent_with([call_tool("local.quick"), finish("never")], timeout=0.3)
	agent.on("tool:call", hang)
	result, took = await timed(agent)
	assert result.status == "limit_reached" and took < 2


async def test_a_sync_event_listener_runs_on_the_loop_and_may_touch_its_objects() -> None:
	"""Sync listeners are notifications run on the event loop: anyio.Event().set() works (trio too)."""
	done = anyio.Event()
	where: list[str] = []

	def finished(event: Any) -> None:
		where.append(threading.current_thread().name)
		done.set()

	agent, _ = agent_with([finish("ok")])
	agent.on("finish", finished)
	async with anyio.create_task_group() as tg:
		tg.start_soon(agent.run)
		with anyio.fail_after(5):
			await done.wait()
	assert where == [threading.current_thread().name]


async def test_a_tool_class_with_a_sync_execute_runs_under_the_budget() -> None:
	"""A Tool object whose execute is a plain def runs in a worker thread, interrupted in time."""
	blocker = Blocker()

	class Crawler:
		handle = "crawl"
		description = "Crawl."
		input_schema = NONE
		output_schema = None
		scopes = ()

		def execute(self, input: dict[str, Any], context: Any) -> Any:
			return blocker()

	model = ScriptedModel([call_tool("local.crawl"), finish("never")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="K",
		model=model,
		tools=[Crawler()],  # type: ignore[list-item]
		timeout=0.3,
	)
	result, took = await timed(agent)
	assert result.status == "limit_reached" and took < 2
	assert await blocker.abandoned()


async def test_a_sync_on_token_refresh_is_interrupted_with_its_call() -> None:
	"""An OAuth2 refresh callback that blocks does not hold the HTTP tool call past its scope."""
	import httpx

	from openmolt_core.integrations import ApiSetup, HttpTool, Integration, OAuth2Credential
	from openmolt_core.integrations.credentials import make_auth
	from openmolt_core.integrations.http import execute_http_tool
	from openmolt_core.tools import ToolContext

	blocker = Blocker()

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path == "/token":
			return httpx.Response(200, json={"access_token": "at-new-1", "expires_in": 3600})
		return httpx.Response(200, json={"ok": True})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	cred = OAuth2Credential(type="oauth2", token_url="https://auth.example.com/token", scopes=[])
	get = HttpTool(handle="get", description="d", endpoint="/me")
	integration = Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=[cred],
		tools=[get],
	)
	config = {"refreshToken": "rt-1", "clientId": "cid", "accessToken": "old", "expiryDate": 1000}
	auth = make_auth(integration, cred, config, on_token_refresh=blocker, http=lambda: client)
	context = ToolContext(
		agent="a", integration="svc", config=config, http=lambda: client, auth=auth
	)
	began = time.perf_counter()
	with anyio.move_on_after(0.3) as scope:
		await execute_http_tool(get, integration, {}, context)
	assert scope.cancelled_caught and time.perf_counter() - began < 2
	assert blocker.started.is_set() and await blocker.abandoned()
	await client.aclose()


async def test_the_llm_output_event_carries_the_priced_cost() -> None:
	"""A call the provider did not price is priced before its llmOutput event and its journal."""
	agent, _ = priced([update_plan("a"), finish("x")], max_cost=1.0)
	costs: list[Any] = []
	agent.on("llmOutput", lambda event: costs.append(event.usage.cost_usd))
	result = await agent.run()
	assert costs == [pytest.approx(0.02), pytest.approx(0.02)]
	assert result.usage_by_model["scripted:scripted"].cost_usd == pytest.approx(0.04)


def test_an_unpriced_compaction_model_is_an_error_with_a_cost_budget() -> None:
	"""Summaries cost too: a compaction model without a price is refused with max_cost."""
	from openmolt_core.compaction import CompactionConfig

	om = OpenMolt(entry_points=False)
	unpriced = ScriptedModel([])
	with pytest.raises(ConfigurationError, match=r"max_cost \(compaction model\).*unknown"):
		om.create_agent(
			name="A",
			model=ScriptedModel([], price=PRICE),
			compaction=CompactionConfig(model=unpriced),  # type: ignore[arg-type]
			max_cost=1.0,
		)
	priced_summary = ScriptedModel([], price=PRICE)
	made = om.create_agent(
		name="B",
		model=ScriptedModel([], price=PRICE),
		compaction=CompactionConfig(model=priced_summary),  # type: ignore[arg-type]
		max_cost=1.0,
	)
	assert made.max_cost == 1.0


async def test_a_reply_that_reports_no_usage_is_counted_from_its_size() -> None:
	"""A server or proxy that reports no token does not make its calls free: each is counted
	from its size (characters / 4), so ``max_tokens`` and ``max_cost`` hold."""
	replies = [update_plan("a" * 400)] * 5 + [finish("x")]
	model = ScriptedModel(replies, usage=Usage(calls=1), price=PRICE)
	agent = OpenMolt(entry_points=False).create_agent(
		name="Quiet", model=model, max_tokens=1000, model_config=SMALL
	)
	result = await agent.run("go")
	assert result.status == "limit_reached" and "tokens used" in (result.error or "")
	assert 1 < model.calls < 6
	assert result.usage.input_tokens > 0 and result.usage.output_tokens >= 100 * model.calls
	spender = ScriptedModel(replies, usage=Usage(calls=1), price=PRICE)
	agent = OpenMolt(entry_points=False).create_agent(
		name="Quiet", model=spender, max_cost=1.0, model_config=SMALL
	)
	result = await agent.run("go")
	assert result.status == "limit_reached" and "cost budget" in (result.error or "")
	assert spender.calls < 6 and (result.usage.cost_usd or 0) >= 0.4


async def test_a_reply_whose_usage_counts_only_the_prompt_gets_its_output_counted() -> None:
	"""Input tokens reported, no output token for a reply with text: the output is estimated
	(characters / 4) and priced, the reported input kept; the calls are never half free."""
	text = "a" * 400
	model = ScriptedModel(
		[update_plan(text), finish("x")], usage=Usage(input_tokens=50, calls=1), price=PRICE
	)
	result = await OpenMolt(entry_points=False).create_agent(name="Half", model=model).run("go")
	assert result.usage.input_tokens == 100  # as reported, twice
	assert result.usage.output_tokens >= 100  # the plan's reply alone is over 400 characters
	assert (result.usage.cost_usd or 0) > 0


async def test_a_reply_that_reports_its_usage_is_not_estimated() -> None:
	"""The estimate is only for replies without usage: reported tokens are kept as they came."""
	model = ScriptedModel([finish("x")], usage=Usage(input_tokens=7, output_tokens=3))
	result = await OpenMolt(entry_points=False).create_agent(name="Told", model=model).run("go")
	assert (result.usage.input_tokens, result.usage.output_tokens) == (7, 3)


async def test_a_reply_whose_usage_counts_only_the_output_gets_its_prompt_counted() -> None:
	"""Output tokens reported, no prompt token (a server that leaves ``prompt_tokens`` null):
	the prompt is estimated (characters / 4) and priced, the reported output kept; a prompt of
	thousands of characters is never free, so ``max_tokens`` and ``max_cost`` hold for it."""
	task = "b" * 8000
	model = ScriptedModel(
		[update_plan("x"), finish("x")],
		usage=Usage(output_tokens=10, calls=1),
		price=(1000.0, 0.0, 0.0, None),  # only the prompt costs
	)
	result = await OpenMolt(entry_points=False).create_agent(name="Half", model=model).run(task)
	assert result.usage.output_tokens == 20  # as reported, twice
	assert result.usage.input_tokens >= 2 * 2000  # the task alone is 8,000 characters a call
	assert (result.usage.cost_usd or 0) >= 2 * 2000 * 1000 / 1e6
