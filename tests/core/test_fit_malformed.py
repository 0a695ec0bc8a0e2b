"""A schema that is no JSON Schema has no strict form: fitting it falls back, it never crashes.

An agent's output schema and a FunctionTool's or MCP tool's schemas are checked against the
metaschema when they are given; a tool of another source (an integration's own ``Tool``) and a
request a caller hands a provider are not. The fitter read such a schema's keywords as what they
should be, and a ``"required": 2`` under ``allOf``, a ``"oneOf": true`` or a string ``minItems``
raised ``TypeError`` or ``AttributeError`` out of the run's first model call; now the tool's input
is sent as JSON text (the loop's own check tells what is wrong), and a whole schema is not sent.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._support.schemafit import SchemaDialect
from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.structured import fit, fit_schema
from openmolt_core.testing import ScriptedModel, call_tool, finish

DIALECTS = [
	SchemaDialect("closed", keywords=frozenset({"description", "minItems"}), max_min_items=1),
	SchemaDialect("all", require_all=True, recursive_refs=True),
	SchemaDialect("open", closed_objects=False, const_as_enum=True),
]

BROKEN: list[dict[str, Any]] = [
	{"type": "object", "properties": {"a": {"type": "string"}}, "allOf": [{"required": 2}]},
	{"type": "object", "properties": {"a": {"type": "string"}}, "oneOf": True},
	{"type": "object", "properties": {"a": {"type": "array", "items": {}, "minItems": "1"}}},
	{"type": "object", "properties": {"a": {"type": "string"}}, "allOf": [{"properties": 3}]},
	{"type": "object", "properties": {"a": {"$ref": {"properties": None}}}},
	{"type": "object", "properties": {"a": {"anyOf": [{"required": 1.5, "type": "object"}]}}},
]


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize("schema", BROKEN)
def test_a_tool_whose_schema_is_broken_falls_back_with_a_note(
	dialect: SchemaDialect, schema: dict[str, Any]
) -> None:
	"""The tool's input travels as JSON text; the note says the schema is not valid."""
	envelope = Envelope.build(
		[ToolSchema("x.broken", schema)], output_schema=None, human_input=False
	)
	fitted = fit(envelope, dialect)
	assert fitted.encoded == {"x.broken"}
	assert any("not a valid JSON Schema" in note for note in fitted.notes), fitted.notes


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize("schema", BROKEN)
def test_a_broken_whole_schema_is_not_sent(dialect: SchemaDialect, schema: dict[str, Any]) -> None:
	"""A reply schema handed to a provider unfitted: mode off, and why."""
	fitted = fit_schema(schema, dialect)
	assert fitted.mode == "off"
	assert "not a valid JSON Schema" in fitted.notes[0]


class _Dialected(ScriptedModel):
	"""A scripted model whose provider declares a closed, require-all dialect."""

	def schema_dialect(self, model: str, config: Any = None) -> SchemaDialect:
		return DIALECTS[1]


class _Broken:
	"""An integration's own tool (no FunctionTool check) whose schema is broken under allOf."""

	handle = "broken"
	description = "A tool."
	input_schema = BROKEN[0]
	output_schema = None
	scopes = ()
	labels = ()

	async def execute(self, input: dict[str, Any], context: Any) -> Any:
		return {"got": input}


@pytest.mark.anyio
async def test_a_run_with_such_a_tool_calls_it() -> None:
	"""The run's first model call raised TypeError; now the tool is called, its input as text."""
	model = _Dialected([call_tool("local.broken", a="x"), finish(result="done")])
	agent = OpenMolt(entry_points=False).create_agent(name="A", model=model, tools=[_Broken()])
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert model.requests[0].response_mode == "partial"
