"""``requires_approval="*"`` against the tools capabilities add as the run's machinery.

``"*"`` means every tool. The core's own machinery (``openmolt.readResult``,
``openmolt.searchTools``, ``openmolt.loadTools``) reads what the run already holds or changes
which tools the model sees: it never asks. A built-in tool another capability adds
(``openmolt.post``) is of unknown effect, so ``"*"`` selects it: its call waits for a decision,
as any tool's does.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.hooks import Capability
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


class Postbox(Capability):
	"""A capability whose built-in tool (``openmolt.post``) sends."""

	__slots__ = ("sent",)
	name = "postbox"

	def __init__(self) -> None:
		self.sent: list[str] = []

	def builtin_tools(self, agent: Any) -> list[Any]:
		"""The sending tool, as one of the run's machinery."""

		def post(text: str) -> str:
			"""Post a text."""
			self.sent.append(text)
			return "posted"

		return [tool(name="post", labels=[])(post)]


@tool(labels=[])
def add(a: int, b: int) -> int:
	"""Add."""
	return a + b


async def test_every_tool_means_a_capability_s_built_in_tool_too() -> None:
	"""``"*"``: the capability's ``openmolt.post`` waits; nothing is posted."""
	postbox = Postbox()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([call_tool("openmolt.post", text="hello"), finish()])
	agent = om.create_agent(
		name="A", model=model, tools=[add], capabilities=[postbox], requires_approval="*"
	)
	result = await agent.run("go")
	assert postbox.sent == []
	assert result.status == "approval_required"
	(request,) = agent.approval_requests(result.state)
	assert request.tool == "openmolt.post"
	done = await agent.resume(result.state, decision=request.approve())
	assert done.status == "success"
	assert postbox.sent == ["hello"]  # once a person said yes


async def test_a_handler_decides_a_built_in_tool_s_call() -> None:
	"""With a handler the call is asked about at once: a refusal keeps it from running."""
	postbox = Postbox()
	asked: list[str] = []

	def deny(request: Any) -> Any:
		asked.append(request.tool)
		return request.deny("no posting")

	om = OpenMolt(entry_points=False)
	model = ScriptedModel([call_tool("openmolt.post", text="hello"), finish()])
	agent = om.create_agent(
		name="A",
		model=model,
		capabilities=[postbox],
		requires_approval=True,
		on_approval_request=deny,
	)
	result = await agent.run("go")
	assert result.status == "success"
	assert asked == ["openmolt.post"] and postbox.sent == []


async def test_the_core_s_machinery_runs_unasked_under_every_tool() -> None:
	"""Tool search under ``"*"``: searching and loading run; the loaded tool's call waits."""
	om = OpenMolt(entry_points=False)
	model = ScriptedModel(
		[
			call_tool("openmolt.loadTools", tools=["local.add"]),
			call_tool("local.add", a=1, b=2),
			finish(),
		]
	)
	agent = om.create_agent(
		name="A", model=model, tools=[add], tool_loading="search", requires_approval="*"
	)
	result = await agent.run("go")
	assert result.status == "approval_required"
	(request,) = agent.approval_requests(result.state)
	assert request.tool == "local.add"


@pytest.mark.parametrize("rule", ["*", "*:writes"])
def test_every_source_s_tool_that_declares_nothing_waits(rule: str, tmp_path: Any) -> None:
	"""A function, a sub-agent, ``httpRequest`` and a skill's loader: no scope says they only read."""
	skill = tmp_path / "tone"
	skill.mkdir()
	(skill / "SKILL.md").write_text("---\nname: tone\ndescription: Our tone.\n---\nBe brief.\n")

	@tool
	def send(text: str) -> str:
		"""Send a text."""
		return "sent"

	om = OpenMolt()
	helper = om.create_agent(name="helper", model=ScriptedModel([]))
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([]),
		tools=[send, helper],
		integrations=["httpRequest"],
		skills=[skill],
		requires_approval=rule,
	)
	assert agent.approval_rules == {
		"httpRequest.request": rule,
		"local.send": rule,
		"local.helper": rule,
		"skills.load": rule,
	}
