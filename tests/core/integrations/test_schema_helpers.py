"""The shared schema helpers and the pass-through shorthand for integration authors."""

from __future__ import annotations

import pytest

from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations.schema import (
	array,
	integer,
	nullable,
	obj,
	passthrough,
	passthrough_of,
	string,
)
from openmolt_core.integrations.templating import null_inputs, render


def test_obj_builds_the_schema_and_checks_required_names() -> None:
	"""obj writes properties, required and closed; a required name must be a property."""
	schema = obj({"q": string("Query."), "n": integer(maximum=5)}, ["q"], closed=True)
	assert schema == {
		"type": "object",
		"properties": {
			"q": {"type": "string", "description": "Query."},
			"n": {"type": "integer", "maximum": 5},
		},
		"required": ["q"],
		"additionalProperties": False,
	}
	assert array(string(), "Ids.", maxItems=3) == {
		"type": "array",
		"items": {"type": "string"},
		"description": "Ids.",
		"maxItems": 3,
	}
	with pytest.raises(ValueError, match="not properties"):
		obj({"q": string()}, ["query"])


def test_passthrough_renders_each_input_as_itself_and_drops_missing_ones() -> None:
	"""Pass-through entries keep types and drop missing optionals, as written by hand."""
	schema = obj({"query": string(), "limit": integer(), "max-keys": integer()}, ["query"])
	query = passthrough_of(schema, exclude=["limit"], sort="{{ input.sort | default: 'asc' }}")
	assert query == {
		"query": "{{ input.query }}",
		"max-keys": '{{ input["max-keys"] }}',
		"sort": "{{ input.sort | default: 'asc' }}",
	}
	tool = HttpTool(
		handle="s", description="d", endpoint="/s", input_schema=schema, query_params=query
	)
	Integration(name="S", api_setup=ApiSetup(base_url="https://x.example"), tools=[tool])  # parses
	data = {"input": {"query": "cats", "max-keys": 5}}
	assert render(query, data) == {"query": "cats", "max-keys": 5, "sort": "asc"}
	assert passthrough("a", b="{{ input.c }}") == {"a": "{{ input.a }}", "b": "{{ input.c }}"}
	with pytest.raises(ValueError, match="both"):
		passthrough("a", a="{{ input.b }}")


def test_nullable_lets_an_input_be_null_and_says_what_null_does() -> None:
	"""nullable adds null to one type or as a union branch, says what it clears, and the engine
	then lists the input among those it sends as null."""
	milestone = nullable(integer("Milestone number."), "null removes the milestone.")
	assert milestone == {
		"type": ["integer", "null"],
		"description": "Milestone number. null removes the milestone.",
	}
	either = nullable({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "null clears it.")
	assert either["anyOf"][-1] == {"type": "null"}
	assert null_inputs(obj({"m": milestone, "e": either, "n": integer()})) == {"m", "e"}
	with pytest.raises(ValueError, match="one type"):
		nullable({"type": ["string", "integer"]}, "x")
