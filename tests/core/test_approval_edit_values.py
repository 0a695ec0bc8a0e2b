"""An edited input a state could not hold does not run: the person's edit is one more door.

A model's reply with ``NaN``, ``Infinity`` or a lone surrogate runs nothing (`openmolt_core._parse`,
rule 7), and the trigger server's HTTP bodies refuse them (`openmolt_serve._body`). An approval's
edited input came through neither: a handler's ``approve(input=...)``, or the run viewer's edit
(its JSON decoded by Python's ``json``, which reads ``NaN`` and ``"\\ud800"``), ran the tool with a
payment of ``nan`` or a text that cannot be encoded, while the saved state held ``"NaN"``.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.decisions import ApprovalDecision, ApprovalRequest
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
	("edit", "where"),
	[
		({"amount": float("nan"), "note": "x"}, "amount"),
		({"amount": float("inf"), "note": "x"}, "amount"),
		({"amount": -float("inf"), "note": "x"}, "amount"),
		({"amount": 5, "note": "half an emoji \ud83d"}, "note"),
	],
)
async def test_an_edited_input_a_state_cannot_hold_does_not_run(
	edit: dict[str, Any], where: str
) -> None:
	"""The tool does not run; the model hears the decision was refused; the error names where."""
	ran: list[dict[str, Any]] = []

	def pay(amount: float, note: str) -> dict[str, Any]:
		"""Pay someone.

		Args:
			amount: Euros.
			note: A note for the payee.
		"""
		ran.append({"amount": amount, "note": note})
		return {"paid": amount}

	def edited(request: ApprovalRequest) -> ApprovalDecision:
		return request.approve(input=edit)

	model = ScriptedModel([call_tool("local.pay", amount=5, note="x"), finish()])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Pay",
		model=model,
		tools=[pay],
		requires_approval=["local.pay"],
		on_approval_request=edited,
	)
	errors: list[Any] = []
	agent.on("error", errors.append)
	result = await agent.run("go")
	assert ran == []
	[entry] = model.last_turn()["results"]
	assert entry["ok"] is False and "refused (invalid)" in entry["error"]
	assert where in errors[0].message and "edited input" in errors[0].message
	result.state.to_dict()  # the state holds nothing it cannot write


async def test_a_parked_run_resumed_with_such_an_edit_is_refused_and_runs_nothing() -> None:
	"""The other door: a decision delivered to ``resume`` (the run viewer's, an application's)."""
	from openmolt_core.errors import ApprovalError

	ran: list[Any] = []

	def pay(amount: float) -> dict[str, Any]:
		"""Pay someone.

		Args:
			amount: Euros.
		"""
		ran.append(amount)
		return {"paid": amount}

	om = OpenMolt(entry_points=False)
	model = ScriptedModel([call_tool("local.pay", amount=5), finish()])
	agent = om.create_agent(name="Pay", model=model, tools=[pay], requires_approval=["local.pay"])
	parked = await agent.run("go")
	[request] = agent.approval_requests(parked.state)
	with pytest.raises(ApprovalError) as caught:
		await agent.resume(parked.state, decision=request.approve(input={"amount": float("nan")}))
	assert caught.value.problem == "invalid" and "amount" in str(caught.value)
	assert ran == []
