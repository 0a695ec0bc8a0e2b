"""OpenAPI schemas rewritten as the providers take them, within bounds.

Every ``$ref`` is resolved, ``allOf`` merged, ``oneOf`` written as ``anyOf`` (at most
`MAX_VARIANTS` branches), 3.0's ``nullable`` written as a JSON Schema type, and keywords the
providers' strict modes refuse dropped. A schema is converted with its place in the document, so
one that nests too deeply (`MAX_SCHEMA_NESTING`: ``$ref`` chains, ``allOf``/``anyOf``/``oneOf``
inside each other) or expands too far (`MAX_SCHEMA_PARTS`) is refused with that place named; a
recursive ``$ref`` becomes a free-form object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from openmolt_core._support.masking import masked_excerpt, url_secrets
from openmolt_core.errors import ConfigurationError

__all__ = [
	"MAX_DEPTH",
	"MAX_DESCRIPTION_CHARS",
	"MAX_SCHEMA_NESTING",
	"MAX_SCHEMA_PARTS",
	"MAX_VARIANTS",
	"Schemas",
	"as_list",
	"segment",
	"short",
]

MAX_DEPTH = 6
"""Object nesting kept in input schemas; deeper values are free-form objects."""

MAX_VARIANTS = 8
"""``anyOf`` branches kept (OpenAI's strict mode and Gemini accept a handful)."""

MAX_SCHEMA_NESTING = 64
"""Schemas entered inside one another (``$ref`` chains, ``allOf``/``anyOf``/``oneOf`` nesting,
properties) before a schema is refused as too deep."""

MAX_SCHEMA_PARTS = 10_000
"""Schemas one operation's input may expand to (a diamond of ``allOf``s doubles at each level);
a whole document, a hundred times that. GitHub's largest operation takes 125, all 1,223 of them
6,530."""

MAX_VALUE_NESTING = 16
"""An ``enum``, ``const`` or ``default`` value nested deeper than this is left out."""

MAX_DESCRIPTION_CHARS = 300
"""A tool description is cut to this many characters; field descriptions to half of it."""

_KEEP = (
	"type",
	"enum",
	"const",
	"format",
	"pattern",
	"minimum",
	"maximum",
	"exclusiveMinimum",
	"exclusiveMaximum",
	"multipleOf",
	"minLength",
	"maxLength",
	"minItems",
	"maxItems",
	"uniqueItems",
	"minProperties",
	"maxProperties",
	"default",
)


def short(raw: Any, limit: int) -> str:
	"""Text for the model: the first paragraph, without Markdown links or HTML, at most ``limit``.

	Args:
		raw: The document's text (anything else gives "").
		limit: The most characters kept.
	"""
	if not isinstance(raw, str):
		return ""
	# Only the start can survive the cut; bounding it first keeps the regexes linear in `limit`.
	text: str = raw[: limit * 20]
	text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # Markdown links and images
	text = re.sub(r"<[^>]+>", " ", text)  # HTML tags
	text = re.sub(r"[*_`]{1,3}", "", text)
	text = text.split("\n\n")[0]
	text = re.sub(r"\s+", " ", text).strip()
	if len(text) <= limit:
		return text
	cut = text[:limit]
	sentence = max(cut.rfind(". "), cut.rfind("? "), cut.rfind("! "))
	if sentence > limit // 2:
		return cut[: sentence + 1]
	return cut[: limit - 1].rstrip() + "…"


class Schemas:
	"""Resolves ``$ref``s and rewrites schemas within the providers' limits.

	Every schema is converted with the place it sits in the document (a JSON pointer, or the
	``$ref`` it was reached through), so a schema that nests too deeply (`MAX_SCHEMA_NESTING`)
	or expands too far (`MAX_SCHEMA_PARTS` per operation) is refused with its place named.
	"""

	def __init__(self, document: Mapping[str, Any]) -> None:
		self.document = document
		self.parts = 0
		self.total = 0

	def resolve(self, ref: Any) -> Any:
		"""The value a local ``$ref`` (``#/components/schemas/Pet``) points to.

		Raises:
			ConfigurationError: The reference is external, not a string, or points to nothing.
		"""
		if not isinstance(ref, str):
			raise ConfigurationError(f"a $ref must be a string, got {type(ref).__name__}")
		if not ref.startswith("#/"):
			raise ConfigurationError(
				f"external reference {masked_excerpt(ref, 200, url_secrets(ref))!r}: bundle the document into one file first "
				"(for example with `redocly bundle`)"
			)
		node: Any = self.document
		for part in ref[2:].split("/"):
			part = part.replace("~1", "/").replace("~0", "~")
			if (
				isinstance(node, list)
				and part.isascii()
				and part.isdigit()
				and int(part) < len(node)
			):
				node = node[int(part)]
				continue
			if not isinstance(node, Mapping) or part not in node:
				raise ConfigurationError(
					f"reference {masked_excerpt(ref, 200)!r} points to nothing in the document"
				)
			node = node[part]
		return node

	def deref(self, value: Any) -> Any:
		"""Follow ``$ref`` chains of a parameter, request body or response object."""
		seen: set[str] = set()
		while isinstance(value, Mapping) and "$ref" in value:
			ref = value["$ref"]
			if ref in seen:
				raise ConfigurationError(f"reference {ref!r} refers to itself")
			if len(seen) >= MAX_SCHEMA_NESTING:
				raise ConfigurationError(
					f"{ref}: a chain of more than {MAX_SCHEMA_NESTING} $refs; point to the "
					"target directly"
				)
			seen.add(ref)
			value = self.resolve(ref)
		return value

	def convert(
		self,
		schema: Any,
		*,
		request: bool,
		depth: int = 0,
		stack: tuple[str, ...] = (),
		where: str = "#",
		level: int = 0,
	) -> dict[str, Any]:
		"""The schema as the providers take it (see the module docstring).

		Args:
			schema: The schema.
			request: It describes a request (read-only fields are left out).
			depth: Object nesting so far (deeper than `MAX_DEPTH` becomes a free-form object).
			stack: The ``$ref``s followed to get here (a cycle becomes a free-form object).
			where: The schema's place in the document, for errors.
			level: Schemas entered to get here ($ref, allOf, anyOf, properties...).

		Raises:
			ConfigurationError: The schema nests deeper than `MAX_SCHEMA_NESTING` or the
				schemas expand past `MAX_SCHEMA_PARTS`; the message names the place.
		"""
		self.parts += 1
		self.total += 1
		if self.parts > MAX_SCHEMA_PARTS or self.total > 100 * MAX_SCHEMA_PARTS:
			whose = "this operation's" if self.parts > MAX_SCHEMA_PARTS else "the document's"
			raise ConfigurationError(
				f"{where}: {whose} schemas expand to too many parts (the same allOf/anyOf/$ref "
				"reached again and again); simplify them or import fewer operations"
			)
		if level > MAX_SCHEMA_NESTING:
			raise ConfigurationError(
				f"{where}: schemas nest deeper than {MAX_SCHEMA_NESTING} levels ($ref chains, "
				"allOf/anyOf/oneOf inside each other); flatten the schema here"
			)
		if schema is True or not isinstance(schema, Mapping):
			return {}

		def inner(value: Any, deeper: int, place: str) -> dict[str, Any]:
			return self.convert(
				value, request=request, depth=deeper, stack=stack, where=place, level=level + 1
			)

		if "$ref" in schema:
			ref = schema["$ref"]
			if ref in stack or depth > MAX_DEPTH:
				return {"type": "object", "description": "(nested value; any object)"}
			extra = {k: v for k, v in schema.items() if k in ("description", "nullable")}
			target = self.resolve(ref)
			return self.convert(
				{**target, **extra} if isinstance(target, Mapping) else target,
				request=request,
				depth=depth,
				stack=(*stack, ref),
				where=ref,
				level=level + 1,
			)
		if schema.get("allOf"):
			merged: dict[str, Any] = {}
			for i, part in enumerate(as_list(schema["allOf"], f"{where}/allOf")):
				converted = inner(part, depth, f"{where}/allOf/{i}")
				merged = _merge(merged, converted)
			rest = {k: v for k, v in schema.items() if k != "allOf"}
			if rest:
				merged = _merge(merged, inner(rest, depth, where))
			return merged
		for key in ("oneOf", "anyOf"):
			if schema.get(key):
				variants = [
					inner(v, depth + 1, f"{where}/{key}/{i}")
					for i, v in enumerate(as_list(schema[key], f"{where}/{key}")[:MAX_VARIANTS])
				]
				variants = [v for i, v in enumerate(variants) if v not in variants[:i]]
				out: dict[str, Any] = variants[0] if len(variants) == 1 else {"anyOf": variants}
				if any(v == {} for v in variants):
					out = {}
				described = short(schema.get("description"), MAX_DESCRIPTION_CHARS // 2)
				if described and "description" not in out:
					out = {**out, "description": described}
				return _nullable(out, schema)
		out = {k: schema[k] for k in _KEEP if k in schema and _shallow(schema[k])}
		if schema.get("exclusiveMinimum") is True and "minimum" in schema:  # OpenAPI 3.0 form
			out["exclusiveMinimum"] = out.pop("minimum")
		elif isinstance(out.get("exclusiveMinimum"), bool):
			out.pop("exclusiveMinimum")
		if schema.get("exclusiveMaximum") is True and "maximum" in schema:
			out["exclusiveMaximum"] = out.pop("maximum")
		elif isinstance(out.get("exclusiveMaximum"), bool):
			out.pop("exclusiveMaximum")
		described = short(
			schema.get("description") or schema.get("title"), MAX_DESCRIPTION_CHARS // 2
		)
		if described:
			out["description"] = described
		kind = schema.get("type")
		if kind == "object" or "properties" in schema or "additionalProperties" in schema:
			if depth >= MAX_DEPTH:
				return _nullable(
					{"type": "object", **({"description": described} if described else {})}, schema
				)
			props: dict[str, Any] = {}
			properties = schema.get("properties") or {}
			if not isinstance(properties, Mapping):
				raise ConfigurationError(f"{where}/properties: must be an object of schemas")
			for name, sub in properties.items():
				target = (
					self.deref(sub)
					if isinstance(sub, Mapping) and "$ref" in sub and len(stack) <= MAX_DEPTH
					else sub
				)
				if request and isinstance(target, Mapping) and target.get("readOnly"):
					continue
				props[name] = inner(sub, depth + 1, f"{where}/properties/{segment(name)}")
			out.setdefault("type", "object")
			if props:
				out["properties"] = props
			required = [r for r in as_list(schema.get("required") or [], where) if r in props]
			if required:
				out["required"] = required
			more = schema.get("additionalProperties")
			if isinstance(more, Mapping):
				out["additionalProperties"] = inner(
					more, depth + 1, f"{where}/additionalProperties"
				)
			elif isinstance(more, bool):
				out["additionalProperties"] = more
		elif kind == "array" or "items" in schema:
			out.setdefault("type", "array")
			out["items"] = inner(schema.get("items"), depth + 1, f"{where}/items")
		if request and out.get("format") == "binary":
			out = {
				"type": "string",
				"description": "A file reference (openmolt-file:..., a data: URL, fileSystem:path).",
			}
		return _nullable(out, schema)


def _shallow(value: Any, limit: int = MAX_VALUE_NESTING) -> bool:
	"""Whether a value (an enum, a default) nests at most ``limit`` levels; deeper ones are dropped."""
	level: list[Any] = [value]
	for _ in range(limit + 1):
		level = [
			v
			for item in level
			if isinstance(item, (dict, list))
			for v in (item.values() if isinstance(item, dict) else item)
		]
		if not level:
			return True
	return False


def as_list(value: Any, where: str) -> list[Any]:
	"""A value the document must give as a list.

	Raises:
		ConfigurationError: It is not a list; the message names the place.
	"""
	if not isinstance(value, list):
		raise ConfigurationError(f"{where}: must be a list, got {type(value).__name__}")
	return value


def segment(name: str) -> str:
	"""A key as one JSON pointer segment."""
	return str(name).replace("~", "~0").replace("/", "~1")


def _nullable(out: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
	if schema.get("nullable") is not True or out == {}:
		return out
	kind = out.get("type")
	if isinstance(kind, str):
		return {**out, "type": [kind, "null"]}
	if isinstance(kind, list):
		return out if "null" in kind else {**out, "type": [*kind, "null"]}
	return {"anyOf": [out, {"type": "null"}]}


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
	if not a:
		return dict(b)
	out = {**a, **{k: v for k, v in b.items() if k not in ("properties", "required")}}
	if "properties" in a or "properties" in b:
		out["properties"] = {**a.get("properties", {}), **b.get("properties", {})}
	required = [
		*a.get("required", []),
		*[r for r in b.get("required", []) if r not in a.get("required", [])],
	]
	if required:
		out["required"] = required
	if "description" in a:
		out["description"] = a["description"]
	return out
