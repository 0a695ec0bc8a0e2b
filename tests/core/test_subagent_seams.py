"""Sub-agents where they meet other features: in-doubt calls, direct resumes, budgets, taint.

A sub-agent runs inside one of its caller's tool calls, with what its caller hands down: the
caller's message guardrails (`CallerWords`), what its budget has left, its taint. These tests
pin what holds at each seam:

- a caller's guardrail agents that judge a sub-agent's words run inside the call of that
  sub-agent: found in doubt after a crash, the call would run them again, so they count in
  the call's in-doubt policy as the sub-agent's own tools and guardrail agents do;
- a sub-agent's run (or a guardrail agent's) that parked cannot be resumed on its own: its
  caller's call already ended, and resumed alone it would run without its caller's guardrails,
  budget, taint and handlers;
- the last-step estimate of a cost budget prices the coming call at the dearest model that may
  answer it (a fallback model serves a step its first model fails).
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool
from tests.core.test_durability import _DoubtPort

pytestmark = pytest.mark.anyio


def _judge(om: OpenMolt, ran: list[str], labels: list[str], rounds: int = 3) -> Any:
	"""A guardrail agent that alerts someone (a tool labelled ``labels``), then allows."""

	@tool(labels=labels)
	def alert(text: str) -> str:
		"""Tell the security team.

		Args:
			text: What happened.
		"""
		ran.append(text)
		return "done"

	model = ScriptedModel(
		[call_tool("local.alert", text="look"), finish(action="allow", reason="fine")] * rounds
	)
	return om.create_agent(name="Judge", model=model, tools=[alert], output_schema=VERDICT_SCHEMA)


@tool(labels=[])
def look(q: str) -> str:
	"""Look something up.

	Args:
		q: The query.
	"""
	return "found"


def _nobody(question: str) -> str:
	raise HumanInputUnavailable(question)  # nobody can answer now: the run parks


def _asking_helper(om: OpenMolt) -> Any:
	"""A sub-agent with a read tool that asks a question (answered by its own handler)."""
	return om.create_agent(
		name="helper",
		model=ScriptedModel([ask_human("Which account?"), finish()]),
		tools=[look],
		on_human_input_request=lambda question: "the first",
	)


# in doubt: the caller's guardrails on words run inside the call ------------------------------


@pytest.mark.parametrize(
	("labels", "message", "policy"),
	[
		(["outbound"], True, "ask"),  # it judges the sub-agent's words, and may send
		([], True, "retry"),  # it judges them, but repeating it is safe
		(["outbound"], False, "retry"),  # it judges the caller's own finish only
	],
)
async def test_a_callers_message_guardrail_agent_counts_in_its_sub_agent_calls_policy(
	labels: list[str], message: bool, policy: str
) -> None:
	"""A caller's guardrail agent on words for people sets its sub-agent calls' in-doubt policy."""
	om = OpenMolt()
	guard = Guardrail(_judge(om, [], labels), on="output", message=message)
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([finish()]),
		tools=[_asking_helper(om), look],
		guardrails=[guard],
	)
	assert boss.in_doubt == {"local.helper": policy, "local.look": "retry"}
	await om.aclose()


async def test_a_sub_agent_call_judged_by_a_callers_sending_guardrail_agent_is_not_run_again() -> (
	None
):
	"""In doubt after a crash, the call is asked about: the caller's judge does not alert twice."""
	om = OpenMolt()
	ran: list[str] = []
	guard = Guardrail(_judge(om, ran, ["outbound"]), on="output", message=True)
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.helper", task="find it"), finish()]),
		tools=[_asking_helper(om)],
		guardrails=[guard],
		on_human_input_request=_nobody,
	)
	port = _DoubtPort()
	result = await boss.execute(boss.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert "tool:1:0:local.helper" in port.starts  # its start was recorded before it ran
	assert ran == []  # neither the sub-agent nor the caller's judge of its question ran again
	assert result.status == "human_input_required"
	assert "In doubt" in (result.state.pending or {}).get("message", "")
	await om.aclose()
