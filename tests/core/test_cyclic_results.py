"""A tool's result that contains itself ends as a note, not an endless walk that hangs the run.

A function tool can return a Python value that refers to itself (``d["self"] = d``). The check
that a result can be held by the state walked it forever: the run hung at the tool's step, its
event loop blocked. The walk now knows the containers it is inside; the result the model reads
has the cycle cut, with a note, and the run goes on.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core._support.jsonsafe import CYCLE_NOTE, encodable, problem
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


def test_a_value_that_contains_itself_is_a_problem_and_a_shared_one_is_not() -> None:
	"""A cycle is named with its path; a list held twice (no cycle) is fine and kept as is."""
	d: dict[str, Any] = {"a": [1, 2]}
	d["inner"] = {"back": d}
	assert (
		problem(d)
		== "inner.back: refers to a value that contains it (a cycle), which JSON cannot write"
	)
	loop: list[Any] = [1]
	loop.append(loop)
	assert "[1]: refers to a value that contains it" in str(problem(loop))
	shared = [1, 2]
	twice = {"x": shared, "y": shared, "z": [shared, shared]}
	assert problem(twice) is None and encodable(twice) is twice


def test_encodable_cuts_the_cycle_with_a_note() -> None:
	"""The copy replaces the reference to an enclosing value; what else it holds is kept."""
	d: dict[str, Any] = {"name": "x", "nan": float("nan")}
	d["self"] = d
	cleaned = encodable(d)
	assert cleaned == {"name": "x", "nan": "NaN", "self": CYCLE_NOTE}
	json.dumps(cleaned)  # it can be written


async def test_a_run_whose_tool_returns_a_cycle_goes_on() -> None:
	"""The run ends (it hung at the tool's step); the model read the result with the cycle cut."""

	def graph(name: str) -> dict[str, Any]:
		"""A node that points back at itself.

		Args:
			name: The node's name.
		"""
		node: dict[str, Any] = {"name": name}
		node["next"] = node
		return node

	model = ScriptedModel([call_tool("local.graph", name="n1"), finish("done")])
	agent = OpenMolt().create_agent(name="Walker", model=model, tools=[graph])
	with anyio.fail_after(10):
		result = await agent.run("walk")
	assert result.status == "success", result.error
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert results[0]["result"] == {"name": "n1", "next": CYCLE_NOTE}


async def test_a_result_nested_thousands_deep_is_cut_at_the_journal() -> None:
	"""Every tool's result is cut at the depth a reply may nest, before the journal holds it; a
	result that is not a number (NaN) is held as text."""

	def deep(n: int) -> list[Any]:
		"""A list nested n levels deep.

		Args:
			n: Levels.
		"""
		value: list[Any] = []
		for _ in range(n):
			value = [value]
		return value

	model = ScriptedModel([call_tool("local.deep", n=20_000), finish("done")])
	agent = OpenMolt().create_agent(name="Deep", model=model, tools=[deep])
	result = await agent.run("go")
	assert result.status == "success", result.error
	entry = json.loads(model.requests[1].messages[-1].content)["results"][0]
	text = json.dumps(entry["result"])
	assert text.count("[") == 64 and "(nested more than 64 levels deep: cut)" in text
	assert problem({"a": [[[]]]}, depth=3) == "a[0][0]: nested more than 3 levels deep"
	assert problem({"a": [[[]]]}, depth=4) is None


async def test_a_result_that_is_not_a_number_is_held_as_text() -> None:
	"""NaN and the infinities from any tool become "NaN", "Infinity", "-Infinity" in the loop."""

	def ratio(a: float) -> list[float]:
		"""Ratios.

		Args:
			a: A number.
		"""
		return [float("nan"), float("inf"), -float("inf"), a]

	model = ScriptedModel([call_tool("local.ratio", a=1.5), finish("done")])
	agent = OpenMolt().create_agent(name="Ratio", model=model, tools=[ratio])
	assert (await agent.run("go")).status == "success"
	entry = json.loads(model.requests[1].messages[-1].content)["results"][0]
	assert entry["result"] == ["NaN", "Infinity", "-Infinity", 1.5]
