"""Validate data against a JSON Schema with pydantic-core.

Tools and output schemas written as plain data (JSON configs, declarative integrations) carry JSON
Schema. Rather than add a JSON Schema library to the core (the design card keeps its dependencies
to a fixed list), we translate the schema once into a pydantic-core schema and let pydantic-core's
Rust validator do the work: fast, precise error locations, one validation engine for everything.

The translation covers what tool schemas use: ``type`` (one or a list), ``properties``,
``required``, ``additionalProperties``, ``items``, ``prefixItems``, ``enum``, ``const``,
``anyOf``/``oneOf``/``allOf`` (first schema), ``$ref`` into ``$defs``/``definitions``, ``nullable``,
numeric and length bounds, ``pattern``, ``minItems``/``maxItems``. Annotation keywords
(``description``, ``examples``, ``default``) never reject data. An unknown keyword is ignored, so
a schema never validates *less* than the model was told.

``format`` is enforced for the formats tools rely on (`CHECKED_FORMATS`: ``uri``, ``date-time``,
``date``, ``email``, ``uuid``), so the model hears our message rather than the service's 400 (an
embed URL that is not a URL); other formats stay annotations, as JSON Schema 2020-12's default
says.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from pydantic_core import PydanticCustomError, SchemaValidator, ValidationError, core_schema

__all__ = ["CHECKED_FORMATS", "JsonSchemaValidator", "ValidationError", "format_errors"]


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
			text = core_schema.str_schema(
				min_length=schema.get("minLength"),
				max_length=schema.get("maxLength"),
				pattern=schema.get("pattern"),
				strict=True,
			)
			check = CHECKED_FORMATS.get(str(schema.get("format")))
			if check is None:
				return text
			return core_schema.no_info_after_validator_function(check, text)
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


_DATE_TIME = re.compile(
	r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", re.ASCII
)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$", re.ASCII)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$", re.ASCII)


def _fails(name: str, what: str) -> PydanticCustomError:
	return PydanticCustomError(f"format_{name}", f"must be {what}")


def _uri(value: str) -> str:
	scheme, sep, rest = value.partition(":")
	web = scheme.lower() in ("http", "https")
	fine = bool(sep and _SCHEME.match(scheme) and rest) and not any(c.isspace() for c in value)
	if fine and web:
		fine = rest.startswith("//") and len(rest) > 2  # a web URL names its host
	if not fine:
		raise _fails("uri", "an absolute URI with a scheme, such as https://example.com/a")
	return value


def _date_time(value: str) -> str:
	import datetime as dt

	try:
		if not _DATE_TIME.match(value):
			raise ValueError(value)
		dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
	except ValueError:
		raise _fails("date_time", "an RFC 3339 date-time, such as 2026-05-01T09:30:00Z") from None
	return value


def _date(value: str) -> str:
	import datetime as dt

	try:
		if not _DATE.match(value):
			raise ValueError(value)
		dt.date.fromisoformat(value)
	except ValueError:
		raise _fails("date", "a date as YYYY-MM-DD, such as 2026-05-01") from None
	return value


def _email(value: str) -> str:
	if not _EMAIL.match(value):
		raise _fails("email", "an email address, such as ana@example.com")
	return value


def _uuid(value: str) -> str:
	if not _UUID.match(value):
		raise _fails("uuid", "a UUID, such as 123e4567-e89b-12d3-a456-426614174000")
	return value


CHECKED_FORMATS: dict[str, Callable[[str], str]] = {
	"uri": _uri,
	"date-time": _date_time,
	"date": _date,
	"email": _email,
	"uuid": _uuid,
}
"""The ``format`` values that reject data that does not fit; other formats are annotations."""


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
		self.schema: dict[str, Any] = schema
		"""The schema it validates against."""
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
