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


def table(
	now: datetime | None = None,
) -> dict[str, dict[str, tuple[float, float, float, float | None]]]:
	"""The token prices genai-prices gives each model now: (input, cached, output, write)."""
	from genai_prices import data_snapshot

	when = now or datetime.now(UTC)
	out: dict[str, dict[str, tuple[float, float, float, float | None]]] = {}
	for provider in data_snapshot.get_snapshot().providers:
		if provider.id not in PROVIDERS:
			continue
		name, keep = PROVIDERS[provider.id]
		models: dict[str, tuple[float, float, float, float | None]] = {}
		for model in provider.models:
			if not keep(model.id):
				continue
			price = model.get_prices(when)
			inp, outp = _base(price.input_mtok), _base(price.output_mtok)
			if inp is None or outp is None:
				continue  # not priced per token (images, audio minutes, embeddings)
			cached = _base(price.cache_read_mtok)
			models[model.id] = (
				inp,
				inp if cached is None else cached,
				outp,
				_base(price.cache_write_mtok),
			)
		out[name] = dict(sorted(models.items()))
	return out


def render(prices: dict[str, dict[str, tuple[float, float, float, float | None]]]) -> str:
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
		'__all__ = ["PRICES"]',
		"",
		"PRICES: dict[str, dict[str, tuple[float, float, float, float | None]]] = {",
	]
	for provider, models in prices.items():
		lines.append(f'\t"{provider}": {{')
		lines += [f'\t\t"{model}": {price!r},' for model, price in models.items()]
		lines.append("\t},")
	lines.append("}")
	return "\n".join(lines) + "\n"


if __name__ == "__main__":
	TABLE.write_text(render(table()), encoding="utf-8")
	print(f"wrote {TABLE} ({sum(len(m) for m in table().values())} models)", file=sys.stderr)
