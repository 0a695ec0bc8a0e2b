from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openmolt_core._jsonschema import JsonSchemaValidator, ValidationError, format_errors


def errors(schema: dict[str, Any], value: Any) -> str:
	with pytest.raises(ValidationError) as info:
		JsonSchemaValidator(schema).validate(value)
	return format_errors(info.value)


def test_types_are_strict() -> None:
	"""A string is not accepted for an integer, nor a number for a string."""
	assert "Input should be a valid integer" in errors({"type": "integer"}, "1")
	assert "valid string" in errors({"type": "string"}, 1)
	assert "valid boolean" in errors({"type": "boolean"}, "true")


def test_numbers_accept_integers_and_floats() -> None:
	"""'number' takes ints and floats and keeps their value."""
	v = JsonSchemaValidator({"type": "number", "minimum": 0})
	assert v.validate(3) == 3 and v.validate(2.5) == 2.5
	assert "greater than or equal to 0" in errors({"type": "number", "minimum": 0}, -1)


def test_objects_check_required_and_additional_properties() -> None:
	"""Missing required and forbidden extra fields are named."""
	schema = {
		"type": "object",
		"properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
		"required": ["a"],
		"additionalProperties": False,
	}
	msg = errors(schema, {"b": 1, "c": 2})
	assert "a: required field is missing" in msg and "c: unknown field; remove it" in msg
	assert JsonSchemaValidator(schema).validate({"a": "x"}) == {"a": "x"}


def test_nested_arrays_and_enums() -> None:
	"""Errors inside arrays name the index; enums list the allowed values."""
	schema = {
		"type": "object",
		"properties": {"tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
	}
	msg = errors(schema, {"tags": ["a", "c"]})
	assert msg.startswith("tags.1:") and "'a' or 'b'" in msg


def test_nullable_type_lists_and_any_of() -> None:
	"""Type lists with null, nullable and anyOf accept each alternative."""
	v = JsonSchemaValidator({"type": ["string", "null"]})
	assert v.validate(None) is None and v.validate("x") == "x"
	v2 = JsonSchemaValidator({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]})
	assert v2.validate(5) == 5 and v2.validate("ab") == "ab"
	with pytest.raises(ValidationError):
		v2.validate("abc")


def test_refs_into_defs_as_pydantic_writes_them() -> None:
	"""$ref into $defs (what pydantic's model_json_schema produces) validates, recursion included."""
	from pydantic import BaseModel

	class Node(BaseModel):
		name: str
		children: list["Node"] = []

	v = JsonSchemaValidator(Node.model_json_schema())
	assert v.validate({"name": "a", "children": [{"name": "b"}]})
	with pytest.raises(ValidationError):
		v.validate({"name": "a", "children": [{"name": 1}]})


def test_annotations_never_reject() -> None:
	"""description, format and examples do not affect validation."""
	v = JsonSchemaValidator(
		{"type": "string", "format": "date-time", "description": "x", "examples": ["y"]}
	)
	assert v.validate("not a date") == "not a date"


def test_const_pattern_and_lengths() -> None:
	"""const, pattern, minLength and minItems are enforced."""
	assert "Input should be 'x'" in errors({"const": "x"}, "y")
	assert "pattern" in errors({"type": "string", "pattern": "^a+$"}, "b")
	assert "at least 1 item" in errors({"type": "array", "minItems": 1}, [])


@given(
	st.recursive(
		st.none() | st.booleans() | st.integers() | st.text(),
		lambda c: st.lists(c) | st.dictionaries(st.text(), c),
	)
)
def test_an_empty_schema_accepts_any_json_value(value: Any) -> None:
	"""{} accepts every JSON value unchanged."""
	assert JsonSchemaValidator({}).validate(value) == value


def test_a_type_list_of_only_null_accepts_only_null() -> None:
	"""{"type": ["null"]} accepts None and nothing else."""
	v = JsonSchemaValidator({"type": ["null"]})
	assert v.validate(None) is None
	with pytest.raises(ValidationError):
		v.validate(1)


def test_fractional_bounds_on_numbers_hold_for_integers_too() -> None:
	"""minimum 0.1 on a number accepts 1 and 0.5, and refuses 0 and 0.05."""
	v = JsonSchemaValidator({"type": "number", "minimum": 0.1, "exclusiveMaximum": 2.5})
	assert v.validate(1) == 1 and v.validate(0.5) == 0.5 and v.validate(2) == 2
	for bad in (0, 0.05, 3, 2.5):
		with pytest.raises(ValidationError):
			v.validate(bad)
