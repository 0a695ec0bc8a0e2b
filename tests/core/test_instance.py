"""What an agent asks of its instance (`openmolt_core.agent.Instance`), and `OpenMolt.of`."""

from __future__ import annotations

from types import SimpleNamespace

from openmolt_core.agent import Instance
from openmolt_core.openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel


def test_of_is_the_agents_instance_typed() -> None:
	"""`OpenMolt.of(agent)` is ``agent.om``: the instance that created the agent."""
	om = OpenMolt()
	agent = om.create_agent(name="a", model=ScriptedModel([]), instructions="x")
	assert OpenMolt.of(agent) is agent.om is om


def test_of_returns_a_stand_in_as_it_is() -> None:
	"""`OpenMolt.of` checks nothing at run time: a test's stand-in instance comes back unchanged."""
	agent = OpenMolt().create_agent(name="other", model=ScriptedModel([]), instructions="x")
	stand_in = SimpleNamespace(run_store=None)
	agent.om = stand_in  # type: ignore[assignment]  # a duck-typed instance, as tests make
	assert OpenMolt.of(agent) is stand_in


def test_an_openmolt_offers_what_the_agent_asks() -> None:
	"""Every member of `Instance` is on `OpenMolt` (mypy checks the types where agents are made)."""
	wanted = {
		name
		for name in vars(Instance)
		if not name.startswith("_") and name not in {"register", "mro"}
	}
	assert wanted == {
		"secrets",
		"verbose",
		"files",
		"durability",
		"durable_capabilities",
		"scheduler",
		"agent_tool",
		"prepare",
	}
	om = OpenMolt()
	assert all(hasattr(om, name) for name in wanted)
	# A session's conversation is the sessions feature's, which the assembly hands it.
	from openmolt_core.assembly import Host

	assert "conversation" in vars(Host) and hasattr(om, "conversation")


def test_an_agents_skills_are_the_skills_given() -> None:
	"""``agent.skills`` (typed by `SkillInfo`) lists the `Skill` objects themselves."""
	from openmolt_core.agent import SkillInfo
	from openmolt_core.skills import Skill

	tone = Skill(name="tone", description="Write in our tone.", instructions="Be brief.")
	agent = OpenMolt().create_agent(
		name="a", model=ScriptedModel([]), instructions="x", skills=[tone]
	)
	assert agent.skills == (tone,) and agent.skills[0] is tone
	wanted = {n for n in vars(SkillInfo) if not n.startswith("_")}
	assert wanted == {"name", "description", "instructions", "root", "allowed_tools", "files"}
	assert all(hasattr(tone, n) for n in wanted) and tone.files() == []
