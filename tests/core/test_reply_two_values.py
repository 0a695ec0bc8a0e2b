"""A reply holding a bare list of commands beside another JSON value runs nothing.

A bare list of commands is read as ``{"commands": [...]}`` and two command objects in one reply
run nothing (which was meant is a guess). A bare list beside an object was not counted: the
parser looked for top-level objects only, so ``[callTool] {finish}`` ran the finish alone and
dropped the tool call without a word, and a list in prose ("Sure: [...]") was refused as not JSON
though prose around one object is accepted.
"""

from __future__ import annotations

import json

import pytest

from openmolt_core._parse import parse_reply

CALL = {"type": "callTool", "tool": "a", "input": {}}
DONE = {"type": "finish", "status": "success", "output": "x"}


def _parse(text: str) -> tuple[list[str], list[str]]:
	reply = parse_reply(text, dumps=json.dumps)
	return [c.type for c in reply.commands], reply.errors


@pytest.mark.parametrize(
	"text",
	[
		f"{json.dumps([CALL])}\n{json.dumps(DONE)}",
		f"{json.dumps({'commands': [DONE]})}\n{json.dumps([CALL])}",
		f"{json.dumps([CALL])} then {json.dumps([DONE])}",
		f"```json\n{json.dumps({'commands': [DONE]})}\n```\nor\n```json\n{json.dumps([DONE])}\n```",
	],
)
def test_a_list_of_commands_beside_another_runs_nothing(text: str) -> None:
	"""Each value of commands counts: two of them run nothing, and the model is told."""
	commands, errors = _parse(text)
	assert commands == []
	assert errors and "2 JSON" in errors[0]


@pytest.mark.parametrize(
	"text",
	[
		f"Sure: {json.dumps([CALL, DONE])}",
		f"Sure: {json.dumps([CALL, DONE])} (see [1])",
		f"Here it is [draft]: {json.dumps({'commands': [CALL, DONE]})}",
	],
)
def test_one_list_or_object_of_commands_in_prose_runs(text: str) -> None:
	"""One value of commands in prose is read, a list as an object is; other brackets are prose."""
	assert _parse(text) == (["callTool", "finish"], [])
