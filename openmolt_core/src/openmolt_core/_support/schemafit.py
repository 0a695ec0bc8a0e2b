"""Fit one JSON Schema to a provider's dialect, node by node, and undo the changes on a value.

A `SchemaDialect` says which subset of JSON Schema an API accepts and its size limits.
`Fitter.node` turns a canonical sub-schema into its form in the dialect and returns, with it, the
`Repair` that undoes the dialect's changes on a value (today: the ``null`` a required-but-nullable
property carries when the canonical schema left it out). A sub-schema that has no form raises
`NoStrictForm`, whose message names the place and the reason; the caller then falls back.

The rules, for every dialect:

- A schema that is no JSON Schema (`openmolt_core._support.metaschema`: ``"required": 2``, a
  tool's schema no one checked) has no form; nor has one nested deeper than the fitter goes.
- ``$ref`` into the schema's own ``$defs``/``definitions`` is inlined (the fitted schema is one
  tree, so it can be nested in the reply envelope); a foreign ``$ref`` has no form, nor has a
  recursive one unless the dialect takes recursion (``recursive_refs``): then the definition goes
  to `Fitter.defs`, for the root's ``$defs``, with a `RefRepair` that follows it.
- A null among the literals, where the dialect's enums hold none, is a union with ``{"type":
  "null"}`` (`_null_apart`); a boolean among them, where they hold none, a ``{"type":
  "boolean"}`` (alone, or in a union with the other literals; one boolean alone is sent as both,
  recorded in `Fitter.relaxed`: `_boolean_apart`).
- ``allOf`` is merged when its parts do not disagree; ``oneOf`` becomes ``anyOf`` when a
  ``const``/``enum`` property tells its branches apart (then at most one can match, as before).
- A sub-schema that allows any value (no ``type``, ``enum``, ``const`` or ``anyOf``), ``not``,
  conditionals, tuples and pattern-keyed objects have no form. Nor has an open object without
  properties (``{"type": "object"}``, ``"properties": {}``: any object), in any dialect, nor, in
  a dialect that closes objects, one with ``additionalProperties`` other than false, nor one
  whose ``required`` names a property it does not declare (Gemini, whose objects are open,
  refuses it with a 400: "required[0]: property is not defined"). An object
  with ``properties`` is sent with those properties only (closed where the dialect closes
  objects): its declared properties are what a tool reads.
- Annotations (``title``, ``examples``...) are dropped; ``description`` is kept when the dialect
  knows it. Assertions the dialect lacks (``maxLength`` in Anthropic's, and a ``format`` the
  loop checks, ``uri`` in OpenAI's) are dropped and recorded in `Fitter.relaxed`: the provider
  does not enforce them, the loop's validation does.

Repairs (`ObjectRepair`, `ArrayRepair`, `UnionRepair`, `RefRepair`, `Decode`; the array and
union ones in `openmolt_core._support.schemarepairs`, loaded when a schema needs one) follow the
fitted schema, never the value, so a value nested deeper than its schema costs nothing and cannot
make them recurse. They change values in place and never raise, except `Decode` on JSON text a
state cannot hold (`openmolt_core._support.jsonsafe.UnsafeJson`).

This module knows JSON Schema and nothing of agents: `openmolt_core.structured` fits an agent's
reply envelope with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openmolt_core._support import LazyPattern, lazy_exports
from openmolt_core._support.jsonsafe import UnsafeJson, canonical, loads, nests_within

if TYPE_CHECKING:
	from openmolt_core._support.schemarepairs import ArrayRepair, Match, UnionRepair, kinds_of

# The repairs of arrays and unions live apart and load when a schema has such a part to repair.
__getattr__, __dir__ = lazy_exports(
	globals(),
	dict.fromkeys(
		("ArrayRepair", "Match", "UnionRepair", "kinds_of"), "openmolt_core._support.schemarepairs"
	),
)

__all__ = [
	"ASSERTIONS",
	"NO_FORM",
	"ArrayRepair",
	"Decode",
	"Fitter",
	"Match",
	"Metrics",
	"NoStrictForm",
	"ObjectRepair",
	"RefRepair",
	"Repair",
	"SchemaDialect",
	"UnionRepair",
	"accepts_null",
	"kinds_of",
	"measure",
	"nullable",
	"simple_pattern",
]

ASSERTIONS = frozenset(
	"minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength pattern "
	"minItems maxItems uniqueItems minProperties maxProperties contains minContains "
	"maxContains".split()
)
"""Keywords that only constrain a value further: dropping one loosens what the provider enforces."""

NO_FORM = frozenset(
	"not if then else dependentRequired dependentSchemas dependencies patternProperties "
	"propertyNames unevaluatedProperties unevaluatedItems prefixItems additionalItems "
	"$dynamicRef $recursiveRef".split()
)
"""Keywords whose sub-schema has no strict form in any dialect."""

_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment"})
_PRIMITIVES = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}
_PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean", "null"})
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "null", "object", "array"})
_MISSING: Any = object()
_MAX_NESTING = 64
"""Sub-schemas nested deeper than this have no form (it bounds the fitter's recursion)."""


# repairs ------------------------------------------------------------------------------------

Repair = Callable[[Any], Any]
"""Undoes the dialect's changes on one value valid under the fitted sub-schema (in place)."""


@dataclass(frozen=True, slots=True, eq=False)  # never compared: no __eq__, __hash__
class Decode:
	"""A value sent as JSON text: decoded (text that is not JSON stays as it is).

	Args:
		objects: The value is an object (a tool's input): JSON text of JSON text of an object
			(a model that encoded it twice, or more) is decoded to the object.

	Raises:
		UnsafeJson: The text holds a key twice, ``NaN``/``Infinity`` or a lone surrogate.
	"""

	objects: bool = False

	def __call__(self, value: Any) -> Any:
		"""Decode ``value`` when it is a string."""
		if not isinstance(value, str):
			return value
		try:
			decoded = loads(value)
		except UnsafeJson:
			raise
		except (ValueError, RecursionError):
			return value
		if self.objects and isinstance(decoded, str):
			inner = self(decoded)
			return inner if isinstance(inner, dict) else decoded
		return decoded


@dataclass(frozen=True, slots=True, eq=False)  # never compared: no __eq__, __hash__
class ObjectRepair:
	"""Repairs the properties of an object.

	Args:
		props: ``(name, drop_null, repair)`` per property that needs work: ``drop_null`` removes
			the property when it is null (the fitted schema made an optional property required and
			nullable), ``repair`` is applied to its value otherwise.
	"""

	props: tuple[tuple[str, bool, Repair | None], ...]

	def __call__(self, value: Any) -> Any:
		"""Repair ``value`` when it is an object."""
		if not isinstance(value, dict):
			return value
		for name, drop_null, repair in self.props:
			if name not in value:
				continue
			if value[name] is None and drop_null:
				del value[name]
			elif repair is not None:
				value[name] = repair(value[name])
		return value


class RefRepair:
	"""The repair of a recursive definition (``$defs``), set once the definition is fitted.

	A value is nested at most as deep as the parser's depth cap, so following it cannot recurse
	without end.
	"""

	__slots__ = ("target",)

	def __init__(self) -> None:
		self.target: Repair | None = None

	def __call__(self, value: Any) -> Any:
		"""Repair ``value`` as the definition's repair says."""
		return self.target(value) if self.target is not None else value


# fitting ------------------------------------------------------------------------------------


class NoStrictForm(Exception):
	"""A sub-schema has no form in the dialect (the message says where and why)."""


class _Open:
	"""A definition being fitted (`Fitter._recursing`), for the references met inside it.

	Args:
		name: Its name in the root's ``$defs``.
		holder: Its repair, set once it is fitted.
		source: Its source schema (what a union or a nullable property reads of it until its
			fitted form is known).
		levels: `Fitter._levels` where it started: a reference to it must be deeper.
	"""

	__slots__ = ("holder", "levels", "name", "source", "used")

	def __init__(self, name: str, holder: RefRepair, source: Any, levels: int) -> None:
		self.name = name
		self.holder = holder
		self.source = source
		self.levels = levels
		self.used = False
		"""Whether a reference to it was met (then it goes to the root's ``$defs``)."""


# schema helpers -----------------------------------------------------------------------------


def accepts_null(schema: Mapping[str, Any]) -> bool:
	"""Whether a (fitted) schema lets ``null`` through."""
	kind = schema.get("type")
	if kind == "null" or (isinstance(kind, list) and "null" in kind):
		return True
	if "enum" in schema and None in schema["enum"]:
		return True
	if "const" in schema and schema["const"] is None:
		return True
	return any(accepts_null(s) for s in schema.get("anyOf", ()))


def nullable(schema: dict[str, Any], *, type_lists: bool = True) -> dict[str, Any]:
	"""The schema that also accepts ``null``: a type list for a plain primitive, else ``anyOf``."""
	kind = schema.get("type")
	plain = not ({"enum", "const", "anyOf"} & schema.keys())
	if type_lists and plain and isinstance(kind, str) and kind not in ("object", "array"):
		return {**schema, "type": [kind, "null"]}
	if "anyOf" in schema:
		return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
	return {"anyOf": [schema, {"type": "null"}]}


def _typed_as(value: Any, kinds: list[str]) -> bool:
	"""Whether a primitive JSON value has one of the types ``kinds`` (JSON Schema's reading).

	An integer is a number, and a number with no fraction (``2.0``) an integer; a boolean is
	neither. A value that is no primitive (an object, an array) is kept for `_literals` to judge.
	"""
	kind = _PRIMITIVES.get(type(value))
	if kind is None:
		return True
	if kind in kinds or (kind == "integer" and "number" in kinds):
		return True
	return kind == "number" and "integer" in kinds and float(value).is_integer()


def _types(schema: Mapping[str, Any]) -> list[str]:
	kind = schema.get("type")
	if isinstance(kind, str):
		return [kind]
	if isinstance(kind, list):
		return [str(k) for k in kind]
	values = (
		schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
	)
	if values is not None:
		return sorted({_PRIMITIVES.get(type(v), "") for v in values} - {""})
	if "properties" in schema or "additionalProperties" in schema:
		return ["object"]
	if "items" in schema or "prefixItems" in schema:
		return ["array"]
	return []


def _plainly_nullable(schema: Any, nesting: int) -> bool:
	"""Whether a source sub-schema says plainly that it accepts ``null`` (its fitted form does too).

	Any shape is read (it may not have been checked yet); a union is read to `_MAX_NESTING`.
	"""
	if not isinstance(schema, dict) or nesting > _MAX_NESTING:
		return False
	kind, values = schema.get("type"), schema.get("enum")
	if schema.get("nullable") is True or kind == "null":
		return True
	if (isinstance(kind, list) and "null" in kind) or (isinstance(values, list) and None in values):
		return True
	if "const" in schema and schema["const"] is None:
		return True
	branches = schema.get("anyOf")
	return isinstance(branches, list) and any(_plainly_nullable(b, nesting + 1) for b in branches)


def _match(schema: Mapping[str, Any]) -> Match:
	from openmolt_core._support.schemarepairs import Match

	kinds = set(_types(schema))
	if "anyOf" in schema:
		return Match(frozenset().union(*(_match(s).kinds for s in schema["anyOf"])))
	if "number" in kinds:
		kinds.add("integer")
	if "object" in kinds and "properties" in schema:
		closed = schema.get("additionalProperties") is False
		return Match(
			frozenset(kinds),
			frozenset(schema.get("required", ())),
			frozenset(schema["properties"]) if closed else None,
		)
	return Match(frozenset(kinds))


_BY_KIND = {
	"string": frozenset({"format", "pattern", "minLength", "maxLength"}),
	"integer": frozenset(
		{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
	),
	"array": frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"}),
	"object": frozenset({"properties", "required", "additionalProperties"}),
}
_BY_KIND["number"] = _BY_KIND["integer"]


def _split(schema: dict[str, Any]) -> dict[str, Any]:
	"""A schema with a list of types written as ``anyOf``, one branch per type."""
	branches = []
	for kind in schema["type"]:
		branch = {"type": kind, **{k: v for k, v in schema.items() if k in _BY_KIND.get(kind, ())}}
		if "enum" in schema or "const" in schema:
			values = schema.get("enum", [schema.get("const")])
			fits = [
				v
				for v in values
				if _PRIMITIVES.get(type(v)) == kind or (kind == "number" and type(v) is int)
			]
			if not fits:
				continue
			branch["enum"] = fits
		branches.append(branch)
	out: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
	if "description" in schema:
		out = {**out, "description": schema["description"]}
	return out


def _merge(parts: list[Mapping[str, Any]], where: str) -> dict[str, Any]:
	"""The schema equal to all ``parts`` at once (``allOf``), when they do not disagree."""
	out: dict[str, Any] = {}
	for part in parts:
		for key, value in part.items():
			if key == "required":
				out[key] = [*out.get(key, []), *(r for r in value if r not in out.get(key, []))]
			elif key == "properties" and key in out:
				for name, sub in value.items():
					if name in out[key] and out[key][name] != sub:
						raise NoStrictForm(f"{where}: allOf parts disagree on property {name!r}")
					out[key] = {**out[key], name: sub}
			elif key in _ANNOTATIONS:
				out[key] = value  # a later part (the siblings of a $ref) says it better
			elif key in out and out[key] != value:
				raise NoStrictForm(f"{where}: allOf parts disagree on {key!r}")
			else:
				out.setdefault(key, value)
	return out


def _null_apart(schema: dict[str, Any]) -> dict[str, Any]:
	"""A schema whose literals hold a null its type allows, as the union of the others and null.

	For a dialect whose enums hold no null (Gemini's): ``Literal["x", None]`` is
	``{"enum": ["x", null]}``, the same values as ``{"anyOf": [{"enum": ["x"]}, {"type":
	"null"}]}``. A null the schema's ``type`` refuses is left for `Fitter._plain` to drop.
	"""
	values = (
		schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
	)
	if not isinstance(values, list) or None not in values or "anyOf" in schema:
		return schema
	kind = schema.get("type")
	kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
	if kinds is not None and "null" not in kinds:
		return schema
	outer = {k: v for k, v in schema.items() if k in _ANNOTATIONS}
	others = [k for k in kinds if k != "null"] if kinds is not None else None
	rest = [v for v in values if v is not None]
	if not rest or others == []:
		return {**outer, "type": "null"}
	branch = {k: v for k, v in schema.items() if k not in _ANNOTATIONS | {"enum", "const"}}
	branch["enum"] = rest
	if others is not None:
		branch["type"] = others[0] if len(others) == 1 else others
	return {**outer, "anyOf": [branch, {"type": "null"}]}


def _boolean_apart(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
	"""A schema whose literals hold a boolean its type allows, as a boolean (or a union with one).

	For a dialect whose enums hold no boolean (Gemini's): ``Literal[True, False]`` is ``{"type":
	"boolean"}``, and ``Literal["auto", False]`` the union of ``{"enum": ["auto"]}`` and a
	boolean. One boolean alone (``{"const": true}``) has no exact form there: it is sent as a
	boolean, and the second value says so (the caller records the literal as relaxed; the loop
	still refuses the other boolean). A boolean the schema's ``type`` refuses is left for
	`Fitter._plain` to drop.
	"""
	values = (
		schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
	)
	if (
		not isinstance(values, list)
		or "anyOf" in schema
		or not any(isinstance(v, bool) for v in values)
	):
		return schema, False
	kind = schema.get("type")
	kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
	if kinds is not None and "boolean" not in kinds:
		return schema, False
	loosened = {v for v in values if isinstance(v, bool)} != {True, False}
	outer = {k: v for k, v in schema.items() if k in _ANNOTATIONS}
	others = [k for k in kinds if k != "boolean"] if kinds is not None else None
	rest = [v for v in values if not isinstance(v, bool)]
	if not rest or others == []:
		return {**outer, "type": "boolean"}, loosened
	branch = {k: v for k, v in schema.items() if k not in _ANNOTATIONS | {"enum", "const"}}
	branch["enum"] = rest
	if others is not None:
		branch["type"] = others[0] if len(others) == 1 else others
	return {**outer, "anyOf": [branch, {"type": "boolean"}]}, loosened


def _tag(branch: Mapping[str, Any]) -> dict[str, frozenset[Any]]:
	"""The required properties of a branch whose value is fixed by ``const``/``enum``."""
	props = branch.get("properties") or {}
	tags = {}
	for name in branch.get("required", ()):
		sub = props.get(name) or {}
		if "const" in sub:
			tags[name] = frozenset([canonical(sub["const"])])
		elif isinstance(sub.get("enum"), list):
			tags[name] = frozenset(canonical(v) for v in sub["enum"])
	return tags


def _disjoint(branches: Sequence[Mapping[str, Any]]) -> bool:
	"""Whether no value can match two branches (each pair differs on a tag property)."""
	tags = [_tag(b) for b in branches]
	for i, a in enumerate(tags):
		for b in tags[i + 1 :]:
			if not any(name in b and not (a[name] & b[name]) for name in a):
				return False
	return True


# metrics ------------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)  # never compared: no __eq__ to generate
class Metrics:
	"""The sizes the providers limit, measured on one schema.

	Args:
		properties: Object properties, all objects together.
		depth: Object and array levels on the longest path (the root is level 1).
		enum_values: ``enum`` values, all enums together.
		string_length: Characters of property names, ``enum``/``const`` values and the root's
			definition names.
		optional: Properties not listed in their object's ``required``.
		unions: Sub-schemas with ``anyOf`` or a list of types.
		size: Bytes of the schema as compact JSON.
		long_enum: The largest total length of one enum's values, among enums with many values.
	"""

	properties: int = 0
	depth: int = 0
	enum_values: int = 0
	string_length: int = 0
	optional: int = 0
	unions: int = 0
	size: int = 0
	long_enum: int = 0

	def __add__(self, other: Metrics) -> Metrics:
		return Metrics(
			self.properties + other.properties,
			max(self.depth, other.depth),
			self.enum_values + other.enum_values,
			self.string_length + other.string_length,
			self.optional + other.optional,
			self.unions + other.unions,
			self.size + other.size,
			max(self.long_enum, other.long_enum),
		)


def _value_length(value: Any) -> int:
	return len(value) if isinstance(value, str) else len(json.dumps(value))


def measure(schema: Any, *, long_enum_values: int = 250) -> Metrics:
	"""Measure a schema (see `Metrics`).

	Args:
		schema: The schema.
		long_enum_values: How many values make an enum "long" for `Metrics.long_enum`.
	"""
	m = Metrics(size=len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode()))
	_walk(schema, 0, m, long_enum_values)
	defs = schema.get("$defs") if isinstance(schema, dict) else None
	for name, definition in defs.items() if isinstance(defs, dict) else ():
		# The root's definitions (recursive ones, OpenAI): each is a root of its own, and its
		# name counts as a property name does.
		m.string_length += len(name)
		_walk(definition, 0, m, long_enum_values)
	return m


def _walk(schema: Any, level: int, m: Metrics, long: int) -> None:
	if not isinstance(schema, dict):
		return
	kinds = _types(schema)
	if "object" in kinds or "array" in kinds:
		level += 1
		m.depth = max(m.depth, level)
	if "anyOf" in schema or (isinstance(schema.get("type"), list) and len(schema["type"]) > 1):
		m.unions += 1
	if "enum" in schema:
		m.enum_values += len(schema["enum"])
		total = sum(_value_length(v) for v in schema["enum"])
		m.string_length += total
		if len(schema["enum"]) > long:
			m.long_enum = max(m.long_enum, total)
	if "const" in schema:
		m.string_length += _value_length(schema["const"])
	props = schema.get("properties")
	if isinstance(props, dict):
		m.properties += len(props)
		m.string_length += sum(len(name) for name in props)
		m.optional += len(set(props) - set(schema.get("required", ())))
		for sub in props.values():
			_walk(sub, level, m, long)
	for key in ("items", "additionalProperties"):
		_walk(schema.get(key), level, m, long)
	for sub in schema.get("anyOf", ()):
		_walk(sub, level, m, long)


# the dialect --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaDialect:
	"""The JSON Schema subset and limits of one provider's structured output.

	A limit left at None is not documented by the provider and not checked.

	Args:
		name: The dialect's name (``openai``, ``anthropic``, ``gemini``).
		keywords: Assertion and annotation keywords the API accepts and enforces, beyond the
			structure (``type``, ``properties``, ``required``, ``items``, ``anyOf``, ``enum``,
			``const``); others are dropped (see `FittedSchema.relaxed`).
		formats: String ``format`` values the API accepts; others are dropped.
		closed_objects: Every object must list its properties with ``additionalProperties:
			false``; a free-form object then has no strict form.
		require_all: Every property must be listed in ``required``.
		require_defaults: A property with a ``default`` becomes required even when
			``require_all`` is off (saves the API's budget of optional properties).
		const_as_enum: ``const`` is sent as a one-value ``enum``.
		literal_types: A ``type`` is written next to ``enum`` and ``const``; without it, the
			values alone say the type (as Anthropic's SDK writes them: fewer bytes per request).
		type_lists: A list of types (``["string", "null"]``) may be sent; if not, it is written
			as ``anyOf`` with one branch per type.
		enum_types: JSON types an ``enum`` (or ``const``) value may have.
		simple_patterns: ``pattern`` is sent when it is a simple regular expression (no
			lookaround, backreference, word boundary or other ``(?...)`` group than ``(?:``), even
			though ``keywords`` lacks it. In every dialect, a pattern that is not simple is
			dropped and checked by the loop.
		recursive_refs: A recursive ``$ref`` is sent as a reference into the root's ``$defs``.
		tuples: ``prefixItems`` is accepted: a tuple whose further items have a schema (or none
			allowed, sent as ``maxItems``) has a form.
		max_min_items: The largest ``minItems`` accepted; larger ones are lowered to it.
		max_properties: Object properties in the whole schema.
		max_depth: Object and array levels on the longest path (the root is level 1).
		max_enum_values: ``enum`` values in the whole schema.
		max_string_length: Characters of all property names and ``enum``/``const`` values.
		long_enum: ``(values, characters)``: one enum with more values than the first may hold
			at most this many characters.
		max_optional: Properties not listed in ``required``, in the whole schema.
		max_unions: Sub-schemas with ``anyOf`` or a list of types, in the whole schema.
		max_size: Bytes of the schema as compact JSON.
		source: Where the rules and limits come from (page and date checked).
	"""

	name: str
	keywords: frozenset[str] = frozenset({"description"})
	formats: frozenset[str] = frozenset()
	closed_objects: bool = True
	require_all: bool = False
	require_defaults: bool = False
	const_as_enum: bool = False
	literal_types: bool = True
	type_lists: bool = True
	enum_types: frozenset[str] = _PRIMITIVE_TYPES
	simple_patterns: bool = False
	recursive_refs: bool = False
	tuples: bool = False
	max_min_items: int | None = None
	max_properties: int | None = None
	max_depth: int | None = None
	max_enum_values: int | None = None
	max_string_length: int | None = None
	long_enum: tuple[int, int] | None = None
	max_optional: int | None = None
	max_unions: int | None = None
	max_size: int | None = None
	source: str = ""

	def violations(self, schema: Any) -> tuple[str, ...]:
		"""The limits a schema passes, one line each (empty when it fits).

		Args:
			schema: A fitted schema.
		"""
		return self._over(measure(schema, long_enum_values=self._long_values()))

	def _long_values(self) -> int:
		return self.long_enum[0] if self.long_enum else 1 << 30

	def _over(self, m: Metrics) -> tuple[str, ...]:
		checks = [
			(m.properties, self.max_properties, "object properties"),
			(m.depth, self.max_depth, "levels of nesting"),
			(m.enum_values, self.max_enum_values, "enum values"),
			(m.string_length, self.max_string_length, "characters of names and enum values"),
			(m.optional, self.max_optional, "optional properties"),
			(m.unions, self.max_unions, "union-typed properties"),
			(m.size, self.max_size, "bytes"),
			(m.long_enum, self.long_enum[1] if self.long_enum else None, "characters in one enum"),
		]
		return tuple(
			f"{value} {what} (the {self.name} limit is {limit})"
			for value, limit, what in checks
			if limit is not None and value > limit
		)


# the fitter ---------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)  # never compared: no __eq__ to generate
class Fitter:
	"""Fits sub-schemas to one dialect; one instance per part fitted (it collects `relaxed`).

	Args:
		dialect: The dialect.
		relaxed: Assertion keywords dropped so far (the loop still checks them).
		describe_defaults: Whether a default that became a requirement is said in the
			description (not for the commands' own fields: the prompt says those).
		absent_differs: Optional properties that accept null mean something different absent
			and null (a tool's input, sent as given: Notion's ``"icon": null`` and Shopify's
			``compareAtPrice: null`` clear a field); where every property must be required they
			have no form, since required and nullable would make null stand for both.
	"""

	dialect: SchemaDialect
	relaxed: set[str] = field(default_factory=set)
	describe_defaults: bool = True
	absent_differs: bool = False
	defs: dict[str, dict[str, Any]] = field(default_factory=dict)
	"""Recursive definitions, for the root ``$defs`` of the schema sent (``recursive_refs``)."""
	prefix: str = ""
	"""Starts the names of `defs` (the tool's handle), so that they read as the tool's."""
	taken: set[str] = field(default_factory=set)
	"""Names of definitions that go to the same root's ``$defs``, shared by the fitters of one
	schema sent (each tool's): a handle's name may read as another's once made ``[A-Za-z0-9_-]``
	and cut to 60 characters (``a.b`` and ``a_b``), and a clash would give one tool the other's."""
	_recursing: dict[str, _Open] = field(default_factory=dict)
	"""The definitions being fitted, by ``$ref``."""
	_levels: int = 0
	"""Objects and arrays entered on the path being fitted (a recursion must pass through one)."""

	def fit(self, schema: Any, where: str = "") -> tuple[dict[str, Any], Repair | None]:
		"""Fit a whole schema whose ``$ref``s resolve against itself.

		Raises:
			NoStrictForm: Some part of it has no form in the dialect, or it is no valid JSON
				Schema (a tool's schema no one checked: ``"required": 2``), which has none.
		"""
		where = where or "(root)"
		from openmolt_core._support.metaschema import check_schema

		if not nests_within(schema, 3 * _MAX_NESTING):  # the check below recurses
			raise NoStrictForm(f"{where}: nested more than {_MAX_NESTING} levels")
		problems = check_schema(schema)
		if problems:
			raise NoStrictForm(f"{where}: not a valid JSON Schema ({problems[0]})")
		if self.dialect.recursive_refs and isinstance(schema, dict):
			fitted, repair, _ = self._definition("#", schema, schema, (), where, 0)
			return fitted, repair
		fitted, repair, _ = self.node(schema, schema, (), where, 0)
		return fitted, repair

	def _definition(
		self, ref: str, target: Any, root: Any, refs: tuple[str, ...], where: str, nesting: int
	) -> tuple[dict[str, Any], Repair | None, Any]:
		"""Fit a ``$ref``'s target; when it refers to itself, as a definition in `defs`."""
		name = _def_name(
			f"{self.prefix}{where}", ref, self.defs.keys() | self.taken, self._recursing
		)
		holder = RefRepair()
		entry = self._recursing[ref] = _Open(name, holder, target, self._levels)
		try:
			fitted, repair, default = self.node(target, root, (*refs, ref), where, nesting + 1)
		finally:
			del self._recursing[ref]
		if not entry.used:
			return fitted, repair, default
		self.defs[name] = fitted
		self.taken.add(name)
		holder.target = repair
		return {"$ref": f"#/$defs/{name}"}, (holder if repair is not None else None), default

	def _child(
		self, schema: Any, root: Any, refs: tuple[str, ...], where: str, nesting: int
	) -> tuple[dict[str, Any], Repair | None, Any]:
		"""`node` for a property's or an item's schema: one object or array level down."""
		self._levels += 1
		try:
			return self.node(schema, root, refs, where, nesting)
		finally:
			self._levels -= 1

	def node(
		self, schema: Any, root: Any, refs: tuple[str, ...], where: str, nesting: int
	) -> tuple[dict[str, Any], Repair | None, Any]:
		"""Fit one sub-schema: returns the fitted form, its repair and its ``default`` (or a marker)."""
		if nesting > _MAX_NESTING:
			raise NoStrictForm(f"{where}: nested more than {_MAX_NESTING} levels")
		if not isinstance(schema, dict):
			raise NoStrictForm(f"{where}: {json.dumps(schema)} is not a schema with a strict form")
		default = schema.get("default", _MISSING)
		if "$ref" in schema:
			ref = schema["$ref"]
			if ref in self._recursing:  # a definition that refers to itself (recursive_refs)
				entry = self._recursing[ref]
				if entry.levels == self._levels:
					# Reached again with no object or array in between ({"$ref": itself}, or an
					# anyOf of itself): no value ever ends it, and its repair would call itself.
					raise NoStrictForm(f"{where}: $ref {ref!r} refers to itself and nothing else")
				entry.used = True
				return {"$ref": f"#/$defs/{entry.name}"}, entry.holder, default
			if ref in refs or ref == "#":
				raise NoStrictForm(f"{where}: recursive $ref {ref!r}")
			target = _resolve(root, ref, where)
			rest = {k: v for k, v in schema.items() if k != "$ref"}
			merged = _merge([target, rest], where)
			if self.dialect.recursive_refs:
				fitted, repair, inner = self._definition(ref, merged, root, refs, where, nesting)
			else:
				fitted, repair, inner = self.node(merged, root, (*refs, ref), where, nesting + 1)
			return fitted, repair, default if default is not _MISSING else inner
		if "allOf" in schema:
			parts = [p if isinstance(p, dict) else {} for p in schema["allOf"]]
			rest = {k: v for k, v in schema.items() if k != "allOf"}
			resolved = [self._deref(p, root, refs, where) for p in parts]
			return self.node(_merge([rest, *resolved], where), root, refs, where, nesting + 1)
		if "oneOf" in schema:
			branches = [self._deref(b, root, refs, where) for b in schema["oneOf"]]
			if "anyOf" in schema or not _disjoint(branches):
				raise NoStrictForm(f"{where}: oneOf whose branches a value could match twice")
			schema = {**{k: v for k, v in schema.items() if k != "oneOf"}, "anyOf": branches}
		blocked = sorted(
			NO_FORM & schema.keys() - ({"prefixItems"} if self.dialect.tuples else set())
		)
		if blocked:
			raise NoStrictForm(f"{where}: {blocked[0]} has no strict form")
		if schema.get("nullable") is True:
			schema = {k: v for k, v in schema.items() if k != "nullable"}
			kind = schema.get("type")
			if isinstance(kind, str):
				schema["type"] = [kind, "null"]
			elif isinstance(kind, list):
				schema["type"] = [*kind, "null"]
			else:
				schema = {"anyOf": [schema, {"type": "null"}]}
		if "null" not in self.dialect.enum_types:
			schema = _null_apart(schema)
		if "boolean" not in self.dialect.enum_types:
			literal = "const" if "const" in schema else "enum"
			schema, loosened = _boolean_apart(schema)
			if loosened:  # one boolean sent as both: the loop refuses the other
				self.relaxed.add(literal)
		if "anyOf" in schema:
			fitted, repair = self._union(schema, root, refs, where, nesting)
			return fitted, repair, default
		fitted, repair = self._plain(schema, root, refs, where, nesting)
		return fitted, repair, default

	def _target(self, schema: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None, Any] | None:
		"""A fitted ``{"$ref": ...}``'s name, definition and source; None for another sub-schema.

		The definition is None while it is being fitted; the source is known only then.
		"""
		ref = schema.get("$ref")
		if not isinstance(ref, str):
			return None
		name = ref.rsplit("/", 1)[-1]
		source = next((e.source for e in self._recursing.values() if e.name == name), None)
		return name, self.defs.get(name), source

	def _match(self, schema: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> Match:
		"""`_match` of a fitted sub-schema, through its ``$ref``s into `defs`.

		A definition still being fitted is read from its source (`_source_match`); one met again
		on its own path adds nothing (``{"anyOf": [{"$ref": X}, ...]}`` inside X).
		"""
		from openmolt_core._support.schemarepairs import Match

		target = self._target(schema)
		if target is not None:
			name, definition, source = target
			if name in seen:
				return Match(frozenset())
			if definition is not None:
				return self._match(definition, seen | {name})
			return self._source_match(source)
		if "anyOf" in schema:
			kinds = frozenset().union(*(self._match(s, seen).kinds for s in schema["anyOf"]))
			return Match(kinds)
		return _match(schema)

	def _source_match(self, schema: Any) -> Match:
		"""A necessary test for values of a source sub-schema (a definition not fitted yet).

		Its fitted form keeps its type and its ``required`` (every property, where the dialect
		requires all) and, in a dialect that closes objects, its properties as the only keys; a
		schema whose kinds are not plain to see (a union, a reference, ``nullable``) lets every
		value through.
		"""
		from openmolt_core._support.schemarepairs import Match

		hidden = {"anyOf", "oneOf", "allOf", "$ref", "nullable"}
		if not isinstance(schema, dict) or hidden & schema.keys():
			return Match(_JSON_TYPES)
		try:
			found = _match(schema)
		except (TypeError, ValueError):  # not read yet, so not checked yet: it has no form
			return Match(_JSON_TYPES)
		if not found.kinds:
			return Match(_JSON_TYPES)
		props = schema.get("properties")
		if "object" not in found.kinds or not isinstance(props, dict):
			return found
		names = frozenset(str(p) for p in props)
		required = found.required | names if self.dialect.require_all else found.required
		allowed = names if self.dialect.closed_objects else found.allowed
		return Match(found.kinds, required, allowed)

	def _accepts_null(self, schema: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> bool:
		"""`accepts_null` of a fitted sub-schema, through its ``$ref``s into `defs`.

		A definition still being fitted accepts null when its source says so plainly.
		"""
		target = self._target(schema)
		if target is not None:
			name, definition, source = target
			if name in seen:
				return False
			if definition is None:
				return _plainly_nullable(source, 0)
			return self._accepts_null(definition, seen | {name})
		if accepts_null(schema):
			return True
		return any(self._accepts_null(s, seen) for s in schema.get("anyOf", ()))

	def _deref(self, schema: Any, root: Any, refs: tuple[str, ...], where: str) -> dict[str, Any]:
		"""A branch with its top-level ``$ref`` resolved (to read its tags or merge it)."""
		if not isinstance(schema, dict):
			raise NoStrictForm(f"{where}: {json.dumps(schema)} is not a schema with a strict form")
		seen = refs
		while "$ref" in schema:
			ref = schema["$ref"]
			if ref in seen or ref == "#":
				raise NoStrictForm(f"{where}: recursive $ref {ref!r}")
			seen = (*seen, ref)
			rest = {k: v for k, v in schema.items() if k != "$ref"}
			schema = _merge([_resolve(root, ref, where), rest], where)
		out: dict[str, Any] = schema
		return out

	def _union(
		self, schema: dict[str, Any], root: Any, refs: tuple[str, ...], where: str, nesting: int
	) -> tuple[dict[str, Any], Repair | None]:
		branches = schema["anyOf"]
		if not isinstance(branches, list) or not branches:
			raise NoStrictForm(f"{where}: empty anyOf")
		rest = {
			k: v for k, v in schema.items() if k not in ("anyOf", "default", "description", "title")
		}
		fitted: list[dict[str, Any]] = []
		repairs: list[Repair | None] = []
		for i, branch in enumerate(branches):
			part = _merge([rest, branch], where) if rest and isinstance(branch, dict) else branch
			f, r, _ = self.node(part, root, refs, f"{where}.anyOf[{i}]", nesting + 1)
			fitted.append(f)
			repairs.append(r)
		out: dict[str, Any] = {"anyOf": fitted}
		self._annotate(schema, out)
		if all(r is None for r in repairs):
			return out, None
		from openmolt_core._support.schemarepairs import UnionRepair

		matches = [self._match(f) for f in fitted]
		for i, (mi, ri) in enumerate(zip(matches, repairs, strict=True)):
			for mj, rj in zip(matches[i + 1 :], repairs[i + 1 :], strict=True):
				if ri != rj and mi.overlaps(mj):
					raise NoStrictForm(f"{where}: anyOf branches a value could match twice")
		return out, UnionRepair(tuple(zip(matches, repairs, strict=True)))

	def _annotate(self, schema: Mapping[str, Any], out: dict[str, Any]) -> None:
		if "description" in self.dialect.keywords and isinstance(schema.get("description"), str):
			out["description"] = schema["description"]

	def _plain(
		self, schema: dict[str, Any], root: Any, refs: tuple[str, ...], where: str, nesting: int
	) -> tuple[dict[str, Any], Repair | None]:
		d = self.dialect
		kinds = _types(schema)
		if not kinds:
			raise NoStrictForm(f"{where}: any value is allowed (no type, enum or const)")
		unknown = [k for k in kinds if k not in _JSON_TYPES]
		if unknown:
			raise NoStrictForm(f"{where}: unknown type {unknown[0]!r}")
		out: dict[str, Any] = {}
		literal = "enum" in schema or "const" in schema
		if ("type" in schema or len(kinds) == 1) and not (literal and not d.literal_types):
			# A type inferred from mixed literals is left out: the enum says it, and a list of
			# types would count as a union where unions are limited.
			out["type"] = kinds[0] if len(kinds) == 1 else kinds
		self._annotate(schema, out)
		values = (
			schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
		)
		if values is not None and "type" in schema and isinstance(values, list):
			# A value its type refuses never validates (an OpenAPI 3.0 nullable enum lists
			# null beside "type": "string"): sent, the model could write it (a dialect without
			# a type beside literals sends the enum alone), and the loop would refuse the reply.
			values = [v for v in values if _typed_as(v, kinds)]
			if not values:
				raise NoStrictForm(f"{where}: no enum or const value has the type {schema['type']}")
		if values is not None:
			self._literals(values, where)
			if "const" in schema and not d.const_as_enum:
				out["const"] = schema["const"]
			else:
				out["enum"] = list(values)
		form = schema.get("format")
		if isinstance(form, str) and form in d.formats:
			out["format"] = form
		elif isinstance(form, str) and _checked_format(form):
			self.relaxed.add("format")  # the provider lets any string through; the loop does not
		# In the schema's own key order, never a set's: the request bytes (and the provider's
		# prompt cache) must not depend on PYTHONHASHSEED.
		for key in [k for k in schema if k in ASSERTIONS]:
			value = schema[key]
			if key == "pattern":
				# Constrained decoders compile a pattern into an automaton: lookaround and
				# backreferences have none, and the API would refuse the whole request.
				known = (key in d.keywords or d.simple_patterns) and simple_pattern(value)
			else:
				known = key in d.keywords and (not isinstance(value, bool) or key == "uniqueItems")
			if not known:
				self.relaxed.add(key)
				continue
			if key == "minItems" and d.max_min_items is not None and value > d.max_min_items:
				self.relaxed.add(key)
				value = d.max_min_items
			out[key] = value
		repair: Repair | None = None
		if "object" in kinds:
			repair = self._object(schema, out, root, refs, where, nesting)
		if "array" in kinds and "prefixItems" in schema:
			if repair is not None:
				raise NoStrictForm(f"{where}: an object-or-array value needs two repairs")
			self._tuple(schema, out, root, refs, where, nesting)
		elif "array" in kinds:
			if "items" not in schema or not isinstance(schema["items"], dict):
				raise NoStrictForm(f"{where}: array items allow any value")
			items, item_repair, _ = self._child(
				schema["items"], root, refs, f"{where}[]", nesting + 1
			)
			out["items"] = items
			if item_repair is not None:
				if repair is not None:
					raise NoStrictForm(f"{where}: an object-or-array value needs two repairs")
				from openmolt_core._support.schemarepairs import ArrayRepair

				repair = ArrayRepair(item_repair)
		if not d.type_lists and isinstance(out.get("type"), list):
			out = _split(out)  # the repair checks the value's kind itself, so it still applies
		return out, repair

	def _tuple(
		self,
		schema: dict[str, Any],
		out: dict[str, Any],
		root: Any,
		refs: tuple[str, ...],
		where: str,
		nesting: int,
	) -> None:
		"""``prefixItems`` where the dialect takes it; an item that needs a repair has no form."""
		prefix = schema["prefixItems"]
		if not isinstance(prefix, list) or not prefix:
			raise NoStrictForm(f"{where}: prefixItems is not a list of schemas")
		fitted = []
		for i, sub in enumerate(prefix):
			item, item_repair, _ = self._child(sub, root, refs, f"{where}[{i}]", nesting + 1)
			if item_repair is not None:
				raise NoStrictForm(f"{where}[{i}]: a tuple item that needs a repair")
			fitted.append(item)
		out["prefixItems"] = fitted
		rest = schema.get("items")
		most = schema.get("maxItems")
		if rest is None and type(most) is int and most <= len(prefix):
			rest = False  # pydantic's tuple[int, str]: no items key, maxItems the tuple's length
		if rest is False:
			if "maxItems" not in self.dialect.keywords:
				raise NoStrictForm(f"{where}: a closed tuple needs maxItems")
			out["maxItems"] = min(len(prefix), out.get("maxItems", len(prefix)))
		elif isinstance(rest, dict):
			item, item_repair, _ = self._child(rest, root, refs, f"{where}[]", nesting + 1)
			if item_repair is not None:
				raise NoStrictForm(f"{where}[]: tuple items that need a repair")
			out["items"] = item
		else:
			raise NoStrictForm(f"{where}: items after the tuple allow any value")

	def _literals(self, values: Any, where: str) -> None:
		if not isinstance(values, list) or not values:
			raise NoStrictForm(f"{where}: empty enum")
		for value in values:
			kind = _PRIMITIVES.get(type(value))
			if kind is None:
				raise NoStrictForm(
					f"{where}: enum value {json.dumps(value)[:40]} is not a primitive"
				)
			if kind not in self.dialect.enum_types and not (
				kind == "integer" and "number" in self.dialect.enum_types
			):
				raise NoStrictForm(f"{where}: {self.dialect.name} enums cannot hold a {kind}")
		long = self.dialect.long_enum
		if long is not None and len(values) > long[0]:
			total = sum(_value_length(v) for v in values)
			if total > long[1]:
				raise NoStrictForm(
					f"{where}: {len(values)} enum values of {total} characters (limit {long[1]})"
				)

	def _object(
		self,
		schema: dict[str, Any],
		out: dict[str, Any],
		root: Any,
		refs: tuple[str, ...],
		where: str,
		nesting: int,
	) -> Repair | None:
		d = self.dialect
		props = schema.get("properties")
		extra = schema.get("additionalProperties")
		if props is not None and not isinstance(props, dict):
			raise NoStrictForm(f"{where}: properties is not an object")
		if not props and extra is not False and not isinstance(extra, dict):
			# {"type": "object"} and {"properties": {}} mean "any object": closing it would let
			# the model write only {}; no dialect has a form for "any keys, any values".
			raise NoStrictForm(f"{where}: an object without properties (free-form)")
		if d.closed_objects and extra not in (None, False):
			raise NoStrictForm(f"{where}: additionalProperties other than false")
		props = props or {}
		required = schema.get("required", [])
		if not isinstance(required, list):
			raise NoStrictForm(f"{where}: required is not a list")
		# A required name the object does not declare: a closed object could not hold it, and
		# Gemini refuses the request ("required[0]: property is not defined"), open as it is.
		missing = [r for r in required if r not in props]
		if missing:
			raise NoStrictForm(f"{where}: required {missing[0]!r} is not among the properties")
		fitted: dict[str, Any] = {}
		names: list[str] = []
		repairs: list[tuple[str, bool, Repair | None]] = []
		for name, sub in props.items():
			child, repair, default = self._child(
				sub, root, refs, f"{where}.{name}" if where != "(root)" else name, nesting + 1
			)
			drop_null = False
			if name in required:
				names.append(name)
			elif default is not _MISSING and (d.require_all or d.require_defaults):
				child = self._with_default(child, default)
				names.append(name)
			elif d.require_all:
				names.append(name)
				if not self._accepts_null(child):
					child, drop_null = nullable(child, type_lists=d.type_lists), True
				elif self.absent_differs:
					# Absent, null and a value are three answers (a tool sends null to clear a
					# field); required and nullable leaves two, so "leave it" would read as null.
					raise NoStrictForm(
						f"{where}.{name}: optional and nullable (null clears it), which has no "
						"form where every property is required"
					)
			fitted[str(name)] = child
			if drop_null or repair is not None:
				repairs.append((str(name), drop_null, repair))
		out["properties"] = fitted
		out["required"] = names + [r for r in missing]
		if d.closed_objects or extra is False:
			out["additionalProperties"] = False
		elif isinstance(extra, dict):
			out["additionalProperties"], extra_repair, _ = self._child(
				extra, root, refs, f"{where}.*", nesting + 1
			)
			if extra_repair is not None:
				raise NoStrictForm(f"{where}: additionalProperties that need a repair")
		return ObjectRepair(tuple(repairs)) if repairs else None

	def _with_default(self, schema: dict[str, Any], default: Any) -> dict[str, Any]:
		"""Say the default in the description: the property is now required, ``default`` is gone."""
		if "description" not in self.dialect.keywords or not self.describe_defaults:
			return schema
		note = f"Default: {json.dumps(default, ensure_ascii=False)[:80]}."
		if "$ref" in schema:
			# No keyword may stand beside a $ref (OpenAI's SDK unravels one that has a sibling):
			# the note goes on a union of the one reference.
			return {"anyOf": [schema], "description": note}
		text = schema.get("description")
		return {**schema, "description": f"{text} {note}" if text else note}


def _checked_format(form: str) -> bool:
	"""Whether the loop's validator rejects a string that does not fit this ``format``."""
	from openmolt_core._support.jsonschema import CHECKED_FORMATS  # a format dropped: rare

	return form in CHECKED_FORMATS


def _def_name(where: str, ref: str, defs: Set[str], busy: Mapping[str, _Open]) -> str:
	"""A ``$defs`` name for a recursive definition: readable, unique, ``[A-Za-z0-9_-]`` only."""
	tail = "root" if ref == "#" else ref.rsplit("/", 1)[-1]
	base = re.sub(r"[^A-Za-z0-9_-]+", "_", f"{where}_{tail}").strip("_")[:60] or "def"
	taken = set(defs) | {entry.name for entry in busy.values()}
	name, n = base, 1
	while name in taken:
		n += 1
		name = f"{base}_{n}"
	return name


_NOT_SIMPLE = LazyPattern(r"\\[1-9bBk]|\(\?(?!:)")
"""Backreferences, word boundaries, named references and every ``(?...)`` group but ``(?:``."""


def simple_pattern(pattern: Any) -> bool:
	"""Whether a ``pattern`` is a simple regular expression (see ``SchemaDialect.simple_patterns``).

	Args:
		pattern: The keyword's value.
	"""
	if not isinstance(pattern, str) or _NOT_SIMPLE().search(pattern):
		return False
	try:
		re.compile(pattern)
	except (re.error, RecursionError, OverflowError):
		return False
	return True


def _resolve(root: Any, ref: Any, where: str) -> dict[str, Any]:
	if not isinstance(ref, str) or not ref.startswith("#/"):
		raise NoStrictForm(f"{where}: $ref {ref!r} is not local")
	node = root
	for part in ref[2:].split("/"):
		part = part.replace("~1", "/").replace("~0", "~")
		if not isinstance(node, dict) or part not in node:
			raise NoStrictForm(f"{where}: $ref {ref!r} does not resolve")
		node = node[part]
	if not isinstance(node, dict):
		raise NoStrictForm(f"{where}: $ref {ref!r} is not a schema")
	target: dict[str, Any] = node
	return target
