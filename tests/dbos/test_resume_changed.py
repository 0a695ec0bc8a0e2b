"""A parked run resumed by a process whose agent of that name is another definition.

A run parked on an approval has ended its workflow: its decision starts the run's next segment in
the process that resumes it. Resumed there by another definition of its agent (an approval rule
removed, a tool's in-doubt policy laxer, other instructions), the rest of the run went on under
that definition: a call the run's own definition kept for a person ran unasked.
"""

from __future__ import annotations

from typing import Any

import pytest
from dbos import DBOS

from openmolt import Approvals, OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_dbos._engine import reset_engine
from tests.dbos._segments import PAID, pay

pytestmark = pytest.mark.anyio


async def _process(url: str, model: ScriptedModel, **options: Any) -> tuple[OpenMolt, Any]:
	om = OpenMolt(
		durability={"url": url, "worker_id": "w1"},
		approvals=Approvals(key="k" * 32),
		entry_points=False,
	)
	greeter = om.create_agent(name="Greeter", model=ScriptedModel([finish("hi")]))
	agent = om.create_agent(name="Payer", model=model, tools=[pay], **options)
	await greeter.run("hello")  # launched
	return om, agent


async def test_a_parked_run_resumed_by_an_agent_whose_rules_differ_is_refused(url: str) -> None:
	"""The approval rule removed: the decision is refused naming the run, nothing is paid; once
	moved to the new definition on purpose (``--migrate``) it goes on under its rules."""
	PAID.clear()
	first = ScriptedModel([call_tool("local.pay", invoice="A"), finish("A")])
	om, payer = await _process(url, first, requires_approval=["local.pay"])
	parked = await payer.run("pay")
	assert parked.status == "approval_required"
	saved = parked.state.to_dict()
	[request] = payer.approval_requests(saved)
	decision = request.approve().to_dict()
	await om.aclose()
	DBOS.destroy()
	reset_engine()
	# After A, the model pays B: the run's rules held every payment for a person.
	later = ScriptedModel([call_tool("local.pay", invoice="B"), finish("AB")])
	om, payer = await _process(url, later)
	try:
		with pytest.raises(ConfigurationError, match=parked.state.run_id):
			await payer.resume(saved, decision=decision)
		assert PAID == [] and later.requests == []
		# Moved to this definition on purpose: the decision goes on, under its rules.
		await om.durability.migrate(parked.state.run_id)  # type: ignore[union-attr]
		done = await payer.resume(saved, decision=decision)
		assert (done.status, PAID) == ("success", ["A", "B"])
	finally:
		await om.aclose()


async def test_a_failed_run_gone_on_from_by_another_definition_is_refused(url: str) -> None:
	"""The state a failure kept, gone on from by a process whose agent has other instructions."""
	from openmolt_core.errors import ProviderError, RunError

	PAID.clear()

	def down(request: Any) -> Any:
		raise ProviderError("provider down for good", provider="x", status_code=401)

	first = ScriptedModel([call_tool("local.pay", invoice="A"), down])
	om, payer = await _process(url, first, instructions="Pay A.")
	with pytest.raises(RunError) as caught:
		await payer.run("pay")
	kept = caught.value.result.state.to_dict()
	await om.aclose()
	DBOS.destroy()
	reset_engine()
	later = ScriptedModel([call_tool("local.pay", invoice="B"), finish("B")])
	om, payer = await _process(url, later, instructions="Pay B.")
	try:
		with pytest.raises(ConfigurationError, match=f"durable run {kept['run_id']}: agent"):
			await payer.run(history=kept)
		assert PAID == ["A"] and later.requests == []
	finally:
		await om.aclose()


async def test_a_parked_run_resumed_where_its_sub_agent_s_rules_differ_is_refused(
	url: str,
) -> None:
	"""The caller is the same; the agent it calls lost its approval rule: refused, nothing paid."""
	PAID.clear()

	async def process(model: ScriptedModel, **child: Any) -> tuple[OpenMolt, Any]:
		om = OpenMolt(
			durability={"url": url, "worker_id": "w1"},
			approvals=Approvals(key="k" * 32),
			entry_points=False,
		)
		helper = om.create_agent(
			name="Helper",
			model=ScriptedModel([call_tool("local.pay", invoice="B"), finish("B")]),
			tools=[pay],
			**child,
		)
		boss = om.create_agent(
			name="Boss", model=model, tools=[pay, helper], requires_approval=["local.pay"]
		)
		greeter = om.create_agent(name="Greeter", model=ScriptedModel([finish("hi")]))
		await greeter.run("hello")  # launched
		return om, boss

	first = ScriptedModel([call_tool("local.pay", invoice="A"), finish("A")])
	om, boss = await process(first, requires_approval=["local.pay"])
	parked = await boss.run("pay")
	saved = parked.state.to_dict()
	[request] = boss.approval_requests(saved)
	decision = request.approve().to_dict()
	await om.aclose()
	DBOS.destroy()
	reset_engine()
	later = ScriptedModel([call_tool("local.Helper", task="pay B"), finish("AB")])
	om, boss = await process(later)
	try:
		with pytest.raises(ConfigurationError, match=parked.state.run_id):
			await boss.resume(saved, decision=decision)
		assert PAID == [] and later.requests == []
	finally:
		await om.aclose()
