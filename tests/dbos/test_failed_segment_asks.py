"""A resumed segment that asked a person and then failed: delivered again, nobody is asked twice."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool
from tests.dbos._segments import Clerk, after_reading, look, pay_tool

pytestmark = pytest.mark.anyio


async def test_a_question_a_failed_segment_asked_is_not_asked_again(url: str) -> None:
	"""Approved, asked a person (who answered), then the model fails: the same delivery again
	would send the person the question a second time; it is refused, and the kept state goes on."""
	asked: list[str] = []

	def person(question: str) -> str:
		asked.append(question)
		return "blue"

	# The model asks until it read the answer; its first call after reading it fails.
	reply = after_reading("blue", ask_human("Which colour?"))
	model = ScriptedModel([call_tool("local.look", what="x"), reply, reply, reply, reply])
	om = OpenMolt(durability=url)
	agent = om.create_agent(
		name="Asker",
		model=model,
		tools=[look],
		capabilities=[Clerk(only="local.look")],
		on_human_input_request=person,
	)
	parked = await agent.run("paint")
	assert parked.status == "approval_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	with pytest.raises(RunError) as caught:
		await agent.resume(saved, given="no")
	assert len(asked) == 1
	with pytest.raises(ConfigurationError, match=r"may have had effects .*human:2:0"):
		await agent.resume(saved, given="no")
	assert len(asked) == 1  # before: the person was asked the question a second time
	done = await agent.run(history=caught.value.result.state)  # the kept state holds the answer
	assert done.status == "success" and len(asked) == 1


async def test_an_approver_a_failed_segment_asked_is_not_asked_again(url: str) -> None:
	"""The approval handler decided a later call, then the model failed: not delivered again."""

	asked: list[str] = []

	def approver(request: Any) -> Any:
		asked.append(request.tool)
		return request.deny("not today")

	# The model calls pay until it read the refusal; its first call after it fails.
	reply = after_reading("not today", call_tool("local.pay", amount=5))
	model = ScriptedModel([call_tool("local.look", what="x"), reply, reply, reply, reply])
	om = OpenMolt(durability=url)
	agent = om.create_agent(
		name="Approved",
		model=model,
		tools=[look, pay_tool()],
		capabilities=[Clerk(only="local.look")],
		requires_approval=["local.pay"],
		on_approval_request=approver,
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	with pytest.raises(RunError) as caught:
		await agent.resume(saved, given="no")
	assert asked == ["local.pay"]
	with pytest.raises(ConfigurationError, match=r"may have had effects .*approval:2:0:local\.pay"):
		await agent.resume(saved, given="no")
	assert asked == ["local.pay"]  # before: the approver was asked a second time
	done = await agent.run(history=caught.value.result.state)
	assert done.status == "success" and asked == ["local.pay"]
