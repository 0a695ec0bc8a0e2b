"""Property: a reply valid under a fitted schema is, after restore, valid under the canonical one.

Canonical tool input and output schemas are drawn at random (objects with optional and defaulted
properties, arrays, enums, consts, nullable types, unions, refs, recursion, free-form parts,
assertions);
each is fitted to every dialect; replies are drawn from the fitted schema with
`values` below; after `FittedSchema.restore` each must validate (jsonschema, draft 2020-12)
against the canonical schema, where only two things may be looser: the assertion keywords listed
in `FittedSchema.relaxed` (the provider does not enforce them, the loop does), and the inputs
that travel as JSON text (they are checked after decoding; their round trip is tested apart).
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.structured import SchemaDialect, fit
from openmolt_providers.anthropic._dialect import ANTHROPIC
from openmolt_providers.gemini._dialect import GEMINI
from openmolt_providers.openai._dialect import OPENAI, OPENAI_FINE_TUNED

EVERYTHING = SchemaDialect(
	name="everything",
	keywords=frozenset({"description", "minimum", "maximum", "minLength", "maxLength", "minItems"}),
	require_all=True,
	const_as_enum=True,
)
TIGHT = replace(ANTHROPIC, name="tight", max_optional=2, max_unions=8)
"""Anthropic with budgets small enough that random tools take the required-and-nullable path."""
DIALECTS = [OPENAI, OPENAI_FINE_TUNED, ANTHROPIC, GEMINI, EVERYTHING, TIGHT]
NAMES = ["a", "b", "c", "kind"]


def _string() -> st.SearchStrategy[dict[str, Any]]:
	return st.fixed_dictionaries(
		{"type": st.just("string")},
		optional={
			"minLength": st.integers(0, 2),
			"maxLength": st.integers(3, 8),
			"pattern": st.just("^[a-z]*$"),
			"format": st.sampled_from(["date", "email", "uri", "color"]),
			"description": st.just("Some text."),
		},
	)


def _number() -> st.SearchStrategy[dict[str, Any]]:
	return st.fixed_dictionaries(
		{"type": st.sampled_from(["integer", "number"])},
		optional={
			"minimum": st.integers(-5, 0),
			"maximum": st.integers(1, 9),
			"exclusiveMinimum": st.just(-10),
			"multipleOf": st.just(1),
		},
	)


LEAVES = st.one_of(
	_string(),
	_number(),
	st.just({"type": "boolean"}),
	st.just({"type": "null"}),
	st.just({"type": ["string", "null"]}),
	st.just({"type": ["integer", "string"]}),
	st.just({"enum": ["x", "y", "z"]}),
	st.just({"type": "integer", "enum": [1, 2, 3]}),
	st.just({"enum": [True, False]}),
	st.just({"const": "fixed"}),
	st.just({"type": "object"}),  # free-form
	st.just({}),  # any value
)


@st.composite
def _object(draw: st.DrawFn, children: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
	names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3))
	props = {}
	for name in names:
		sub = dict(draw(children))
		if draw(st.booleans()) and "type" in sub and sub["type"] == "string":
			sub["default"] = "d"
		props[name] = sub
	required = [n for n in names if draw(st.booleans())]
	out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
	if draw(st.booleans()):
		out["additionalProperties"] = draw(
			st.sampled_from([False, False, True, {"type": "string"}])
		)
	return out


def _extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
	return st.one_of(
		_object(children),
		st.builds(
			lambda items, n: {"type": "array", "items": items, "minItems": n},
			children,
			st.integers(0, 2),
		),
		st.builds(lambda a, b: {"anyOf": [a, b]}, children, children),
		st.builds(lambda a: {"anyOf": [a, {"type": "null"}]}, children),
		st.builds(lambda a: {"allOf": [a]}, children),
		st.builds(
			lambda a, b: {
				"oneOf": [
					{
						"type": "object",
						"properties": {"kind": {"const": "p"}, "v": a},
						"required": ["kind"],
					},
					{
						"type": "object",
						"properties": {"kind": {"const": "q"}, "w": b},
						"required": ["kind"],
					},
				]
			},
			children,
			children,
		),
	)


SCHEMAS = st.recursive(LEAVES, _extend, max_leaves=6)
TERMINALS = [{"type": "string"}, {"type": "integer"}, {"type": "null"}, {"enum": ["x", "y"]}]
"""What a recursive list may hold besides the tree itself (a leaf, so the list stays strict)."""


@st.composite
def tool_schemas(draw: st.DrawFn) -> dict[str, Any]:
	"""A tool input schema: an object, sometimes with its parts behind local $refs.

	Sometimes recursive too: a list of itself, or of itself or something else.
	"""
	root = draw(_object(SCHEMAS))
	if draw(st.booleans()):
		kids: dict[str, Any] = {"$ref": "#"}
		if draw(st.booleans()):
			other = draw(st.one_of(st.sampled_from(TERMINALS), SCHEMAS))
			kids = {"anyOf": [kids, other][:: draw(st.sampled_from([1, -1]))]}
		root["properties"] = {**root["properties"], "kids": {"type": "array", "items": kids}}
		if draw(st.booleans()):
			root["required"] = [*root["required"], "kids"]
	if draw(st.booleans()) and root["properties"]:
		name = next(iter(root["properties"]))
		defs = {"Part": root["properties"][name]}
		root = {
			**root,
			"properties": {**root["properties"], name: {"$ref": "#/$defs/Part"}},
			"$defs": defs,
		}
	return root


JSON_VALUES = st.recursive(
	st.none() | st.booleans() | st.integers(-3, 3) | st.text("ab", max_size=3),
	lambda inner: (
		st.lists(inner, max_size=2) | st.dictionaries(st.text("xy", max_size=2), inner, max_size=2)
	),
	max_leaves=4,
)


def values(schema: Any, root: Any = None, depth: int = 0) -> st.SearchStrategy[Any]:
	"""Values valid under a schema of the subset fitted schemas use (and canonical test schemas).

	(hypothesis-jsonschema would do this, but its last release does not run on current
	hypothesis.) Formats are not generated: jsonschema does not check them by default. A
	``$ref`` (``#`` or into the root's ``$defs``) is followed 3 times on a path, then has no value
	(an array of it is empty, a union takes another branch).
	"""
	if schema is True or schema == {}:
		return JSON_VALUES
	root = schema if root is None else root
	if "$ref" in schema:
		ref = schema["$ref"]
		if depth >= 3:
			return st.nothing()
		target = root if ref == "#" else root["$defs"][ref.rsplit("/", 1)[1]]
		return st.deferred(lambda: values(target, root, depth + 1))
	if "anyOf" in schema:
		return st.one_of([values(s, root, depth) for s in schema["anyOf"]])
	if "allOf" in schema or "oneOf" in schema:
		raise NotImplementedError  # not in fitted schemas
	if "const" in schema:
		return st.just(schema["const"])
	if "enum" in schema:
		return st.sampled_from(schema["enum"])
	kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
	return st.one_of([_typed(schema, k, root, depth) for k in kinds])


def _typed(schema: dict[str, Any], kind: str, root: Any, depth: int) -> st.SearchStrategy[Any]:
	if kind == "null":
		return st.none()
	if kind == "boolean":
		return st.booleans()
	if kind in ("integer", "number"):
		low = schema.get("minimum", -20)
		if "exclusiveMinimum" in schema:
			low = max(low, schema["exclusiveMinimum"] + 1)
		high = schema.get("maximum", 20)
		if "exclusiveMaximum" in schema:
			high = min(high, schema["exclusiveMaximum"] - 1)
		ints = st.integers(int(low), int(high))
		if kind == "integer" or "multipleOf" in schema:
			return ints
		return ints | st.floats(low, high, allow_nan=False)
	if kind == "string":
		low, high = schema.get("minLength", 0), schema.get("maxLength", 6)
		if "pattern" in schema:
			assert schema["pattern"] == "^[a-z]*$"
			return st.text("abcz", min_size=low, max_size=high)
		return st.text("aZ é-", min_size=low, max_size=high)
	if kind == "array":
		low = schema.get("minItems", 0)
		items = values(schema["items"], root, depth)
		if items.is_empty:  # a recursion followed far enough: only no item ends it
			return st.just([]) if low == 0 else st.nothing()
		return st.lists(items, min_size=low, max_size=schema.get("maxItems", low + 2))
	assert kind == "object"
	return _objects(schema, root, depth)


@st.composite
def _objects(draw: st.DrawFn, schema: dict[str, Any], root: Any, depth: int) -> dict[str, Any]:
	out: dict[str, Any] = {}
	required = set(schema.get("required", ()))
	for name, sub in schema.get("properties", {}).items():
		if name in required or draw(st.booleans()):
			out[name] = draw(values(sub, root, depth))
	extra = schema.get("additionalProperties", True)
	if extra is not False and draw(st.booleans()):
		key = draw(st.sampled_from(["zz", "extra"]))
		if key not in schema.get("properties", {}):
			out[key] = draw(JSON_VALUES if extra is True else values(extra, root, depth))
	return out


def _inline(schema: Any) -> Any:
	"""A test tool schema with its one-level $ref, allOf and oneOf written out for `values`."""
	defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}

	def walk(node: Any) -> Any:
		if isinstance(node, list):
			return [walk(n) for n in node]
		if not isinstance(node, dict):
			return node
		if node.get("$ref") == "#":
			return node  # `values` follows it, against the root written out
		if "$ref" in node:
			return walk(defs[node["$ref"].rsplit("/", 1)[1]])
		if "allOf" in node:
			return walk(node["allOf"][0])
		if "oneOf" in node:
			return {"anyOf": walk(node["oneOf"])}
		return {
			k: (v if k in ("enum", "const", "required", "default") else walk(v))
			for k, v in node.items()
			if k != "$defs"
		}

	return walk(schema)


def _validate(value: Any, schema: Any) -> None:
	"""jsonschema.validate without re-checking the schema each time (much faster)."""
	error = jsonschema.exceptions.best_match(
		jsonschema.Draft202012Validator(schema).iter_errors(value)
	)
	if error is not None:
		raise error


def _relax(schema: Any, keywords: frozenset[str]) -> Any:
	"""The schema without the assertion keywords the provider did not enforce."""
	if isinstance(schema, list):
		return [_relax(s, keywords) for s in schema]
	if not isinstance(schema, dict):
		return schema
	out = {}
	for key, value in schema.items():
		if key in keywords:
			continue
		if key in ("properties", "$defs"):
			out[key] = {k: _relax(v, keywords) for k, v in value.items()}
		elif key in ("enum", "const", "required", "default"):
			out[key] = value
		else:
			out[key] = _relax(value, keywords)
	return out


def _check(
	dialect: SchemaDialect, tool: dict[str, Any], output: dict[str, Any] | None, data: st.DataObject
) -> None:
	envelope = Envelope.build([ToolSchema("t.x", tool)], output_schema=output, human_input=True)
	fitted = fit(envelope, dialect)
	assert fitted.schema is not None
	event(f"mode {fitted.mode}, input {'text' if 't.x' in fitted.encoded else 'strict'}")
	if fitted.mode == "off":
		return
	assert not dialect.violations(fitted.schema)
	reply = data.draw(values(fitted.schema), label="reply")
	_validate(reply, fitted.schema)  # the generator is sound
	restored = fitted.restore(copy.deepcopy(reply))
	relaxed = fitted.relaxed
	canonical_tool = _relax(tool, relaxed)
	canonical_output = None if output is None else _relax(output, relaxed)
	for command in restored["commands"]:
		if command["type"] == "callTool":
			if "t.x" in fitted.encoded:
				continue  # text checked after decoding; see the round-trip test
			_validate(command["input"], canonical_tool)
		elif command["type"] == "finish" and canonical_output is not None:
			if not fitted.output_encoded:
				_validate(command.get("output"), canonical_output)
	# The rest of the reply against the whole canonical envelope (tool input and output aside,
	# which were checked above against their own roots, where their $refs resolve).
	shell = Envelope.build(
		[ToolSchema("t.x", {})], output_schema=None if output is None else {}, human_input=True
	)
	_validate(restored, _relax(shell.schema(), relaxed))


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@settings(
	max_examples=100,
	deadline=None,
	suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(tool=tool_schemas(), output=st.none() | SCHEMAS, data=st.data())
def test_fitted_replies_restore_to_canonical_replies(
	dialect: SchemaDialect, tool: dict[str, Any], output: dict[str, Any] | None, data: st.DataObject
) -> None:
	"""Every reply the fitted schema accepts is, after restore, one the canonical schema accepts."""
	_check(dialect, tool, output, data)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=tool_schemas(), data=st.data())
def test_inputs_sent_as_text_round_trip(
	dialect: SchemaDialect, tool: dict[str, Any], data: st.DataObject
) -> None:
	"""A tool that falls back gets its input back exactly: restore decodes what the model encoded."""
	fitted = fit(
		Envelope.build([ToolSchema("t.x", tool)], output_schema=None, human_input=False), dialect
	)
	value = data.draw(values(_inline(tool)), label="input")
	reply = {"commands": [{"type": "callTool", "tool": "t.x", "input": json.dumps(value)}]}
	assert fitted.restore(reply)["commands"][0]["input"] == value


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@settings(max_examples=40, deadline=None)
@given(tool=tool_schemas())
def test_fitting_is_deterministic(dialect: SchemaDialect, tool: dict[str, Any]) -> None:
	"""The same envelope and dialect always give the same schema, mode, fallbacks and notes."""
	envelope = Envelope.build([ToolSchema("t.x", tool)], output_schema=None, human_input=False)
	again = Envelope.build(
		[ToolSchema("t.x", copy.deepcopy(tool))], output_schema=None, human_input=False
	)
	assert fit(envelope, dialect) == fit(again, dialect)
