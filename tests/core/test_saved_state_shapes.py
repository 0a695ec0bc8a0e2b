"""A saved state whose fields have other types than `RunState.to_dict` writes is refused by name.

Measured before: of every field of a parked run's saved state, replaced by another JSON type or
removed, resuming it raised ``AttributeError`` (``usage: null``, ``pending: 1``,
``usage_by_model: 1``) from inside the run, and a message's content or a usage count of another
type was taken as it came, to fail later (a count of ``"x"`` cannot be added to).
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import ConfigurationError, FunctionTool, HumanInputUnavailable, OpenMolt, RunState
from openmolt_core.llm import Usage
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from tests._mutate import changed, variants

pytestmark = pytest.mark.anyio

NONE = {"type": "object", "properties": {}, "additionalProperties": False}


def nobody(question: str) -> str:
	raise HumanInputUnavailable("no one to ask")


def agent(om: OpenMolt, model: ScriptedModel) -> Any:
	tool = FunctionTool(
		handle="find", description="", function=lambda i, c: ["A"], input_schema=NONE, labels=[]
	)
	return om.create_agent(name="P", model=model, tools=[tool], on_human_input_request=nobody)


async def parked_state(om: OpenMolt) -> dict[str, Any]:
	parked = await agent(om, ScriptedModel([[call_tool("local.find"), ask_human("Which?")]])).run(
		"pay"
	)
	assert parked.status == "human_input_required"
	return parked.state.to_dict()


async def test_every_field_of_another_type_is_refused_or_resumes() -> None:
	"""Each field replaced or removed: the run resumes, or resume() refuses it as configuration."""
	om = OpenMolt(entry_points=False)
	saved = await parked_state(om)
	crashed = []
	for at, other, state in variants(saved):
		try:
			await agent(om, ScriptedModel([finish("paid")])).resume(state, answer="A")
		except ConfigurationError:
			pass
		except Exception as exc:  # what this test is for
			crashed.append((at, other, repr(exc)))
	assert crashed == []


@pytest.mark.parametrize(
	("at", "other", "said"),
	[
		(("usage",), 1, "usage is not a dict"),
		(("pending",), 1, "pending is not a dict"),
		(("usage_by_model",), [], "usage_by_model is not a dict"),
		(("steps",), True, "steps is not a int"),
		(("messages", 1, "content"), 5, "messages[1] has no text content"),
		(("messages", 0, "role"), "tool", "messages[0].role is not user or assistant"),
		(("memory", "longTerm"), ["x"], "memory.longTerm is not a str"),
		(("usage", "input_tokens"), "x", "input_tokens is no whole, non-negative number"),
		(("usage", "calls"), -1, "calls is no whole, non-negative number"),
		(("usage", "cost_usd"), "free", "cost_usd is no number"),
		(("pending", "results"), 1, "pending.results is not a list"),
		(("pending", "kind"), ["human_input"], "pending.kind is not a str"),
	],
)
async def test_the_field_is_named(at, other, said) -> None:
	"""The refusal names the field that has another type."""
	om = OpenMolt(entry_points=False)
	saved = await parked_state(om)
	with pytest.raises(ConfigurationError) as caught:
		await agent(om, ScriptedModel([finish("paid")])).resume(
			changed(saved, at, other), answer="A"
		)
	assert said in str(caught.value)
	assert str(caught.value).startswith("resume: state: not a saved run state")


def test_a_saved_state_round_trips_as_before() -> None:
	"""What to_dict writes, from_dict reads: counts, costs and null fields included."""
	state = RunState(usage=Usage(input_tokens=3, output_tokens=2, cost_usd=0.5, calls=1))
	state.pending = None
	again = RunState.from_dict(state.to_dict())
	assert again.to_dict() == state.to_dict()
	assert Usage.from_dict({"input_tokens": 1, "cost_usd": 1}).cost_usd == 1
