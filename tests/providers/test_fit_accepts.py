"""Fitting never narrows what a tool accepts: every built-in tool, on every dialect.

For each built-in integration tool (loaded through the ``openmolt.integrations`` entry points),
values valid under its input schema (generated, then confirmed with ``jsonschema``) must pass the
input schema each dialect is sent: exactly, or as JSON text where the dialect has no form (the
documented fallback, with a note). Two relaxations mirror the fitter's documented rules: a
property the dialect makes required is filled by the model with ``null`` or its default (the
repair removes it), so ``required`` is not compared; and an object that lists ``properties`` is
sent with those properties only, so generated values carry no undeclared keys.
"""

from __future__ import annotations

import copy
import json
from importlib.metadata import entry_points
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.structured import SchemaDialect, fit
from openmolt_providers.anthropic._dialect import ANTHROPIC
from openmolt_providers.gemini._dialect import GEMINI
from openmolt_providers.openai._dialect import OPENAI, OPENAI_FINE_TUNED

DIALECTS = [OPENAI, OPENAI_FINE_TUNED, ANTHROPIC, GEMINI]

_ANY = st.recursive(
	st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
	lambda inner: (
		st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
	),
	max_leaves=4,
)


def builtin_tools() -> list[ToolSchema]:
	tools = []
	for point in sorted(entry_points(group="openmolt.integrations"), key=lambda p: p.name):
		integration = getattr(point.load(), "INTEGRATION", None)
		for tool in getattr(integration, "tools", ()):
			tools.append(ToolSchema(f"{point.name}.{tool.handle}", tool.input_schema))
	return tools


TOOLS = builtin_tools()


def _resolve(root: Any, ref: str) -> Any:
	node = root
	for part in ref[2:].split("/"):
		node = node[part.replace("~1", "/").replace("~0", "~")]
	return node


def instances(schema: Any, root: Any, depth: int = 0) -> st.SearchStrategy[Any]:
	"""Values meant to be valid under ``schema`` (confirmed by the caller with jsonschema)."""
	if not isinstance(schema, dict) or depth > 12:
		return _ANY
	if "$ref" in schema:
		target = _resolve(root, schema["$ref"])
		rest = {k: v for k, v in schema.items() if k != "$ref"}
		return instances({**target, **rest}, root, depth + 1)
	if "allOf" in schema:
		merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
		for part in schema["allOf"]:
			part = _resolve(root, part["$ref"]) if "$ref" in part else part
			props = {**merged.get("properties", {}), **part.get("properties", {})}
			merged = {**merged, **part, "properties": props}
		return instances(merged, root, depth + 1)
	if "const" in schema:
		return st.just(schema["const"])
	if "enum" in schema:
		return st.sampled_from(schema["enum"])
	for key in ("anyOf", "oneOf"):
		if key in schema:
			return st.one_of([instances(s, root, depth + 1) for s in schema[key]])
	kind = schema.get("type")
	if isinstance(kind, list):
		return st.one_of([instances({**schema, "type": k}, root, depth + 1) for k in kind])
	if kind == "object" or "properties" in schema:
		props = schema.get("properties") or {}
		extra = schema.get("additionalProperties", True)
		if not props and extra is not False:
			values = instances(extra, root, depth + 1) if isinstance(extra, dict) else _ANY
			return st.dictionaries(st.text(min_size=1, max_size=5), values, max_size=3)
		required = set(schema.get("required", []))
		return st.fixed_dictionaries(
			{k: instances(v, root, depth + 1) for k, v in props.items() if k in required},
			optional={
				k: instances(v, root, depth + 1) for k, v in props.items() if k not in required
			},
		)
	if kind == "array":
		items = schema.get("items", {})
		return st.lists(
			instances(items, root, depth + 1),
			min_size=min(schema.get("minItems", 0), 3),
			max_size=min(schema.get("maxItems", 3), 3),
		)
	if kind == "string":
		return st.text(max_size=8)
	if kind in ("integer", "number"):
		low = int(schema.get("minimum", -10))
		# A range given only from below (Discord's bitrate: minimum 8000) starts at its minimum.
		return st.integers(low, int(schema.get("maximum", max(low, 0) + 100)))
	if kind == "boolean":
		return st.booleans()
	if kind == "null":
		return st.none()
	return _ANY


def _without_required(schema: Any) -> Any:
	if isinstance(schema, dict):
		return {k: _without_required(v) for k, v in schema.items() if k != "required"}
	if isinstance(schema, list):
		return [_without_required(v) for v in schema]
	return schema


_SENT: dict[tuple[str, str], tuple[dict[str, Any], list[str]]] = {}


def sent_input(tool: ToolSchema, dialect: SchemaDialect) -> tuple[dict[str, Any], list[str]]:
	"""The input schema a dialect is sent for one tool, and the fitting notes (cached)."""
	key = (tool.handle, dialect.name)
	if key not in _SENT:
		_SENT[key] = _sent_input(tool, dialect)
	return _SENT[key]


def _sent_input(tool: ToolSchema, dialect: SchemaDialect) -> tuple[dict[str, Any], list[str]]:
	fitted = fit(
		Envelope.build([copy.deepcopy(tool)], output_schema=None, human_input=False), dialect
	)
	assert fitted.schema is not None, fitted.notes
	for v in fitted.schema["properties"]["commands"]["items"]["anyOf"]:
		tag = v["properties"].get("tool", {})
		if tool.handle in (tag.get("const"), *tag.get("enum", ())):
			sent = v["properties"]["input"]
			if "$defs" in fitted.schema:  # recursive definitions (OpenAI) sit at the root
				sent = {**sent, "$defs": fitted.schema["$defs"]}
			return sent, list(fitted.notes)
	raise AssertionError(tool.handle)


def test_every_integration_is_covered() -> None:
	"""The entry points bring in the built-in integrations' tools."""
	assert len(TOOLS) > 300
	assert {"github.dispatchWorkflow", "notion.updatePage", "shopify.graphql"} <= {
		t.handle for t in TOOLS
	}


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.handle)
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_what_a_tool_accepts_the_fitted_schema_lets_through(tool: ToolSchema, data: Any) -> None:
	"""Any value the tool's schema accepts passes what each dialect is sent (or its JSON text)."""
	schema = tool.input_schema
	value = data.draw(instances(schema, schema))
	try:
		jsonschema.Draft202012Validator(schema).validate(value)
	except jsonschema.ValidationError:
		return  # the generator does not know every keyword (pattern, format...): not a case
	for dialect in DIALECTS:
		sent, notes = sent_input(tool, dialect)
		if sent.get("type") == "string" and "JSON text" in sent.get("description", ""):
			assert any(n.startswith(f"{tool.handle}: input sent as JSON text") for n in notes)
			jsonschema.validate(json.dumps(value), sent)
			continue
		try:
			jsonschema.Draft202012Validator(_without_required(sent)).validate(value)
		except jsonschema.ValidationError as exc:
			raise AssertionError(
				f"{dialect.name} narrows {tool.handle}: {json.dumps(value)[:200]} is valid for "
				f"the tool but not for the schema sent: {exc.message}"
			) from None
