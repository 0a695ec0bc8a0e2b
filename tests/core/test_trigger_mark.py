"""A run keeps the trigger it was started under, and is driven under it where no trigger is set."""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.observe import current_trigger, started_by
from openmolt_core.result import TRIGGER_KEY
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish

pytestmark = pytest.mark.anyio


def _park(question: str) -> str:
	raise HumanInputUnavailable(question)


async def test_a_chat_run_resumed_with_no_trigger_is_driven_as_the_chats() -> None:
	"""Started by a chat, the state says so; resumed where no chat is, its tools see the chat."""
	seen: list[Any] = []

	def look() -> str:
		"""Say who started the run."""
		seen.append(current_trigger())
		return "ok"

	om = OpenMolt(entry_points=False)
	script = [ask_human("Which?"), call_tool("local.look")]
	model = ScriptedModel([*script, *script, finish("done")])
	agent = om.create_agent(name="A", model=model, tools=[look], on_human_input_request=_park)
	with started_by("chat", where="telegram:A", sender="42"):
		parked = await agent.run("hi")
	assert parked.state.trigger == {"kind": "chat", "where": "telegram:A", "sender": "42"}
	assert parked.state.to_dict()["ext"][TRIGGER_KEY]["kind"] == "chat"
	again = await agent.resume(parked.state, answer="this")  # no trigger in this context
	assert seen == [{"kind": "chat", "where": "telegram:A", "sender": "42"}]
	assert current_trigger() is None  # set for the drive only
	with started_by("cli"):  # a trigger of its own wins over the mark
		done = await agent.resume(again.state, answer="that")
	assert done.ok and seen[-1] == {"kind": "cli"}
	assert done.state.trigger is not None and done.state.trigger["kind"] == "chat"


async def test_a_run_started_under_no_trigger_carries_no_mark() -> None:
	"""Without a trigger the state is as before: no mark in ext."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([finish("done")]))
	result = await agent.run("hi")
	assert result.state.trigger is None and TRIGGER_KEY not in result.state.ext


async def test_a_sub_agents_run_is_not_marked_its_callers_is() -> None:
	"""`Capability.new_root_run` sees the runs no other run started: a sub-agent's run, driven in
	its caller's context, carries no mark of its own; its caller's run does."""
	from openmolt_core.hooks import Capability

	rooted: list[str] = []

	class Roots(Capability):
		"""Notes which agents' runs were rooted."""

		name = "roots"

		def new_root_run(self, agent: str, state: Any) -> None:
			"""Note the agent."""
			rooted.append(agent)

	om = OpenMolt(entry_points=False)
	sub = om.create_agent(name="sub", model=ScriptedModel([finish("ok")]), capabilities=[Roots()])
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.sub", task="a"), finish("done")]),
		tools=[sub],
		capabilities=[Roots()],
	)
	with started_by("webhook", where="Triage"):
		result = await boss.run("go")
	assert result.ok and rooted == ["boss"]
	assert result.state.trigger == {"kind": "webhook", "where": "Triage"}
	assert sub.last_state is not None and TRIGGER_KEY not in sub.last_state.ext
