"""Validate data against a JSON Schema with pydantic-core.

Tools and output schemas written as plain data (JSON configs, declarative integrations) carry JSON
Schema. Rather than add a JSON Schema library to the core (the design card keeps its dependencies
to a fixed list), we translate the schema once into a pydantic-core schema and let pydantic-core's
Rust validator do the work: fast, precise error locations, one validation engine for everything.

Every assertion keyword of JSON Schema 2020-12's applicator and validation vocabularies is
enforced (`ENFORCED`): ``type`` (one or a list), ``enum`` and ``const`` (JSON equality: ``1`` and
``1.0`` are equal, ``true`` and ``1`` are not), ``properties``, ``required``,
``additionalProperties``, ``patternProperties``, ``propertyNames``, ``minProperties``,
``maxProperties``, ``dependentRequired``, ``dependentSchemas`` (and draft 7's ``dependencies``),
``items``, ``prefixItems``, ``contains``, ``minContains``, ``maxContains``, ``minItems``,
``maxItems``, ``uniqueItems``, ``minLength``, ``maxLength``, ``pattern``, ``minimum``,
``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``, ``anyOf``, ``oneOf``
(exactly one), ``allOf``, ``not``, ``if``/``then``/``else``, ``$ref`` to a JSON pointer in the same
document (``#``, ``#/$defs/...``, ``#/definitions/...``), and OpenAPI's ``nullable``. Type-specific
keywords apply to values of their type only, as the draft says. tests/core/test_jsonschema_suite.py
runs the official JSON-Schema-Test-Suite's cases for these keywords.

Not enforced (`NOT_ENFORCED`): ``unevaluatedProperties``/``unevaluatedItems``, ``$dynamicRef``,
``$id``/``$anchor`` references and remote ``$ref`` (a ``$ref`` that does not resolve accepts any
value), and ``format`` beyond `CHECKED_FORMATS`. Annotations (``description``, ``examples``,
``default``) never reject data.

``format`` is enforced for the formats tools rely on (`CHECKED_FORMATS`: ``uri``, ``date-time``,
``date``, ``email``, ``uuid``, ``regex``), so the model hears our message rather than the service's
400 (an embed URL that is not a URL); other formats stay annotations, as JSON Schema 2020-12's
default says.

Regular expressions (``pattern``, the keys of ``patternProperties``) run on Rust's engine when it
accepts them, else on Python's ``re`` (lookaround, backreferences); one that neither accepts is
skipped with a logged warning when the validator is built, so a schema from an MCP server or an
OpenAPI document never ends a run. Building a validator never raises for a schema's content.

A few transforms of a schema live here too: its local ``$ref``s inlined (`inline_refs`), its
definitions moved to another root (`lift_defs`), and a small value of its shape (`example_value`).
"""

from __future__ import annotations

import logging
import math
import operator
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote

from pydantic_core import (
	PydanticCustomError,
	SchemaError,
	SchemaValidator,
	ValidationError,
	core_schema,
)

from openmolt_core._support import LazyPattern
from openmolt_core._support.jsonsafe import canonical

__all__ = [
	"CHECKED_FORMATS",
	"ENFORCED",
	"NOT_ENFORCED",
	"JsonSchemaValidator",
	"ValidationError",
	"example_value",
	"format_errors",
	"inline_refs",
	"lift_defs",
	"unchecked_patterns",
]

log: logging.Logger = logging.getLogger("openmolt")

ENFORCED = frozenset(
	"type enum const properties required additionalProperties patternProperties propertyNames "
	"minProperties maxProperties dependentRequired dependentSchemas dependencies items prefixItems "
	"contains minContains maxContains minItems maxItems uniqueItems minLength maxLength pattern "
	"minimum maximum exclusiveMinimum exclusiveMaximum multipleOf anyOf oneOf allOf not if then "
	"else $ref $defs definitions nullable format".split()
)
"""The keywords the validator enforces (``format``: only `CHECKED_FORMATS`)."""

NOT_ENFORCED = frozenset(
	"unevaluatedProperties unevaluatedItems $dynamicRef $recursiveRef $anchor $id".split()
)
"""Keywords of JSON Schema 2020-12 the validator ignores (they never reject a value)."""

_KINDS = ("null", "boolean", "integer", "number", "string", "array", "object")
_OBJECT_KEYS = frozenset(
	"properties required additionalProperties patternProperties propertyNames minProperties "
	"maxProperties dependentRequired dependentSchemas dependencies".split()
)
_ARRAY_KEYS = frozenset("items prefixItems contains minItems maxItems uniqueItems".split())
_STRING_KEYS = frozenset("minLength maxLength pattern format".split())
_NUMBER_KEYS = frozenset("minimum maximum exclusiveMinimum exclusiveMaximum multipleOf".split())


_MOST = 1 << 62
"""Counts past this are capped (pydantic-core's lengths are machine integers)."""


def _count(value: Any) -> int | None:
	"""A length or count keyword's value as an int (``2.0`` is 2), or None when it is not one."""
	if isinstance(value, bool) or not isinstance(value, int | float):
		return None
	if isinstance(value, float) and not value.is_integer():
		return None
	return min(max(int(value), 0), _MOST)


def _kind(value: Any) -> str:
	"""The JSON type of a Python value (``integer`` for a float with no fraction too)."""
	if value is None:
		return "null"
	if isinstance(value, bool):
		return "boolean"
	if isinstance(value, int):
		return "integer"
	if isinstance(value, float):
		return "integer" if value.is_integer() else "number"
	if isinstance(value, str):
		return "string"
	if isinstance(value, list | tuple):
		return "array"
	if isinstance(value, dict):
		return "object"
	return "other"


# regular expressions ---------------------------------------------------------------------------


class _Regex:
	"""One regular expression, compiled for the engine that accepts it (or None: skipped)."""

	__slots__ = ("engine", "pattern", "python", "rust")

	def __init__(self, pattern: str, where: str) -> None:
		self.pattern = pattern
		self.engine: str | None = None
		self.python: re.Pattern[str] | None = None
		self.rust: SchemaValidator | None = None
		try:
			self.rust = SchemaValidator(core_schema.str_schema(pattern=pattern))
			self.engine = "rust-regex"
		except SchemaError:
			pass
		try:
			self.python = re.compile(pattern)
			self.engine = self.engine or "python-re"
		except (re.error, RecursionError, OverflowError):
			if self.engine is None:
				log.warning(
					"JSON Schema %s: the regular expression %r is not supported by either regex "
					"engine, so it is not checked; rewrite it without that construct",
					where,
					pattern[:200],
				)

	def search(self, text: str) -> bool:
		"""Whether the expression matches somewhere in ``text`` (never, when it is skipped)."""
		if self.python is not None:
			return self.python.search(text) is not None
		return self.rust is not None and bool(self.rust.isinstance_python(text))


def unchecked_patterns(schema: Any, where: str) -> list[str]:
	"""The regular expressions of a schema that no engine can check, each logged as a warning.

	Called when tools from outside are bound (an MCP server's list, an imported OpenAPI
	document), so a pattern the loop will skip is said then, not at the tool's first call;
	nothing here raises.

	Args:
		schema: A JSON Schema (``pattern`` values and ``patternProperties`` keys, at any depth).
		where: The tool, for the warning.

	Returns:
		The skipped patterns.
	"""
	skipped: list[str] = []
	stack: list[tuple[Any, int]] = [(schema, 0)]
	while stack:
		node, depth = stack.pop()
		if depth > 64:
			continue  # the validator's own depth cap refuses the rest
		if isinstance(node, list):
			stack.extend((item, depth + 1) for item in node)
			continue
		if not isinstance(node, dict):
			continue
		found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
		props = node.get("patternProperties")
		if isinstance(props, dict):
			found += [k for k in props if isinstance(k, str)]
		for pattern in found:
			if _Regex(pattern, where).engine is None:
				skipped.append(pattern)
		stack.extend(
			(value, depth + 1) for value in node.values() if isinstance(value, dict | list)
		)
	return skipped


def _regex_format(value: str) -> str:
	try:
		re.compile(value)
	except (re.error, RecursionError, OverflowError):
		raise _fails("regex", "a valid regular expression") from None
	return value


# JSON equality -----------------------------------------------------------------------------------


def _multiple(value: float, step: float) -> bool:
	if isinstance(value, int) and isinstance(step, int):
		return value % step == 0
	try:
		return Decimal(repr(value)) % Decimal(repr(step)) == 0
	except (InvalidOperation, ValueError):
		return False


# the translation --------------------------------------------------------------------------------


class _Build:
	"""What all validators of one schema share: its root, and compiled sub-schemas."""

	def __init__(self, root: Any) -> None:
		self.root = root
		self.subs: dict[int, _Sub] = {}
		self.pending: list[_Sub] = []
		self.regexes: dict[str, _Regex] = {}

	def sub(self, schema: Any) -> _Sub:
		found = self.subs.get(id(schema))
		if found is None:
			found = self.subs[id(schema)] = _Sub(schema, self)
			self.pending.append(found)
		return found

	def regex(self, pattern: str, where: str) -> _Regex:
		found = self.regexes.get(pattern)
		if found is None:
			found = self.regexes[pattern] = _Regex(pattern, where)
		return found

	def resolve(self, ref: str) -> Any:
		"""The sub-schema a local ``$ref`` points to, or None."""
		if ref == "#":
			return self.root
		if not ref.startswith("#/"):
			return None
		node = self.root
		for part in unquote(ref[2:]).split("/"):
			part = part.replace("~1", "/").replace("~0", "~")
			if isinstance(node, dict) and part in node:
				node = node[part]
			elif (
				isinstance(node, list)
				and part.isascii()
				and part.isdigit()
				and int(part) < len(node)
			):
				node = node[int(part)]
			else:
				return None
		return node

	def finish(self) -> None:
		"""Compile every sub-schema the checks need (each compile may ask for more)."""
		while self.pending:
			self.pending.pop().compile()


class _Sub:
	"""A sub-schema compiled on its own, for checks that ask "is this valid?" (not, oneOf...)."""

	__slots__ = ("build", "schema", "validator")

	def __init__(self, schema: Any, build: _Build) -> None:
		self.schema = schema
		self.build = build
		self.validator: SchemaValidator | None = None

	def compile(self) -> None:
		self.validator = _compile(self.schema, self.build)

	def valid(self, value: Any) -> bool:
		if self.validator is None:
			self.compile()
		assert self.validator is not None
		return bool(self.validator.isinstance_python(value))

	def validate(self, value: Any, at: str | int) -> Any:
		"""The value, validated (and converted); an error says where (``at``) and why."""
		if self.validator is None:
			self.compile()
		assert self.validator is not None
		try:
			return self.validator.validate_python(value)
		except ValidationError as exc:
			first = exc.errors(include_url=False)[0]
			loc = ".".join(str(p) for p in (at, *first["loc"]) if not _is_union_tag(p))
			raise PydanticCustomError(
				"value", "{loc}: {msg}", {"loc": loc, "msg": first["msg"]}
			) from None


def _compile(schema: Any, build: _Build) -> SchemaValidator:
	translator = _Translator(build)
	root = translator.translate(schema, "(root)")
	if translator.used:
		root = core_schema.definitions_schema(root, list(translator.used.values()))
	return SchemaValidator(root)


def _chain(steps: list[core_schema.CoreSchema]) -> core_schema.CoreSchema:
	if not steps:
		return core_schema.any_schema()
	return steps[0] if len(steps) == 1 else core_schema.chain_schema(steps)


def _check(function: Callable[[Any], Any]) -> core_schema.CoreSchema:
	return core_schema.no_info_plain_validator_function(function)


class _Translator:
	def __init__(self, build: _Build) -> None:
		self.build = build
		self.used: dict[str, core_schema.CoreSchema] = {}

	def translate(self, schema: Any, where: str) -> core_schema.CoreSchema:
		if schema is True or schema is None or schema == {}:
			return core_schema.any_schema()
		if schema is False:
			return _check(_reject)
		if not isinstance(schema, dict):
			return core_schema.any_schema()
		steps: list[core_schema.CoreSchema] = []
		ref = schema.get("$ref")
		if isinstance(ref, str):
			steps.append(self._ref(ref, where))
		if "const" in schema:
			steps.append(_literals([schema["const"]]))
		if isinstance(schema.get("enum"), list):
			steps.append(_literals(schema["enum"]))
		typed = self._typed_part(schema, where)
		if typed is not None:
			steps.append(typed)
		if isinstance(schema.get("anyOf"), list) and schema["anyOf"]:
			choices: list[Any] = [self.translate(s, where) for s in schema["anyOf"]]
			steps.append(core_schema.union_schema(choices, mode="left_to_right"))
		if isinstance(schema.get("oneOf"), list) and schema["oneOf"]:
			choices = [self.translate(s, where) for s in schema["oneOf"]]
			steps.append(core_schema.union_schema(choices, mode="left_to_right"))
			steps.append(_check(_one_of([self.build.sub(s) for s in schema["oneOf"]])))
		if isinstance(schema.get("allOf"), list):
			steps.extend(self.translate(s, where) for s in schema["allOf"])
		if "not" in schema:
			steps.append(_check(_not(self.build.sub(schema["not"]))))
		if "if" in schema and ("then" in schema or "else" in schema):
			then = self.build.sub(schema["then"]) if "then" in schema else None
			other = self.build.sub(schema["else"]) if "else" in schema else None
			steps.append(_check(_if(self.build.sub(schema["if"]), then, other)))
		inner = _chain(steps)
		if schema.get("nullable") is True:
			inner = core_schema.nullable_schema(inner)
		return inner

	def _ref(self, ref: str, where: str) -> core_schema.CoreSchema:
		name = ref
		if name not in self.used:
			target = self.build.resolve(ref)
			if target is None:
				return core_schema.any_schema()
			self.used[name] = core_schema.any_schema()  # a placeholder breaks cycles
			translated = dict(self.translate(target, f"{where} ({ref})"))
			translated["ref"] = name  # every core schema may carry a ref
			self.used[name] = translated
		return core_schema.definition_reference_schema(name)

	def _typed_part(self, schema: dict[str, Any], where: str) -> core_schema.CoreSchema | None:
		kind = schema.get("type")
		if isinstance(kind, str):
			kinds = [kind]
		elif isinstance(kind, list):
			kinds = [str(k) for k in kind]
		else:
			kinds = []
		if kinds:
			variants: list[Any] = [self._typed(schema, k, where) for k in kinds if k != "null"]
			if "null" in kinds:
				variants.append(core_schema.none_schema())
			only: core_schema.CoreSchema = variants[0]
			return only if len(variants) == 1 else core_schema.union_schema(variants)
		keys = schema.keys()
		wanted = {
			"object": bool(_OBJECT_KEYS & keys),
			"array": bool(_ARRAY_KEYS & keys),
			"string": bool(_STRING_KEYS & keys),
			"number": bool(_NUMBER_KEYS & keys),
		}
		if not any(wanted.values()):
			return None
		# Without a type, type-specific keywords apply to values of their type only.
		choices: dict[str, Any] = {k: core_schema.any_schema() for k in (*_KINDS, "other")}
		for k, want in wanted.items():
			if want:
				choices[k] = self._typed(schema, k, where)
		choices["integer"] = choices["number"]
		return core_schema.tagged_union_schema(choices, discriminator=_kind)

	def _typed(self, schema: dict[str, Any], kind: str, where: str) -> core_schema.CoreSchema:
		if kind == "string":
			return self._string(schema, where)
		if kind in ("integer", "number"):
			base = _integer(schema) if kind == "integer" else _number(schema)
			step = schema.get("multipleOf")
			if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
				return core_schema.no_info_after_validator_function(_multiple_of(step), base)
			return base
		if kind == "boolean":
			return core_schema.bool_schema(strict=True)
		if kind == "null":
			return core_schema.none_schema()
		if kind == "array":
			return self._array(schema, where)
		if kind == "object":
			return self._object(schema, where)
		return core_schema.any_schema()

	def _string(self, schema: dict[str, Any], where: str) -> core_schema.CoreSchema:
		pattern = schema.get("pattern")
		regex = self.build.regex(pattern, where) if isinstance(pattern, str) else None
		engine = regex.engine if regex is not None else None
		text = core_schema.str_schema(
			min_length=_count(schema.get("minLength")),
			max_length=_count(schema.get("maxLength")),
			pattern=pattern if engine else None,
			regex_engine=engine,  # type: ignore[arg-type]
			strict=True,
		)
		check = CHECKED_FORMATS.get(str(schema.get("format")))
		if check is None:
			return text
		return core_schema.no_info_after_validator_function(check, text)

	def _array(self, schema: dict[str, Any], where: str) -> core_schema.CoreSchema:
		prefix = schema.get("prefixItems")
		items = schema.get("items")
		if isinstance(items, list):  # draft 7 tuples: items is the prefix, additionalItems the rest
			prefix, items = items, schema.get("additionalItems", True)
		steps: list[core_schema.CoreSchema] = []
		if isinstance(prefix, list) and prefix:
			rest = self.build.sub(items) if items not in (None, True) else None
			steps.append(core_schema.list_schema(strict=True))
			steps.append(_check(_prefix([self.build.sub(p) for p in prefix], rest)))
		else:
			steps.append(
				core_schema.list_schema(
					self.translate(items, f"{where}[]")
					if isinstance(items, dict | bool)
					else core_schema.any_schema(),
					strict=True,
				)
			)
		low, high = _count(schema.get("minItems")), _count(schema.get("maxItems"))
		if low is not None or high is not None:
			steps.append(_check(_count_items(low, high)))
		if schema.get("uniqueItems") is True:
			steps.append(_check(_unique))
		if "contains" in schema:
			low = _count(schema.get("minContains", 1))
			high = _count(schema.get("maxContains"))
			steps.append(_check(_contains(self.build.sub(schema["contains"]), low, high)))
		return _chain(steps)

	def _object(self, schema: dict[str, Any], where: str) -> core_schema.CoreSchema:
		props: dict[str, Any] = schema.get("properties") or {}
		if not isinstance(props, dict):
			props = {}
		listed = schema.get("required")
		required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()
		extra = schema.get("additionalProperties", True)
		patterns = schema.get("patternProperties")
		steps: list[core_schema.CoreSchema] = []
		if isinstance(patterns, dict) and patterns:
			# Keys the properties do not name are checked here: pydantic sees an open object.
			compiled = [
				(self.build.regex(p, f"{where} patternProperties"), self.build.sub(s))
				for p, s in patterns.items()
			]
			fields = {
				str(name): core_schema.typed_dict_field(
					self.translate(sub, f"{where}.{name}"), required=name in required
				)
				for name, sub in props.items()
			}
			steps.append(core_schema.typed_dict_schema(fields, extra_behavior="allow"))
			rest = self.build.sub(extra) if extra is not True else None
			steps.append(_check(_pattern_props(compiled, set(props), rest)))
		elif extra is False:
			fields = {
				str(name): core_schema.typed_dict_field(
					self.translate(sub, f"{where}.{name}"), required=name in required
				)
				for name, sub in props.items()
			}
			steps.append(core_schema.typed_dict_schema(fields, extra_behavior="forbid"))
		elif not props:
			values = (
				self.translate(extra, f"{where}.*")
				if isinstance(extra, dict)
				else core_schema.any_schema()
			)
			steps.append(core_schema.dict_schema(core_schema.str_schema(), values, strict=True))
			if required:
				steps.append(_check(_required(sorted(required))))
		else:
			fields = {
				str(name): core_schema.typed_dict_field(
					self.translate(sub, f"{where}.{name}"), required=name in required
				)
				for name, sub in props.items()
			}
			extras_schema = self.translate(extra, f"{where}.*") if isinstance(extra, dict) else None
			steps.append(
				core_schema.typed_dict_schema(
					fields, extra_behavior="allow", extras_schema=extras_schema
				)
			)
		missing_props = sorted(required - set(props))
		if missing_props and props:
			steps.append(_check(_required(missing_props)))
		low, high = _count(schema.get("minProperties")), _count(schema.get("maxProperties"))
		if low is not None or high is not None:
			steps.append(_check(_count_props(low, high)))
		names = schema.get("propertyNames")
		if names is not None and names is not True:
			steps.append(_check(_names(self.build.sub(names))))
		dependent: dict[str, list[str]] = {}
		schemas: dict[str, _Sub] = {}
		for key in ("dependencies", "dependentRequired", "dependentSchemas"):
			table = schema.get(key)
			for name, value in (table if isinstance(table, dict) else {}).items():
				if isinstance(value, list):
					dependent[name] = [str(v) for v in value]
				else:
					schemas[name] = self.build.sub(value)
		if dependent or schemas:
			steps.append(_check(_dependent(dependent, schemas)))
		return _chain(steps)


# the checks ------------------------------------------------------------------------------------


def _literals(values: list[Any]) -> core_schema.CoreSchema:
	if not values:  # an empty enum: no value is allowed
		return _check(_reject)
	if all(isinstance(v, str) or v is None for v in values):
		return core_schema.literal_schema(list(values))
	allowed = {canonical(v) for v in values}

	def check(value: Any) -> Any:
		if canonical(value) not in allowed:
			shown = ", ".join(repr(v) for v in values[:10])
			raise PydanticCustomError("enum", "Input should be one of {shown}", {"shown": shown})
		return value

	return _check(check)


_LIMITS: tuple[tuple[str, str, str, Callable[[Any, Any], bool]], ...] = (
	("minimum", "greater_than_equal", "greater than or equal to", operator.ge),
	("maximum", "less_than_equal", "less than or equal to", operator.le),
	("exclusiveMinimum", "greater_than", "greater than", operator.gt),
	("exclusiveMaximum", "less_than", "less than", operator.lt),
)


def _bounded(schema: dict[str, Any], base: core_schema.CoreSchema) -> core_schema.CoreSchema:
	"""``base`` with the numeric bounds, compared exactly in Python (big ints, floats, both)."""
	limits = [
		(kind, words, test, value)
		for key, kind, words, test in _LIMITS
		if isinstance(value := schema.get(key), int | float)
		and not isinstance(value, bool)
		and math.isfinite(value)
	]
	if not limits:
		return base

	def check(value: Any) -> Any:
		for kind, words, test, limit in limits:
			if not test(value, limit):
				raise PydanticCustomError(
					kind, f"Input should be {words} {{limit}}", {"limit": limit}
				)
		return value

	return core_schema.no_info_after_validator_function(check, base)


def _integer(schema: dict[str, Any]) -> core_schema.CoreSchema:
	# JSON Schema counts 1.0 as an integer: accept it, and hand the tool an int.
	base = core_schema.chain_schema([_check(_integral), core_schema.int_schema(strict=True)])
	return _bounded(schema, base)


def _number(schema: dict[str, Any]) -> core_schema.CoreSchema:
	base = core_schema.union_schema(
		[core_schema.int_schema(strict=True), core_schema.float_schema(strict=True)],
		mode="left_to_right",
	)
	return _bounded(schema, base)


def _multiple_of(step: float) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		if not _multiple(value, step):
			raise PydanticCustomError(
				"multiple_of", "Input should be a multiple of {step}", {"step": step}
			)
		return value

	return check


def _count_items(low: Any, high: Any) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		if low is not None and len(value) < low:
			raise PydanticCustomError(
				"too_short", "List should have at least {n} items", {"n": low}
			)
		if high is not None and len(value) > high:
			raise PydanticCustomError("too_long", "List should have at most {n} items", {"n": high})
		return value

	return check


def _unique(value: Any) -> Any:
	seen: dict[Any, int] = {}
	for i, item in enumerate(value):
		key = canonical(item)
		if key in seen:
			raise PydanticCustomError(
				"unique_items",
				"items must be unique, but items {a} and {b} are equal; remove the repeat",
				{"a": seen[key], "b": i},
			)
		seen[key] = i
	return value


def _contains(sub: _Sub, low: Any, high: Any) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		count = sum(1 for item in value if sub.valid(item))
		if isinstance(low, int) and count < low:
			raise PydanticCustomError(
				"contains",
				"at least {n} item(s) must match the 'contains' schema, {count} do",
				{"n": low, "count": count},
			)
		if isinstance(high, int) and count > high:
			raise PydanticCustomError(
				"contains",
				"at most {n} item(s) may match the 'contains' schema, {count} do",
				{"n": high, "count": count},
			)
		return value

	return check


def _prefix(prefix: list[_Sub], rest: _Sub | None) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		out = list(value)
		for i, item in enumerate(out):
			sub = prefix[i] if i < len(prefix) else rest
			if sub is not None:
				out[i] = sub.validate(item, i)
		return out

	return check


def _required(names: list[str]) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		missing = [n for n in names if n not in value]
		if missing:
			raise PydanticCustomError(
				"missing", "required field(s) missing: {names}", {"names": ", ".join(missing)}
			)
		return value

	return check


def _count_props(low: Any, high: Any) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		if low is not None and len(value) < low:
			raise PydanticCustomError(
				"min_properties", "Object should have at least {n} properties", {"n": low}
			)
		if high is not None and len(value) > high:
			raise PydanticCustomError(
				"max_properties", "Object should have at most {n} properties", {"n": high}
			)
		return value

	return check


def _names(sub: _Sub) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		bad = [k for k in value if not sub.valid(k)]
		if bad:
			raise PydanticCustomError(
				"property_names", "property name '{name}' is not allowed", {"name": bad[0]}
			)
		return value

	return check


def _dependent(required: dict[str, list[str]], schemas: dict[str, _Sub]) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		for name, needs in required.items():
			if name in value:
				missing = [n for n in needs if n not in value]
				if missing:
					raise PydanticCustomError(
						"dependent_required",
						"'{name}' needs {missing} too",
						{"name": name, "missing": ", ".join(repr(m) for m in missing)},
					)
		for name, sub in schemas.items():
			if name in value and not sub.valid(value):
				raise PydanticCustomError(
					"dependent_schemas",
					"the object does not fit the schema that '{name}' requires",
					{"name": name},
				)
		return value

	return check


def _pattern_props(
	patterns: list[tuple[_Regex, _Sub]], known: set[str], rest: _Sub | None
) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		for key, item in value.items():
			matched = False
			for regex, sub in patterns:
				if regex.search(key):
					matched = True
					sub.validate(item, key)
			if not matched and key not in known and rest is not None:
				if rest.schema is False:
					raise PydanticCustomError(
						"unknown_key", "{key}: unknown field; remove it", {"key": key}
					)
				rest.validate(item, key)
		return value

	return check


def _one_of(subs: list[_Sub]) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		count = sum(1 for sub in subs if sub.valid(value))
		if count != 1:
			raise PydanticCustomError(
				"one_of",
				"Input should match exactly one of the oneOf schemas, it matches {count}",
				{"count": count},
			)
		return value

	return check


def _not(sub: _Sub) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		if sub.valid(value):
			raise PydanticCustomError("not", "Input matches a schema it must not match", {})
		return value

	return check


def _if(cond: _Sub, then: _Sub | None, other: _Sub | None) -> Callable[[Any], Any]:
	def check(value: Any) -> Any:
		branch, name = (then, "then") if cond.valid(value) else (other, "else")
		if branch is not None and not branch.valid(value):
			raise PydanticCustomError(
				"if_then_else", "Input does not fit the '{name}' schema", {"name": name}
			)
		return value

	return check


def _integral(value: Any) -> int:
	if isinstance(value, int) and not isinstance(value, bool):
		return value
	if isinstance(value, float) and value.is_integer():
		return int(value)
	raise PydanticCustomError("int_type", "Input should be a valid integer")


_DATE_TIME = LazyPattern(
	r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", re.ASCII
)
_DATE = LazyPattern(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
_EMAIL = LazyPattern(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_UUID = LazyPattern(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$", re.ASCII)
_SCHEME = LazyPattern(r"^[A-Za-z][A-Za-z0-9+.-]*$", re.ASCII)


def _fails(name: str, what: str) -> PydanticCustomError:
	return PydanticCustomError(f"format_{name}", f"must be {what}")


def _uri(value: str) -> str:
	scheme, sep, rest = value.partition(":")
	web = scheme.lower() in ("http", "https")
	fine = bool(sep and _SCHEME().match(scheme) and rest) and not any(c.isspace() for c in value)
	if fine and web:
		fine = rest.startswith("//") and len(rest) > 2  # a web URL names its host
	if not fine:
		raise _fails("uri", "an absolute URI with a scheme, such as https://example.com/a")
	return value


def _date_time(value: str) -> str:
	import datetime as dt

	try:
		if not _DATE_TIME().match(value):
			raise ValueError(value)
		dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
	except ValueError:
		raise _fails("date_time", "an RFC 3339 date-time, such as 2026-05-01T09:30:00Z") from None
	return value


def _date(value: str) -> str:
	import datetime as dt

	try:
		if not _DATE().match(value):
			raise ValueError(value)
		dt.date.fromisoformat(value)
	except ValueError:
		raise _fails("date", "a date as YYYY-MM-DD, such as 2026-05-01") from None
	return value


def _email(value: str) -> str:
	if not _EMAIL().match(value):
		raise _fails("email", "an email address, such as ana@example.com")
	return value


def _uuid(value: str) -> str:
	if not _UUID().match(value):
		raise _fails("uuid", "a UUID, such as 123e4567-e89b-12d3-a456-426614174000")
	return value


CHECKED_FORMATS: dict[str, Callable[[str], str]] = {
	"uri": _uri,
	"date-time": _date_time,
	"date": _date,
	"email": _email,
	"uuid": _uuid,
	"regex": _regex_format,
}
"""The ``format`` values that reject data that does not fit; other formats are annotations."""


def _reject(value: Any) -> Any:
	raise ValueError("no value is allowed here")


class JsonSchemaValidator:
	"""Validates data against one JSON Schema (compiled once).

	Args:
		schema: The JSON Schema, as a dict.
	"""

	__slots__ = ("_validator", "schema")

	def __init__(self, schema: dict[str, Any]) -> None:
		self.schema: dict[str, Any] = schema
		"""The schema it validates against."""
		build = _Build(schema)
		self._validator = _compile(schema, build)
		build.finish()

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
		elif item["type"] in _CONTAINERS and isinstance(item.get("input"), str):
			msg = f"{msg} ({_CONTAINERS[item['type']]}); got a string{_as_json(item['input'])}"
		elif item["type"] in _CONTAINERS and "input" in item:
			from openmolt_core._support.words import json_kind  # an error's path only

			msg = f"{msg} ({_CONTAINERS[item['type']]}); got {json_kind(item['input'])}"
		lines.append(f"{loc}: {msg}")
	more = error.error_count() - limit
	if more > 0:
		lines.append(f"... and {more} more")
	return "; ".join(lines)


_CONTAINERS = {
	"dict_type": "a JSON object",
	"model_type": "a JSON object",
	"list_type": "a JSON array",
}
"""Errors of an object or array given as something else: a string there may be JSON text."""


def _as_json(text: str) -> str:
	"""What a string given for an object or array says as JSON text, for its error.

	Under a strict dialect an input or output with no strict form is sent as JSON text, and
	the reply's repair decodes it; text that is not JSON stays a string. Saying where it breaks
	lets a model mend it (it sent the string its schema asked for).
	"""
	import json

	try:
		json.loads(text)
	except RecursionError:
		return ", and as JSON text it nests too deeply"
	except ValueError as exc:
		where = (
			f": {exc.msg} at line {exc.lineno} column {exc.colno}"
			if isinstance(exc, json.JSONDecodeError)
			else ""
		)
		return f", and as JSON text it is not valid JSON{where}"
	return ""


def _is_union_tag(part: Any) -> bool:
	return isinstance(part, str) and (
		part.startswith(("str", "int", "float", "bool", "list", "dict", "typed-dict", "none"))
		and (
			"[" in part
			or part in {"str", "int", "float", "bool", "list", "dict", "typed-dict", "none"}
		)
	)


# Schema transforms -----------------------------------------------------------------------


def lift_defs(schema: dict[str, Any], prefix: str, into: dict[str, Any]) -> dict[str, Any]:
	"""A schema whose local definitions move into ``into`` as ``<prefix>.<name>``.

	Its ``$ref``s to them are rewritten to point at the new names under ``#/$defs/``, so schemas
	from several sources can share one root (`openmolt_core.envelope.Envelope.schema`).

	Args:
		schema: The schema (returned as is when it has no local definitions).
		prefix: What the moved definitions' names start with.
		into: Where the definitions go (changed in place).
	"""
	own = {**schema.get("definitions", {}), **schema.get("$defs", {})}
	if not own:
		return schema

	def rewrite(node: Any) -> Any:
		if isinstance(node, list):
			return [rewrite(n) for n in node]
		if not isinstance(node, dict):
			return node
		out = {}
		for key, value in node.items():
			if key == "$ref" and isinstance(value, str):
				for root in ("#/$defs/", "#/definitions/"):
					if value.startswith(root):
						value = f"#/$defs/{prefix}.{value[len(root) :]}"
			elif key in ("$defs", "definitions"):
				continue
			elif key == "properties" and isinstance(value, dict):
				value = {name: rewrite(sub) for name, sub in value.items()}
			elif key not in ("enum", "const", "default"):
				value = rewrite(value)
			out[key] = value
		return out

	for name, sub in own.items():
		into[f"{prefix}.{name}"] = rewrite(sub)
	lifted: dict[str, Any] = rewrite(schema)
	return lifted


def inline_refs(schema: Any, defs: dict[str, Any]) -> Any:
	"""The schema with local ``$ref``s replaced by their definitions, titles and descriptions dropped.

	The ``type`` of a ``const`` or ``enum`` is dropped too (its values say it).

	Args:
		schema: The schema.
		defs: Its definitions (``$defs``), by name.
	"""
	if isinstance(schema, list):
		return [inline_refs(s, defs) for s in schema]
	if not isinstance(schema, dict):
		return schema
	ref = schema.get("$ref")
	if isinstance(ref, str) and ref.startswith("#/$defs/"):
		return inline_refs(defs[ref.rsplit("/", 1)[1]], defs)
	literal = "const" in schema or "enum" in schema  # the values say the type
	return {
		k: (v if k in ("enum", "const", "default", "required") else inline_refs(v, defs))
		for k, v in schema.items()
		if k not in ("title", "description") and k != "$defs" and not (literal and k == "type")
	}


def example_value(schema: Any) -> Any:
	"""A small value of a JSON Schema's shape, for the prompt's ``finish`` example."""
	if not isinstance(schema, dict):
		return "..."
	if "const" in schema:
		return schema["const"]
	if schema.get("enum"):
		return schema["enum"][0]
	for key in ("anyOf", "oneOf"):
		if schema.get(key):
			return example_value(schema[key][0])
	kind = schema.get("type")
	if isinstance(kind, list):
		kind = next((k for k in kind if k != "null"), "null")
	if kind == "object" or "properties" in schema:
		props = schema.get("properties") or {}
		required = schema.get("required") or list(props)
		return {k: example_value(v) for k, v in props.items() if k in required}
	if kind == "array":
		return []
	return {"integer": 0, "number": 0, "boolean": True, "null": None}.get(str(kind), "...")
