"""A durable segment that ran an approved call and then failed: the call never runs twice."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ApprovalError, ConfigurationError, RunError
from openmolt_core.hooks import Run
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_memory
from tests.dbos._segments import Clerk, down, down_once, pay_tool

pytestmark = pytest.mark.anyio


async def test_an_approved_call_whose_segment_then_fails_never_runs_again(url: str) -> None:
	"""Approved, run, then the model fails for good: no resume or decision makes it pay twice."""
	paid: list[int] = []

	pay = pay_tool(paid, labels=["outbound"])
	down = down_once()

	model = ScriptedModel([call_tool("local.pay", amount=5), down, down, down])
	om = OpenMolt(durability=url)
	agent = om.create_agent(name="Payer", model=model, tools=[pay], requires_approval=["local.pay"])
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	[req] = agent.approval_requests(parked.state)
	decision = req.approve()
	with pytest.raises(RunError) as caught:
		await agent.resume(saved, decision=decision)
	kept = json.loads(json.dumps(caught.value.result.state.to_dict()))
	assert paid == [5] and kept["pending"] is None  # the approved call ran once, and is recorded
	# The parked state again, with the same decision or a new one: refused before anything runs
	# (the failed segment ran the call; its kept state is the one to go on from).
	with pytest.raises(ConfigurationError, match="ran 1 step that may have had effects"):
		await agent.resume(saved, decision=decision)
	with pytest.raises((ConfigurationError, ApprovalError)):
		[again] = agent.approval_requests(saved)
		await agent.resume(saved, decision=again.approve())
	done = await agent.run(history=kept)  # the kept state goes on
	assert done.status == "success" and paid == [5]


async def test_a_capability_parked_call_whose_segment_then_fails_never_runs_again(url: str) -> None:
	"""A capability's Park (no single-use decision to guard it): the parked state is refused."""
	from tests.core.test_resume_refusals import Desk

	paid: list[int] = []

	pay = pay_tool(paid, labels=["outbound"])
	down = down_once()

	model = ScriptedModel([call_tool("local.pay", amount=5), down, down])
	om = OpenMolt(durability=url)
	agent = om.create_agent(name="Desked2", model=model, tools=[pay], capabilities=[Desk()])
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	with pytest.raises(RunError) as caught:
		await agent.resume(saved, given="yes")
	assert paid == [5]
	with pytest.raises(ConfigurationError, match=r"may have had effects .*tool:1:0:local\.pay"):
		await agent.resume(saved, given="yes")
	assert paid == [5]
	done = await agent.run(history=caught.value.result.state)
	assert done.status == "success" and paid == [5]


async def test_a_memory_update_whose_segment_then_fails_never_runs_again(url: str) -> None:
	"""The resumed segment ran no tool but a memory update's callback, then failed: refused too."""
	noted: list[str] = []

	pay = pay_tool()
	down = down_once()

	model = ScriptedModel([call_tool("local.pay", amount=5), update_memory("noted"), down, down])
	om = OpenMolt(durability=url)
	agent = om.create_agent(
		name="Clerked",
		model=model,
		tools=[pay],
		capabilities=[Clerk()],
		memory={"short_term": {"data": "", "on_update": noted.append}},
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	with pytest.raises(RunError) as caught:
		await agent.resume(saved, given="no")  # refused, the memory updated, then the model fails
	assert noted == ["noted"]
	with pytest.raises(ConfigurationError, match="memory:2:0"):
		await agent.resume(saved, given="no")
	assert noted == ["noted"]  # the callback ran once
	done = await agent.run(history=caught.value.result.state)
	assert done.status == "success" and noted == ["noted"]


class Notifier(Clerk):
	"""The clerk, who also tells a desk before each model call, in a journaled step of its own."""

	name: ClassVar[str] = "clerk"

	def __init__(self, told: list[int]) -> None:
		super().__init__()
		self.told = told

	async def before_model(self, run: Run) -> None:
		if run.state.ext.get("clerk") is None:
			return

		async def tell() -> int:
			self.told.append(run.step)
			return run.step

		await run.port.step(f"clerk:tell:{run.step}", tell)


async def test_a_capabilitys_own_step_whose_segment_then_fails_never_runs_again(url: str) -> None:
	"""The resumed segment ran no tool and no memory update but a capability's own journaled
	step (it tells someone), then failed: the parked state is refused, as for a tool call (an
	unknown step is taken to have had effects; it ran again)."""
	told: list[int] = []

	pay = pay_tool()

	model = ScriptedModel([call_tool("local.pay", amount=5), down, down, finish("done")])
	om = OpenMolt(durability=url)
	agent = om.create_agent(
		name="Notified", model=model, tools=[pay], capabilities=[Notifier(told)]
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	with pytest.raises(RunError):
		await agent.resume(saved, given="no")  # refused, the desk told, then the model fails
	assert len(told) == 1
	with pytest.raises(ConfigurationError, match=f"clerk:tell:{told[0]}"):
		await agent.resume(saved, given="no")
	assert len(told) == 1  # told once


async def test_a_kept_state_goes_on_while_its_failure_is_being_recorded(
	url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""DBOS records a failed segment's error after its caller got it: the kept state, gone on
	from at once, is not taken for the state the segment went on from (which is refused)."""
	from openmolt_dbos._backend import DBOSBackend

	paid: list[int] = []
	pay = pay_tool(paid, labels=["outbound"])

	model = ScriptedModel([call_tool("local.pay", amount=5), down, finish("done")])
	om = OpenMolt(durability=url)
	agent = om.create_agent(name="Payer", model=model, tools=[pay], requires_approval=["local.pay"])
	parked = await agent.run("pay")
	[req] = agent.approval_requests(parked.state)
	with pytest.raises(RunError) as caught:
		await agent.resume(parked.state, decision=req.approve())
	outcome = DBOSBackend._outcome
	unrecorded = {"reads": 3}  # the failed segment reads as still going this many times

	async def recording(self: DBOSBackend, wid: str) -> Any:
		if self.engine.ended.get(wid) == "error" and unrecorded["reads"] > 0:
			unrecorded["reads"] -= 1
			return None
		return await outcome(self, wid)

	monkeypatch.setattr(DBOSBackend, "_outcome", recording)
	done = await agent.run(history=caught.value.result.state)
	assert done.status == "success" and paid == [5] and unrecorded["reads"] == 0
