"""A plugin's capability (acme-approver, entry point only) in a durable run: park, resume elsewhere."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_inprocess import _steps

from openmolt import OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


async def test_a_capability_parks_a_durable_run_and_its_saved_state_resumes_it(url: str) -> None:
	sent: list[str] = []

	@tool(labels=["outbound"])
	def send(to: str) -> str:
		"""Send a letter.

		Args:
			to: The address.
		"""
		sent.append(to)
		return "sent"

	model = ScriptedModel(
		[[call_tool("approver.policy"), call_tool("local.send", to="ada")], finish("done")]
	)

	def build(om: OpenMolt) -> Any:
		return om.create_agent(
			name="Post",
			model=model,
			tools=[send],
			capabilities=[{"name": "acme-approver", "options": {"guard": ["local.send"]}}],
		)

	first = OpenMolt(durability=url)
	parked = await build(first).run("write to ada")
	run_id = parked.state.run_id
	assert parked.status == "approval_required" and sent == []
	keys = [name for _, name in _steps(url, run_id)]
	# the capabilities' decisions are journaled steps, before each call's own
	assert "hook:1:0:approver.policy" in keys and "hook:1:1:local.send" in keys
	assert "tool:1:1:local.send" not in keys
	saved = json.loads(json.dumps(parked.state.to_dict()))

	# a new agent object, from the saved JSON alone: the run's next segment is a new workflow
	done = await build(first).resume(saved, given="approve")
	await first.aclose()
	assert done.status == "success" and sent == ["ada"]
	assert done.state.ext["approver"]["approved"]
	assert model.calls == 2
	resumed = [name for _, name in _steps(url, f"{run_id}+1")]  # the segment after the park
	assert resumed.index("hook:1:1:local.send") < resumed.index("tool:1:1:local.send")


async def test_a_refused_durable_resume_keeps_the_run_parked_and_resumable(url: str) -> None:
	"""The capability refuses what was given: a clear error; the kept state resumes durably."""
	from tests.core.test_resume_refusals import Desk

	paid: list[int] = []

	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	om = OpenMolt(durability=url)
	agent = om.create_agent(name="Desked", model=model, tools=[pay], capabilities=[Desk()])
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	for given in ("maybe", "later"):  # each refused segment leaves the run resumable
		with pytest.raises(RunError) as caught:
			await agent.resume(parked.state.to_dict(), given=given)
		assert f"not {given!r}" in str(caught.value) and paid == []
	kept = json.loads(json.dumps(caught.value.result.state.to_dict()))
	done = await agent.resume(kept, given="yes")
	assert done.status == "success" and paid == [5]
	again = await agent.resume(kept, given="yes")  # the same state again: the same segment
	await om.aclose()
	assert again.status == "success" and paid == [5]
