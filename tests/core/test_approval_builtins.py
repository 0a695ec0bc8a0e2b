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
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from tests._postbox import Postbox

pytestmark = pytest.mark.anyio


@tool(labels=[])
def add(a: int, b: int) -> int:
	"""Add."""
	return a + b


async def test_every_tool_means_a_capability_s_built_in_tool_too() -> None:
	"""``"*"``: the capability's ``openmolt.post`` waits; nothing is posted."""
	postbox = Postbox(labels=[])  # a tool that says it carries no data
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
	postbox = Postbox(labels=[])  # a tool that says it carries no data
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
		"openmolt.readResult": None,  # the core's machinery: never asks
	}


async def test_a_batch_reserves_the_built_in_call_s_approval_step_and_replays() -> None:
	"""In a concurrent batch the gate's ``approval`` step is reserved in command order.

	A durable replay of the run finds the decision under the same number and does not ask
	again, whichever call of the batch ended first.
	"""
	from openmolt_core.result import RunState
	from tests.core.test_durability import JournalPort

	postbox = Postbox(labels=[])  # a tool that says it carries no data
	asked: list[str] = []

	def approve(request: Any) -> Any:
		asked.append(request.tool)
		return request.approve()

	def make(replies: list[Any]) -> Any:
		om = OpenMolt(entry_points=False)
		return om.create_agent(
			name="A",
			model=ScriptedModel(replies),
			tools=[add],
			capabilities=[postbox],
			requires_approval="*",
			on_approval_request=approve,
		)

	batch = [call_tool("local.add", a=1, b=2), call_tool("openmolt.post", text="hello")]
	agent = make([batch, finish()])
	port = JournalPort()
	state = agent.new_state("go")
	saved = state.to_dict()
	first = await agent.execute(state, port=port)
	assert first.status == "success"
	assert sorted(asked) == ["local.add", "openmolt.post"] and postbox.sent == ["hello"]
	assert "approval:1:1:openmolt.post" in port.reserved[0]
	again = await make([]).execute(RunState.from_dict(saved), port=JournalPort(port.recorded))
	assert again.status == "success"
	assert len(asked) == 2 and postbox.sent == ["hello"]  # answered from the journal


@pytest.mark.parametrize(
	("rules", "held"),
	[
		(["openmolt.post"], True),
		(["openmolt"], True),
		(["openmolt:writes"], True),
		(["openmolt.p*"], True),
		(["*", "!openmolt.post"], False),
	],
)
async def test_an_agent_s_rules_name_a_capability_s_built_in_tool(
	rules: list[str], held: bool
) -> None:
	"""Its own rules may select (or exempt) ``openmolt.post`` by name, as the instance's may.

	They were refused ("this agent uses no integration 'openmolt'"), though the gate holds such a
	call under them: only ``"*"`` could guard it, and nothing could exempt it from ``"*"``.
	"""
	postbox = Postbox(labels=[])
	model = ScriptedModel([call_tool("openmolt.post", text="hello"), finish()])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, capabilities=[postbox], requires_approval=rules
	)
	result = await agent.run("go")
	assert (result.status == "approval_required") is held
	assert postbox.sent == ([] if held else ["hello"])


def test_a_rule_naming_no_built_in_tool_is_refused_with_the_ones_there_are() -> None:
	"""A misspelt built-in tool selects nothing: refused, naming the tool it meant."""
	from openmolt_core.errors import ConfigurationError

	with pytest.raises(ConfigurationError, match=r"openmolt\.psot.*post"):
		OpenMolt(entry_points=False).create_agent(
			name="A",
			model=ScriptedModel([]),
			capabilities=[Postbox(labels=[])],
			requires_approval=["openmolt.psot"],
		)


def test_the_approval_rules_list_the_built_in_tools_a_rule_holds() -> None:
	"""``agent.approval_rules`` lists ``openmolt.post`` under ``"*"``: its calls wait.

	It listed only the agent's own tools, so what reads it (the durable definition, a viewer)
	missed a capability's built-in tool whose calls a rule holds. The core's machinery is listed
	as running unasked.
	"""
	om = OpenMolt(entry_points=False)

	def rules(**options: Any) -> dict[str, str | None]:
		agent = om.create_agent(
			name="A", model=ScriptedModel([]), tools=[add], capabilities=[Postbox(labels=[])],
			**options,
		)  # fmt: skip
		return agent.approval_rules

	reader = {"openmolt.readResult": None}  # the core's machinery: never asks
	assert rules(requires_approval="*") == {"local.add": "*", "openmolt.post": "*", **reader}
	assert rules(requires_approval="openmolt") == {
		"local.add": None,
		"openmolt.post": "openmolt",
		**reader,
	}
	assert rules() == {"local.add": None, "openmolt.post": None, **reader}
	search = om.create_agent(
		name="S", model=ScriptedModel([]), tools=[add], tool_loading="search",
		requires_approval="*",
	)  # fmt: skip
	assert search.approval_rules == {
		"openmolt.searchTools": None,
		"openmolt.loadTools": None,
		"local.add": "*",
		**reader,
	}
