"""The three dialects on real tools: 50 built-in integration tools, and the SDKs' own checks.

Each provider's SDK ships the function it uses to make a schema strict: OpenAI's
``_ensure_strict_json_schema`` (behind ``to_strict_json_schema``), Anthropic's
``transform_schema``; google-genai validates ``JSONSchema`` with unknown keys refused and
documents the ``responseJsonSchema`` keywords. A schema we fitted must already be what those
functions produce: they leave it unchanged (or, for Gemini, accept every keyword in it).
"""

from __future__ import annotations

import copy
import importlib
import re
from typing import Any

import pytest

from openmolt_core._support.schemafit import measure
from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.structured import FittedSchema, SchemaDialect, fit
from openmolt_providers.anthropic._dialect import ANTHROPIC
from openmolt_providers.gemini._dialect import GEMINI
from openmolt_providers.openai._dialect import OPENAI, OPENAI_FINE_TUNED

# The official SDKs' types (anthropic, google-genai, google-ads) are imported by these tests
# only: in one xdist group, one worker imports them, not each of the four (noxfile.py).
pytestmark = pytest.mark.xdist_group("sdk-types")

MODULES = [
	"stripe",
	"github",
	"gmail",
	"notion",
	"slack",
	"google_calendar",
	"shopify",
	"airtable",
	"telegram",
	"google_sheets",
]
OUTPUT = {
	"type": "object",
	"properties": {
		"summary": {"type": "string"},
		"items": {"type": "array", "items": {"type": "string"}},
		"total": {"type": "number", "minimum": 0},
	},
	"required": ["summary"],
}


def realistic_tools(count: int = 50) -> list[ToolSchema]:
	"""``count`` built-in tools, taken in turn from each integration so the shapes vary."""
	per_module = []
	for name in MODULES:
		integration = importlib.import_module(f"openmolt_integrations.{name}").INTEGRATION
		per_module.append(
			[ToolSchema(f"{name}.{t.handle}", t.input_schema) for t in integration.tools]
		)
	tools: list[ToolSchema] = []
	while len(tools) < count:
		for module in per_module:
			if module and len(tools) < count:
				tools.append(module.pop(0))
	return tools


def envelope(tools: list[ToolSchema], output: dict[str, Any] | None = OUTPUT) -> Envelope:
	return Envelope.build(copy.deepcopy(tools), output_schema=output, human_input=True)


DIALECTS = [OPENAI, OPENAI_FINE_TUNED, ANTHROPIC, GEMINI]


@pytest.fixture(scope="module")
def tools() -> list[ToolSchema]:
	return realistic_tools()


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_fifty_real_tools_stay_within_the_limits_or_fall_back_deterministically(
	tools: list[ToolSchema], dialect: SchemaDialect
) -> None:
	"""Fifty real tools: the fitted schema is within every documented limit, the same each time."""
	fitted = fit(envelope(tools), dialect)
	assert fitted.mode in ("strict", "partial")
	assert fitted.schema is not None
	assert not dialect.violations(fitted.schema)
	assert fit(envelope(tools), dialect) == fitted
	strict = [t.handle for t in tools if t.handle not in fitted.encoded]
	assert len(strict) >= 10, fitted.notes
	for handle in fitted.encoded:
		assert any(n.startswith(f"{handle}: input sent as JSON text") for n in fitted.notes)
	# A tool without a strict form falls back on every dialect that closes objects.
	if dialect.closed_objects:
		assert "notion.createPage" in fitted.encoded


def test_openai_falls_back_only_for_shapes_not_for_size(tools: list[ToolSchema]) -> None:
	"""OpenAI's limits are wide: fifty tools fall back only where a schema has no strict form."""
	fitted = fit(envelope(tools), OPENAI)
	assert not any("would pass" in n for n in fitted.notes)
	m = measure(fitted.schema)
	assert m.properties < 5000 and m.depth <= 10 and m.enum_values <= 1000


def test_anthropic_budget_keeps_earlier_tools_strict(tools: list[ToolSchema]) -> None:
	"""Anthropic's 24 optional and 16 union parameters run out: later tools fall back, in order."""
	fitted = fit(envelope(tools), ANTHROPIC)
	m = measure(fitted.schema)
	assert m.optional <= 24 and m.unions <= 16
	over = [n for n in fitted.notes if "would pass" in n]
	assert over and all("the anthropic limit is" in n for n in over)
	# The tools that fell back for the budget come after the first one that was kept strict.
	first_strict = next(i for i, t in enumerate(tools) if t.handle not in fitted.encoded)
	budget = [
		i
		for i, t in enumerate(tools)
		if any(n.startswith(f"{t.handle}:") and "would pass" in n for n in fitted.notes)
	]
	assert min(budget) > first_strict
	# Taking the tools in another order changes which fall back, not whether the result fits.
	other = fit(envelope(list(reversed(tools))), ANTHROPIC)
	assert not ANTHROPIC.violations(other.schema)


# The SDKs' own strict-schema functions -----------------------------------------------------


def _fitted_samples(tools: list[ToolSchema], dialect: SchemaDialect) -> list[FittedSchema]:
	return [
		fit(envelope(tools), dialect),
		fit(envelope(tools[:5], output=None), dialect),
		fit(envelope([]), dialect),
	]


@pytest.mark.parametrize("dialect", [OPENAI, OPENAI_FINE_TUNED], ids=lambda d: d.name)
def test_openai_sdk_strict_helper_leaves_fitted_schemas_unchanged(
	tools: list[ToolSchema], dialect: SchemaDialect
) -> None:
	"""openai's to_strict_json_schema machinery finds nothing to change in a fitted schema."""
	from openai.lib._pydantic import _ensure_strict_json_schema

	for fitted in _fitted_samples(tools, dialect):
		schema = copy.deepcopy(fitted.schema)
		assert schema is not None
		assert _ensure_strict_json_schema(schema, path=(), root=schema) == fitted.schema


def _without_type_beside_literals(schema: Any) -> Any:
	"""What anthropic's transform_schema writes: no ``type`` next to an ``enum`` or ``const``."""
	if isinstance(schema, list):
		return [_without_type_beside_literals(s) for s in schema]
	if not isinstance(schema, dict):
		return schema
	out = {}
	for key, value in schema.items():
		if key == "type" and ("enum" in schema or "const" in schema):
			continue
		if key == "properties":
			out[key] = {k: _without_type_beside_literals(v) for k, v in value.items()}
		elif key in ("enum", "const", "required"):
			out[key] = value
		else:
			out[key] = _without_type_beside_literals(value)
	return out


def test_anthropic_sdk_transform_schema_leaves_fitted_schemas_unchanged(
	tools: list[ToolSchema],
) -> None:
	"""anthropic's transform_schema keeps every keyword of a fitted schema: none is unsupported."""
	from anthropic.lib._parse._transform import transform_schema

	for fitted in _fitted_samples(tools, ANTHROPIC):
		assert transform_schema(fitted.schema) == _without_type_beside_literals(fitted.schema)


def _keywords(schema: Any, found: set[str]) -> set[str]:
	if isinstance(schema, list):
		for s in schema:
			_keywords(s, found)
	elif isinstance(schema, dict):
		for key, value in schema.items():
			found.add(key)
			if key == "properties":
				for sub in value.values():
					_keywords(sub, found)
			elif key not in ("enum", "required"):
				_keywords(value, found)
	return found


def test_gemini_fitted_schemas_use_only_documented_keywords_and_validate(
	tools: list[ToolSchema],
) -> None:
	"""Every keyword is in google-genai's responseJsonSchema list; its JSONSchema type accepts it."""
	from google.genai import types

	doc = " ".join(
		(types.GenerateContentConfig.model_fields["response_json_schema"].description or "").split()
	)
	listed = set(re.findall(r"`([$A-Za-z]+)`", doc.split("only the following properties")[1]))
	assert {"anyOf", "enum", "properties", "required", "minItems"} <= listed
	for fitted in _fitted_samples(tools, GEMINI):
		assert _keywords(fitted.schema, set()) <= listed
		model = types.JSONSchema.model_validate(fitted.schema)
		assert model.model_dump(by_alias=True, exclude_none=True, mode="json") == fitted.schema


def _input(tool: ToolSchema, dialect: SchemaDialect) -> tuple[dict[str, Any], FittedSchema]:
	fitted = fit(envelope([tool], output=None), dialect)
	assert fitted.schema is not None
	for v in fitted.schema["properties"]["commands"]["items"]["anyOf"]:
		tag = v["properties"].get("tool", {})
		if tool.handle in (tag.get("const"), *tag.get("enum", ())):
			return v["properties"]["input"], fitted
	raise AssertionError(tool.handle)


def _with(prop: dict[str, Any]) -> ToolSchema:
	schema = {"type": "object", "properties": {"v": prop}, "required": ["v"]}
	return ToolSchema("t.x", schema)


@pytest.mark.parametrize(
	("pattern", "sent"),
	[
		("^[A-Z]{3}-\\d+$", True),
		("^(?:ab|cd)*[a-z0-9._%+-]+$", True),
		("^(?!admin)[a-z]+$", False),
		("(?<=a)b", False),
		("\\bword\\b", False),
		("(a)\\1", False),
		("(?P<n>a)", False),
		("a[", False),
	],
)
def test_anthropic_gets_simple_patterns_and_the_loop_checks_the_rest(
	pattern: str, sent: bool
) -> None:
	"""A simple pattern is sent to Anthropic; lookaround, backreferences, \\b are relaxed."""
	schema, fitted = _input(_with({"type": "string", "pattern": pattern}), ANTHROPIC)
	assert fitted.mode == "strict"
	assert (schema["properties"]["v"].get("pattern") == pattern) is sent
	assert ("pattern" in fitted.relaxed) is not sent


def test_gemini_gets_tuples_and_the_others_fall_back() -> None:
	"""prefixItems has a form on Gemini (closed: maxItems); elsewhere the input is JSON text."""
	pair = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]}
	closed = _with({**pair, "items": False})
	schema, fitted = _input(closed, GEMINI)
	assert fitted.mode == "strict"
	assert schema["properties"]["v"] == {
		"type": "array",
		"prefixItems": [{"type": "string"}, {"type": "number"}],
		"maxItems": 2,
	}
	typed = _with({**pair, "items": {"type": "boolean"}})
	assert _input(typed, GEMINI)[0]["properties"]["v"]["items"] == {"type": "boolean"}
	assert _input(_with(pair), GEMINI)[1].mode == "partial"  # further items of any kind
	for dialect in (OPENAI, ANTHROPIC):
		schema, fitted = _input(closed, dialect)
		assert fitted.mode == "partial" and schema["type"] == "string"
		assert any("prefixItems has no strict form" in n for n in fitted.notes)


def test_a_pydantic_tuple_is_a_closed_tuple_on_gemini() -> None:
	"""``tuple[str, float]`` (prefixItems with maxItems 2 and no ``items``) admits no further
	item: Gemini gets it strict, not as JSON text ("items after the tuple allow any value")."""
	from pydantic import BaseModel

	class Pair(BaseModel):
		v: tuple[str, float]

	schema, fitted = _input(ToolSchema("t.x", Pair.model_json_schema()), GEMINI)
	assert fitted.mode == "strict", fitted.notes
	assert schema["properties"]["v"]["prefixItems"] == [{"type": "string"}, {"type": "number"}]
	assert schema["properties"]["v"]["maxItems"] == 2
	open_ended = _with({"type": "array", "prefixItems": [{"type": "string"}], "maxItems": 3})
	assert _input(open_ended, GEMINI)[1].mode == "partial"  # a second item of any kind


@pytest.mark.parametrize("dialect", [OPENAI, ANTHROPIC, GEMINI], ids=lambda d: d.name)
def test_a_lookaround_pattern_is_never_sent_and_the_loop_checks_it(dialect: SchemaDialect) -> None:
	"""No dialect gets a pattern its decoder cannot compile; the tool stays strict."""
	schema, fitted = _input(_with({"type": "string", "pattern": "^(?!admin$)[a-z]+$"}), dialect)
	assert fitted.mode == "strict" and "pattern" in fitted.relaxed
	assert "pattern" not in schema["properties"]["v"]


TREE = {
	"type": "object",
	"properties": {
		"name": {"type": "string"},
		"note": {"type": "string"},
		"children": {"type": "array", "items": {"$ref": "#"}},
	},
	"required": ["name"],
	"additionalProperties": False,
}
LINKED = {
	"type": "object",
	"$defs": {
		"node": {
			"type": "object",
			"properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
			"required": ["v"],
			"additionalProperties": False,
		}
	},
	"properties": {"head": {"$ref": "#/$defs/node"}},
	"required": ["head"],
	"additionalProperties": False,
}


def test_openai_gets_recursive_schemas_in_the_roots_defs() -> None:
	"""A recursive $ref stays strict on OpenAI: its definition goes to the root's $defs."""
	import jsonschema
	from openai.lib._pydantic import _ensure_strict_json_schema

	tools = [ToolSchema("t.tree", TREE), ToolSchema("t.list", LINKED)]
	fitted = fit(envelope(tools, output=None), OPENAI)
	assert fitted.mode == "strict" and fitted.schema is not None, fitted.notes
	defs = fitted.schema["$defs"]
	assert {"t_tree_input_root", "t_list_input_head_node"} <= set(defs)
	schema = copy.deepcopy(fitted.schema)
	assert _ensure_strict_json_schema(schema, path=(), root=schema) == fitted.schema
	reply = {
		"commands": [
			{
				"type": "callTool",
				"tool": "t.tree",
				"input": {
					"name": "a",
					"note": None,
					"children": [{"name": "b", "note": "x", "children": None}],
				},
			},
			{
				"type": "callTool",
				"tool": "t.list",
				"input": {"head": {"v": 1, "next": {"v": 2, "next": None}}},
			},
		]
	}
	jsonschema.validate(reply, fitted.schema)  # the reply OpenAI may send fits what it got
	restored = fitted.restore(copy.deepcopy(reply))
	tree, linked = (c["input"] for c in restored["commands"])
	assert tree == {"name": "a", "children": [{"name": "b", "note": "x"}]}
	assert linked == {"head": {"v": 1, "next": {"v": 2}}}
	jsonschema.validate(tree, TREE)
	jsonschema.validate(linked, LINKED)
	for dialect in (ANTHROPIC, GEMINI):
		other = fit(envelope(tools, output=None), dialect)
		assert other.encoded == {"t.tree", "t.list"}
		assert any("recursive $ref" in n for n in other.notes)


FOREST = {
	"type": "object",
	"$defs": {
		"tree": {
			"type": "object",
			"properties": {
				"name": {"type": "string"},
				"note": {"type": "string"},
				"kids": {
					"type": "array",
					"items": {"anyOf": [{"$ref": "#/$defs/tree"}, {"type": "string"}]},
				},
			},
			"required": ["name"],
			"additionalProperties": False,
		}
	},
	"properties": {"top": {"anyOf": [{"$ref": "#/$defs/tree"}, {"type": "integer"}]}},
	"required": ["top"],
	"additionalProperties": False,
}


def test_openai_restores_a_recursive_definition_reached_through_a_union() -> None:
	"""A tree in an anyOf branch (at the top and inside itself) comes back without OpenAI's nulls."""
	import jsonschema

	fitted = fit(envelope([ToolSchema("t.forest", FOREST)], output=None), OPENAI)
	assert fitted.mode == "strict" and fitted.schema is not None, fitted.notes
	tree = {
		"name": "a",
		"note": None,
		"kids": [
			{"name": "b", "note": None, "kids": None},
			"leaf",
			{"name": "c", "note": "x", "kids": []},
		],
	}
	reply = {"commands": [{"type": "callTool", "tool": "t.forest", "input": {"top": tree}}]}
	jsonschema.validate(reply, fitted.schema)  # what OpenAI may send under the schema it got
	restored = fitted.restore(copy.deepcopy(reply))["commands"][0]["input"]
	assert restored == {
		"top": {
			"name": "a",
			"kids": [{"name": "b"}, "leaf", {"name": "c", "note": "x", "kids": []}],
		}
	}
	jsonschema.validate(restored, FOREST)


def test_openai_keeps_an_explicit_null_a_recursive_definition_allows() -> None:
	"""An optional property whose recursive definition takes null keeps a null, as a plain one does."""
	import jsonschema

	chain = {
		"type": "object",
		"$defs": {
			"link": {
				"type": ["object", "null"],
				"properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/link"}},
				# Required: an optional nullable property of a tool's input has no form here (null
				# and absent differ for the tool; test_structured's optional nullable test).
				"required": ["v", "next"],
				"additionalProperties": False,
			}
		},
		"properties": {"head": {"$ref": "#/$defs/link"}},
		"required": ["head"],
		"additionalProperties": False,
	}
	fitted = fit(envelope([ToolSchema("t.chain", chain)], output=None), OPENAI)
	assert fitted.mode == "strict" and fitted.schema is not None, fitted.notes
	for given in ({"head": None}, {"head": {"v": 1, "next": None}}):
		reply = {"commands": [{"type": "callTool", "tool": "t.chain", "input": given}]}
		jsonschema.validate(reply, fitted.schema)
		assert fitted.restore(copy.deepcopy(reply))["commands"][0]["input"] == given


def test_recursive_definitions_of_two_tools_never_share_a_name() -> None:
	"""Two tools whose definition names would read alike each keep their own in the root's $defs."""
	import jsonschema

	def tree(leaf: str) -> dict[str, Any]:
		return {
			"type": "object",
			"properties": {"v": {"type": leaf}, "kids": {"type": "array", "items": {"$ref": "#"}}},
			"required": ["v", "kids"],
			"additionalProperties": False,
		}

	long = "x" * 70
	for first, second in (("a.b", "a_b"), (f"{long}.one", f"{long}.two")):
		tools = [ToolSchema(first, tree("string")), ToolSchema(second, tree("integer"))]
		fitted = fit(envelope(tools, output=None), OPENAI)
		assert fitted.mode == "strict" and fitted.schema is not None, fitted.notes
		assert len(fitted.schema["$defs"]) == 2
		for handle, v in ((first, "s"), (second, 1)):
			reply = {
				"commands": [
					{
						"type": "callTool",
						"tool": handle,
						"input": {"v": v, "kids": [{"v": v, "kids": []}]},
					}
				]
			}
			jsonschema.validate(reply, fitted.schema)


def test_the_roots_definitions_count_toward_openais_limits() -> None:
	"""Properties in the root's $defs count, and definition names count as characters."""
	from openmolt_core.structured import fit_schema

	props: dict[str, Any] = {f"p{i}": {"type": "string"} for i in range(2600)}
	props["kids"] = {"type": "array", "items": {"$ref": "#"}}
	tree = {"type": "object", "properties": props, "required": list(props)}
	tree["additionalProperties"] = False
	fitted = fit_schema(tree, OPENAI)  # the root and its definition: 5,202 properties
	assert fitted.mode == "off"
	assert fitted.notes == ("5202 object properties (the openai limit is 5000)",)
	named = {"$defs": {"n" * 40: {"type": "object", "properties": {"ab": {"type": "string"}}}}}
	assert measure(named).string_length == 42 and measure(named).properties == 1


@pytest.mark.parametrize(
	("dialect", "fmt", "sent"),
	[
		(OPENAI, "uri", False),
		(GEMINI, "email", False),
		(OPENAI_FINE_TUNED, "date-time", False),
		(ANTHROPIC, "uri", True),
		(OPENAI, "date-time", True),
	],
	ids=lambda v: getattr(v, "name", str(v)),
)
def test_a_checked_format_the_provider_lacks_is_named_as_relaxed(
	dialect: SchemaDialect, fmt: str, sent: bool
) -> None:
	"""A format the loop checks and the provider lacks is listed as checked by OpenMolt only."""
	schema, fitted = _input(_with({"type": "string", "format": fmt}), dialect)
	assert ("format" in schema["properties"]["v"]) is sent
	assert ("format" in fitted.relaxed) is not sent
	_, unchecked = _input(_with({"type": "string", "format": "color"}), dialect)
	assert "format" not in unchecked.relaxed  # an annotation: nobody checks it


@pytest.mark.parametrize(
	"defs",
	[
		{"X": {"$ref": "#/$defs/X"}},
		{"X": {"$ref": "#/$defs/Y"}, "Y": {"$ref": "#/$defs/X"}},
		{"X": {"$ref": "#/$defs/X", "description": "Itself."}},
		{"X": {"anyOf": [{"$ref": "#/$defs/X"}]}},
	],
	ids=["itself", "a pair", "with a sibling", "a union of itself"],
)
def test_a_definition_that_is_only_a_reference_to_itself_falls_back(defs: dict[str, Any]) -> None:
	"""A $ref cycle with no schema in it has no strict form: its tool's input goes as JSON text."""
	tool = {
		"type": "object",
		"properties": {"a": {"$ref": "#/$defs/X"}},
		"required": ["a"],
		"$defs": defs,
	}
	fitted = fit(envelope([ToolSchema("t.x", tool)], output=None), OPENAI)
	assert fitted.mode == "partial" and fitted.encoded == {"t.x"}, fitted.notes
	assert fitted.schema is not None and "$defs" not in fitted.schema
	reply = {"commands": [{"type": "callTool", "tool": "t.x", "input": '{"a": "q"}'}]}
	assert fitted.restore(reply)["commands"][0]["input"] == {"a": "q"}


def test_a_defaulted_recursive_property_has_no_sibling_beside_its_ref() -> None:
	"""OpenAI takes no keyword beside a $ref: a default's note goes on a union around it."""
	from openai.lib._pydantic import _ensure_strict_json_schema

	node = copy.deepcopy(LINKED["$defs"]["node"])
	tool = {
		"type": "object",
		"properties": {"head": {"$ref": "#/$defs/node", "default": {"v": 0}}},
		"$defs": {"node": node},
	}
	fitted = fit(envelope([ToolSchema("t.x", tool)], output=None), OPENAI)
	assert fitted.mode == "strict" and fitted.schema is not None, fitted.notes
	schema, _ = _input(ToolSchema("t.x", tool), OPENAI)
	assert schema["properties"]["head"] == {
		"anyOf": [{"$ref": "#/$defs/t_x_input_head_node"}],
		"description": 'Default: {"v": 0}.',
	}
	sent = copy.deepcopy(fitted.schema)
	assert _ensure_strict_json_schema(sent, path=(), root=sent) == fitted.schema


@pytest.mark.parametrize("dialect", [OPENAI, ANTHROPIC, GEMINI], ids=lambda d: d.name)
def test_a_required_name_the_object_does_not_declare_falls_back(dialect: SchemaDialect) -> None:
	"""``required`` naming a property the object lacks (as MCP servers' item schemas do) has no
	form in any dialect: Gemini refuses it with a 400 ("required[0]: property is not defined")
	at every step, the closed dialects could not write it. The tool's input is JSON text."""
	item = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["key"]}
	tool = _with({"type": "array", "items": item})
	schema, fitted = _input(tool, dialect)
	assert fitted.mode == "partial"
	assert schema["type"] == "string"
	assert any("'key' is not among the properties" in note for note in fitted.notes)


@pytest.mark.parametrize("dialect", [OPENAI, ANTHROPIC, GEMINI], ids=lambda d: d.name)
@pytest.mark.parametrize(
	("prop", "sent"),
	[
		({"type": "string", "enum": ["a", "b", None]}, ["a", "b"]),  # OpenAPI 3.0's nullable enum
		({"type": "integer", "enum": [1, 2.0, 2.5, "3", True]}, [1, 2.0]),
		({"type": ["string", "null"], "enum": ["a", None, 4]}, ["a", None]),
	],
)
def test_an_enum_value_its_type_refuses_is_never_sent(
	dialect: SchemaDialect, prop: dict[str, Any], sent: list[Any]
) -> None:
	"""An enum value that does not have the schema's type never validates: sent, the model could
	write it (Anthropic, which gets no type beside an enum, was told null was fine) and the loop
	refuses the reply. It is left out; an enum left with no value has no strict form."""
	schema, fitted = _input(_with(prop), dialect)
	assert fitted.mode == "strict"
	if None in sent and dialect is GEMINI:  # Gemini's enums hold no null: a union with null
		others = [v for v in sent if v is not None]
		assert schema["properties"]["v"]["anyOf"] == [
			{"type": "string", "enum": others},
			{"type": "null"},
		]
		return
	assert schema["properties"]["v"]["enum"] == sent
	schema, fitted = _input(_with({"type": "string", "const": 3}), dialect)
	assert schema["type"] == "string" and fitted.mode == "partial"
	assert any("no enum or const value has the type string" in note for note in fitted.notes)
