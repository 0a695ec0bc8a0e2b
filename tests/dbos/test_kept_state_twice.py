"""A failed run's kept state gone on from twice: the second time would repeat what the first did."""

from __future__ import annotations

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool
from openmolt_core.tools import tool
from tests.dbos._segments import after_reading, down, look

pytestmark = pytest.mark.anyio


async def test_a_kept_state_gone_on_from_twice_asks_the_person_once(url: str) -> None:
	"""K (kept by a failure) goes on, asks a person, fails again; K again is refused (it would
	ask them again), and the state the second failure kept goes on."""
	asked: list[str] = []

	def person(question: str) -> str:
		asked.append(question)
		return "blue"

	# The model asks until it read the answer; its first call after reading it fails.
	reply = after_reading("blue", ask_human("Which colour?"))

	model = ScriptedModel([call_tool("local.look", what="wall"), down, reply, reply, reply, reply])
	om = OpenMolt(durability=url)
	agent = om.create_agent(
		name="Painter", model=model, tools=[look], on_human_input_request=person
	)
	with pytest.raises(RunError) as first:
		await agent.run("paint the wall")
	kept = first.value.result.state
	with pytest.raises(RunError) as second:
		await agent.run(history=kept)
	assert asked == ["Which colour?"]
	with pytest.raises(ConfigurationError, match=r"may have had effects .*human:2:0"):
		await agent.run(history=kept)
	assert asked == ["Which colour?"]  # before: asked a second time
	done = await agent.run(history=second.value.result.state)
	assert done.status == "success" and asked == ["Which colour?"]


async def test_a_kept_state_gone_on_from_twice_runs_a_tool_once(url: str) -> None:
	"""The segment that went on from K ran a tool (one retried after a crash: no start recorded)
	and failed; K again is refused instead of running it a second time."""
	sent: list[str] = []

	@tool
	def send(text: str) -> str:
		"""Send a note.

		Args:
			text: The note.
		"""
		sent.append(text)
		return "sent"

	reply = after_reading('"sent"', call_tool("local.send", text="hello"))

	model = ScriptedModel([call_tool("local.look", what="inbox"), down, reply, reply, reply, reply])
	om = OpenMolt(durability=url)
	agent = om.create_agent(name="Sender", model=model, tools=[look, send])
	with pytest.raises(RunError) as first:
		await agent.run("say hello")
	kept = first.value.result.state
	with pytest.raises(RunError) as second:
		await agent.run(history=kept)
	assert sent == ["hello"]
	with pytest.raises(ConfigurationError, match=r"may have had effects .*tool:2:0:local\.send"):
		await agent.run(history=kept)
	assert sent == ["hello"]  # before: sent a second time
	done = await agent.run(history=second.value.result.state)
	assert done.status == "success" and sent == ["hello"]
