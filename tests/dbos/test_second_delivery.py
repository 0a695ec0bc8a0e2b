"""A decision for a call its run still waits for goes on, though delivered to an earlier park.

The run parks at one step on two calls; one delivery decides the first call, and its segment runs
it and parks again on the second. Another decision, for the second call, given to the state of
the first park (the one a surface kept, or two approvers deciding at once, each reading the same
park), was refused "already decided: another delivery resumed it from there", though nobody had
decided that call and the run waited for exactly it. Such a decision now goes on from the run's
current park (waited for when the first delivery's segment is still going); one for a call that
was decided is still refused.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ApprovalError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish

pytestmark = pytest.mark.anyio


def _agent(om: OpenMolt, paid: list[str], gate: anyio.Event | None = None) -> object:
	async def pay(invoice: str) -> str:
		"""Pay an invoice.

		Args:
			invoice: The invoice.
		"""
		paid.append(invoice)
		if gate is not None:
			await gate.wait()  # the bank confirms
		return f"paid {invoice}"

	script = [
		[call_tool("local.pay", invoice="A"), call_tool("local.pay", invoice="B")],
		finish(result="AB"),
	]
	return om.create_agent(
		name="Approved", model=ScriptedModel(script), tools=[pay], requires_approval=["local.pay"]
	)


async def test_a_decision_for_the_call_the_run_parked_again_on_goes_on(url: str) -> None:
	"""Given to the first park after another delivery parked the run again: it goes on."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	agent = _agent(om, paid)
	try:
		parked = await agent.run("pay")  # type: ignore[attr-defined]
		first, second = agent.approval_requests(parked.state)  # type: ignore[attr-defined]
		half = await agent.resume(parked.state, decision=first.approve())  # type: ignore[attr-defined]
		assert half.status == "approval_required" and paid == ["A"]
		# Before: ApprovalError "the calls run ... parked at step 1 were already decided".
		done = await agent.resume(parked.state, decision=second.approve())  # type: ignore[attr-defined]
		assert done.ok and done.output == {"result": "AB"} and paid == ["A", "B"]
		for request in (first, second):  # decided now: refused, nothing runs again
			with pytest.raises(ApprovalError, match="already decided"):
				await agent.resume(parked.state, decision=request.approve())  # type: ignore[attr-defined]
		assert paid == ["A", "B"]
	finally:
		await om.aclose()


async def test_two_decisions_at_once_for_the_two_calls_of_a_park_both_go_on(url: str) -> None:
	"""The second waits for the first delivery's segment to park again, then goes on from it."""
	paid: list[str] = []
	gate = anyio.Event()
	om = OpenMolt(durability=url, entry_points=False)
	agent = _agent(om, paid, gate)
	try:
		parked = await agent.run("pay")  # type: ignore[attr-defined]
		first, second = agent.approval_requests(parked.state)  # type: ignore[attr-defined]
		got: dict[str, object] = {}

		async def deliver(name: str, request: object) -> None:
			got[name] = await agent.resume(parked.state, decision=request.approve())  # type: ignore[attr-defined]

		backend: Any = om.durability
		reading = anyio.Event()
		ends = backend._segment_ends

		async def segment_ends(*args: Any) -> bool:
			reading.set()  # the second delivery found the first one's segment going
			return bool(await ends(*args))

		backend._segment_ends = segment_ends
		async with anyio.create_task_group() as tg:
			tg.start_soon(deliver, "first", first)
			with anyio.fail_after(30):
				while paid != ["A"]:  # noqa: ASYNC110  # the first delivery's segment pays A
					await anyio.sleep(0.02)
			tg.start_soon(deliver, "second", second)  # before: refused "already decided"
			with anyio.fail_after(30):
				await reading.wait()
			gate.set()
		assert got["first"].status == "approval_required"  # type: ignore[attr-defined]
		assert got["second"].ok and paid == ["A", "B"]  # type: ignore[attr-defined]
	finally:
		await om.aclose()


def _both_read_the_park(backend: Any) -> None:
	"""Hold each delivery's start of the next segment until two came: both read the first park."""
	start = backend._start
	came: list[anyio.Event] = []
	both = anyio.Event()

	async def held(*args: Any, **kwargs: Any) -> bool:
		came.append(anyio.Event())
		if len(came) == 2:
			both.set()
		with anyio.move_on_after(10):
			await both.wait()
		return bool(await start(*args, **kwargs))

	backend._start = held


async def test_two_decisions_read_from_one_park_at_the_same_moment_both_go_on(url: str) -> None:
	"""Neither saw the other's segment: the one whose start lost waits for it, then goes on."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	agent: Any = _agent(om, paid)
	try:
		parked = await agent.run("pay")
		first, second = agent.approval_requests(parked.state)
		got: dict[str, Any] = {}

		async def deliver(name: str, request: Any) -> None:
			got[name] = await agent.resume(parked.state, decision=request.approve())

		_both_read_the_park(om.durability)
		with anyio.fail_after(60):
			async with anyio.create_task_group() as tg:
				tg.start_soon(deliver, "first", first)
				tg.start_soon(deliver, "second", second)  # before: refused "already decided"
		assert sorted(paid) == ["A", "B"]  # each call once
		statuses = sorted(r.status for r in got.values())
		assert statuses == ["approval_required", "success"]
		assert (await om.result(parked.state.run_id)).output == {"result": "AB"}
	finally:
		await om.aclose()


async def test_one_call_decided_twice_at_the_same_moment_runs_once(url: str) -> None:
	"""Both read the park, one start wins: the other waits for its segment and is refused."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	agent: Any = _agent(om, paid)
	try:
		parked = await agent.run("pay")
		first, _ = agent.approval_requests(parked.state)
		got: list[object] = []

		async def deliver() -> None:
			try:
				got.append(await agent.resume(parked.state, decision=first.approve()))
			except ApprovalError as exc:
				got.append(exc)

		_both_read_the_park(om.durability)
		with anyio.fail_after(60):
			async with anyio.create_task_group() as tg:
				tg.start_soon(deliver)
				tg.start_soon(deliver)
		refused = [g for g in got if isinstance(g, ApprovalError)]
		assert len(refused) == 1 and "already decided" in str(refused[0])
		assert paid == ["A"]
	finally:
		await om.aclose()


async def test_a_decision_given_while_the_segment_waits_on_a_question_is_refused(url: str) -> None:
	"""The segment ran the call and asked a question (its workflow waits): refused, at once."""
	from openmolt_core.agent import HumanInputUnavailable

	def park(question: str) -> str:
		raise HumanInputUnavailable(question)

	paid: list[str] = []

	def pay(invoice: str) -> str:
		"""Pay an invoice.

		Args:
			invoice: The invoice.
		"""
		paid.append(invoice)
		return f"paid {invoice}"

	script = [[call_tool("local.pay", invoice="A"), ask_human("Receipt?")], finish(result="A")]
	om = OpenMolt(durability=url, entry_points=False)
	agent: Any = om.create_agent(
		name="Asker",
		model=ScriptedModel(script),
		tools=[pay],
		requires_approval=["local.pay"],
		on_human_input_request=park,
	)
	try:
		parked = await agent.run("pay")
		[request] = agent.approval_requests(parked.state)
		asked = await agent.resume(parked.state, decision=request.approve())
		assert asked.status == "human_input_required" and paid == ["A"]
		with anyio.fail_after(60), pytest.raises(ApprovalError, match="already decided"):
			await agent.resume(parked.state, decision=request.approve())
		assert paid == ["A"]
	finally:
		await om.aclose()
