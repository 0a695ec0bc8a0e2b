"""A parked durable run resumed again with a state it already went on from: nothing runs twice.

Each case takes a run's parked state, resumes it once, then delivers to that same state again
(later, or at once from two tasks): the second delivery never makes a call the first one made,
and its caller is told which run and what to do.
"""

from __future__ import annotations

import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_dbos import AlreadyAnsweredError

pytestmark = pytest.mark.anyio


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


def _payer(om: OpenMolt, script: list, paid: list[str]) -> object:
	def pay(invoice: str) -> str:
		"""Pay an invoice.

		Args:
			invoice: The invoice.
		"""
		paid.append(invoice)
		return f"paid {invoice}"

	return om.create_agent(
		name="Payer", model=ScriptedModel(script), tools=[pay], on_human_input_request=park
	)


async def test_a_question_s_state_resumed_after_its_run_ended_runs_nothing_again(url: str) -> None:
	"""The run's question was answered and the run ended: the old state answered again is refused."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	script = [ask_human("Pay which?"), call_tool("local.pay", invoice="A"), finish(result="A")]
	agent = _payer(om, [*script, call_tool("local.pay", invoice="B"), finish(result="B")], paid)
	try:
		parked = await agent.run("pay")
		assert parked.status == "human_input_required"
		done = await agent.resume(parked.state, answer="A")  # type: ignore[attr-defined]
		assert done.ok and paid == ["A"]
		with pytest.raises(AlreadyAnsweredError, match=parked.state.run_id):
			await agent.resume(parked.state, answer="B")  # type: ignore[attr-defined]
		with pytest.raises(AlreadyAnsweredError, match="already answered"):  # nobody answers
			await agent.run(history=parked.state)  # type: ignore[attr-defined]
		assert paid == ["A"]
		fetched = await om.result(parked.state.run_id)
		assert fetched.output == {"result": "A"}
	finally:
		await om.aclose()


async def test_a_question_s_state_never_answers_the_run_s_next_question(url: str) -> None:
	"""A stale state resumed while its run waits on a later question does not answer that one."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	script = [
		ask_human("Pay A?"),
		ask_human("Pay B too?"),
		call_tool("local.pay", invoice="B"),
		finish(result="B"),
	]
	agent = _payer(om, script, paid)
	try:
		first = await agent.run("pay")
		second = await agent.resume(first.state, answer="go on")  # type: ignore[attr-defined]
		assert second.status == "human_input_required"
		assert second.state.pending["message"] == "Pay B too?"  # type: ignore[index]
		with pytest.raises(AlreadyAnsweredError, match=first.state.run_id):
			await agent.resume(first.state, answer="yes")  # type: ignore[attr-defined]
		pending = await om.pending()
		assert [p.question for p in pending] == ["Pay B too?"]  # still waits, unanswered
		assert paid == []
		done = await agent.resume(second.state, answer="yes")  # type: ignore[attr-defined]
		assert done.ok and paid == ["B"]
	finally:
		await om.aclose()


async def test_decisions_delivered_twice_are_refused_as_in_process(url: str) -> None:
	"""Of two approvals at once one resumes the run; the other, and a later denial, are refused.

	In process the second delivery raises ApprovalError (a call is decided once); a durable run
	used to hand it the first delivery's result, a denial reading "success".
	"""
	import json

	import anyio

	from openmolt_core.errors import ApprovalError
	from openmolt_core.tools import tool

	paid: list[int] = []

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		await anyio.sleep(0.2)
		return "paid"

	model = ScriptedModel([call_tool("local.pay", amount=5), finish("paid")] * 2)
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Approved", model=model, tools=[pay], requires_approval=["local.pay"]
	)
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		saved = json.loads(json.dumps(parked.state.to_dict()))
		[request] = agent.approval_requests(saved)
		outcomes: list[str] = []

		async def approve() -> None:
			try:
				done = await agent.resume(saved, decision=request.approve())
				outcomes.append(done.status)
			except ApprovalError as exc:
				assert parked.state.run_id in str(exc) and "decided once" in str(exc)
				outcomes.append("refused")

		async with anyio.create_task_group() as tg:
			tg.start_soon(approve)
			tg.start_soon(approve)
		assert sorted(outcomes) == ["refused", "success"] and paid == [5]
		with pytest.raises(ApprovalError, match=parked.state.run_id):
			await agent.resume(saved, decision=request.deny("no"))
		assert paid == [5]
		assert (await om.result(parked.state.run_id)).output == "paid"
	finally:
		await om.aclose()


async def test_a_capability_park_resumed_twice_at_once_runs_its_call_once(url: str) -> None:
	"""Two deliveries to one capability-parked state at once: one segment runs, both attach to it.

	(A capability's Park has no single-use decision: the second delivery gets the same result.)
	"""
	import json

	import anyio

	from tests.core.test_resume_refusals import Desk

	paid: list[int] = []

	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		await anyio.sleep(0.2)
		return "paid"

	model = ScriptedModel([call_tool("local.pay", amount=5), finish("paid")] * 2)
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Desked", model=model, tools=[pay], capabilities=[Desk()])
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		saved = json.loads(json.dumps(parked.state.to_dict()))
		outputs: list[object] = []

		async def deliver() -> None:
			done = await agent.resume(saved, given="yes")
			outputs.append((done.status, done.output))

		async with anyio.create_task_group() as tg:
			tg.start_soon(deliver)
			tg.start_soon(deliver)
		assert outputs == [("success", "paid")] * 2 and paid == [5]
		again = await agent.resume(saved, given="yes")  # later: the same segment's result
		assert again.output == "paid" and paid == [5]
	finally:
		await om.aclose()


async def test_calls_left_undecided_park_again_and_their_decisions_go_on(url: str) -> None:
	"""One of two parked calls approved, the other parks again at the same step: its approval
	runs it (as in process), once; a pass without decisions leaves the run approvable."""
	from openmolt_core.errors import ApprovalError

	paid: list[str] = []

	def pay(invoice: str) -> str:
		"""Pay an invoice.

		Args:
			invoice: The invoice.
		"""
		paid.append(invoice)
		return f"paid {invoice}"

	script = [
		[call_tool("local.pay", invoice="A"), call_tool("local.pay", invoice="B")],
		finish(result="AB"),
	]
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Approved", model=ScriptedModel(script), tools=[pay], requires_approval=["local.pay"]
	)
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		again = await agent.run(history=parked.state)  # no decisions: it parks where it was
		assert again.status == "approval_required" and paid == []
		first, second = agent.approval_requests(parked.state)
		half = await agent.resume(parked.state, decision=first.approve())
		assert half.status == "approval_required" and paid == ["A"]
		[rest] = agent.approval_requests(half.state)
		done = await agent.resume(half.state, decision=rest.approve())
		assert done.ok and done.output == {"result": "AB"} and paid == ["A", "B"]
		for state, request in ((half.state, rest), (parked.state, second)):
			with pytest.raises(ApprovalError, match="already decided"):
				await agent.resume(state, decision=request.approve())
		assert paid == ["A", "B"]
	finally:
		await om.aclose()


async def test_a_capability_that_parks_again_lets_its_next_delivery_go_on(url: str) -> None:
	"""A capability-parked run resumed with what leaves it parked at the same call (an account
	not connected yet) goes on at its next delivery, instead of getting the old park back."""
	from typing import Any, ClassVar

	from openmolt_core.hooks import Capability, Park, Proceed

	class Later(Capability):
		name: ClassVar[str] = "later"

		async def before_tool(self, run: Any, call: Any, tool: Any) -> Any:
			if run.state.ext.get("later", {}).get("ok"):
				return Proceed()
			return Park("waits", {"ticket": 7})

		async def resume(self, run: Any, parked: Any, given: Any) -> None:
			if given == "yes":
				run.state.ext["later"] = {"ok": True}

	paid: list[str] = []

	def pay(invoice: str) -> str:
		"""Pay an invoice.

		Args:
			invoice: The invoice.
		"""
		paid.append(invoice)
		return f"paid {invoice}"

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Waiting",
		model=ScriptedModel([call_tool("local.pay", invoice="A"), finish(result="A")]),
		tools=[pay],
		capabilities=[Later()],
	)
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		still = await agent.resume(parked.state, given="not yet")
		assert still.status == "approval_required" and paid == []
		done = await agent.resume(still.state, given="yes")
		assert done.ok and paid == ["A"]
		assert (await agent.resume(still.state, given="yes")).ok and paid == ["A"]
	finally:
		await om.aclose()
