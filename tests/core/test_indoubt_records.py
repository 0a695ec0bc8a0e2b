"""The loop's in-doubt rule reads each tool's record.

What a durable run does with a call found started but unfinished after a crash is the record's
``in_doubt``: the tool's own policy, else the record's ``in_doubt_default`` (set by the
capabilities' `Capability.describe_tools`), else ``ask`` for a tool that declares itself
``outbound`` and ``retry`` for others; never laxer than its ``in_doubt_at_least``. A run nested in a durable
call is as strict as its tools' records, and as a capability's `Capability.nested_in_doubt`
says (the safety capability's: ``ask`` when the run may send data out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._binding import bind_tools
from openmolt_core.hooks import AgentInfo, Capability, ToolRecord
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool
from tests.core._bare import bare_agent
from tests.core.test_nested_indoubt import _FreshPort

pytestmark = pytest.mark.anyio


def _send(**declared: Any) -> Any:
	@tool(labels=["outbound"], **declared)
	def send(text: str) -> str:
		"""Send text out.

		Args:
			text: What to send.
		"""
		return "sent"

	return send


def _bound(*tools: Any) -> list[Any]:
	"""Tools bound as ``create_agent`` binds them, for an agent built by hand (fresh records)."""
	return bind_tools(tools, agent="Bare")


def test_a_tool_that_declares_itself_outbound_is_asked_about_through_the_safety_capability() -> (
	None
):
	"""``create_agent`` adds the safety capability: an outbound tool with no policy is ``ask``;
	a policy the tool declares wins either way. An agent built by hand without it is no laxer:
	the record itself asks about a tool that declares itself outbound."""
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([finish("ok")])
	built = om.create_agent(name="A", model=model, tools=[_send()])
	assert built.in_doubt == {"local.send": "ask"}
	for policy in ("retry", "fail"):
		declared = om.create_agent(name="B", model=model, tools=[_send(in_doubt=policy)])
		assert declared.in_doubt == {"local.send": policy}
	assert bare_agent(built, model, tools=_bound(_send())).in_doubt == {"local.send": "ask"}


class Strict(Capability):
	"""Makes every tool that declares no policy ``fail`` in doubt."""

	name = "strict"

	def describe_tools(self, agent: AgentInfo, tools: Sequence[ToolRecord]) -> None:
		"""Every record's default policy: ``fail``."""
		for t in tools:
			t.in_doubt_default = "fail"


class Nested(Capability):
	"""Says a run of its agent nested in a durable call may not run twice."""

	name = "nested"

	def nested_in_doubt(self, agent: Any) -> str:
		"""``ask``, whatever the agent's tools."""
		return "ask"


@tool(labels=[])
def look() -> str:
	"""Look a fact up."""
	return "blue"


def test_a_capability_sets_the_policy_of_the_tools_that_declare_none() -> None:
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([finish("ok")])
	built = om.create_agent(name="A", model=model)
	assert bare_agent(built, model, tools=_bound(look)).in_doubt == {"local.look": "retry"}
	strict = bare_agent(
		built, model, tools=_bound(look, _send(in_doubt="ask")), capabilities=[Strict()]
	)
	assert strict.in_doubt == {"local.look": "fail", "local.send": "ask"}


@pytest.mark.parametrize("capabilities", [[], [Nested()]], ids=["no capability", "nested"])
async def test_a_nested_run_is_recorded_as_a_capability_says(capabilities: list[Any]) -> None:
	"""The nested agent's tools may all run again (``look``): its run nested in a durable call
	is recorded as it starts only when a capability's `Capability.nested_in_doubt` says so."""
	om = OpenMolt(entry_points=False)
	built = om.create_agent(name="A", model=ScriptedModel([finish("ok")]))
	inner = bare_agent(
		built,
		ScriptedModel([call_tool("local.look"), finish("blue")]),
		tools=_bound(look),
		capabilities=capabilities,
	)

	async def ask(question: str, context: ToolContext) -> str:
		"""Ask the inner agent.

		Args:
			question: The question.
			context: The call's context.
		"""
		result = await inner.run(question, parent=context.run)
		return str(result.output)

	model = ScriptedModel([call_tool("local.ask", question="sky?"), finish()])
	agent = om.create_agent(name="Clerk", model=model, tools=[ask])
	port = _FreshPort()
	result = await agent.execute(agent.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert result.status == "success", result.error
	assert port.starts == (["tool:1:0:local.ask#nested:1"] if capabilities else [])
	await om.aclose()
