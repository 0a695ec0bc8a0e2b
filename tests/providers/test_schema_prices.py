from __future__ import annotations

import pytest

from openmolt_providers._prices import PRICES, cost, price_for


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
