"""Estimated cost of a call, from a small table of list prices in US dollars per million tokens.

Source: the providers' pricing pages (https://openai.com/api/pricing,
https://platform.claude.com/docs/en/about-claude/pricing, https://ai.google.dev/gemini-api/docs/pricing)
as collected by pydantic's genai-prices 0.2.3 (``genai_prices/data.py``). We keep our own table
because importing genai-prices costs about a second (1.6 MB of data and its own HTTP client); a
test checks this table against it. Prices are the base tier: prompts past a long-context threshold
(200k or 272k tokens), web searches and batch discounts are not included, so the cost is an estimate.
An unknown model has no cost (``None``) rather than a wrong one.
"""

from __future__ import annotations

import re

__all__ = ["PRICES", "Price", "cost", "price_for"]

Price = tuple[float, float, float, float | None]
"""(input, cached input read, output, cache write) in USD per million tokens."""

PRICES: dict[str, dict[str, Price]] = {
	"openai": {
		"gpt-5.5": (5.0, 0.5, 30.0, None),
		"gpt-5.4": (2.5, 0.25, 15.0, None),
		"gpt-5.4-mini": (0.75, 0.075, 4.5, None),
		"gpt-5.2": (1.75, 0.175, 14.0, None),
		"gpt-5.1": (1.25, 0.125, 10.0, None),
		"gpt-5": (1.25, 0.125, 10.0, None),
		"gpt-5-mini": (0.25, 0.025, 2.0, None),
		"gpt-5-nano": (0.05, 0.005, 0.4, None),
		"gpt-4.1": (2.0, 0.5, 8.0, None),
		"gpt-4.1-mini": (0.4, 0.1, 1.6, None),
		"gpt-4.1-nano": (0.1, 0.025, 0.4, None),
		"gpt-4o": (2.5, 1.25, 10.0, None),
		"gpt-4o-mini": (0.15, 0.075, 0.6, None),
		"o4-mini": (1.1, 0.275, 4.4, None),
		"o3-mini": (1.1, 0.55, 4.4, None),
	},
	"anthropic": {
		"claude-opus-5": (5.0, 0.5, 25.0, 6.25),
		"claude-sonnet-5": (2.0, 0.2, 10.0, 2.5),
		"claude-opus-4-7": (5.0, 0.5, 25.0, 6.25),
		"claude-opus-4-6": (5.0, 0.5, 25.0, 6.25),
		"claude-sonnet-4-6": (3.0, 0.3, 15.0, 3.75),
		"claude-opus-4-5": (5.0, 0.5, 25.0, 6.25),
		"claude-sonnet-4-5": (3.0, 0.3, 15.0, 3.75),
		"claude-haiku-4-5": (1.0, 0.1, 5.0, 1.25),
		"claude-opus-4-1": (15.0, 1.5, 75.0, 18.75),
		"claude-sonnet-4-0": (3.0, 0.3, 15.0, 3.75),
	},
	"google": {
		"gemini-3.1-pro-preview": (2.0, 0.2, 12.0, None),
		"gemini-3-pro-preview": (2.0, 0.2, 12.0, None),
		"gemini-3-flash-preview": (0.5, 0.05, 3.0, None),
		"gemini-2.5-pro": (1.25, 0.125, 10.0, None),
		"gemini-2.5-flash": (0.3, 0.03, 2.5, None),
		"gemini-2.5-flash-lite": (0.1, 0.01, 0.4, None),
		"gemini-2.0-flash": (0.1, 0.025, 0.4, None),
	},
}

_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")
_ALIASES = {"claude-sonnet-4": "claude-sonnet-4-0"}
_cache: dict[tuple[str, str], Price | None] = {}


def price_for(provider: str, model: str) -> Price | None:
	"""The list price of a model, ignoring a date or ``-latest`` suffix; None when unknown."""
	key = (provider, model)
	if key not in _cache:
		table = PRICES.get(provider, {})
		base = _SUFFIX.sub("", model.rsplit("/", 1)[-1])
		_cache[key] = table.get(base) or table.get(_ALIASES.get(base, ""))
	return _cache[key]


def cost(
	provider: str,
	model: str,
	*,
	input_tokens: int,
	output_tokens: int,
	cached_tokens: int = 0,
	cache_write_tokens: int = 0,
) -> float | None:
	"""Estimate the cost of one call in US dollars.

	Args:
		provider: ``openai``, ``anthropic`` or ``google``.
		model: The model name.
		input_tokens: All prompt tokens, cached and cache-written ones included.
		output_tokens: All output tokens, reasoning included.
		cached_tokens: Prompt tokens read from the cache.
		cache_write_tokens: Prompt tokens written to the cache (Anthropic).

	Returns:
		The cost, or None when the model's price is unknown.
	"""
	price = price_for(provider, model)
	if price is None:
		return None
	inp, cached, out, write = price
	fresh = max(input_tokens - cached_tokens - cache_write_tokens, 0)
	total = (
		fresh * inp
		+ cached_tokens * cached
		+ cache_write_tokens * (write if write is not None else inp)
		+ output_tokens * out
	)
	return round(total / 1_000_000, 10)
