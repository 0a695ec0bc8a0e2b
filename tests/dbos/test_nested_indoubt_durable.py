"""A guardrail agent on the durable port: in doubt after a crash, judged again on resume.

A guardrail agent's run lives inside one journaled step (``guard:...``). Found started by an
earlier execution of the same state (its worker died), an agent with a tool that may send is not
run again and its verdict fails closed; a call parked for approval is judged again, rightly, by
the segment that resumes it.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def _judge(om: OpenMolt, alerts: list[str], verdicts: int) -> Any:
	@tool(labels=["outbound"])
	def alert(text: str) -> str:
		"""Tell the security team.

		Args:
			text: What happened.
		"""
		alerts.append(text)
		return "done"

	replies: list[Any] = []
	for n in range(verdicts):
		replies += [call_tool("local.alert", text=f"look {n}"), finish(action="allow", reason="ok")]
	return om.create_agent(
		name="Judge", model=ScriptedModel(replies), tools=[alert], output_schema=VERDICT_SCHEMA
	)


async def test_a_guardrail_agent_started_before_is_not_run_again_and_trips(url: str) -> None:
	"""A recorded start of the guard's step (a dead worker's): no second alert, the input trips."""
	om = OpenMolt(durability=url, entry_points=False)
	alerts: list[str] = []
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([finish()]),
		guardrails=[Guardrail(_judge(om, alerts, 1), on="input")],
	)
	await om.durability.start()  # type: ignore[union-attr]
	engine = om.durability.engine  # type: ignore[union-attr]
	# What the worker that died recorded as it began judging the run's input.
	assert not engine.record_start("r-1", "guard:0:input:0:0@0", "r-1")
	result = await agent.run("go", history=RunState(run_id="r-1"))
	assert alerts == []
	assert result.status == "guardrail_tripped"
	assert "in doubt" in (result.error or "")
	await om.aclose()


async def test_a_call_parked_for_approval_is_judged_again_when_resumed(url: str) -> None:
	"""The resumed segment judges the parked call afresh (no false doubt); the call runs once."""
	om = OpenMolt(durability=url, entry_points=False)
	alerts: list[str] = []
	sent: list[str] = []

	@tool(labels=["outbound"])
	def send(text: str) -> str:
		"""Send.

		Args:
			text: The text.
		"""
		sent.append(text)
		return "ok"

	agent = om.create_agent(
		name="A",
		model=ScriptedModel([call_tool("local.send", text="hi"), finish()]),
		tools=[send],
		guardrails=[Guardrail(_judge(om, alerts, 2), on="tool_call")],
		requires_approval=["local.send"],
	)
	parked = await agent.run("go")
	assert parked.status == "approval_required", parked.error
	[request] = agent.approval_requests(parked.state)
	done = await agent.resume(parked.state, decision=request.approve())
	assert done.status == "success", done.error
	assert sent == ["hi"]
	assert alerts == ["look 0", "look 1"]
	await om.aclose()
