"""A reply in Markdown fences is read whatever the fence's layout.

The fence was cut at its first line break and at its last three backticks: a fence on one line
(```` ```json {...} ``` ````) left nothing, and the model was told its answer was empty; a fence
left unclosed whose JSON holds backticks in a string was cut inside that string, and the reply
was refused as not valid JSON.
"""

from __future__ import annotations

import json

import pytest

from openmolt_core._parse import parse_reply

DONE = {"type": "finish", "status": "success", "output": "see ```x``` here"}
REPLY = json.dumps({"commands": [DONE]})


@pytest.mark.parametrize(
	"text",
	[
		f"```json {REPLY} ```",
		f"```{REPLY}```",
		f"```json\n{REPLY}",
		f"```json\n{REPLY}\n```",
		f"```\n{REPLY}\n```\nDone: it prints {{x}}.",
	],
)
def test_a_fenced_reply_runs(text: str) -> None:
	"""The one JSON value in the fence runs, its string's backticks kept."""
	reply = parse_reply(text, dumps=json.dumps)
	assert reply.errors == []
	assert [c.model_dump(exclude_none=True)["output"] for c in reply.commands] == [DONE["output"]]


@pytest.mark.parametrize("text", ["```json\n```", "```", "``` ```"])
def test_an_empty_fence_is_named_as_empty(text: str) -> None:
	"""A fence with nothing in it is an empty answer, as before."""
	assert parse_reply(text, dumps=json.dumps).errors[0].startswith("your answer was empty")
