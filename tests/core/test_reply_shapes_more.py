"""Two reply shapes the parser read wrong: an empty bare list, and an output sent as JSON text.

A bare list of commands is accepted for ``{"commands": [...]}``, and ``{"commands": []}`` is told
"give at least one command"; a bare ``[]`` ran nothing and said nothing, so the model lost a step
without a word. A ``finish`` whose output is the JSON text of the object the schema asks for
(what a model without structured output often writes, and how a tool's input sent as text is
already read) was refused as "not a valid dictionary"; it is decoded when the schema refuses the
text and takes what it holds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio

SCHEMA = {
	"type": "object",
	"properties": {"city": {"type": "string"}, "people": {"type": "integer"}},
	"required": ["city", "people"],
	"additionalProperties": False,
}


class Town(BaseModel):
	city: str
	people: int


def _agent(replies: list[Any], output_schema: Any) -> tuple[Any, ScriptedModel]:
	model = ScriptedModel(replies)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Atlas", model=model, output_schema=output_schema, max_steps=3)
	return agent, model


def _said(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


async def test_an_empty_bare_list_is_told_to_the_model() -> None:
	"""``[]`` is an answer without a command, as ``{"commands": []}`` is: the model hears it."""
	agent, model = _agent(["[]", finish("done")], None)
	result = await agent.run("go")
	assert result.output == "done"
	[error] = _said(model, 1)
	assert error["ok"] is False and "at least one command" in error["error"]


@pytest.mark.parametrize("schema", [SCHEMA, Town], ids=["json-schema", "pydantic"])
async def test_an_output_sent_as_json_text_is_read_as_what_it_holds(schema: Any) -> None:
	"""The text of a matching object finishes the run with the object (or the model's instance)."""
	text = json.dumps({"city": "Oslo", "people": 700000})
	agent, model = _agent([finish(text)], schema)
	result = await agent.run("go")
	assert result.status == "success" and model.calls == 1
	expected = {"city": "Oslo", "people": 700000}
	assert (result.output if schema is SCHEMA else result.output.model_dump()) == expected


@pytest.mark.parametrize(
	("schema", "text"),
	[
		({"type": "string"}, '{"city": "Oslo"}'),  # a string is what was asked for: kept as it is
		({"type": ["string", "object"]}, '{"a": 1}'),
	],
)
async def test_text_the_schema_takes_stays_text(schema: Any, text: str) -> None:
	"""Only a text the schema refuses is decoded."""
	agent, _ = _agent([finish(text)], schema)
	assert (await agent.run("go")).output == text


@pytest.mark.parametrize(
	"text",
	[
		json.dumps({"city": "Oslo", "people": "many"}),  # JSON, but not a match
		"Oslo, 700000 people",  # not JSON
		'{"city": "Oslo", "city": "Bergen", "people": 1}',  # a key twice: which one is a guess
	],
)
async def test_text_that_holds_no_match_is_refused_as_before(text: str) -> None:
	"""The model reads that the output does not match; nothing ends the run."""
	agent, model = _agent([finish(text), finish({"city": "Oslo", "people": 1})], SCHEMA)
	result = await agent.run("go")
	assert result.output == {"city": "Oslo", "people": 1}
	[error] = _said(model, 1)
	assert error["ok"] is False and "output does not match" in error["error"]


async def test_text_nested_past_the_depth_cap_is_refused() -> None:
	"""Decoded, the output is held to the reply's depth cap, as a tool's input sent as text is."""
	deep = "[" * 100 + "]" * 100
	agent, model = _agent([finish('{"x": ' + deep + "}"), finish({"x": 1})], {"type": "object"})
	assert (await agent.run("go")).output == {"x": 1}
	assert "output does not match" in _said(model, 1)[0]["error"]
