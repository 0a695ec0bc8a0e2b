"""A cancelled durable run is final: no answer, resume or later call goes on with it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

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


async def test_a_run_parked_on_an_approval_is_cancelled_and_no_decision_goes_on(url: str) -> None:
	"""Parked on an approval, its workflow has ended (it returned the park): om.cancel said the run
	"has ended; nothing to do", and a later approval made the payment the cancel was for."""
	paid: list[int] = []
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([call_tool("local.pay", amount=1), finish("paid")])
	agent = om.create_agent(
		name="Payer", model=model, tools=[_payer(paid)], requires_approval=["local.pay"]
	)
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		run_id = parked.state.run_id
		await om.cancel(run_id)
		await om.cancel(run_id)  # again: still cancelled, no error
		(request,) = agent.approval_requests(parked.state)
		with pytest.raises(ConfigurationError, match=f"run {run_id} was cancelled"):
			await agent.resume(parked.state, decision=request.approve())
		with pytest.raises(ConfigurationError, match="was cancelled"):
			await om.result(run_id)
		assert paid == [] and len(model.requests) == 1
	finally:
		await om.aclose()


async def test_a_run_that_finished_is_still_not_cancelled(url: str) -> None:
	"""Only a parked run's ended workflow takes a cancel: a finished run's stays "has ended"."""
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Quick", model=ScriptedModel([finish("done")]))
	try:
		ended = await agent.run("go")
		with pytest.raises(ConfigurationError, match="has ended"):
			await om.cancel(ended.state.run_id)
		result = await om.result(ended.state.run_id)
		assert result is not None and result.status == "success"
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
	agent = om.create_agent(name="Payer", model=model, tools=[_payer(paid, 30.0, began)])
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


async def test_after_cancel_returns_no_call_of_the_run_or_its_sub_agent_goes_on(url: str) -> None:
	"""In process: the call under way stops and the sub-agent in the tool step begins no call.

	Before, om.cancel only marked the workflow cancelled: the tool step under way (a sub-agent
	paying, waiting, paying again) ran on to its end after cancel returned.
	"""
	log: list[tuple[str, int]] = []
	began = anyio.Event()

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		log.append(("began", amount))
		began.set()
		await anyio.sleep(30)  # the bank confirms (long: only the cancel ends it, however loaded)
		log.append(("done", amount))
		return "paid"

	om = OpenMolt(durability=url, entry_points=False)
	clerk = om.create_agent(
		name="Clerk",
		model=ScriptedModel(
			[
				call_tool("local.pay", amount=1),
				call_tool("local.pay", amount=2),
				call_tool("local.pay", amount=3),
				finish("done"),
			]
		),
		tools=[pay],
	)
	boss = om.create_agent(
		name="Boss",
		model=ScriptedModel([call_tool("local.Clerk", task="pay all"), finish("ok")]),
		tools=[clerk],
	)
	try:
		handle = await boss.start("go")
		with anyio.fail_after(30):
			await began.wait()
		await om.cancel(handle.run_id)
		seen = list(log)
		with anyio.fail_after(60), pytest.raises(ConfigurationError, match="was cancelled"):
			await handle.result()
		await anyio.sleep(1.5)
		assert log == seen == [("began", 1)]  # pay 1 stopped where it waited; nothing after
		runs = await om.durability.runs()  # type: ignore[union-attr]
		assert [r["status"] for r in runs] == ["cancelled"]
	finally:
		await om.aclose()


@pytest.mark.timeout(120)
def test_cancel_from_another_process_returns_once_the_run_stopped(
	store: str, spawn: Any, tmp_path: Path
) -> None:
	"""Two processes: once `cancel` returns, the worker's sub-agent begins no payment.

	Before, the cancel returned at once and the other worker's tool step ran its sub-agent on:
	it paid twice more after the cancel.
	"""
	paid = tmp_path / "paid"
	worker = spawn(["cancel_agent.py", store, str(paid), "work"], name="worker")
	worker.wait_line("started ")
	run_id = worker.output().split("started ", 1)[1].split()[0]
	deadline = time.time() + 60
	while not paid.exists() and time.time() < deadline:
		time.sleep(0.05)
	assert paid.exists(), worker.output()[-3000:]
	canceller = spawn(["cancel_agent.py", store, run_id, "cancel"], name="canceller")
	assert canceller.popen.wait(60) == 0, canceller.output()[-3000:]
	out = canceller.output()
	assert "cancelled " in out, out[-3000:]
	returned = float(out.split("cancelled ", 1)[1].split()[0])
	assert "has not confirmed" not in out, out[-3000:]
	worker.wait_line("result RunCancelledError", 30)  # a ConfigurationError too
	assert worker.popen.wait(60) == 0, worker.output()[-3000:]
	payments = [line.split() for line in paid.read_text().splitlines()]
	after = [p for p in payments if float(p[0]) > returned]
	assert after == [], (payments, returned)
	assert len(payments) < 8, payments  # cancel_agent.PAYMENTS: the run did not go on to its end


async def test_a_model_call_ended_after_a_cancel_from_elsewhere_confirms_the_stop(url: str) -> None:
	"""A model step is not preemptible: the call under way ends, no tool call follows, and the
	worker records the stop that `om.cancel` in another process waits for.

	DBOS refuses to journal that step (the cancel took the run from the execution) with the
	error of a run lost to another execution, not the cancelled one: the worker recorded no stop,
	and the other process's cancel waited its 10 s and warned that the worker had not confirmed.
	"""
	from openmolt_dbos._workers import stopped

	paid: list[int] = []
	began = anyio.Event()

	async def slow(request: Any) -> Any:
		began.set()
		await anyio.sleep(2)  # a long reply
		return call_tool("local.pay", amount=1)

	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([slow, finish("paid")])
	agent = om.create_agent(name="Payer", model=model, tools=[_payer(paid)])
	try:
		handle = await agent.start("pay")
		with anyio.fail_after(30):
			await began.wait()
		engine = om.durability.engine  # type: ignore[union-attr]
		await engine.client().cancel_workflow_async(handle.run_id)  # not this process's stop
		with anyio.fail_after(8):
			while not await anyio.to_thread.run_sync(stopped, engine.tables, handle.run_id):  # noqa: ASYNC110  # a row in the store
				await anyio.sleep(0.05)
		assert paid == [] and model.calls == 1
		runs = await om.durability.runs()  # type: ignore[union-attr]
		assert [r["status"] for r in runs] == ["cancelled"]
	finally:
		await om.aclose()
