"""Write openmolt_providers/_price_table.py from genai-prices: ``uv run nox -s prices``.

genai-prices (pydantic's price database) is the source of the providers' list prices, but it is
not imported at run time (it costs about a second and pulls its own HTTP client): this script
copies the current token prices of OpenAI, Anthropic and Gemini models into a plain dict, and
tests/providers/test_schema_prices.py fails when the committed table differs from what the
locked genai-prices says, so a genai-prices update in uv.lock is a table update too.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TABLE = (
	Path(__file__).resolve().parents[2]
	/ "openmolt_providers/src/openmolt_providers/_price_table.py"
)

# genai-prices provider id -> our provider name, and which model ids belong to that provider's API.
PROVIDERS = {
	"openai": ("openai", lambda m: not any(c in m for c in ":/") and not m.endswith("-")),
	"anthropic": ("anthropic", lambda m: m.startswith("claude-")),
	"google": ("google", lambda m: m.startswith("gemini-")),
}


def _base(value: Any) -> float | None:
	if value is None:
		return None
	return float(getattr(value, "base", value))  # a tiered price: its base tier


Price = tuple[float, float, float, float | None]


def _priced(
	now: datetime | None = None,
) -> dict[str, list[tuple[str, Any, Price]]]:
	"""Every model genai-prices prices per token, by our provider name, in its matching order:
	(model id, its match rule, its price now)."""
	from genai_prices import data_snapshot

	when = now or datetime.now(UTC)
	out: dict[str, list[tuple[str, Any, Price]]] = {}
	for provider in data_snapshot.get_snapshot().providers:
		if provider.id not in PROVIDERS:
			continue
		name, _ = PROVIDERS[provider.id]
		models = out.setdefault(name, [])
		for model in provider.models:
			price = model.get_prices(when)
			inp, outp = _base(price.input_mtok), _base(price.output_mtok)
			if inp is None or outp is None:
				continue  # not priced per token (images, audio minutes, embeddings)
			cached = _base(price.cache_read_mtok)
			models.append(
				(
					model.id,
					model.match,
					(inp, inp if cached is None else cached, outp, _base(price.cache_write_mtok)),
				)
			)
	return out


def table(now: datetime | None = None) -> dict[str, dict[str, Price]]:
	"""The token prices genai-prices gives each model now: (input, cached, output, write)."""
	return {
		provider: dict(sorted((m, price) for m, _, price in models if PROVIDERS[provider][1](m)))
		for provider, models in _priced(now).items()
	}


def _clause(match: Any) -> tuple[Any, ...]:
	"""A genai-prices match rule as plain tuples: ``(kind, text)``, ``("or"|"and", (rules))``."""
	for kind in ("starts_with", "ends_with", "contains", "regex", "equals"):
		if hasattr(match, kind):
			return (kind, getattr(match, kind))
	kind = "or" if hasattr(match, "or_") else "and"
	return (kind, tuple(_clause(c) for c in getattr(match, f"{kind}_")))


def rules(now: datetime | None = None) -> dict[str, tuple[tuple[tuple[Any, ...], Price], ...]]:
	"""Each provider's match rules in genai-prices' order, each with its model's price."""
	return {
		provider: tuple((_clause(match), price) for _, match, price in models)
		for provider, models in _priced(now).items()
	}


def render(
	prices: dict[str, dict[str, Price]],
	matches: dict[str, tuple[tuple[tuple[Any, ...], Price], ...]],
) -> str:
	"""The module text for a table."""
	from importlib.metadata import version

	lines = [
		'"""List prices per million tokens: (input, cached input, output, cache write), in USD.',
		"",
		f"Generated from genai-prices {version('genai-prices')} by tests/providers/update_prices.py",
		"(``uv run nox -s prices``); do not edit by hand. Tiered prices are their base tier.",
		'"""',
		"",
		"from __future__ import annotations",
		"",
		"from typing import Any",
		"",
		'__all__ = ["MATCH", "PRICES"]',
		"",
		"PRICES: dict[str, dict[str, tuple[float, float, float, float | None]]] = {",
	]
	for provider, models in prices.items():
		lines.append(f'\t"{provider}": {{')
		lines += [f'\t\t"{model}": {price!r},' for model, price in models.items()]
		lines.append("\t},")
	lines += [
		"}",
		'"""The models listed (``openmolt models``) and looked up by their exact id."""',
		"",
		"MATCH: dict[str, tuple[tuple[Any, tuple[float, float, float, float | None]], ...]] = {",
	]
	for provider, entries in matches.items():
		lines.append(f'\t"{provider}": (')
		lines += [f"\t\t({clause!r}, {price!r})," for clause, price in entries]
		lines.append("\t),")
	lines += [
		"}",
		'"""genai-prices\' match rules in its order, each with its model\'s price: an id that is not',
		"in `PRICES` (a fine-tune ``ft:gpt-4o-mini-2024-07-18:org::id``, a dated preview, another",
		"spelling) is priced as genai-prices prices it. A rule: ``(kind, text)`` with kind",
		'``starts_with``, ``ends_with``, ``contains``, ``regex`` or ``equals``, or ``("or" | "and",',
		'rules)``."""',
	]
	return "\n".join(lines) + "\n"


if __name__ == "__main__":
	TABLE.write_text(render(table(), rules()), encoding="utf-8")
	print(f"wrote {TABLE} ({sum(len(m) for m in table().values())} models)", file=sys.stderr)
