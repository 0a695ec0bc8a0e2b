"""A cancelled durable run is final: no answer, resume or later call goes on with it."""

from __future__ import annotations

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.durability import DurabilityBackend
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


def _payer(paid: list[int], seconds: float = 0.0, began: anyio.Event | None = None) -> object:
	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		if began is not None:
			began.set()
		await anyio.sleep(seconds)
		return "paid"

	return pay


async def test_a_cancelled_parked_run_takes_no_answer_and_does_not_go_on(url: str) -> None:
	"""Cancelled while it waits on a question: om.answer and resume are refused, nothing runs.

	The question stayed marked on the workflow, so the answer was recorded and sent to a run
	nobody runs (its caller told nothing), and resume started a new segment from the parked
	state, which made the payment the cancel was meant to stop.
	"""
	paid: list[int] = []
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([ask_human("Pay?"), call_tool("local.pay", amount=1), finish("paid")])
	agent = om.create_agent(
		name="Payer", model=model, tools=[_payer(paid)], on_human_input_request=park
	)
	try:
		parked = await agent.run("pay")
		run_id = parked.state.run_id
		await om.cancel(run_id)
		with pytest.raises(ConfigurationError, match=f"run {run_id} was cancelled"):
			await om.answer(run_id, "yes")
		with pytest.raises(ConfigurationError, match=f"run {run_id} was cancelled"):
			await agent.resume(parked.state, answer="yes")  # type: ignore[attr-defined]
		with pytest.raises(ConfigurationError, match="was cancelled"):
			await om.result(run_id)
		runs = await om.durability.runs()  # type: ignore[union-attr]
		assert [r["status"] for r in runs] == ["cancelled"]
		assert await om.pending() == []
		assert paid == [] and len(model.requests) == 1
	finally:
		await om.aclose()


async def test_a_run_cancelled_while_a_tool_runs_begins_no_further_call(url: str) -> None:
	"""The call under way ends; the next one never begins and the run's result says cancelled."""
	paid: list[int] = []
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[call_tool("local.pay", amount=1), call_tool("local.pay", amount=2), finish("paid")]
	)
	began = anyio.Event()
	agent = om.create_agent(name="Payer", model=model, tools=[_payer(paid, 1.0, began)])
	try:
		handle = await agent.start("pay")
		with anyio.fail_after(30):
			await began.wait()
		await om.cancel(handle.run_id)
		with anyio.fail_after(60), pytest.raises(ConfigurationError, match="was cancelled"):
			await handle.result()
		await anyio.sleep(1.5)  # the call under way has ended: the run stopped there
		assert paid == [1] and len(model.requests) == 1
	finally:
		await om.aclose()


async def test_cancel_is_on_the_durability_port_and_the_engine_s_backend_has_it(url: str) -> None:
	"""Surfaces cancel through the port (`om.cancel`), not by knowing the engine's class."""
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Done", model=ScriptedModel([finish("done")]))
	try:
		assert callable(getattr(DurabilityBackend, "cancel", None))
		assert isinstance(om.durability, DurabilityBackend)
		ended = await agent.run("go")
		await om.result(ended.state.run_id)  # its workflow has ended too
		with pytest.raises(ConfigurationError, match="no durable run has the id 'nope'"):
			await om.cancel("nope")
		with pytest.raises(ConfigurationError, match=f"run {ended.state.run_id} has ended"):
			await om.cancel(ended.state.run_id)
	finally:
		await om.aclose()


async def test_om_cancel_without_durability_says_what_it_needs() -> None:
	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match=r"om.cancel needs durable runs"):
		await om.cancel("r1")


async def test_a_run_that_just_returned_is_not_reported_cancelled(url: str) -> None:
	"""Cancelled right as run() returns (DBOS still recording its end): refused as ended, and the
	run keeps its success; before, the cancel reported it had cancelled a run that had finished."""
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Quick", model=ScriptedModel([finish("done")] * 5))
	try:
		for _ in range(5):
			ended = await agent.run("go")
			with pytest.raises(ConfigurationError, match=f"run {ended.state.run_id} has ended"):
				await om.cancel(ended.state.run_id)
			result = await om.result(ended.state.run_id)
			assert result is not None and result.status == "success"
	finally:
		await om.aclose()
