"""A null among a schema's literals, where the dialect's enums hold no null, is a union with null.

Gemini's ``responseJsonSchema`` takes enums of strings and numbers only. ``Literal["x", None]``
(pydantic writes ``{"enum": ["x", null]}``), ``{"type": ["string", "null"], "enum": ["a", null]}``
and ``{"const": null}`` had no form there: the whole output (or tool input) went as JSON text,
unconstrained. Each is the union of its other literals and ``{"type": "null"}``, which Gemini
takes; a null its ``type`` refuses stays refused (an OpenAPI 3.0 enum listing null beside
``"type": "string"``).
"""

from __future__ import annotations

from typing import Any, Literal

import jsonschema
import pydantic
import pytest

from openmolt_core.structured import fit_schema
from openmolt_providers.gemini._dialect import GEMINI


class Pick(pydantic.BaseModel):
	"""Literals with a null among them, as pydantic writes them."""

	mode: Literal["x", "y", None]
	size: Literal[1, "a", None] = None


TYPED = {
	"type": "object",
	"properties": {"e": {"type": ["string", "null"], "enum": ["a", None]}, "n": {"const": None}},
	"required": ["e", "n"],
}


def _literals(schema: Any) -> list[Any]:
	"""Every enum list in a fitted schema."""
	if isinstance(schema, dict):
		found = [schema["enum"]] if "enum" in schema else []
		return found + [v for value in schema.values() for v in _literals(value)]
	if isinstance(schema, list):
		return [v for item in schema for v in _literals(item)]
	return []


@pytest.mark.parametrize("schema", [Pick.model_json_schema(), TYPED], ids=["pydantic", "typed"])
def test_null_literals_are_a_union_with_null(schema: dict[str, Any]) -> None:
	"""Strict in Gemini, no enum holds null, and null and each literal still pass both schemas."""
	fitted = fit_schema(schema, GEMINI)
	assert fitted.mode == "strict", fitted.notes
	assert fitted.schema is not None
	assert all(None not in values for values in _literals(fitted.schema))
	first = next(iter(schema["properties"]))
	literals = schema["properties"][first]["enum"]
	for value in literals:
		reply = {name: None for name in schema["properties"]} | {first: value}
		jsonschema.validate(reply, fitted.schema)
		jsonschema.validate(fitted.restore(reply), schema)
	with pytest.raises(jsonschema.ValidationError):
		jsonschema.validate({name: "other" for name in schema["properties"]}, fitted.schema)


def test_a_null_its_type_refuses_stays_refused() -> None:
	"""``"type": "string"`` with null listed: null never validates, so it is not sent."""
	schema = {"type": "object", "properties": {"e": {"type": "string", "enum": ["a", None]}}}
	fitted = fit_schema(schema, GEMINI)
	assert fitted.schema is not None
	assert fitted.schema["properties"]["e"] == {"type": "string", "enum": ["a"]}
