from __future__ import annotations

import pytest

from openmolt_providers._prices import PRICES, cost, price_for
from openmolt_providers._schema import const_to_enum, strict_schema


def test_strict_schema_closes_objects_and_rewrites_const() -> None:
	"""Objects get additionalProperties false; const becomes a typed one-value enum."""
	schema = {
		"type": "object",
		"properties": {"a": {"const": "x"}, "b": {"type": "array", "items": {"type": "integer"}}},
		"required": ["a", "b"],
	}
	assert strict_schema(schema, require_all=True) == {
		"type": "object",
		"properties": {
			"a": {"enum": ["x"], "type": "string"},
			"b": {"type": "array", "items": {"type": "integer"}},
		},
		"required": ["a", "b"],
		"additionalProperties": False,
	}


@pytest.mark.parametrize(
	"schema",
	[
		{"type": "object"},
		{"type": "object", "properties": {"a": {"type": "string"}}},
		{"type": "object", "properties": {"a": {}}, "required": ["a"]},
		{
			"type": "object",
			"properties": {"a": {"type": "string"}},
			"required": ["a"],
			"additionalProperties": True,
		},
		{"oneOf": [{"type": "string"}]},
		{"type": "array"},
	],
)
def test_schemas_without_strict_form(schema) -> None:
	"""Free-form objects, optional properties (in require_all mode) and oneOf have no strict form."""
	assert strict_schema(schema, require_all=True) is None


def test_optional_properties_allowed_without_require_all() -> None:
	"""Anthropic's dialect allows optional properties; unsupported constraints are dropped."""
	schema = {
		"type": "object",
		"properties": {
			"n": {"type": "integer", "minimum": 1},
			"l": {"type": "array", "items": {"type": "string"}, "minItems": 3},
		},
	}
	out = strict_schema(schema, require_all=False, drop=frozenset({"minimum"}), max_min_items=1)
	assert out is not None
	assert out["properties"]["n"] == {"type": "integer"}
	assert out["properties"]["l"]["minItems"] == 1


def test_const_to_enum_is_deep() -> None:
	"""const is rewritten at any depth, enum lists are left alone."""
	schema = {"anyOf": [{"properties": {"t": {"const": 1}}}], "enum": [{"const": 2}]}
	assert const_to_enum(schema) == {
		"anyOf": [{"properties": {"t": {"enum": [1], "type": "integer"}}}],
		"enum": [{"const": 2}],
	}


def test_unknown_model_has_no_cost() -> None:
	"""An unknown model gives None, a dated id finds its base price."""
	assert cost("openai", "my-finetune", input_tokens=10, output_tokens=10) is None
	assert (
		price_for("anthropic", "claude-sonnet-4-5-20250929")
		== PRICES["anthropic"]["claude-sonnet-4-5"]
	)
	assert price_for("openai", "gpt-5-mini-2025-08-07") == PRICES["openai"]["gpt-5-mini"]


@pytest.mark.parametrize(("provider", "model"), [(p, m) for p, t in PRICES.items() for m in t])
def test_price_table_matches_genai_prices(provider, model) -> None:
	"""Our small price table agrees with genai-prices for every model in it."""
	from genai_prices import Usage, calc_price

	ours = cost(
		provider,
		model,
		input_tokens=10_000,
		output_tokens=2_000,
		cached_tokens=4_000,
		cache_write_tokens=1_000 if provider == "anthropic" else 0,
	)
	usage = Usage(
		input_tokens=10_000,
		output_tokens=2_000,
		cache_read_tokens=4_000,
		cache_write_tokens=1_000 if provider == "anthropic" else 0,
	)
	theirs = calc_price(usage, model, provider_id=provider).total_price
	assert ours == pytest.approx(float(theirs), rel=1e-6)
