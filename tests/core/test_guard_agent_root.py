"""A guardrail agent's run is nested in the run it judges: it is no root run.

`Capability.new_root_run` sees only the runs no other run started (the observers mark such a run
with its trigger). A guardrail agent's run is driven inside a step of the run it judges, as a
sub-agent's is, both when it starts clean (`Agent.execute` makes its first state) and when it
starts tainted (`openmolt_core.guardrails.Guardrail` makes it).
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.hooks import Capability
from openmolt_core.llm import Usage
from openmolt_core.observe import started_by
from openmolt_core.result import TRIGGER_KEY
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import CallingRun, tool
from tests.core.test_durability import JournalPort

pytestmark = pytest.mark.anyio

ALLOW = {"action": "allow", "reason": "ok"}


class Roots(Capability):
	"""Notes which agents' runs were rooted, and which were made."""

	name = "roots"

	def __init__(self, seen: list[tuple[str, str]]) -> None:
		self.seen = seen

	def new_root_run(self, agent: str, state: Any) -> None:
		"""Note the agent as rooted."""
		self.seen.append(("root", agent))

	def new_run(self, agent: str, state: Any) -> None:
		"""Note the agent's new run."""
		self.seen.append(("new", agent))


@tool(labels=["untrusted"])
def inbox() -> str:
	"""Read the latest mail."""
	return "hello"


@pytest.mark.parametrize("tainted", [False, True], ids=["clean", "tainted"])
async def test_a_guardrail_agents_run_is_not_rooted(tainted: bool) -> None:
	"""Only the judged run is rooted; the judge's run is made, unmarked by the trigger."""
	seen: list[tuple[str, str]] = []
	om = OpenMolt(entry_points=False)
	judge = om.create_agent(
		name="judge",
		model=ScriptedModel([finish(ALLOW)]),
		output_schema=VERDICT_SCHEMA,
		capabilities=[Roots(seen)],
	)
	script = [call_tool("local.inbox"), finish("done")] if tainted else [finish("done")]
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel(script),
		tools=[inbox],
		guardrails=[Guardrail(judge, on="output")],
		capabilities=[Roots(seen)],
	)
	with started_by("webhook", where="Triage"):
		result = await boss.run("go")
	assert result.ok, result.error
	assert seen == [("root", "boss"), ("new", "boss"), ("new", "judge")]
	assert judge.last_state is not None and TRIGGER_KEY not in judge.last_state.ext


async def test_execute_with_a_parent_is_not_rooted() -> None:
	"""`Agent.execute(parent=...)` starts a run nested in its parent's step: not a root run."""
	seen: list[tuple[str, str]] = []
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A", model=ScriptedModel([finish("done")]), capabilities=[Roots(seen)]
	)
	result = await agent.execute(None, port=JournalPort(), input="go", parent=_parent())
	assert result.ok
	assert seen == [("new", "A")]


async def _nothing(event: Any) -> None:
	return None


def _parent() -> CallingRun:
	return CallingRun("run-1", "tool:1:0:local.judge", 1, 0, Usage(), bool, _nothing)
