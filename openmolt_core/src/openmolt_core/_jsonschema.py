"""Validate data against a JSON Schema with pydantic-core.

Tools and output schemas written as plain data (JSON configs, declarative integrations) carry JSON
Schema. Rather than add a JSON Schema library to the core (the design card keeps its dependencies
to a fixed list), we translate the schema once into a pydantic-core schema and let pydantic-core's
Rust validator do the work: fast, precise error locations, one validation engine for everything.

The translation covers what tool schemas use: ``type`` (one or a list), ``properties``,
``required``, ``additionalProperties``, ``items``, ``prefixItems``, ``enum``, ``const``,
``anyOf``/``oneOf``/``allOf`` (first schema), ``$ref`` into ``$defs``/``definitions``, ``nullable``,
numeric and length bounds, ``pattern``, ``minItems``/``maxItems``. Annotation keywords
(``description``, ``format``, ``examples``, ``default``) never reject data. An unknown keyword is
ignored, so a schema never validates *less* than the model was told.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic_core import PydanticCustomError, SchemaValidator, ValidationError, core_schema

__all__ = ["JsonSchemaValidator", "ValidationError", "format_errors"]


def _ref_name(ref: str) -> str:
	return ref.rsplit("/", 1)[-1]


class _Translator:
	def __init__(self, root: dict[str, Any]) -> None:
		self.defs: dict[str, Any] = {**root.get("definitions", {}), **root.get("$defs", {})}
		self.used: dict[str, core_schema.CoreSchema] = {}

	def translate(self, schema: Any) -> core_schema.CoreSchema:
		if schema is True or schema == {} or schema is None:
			return core_schema.any_schema()
		if schema is False:
			return core_schema.no_info_plain_validator_function(_reject)
		if not isinstance(schema, dict):
			return core_schema.any_schema()
		if "$ref" in schema:
			name = _ref_name(schema["$ref"])
			if name not in self.used:
				self.used[name] = core_schema.any_schema()  # a placeholder breaks cycles
				translated = dict(self.translate(self.defs.get(name, {})))
				translated["ref"] = name  # every core schema may carry a ref
				self.used[name] = translated
			return core_schema.definition_reference_schema(name)
		inner = self._translate_plain(schema)
		if schema.get("nullable") is True:
			inner = core_schema.nullable_schema(inner)
		return inner

	def _translate_plain(self, schema: dict[str, Any]) -> core_schema.CoreSchema:
		if "const" in schema:
			return core_schema.literal_schema([schema["const"]])
		if "enum" in schema:
			values = schema["enum"]
			if any(isinstance(v, (dict, list)) for v in values):
				return core_schema.no_info_plain_validator_function(_in(values))
			return core_schema.literal_schema(list(values))
		for key in ("anyOf", "oneOf"):
			if key in schema:
				choices: list[Any] = [self.translate(s) for s in schema[key]]
				return core_schema.union_schema(choices, mode="left_to_right")
		if schema.get("allOf"):
			merged: dict[str, Any] = {}
			for part in schema["allOf"]:
				if isinstance(part, dict):
					merged = _merge(merged, part)
			rest = {k: v for k, v in schema.items() if k != "allOf"}
			return self.translate(_merge(merged, rest))
		kind = schema.get("type")
		if kind is None:
			if "properties" in schema:
				kind = "object"
			elif "items" in schema:
				kind = "array"
			else:
				return core_schema.any_schema()
		if isinstance(kind, list):
			nullable = "null" in kind
			kinds = [k for k in kind if k != "null"]
			variants: list[Any] = [self._typed({**schema, "type": k}, k) for k in kinds]
			if not variants:
				return core_schema.none_schema()
			inner = variants[0] if len(variants) == 1 else core_schema.union_schema(variants)
			return core_schema.nullable_schema(inner) if nullable else inner
		return self._typed(schema, kind)

	def _typed(self, schema: dict[str, Any], kind: str) -> core_schema.CoreSchema:
		if kind == "string":
			return core_schema.str_schema(
				min_length=schema.get("minLength"),
				max_length=schema.get("maxLength"),
				pattern=schema.get("pattern"),
				strict=True,
			)
		if kind == "integer":
			bounds = {
				"ge": schema.get("minimum"),
				"le": schema.get("maximum"),
				"gt": schema.get("exclusiveMinimum"),
				"lt": schema.get("exclusiveMaximum"),
			}
			# JSON Schema counts 1.0 as an integer: accept it, and hand the tool an int.
			return core_schema.chain_schema(
				[
					core_schema.no_info_plain_validator_function(_integral),
					core_schema.int_schema(**bounds, strict=True),
				]
			)
		if kind == "number":
			return core_schema.union_schema(
				[
					core_schema.int_schema(
						# Integer bounds for integers: x >= 0.5 means x >= 1 when x is an int.
						ge=_bound(schema.get("minimum"), math.ceil),
						le=_bound(schema.get("maximum"), math.floor),
						gt=_bound(schema.get("exclusiveMinimum"), math.floor),
						lt=_bound(schema.get("exclusiveMaximum"), math.ceil),
						strict=True,
					),
					core_schema.float_schema(
						ge=schema.get("minimum"),
						le=schema.get("maximum"),
						gt=schema.get("exclusiveMinimum"),
						lt=schema.get("exclusiveMaximum"),
						strict=True,
					),
				],
				mode="left_to_right",
			)
		if kind == "boolean":
			return core_schema.bool_schema(strict=True)
		if kind == "null":
			return core_schema.none_schema()
		if kind == "array":
			items = schema.get("items")
			return core_schema.list_schema(
				self.translate(items) if isinstance(items, dict) else core_schema.any_schema(),
				min_length=schema.get("minItems"),
				max_length=schema.get("maxItems"),
				strict=True,
			)
		if kind == "object":
			return self._object(schema)
		return core_schema.any_schema()

	def _object(self, schema: dict[str, Any]) -> core_schema.CoreSchema:
		props: dict[str, Any] = schema.get("properties") or {}
		required = set(schema.get("required") or ())
		extra = schema.get("additionalProperties", True)
		if not props:
			values = self.translate(extra) if isinstance(extra, dict) else core_schema.any_schema()
			if extra is False:
				return core_schema.typed_dict_schema({}, extra_behavior="forbid")
			return core_schema.dict_schema(core_schema.str_schema(), values, strict=True)
		fields = {
			name: core_schema.typed_dict_field(self.translate(sub), required=name in required)
			for name, sub in props.items()
		}
		if extra is False:
			return core_schema.typed_dict_schema(fields, extra_behavior="forbid")
		extras_schema = self.translate(extra) if isinstance(extra, dict) else None
		return core_schema.typed_dict_schema(
			fields, extra_behavior="allow", extras_schema=extras_schema
		)


def _bound(value: Any, rounding: Any) -> int | None:
	return None if value is None else int(rounding(value))


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
	out = {**a, **b}
	if "properties" in a and "properties" in b:
		out["properties"] = {**a["properties"], **b["properties"]}
	if "required" in a and "required" in b:
		out["required"] = [*a["required"], *b["required"]]
	return out


def _integral(value: Any) -> int:
	if isinstance(value, int) and not isinstance(value, bool):
		return value
	if isinstance(value, float) and value.is_integer():
		return int(value)
	raise PydanticCustomError("int_type", "Input should be a valid integer")


def _reject(value: Any) -> Any:
	raise ValueError("no value is allowed here")


def _in(values: list[Any]) -> Any:
	def check(value: Any) -> Any:
		if value not in values:
			raise ValueError(f"must be one of {values!r}")
		return value

	return check


class JsonSchemaValidator:
	"""Validates data against one JSON Schema (compiled once).

	Args:
		schema: The JSON Schema, as a dict.
	"""

	__slots__ = ("_validator", "schema")

	def __init__(self, schema: dict[str, Any]) -> None:
		self.schema = schema
		translator = _Translator(schema)
		root = translator.translate(schema)
		if translator.used:
			root = core_schema.definitions_schema(root, list(translator.used.values()))
		self._validator = SchemaValidator(root)

	def validate(self, data: Any) -> Any:
		"""Return the data if it fits the schema.

		Raises:
			ValidationError: The data does not fit; see `format_errors`.
		"""
		return self._validator.validate_python(data)


def format_errors(error: ValidationError, *, limit: int = 8) -> str:
	"""Turn a validation error into short lines a model (or a person) can act on.

	Args:
		error: The pydantic-core validation error.
		limit: How many problems to list at most.

	Returns:
		One line per problem: ``field.path: message``.
	"""
	lines = []
	for item in error.errors(include_url=False)[:limit]:
		loc = ".".join(str(p) for p in item["loc"] if not _is_union_tag(p)) or "(root)"
		msg = item["msg"]
		if item["type"] == "missing":
			msg = "required field is missing"
		elif item["type"] in ("extra_forbidden",):
			msg = "unknown field; remove it"
		lines.append(f"{loc}: {msg}")
	more = error.error_count() - limit
	if more > 0:
		lines.append(f"... and {more} more")
	return "; ".join(lines)


def _is_union_tag(part: Any) -> bool:
	return isinstance(part, str) and (
		part.startswith(("str", "int", "float", "bool", "list", "dict", "typed-dict", "none"))
		and (
			"[" in part
			or part in {"str", "int", "float", "bool", "list", "dict", "typed-dict", "none"}
		)
	)
