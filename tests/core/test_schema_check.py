"""Output schemas are checked against the JSON Schema 2020-12 metaschema."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from openmolt import ConfigurationError, OpenMolt
from openmolt_core._support.metaschema import check_schema

META = Draft202012Validator(Draft202012Validator.META_SCHEMA)  # structure only, no formats

TYPES = ["null", "boolean", "object", "array", "number", "string", "integer"]
NAMES = st.sampled_from(["a", "b", "c"])
ANY = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.text(max_size=3))
JUNK = st.one_of(
	st.none(),
	st.booleans(),
	st.integers(-3, 5),
	st.floats(-2, 4, allow_nan=False),
	st.sampled_from(["objekt", "a#b", "1x", "", "string"]),
	st.lists(st.sampled_from(["a", "a", 1, "objekt"]), max_size=3),
	st.just({"a": 5}),
)


def valid_values(schema):
	"""A valid value for each keyword, subschemas drawn from ``schema``."""
	count = st.one_of(st.integers(0, 5), st.just(2.0))
	return {
		"type": st.one_of(
			st.sampled_from(TYPES),
			st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
		),
		"properties": st.dictionaries(NAMES, schema, max_size=2),
		"$defs": st.dictionaries(NAMES, schema, max_size=2),
		"definitions": st.dictionaries(NAMES, schema, max_size=2),
		"patternProperties": st.dictionaries(st.just("^x"), schema, max_size=1),
		"required": st.lists(NAMES, max_size=3, unique=True),
		"dependentRequired": st.dictionaries(
			NAMES, st.lists(NAMES, unique=True, max_size=2), max_size=2
		),
		"items": schema,
		"additionalProperties": schema,
		"propertyNames": schema,
		"contains": schema,
		"not": schema,
		"if": schema,
		"then": schema,
		"else": schema,
		"prefixItems": st.lists(schema, min_size=1, max_size=2),
		"anyOf": st.lists(schema, min_size=1, max_size=2),
		"oneOf": st.lists(schema, min_size=1, max_size=2),
		"allOf": st.lists(schema, min_size=1, max_size=2),
		"enum": st.lists(ANY, max_size=3),
		"examples": st.lists(ANY, max_size=2),
		"const": ANY,
		"default": ANY,
		"minimum": st.floats(-5, 5, allow_nan=False),
		"exclusiveMinimum": st.integers(-5, 5),
		"maximum": st.integers(-5, 5),
		"multipleOf": st.sampled_from([0.5, 1, 3]),
		"minLength": count,
		"maxItems": count,
		"minProperties": count,
		"minContains": count,
		"pattern": st.just("^[a-z]+$"),
		"format": st.just("date-time"),
		"title": st.text(max_size=5),
		"description": st.text(max_size=5),
		"$ref": st.just("#/$defs/a"),
		"$id": st.just("https://example.com/s"),
		"$anchor": st.just("node"),
		"uniqueItems": st.booleans(),
		"deprecated": st.booleans(),
		"nullable": ANY,
		"x-custom": ANY,
	}


def schemas(depth: int = 2):
	"""Valid schemas, and schemas with one keyword (at any depth) given a wrong value."""
	inner = st.one_of(st.booleans(), st.just({})) if depth == 0 else schemas(depth - 1)
	values = valid_values(inner)
	keys = st.lists(st.sampled_from(sorted(values)), max_size=4, unique=True)

	@st.composite
	def build(draw):
		schema = {k: draw(values[k]) for k in draw(keys)}
		if schema and draw(st.integers(0, 3)) == 0:  # one keyword in four schemas goes wrong
			key = draw(st.sampled_from(sorted(schema)))
			schema[key] = draw(JUNK)
		return schema

	return st.one_of(build(), st.booleans())


@settings(max_examples=600, deadline=None)
@given(schemas())
def test_the_check_agrees_with_the_metaschema(schema) -> None:
	"""Whatever the schema, our check and jsonschema's metaschema agree on whether it is valid."""
	assert (check_schema(schema) == []) == META.is_valid(schema), check_schema(schema)


def test_the_generated_schemas_are_both_valid_and_invalid() -> None:
	"""The agreement test sees plenty of each kind (else it would prove little)."""
	seen = []

	@settings(max_examples=300, deadline=None)
	@given(schemas())
	def collect(schema) -> None:
		seen.append(META.is_valid(schema))

	collect()
	assert 0.3 < sum(seen) / len(seen) < 0.8


def test_each_problem_names_its_keyword() -> None:
	"""The issue's example names both of its mistakes."""
	assert check_schema({"type": "objekt", "properties": 5}) == [
		"type: must be one of array, boolean, integer, null, number, object, string (or a list "
		'of them), got "objekt"',
		"properties: must map names to schemas, got a number",
	]
	assert check_schema({"properties": {"a": {"items": [{}]}}}) == [
		"properties.a.items: must be one schema; for a tuple, use prefixItems"
	]


def test_create_agent_refuses_an_invalid_output_schema() -> None:
	"""create_agent(output_schema=...) with a broken schema fails at once, naming the keyword."""
	from openmolt_core.testing import ScriptedModel

	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match=r"output_schema: type: must be one of"):
		om.create_agent(name="A", model=ScriptedModel([]), output_schema={"type": "objekt"})
