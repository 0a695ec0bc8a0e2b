"""Fitting the reply envelope to a structured-output dialect: rules, fallbacks, restore."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openmolt_core._support.schemafit import measure
from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.structured import FittedSchema, SchemaDialect, fit, fit_schema

REQUIRE_ALL = SchemaDialect(
	name="all",
	keywords=frozenset({"description", "minimum", "maxLength"}),
	require_all=True,
	max_properties=5000,
)
DEFAULTS = SchemaDialect(
	name="defaults", keywords=frozenset({"minItems"}), require_defaults=True, max_min_items=1
)
OPEN = SchemaDialect(name="open", closed_objects=False, const_as_enum=True)

OBJ = {"type": "object"}


def tool(handle: str, **props: Any) -> ToolSchema:
	required = [k for k, v in props.items() if v.pop("_required", False)]
	return ToolSchema(handle, {"type": "object", "properties": props, "required": required})


def env(*tools: ToolSchema, output: dict[str, Any] | None = None) -> Envelope:
	return Envelope.build(tools, output_schema=output, human_input=False)


def variant(fitted: FittedSchema, handle: str) -> dict[str, Any]:
	assert fitted.schema is not None
	for v in fitted.schema["properties"]["commands"]["items"]["anyOf"]:
		tag = v["properties"].get("tool", {})
		if handle in (tag.get("const"), *tag.get("enum", ())):
			return v
	raise AssertionError(handle)


def input_of(fitted: FittedSchema, handle: str) -> dict[str, Any]:
	schema: dict[str, Any] = variant(fitted, handle)["properties"]["input"]
	return schema


def call(handle: str, data: Any) -> dict[str, Any]:
	return {"commands": [{"type": "callTool", "tool": handle, "input": data}]}


def test_optional_properties_become_required_and_nullable_and_restore_drops_the_nulls() -> None:
	"""Where every property must be required, an optional one is nullable; its null is removed."""
	e = env(tool("t.a", name={"type": "string", "_required": True}, note={"type": "string"}))
	f = fit(e, REQUIRE_ALL)
	schema = input_of(f, "t.a")
	assert schema["required"] == ["name", "note"]
	assert schema["properties"]["note"] == {"type": ["string", "null"]}
	assert schema["additionalProperties"] is False
	reply = f.restore(call("t.a", {"name": "x", "note": None}))
	assert reply["commands"][0]["input"] == {"name": "x"}
	assert f.mode == "strict"


def test_a_default_makes_a_property_required_and_is_said_in_the_description() -> None:
	"""A property with a default is simply required; the dropped default moves to the description."""
	e = env(tool("t.a", n={"type": "integer", "default": 3, "description": "How many."}))
	schema = input_of(fit(e, REQUIRE_ALL), "t.a")
	assert schema["required"] == ["n"]
	assert schema["properties"]["n"] == {"type": "integer", "description": "How many. Default: 3."}
	optional = input_of(fit(e, DEFAULTS), "t.a")
	assert optional["required"] == ["n"]  # also where only defaults are made required


def test_an_optional_property_that_accepts_null_falls_back_where_all_are_required() -> None:
	"""Absent and null differ (a tool sends null to clear a field): where every property must be
	required, such a tool's input falls back to JSON text, so leaving it out stays possible."""
	e = env(tool("t.a", clear={"type": ["string", "null"]}), tool("t.b", x={"type": "string"}))
	f = fit(e, REQUIRE_ALL)
	assert f.mode == "partial"
	assert f.encoded == {"t.a"}
	assert any("t.a: input sent as JSON text" in n and "clear" in n for n in f.notes)
	assert f.restore(call("t.a", '{"clear": null}'))["commands"][0]["input"] == {"clear": None}
	assert f.restore(call("t.a", "{}"))["commands"][0]["input"] == {}
	required = input_of(
		fit(env(tool("t.a", clear={"type": ["string", "null"], "_required": True})), REQUIRE_ALL),
		"t.a",
	)
	assert required["properties"]["clear"] == {"type": ["string", "null"]}  # required: as before
	nested = {"type": "object", "properties": {"price": {"type": ["string", "null"]}}}
	f = fit(env(tool("t.a", variants={"type": "array", "items": nested})), REQUIRE_ALL)
	assert f.encoded == {"t.a"}  # Shopify's compareAtPrice: null clears it, nested or not
	out = {"type": "object", "properties": {"n": {"type": ["string", "null"]}}}
	assert fit(env(output=out), REQUIRE_ALL).mode == "strict"  # an output's null clears nothing


def test_nested_nulls_are_removed_through_arrays_and_objects() -> None:
	"""The repair follows the schema: nulls deep inside arrays of objects go too."""
	item = {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}}
	e = env(tool("t.a", rows={"type": "array", "items": item, "_required": True}))
	f = fit(e, REQUIRE_ALL)
	rows = [{"k": "a", "v": None}, {"k": None, "v": 1}]
	assert f.restore(call("t.a", {"rows": rows}))["commands"][0]["input"] == {
		"rows": [{"k": "a"}, {"v": 1}]
	}


def test_free_form_objects_fall_back_per_tool_and_restore_decodes_them() -> None:
	"""An open object has no strict form: that tool's input travels as JSON text; others stay."""
	e = env(
		tool("t.free", data={"type": "object", "_required": True}),
		tool("t.map", tags={"type": "object", "additionalProperties": {"type": "string"}}),
		tool("t.ok", name={"type": "string"}),
	)
	f = fit(e, REQUIRE_ALL)
	assert f.mode == "partial"
	assert f.encoded == {"t.free", "t.map"}
	assert input_of(f, "t.free")["type"] == "string"
	assert input_of(f, "t.ok")["type"] == "object"
	assert any("t.free" in n and "free-form" in n for n in f.notes)
	assert any("t.map" in n and "additionalProperties" in n for n in f.notes)
	reply = f.restore(call("t.free", json.dumps({"data": {"x": [1]}})))
	assert reply["commands"][0]["input"] == {"data": {"x": [1]}}
	assert f.restore(call("t.free", "not json"))["commands"][0]["input"] == "not json"


def test_a_closed_object_with_no_properties_is_the_empty_object() -> None:
	"""A tool whose input is closed and empty takes no input: the empty closed object."""
	closed = {"type": "object", "properties": {}, "additionalProperties": False}
	f = fit(env(ToolSchema("t.me", closed)), REQUIRE_ALL)
	assert f.mode == "strict"
	assert input_of(f, "t.me") == {
		"type": "object",
		"properties": {},
		"required": [],
		"additionalProperties": False,
	}


@pytest.mark.parametrize("dialect", [REQUIRE_ALL, OPEN], ids=["closed", "open"])
@pytest.mark.parametrize(
	"schema",
	[
		{"type": "object", "properties": {}},
		{"type": "object"},
		{"type": "object", "additionalProperties": True},
		{"type": "object", "properties": {}, "additionalProperties": True},
	],
	ids=["empty-properties", "bare", "open", "empty-and-open"],
)
def test_an_open_object_falls_back_to_json_text_with_a_note(
	schema: dict[str, Any], dialect: SchemaDialect
) -> None:
	""" "Any object" has no strict form: closing it would let the model write only {}."""
	f = fit(env(ToolSchema("t.any", schema)), dialect)
	assert f.mode == "partial"
	assert input_of(f, "t.any")["type"] == "string"
	assert any("t.any: input sent as JSON text" in n and "free-form" in n for n in f.notes)
	nested = fit(env(tool("t.nest", inputs=schema)), dialect)
	assert nested.mode == "partial" and input_of(nested, "t.nest")["type"] == "string"


def test_open_dialect_keeps_typed_open_objects_and_writes_const_as_enum() -> None:
	"""A dialect that does not close objects keeps a map of typed values; const becomes an enum."""
	words = {"type": "object", "additionalProperties": {"type": "string"}}
	f = fit(env(tool("t.free", data=words)), OPEN)
	assert f.mode == "strict"
	assert input_of(f, "t.free")["properties"]["data"] == {
		"type": "object",
		"properties": {},
		"required": [],
		"additionalProperties": {"type": "string"},
	}
	assert variant(f, "t.free")["properties"]["tool"] == {"type": "string", "enum": ["t.free"]}


def test_unknown_assertions_are_dropped_and_listed_as_relaxed() -> None:
	"""Assertions a dialect lacks are dropped (the loop checks them); known ones are kept."""
	e = env(
		tool(
			"t.a",
			n={"type": "integer", "minimum": 1, "maximum": 9},
			s={"type": "string", "maxLength": 5, "pattern": "^a"},
			l={"type": "array", "items": {"type": "string"}, "minItems": 3},
		)
	)
	f = fit(e, REQUIRE_ALL)
	props = input_of(f, "t.a")["properties"]
	assert props["n"] == {"type": ["integer", "null"], "minimum": 1}
	assert props["s"] == {"type": ["string", "null"], "maxLength": 5}
	assert {"maximum", "pattern", "minItems"} <= f.relaxed
	assert "minimum" not in f.relaxed and "maxLength" not in f.relaxed
	capped = input_of(fit(e, DEFAULTS), "t.a")["properties"]["l"]
	assert capped["minItems"] == 1


def test_refs_are_inlined_and_recursion_falls_back() -> None:
	"""Local $refs are inlined (the fitted input is one tree); a recursive one has no form."""
	node = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
	ok = ToolSchema(
		"t.ref",
		{
			"type": "object",
			"properties": {"owner": {"$ref": "#/$defs/User", "description": "Who."}},
			"required": ["owner"],
			"$defs": {"User": node},
		},
	)
	tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
	f = fit(env(ok, ToolSchema("t.tree", tree)), REQUIRE_ALL)
	owner = input_of(f, "t.ref")["properties"]["owner"]
	assert owner["properties"] == {"name": {"type": "string"}}
	assert owner["description"] == "Who."
	assert "$defs" not in json.dumps(f.schema)
	assert f.encoded == {"t.tree"}
	assert any("recursive" in n for n in f.notes)


def test_allof_merges_and_oneof_becomes_anyof_only_when_disjoint() -> None:
	"""allOf parts are merged; a tagged oneOf is an anyOf; an untagged one has no strict form."""
	merged = ToolSchema(
		"t.all",
		{
			"allOf": [
				{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
				{"properties": {"b": {"type": "integer"}}, "required": ["b"]},
			]
		},
	)
	cat = {"type": "object", "properties": {"kind": {"const": "cat"}}, "required": ["kind"]}
	dog = {"type": "object", "properties": {"kind": {"const": "dog"}}, "required": ["kind"]}
	tagged = ToolSchema(
		"t.one",
		{"type": "object", "properties": {"pet": {"oneOf": [cat, dog]}}, "required": ["pet"]},
	)
	loose = ToolSchema(
		"t.loose",
		{
			"type": "object",
			"properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "number"}]}},
			"required": ["x"],
		},
	)
	f = fit(env(merged, tagged, loose), REQUIRE_ALL)
	assert input_of(f, "t.all")["required"] == ["a", "b"]
	assert len(input_of(f, "t.one")["properties"]["pet"]["anyOf"]) == 2
	assert f.encoded == {"t.loose"}


def test_a_oneof_whose_tags_are_json_equal_is_not_taken_as_disjoint() -> None:
	"""Tags compare as JSON values: 1 and 1.0, or one object in two key orders, are one tag (a
	value matches both branches, so there is no strict form); true and 1 are two."""

	def tagged(name: str, *tags: object) -> ToolSchema:
		branches = [
			{"type": "object", "properties": {"k": {"const": t}}, "required": ["k"]} for t in tags
		]
		return ToolSchema(
			name,
			{"type": "object", "properties": {"v": {"oneOf": branches}}, "required": ["v"]},
		)

	number = tagged("t.number", 1, 1.0)
	keys = tagged("t.keys", {"a": 1, "b": 2}, {"b": 2, "a": 1})
	enum = ToolSchema(
		"t.enum",
		{
			"type": "object",
			"properties": {
				"v": {
					"oneOf": [
						{
							"type": "object",
							"properties": {"k": {"enum": [2, 3]}},
							"required": ["k"],
						},
						{"type": "object", "properties": {"k": {"enum": [3.0]}}, "required": ["k"]},
					]
				}
			},
			"required": ["v"],
		},
	)
	kinds = tagged("t.kinds", True, 1)
	f = fit(env(number, keys, enum, kinds), REQUIRE_ALL)
	assert f.encoded == {"t.number", "t.keys", "t.enum"}
	assert len(input_of(f, "t.kinds")["properties"]["v"]["anyOf"]) == 2


def test_union_branches_that_need_different_repairs_must_be_told_apart() -> None:
	"""Nulls inside anyOf branches are repaired per branch when the key sets tell them apart."""
	a = {
		"type": "object",
		"properties": {"a": {"type": "string"}, "x": {"type": "string"}},
		"required": ["a"],
	}
	b = {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}
	f = fit(env(tool("t.u", v={"anyOf": [a, b], "_required": True})), REQUIRE_ALL)
	assert f.mode == "strict"
	assert f.restore(call("t.u", {"v": {"a": "1", "x": None}}))["commands"][0]["input"] == {
		"v": {"a": "1"}
	}
	same = {
		"type": "object",
		"properties": {"a": {"type": "integer"}, "x": {"type": "string"}},
		"required": ["x"],
	}
	g = fit(env(tool("t.u", v={"anyOf": [a, same], "_required": True})), REQUIRE_ALL)
	assert g.encoded == {"t.u"}
	assert any("match twice" in n for n in g.notes)


def test_tools_past_a_limit_fall_back_in_order_deterministically() -> None:
	"""Tools are taken in order while the schema fits: later ones fall back, earlier ones stay."""
	small = SchemaDialect(name="small", require_all=True, max_properties=50)
	tools = [tool(f"t.t{i}", **{f"p{j}": {"type": "string"} for j in range(4)}) for i in range(6)]
	f = fit(env(*tools), small)
	assert f.mode == "partial"
	strict = [t.handle for t in tools if t.handle not in f.encoded]
	assert strict and strict == [t.handle for t in tools[: len(strict)]]
	assert all("small limit is 50" in n for n in f.notes)
	assert not small.violations(f.schema)
	assert fit(env(*tools), small) == f  # same agent, same provider: same choice


def test_past_the_optional_budget_a_tool_takes_required_nullable_properties() -> None:
	"""Where optional properties are scarce, a tool may spend unions instead: required + nullable."""
	d = SchemaDialect(name="budget", require_defaults=True, max_optional=1, max_unions=4)
	e = env(tool("t.a", x={"type": "string"}, y={"type": "integer"}))
	f = fit(e, d)
	schema = input_of(f, "t.a")
	assert f.mode == "strict"
	assert schema["required"] == ["x", "y"]
	assert schema["properties"]["y"] == {"type": ["integer", "null"]}
	assert f.restore(call("t.a", {"x": "1", "y": None}))["commands"][0]["input"] == {"x": "1"}
	assert not d.violations(f.schema)


def test_when_nothing_fits_the_mode_is_off_with_the_canonical_schema() -> None:
	"""An envelope past the limits even with every input as text: mode off, canonical schema."""
	tiny = SchemaDialect(name="tiny", max_properties=3)
	e = env(tool("t.a", x={"type": "string"}))
	f = fit(e, tiny)
	assert (f.mode, f.schema) == ("off", e.schema())
	assert "tiny" in f.notes[-1]
	none = fit(e, None)
	assert (none.mode, none.dialect) == ("off", None)


def test_output_schema_strict_encoded_or_any() -> None:
	"""An output schema is fitted; one without a form travels as text (partial); none as any JSON."""
	out = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
	f = fit(env(output=out), REQUIRE_ALL)
	finish = f.schema["properties"]["commands"]["items"]["anyOf"][-1]  # type: ignore[index]
	assert finish["properties"]["output"]["properties"] == {"answer": {"type": "string"}}
	assert (f.mode, f.output_encoded) == ("strict", False)
	free = fit(env(output=OBJ), REQUIRE_ALL)
	assert (free.mode, free.output_encoded) == ("partial", True)
	anything = fit(env(), REQUIRE_ALL)
	assert (anything.mode, anything.output_encoded) == ("strict", True)
	reply = {"commands": [{"type": "finish", "output": '{"a": [1, 2]}'}]}
	assert anything.restore(reply)["commands"][0]["output"] == {"a": [1, 2]}


def test_a_strict_output_leaves_room_for_every_tool() -> None:
	"""The output goes first, but only if every tool still fits, at worst as JSON text."""
	names = {f"o{i}": {"type": "string"} for i in range(10)}
	out = {"type": "object", "properties": names, "required": list(names)}
	free = ToolSchema("t.a", {"type": "object", "properties": {"d": OBJ}})
	all_text = fit(env(free, output=OBJ), REQUIRE_ALL)
	assert all_text.encoded == {"t.a"} and all_text.output_encoded
	limit = SchemaDialect(
		name="limit", require_all=True, max_properties=measure(all_text.schema).properties
	)
	f = fit(env(free, output=out), limit)
	assert (f.mode, f.output_encoded, f.encoded) == ("partial", True, {"t.a"})
	assert any(n.startswith("finish.output sent as JSON text: it would pass") for n in f.notes)


def test_the_envelope_fields_with_defaults_are_required_in_a_require_all_dialect() -> None:
	"""The commands' own optional fields follow the same rules (plan notes, finish status...)."""
	f = fit(env(), REQUIRE_ALL)
	anyof = f.schema["properties"]["commands"]["items"]["anyOf"]  # type: ignore[index]
	plan = next(v for v in anyof if v["properties"]["type"]["const"] == "updatePlan")
	step = plan["properties"]["plan"]["items"]
	assert step["required"] == list(step["properties"])
	reply = {
		"commands": [
			{
				"type": "updatePlan",
				"plan": [{"name": "a", "status": "pending", "notes": "", "subSteps": []}],
			}
		]
	}
	assert f.restore(reply)["commands"][0]["plan"] == [
		{"name": "a", "status": "pending", "notes": "", "subSteps": []}
	]
	assert "subSteps" in step["required"] and step["properties"]["subSteps"]["type"] == "array"


def test_violations_name_each_limit() -> None:
	"""violations() says which limit a schema passes, with the numbers."""
	d = SchemaDialect(name="d", max_depth=1, max_enum_values=1)
	schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"enum": [1, 2]}}}}
	assert d.violations(schema) == (
		"2 levels of nesting (the d limit is 1)",
		"2 enum values (the d limit is 1)",
	)
	assert not SchemaDialect(name="free").violations(schema)


def test_fit_schema_fits_a_whole_schema_or_nothing() -> None:
	"""fit_schema: strict when the whole schema has a form, off otherwise."""
	ok = {"type": "object", "properties": {"a": {"type": "string"}}}
	f = fit_schema(ok, REQUIRE_ALL)
	assert f.mode == "strict"
	assert f.restore({"a": None}) == {}
	assert fit_schema({"type": "object", "properties": {"a": OBJ}}, REQUIRE_ALL).mode == "off"
	assert fit_schema({"type": "string"}, REQUIRE_ALL).mode == "off"


def test_a_very_deep_schema_falls_back_instead_of_recursing() -> None:
	"""A tool schema nested a thousand levels deep has no form; fitting does not blow the stack."""
	deep: dict[str, Any] = {"type": "string"}
	for _ in range(1000):
		deep = {"type": "object", "properties": {"x": deep}, "required": ["x"]}
	f = fit(env(ToolSchema("t.deep", deep)), REQUIRE_ALL)
	assert f.encoded == {"t.deep"}


JSON = st.recursive(
	st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
	lambda inner: (
		st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
	),
	max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(data=JSON, handle=st.sampled_from(["t.a", "t.free", "other", 3]))
def test_restore_takes_any_shape_without_raising(data: Any, handle: Any) -> None:
	"""restore raises nothing but UnsafeJson, whatever the model sent (the loop reports either).

	UnsafeJson comes only from JSON text it decoded (a tool input sent as ``"NaN"``).
	"""
	from openmolt_core._support.jsonsafe import UnsafeJson

	f = fit(env(tool("t.a", x={"type": "string"}), tool("t.free", d=OBJ)), REQUIRE_ALL)
	for reply in (
		data,
		{"commands": data},
		call(handle, data),
		[{"type": "finish", "output": data}],
	):
		try:
			f.restore(copy.deepcopy(reply))
		except UnsafeJson:
			assert isinstance(data, str)  # only a tool input sent as text is decoded here


@pytest.mark.parametrize("dialect", [REQUIRE_ALL, DEFAULTS, OPEN])
def test_restore_leaves_canonical_replies_alone(dialect: SchemaDialect) -> None:
	"""A reply already in canonical form (no added nulls, objects not strings) is unchanged."""
	f = fit(env(tool("t.a", x={"type": "string"}, y={"type": ["integer", "null"]})), dialect)
	reply = {
		"commands": [
			{"type": "callTool", "tool": "t.a", "input": {"x": "1", "y": None}},
			{"type": "finish", "status": "success", "output": {"k": 1}, "humanMessage": ""},
		]
	}
	assert f.restore(copy.deepcopy(reply)) == reply


class _Switching:
	"""A provider whose dialect changes between runs (a server that turned out to refuse schemas)."""

	name = "switching"

	def __init__(self) -> None:
		self.dialect: SchemaDialect | None = REQUIRE_ALL
		self.modes: list[Any] = []

	def schema_dialect(self, model: str) -> SchemaDialect | None:  # one argument: the old form
		return self.dialect

	async def generate(self, request: Any) -> Any:
		from openmolt_core import ModelResponse

		self.modes.append(request.response_mode)
		return ModelResponse(text='{"commands":[{"type":"finish","output":"ok"}]}')


@pytest.mark.anyio
async def test_the_mode_follows_the_providers_dialect_at_every_run() -> None:
	"""A dialect asked at each run: when it goes away, the next run reports off (and its prompt)."""
	from openmolt import OpenMolt

	provider = _Switching()
	agent = OpenMolt(entry_points=False).create_agent(name="S", model=provider)
	await agent.run()
	strict_prompt = agent.system_prompt()
	provider.dialect = None
	await agent.run()
	assert provider.modes == ["strict", "off"]
	assert agent.system_prompt() != strict_prompt and "Examples:" in agent.system_prompt()


@pytest.mark.anyio
async def test_a_constrained_first_turn_leaves_out_input_schemas_and_a_resume_adds_them_back() -> (
	None
):
	"""Strictly fitted tools are listed without inputSchema; resumed unconstrained, the prompt has them."""
	from openmolt import FunctionTool, OpenMolt, RunState

	add = FunctionTool(
		"add",
		"Add.",
		lambda i, c: 1,
		input_schema={
			"type": "object",
			"properties": {"a": {"type": "integer"}},
			"required": ["a"],
			"additionalProperties": False,
		},
	)
	provider = _Switching()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="L", model=provider, tools=[add])
	await agent.run()
	first = json.loads(agent.last_state.messages[0].content)  # type: ignore[union-attr]
	assert first["tools"] == [{"tool": "local.add", "description": "Add."}]
	assert "Input schemas of your tools" not in agent.system_prompt()
	saved = RunState.from_dict(json.loads(json.dumps(agent.last_state.to_dict())))  # type: ignore[union-attr]
	saved.messages.pop()  # go back to before the finish, so the model is asked again

	class Plain:
		name = "plain"

		def __init__(self) -> None:
			self.systems: list[str] = []

		async def generate(self, request: Any) -> Any:
			from openmolt_core import ModelResponse

			self.systems.append(request.system)
			return ModelResponse(text='{"commands":[{"type":"finish","output":"ok"}]}')

	plain = Plain()
	later = om.create_agent(name="L", model=plain, tools=[add])
	saved.messages[-1].content = '{"results":[]}'
	await later.run(history=saved)
	assert 'Input schemas of your tools: {"local.add":' in plain.systems[0]


def test_the_fitted_schema_is_the_same_bytes_whatever_the_hash_seed() -> None:
	"""Assertion keywords keep the schema's order, not a set's: the request (and the provider's
	prompt cache) is the same in every process."""
	import os
	import subprocess
	import sys

	code = (
		"import json\n"
		"from openmolt_core.structured import fit_schema\n"
		"from openmolt_providers.gemini._dialect import dialect_for as gemini\n"
		"from openmolt_providers.openai._dialect import dialect_for as openai\n"
		"n = {'type': 'integer', 'minimum': 1, 'maximum': 9, 'multipleOf': 3}\n"
		"s = {'type': 'string', 'minLength': 1, 'maxLength': 5, 'pattern': '^a'}\n"
		"a = {'type': 'array', 'items': n, 'minItems': 1, 'maxItems': 3, 'uniqueItems': True}\n"
		"schema = {'type': 'object', 'properties': {'n': n, 's': s, 'a': a},"
		" 'required': ['n', 's', 'a'], 'additionalProperties': False}\n"
		"for d in (openai('gpt-5-mini'), gemini('gemini-2.5-flash')):\n"
		"    print(json.dumps(fit_schema(schema, d).schema))\n"
	)
	outputs = set()
	for seed in ("0", "1", "2", "3"):
		env = {**os.environ, "PYTHONHASHSEED": seed}
		done = subprocess.run(
			[sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
		)
		assert done.returncode == 0, done.stderr
		outputs.add(done.stdout)
	assert len(outputs) == 1, outputs


def test_the_array_and_union_repairs_load_only_for_a_schema_that_needs_one() -> None:
	"""A schema with no array or union to repair leaves their classes unbuilt; one that has loads them.

	Each is a frozen dataclass, compiled from generated source when built (about 2 M instructions
	apiece of a one-shot run, whose envelope needs neither).
	"""
	import subprocess
	import sys
	import textwrap

	code = textwrap.dedent(
		"""
		import sys
		from openmolt_core._support import schemafit
		from openmolt_core.envelope import Envelope, ToolSchema
		from openmolt_core.structured import SchemaDialect, fit

		d = SchemaDialect(name="all", require_all=True, max_properties=5000)
		plain = {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
		fit(Envelope.build([ToolSchema("t.a", plain)], output_schema=None, human_input=False), d)
		names = ("ArrayRepair", "Match", "UnionRepair", "kinds_of")
		print(any(n in vars(schemafit) for n in names), "openmolt_core._support.schemarepairs" in sys.modules)
		item = {"type": "object", "properties": {"k": {"type": "string"}}}
		rows = {"type": "object", "properties": {"rows": {"type": "array", "items": item}}, "required": ["rows"]}
		f = fit(Envelope.build([ToolSchema("t.b", rows)], output_schema=None, human_input=False), d)
		call = {"commands": [{"type": "callTool", "tool": "t.b", "input": {"rows": [{"k": None}]}}]}
		print(f.restore(call)["commands"][0]["input"])
		from openmolt_core._support import schemarepairs
		print(all(getattr(schemafit, n) is getattr(schemarepairs, n) for n in names))
		"""
	)
	out = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
	)
	assert out.stdout.split("\n")[:3] == ["False False", "{'rows': [{}]}", "True"]
