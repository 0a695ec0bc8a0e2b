"""One parked step is resumed once at a time in a process: two resumes at once run nothing twice.

A parked state may reach two places that resume it (two surfaces of a server, a retried webhook,
a double click): without a durable backend, which keeps one resume per step across processes,
the kernel refuses a second resume of the same parked step while the first goes on.
"""

from __future__ import annotations

import anyio
import pytest

from openmolt import ConfigurationError, HumanInputUnavailable, OpenMolt, RunResult
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def later(question: str) -> str:
	"""Nobody answers now: the run parks on its question."""
	raise HumanInputUnavailable(question)


@pytest.mark.parametrize(
	("first_by", "second_by"), [("resume", "resume"), ("run", "run"), ("run", "resume")]
)
async def test_two_resumes_of_one_parked_question_run_its_calls_once(
	first_by: str, second_by: str
) -> None:
	"""The second go-on from the parked step, while the first runs, is refused naming the run;
	the tool ran once. ``run(answer, history=parked)`` goes on as ``resume`` does and is held
	the same way (no run store or durable backend here: the process holds the step)."""
	ran: list[str] = []
	going = anyio.Event()
	release = anyio.Event()

	@tool(labels=[])
	async def refund(order: str) -> str:
		"""Refund an order.

		Args:
			order: The order.
		"""
		ran.append(order)
		going.set()
		await release.wait()
		return "refunded"

	model = ScriptedModel(
		[ask_human("Which order?"), call_tool("local.refund", order="A1"), finish("done")]
	)
	agent = OpenMolt(entry_points=False).create_agent(
		name="Clerk", model=model, tools=[refund], on_human_input_request=later
	)
	parked = await agent.run("refund my order")
	assert parked.status == "human_input_required"
	saved = parked.state.to_dict()  # two places hold a copy each (a store, a surface's memory)
	results = []

	async def go_on(by: str) -> RunResult:
		if by == "run":
			return await agent.run("A1", history=dict(saved))
		return await agent.resume(dict(saved), answer="A1")

	async def first() -> None:
		results.append(await go_on(first_by))

	async with anyio.create_task_group() as tg:
		tg.start_soon(first)
		await going.wait()
		with pytest.raises(ConfigurationError, match=f"{parked.state.run_id} is being resumed"):
			await go_on(second_by)
		release.set()
	assert ran == ["A1"] and results[0].status == "success"


async def test_a_resume_refused_before_it_ran_leaves_the_step_resumable() -> None:
	"""A resume that fails (a wrong delivery) frees the step: the right one goes on."""
	model = ScriptedModel([ask_human("Which order?"), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="Clerk", model=model, on_human_input_request=later
	)
	parked = await agent.run("go")
	with pytest.raises(ConfigurationError, match="answer="):
		await agent.resume(parked.state)  # no answer given
	assert (await agent.resume(parked.state, answer="A1")).status == "success"


def _refunding(store, ran: list[str]):
	"""An instance on the run store ``store`` whose agent asks which order, then refunds it."""

	@tool(labels=[])
	def refund(order: str) -> str:
		"""Refund an order.

		Args:
			order: The order.
		"""
		ran.append(order)
		return "refunded"

	model = ScriptedModel(
		[ask_human("Which order?"), call_tool("local.refund", order="A1"), finish("done")] * 2
	)
	om = OpenMolt(entry_points=False, run_store=store)
	return om.create_agent(name="Clerk", model=model, tools=[refund], on_human_input_request=later)


async def test_a_parked_step_is_resumed_once_by_the_processes_sharing_a_run_store(
	tmp_path,
) -> None:
	"""Two instances on one run store (the viewer and `openmolt serve`): the second resume of a
	parked step, from its own copy, is refused after the first went on; the tool ran once."""
	store = tmp_path / "runs.db"
	ran: list[str] = []
	first, second = _refunding(store, ran), _refunding(store, ran)
	parked = await first.run("refund my order")
	saved = parked.state.to_dict()  # each process holds a copy (read from the store)
	assert (await first.resume(dict(saved), answer="A1")).status == "success"
	with pytest.raises(ConfigurationError, match="waits no longer at step 1 in the run store"):
		await second.resume(dict(saved), answer="A1")
	assert ran == ["A1"]


async def test_a_run_store_that_cannot_be_read_refuses_no_resume(tmp_path, caplog) -> None:
	"""A store whose claim fails records nothing, so it cannot refuse: the resume goes on, and the
	log says the store could not be read (naming the agent and the run)."""
	ran: list[str] = []
	agent = _refunding(tmp_path / "runs.db", ran)
	parked = await agent.run("refund my order")
	store = OpenMolt.of(agent).run_store

	async def broken(run_id: str, steps: int, pending: object = None) -> str | None:
		raise OSError("disk gone")

	store.claim_parked = broken  # type: ignore[method-assign]
	with caplog.at_level("WARNING", logger="openmolt"):
		assert (await agent.resume(parked.state, answer="A1")).status == "success"
	assert ran == ["A1"]
	assert f"Clerk: the run store could not be read to resume {parked.state.run_id}" in caplog.text


async def test_a_cancelled_parked_run_is_not_resumed_from_a_copy(tmp_path) -> None:
	"""A parked run its caller gave up (cancel_parked) is refused, from any copy of its state."""
	store = tmp_path / "runs.db"
	ran: list[str] = []
	agent = _refunding(store, ran)
	parked = await agent.run("refund my order")
	assert await OpenMolt.of(agent).run_store.cancel_parked(parked.state.run_id, "gave up")
	with pytest.raises(ConfigurationError, match=r"resumed already .* or it was cancelled"):
		await agent.resume(parked.state, answer="A1")
	assert ran == []


async def test_a_resume_refused_before_it_went_on_gives_the_run_back(tmp_path) -> None:
	"""A resume refused once it took the run (in another session than the run's) leaves the run
	parked in the store: the right resume then goes on."""
	from openmolt import InMemorySession

	store = tmp_path / "runs.db"
	ran: list[str] = []
	agent = _refunding(store, ran)
	mine, other = InMemorySession("mine"), InMemorySession("other")
	parked = await agent.run("refund my order", session=mine)
	with pytest.raises(ConfigurationError, match="this run is a turn of session 'mine'"):
		await agent.resume(parked.state, answer="A1", session=other)
	row = await OpenMolt.of(agent).run_store.run(parked.state.run_id)
	assert row is not None and row.status == "human_input_required"
	assert (await agent.resume(parked.state, answer="A1", session=mine)).status == "success"
	assert ran == ["A1"]


async def test_a_delivery_the_parked_step_refuses_leaves_the_run_parked_in_the_store(
	tmp_path,
) -> None:
	"""A decision for another run's call, or what a capability refuses, is refused before the run
	goes on: the store keeps the run parked (not ended in error), and the right delivery runs."""
	from openmolt_core.errors import ApprovalError, RunError
	from tests.core.test_resume_refusals import Desk

	store = tmp_path / "runs.db"
	paid: list[int] = []

	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	om = OpenMolt(entry_points=False, run_store=store)
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
	[foreign] = other.approval_requests((await other.run("pay")).state)
	parked = await approved.run("pay")
	held = await desked.run("pay")
	with pytest.raises(ApprovalError, match="serves only its own call"):
		await approved.resume(parked.state, decision=foreign.approve())
	with pytest.raises(RunError, match="capability 'desk' refused"):
		await desked.resume(held.state, given="maybe")
	for state in (parked.state, held.state):
		row = await om.run_store.run(state.run_id)
		assert row is not None and row.status == "approval_required"
	[request] = approved.approval_requests(parked.state)
	assert (await approved.resume(parked.state, decision=request.approve())).ok
	assert (await desked.resume(held.state, given="yes")).ok
	assert paid == [5, 5]


async def test_a_capability_that_refuses_a_resume_gives_back_the_claims_taken_before_it(
	tmp_path,
) -> None:
	"""`Capability.claim_resume` hooks claim in order, the instance's run store first: one that
	refuses gives back what the others took, so the run stays parked in the store."""
	from openmolt_core.hooks import Capability

	asked: list[str] = []

	class Turnstile(Capability):
		"""Refuses the first resume it sees, then lets the next through and takes nothing."""

		name = "turnstile"

		async def claim_resume(self, agent, state):
			"""Refuse once (after the run store took the step)."""
			row = await OpenMolt.of(clerk).run_store.run(state.run_id)
			asked.append(row.status)
			if len(asked) == 1:
				raise ConfigurationError("turnstile: not yet")
			return None

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	clerk = om.create_agent(
		name="Clerk",
		model=ScriptedModel([ask_human("Which order?"), finish("done")]),
		on_human_input_request=later,
		capabilities=[Turnstile()],
	)
	parked = await clerk.run("refund my order")
	with pytest.raises(ConfigurationError, match="turnstile: not yet"):
		await clerk.resume(parked.state, answer="A1")
	row = await OpenMolt.of(clerk).run_store.run(parked.state.run_id)
	assert row is not None and row.status == "human_input_required"
	assert (await clerk.resume(parked.state, answer="A1")).status == "success"
	assert asked == ["running", "running"]  # the store took the step before the agent's hook
