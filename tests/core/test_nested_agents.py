"""The agents a capability runs inside a run count as the run's, whoever's capability it is.

`Capability.nested_agents` is the one notion the kernel knows: the safety capability answers
with its guardrail agents, and a third-party capability that runs an agent of its own inside a
run answers the same way, so that agent's tools count in the run's labels
(`openmolt_core.tools.nested_labels`) and in-doubt policy (`nested_in_doubt`).
"""

from __future__ import annotations

from typing import Any

from openmolt import OpenMolt
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.hooks import Capability
from openmolt_core.subagents import AgentTool
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.tools import guard_agents, nested_agents, nested_in_doubt, nested_labels, tool


@tool(labels=["outbound"])
def send(text: str) -> str:
	"""Send text out.

	Args:
		text: What to send.
	"""
	return "sent"


@tool(labels=[])
def look() -> str:
	"""Look a fact up."""
	return "blue"


class Reviewer(Capability):
	"""Runs an agent of its own inside each run (a reviewer with tools of its own)."""

	name = "reviewer"

	def __init__(self, agent: Any) -> None:
		self.agent = agent

	def nested_agents(self) -> list[Any]:
		"""The reviewing agent."""
		return [self.agent]


def _agents(om: OpenMolt) -> tuple[Any, Any]:
	reviewer = om.create_agent(name="R", model=ScriptedModel([finish("ok")]), tools=[send])
	host = om.create_agent(
		name="Host",
		model=ScriptedModel([finish("ok")]),
		tools=[look],
		capabilities=[Reviewer(reviewer)],
	)
	return host, reviewer


def test_a_capabilitys_nested_agent_counts_in_labels_and_policy() -> None:
	"""The host's own tools send nothing; the agent its capability runs does: both count."""
	om = OpenMolt(entry_points=False)
	host, reviewer = _agents(om)
	assert nested_agents(host) == [reviewer]
	assert "outbound" in nested_labels(AgentTool(host))
	assert nested_in_doubt(host) == "ask"
	plain = om.create_agent(name="Plain", model=ScriptedModel([finish("ok")]), tools=[look])
	assert "outbound" not in nested_labels(AgentTool(plain)) and nested_in_doubt(plain) == "retry"


def test_the_guardrail_agents_are_the_safety_capabilitys_nested_agents() -> None:
	"""A guardrail agent is listed once, through the safety capability; a function is not."""
	om = OpenMolt(entry_points=False)
	judge = om.create_agent(
		name="Judge",
		model=ScriptedModel([finish("ok")]),
		tools=[send],
		output_schema=VERDICT_SCHEMA,
	)
	guards = [
		Guardrail(judge, on="output"),
		Guardrail(judge, on="input"),
		Guardrail(lambda c: None, on="output"),
	]
	agent = om.create_agent(name="A", model=ScriptedModel([finish("ok")]), guardrails=guards)
	assert nested_agents(agent) == [judge] == guard_agents(agent)
	assert "outbound" in nested_labels(AgentTool(agent))
