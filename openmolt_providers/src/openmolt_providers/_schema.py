"""Fit the reply envelope's JSON Schema to each API's structured-output dialect.

OpenAI's strict mode and Anthropic's structured outputs accept a subset of JSON Schema: every object
must list its properties and forbid others, so a free-form object (the ``input`` of a ``callTool``
command, an agent without an output schema) cannot be expressed. `strict_schema` converts a schema
when it can and returns None when it cannot; the provider then falls back (non-strict schema or
instruction-only JSON), and the agent loop's validation feedback does the rest. The conversion
never loosens what the loop checks, so a reply valid under the converted schema is valid under the
original one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SchemaCache", "const_to_enum", "strict_schema"]

_UNSUPPORTED = frozenset(
	{
		"oneOf",
		"allOf",
		"not",
		"if",
		"then",
		"else",
		"patternProperties",
		"dependentSchemas",
		"dependentRequired",
		"unevaluatedProperties",
		"prefixItems",
	}
)
_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number"}


def _const(schema: dict[str, Any]) -> dict[str, Any]:
	out = {k: v for k, v in schema.items() if k != "const"}
	value = schema["const"]
	out["enum"] = [value]
	if "type" not in out and type(value) in _TYPES:
		out["type"] = _TYPES[type(value)]
	return out


def strict_schema(
	schema: Any,
	*,
	require_all: bool,
	drop: frozenset[str] = frozenset(),
	max_min_items: int | None = None,
) -> dict[str, Any] | None:
	"""Convert a JSON Schema to the strict subset, or return None when it has no strict form.

	Args:
		schema: The schema.
		require_all: Whether every property must be required (OpenAI strict mode).
		drop: Keywords to remove (constraints the API does not support; the loop still checks them).
		max_min_items: The largest ``minItems`` the API accepts; larger ones are lowered to it.

	Returns:
		The strict schema: every object closed with ``additionalProperties: false``, ``const``
		written as a one-value ``enum``; or None.
	"""
	if not isinstance(schema, dict) or not schema:
		return None
	if _UNSUPPORTED.intersection(schema):
		return None
	if "const" in schema:
		schema = _const(schema)
	out: dict[str, Any] = {}
	for key, value in schema.items():
		if key in drop:
			continue
		if key == "minItems" and max_min_items is not None and value > max_min_items:
			value = max_min_items
		out[key] = value
	if "$ref" in schema:
		return out
	kind = schema.get("type")
	kinds = kind if isinstance(kind, list) else [kind]
	if "object" in kinds or "properties" in schema:
		props = schema.get("properties")
		if not isinstance(props, dict) or not props:
			return None
		if schema.get("additionalProperties") not in (None, False):
			return None
		required = schema.get("required", [])
		if require_all and set(required) != set(props):
			return None
		converted = {}
		for name, sub in props.items():
			strict = strict_schema(
				sub, require_all=require_all, drop=drop, max_min_items=max_min_items
			)
			if strict is None:
				return None
			converted[name] = strict
		out["properties"] = converted
		out["additionalProperties"] = False
	if "array" in kinds or "items" in schema:
		items = strict_schema(
			schema.get("items"), require_all=require_all, drop=drop, max_min_items=max_min_items
		)
		if items is None:
			return None
		out["items"] = items
	for combo in ("anyOf",):
		if combo in schema:
			parts = [
				strict_schema(s, require_all=require_all, drop=drop, max_min_items=max_min_items)
				for s in schema[combo]
			]
			if any(p is None for p in parts):
				return None
			out[combo] = parts
	for defs in ("$defs", "definitions"):
		if defs in schema:
			converted_defs = {}
			for name, sub in schema[defs].items():
				strict = strict_schema(
					sub, require_all=require_all, drop=drop, max_min_items=max_min_items
				)
				if strict is None:
					return None
				converted_defs[name] = strict
			out[defs] = converted_defs
	return out


def const_to_enum(schema: Any) -> Any:
	"""Rewrite every ``const`` as a one-value ``enum`` (for APIs that know ``enum`` only)."""
	if isinstance(schema, list):
		return [const_to_enum(s) for s in schema]
	if not isinstance(schema, dict):
		return schema
	if "const" in schema:
		schema = _const(schema)
	return {
		k: (const_to_enum(v) if isinstance(v, dict | list) and k != "enum" else v)
		for k, v in schema.items()
	}


class SchemaCache:
	"""Remembers a conversion per schema object: the loop sends the same dict at every step."""

	def __init__(self, size: int = 64) -> None:
		self._size = size
		self._items: dict[tuple[int, str], tuple[Any, Any]] = {}

	def get(self, schema: Any, kind: str, convert: Any) -> Any:
		"""Return ``convert(schema)``, computed once per schema object and kind."""
		key = (id(schema), kind)
		hit = self._items.get(key)
		if hit is not None and hit[0] is schema:
			return hit[1]
		if len(self._items) >= self._size:
			self._items.clear()
		value = convert(schema)
		self._items[key] = (schema, value)
		return value
