"""A run nested in a tool's step by the tool's own code (``run(..., parent=context.run)``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from _durable import stop_process
from _harness import make_store

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool

RUN = "nested-run"


def _agents(om: OpenMolt, paid: list[int], hold: anyio.Event | None) -> Any:
	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay (outbound, no idempotency key: in doubt, a person is asked).

		Args:
			amount: How much.
		"""
		paid.append(amount)
		if hold is not None:
			await hold.wait()  # the worker dies here
		return "paid"

	payer = om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=7), finish("paid 7")]),
		tools=[pay],
	)

	async def settle(invoice: str, context: ToolContext) -> str:
		"""Settle an invoice (a run of Payer, nested in this call).

		Args:
			invoice: The invoice.
			context: The call's context.
		"""
		result = await payer.run(f"pay {invoice}", parent=context.run)
		return str(result.output)

	# Recovered, the run's first reply is the journal's: its model is asked for the rest only.
	replies = [finish("settled")] if hold is None else [call_tool("local.settle", invoice="I-1")]
	return om.create_agent(name="Clerk", model=ScriptedModel(replies), tools=[settle])


@pytest.mark.timeout(120)
def test_a_run_a_tool_nests_is_not_run_again_with_its_payment_after_a_crash(tmp_path: Path) -> None:
	"""The worker dies while the nested run's payment is in flight: the recovered call does not
	run the nested run again (its payment is outbound: in doubt, it must not run twice)."""
	stores = make_store("sqlite", tmp_path)
	store = {"url": next(stores), "worker_id": "nested-worker", "heartbeat": 0.2, "lapse": 1.0}
	paid: list[int] = []

	async def first() -> None:
		om = OpenMolt(durability=store, entry_points=False)
		clerk = _agents(om, paid, anyio.Event())
		try:
			await clerk.start("settle I-1", run_id=RUN)
			with anyio.fail_after(30):
				while not paid:  # noqa: ASYNC110  # the payment has begun
					await anyio.sleep(0.02)
		finally:
			await stop_process()  # as a worker that dies with the payment in flight

	async def second() -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		_agents(om, paid, None)
		try:
			await om.durability.start()  # type: ignore[union-attr]  # recovers the run
			with anyio.fail_after(30):
				while not (asked := await om.pending()):  # the store
					assert paid == [7], "the nested run started again, and paid again"
					await anyio.sleep(0.1)
				await om.answer(RUN, "yes, I see the payment")
				return asked[0], await om.result(RUN)
		finally:
			await stop_process()

	anyio.run(first)
	asked, result = anyio.run(second)
	assert paid == [7]  # the nested run did not start again
	assert "In doubt" in asked.question and "local.settle" in asked.question
	assert result.status == "success" and result.output == "settled"
	assert "yes, I see the payment" in result.state.messages[2].content  # the call's result
