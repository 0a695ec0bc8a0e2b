"""A tool's result nested deeper than the JSON encoder recurses never ends the run.

``json`` recurses once per level, so a result nested 5,000 levels deep raised `RecursionError`
where it was written for the model (and where a durable run masks it for its journal). It is
now cut past 64 levels with a note, so the request and the state stay JSON.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import OpenMolt, RunState
from openmolt_core._support.jsonsafe import SHALLOW_DEPTH, shallow
from openmolt_core.prompt import dumps
from openmolt_core.secrets import Redactor
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


def _deep(levels: int) -> Any:
	value: Any = ["leaf"]
	for i in range(levels):
		value = {"k": value} if i % 2 else [value]
	return value


def _levels(value: Any) -> int:
	n = 0
	while isinstance(value, dict | list) and value:
		value = value["k"] if isinstance(value, dict) else value[0]
		n += 1
	return n


def test_dumps_cuts_what_it_cannot_encode() -> None:
	"""Shallow values are written as they are; a deep one is cut, and the note says so."""
	assert dumps(_deep(10)) == json.dumps(_deep(10), separators=(",", ":"))
	text = dumps(_deep(10_000))
	cut = json.loads(text)
	assert _levels(cut) == SHALLOW_DEPTH
	assert "nested more than 64 levels" in text
	assert shallow(_deep(3)) == _deep(3)


def test_the_redactor_masks_a_deep_value() -> None:
	"""`Redactor.deep` (what a durable run journals through) cuts instead of raising."""
	masked = Redactor(frozenset({"sk-secret-0001"})).deep(
		{"a": _deep(10_000), "b": "sk-secret-0001"}
	)
	assert masked["b"] == "[redacted]"
	assert _levels(masked["a"]) <= SHALLOW_DEPTH


async def test_a_tool_returning_one_keeps_the_run_and_its_state() -> None:
	"""The run goes on; the model reads the cut result; the state round-trips as JSON."""

	def deep() -> Any:
		"""A deeply nested value."""
		return _deep(10_000)

	model = ScriptedModel([[call_tool("local.deep")], finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(name="Deep", model=model, tools=[deep])
	result = await agent.run()
	assert result.status == "success"
	turn = model.requests[1].messages[-1].content
	assert "nested more than 64 levels" in turn
	saved = json.dumps(result.state.to_dict())
	assert RunState.from_dict(json.loads(saved)).steps == 2
