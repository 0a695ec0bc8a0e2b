"""Memory beyond a run's state is a capability: the loop keeps only ``state.memory``.

The built-in ``agent-memory`` capability (`openmolt_core.capabilities.Memory`) gives a new run its
memory (`Capability.first_memory`) and keeps an update beyond the run (`Capability.memory_written`:
the agent's next runs, the ``on_update`` callback); another capability may use the same hooks.
"""

from __future__ import annotations

import gc
import json
import weakref
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.hooks import Capability, Run, RunOwner
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, finish, update_memory

from ._bare import bare_agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


def _first_turn(model: ScriptedModel) -> dict[str, Any]:
	firsts = [r for r in model.requests if len(r.messages) == 1]
	loaded: dict[str, Any] = json.loads(firsts[-1].messages[0].content)
	return loaded


class Recalled(Capability):
	"""Gives every new run a memory of its own, and hears each update (what it holds, when)."""

	name = "recalled"

	def __init__(self) -> None:
		self.heard: list[tuple[str, str, int, str]] = []

	def first_memory(self, agent: RunOwner, memory: Any, state: RunState) -> dict[str, str]:
		return {"longTerm": f"{agent.name} recalls {state.user}", "shortTerm": ""}

	def memory_updated(self, run: Run, memory: str, data: str) -> None:
		self.heard.append(("updated", memory, -1, data))

	async def memory_written(self, run: Run, memory: str, index: int) -> None:
		self.heard.append(("written", memory, index, run.state.memory[memory]))


async def test_a_capability_gives_a_new_run_its_memory_and_hears_each_update() -> None:
	"""``first_memory`` answers first (the instance's capabilities come before the agent's
	memory); ``memory_written`` follows ``memory_updated``, with the command's index."""
	recalled = Recalled()
	model = ScriptedModel([[update_memory("noted"), update_memory("more", memory="longTerm")]])
	model.replies.append(finish("ok"))
	om = OpenMolt(entry_points=False, capabilities=[recalled])
	agent = om.create_agent(name="Host", model=model)
	result = await agent.run("go", user="alice")
	assert _first_turn(model)["memory"]["longTerm"] == "Host recalls alice"
	assert recalled.heard == [
		("updated", "shortTerm", -1, "noted"),
		("written", "shortTerm", 0, "noted"),
		("updated", "longTerm", -1, "Host recalls alice\nmore"),
		("written", "longTerm", 1, "Host recalls alice\nmore"),
	]
	assert result.state.memory["longTerm"] == "Host recalls alice\nmore"


async def test_what_an_agent_wrote_is_kept_for_its_next_run_and_dropped_with_it() -> None:
	"""The memory capability keeps an agent's long-term memory beside it, not beyond it."""
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([[update_memory("kept", memory="longTerm")], finish("ok"), finish("ok")])
	agent = om.create_agent(name="Host", model=model)
	await agent.run("go")
	await agent.run("again")
	assert _first_turn(model)["memory"]["longTerm"] == "kept"
	(memory,) = [c for c in agent.capabilities if c.name == "agent-memory"]
	assert memory.kept(agent) == {None: "kept"}
	gone = weakref.ref(agent)
	del agent
	gc.collect()
	assert gone() is None  # what the capability keeps of the agent does not keep it alive


async def test_an_agent_built_without_the_memory_capability_keeps_nothing_beyond_a_run() -> None:
	"""The loop changes ``state.memory``; keeping it for the next run is the capability's."""
	om = OpenMolt(entry_points=False)
	built = om.create_agent(name="Host", model=ScriptedModel([]))
	model = ScriptedModel([[update_memory("kept", memory="longTerm")], finish("ok"), finish("ok")])
	bare = bare_agent(built, model)
	first = await bare.run("go")
	assert first.state.memory["longTerm"] == "kept"
	await bare.run("again")
	assert "memory" not in _first_turn(model)


class Wrong(Capability):
	"""Answers ``first_memory`` with something that is no memory."""

	name = "wrong"

	def first_memory(self, agent: RunOwner, memory: Any, state: RunState) -> Any:
		return ["not", "a", "mapping"]


async def test_a_first_memory_that_is_no_mapping_names_the_capability() -> None:
	"""A capability's wrong answer is refused before the run starts, naming it and the hook."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Host", model=ScriptedModel([finish("ok")]), capabilities=[Wrong()]
	)
	with pytest.raises(TypeError, match=r"capability 'wrong': first_memory returned list"):
		await agent.run("go")


def test_an_agent_built_by_hand_with_memory_and_no_memory_capability_is_refused() -> None:
	"""Its memory option would be ignored: the error names the capability to add."""
	from openmolt_core.capabilities import Memory
	from openmolt_core.errors import ConfigurationError

	built = OpenMolt(entry_points=False).create_agent(name="Host", model=ScriptedModel([]))
	with pytest.raises(ConfigurationError, match=r"memory is given.*capabilities\.Memory\(\)"):
		bare_agent(built, ScriptedModel([]), memory={"short_term": "notes"})
	assert (
		bare_agent(
			built, ScriptedModel([]), memory={"short_term": "notes"}, capabilities=[Memory()]
		)
		is not None
	)
