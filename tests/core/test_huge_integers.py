"""Integers longer than Python writes (4,300 digits by default) never crash a run or its state.

``json`` can neither read nor write them (``int``'s digits limit), so a tool returning one made
every later request, and the state, unwritable. A tool's result holding one is sent as a string
that says its length; a reply holding one runs nothing, with an error the model can act on.
"""

from __future__ import annotations

import json

import pytest

from openmolt import OpenMolt, RunState
from openmolt_core._parse import parse_reply
from openmolt_core._support.jsonsafe import UnsafeJson, encodable, loads, problem
from openmolt_core.prompt import dumps
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

HUGE = 10**5000


def test_encodable_says_the_length() -> None:
	"""The copy is JSON; the integer becomes a string with its sign and length."""
	value = {"n": [HUGE, -HUGE, 10**100, True]}
	assert problem({"n": [1, HUGE]}) == "n[1]: an integer of about 5001 digits, too long to write"
	assert problem(value) is not None
	clean = encodable(value)
	assert clean == {
		"n": [
			"(an integer of about 5001 digits)",
			"(-an integer of about 5001 digits)",
			10**100,
			True,
		]
	}
	assert json.loads(dumps(value)) == clean


def test_a_reply_with_one_is_refused_clearly() -> None:
	"""The parser runs nothing and tells the model to send it as a string."""
	with pytest.raises(UnsafeJson, match="more than 4300 digits"):
		loads('{"a": ' + "7" * 5000 + "}")
	reply = '{"commands":[{"type":"finish","status":"success","output":' + "7" * 5000 + "}]}"
	parsed = parse_reply(reply, dumps=dumps)
	assert parsed.commands == []
	assert parsed.errors == [
		"nothing was run: a number has more than 4300 digits, which cannot be read; write it as "
		"a string"
	]


async def test_a_tool_returning_one_keeps_the_run_and_its_state() -> None:
	"""The run goes on, the model reads the string, and the state round-trips as JSON."""

	def big() -> int:
		"""A very large number."""
		return HUGE

	model = ScriptedModel([[call_tool("local.big")], finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(name="Big", model=model, tools=[big])
	result = await agent.run()
	assert result.status == "success"
	turn = json.loads(model.requests[1].messages[-1].content)
	assert turn["results"][0]["result"] == "(an integer of about 5001 digits)"
	saved = json.dumps(result.state.to_dict())
	assert RunState.from_dict(json.loads(saved)).steps == 2
