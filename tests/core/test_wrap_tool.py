"""`Capability.wrap_tool`: around a tool call's journaled step, and the sub-agents' spend through it."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from openmolt import Capability, ConfigurationError, OpenMolt, Usage
from openmolt_core.capabilities.spend import NestedSpend
from openmolt_core.commands import CallTool
from openmolt_core.hooks import Run, ToolSpec, ToolStep, ToolWork
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import CallingRun
from tests.core._bare import bare_agent

pytestmark = pytest.mark.anyio

PRICED = Usage(input_tokens=100, output_tokens=20, cost_usd=0.01)


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


class _Mark(Capability):
	"""Marks the journaled entry inside the step, and moves the mark outside it."""

	log: ClassVar[list[str]] = []

	async def wrap_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, step: ToolStep
	) -> dict[str, Any]:
		me = self.name
		self.log.append(f"{me} before")

		async def inside(calling: CallingRun, work: ToolWork) -> dict[str, Any]:
			self.log.append(f"{me} in {calling.call}")
			entry = await work()
			self.log.append(f"{me} out")
			return {**entry, f"_{me}": calling.index}

		entry = await step(inside)
		self.log.append(f"{me} after")
		mark = entry.pop(f"_{me}")
		return {**entry, "marks": [*entry.get("marks", []), f"{me}{mark}"]}


class Outer(_Mark):
	name = "outer"


class Inner(_Mark):
	name = "inner"


def pay(amount: int) -> dict[str, Any]:
	"""Pay an amount.

	Args:
		amount: Cents.
	"""
	_Mark.log.append("paid")
	return {"paid": amount}


async def test_wrap_tool_hooks_nest_the_first_outermost_inside_the_step_too() -> None:
	"""Both the hooks and what they run inside the step nest, the first capability outermost;
	what the step journals carries their fields, and the run reads what the hooks return."""
	_Mark.log.clear()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = om.create_agent(name="A", model=model, tools=[pay], capabilities=[Outer(), Inner()])
	result = await agent.run("go")
	assert result.status == "success"
	assert _Mark.log == [
		"outer before",
		"inner before",
		"outer in tool:1:0:local.pay",
		"inner in tool:1:0:local.pay",
		"paid",
		"inner out",
		"outer out",
		"inner after",
		"outer after",
	]
	[entry] = model.last_turn()["results"]
	assert entry["result"] == {"paid": 5} and entry["marks"] == ["inner0", "outer0"]
	assert "_inner" not in entry and "_outer" not in entry


async def test_a_wrap_tool_hook_that_returns_no_entry_is_named() -> None:
	"""A hook that answers something else than the entry dict fails the run naming it."""

	class Broken(Capability):
		name = "broken"

		async def wrap_tool(
			self, run: Run, call: CallTool, tool: ToolSpec, step: ToolStep
		) -> dict[str, Any]:
			await step(lambda calling, work: work())
			return None  # type: ignore[return-value]

	om = OpenMolt(entry_points=False)
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = om.create_agent(name="A", model=model, tools=[pay], capabilities=[Broken()])
	with pytest.raises(Exception, match="broken"):
		await agent.run("go")


async def test_a_hand_built_agent_with_a_sub_agent_tool_needs_nested_spend() -> None:
	"""Without `NestedSpend`, its sub-agents' spend would count nowhere: refused, naming the fix;
	with it, the sub-agent's usage and cost count in the calling run."""
	om = OpenMolt(entry_points=False)
	sub = om.create_agent(name="researcher", model=ScriptedModel([finish("rainy")], usage=PRICED))
	built = om.create_agent(name="writer", model=ScriptedModel([]), tools=[sub])
	tools = list(built._tools.values())
	with pytest.raises(ConfigurationError, match=r"researcher.*NestedSpend\(\).*create_agent"):
		bare_agent(built, ScriptedModel([]), tools=tools)
	llm = ScriptedModel([call_tool("local.researcher", task="t"), finish("done")], usage=PRICED)
	agent = bare_agent(built, llm, tools=tools, capabilities=[NestedSpend()])
	result = await agent.run("go")
	assert result.status == "success"
	assert result.usage.calls == 3
	assert result.usage.cost_usd == pytest.approx(0.03)


@pytest.mark.parametrize(
	"name", ["add_spent", "passed_up", "read_spent", "spend_cut_off", "spent_entry", "summed"]
)
def test_the_nested_spend_names_keep_their_old_home_in_the_chain(name: str) -> None:
	"""``openmolt_core._chain`` gives the spend capability's own objects under their old names."""
	from openmolt_core import _chain
	from openmolt_core.capabilities import spend

	assert getattr(_chain, name) is getattr(spend, name)
