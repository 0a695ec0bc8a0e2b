"""A tool input sent as JSON text of JSON text (encoded twice) reaches the tool as the object.

A tool's input is always an object. Sent as JSON text (under a strict dialect, where an input
with no strict form is a string, or by a model that was not constrained) it is decoded; a model
that encoded it twice (``"\\"{\\\\\\"k\\\\\\": 1}\\""``) was told only "got a string", though
the object it meant is certain. Text inside that is no object stays a string and is refused.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio

DATA = {"data": {"k": [1, "two"]}}


async def _run(sent: str) -> tuple[list[Any], Any]:
	calls: list[Any] = []

	@tool(name="note", description="Store a note.")
	def note(data: dict[str, Any]) -> str:
		calls.append(data)
		return "stored"

	model = ScriptedModel(
		[
			{"commands": [{"type": "callTool", "tool": "local.note", "input": sent}]},
			{"commands": [finish("done")]},
		]
	)
	om = OpenMolt(llm_providers={})
	agent = om.create_agent(name="Clerk", model=model, tools=[note])
	result = await agent.run("Note it.")
	assert result.status == "success"
	return calls, model.last_turn()["results"][0]


@pytest.mark.parametrize("times", [1, 2, 3])
async def test_an_input_encoded_more_than_once_reaches_the_tool(times: int) -> None:
	"""Once, twice or three times encoded: the tool gets the object."""
	sent: Any = DATA
	for _ in range(times):
		sent = json.dumps(sent)
	calls, result = await _run(sent)
	assert calls == [DATA["data"]] and result["ok"] is True


@pytest.mark.parametrize("inside", ["hello", [1, 2], 42])
async def test_json_text_of_no_object_is_refused(inside: Any) -> None:
	"""JSON text of JSON text of a string, an array or a number is no input: refused."""
	calls, result = await _run(json.dumps(json.dumps(inside)))
	assert calls == [] and result["ok"] is False
	assert "valid dictionary" in result["error"]
