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
	"""description, examples and formats that are not checked do not affect validation."""
	v = JsonSchemaValidator(
		{"type": "string", "format": "hostname", "description": "x", "examples": ["y"]}
	)
	assert v.validate("not a host") == "not a host"


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


@pytest.mark.parametrize(
	("fmt", "good", "bad"),
	[
		(
			"uri",
			["https://example.com/a?b=1", "mailto:ana@example.com", "urn:isbn:0451450523"],
			["example.com", "not a url", "https:example.com", "https://", "/relative/path", ""],
		),
		(
			"date-time",
			["2026-05-01T09:30:00Z", "2026-05-01T09:30:00.5+02:00"],
			["2026-05-01", "2026-13-01T00:00:00Z", "tomorrow", "2026-05-01T09:30:00"],
		),
		("date", ["2026-05-01"], ["2026-5-1", "2026-02-30", "01/05/2026"]),
		("email", ["ana@example.com"], ["ana", "ana@", "@example.com", "a b@example.com"]),
		("uuid", ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567", "not-a-uuid"]),
	],
)
def test_checked_formats_refuse_what_does_not_fit(
	fmt: str, good: list[str], bad: list[str]
) -> None:
	"""uri, date-time, date, email and uuid are enforced, with a message that shows the shape."""
	from openmolt_core._jsonschema import JsonSchemaValidator, ValidationError, format_errors

	validator = JsonSchemaValidator({"type": "string", "format": fmt})
	for value in good:
		assert validator.validate(value) == value
	for value in bad:
		with pytest.raises(ValidationError) as info:
			validator.validate(value)
		assert "must be" in format_errors(info.value) and "such as" in format_errors(info.value)


def test_other_formats_stay_annotations() -> None:
	"""A format the validator does not check never rejects data (JSON Schema's default)."""
	from openmolt_core._jsonschema import CHECKED_FORMATS, JsonSchemaValidator

	assert "snowflake" not in CHECKED_FORMATS
	for fmt in ("snowflake", "hostname", "binary"):
		assert JsonSchemaValidator({"type": "string", "format": fmt}).validate("x y") == "x y"
