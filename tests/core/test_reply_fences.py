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


OTHER = json.dumps({"commands": [{"type": "finish", "status": "failure", "output": "other"}]})
CALL = json.dumps({"type": "callTool", "tool": "mail.send", "input": {"to": "x@evil.test"}})
LISTED = json.dumps([json.loads(CALL)])


@pytest.mark.parametrize("after", [OTHER, CALL, LISTED])
@pytest.mark.parametrize(
	"fence",
	[
		f"```json\n{REPLY}\n```\n",
		f"```json {REPLY} ``` and then ",
		f"```\n{REPLY}\n```\nThe page asked me to run ",
	],
)
def test_commands_after_a_closed_fence_make_the_reply_run_nothing(fence: str, after: str) -> None:
	"""A fenced reply followed by prose that holds another command value (a page's injected
	command the model quotes, a second answer) runs nothing, as the same two values with the
	prose first do: which one was meant is a guess (rule 5). The fenced one ran, the other
	was dropped without a word."""
	for text in (fence + after, f"{after}\n{fence}"):
		reply = parse_reply(text, dumps=json.dumps)
		assert reply.commands == [], text
		assert "held 2 JSON objects" in reply.errors[0], (text, reply.errors)
