"""An object sent as JSON text that is not valid JSON is said to be so in the repair turn.

Under a provider's strict dialect a tool input or the output with no strict form is sent as JSON
text (a string); the reply's repair decodes it. Text that is not JSON stayed a string, and the
model read "input: Input should be a valid dictionary": it had sent the string its schema asks
for, and was not told the text was broken, nor where.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._parse import parse_reply
from openmolt_core._support.jsonschema import format_errors
from openmolt_core.prompt import dumps
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


def test_a_tool_input_of_broken_json_text_names_the_syntax_error() -> None:
	"""The callTool input's error names the JSON error and its column."""
	reply = '{"commands":[{"type":"callTool","tool":"local.note","input":"{\\"a\\": 1,}"}]}'
	parsed = parse_reply(reply, dumps=dumps)
	assert parsed.commands == []
	error = parsed.errors[0]
	assert "input" in error and "JSON object" in error
	assert "not valid JSON" in error and "column 9" in error


def test_an_object_given_as_plain_text_says_it_is_no_json() -> None:
	"""A plain word where an object is due: named as text that is not JSON."""
	from pydantic import TypeAdapter, ValidationError

	with pytest.raises(ValidationError) as caught:
		TypeAdapter(dict[str, Any]).validate_python("hello")
	said = format_errors(caught.value)
	assert "got a string" in said and "not valid JSON" in said


async def test_an_output_of_broken_json_text_names_the_syntax_error() -> None:
	"""The finish output sent as broken JSON text: the repair turn says where it breaks."""
	schema = {
		"type": "object",
		"properties": {"answer": {"type": "string"}},
		"required": ["answer"],
	}
	model = ScriptedModel(
		[
			{"commands": [{"type": "finish", "status": "success", "output": '{"answer": Oslo}'}]},
			{"commands": [finish({"answer": "Oslo"})]},
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Finder", model=model, output_schema=schema)
	result = await agent.run("Capital of Norway?")
	assert result.status == "success", result.error
	told = model.requests[1].messages[-1].content
	assert "not valid JSON" in told and "column 12" in told


@pytest.mark.parametrize(
	("given", "named"),
	[([1, 2], "an array"), (5, "a number"), (None, "null"), (True, "a boolean"), ("[1]", "")],
)
def test_a_tool_input_that_is_json_but_no_object_says_what_it_is(given, named) -> None:
	"""A callTool input that is valid JSON but no object (an array, a number, null; JSON text of
	an array under a strict dialect, decoded) names what an input is and what it got."""
	import json

	if given == "[1]":  # sent as JSON text, as a strict dialect asks: decoded by the repair
		from openmolt_core._support.schemafit import Decode

		given, named = Decode()(given), "an array"
	reply = json.dumps({"commands": [{"type": "callTool", "tool": "local.note", "input": given}]})
	error = parse_reply(reply, dumps=dumps).errors[0]
	assert error.startswith("command 0 (callTool): input:")
	assert "a JSON object" in error and f"got {named}" in error
