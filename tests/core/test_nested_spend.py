"""What a nested run (a sub-agent's, a guardrail agent's) spent counts in its caller, once.

A nested run hands its usage up in its result, or, when it ends without one (cut off, or failed
with an error that carries no result), to the calling run as it ends; either way every billed
call counts once in the caller's usage, per model, and in its budget.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt, Usage
from openmolt_core.errors import ConfigurationError
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

PRICED = Usage(input_tokens=100, output_tokens=20, cost_usd=0.01)


class BreaksAfter(ScriptedModel):
	"""A scripted model whose call after ``good`` answers raises a configuration error (a key
	revoked, a setting gone), which ends its run without a result."""

	def __init__(self, replies: list[Any], good: int, name: str) -> None:
		super().__init__(replies, usage=PRICED, name=name)
		self.good = good

	async def generate(self, request: ModelRequest) -> ModelResponse:
		if len(self.requests) >= self.good:
			self.requests.append(request)
			raise ConfigurationError("the key was revoked")
		return await super().generate(request)


async def test_a_sub_agent_that_fails_without_a_result_still_counts_what_it_spent() -> None:
	"""A sub-agent's first call is billed, then its run raises (no result): the caller reads the
	tool's failure and counts the billed call, under the sub-agent's model."""
	om = OpenMolt(entry_points=False)
	sub_model = BreaksAfter(
		[call_tool("local.noop"), call_tool("local.noop"), finish("ok")], good=1, name="sub"
	)

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	sub = om.create_agent(name="sub", model=sub_model, instructions="x", tools=[noop])
	top = om.create_agent(
		name="top",
		model=ScriptedModel(
			[call_tool("local.sub", task="t"), finish("done")], usage=PRICED, name="top"
		),
		instructions="x",
		tools=[sub],
	)
	result = await top.run("go")
	assert result.status == "success", result.error
	assert sub_model.calls == 2  # one answered (billed), one raised
	assert {m: u.calls for m, u in result.usage_by_model.items()} == {
		"top:scripted": 2,
		"sub:scripted": 1,
	}
	assert result.usage.calls == 3
	assert result.usage.cost_usd == pytest.approx(0.03)


async def test_a_guardrail_agent_that_fails_without_a_result_still_counts() -> None:
	"""A guardrail agent's billed call counts in the judged run when its run then raises."""
	om = OpenMolt(entry_points=False)
	judge_model = BreaksAfter([call_tool("local.noop"), finish("x")], good=1, name="judge")

	def noop() -> str:
		"""Do nothing."""
		return "ok"

	judge = om.create_agent(
		name="judge",
		model=judge_model,
		instructions="x",
		tools=[noop],
		output_schema=VERDICT_SCHEMA,
	)
	top = om.create_agent(
		name="top",
		model=ScriptedModel([finish("done")], usage=PRICED, name="top"),
		instructions="x",
		guardrails=[Guardrail(judge, on="output")],
	)
	with pytest.raises(ConfigurationError, match="revoked"):
		await top.run("go")
	state = top.last_state
	assert state is not None
	assert judge_model.calls == 2
	assert state.usage_by_model.get("judge:scripted", Usage()).calls == 1
