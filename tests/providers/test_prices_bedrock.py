"""Claude ids as Amazon Bedrock writes them are priced, as genai-prices prices them on Bedrock.

``anthropic.claude-sonnet-4-5-20250929-v1:0``, its cross-region profiles (``us.``, ``eu.``,
``global.``...) and the bare ``anthropic.claude-opus-4-7`` had no price (genai-prices matches them
under its ``aws`` provider, not ``anthropic``), so an agent on one was refused ``max_cost`` at
creation and its runs reported no cost. They cost what genai-prices says for Bedrock: a regional
endpoint 10% more than Anthropic's API for the Claude 4.5 models and later, ``global.`` the same.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from openmolt_providers._price_table import MATCH
from openmolt_providers._prices import cost, price_for
from openmolt_providers.anthropic import AnthropicProvider


def _named(rule: tuple[Any, ...]) -> list[str]:
	"""The ids a match rule names: its ``equals`` and ``starts_with`` clauses."""
	kind, value = rule
	if kind in ("or", "and"):
		return [name for r in value for name in _named(r)]
	return [str(value)] if kind in ("equals", "starts_with") else []


BEDROCK = sorted(
	{
		name
		for rule, _, model in MATCH["anthropic"]
		if ".anthropic.claude" in model
		for name in _named(rule)
		if "anthropic.claude" in name
	}
)
"""Every Bedrock spelling genai-prices names (``anthropic.claude-opus-4-7``,
``us.anthropic.claude-haiku-5-5``...)."""

SPELLINGS = [
	"anthropic.claude-sonnet-4-5-20250929-v1:0",
	"us.anthropic.claude-sonnet-4-5-20250929-v1:0",
	"eu.anthropic.claude-sonnet-4-6",
	"global.anthropic.claude-haiku-4-5-20251001-v1:0",
	"global.anthropic.claude-opus-4-7-v1:0",
	"anthropic.claude-3-5-sonnet-20241022-v2:0",
	"apac.anthropic.claude-3-7-sonnet-20250219-v1:0",
	"us.anthropic.claude-opus-4-7-v1",
	"jp.anthropic.claude-sonnet-4-5-20250929-v1:0",
]
"""The ids of Anthropic's "Claude on Amazon Bedrock" page and its cross-region profiles."""


def test_the_bedrock_entries_are_read() -> None:
	"""The table holds genai-prices' Bedrock entries of Claude (else nothing below is tested)."""
	assert len(BEDROCK) > 20


@pytest.mark.parametrize("model", [*SPELLINGS, *BEDROCK])
def test_a_bedrock_claude_id_costs_what_genai_prices_says_on_bedrock(model) -> None:
	"""Input, cache reads, cache writes and output at Bedrock's price for that id."""
	from genai_prices import Usage, calc_price

	ours = cost(
		"anthropic",
		model,
		input_tokens=10_000,
		output_tokens=2_000,
		cached_tokens=4_000,
		cache_write_tokens=1_000,
	)
	usage = Usage(
		input_tokens=10_000, output_tokens=2_000, cache_read_tokens=4_000, cache_write_tokens=1_000
	)
	theirs = calc_price(usage, model, provider_id="aws").total_price
	assert ours is not None
	assert ours == pytest.approx(float(theirs), rel=1e-6)


def test_a_regional_endpoint_costs_more_than_anthropics_api() -> None:
	"""Bedrock's regional Claude Sonnet 4.5 is 10% dearer than the same model at Anthropic."""
	anthropic = price_for("anthropic", "claude-sonnet-4-5-20250929")
	regional = price_for("anthropic", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
	assert anthropic is not None and regional is not None
	assert regional[0] == pytest.approx(anthropic[0] * 1.1)
	assert regional[2] == pytest.approx(anthropic[2] * 1.1)


def test_the_listed_models_are_still_anthropics() -> None:
	"""``openmolt models`` lists what Anthropic's API serves: no Bedrock id among them."""
	provider = AnthropicProvider({"api_key": "sk-ant-test"}, httpx.AsyncClient)
	assert provider.models()
	assert not [m for m in provider.models() if "anthropic." in m]


def test_an_agent_on_bedrock_claude_may_have_a_cost_budget() -> None:
	"""``max_cost`` is accepted for a Bedrock Claude id (it was refused: 'price unknown')."""
	from openmolt import OpenMolt

	om = OpenMolt(llm_providers={"anthropic": {"api_key": "sk-ant-test"}})
	agent = om.create_agent(
		name="Bedrock",
		model="anthropic:us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		max_cost=1.0,
	)
	assert agent.name == "Bedrock"


@pytest.mark.parametrize(
	"model",
	[
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"anthropic.claude-opus-4-7",
		"global.anthropic.claude-haiku-4-5-20251001-v1:0",
	],
)
def test_a_bedrock_claude_id_has_claudes_context_window(model) -> None:
	"""The window is Claude's (200k), not unknown (the 128k assumed when none is known)."""
	provider = AnthropicProvider({"api_key": "sk-ant-test"}, httpx.AsyncClient)
	assert provider.context_window(model) == provider.context_window("claude-sonnet-4-5")


@pytest.mark.parametrize(
	("model", "named"),
	[
		("anthropic.claude-3-7-sonnet-latest-v1:0", "claude-3-7-sonnet-latest"),
		("global.anthropic.claude-opus-4-1", "claude-opus-4-1"),
	],
)
def test_a_bedrock_id_genai_prices_misses_is_priced_as_the_model_it_names(model, named) -> None:
	"""Bedrock's entries first; an id they miss costs what the Claude model it names costs at
	Anthropic (it had no price: max_cost refused)."""
	assert price_for("anthropic", model) == price_for("anthropic", named) is not None


def test_an_unknown_claude_on_bedrock_has_no_price() -> None:
	assert price_for("anthropic", "us.anthropic.claude-nonesuch-9-v1:0") is None


def _version(claude: str) -> tuple[int, int] | None:
	"""A Claude id's (major, minor) version (``claude-opus-4-5``: (4, 5)), or None."""
	found = re.match(r"claude-(?:[a-z]+-)?(\d+)(?:-(\d{1,2}))?(?=-|$)", claude)
	return (int(found.group(1)), int(found.group(2) or 0)) if found else None


REGIONAL = [
	(model, price, named)
	for rule, price, model in MATCH["anthropic"]
	if model.startswith("regional.anthropic.claude-")
	for named in [model.removeprefix("regional.anthropic.").split("-v1")[0]]
	if (_version(named) or (0, 0)) >= (4, 5)
]
"""genai-prices' regional Bedrock entries of Claude 4.5 and later: (its id, its price, the
Claude model it names)."""


def test_genai_prices_regional_premium_is_a_tenth() -> None:
	"""Each regional Claude >= 4.5 entry costs 10% more than Anthropic's API, every field: the
	premium `openmolt_providers._prices.REGIONAL_PREMIUM` applies where genai-prices has none."""
	from openmolt_providers._prices import REGIONAL_PREMIUM

	assert len(REGIONAL) > 5
	for model, price, named in REGIONAL:
		anthropic = price_for("anthropic", named)
		assert anthropic is not None, named
		scaled = tuple(None if p is None else p * REGIONAL_PREMIUM for p in anthropic)
		assert price == pytest.approx(scaled), model


@pytest.mark.parametrize(
	("model", "named"),
	[
		# Profiles genai-prices' Bedrock entries leave out (Opus 4.8: no apac., no in.; Sonnet 4.5:
		# no in.), and an id they miss (no date) at a regional profile or the in-region endpoint.
		("apac.anthropic.claude-opus-4-8-v1:0", "claude-opus-4-8"),
		("in.anthropic.claude-opus-4-8-v1:0", "claude-opus-4-8"),
		("in.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"),
		("us.anthropic.claude-sonnet-4-5-v1:0", "claude-sonnet-4-5"),
		("anthropic.claude-sonnet-4-5-v1:0", "claude-sonnet-4-5"),
		("in.anthropic.claude-haiku-5-5-v1:0", "claude-haiku-5-5"),
	],
)
def test_a_regional_claude_id_genai_prices_misses_pays_the_regional_premium(model, named) -> None:
	"""A regional Claude >= 4.5 id genai-prices lacks was priced at Anthropic's API, 10% below
	what its regional neighbours cost: now at their premium, in the budget and the call's cost."""
	anthropic = price_for("anthropic", named)
	regional = price_for("anthropic", model)
	assert anthropic is not None and regional is not None
	assert regional == pytest.approx(tuple(None if p is None else p * 1.1 for p in anthropic))
	spent = cost("anthropic", model, input_tokens=10_000, output_tokens=1_000)
	assert spent == pytest.approx((10_000 * anthropic[0] + 1_000 * anthropic[2]) * 1.1 / 1e6)


@pytest.mark.parametrize(
	("model", "named"),
	[
		("global.anthropic.claude-opus-4-9-v1:0", "claude-opus-4-9"),
		("global.anthropic.claude-sonnet-4-5-v1:0", "claude-sonnet-4-5"),
		("in.anthropic.claude-opus-4-1-v1:0", "claude-opus-4-1"),
		("us.anthropic.claude-3-7-sonnet-latest-v1:0", "claude-3-7-sonnet-latest"),
	],
)
def test_a_global_or_older_claude_id_genai_prices_misses_pays_anthropics_price(
	model, named
) -> None:
	"""``global.`` and Claude before 4.5 cost on Bedrock what they cost at Anthropic."""
	assert price_for("anthropic", model) == price_for("anthropic", named)


def test_past_the_long_context_tier_the_premium_holds() -> None:
	"""A regional id priced from Anthropic's Sonnet 4.5 pays the premium on its long-context tier
	too (not Anthropic's own tier price)."""
	tier = price_for("anthropic", "claude-sonnet-4-5", 300_000)
	regional = price_for("anthropic", "us.anthropic.claude-sonnet-4-5-v1:0", 300_000)
	assert (
		tier is not None
		and regional is not None
		and tier != price_for("anthropic", "claude-sonnet-4-5")
	)
	assert regional == pytest.approx(tuple(None if p is None else p * 1.1 for p in tier))
