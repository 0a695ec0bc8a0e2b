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


async def test_a_cancel_from_elsewhere_stops_a_guardrail_agent_under_way(url: str) -> None:
	"""Cancelled in the store (as another process does), a guardrail agent's run stops too.

	Its run lives in the ``guard:`` step, as a sub-agent's in a tool step: DBOS stops a step
	under way only if it is preemptible, and the guard's was not, so the guardrail agent went
	on to make its next call after the run was cancelled.
	"""
	import anyio

	log: list[str] = []
	began = anyio.Event()

	@tool(labels=["outbound"])
	async def alert(text: str) -> str:
		"""Tell the security team.

		Args:
			text: What happened.
		"""
		log.append(text)
		began.set()
		await anyio.sleep(2)
		return "done"

	om = OpenMolt(durability=url, entry_points=False)
	judge = om.create_agent(
		name="Judge",
		model=ScriptedModel(
			[
				call_tool("local.alert", text="first"),
				call_tool("local.alert", text="second"),
				finish(action="allow", reason="ok"),
			]
		),
		tools=[alert],
		output_schema=VERDICT_SCHEMA,
	)
	agent = om.create_agent(
		name="A", model=ScriptedModel([finish()]), guardrails=[Guardrail(judge, on="input")]
	)
	try:
		handle = await agent.start("go")
		with anyio.fail_after(30):
			await began.wait()
		engine = om.durability.engine  # type: ignore[union-attr]
		await engine.client().cancel_workflow_async(handle.run_id)  # not this process's stop
		await anyio.sleep(4)
		assert log == ["first"]  # the guardrail agent made no call after the cancel
	finally:
		await om.aclose()
