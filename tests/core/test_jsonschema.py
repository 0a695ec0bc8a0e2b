from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openmolt_core._support.jsonschema import JsonSchemaValidator, ValidationError, format_errors


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
	from openmolt_core._support.jsonschema import (
		JsonSchemaValidator,
		ValidationError,
		format_errors,
	)

	validator = JsonSchemaValidator({"type": "string", "format": fmt})
	for value in good:
		assert validator.validate(value) == value
	for value in bad:
		with pytest.raises(ValidationError) as info:
			validator.validate(value)
		assert "must be" in format_errors(info.value) and "such as" in format_errors(info.value)


def test_other_formats_stay_annotations() -> None:
	"""A format the validator does not check never rejects data (JSON Schema's default)."""
	from openmolt_core._support.jsonschema import CHECKED_FORMATS, JsonSchemaValidator

	assert "snowflake" not in CHECKED_FORMATS
	for fmt in ("snowflake", "hostname", "binary"):
		assert JsonSchemaValidator({"type": "string", "format": fmt}).validate("x y") == "x y"


def test_keywords_a_dialect_drops_are_enforced_by_the_loop() -> None:
	"""uniqueItems, multipleOf, min/maxProperties, contains, not and oneOf reject what they should."""
	days = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
	assert "items must be unique" in errors(days, ["mon", "mon"])
	assert "items must be unique" in errors({"uniqueItems": True}, [1, 1.0])
	JsonSchemaValidator({"uniqueItems": True}).validate([1, True, {"a": 1}, {"a": True}])
	assert "multiple of 0.5" in errors({"type": "number", "multipleOf": 0.5}, 0.7)
	JsonSchemaValidator({"type": "number", "multipleOf": 0.0001}).validate(0.0075)
	assert "at least 1 properties" in errors({"type": "object", "minProperties": 1}, {})
	assert "at most 1 properties" in errors({"maxProperties": 1}, {"a": 1, "b": 2})
	assert "'contains'" in errors({"contains": {"const": "x"}}, ["a", "b"])
	assert "must not match" in errors({"not": {"type": "string"}}, "a")
	one = {"oneOf": [{"type": "integer"}, {"minimum": 2}]}
	assert "exactly one" in errors(one, 3)
	JsonSchemaValidator(one).validate(1)
	tagged = {"if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["x"]}}
	assert "'then'" in errors(tagged, {"k": "a"})
	assert "needs 'b'" in errors({"dependentRequired": {"a": ["b"]}}, {"a": 1})
	named = {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}
	assert "property name 'A1'" in errors(named, {"A1": 1})


def test_enum_and_const_use_json_equality() -> None:
	"""true is not 1, 1.0 is 1, and objects compare by content."""
	assert "one of" in errors({"enum": [1, 2]}, True)
	assert "one of" in errors({"const": False}, 0)
	JsonSchemaValidator({"const": 1}).validate(1.0)
	JsonSchemaValidator({"enum": [{"a": [1]}]}).validate({"a": [1.0]})


def test_type_specific_keywords_apply_to_their_type_only() -> None:
	"""Without a type, maxLength says nothing about numbers, properties nothing about lists."""
	v = JsonSchemaValidator({"maxLength": 2, "properties": {"a": {"type": "string"}}})
	assert v.validate(12345) == 12345 and v.validate([1]) == [1]
	assert "at most 2 characters" in errors({"maxLength": 2}, "abc")


def test_pattern_properties_and_prefix_items() -> None:
	"""Keys matching a pattern follow its schema; the others, additionalProperties."""
	schema = {
		"type": "object",
		"patternProperties": {"^x-": {"type": "integer"}},
		"additionalProperties": False,
	}
	JsonSchemaValidator(schema).validate({"x-a": 1})
	assert "x-a" in errors(schema, {"x-a": "no"})
	assert "b: unknown field" in errors(schema, {"b": 1})
	pair = {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}
	assert JsonSchemaValidator(pair).validate(["a", 1.0]) == ["a", 1]
	assert errors(pair, ["a", 1, 2])


def test_lookaround_patterns_run_on_pythons_engine() -> None:
	"""A pattern Rust's regex engine refuses (lookaround, backreference) is still enforced."""
	ahead = {"type": "string", "pattern": "^(?!admin$)[a-z]+$"}
	JsonSchemaValidator(ahead).validate("ana")
	assert errors(ahead, "admin")
	twice = {"type": "object", "patternProperties": {"^(a)\\1$": {"type": "integer"}}}
	assert errors(twice, {"aa": "x"})
	assert JsonSchemaValidator({"format": "regex"}).validate("(?<=a)b") == "(?<=a)b"
	assert "valid regular expression" in errors({"format": "regex"}, "a[")


@pytest.mark.parametrize("pattern", ["(?<=a+)b", "a[", "\\p{L}+(?<=x*)", "(?<n>a)(?<=\\k<n>+)"])
def test_a_pattern_no_engine_takes_is_skipped_with_a_warning(
	pattern: str, caplog: pytest.LogCaptureFixture
) -> None:
	"""Never a crash: the keyword is skipped (logged when the validator is built)."""
	with caplog.at_level("WARNING", logger="openmolt"):
		v = JsonSchemaValidator(
			{
				"type": "object",
				"properties": {"s": {"type": "string", "pattern": pattern}},
				"patternProperties": {pattern: {"type": "integer"}},
			}
		)
	assert v.validate({"s": "anything", "k": 1}) == {"s": "anything", "k": 1}
	assert "not checked" in caplog.text and "rewrite it" in caplog.text


@pytest.mark.parametrize(
	"schema",
	[
		{"minLength": "x"},
		{"maxItems": 2.5},
		{"pattern": 5},
		{"type": "strange"},
		{"properties": []},
		{"required": 5, "properties": {"a": {}}},
		{"enum": 5},
		{"items": 5},
		{"$ref": 5},
		{"$ref": "#/nowhere"},
		{"multipleOf": 0},
		{"minimum": "1", "type": "number"},
		{"not": 3},
		{"dependentRequired": {"a": "b"}},
	],
)
def test_odd_schemas_build_and_never_crash(schema: dict[str, Any]) -> None:
	"""Building a validator never raises for a schema's content; a value gets an answer."""
	v = JsonSchemaValidator(schema)
	for value in ({"a": 1}, "s", 1, [1], None):
		try:
			v.validate(value)
		except ValidationError:
			pass


_KEYS = [
	*"type enum const properties required additionalProperties patternProperties".split(),
	*"propertyNames minProperties maxProperties dependentRequired dependentSchemas".split(),
	*"dependencies items prefixItems additionalItems contains minContains maxContains".split(),
	*"minItems maxItems uniqueItems minLength maxLength pattern minimum maximum".split(),
	*"exclusiveMinimum exclusiveMaximum multipleOf anyOf oneOf allOf not if then else".split(),
	*"$ref $defs nullable format".split(),
]
_WORDS = ["string", "object", "array", "integer", "number", "null", "boolean", "x", "#"]
_WORDS += ["#/$defs/a", "a(", "(?=a)", "uri", "date", "regex", "^a$"]
_SCALARS = (
	st.none()
	| st.booleans()
	| st.integers(-5, 5)
	| st.integers()
	| st.floats()
	| st.sampled_from(_WORDS)
)
_VALUES = st.recursive(
	_SCALARS,
	lambda inner: (
		st.lists(inner, max_size=3)
		| st.dictionaries(st.sampled_from([*_KEYS, "a", "b"]), inner, max_size=4)
	),
	max_leaves=12,
)
_DATA = st.recursive(
	st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
	lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
	max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=5), _DATA)
def test_any_schema_builds_and_any_value_gets_an_answer(schema: dict[str, Any], value: Any) -> None:
	"""Whatever a schema holds (odd types, huge bounds, bad regexes), building never raises and a
	value is either accepted or refused with a ValidationError."""
	validator = JsonSchemaValidator(schema)
	try:
		validator.validate(value)
	except ValidationError:
		pass


def test_a_pattern_no_engine_checks_is_said_when_tools_are_bound(caplog) -> None:
	"""A variable-width lookbehind (neither engine) is warned about at binding; others are not."""
	import logging

	from openmolt_core._support.jsonschema import unchecked_patterns

	schema = {
		"type": "object",
		"properties": {
			"a": {"type": "string", "pattern": "(?<=a+)b"},
			"b": {"type": "string", "pattern": "(?=x)x"},  # lookahead: Python's re checks it
			"c": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
		},
		"patternProperties": {"(?<=q+)z": {"type": "string"}},
	}
	with caplog.at_level(logging.WARNING, logger="openmolt"):
		skipped = unchecked_patterns(schema, "tool 'x': input")
	assert sorted(skipped) == ["(?<=a+)b", "(?<=q+)z"]
	assert sum("not supported by either regex engine" in r.message for r in caplog.records) == 2


def test_an_imported_operation_with_such_a_pattern_warns_at_import(caplog) -> None:
	"""OpenAPI import names the operation whose pattern will not be checked."""
	import logging

	from openmolt_core.integrations.openapi import from_openapi

	document = {
		"openapi": "3.1.0",
		"info": {"title": "T", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/things": {
				"get": {
					"operationId": "listThings",
					"parameters": [
						{
							"name": "q",
							"in": "query",
							"schema": {"type": "string", "pattern": "(?<=a+)b"},
						}
					],
					"responses": {"200": {"description": "ok"}},
				}
			}
		},
	}
	with caplog.at_level(logging.WARNING, logger="openmolt"):
		from_openapi(document, id="things")
	assert any("listThings" in r.message and "not supported" in r.message for r in caplog.records)
