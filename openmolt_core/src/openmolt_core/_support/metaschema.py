"""Check that a JSON Schema is a JSON Schema: the structural rules of the 2020-12 metaschema.

An output schema such as ``{"type": "objekt", "properties": 5}`` used to be accepted, and then
any output passed. The core keeps its dependencies to the design card's list, so rather than add a
JSON Schema library this module checks what the draft 2020-12 metaschema
(https://json-schema.org/draft/2020-12/schema) says about each keyword's value: ``type`` names one
of the seven types, ``properties`` maps names to schemas, ``required`` is a list of unique strings,
bounds are (non-negative) numbers, and so on, recursively through every subschema. Unknown
keywords are allowed, as the metaschema allows them. A test checks these rules against the
``jsonschema`` package's own metaschema validation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openmolt_core._support import LazyPattern

__all__ = ["check_schema"]

_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})

_SCHEMA = (
	"additionalProperties",
	"unevaluatedProperties",
	"unevaluatedItems",
	"items",
	"contains",
	"propertyNames",
	"not",
	"if",
	"then",
	"else",
	"contentSchema",
)
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_COUNTS = (
	"minLength",
	"maxLength",
	"minItems",
	"maxItems",
	"minProperties",
	"maxProperties",
	"minContains",
	"maxContains",
)
_STRINGS = (
	"$id",
	"$schema",
	"$ref",
	"$anchor",
	"$dynamicRef",
	"$dynamicAnchor",
	"$comment",
	"title",
	"description",
	"format",
	"pattern",
	"contentEncoding",
	"contentMediaType",
)
_BOOLS = ("uniqueItems", "deprecated", "readOnly", "writeOnly")


_PLAIN_NAME = LazyPattern(r"^[A-Za-z_][-A-Za-z0-9._]*$")
_PATTERNS = (
	(LazyPattern(r"^[^#]*#?$"), "$id", "must not have a fragment (use $anchor)"),
	(_PLAIN_NAME, "$anchor", "must be a plain name"),
	(_PLAIN_NAME, "$dynamicAnchor", "must be a plain name"),
)


def _is_number(value: Any) -> bool:
	return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
	# The metaschema's nonNegativeInteger: 3.0 is an integer in JSON Schema.
	return _is_number(value) and value >= 0 and float(value).is_integer()


def _unique_strings(value: Any) -> bool:
	return (
		isinstance(value, list)
		and all(isinstance(v, str) for v in value)
		and len(set(value)) == len(value)
	)


def _type_ok(value: Any) -> bool:
	if isinstance(value, str):
		return value in _TYPES
	return (
		isinstance(value, list)
		and len(value) > 0
		and all(isinstance(v, str) and v in _TYPES for v in value)
		and len(set(value)) == len(value)
	)


def _where(path: str, key: str) -> str:
	return f"{path}.{key}" if path else key


def _check(schema: Any, path: str, out: list[str]) -> None:
	if isinstance(schema, bool):
		return
	if not isinstance(schema, dict):
		out.append(
			f"{path or 'the schema'}: must be a schema (an object or true/false), got {_kind(schema)}"
		)
		return
	rules: list[tuple[tuple[str, ...], Callable[[Any], bool], str]] = [
		(_NUMBERS, _is_number, "must be a number"),
		(_COUNTS, _is_count, "must be a whole number >= 0"),
		(_STRINGS, lambda v: isinstance(v, str), "must be a string"),
		(_BOOLS, lambda v: isinstance(v, bool), "must be true or false"),
		(("required",), _unique_strings, "must be a list of unique property names"),
		(("enum", "examples"), lambda v: isinstance(v, list), "must be a list"),
		(("multipleOf",), lambda v: _is_number(v) and v > 0, "must be a number > 0"),
	]
	for keys, ok, message in rules:
		for key in keys:
			if key in schema and not ok(schema[key]):
				out.append(f"{_where(path, key)}: {message}, got {_show(schema[key])}")
	for pattern, key, what in _PATTERNS:
		value = schema.get(key)
		if isinstance(value, str) and not pattern().match(value):
			out.append(f"{_where(path, key)}: {what}, got {_show(value)}")
	if "type" in schema and not _type_ok(schema["type"]):
		out.append(
			f"{_where(path, 'type')}: must be one of {', '.join(sorted(_TYPES))} (or a list of "
			f"them), got {_show(schema['type'])}"
		)
	for key in _SCHEMA:
		if key in schema:
			if key == "items" and isinstance(schema[key], list):
				out.append(f"{_where(path, key)}: must be one schema; for a tuple, use prefixItems")
				continue
			_check(schema[key], _where(path, key), out)
	for key in _SCHEMA_MAPS:
		if key in schema:
			value = schema[key]
			if not isinstance(value, dict):
				out.append(f"{_where(path, key)}: must map names to schemas, got {_kind(value)}")
				continue
			for name, sub in value.items():
				_check(sub, f"{_where(path, key)}.{name}", out)
	for key in _SCHEMA_LISTS:
		if key in schema:
			value = schema[key]
			if not isinstance(value, list) or not value:
				out.append(
					f"{_where(path, key)}: must be a non-empty list of schemas, got {_show(value)}"
				)
				continue
			for i, sub in enumerate(value):
				_check(sub, f"{_where(path, key)}[{i}]", out)
	if "dependentRequired" in schema:
		value = schema["dependentRequired"]
		if not isinstance(value, dict) or not all(_unique_strings(v) for v in value.values()):
			out.append(
				f"{_where(path, 'dependentRequired')}: must map names to lists of unique names"
			)


def _kind(value: Any) -> str:
	return {
		bool: "a boolean",
		int: "a number",
		float: "a number",
		str: "a string",
		list: "a list",
	}.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
	import json

	try:
		text = json.dumps(value)
	except (TypeError, ValueError):
		return type(value).__name__
	return text if len(text) <= 40 else text[:37] + "..."


def check_schema(schema: Any) -> list[str]:
	"""The ways ``schema`` breaks the JSON Schema 2020-12 metaschema (empty when it is valid).

	Args:
		schema: A JSON Schema as plain data.

	Returns:
		One message per problem, each naming the keyword's path (``properties.name.type``).
	"""
	out: list[str] = []
	_check(schema, "", out)
	return out
