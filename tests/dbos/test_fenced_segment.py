"""A resumed segment replayed in the worker that ran it (its lease lapsed, then came back)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_dbos import _engine

pytestmark = pytest.mark.anyio


async def _until(check: Any, what: str, seconds: float = 60) -> None:
	deadline = time.monotonic() + seconds
	while not check():
		assert time.monotonic() < deadline, f"no {what} in {seconds} s"
		await anyio.sleep(0.02)


async def test_an_approved_segment_goes_on_after_its_worker_lost_its_lease_and_got_it_back(
	url: str,
) -> None:
	"""The worker's lease lapses during the approved call, then comes back: the segment is
	replayed in the same process and goes on (the call in doubt, asked about), instead of
	failing on its own decision as 'already decided'."""
	gate = anyio.Event()
	paid: list[int] = []

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		await gate.wait()
		return "paid"

	asked: list[str] = []

	def checked(question: str) -> str:
		asked.append(question)
		return "yes, it went through"

	model = ScriptedModel([call_tool("local.pay", amount=5), finish("paid"), finish("paid")])
	om = OpenMolt(durability={"url": url, "heartbeat": 0.2, "lapse": 30}, entry_points=False)
	agent = om.create_agent(
		name="Payer",
		model=model,
		tools=[pay],
		requires_approval=["local.pay"],
		on_human_input_request=checked,
	)
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		[request] = agent.approval_requests(parked.state)
		results: list[Any] = []

		async def resume() -> None:
			results.append(await agent.resume(parked.state, decision=request.approve()))

		async with anyio.create_task_group() as tg:
			tg.start_soon(resume)
			await _until(lambda: paid, "the approved call")
			engine = _engine._ENGINE
			heartbeat = engine.heartbeat if engine is not None else None
			assert heartbeat is not None
			fences = heartbeat.fences
			heartbeat._fence("the test")  # as when its lease lapses: its runs stop here
			# fenced once (not `heartbeat.fenced`: its next beat, on the heartbeat's thread, may lift
			# the fence before this line under load)
			assert heartbeat.fences == fences + 1
			await _until(lambda: not heartbeat.fenced, "the lease back")  # its next beat
			gate.set()
		[done] = results
		assert done.status == "success", done.error
		assert paid == [5] and len(asked) == 1 and "In doubt" in asked[0]
	finally:
		await om.aclose()
