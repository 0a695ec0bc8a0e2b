"""Token and cost budgets are a capability: the loop asks generic hooks any capability can answer."""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from openmolt import Capability, OpenMolt, RunError, RunState, ToolContext
from openmolt_core.hooks import Run, Stop, ToolSpec
from openmolt_core.llm import Usage
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_plan
from openmolt_core.tools import tool

from .test_durability import JournalPort

pytestmark = pytest.mark.anyio

PRICED = Usage(input_tokens=100, output_tokens=20)  # 120 tokens a call


@tool
def echo(text: str) -> str:
	"""Echo.

	Args:
		text: The text.
	"""
	return text


class Quota(Capability):
	"""A third party's limit: at most ``most`` model steps, told at the one before."""

	name = "quota"

	def __init__(self, most: int) -> None:
		self.most = most

	async def before_step(self, run: Run) -> Stop | None:
		if run.state.steps >= self.most:
			return Stop(f"the quota of {self.most} steps is used", "limit_reached")
		return None

	def last_step(self, run: Run) -> str | None:
		return "the quota" if run.state.steps + 1 >= self.most else None


async def test_a_third_party_capability_ends_a_run_through_the_step_hooks() -> None:
	"""``before_step`` ends the run before a step; ``last_step`` tells the model it is its last."""
	model = ScriptedModel([update_plan("a")] * 5 + [finish("x")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, capabilities=[Quota(2)]
	)
	result = await agent.run("go")
	assert (result.status, result.error) == ("limit_reached", "the quota of 2 steps is used")
	assert model.calls == 2
	assert "last step" not in model.requests[0].messages[-1].content
	notice = json.loads(model.requests[1].messages[-1].content)["notice"]
	assert notice.startswith("This is your last step (the quota)")


async def test_max_steps_tells_the_last_step_before_a_capability_does() -> None:
	"""The loop's own ``max_steps`` notice wins; the capability is not asked then."""
	model = ScriptedModel([update_plan("a")] * 5 + [finish("x")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, capabilities=[Quota(2)], max_steps=2
	)
	result = await agent.run("go")
	assert (result.status, result.error) == ("limit_reached", "2 steps used")
	notice = json.loads(model.requests[1].messages[-1].content)["notice"]
	assert notice.startswith("This is your last step (2 steps)")


@pytest.mark.parametrize(
	("hook", "answer", "fix"),
	[
		("before_step", "stop", "return Stop(reason) or None"),
		("last_step", 3, "return the reason as text, or None"),
		("hand_down", {"cost_left": 1}, "one dict of CallingRun fields per tool"),
		# A hand_down that forgot its return handed nothing down without a word (a budget's
		# sub-agents would run uncapped); () is how a hook hands nothing.
		("hand_down", None, "one dict of CallingRun fields per tool, or ()"),
		("hand_down", [{"cost_left": 1}, {}], "one dict of CallingRun fields per tool"),
		("hand_down", [{"user": "eve"}], "fields the loop does not set (not ['user'])"),
		# A set of capabilities would attach them to the called run in an order that changes
		# from one process to the next (they hash by identity): their hooks' order with them.
		("hand_down", [{"capabilities": {Quota(1)}}], "'capabilities' as a list or tuple"),
	],
)
async def test_a_wrong_answer_of_a_step_hook_names_the_fix(
	hook: str, answer: Any, fix: str
) -> None:
	async def before_step(self: Any, run: Run) -> Any:
		return answer

	def sync(self: Any, *args: Any) -> Any:
		return answer

	body = {"name": "wrong", hook: before_step if hook == "before_step" else sync}
	wrong = type("Wrong", (Capability,), body)()
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=ScriptedModel([call_tool("local.echo", text="x"), update_plan("a"), finish("x")]),
		tools=[echo],
		capabilities=[wrong],
	)
	with pytest.raises(RunError, match=re.escape(fix)):
		await agent.run("go")


def test_the_budget_options_attach_a_capability_and_a_plain_agent_has_none() -> None:
	from openmolt_core.capabilities.budget import Budget

	om = OpenMolt(entry_points=False)
	plain = om.create_agent(name="P", model=ScriptedModel([]))
	assert not any(isinstance(c, Budget) for c in plain.capabilities)
	capped = om.create_agent(name="C", model=ScriptedModel([]), max_tokens=500)
	[budget] = [c for c in capped.capabilities if isinstance(c, Budget)]
	assert (budget.max_tokens, budget.max_cost) == (500, None)
	assert capped.max_tokens == 500
	# agents with the same caps share one (it keeps no run's state), and their fingerprint
	# does not name it: a budget changes where a run ends, not the steps it asks for
	again = om.create_agent(name="P", model=ScriptedModel([]), max_tokens=500)
	assert [c for c in again.capabilities if isinstance(c, Budget)] == [budget]
	assert again.fingerprint() == plain.fingerprint()


async def test_a_run_started_by_a_capped_call_attaches_the_handed_budget() -> None:
	"""A sub-run started by a third party's tool stops at what its caller had left, though its
	agent has no budget; the capability is the run's, not its agent's."""
	from openmolt_core.capabilities.budget import Budget

	om = OpenMolt(entry_points=False)
	loop = [call_tool("local.echo", text=str(i)) for i in range(12)]
	child = om.create_agent(name="child", model=ScriptedModel(loop, usage=PRICED), tools=[echo])
	seen: list[Any] = []

	@tool
	async def delegate(task: str, context: ToolContext) -> str:
		"""Hand a task to the child.

		Args:
			task: The task.
		"""
		assert context.run is not None
		seen.append(context.run)
		result = await child.run(task, parent=context.run)
		return f"{result.status}: {result.error}"

	boss = ScriptedModel([call_tool("local.delegate", task="loop"), finish("x")], usage=PRICED)
	parent = om.create_agent(
		name="boss",
		model=boss,
		tools=[delegate],
		max_tokens=500,
	)
	await parent.run("go")
	[run] = seen
	assert run.tokens_left == 380 and run.cost_left is None
	assert [type(c) for c in run.capabilities] == [Budget]
	assert not any(isinstance(c, Budget) for c in child.capabilities)
	assert child.last_state is not None and child.last_state.usage.total_tokens == 480
	[entry] = json.loads(boss.requests[1].messages[-1].content)["results"]
	assert entry["result"] == "limit_reached: 480 tokens used, of the 380 the calling run had left"


async def test_a_sub_agent_with_a_budget_of_its_own_keeps_the_smaller_cap() -> None:
	"""Its own budget and the caller's cap are one capability: the smaller cap ends the run."""
	om = OpenMolt(entry_points=False)
	loop = [call_tool("local.echo", text=str(i)) for i in range(12)]
	child = om.create_agent(
		name="child", model=ScriptedModel(loop, usage=PRICED), tools=[echo], max_tokens=200
	)
	boss = ScriptedModel([call_tool("local.child", task="loop"), finish("x")], usage=PRICED)
	parent = om.create_agent(name="boss", model=boss, tools=[child], max_tokens=5000)
	await parent.run("go")
	[entry] = json.loads(boss.requests[1].messages[-1].content)["results"]
	assert "240 of 200 tokens used" in entry["error"]


async def test_a_handed_down_field_reaches_a_tool_and_capabilities_add_up() -> None:
	"""``hand_down`` sets a call's CallingRun fields; each capability's ``capabilities`` add up."""

	class Marker(Capability):
		name = "marker"

	class Hands(Capability):
		def __init__(self, *caps: Capability) -> None:
			self.caps = caps

		def hand_down(self, run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
			return [{"capabilities": self.caps, "cost_left": len(self.caps)} for _ in tools]

	first = type("First", (Hands,), {"name": "first"})
	second = type("Second", (Hands,), {"name": "second"})
	a, b = Marker(), type("Other", (Capability,), {"name": "other"})()
	seen: list[Any] = []

	@tool
	async def look(context: ToolContext) -> str:
		"""Look."""
		seen.append(context.run)
		return "ok"

	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=ScriptedModel([call_tool("local.look"), finish("x")]),
		tools=[look],
		capabilities=[first(a), second(b)],
	)
	await agent.run("go")
	[run] = seen
	assert run.capabilities == (a, b) and run.cost_left == 1  # the last capability's


async def test_a_durable_replay_ends_a_budgeted_run_at_the_same_step() -> None:
	"""The budget decides from the journaled usage: a replay ends where the run ended."""
	om = OpenMolt(entry_points=False)

	def make(replies: list[Any]) -> Any:
		return om.create_agent(
			name="A",
			model=ScriptedModel(replies, usage=PRICED),
			tools=[echo],
			max_tokens=300,
		)

	replies = [call_tool("local.echo", text=str(i)) for i in range(6)]
	agent = make(replies)
	port = JournalPort()
	state = agent.new_state("go")
	saved = state.to_dict()
	first = await agent.execute(state, port=port)
	assert (first.status, first.error) == ("limit_reached", "360 of 300 tokens used")
	assert [k for k in port.keys() if k.startswith("model:")] == ["model:1", "model:2", "model:3"]

	replayer = make([])  # a model call would fail: every step comes from the journal
	second = await replayer.execute(RunState.from_dict(saved), port=JournalPort(port.recorded))
	assert (second.status, second.error) == (first.status, first.error)
	assert second.state.to_dict() == first.state.to_dict()
	await om.aclose()


def test_the_loop_fields_are_those_the_loop_gives_each_call() -> None:
	"""What a capability may hand down is every field of CallingRun the loop leaves unset."""
	from dataclasses import fields

	from openmolt_core.tools import LOOP_FIELDS, CallingRun

	handed = {f.name for f in fields(CallingRun)} - LOOP_FIELDS
	assert LOOP_FIELDS < {f.name for f in fields(CallingRun)}
	assert handed == {
		"on_approval_request",
		"cost_left",
		"tokens_left",
		"taint",
		"capabilities",
		"private",
	}
