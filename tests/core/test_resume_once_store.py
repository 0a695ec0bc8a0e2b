"""A parked step shared through a run store is resumed once, even when it parks again in place.

A resume that decides some of a step's calls runs them and parks again at the same step on
the others: the run store's row is parked at that step again. Another process's copy of the
first park (with the decided calls still waiting) must not go on from it: its calls ran.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests.core.test_resume_once import _refunding  # the parked refund both files resume

pytestmark = pytest.mark.anyio


def _paying(store: Any, ran: list[int]) -> Any:
	"""An instance on ``store`` whose agent asks to pay two amounts, each one gated."""

	def pay(amount: int) -> str:
		"""Pay an amount.

		Args:
			amount: Cents.
		"""
		ran.append(amount)
		return "paid"

	model = ScriptedModel(
		[[call_tool("local.pay", amount=100), call_tool("local.pay", amount=200)], finish("done")]
	)
	om = OpenMolt(entry_points=False, run_store=store)
	return om.create_agent(name="Payer", model=model, tools=[pay], requires_approval=["local.pay"])


async def test_a_copy_of_a_park_its_run_went_on_from_and_parked_again_in_is_refused(
	tmp_path,
) -> None:
	"""The first resume approves one of two calls and parks again on the other, at the same step;
	a second process resuming its own copy of the first park with the same approval is refused,
	and the approved call ran once."""
	store = tmp_path / "runs.db"
	ran: list[int] = []
	first, second = _paying(store, ran), _paying(store, ran)
	parked = await first.run("pay both")
	assert parked.status == "approval_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))  # the other process's copy
	one, _ = first.approval_requests(parked.state)
	again = await first.resume(parked.state, decision=one.approve())
	assert again.status == "approval_required" and again.state.steps == parked.state.steps
	assert ran == [100]
	copy_one, _ = second.approval_requests(saved)
	with pytest.raises(ConfigurationError, match="waits no longer"):
		await second.resume(saved, decision=copy_one.approve())
	assert ran == [100]


@pytest.mark.parametrize("answer", ["A1", None])
async def test_a_copy_of_a_park_gone_on_from_with_history_after_a_resume_is_refused(
	tmp_path, answer: str | None
) -> None:
	"""``agent.run(answer, history=parked_state)`` goes on from a park as ``resume`` does: a
	second process's copy, gone on from that way once the run was resumed, is refused by the
	run store, and the refund ran once."""
	store = tmp_path / "runs.db"
	ran: list[str] = []
	first, second = _refunding(store, ran), _refunding(store, ran)
	parked = await first.run("refund my order")
	saved = json.loads(json.dumps(parked.state.to_dict()))
	assert (await first.resume(parked.state, answer="A1")).status == "success"
	with pytest.raises(ConfigurationError, match="waits no longer at step 1 in the run store"):
		await second.run(answer, history=saved)
	assert ran == ["A1"]


async def test_a_park_gone_on_from_with_history_takes_its_step(tmp_path) -> None:
	"""The first delivery by ``run(history=...)`` goes on, and the step is its: a resume of
	another copy is refused after it."""
	store = tmp_path / "runs.db"
	ran: list[str] = []
	first, second = _refunding(store, ran), _refunding(store, ran)
	parked = await first.run("refund my order")
	saved = json.loads(json.dumps(parked.state.to_dict()))
	assert (await first.run(history=parked.state)).status == "success"
	with pytest.raises(ConfigurationError, match="waits no longer at step 1 in the run store"):
		await second.resume(saved, answer="A1")
	assert ran == ["A1"]


async def test_a_cancelled_parked_run_is_not_gone_on_from_with_history(tmp_path) -> None:
	"""A parked run its caller gave up (`cancel_parked`) is refused by ``run(history=...)`` too,
	as by ``resume``: nothing runs."""
	ran: list[str] = []
	agent = _refunding(tmp_path / "runs.db", ran)
	parked = await agent.run("refund my order")
	assert await OpenMolt.of(agent).run_store.cancel_parked(parked.state.run_id, "gave up")
	with pytest.raises(ConfigurationError, match=r"resumed already .* or it was cancelled"):
		await agent.run("A1", history=parked.state)
	assert ran == []
