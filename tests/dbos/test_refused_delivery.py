"""A delivery the parked step refuses starts no durable segment: the run stays parked.

Decisions for another run's call, what a capability refuses, an answer given to calls that wait
for decisions: refused in the caller's process, as in process. Such a delivery used to start the
run's next segment, which failed at once: the run then read as ended in error (``openmolt runs``,
``om.result``), its cancel was refused as "has ended", and the next delivery still made the call.
"""

from __future__ import annotations

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ApprovalError, ConfigurationError, RunError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def _agents(om: OpenMolt, paid: list[int]) -> tuple[object, object, object]:
	from tests.core.test_resume_refusals import Desk

	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	script = [call_tool("local.pay", amount=5), finish("paid")]
	approved = om.create_agent(
		name="Approved", model=ScriptedModel(script), tools=[pay], requires_approval=["local.pay"]
	)
	other = om.create_agent(
		name="Other", model=ScriptedModel(script), tools=[pay], requires_approval=["local.pay"]
	)
	desked = om.create_agent(
		name="Desked", model=ScriptedModel(script), tools=[pay], capabilities=[Desk()]
	)
	return approved, other, desked


async def _parked_on(om: OpenMolt, run_id: str) -> tuple[str, object]:
	[row] = [r for r in await om.durability.runs() if r["run_id"] == run_id]  # type: ignore[union-attr]
	return str(row["status"]), row["parked_on"]


async def test_refused_deliveries_leave_the_run_parked_and_cancellable(url: str) -> None:
	"""Each refused delivery leaves the run parked (listed so, its result the park); a cancel
	then holds, and no later delivery makes the call."""
	paid: list[int] = []
	om = OpenMolt(durability=url, entry_points=False)
	approved, other, desked = _agents(om, paid)
	try:
		[foreign] = other.approval_requests((await other.run("pay")).state)  # type: ignore[attr-defined]
		parked = await approved.run("pay")  # type: ignore[attr-defined]
		held = await desked.run("pay")  # type: ignore[attr-defined]
		with pytest.raises(ApprovalError, match="serves only its own call"):
			await approved.resume(parked.state, decision=foreign.approve())  # type: ignore[attr-defined]
		with pytest.raises(ConfigurationError, match="not an answer"):
			await approved.run("yes", history=parked.state)  # type: ignore[attr-defined]
		with pytest.raises(RunError, match="capability 'desk' refused"):
			await desked.resume(held.state, given="maybe")  # type: ignore[attr-defined]
		for state in (parked.state, held.state):
			assert await _parked_on(om, state.run_id) == ("parked", "approval_required")
			result = await om.result(state.run_id, wait=False)
			assert result is not None and result.status == "approval_required"
		await om.cancel(parked.state.run_id)
		[request] = approved.approval_requests(parked.state)  # type: ignore[attr-defined]
		with pytest.raises(ConfigurationError, match="was cancelled"):
			await approved.resume(parked.state, decision=request.approve())  # type: ignore[attr-defined]
		assert (await desked.resume(held.state, given="yes")).ok  # type: ignore[attr-defined]
		assert paid == [5]
	finally:
		await om.aclose()
