"""A resume racing a cancel: once ``om.cancel`` returns, nothing of the run runs."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


async def test_a_cancel_between_a_delivery_s_check_and_its_segment_stops_the_segment(
	url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The cancel lands after an approval's delivery checked for one: the payment is not made.

	Parked on an approval, the run's workflow has ended, so a cancel only records itself, and
	a delivery checks that record before it starts the run's next segment. A delivery that
	checked a moment before the cancel started the segment after it: ``om.cancel`` returned,
	and then the approved payment was made.
	"""
	from openmolt_dbos._backend import DBOSBackend

	paid: list[int] = []

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=1), finish("paid")]),
		tools=[pay],
		requires_approval=["local.pay"],
	)
	checked, go = anyio.Event(), anyio.Event()
	real = DBOSBackend._start

	async def late(self: Any, wid: str, labels: Any, args: Any, **given: Any) -> bool:
		if "+" in wid:  # the next segment: the delivery found no cancel a moment ago
			checked.set()
			await go.wait()
		return await real(self, wid, labels, args, **given)

	monkeypatch.setattr(DBOSBackend, "_start", late)
	try:
		parked = await agent.run("pay")
		run_id = parked.state.run_id
		(request,) = agent.approval_requests(parked.state)
		outcome: list[Any] = []

		async def deliver() -> None:
			try:
				outcome.append(await agent.resume(parked.state, decision=request.approve()))
			except Exception as exc:
				outcome.append(exc)

		async with anyio.create_task_group() as tg:
			tg.start_soon(deliver)
			with anyio.fail_after(30):
				await checked.wait()
			await om.cancel(run_id)
			go.set()
		assert paid == []
		assert "was cancelled" in str(outcome[0])
		with pytest.raises(Exception, match="was cancelled"):
			await om.result(run_id)
		runs = await om.durability.runs()  # type: ignore[union-attr]
		assert [r["status"] for r in runs] == ["cancelled"]
	finally:
		await om.aclose()


async def test_a_segment_that_began_before_the_cancel_was_recorded_is_cancelled_too(
	url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The cancel read the parked workflow, then a delivery's segment began and found no cancel
	recorded yet: the cancel looks again once recorded, and stops that segment before it pays."""
	from openmolt_dbos import _runs
	from openmolt_dbos._backend import DBOSBackend

	paid: list[int] = []

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=1), finish("paid")]),
		tools=[pay],
		requires_approval=["local.pay"],
	)
	checked, go, passed = anyio.Event(), anyio.Event(), anyio.Event()
	start, parked_in, looked = (
		DBOSBackend._start,
		DBOSBackend._parked_in,
		_runs._cancelled_while_parked,
	)

	async def late_start(self: Any, wid: str, labels: Any, args: Any, **given: Any) -> bool:
		if "+" in wid:  # the next segment: the delivery found no cancel a moment ago
			checked.set()
			await go.wait()
		return await start(self, wid, labels, args, **given)

	async def cancel_reads(self: Any, status: Any) -> bool:
		found = await parked_in(self, status)
		if found and not go.is_set():  # the cancel found the park: now the segment begins
			go.set()
			await passed.wait()
		return found

	async def segment_looks(engine: Any, run_id: str) -> bool:
		found = await looked(engine, run_id)
		passed.set()  # no cancel recorded yet
		await anyio.sleep(1.5)  # the cancel records itself and looks again meanwhile
		return found

	monkeypatch.setattr(DBOSBackend, "_start", late_start)
	monkeypatch.setattr(DBOSBackend, "_parked_in", cancel_reads)
	monkeypatch.setattr(_runs, "_cancelled_while_parked", segment_looks)
	try:
		parked = await agent.run("pay")
		run_id = parked.state.run_id
		(request,) = agent.approval_requests(parked.state)
		outcome: list[Any] = []

		async def deliver() -> None:
			try:
				outcome.append(await agent.resume(parked.state, decision=request.approve()))
			except Exception as exc:
				outcome.append(exc)

		async with anyio.create_task_group() as tg:
			tg.start_soon(deliver)
			with anyio.fail_after(30):
				await checked.wait()
			await om.cancel(run_id)
			assert passed.is_set()
		await anyio.sleep(0.5)
		assert paid == []
		assert "was cancelled" in str(outcome[0])
	finally:
		await om.aclose()
