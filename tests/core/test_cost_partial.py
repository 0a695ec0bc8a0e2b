"""A run of priced and unpriced calls says its cost is partial, never a whole it is not.

``cost_usd`` summed the priced calls only: an unknown model beside a priced one, a fallback to a
local model or a sub-agent of an unpriced model left a number that read as the run's whole cost.
`openmolt_core.llm.Usage` now counts ``unpriced_calls``; ``cost_partial`` says the cost is a lower
bound, in the result, the events, the run store's rows, the CLI summary and the viewer's data.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.llm import Usage
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

PRICE = (1.0, 0.1, 2.0, None)


def test_a_sum_of_priced_and_unpriced_usage_is_partial() -> None:
	"""Usage.add counts the unpriced calls; a stored sum round-trips them."""
	total = Usage()
	total.add(Usage(input_tokens=10, cost_usd=0.5, calls=1))
	assert not total.cost_partial and total.unpriced_calls == 0
	total.add(Usage(input_tokens=10, calls=1))  # no price
	total.add(Usage(input_tokens=10, calls=3, unpriced_calls=3))  # an unpriced sub-run
	assert total.cost_usd == 0.5 and total.unpriced_calls == 4 and total.cost_partial
	back = Usage.from_dict(json.loads(json.dumps(total.to_dict())))
	assert back.unpriced_calls == 4 and back.cost_partial
	old = Usage.from_dict({"calls": 2, "cost_usd": None})  # saved before: all of it unpriced
	mixed = Usage(cost_usd=1.0, calls=1)
	mixed.add(old)
	assert mixed.unpriced_calls == 2 and mixed.cost_partial


async def test_a_sub_agent_of_an_unpriced_model_makes_the_callers_cost_partial() -> None:
	"""A priced caller whose sub-agent's model has no price: the result and the event say partial."""
	om = OpenMolt(entry_points=False)
	sub = om.create_agent(name="helper", model=ScriptedModel([finish(result="4")]))
	model = ScriptedModel([call_tool("local.helper", task="2+2"), finish(result="4")], price=PRICE)
	agent = om.create_agent(name="A", model=model, tools=[sub])
	finished: list[Any] = []
	agent.on("finish", finished.append)
	result = await agent.run("go")
	await om.aclose()
	assert result.usage.cost_usd is not None and result.usage.cost_usd > 0
	assert result.usage.unpriced_calls == 1 and result.usage.cost_partial
	assert result.to_dict()["usage"]["unpriced_calls"] == 1


def test_the_cli_summary_says_the_cost_is_partial() -> None:
	"""The summary line shows the cost as a lower bound and how many calls had no price."""
	from openmolt_core.cli._summary import summary
	from openmolt_core.result import RunResult, RunState

	usage = Usage(input_tokens=100, output_tokens=10, cost_usd=0.25, calls=3, unpriced_calls=1)
	state = RunState(usage=usage)
	result = RunResult(
		output="x", status="success", human_message="", plan=[], steps=1, usage=usage, state=state
	)
	text = summary(result)
	assert "$0.2500+" in text and "1 call unpriced" in text


async def test_max_cost_fails_closed_once_a_call_had_no_price() -> None:
	"""A call left unpriced under max_cost (its price gone after creation) ends the run: not free."""
	model = ScriptedModel(
		[call_tool("local.nothing"), call_tool("local.nothing"), finish(result="x")], price=PRICE
	)
	om = OpenMolt(entry_points=False)

	def nothing() -> str:
		"""Do nothing."""
		return "ok"

	agent = om.create_agent(name="A", model=model, tools=[nothing], max_cost=100.0)
	model.price = lambda name: None  # type: ignore[method-assign]
	result = await agent.run("go")
	await om.aclose()
	assert result.status == "limit_reached" and "had no price" in (result.error or "")
	assert model.calls == 1
