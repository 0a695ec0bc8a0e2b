"""Write openmolt_providers/_price_table.py from genai-prices: ``uv run nox -s prices``.

genai-prices (pydantic's price database) is the source of the providers' list prices, but it is
not imported at run time (it costs about a second and pulls its own HTTP client): this script
copies the current token prices of OpenAI, Anthropic and Gemini models into a plain dict, and
tests/providers/test_schema_prices.py fails when the committed table differs from what the
locked genai-prices says, so a genai-prices update in uv.lock is a table update too.
"""

from __future__ import annotations

import re
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

MATCHED_ONLY = {"aws": ("anthropic", lambda m: ".anthropic.claude-" in m)}
"""genai-prices providers whose models are matched (priced, tiered) as one of ours, never listed:
Amazon Bedrock's Claude models (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``, the
``global.`` profiles, the bare ``anthropic.claude-...``) at Bedrock's prices (a regional
endpoint costs 10% more than Anthropic's API for the Claude 4.5 models and later). After our
provider's own rules, as genai-prices would read them with ``provider_id="aws"``."""


def _ours(provider: str, model: str) -> str | None:
	"""Our provider name for a genai-prices model whose price we match, or None."""
	if provider in PROVIDERS:
		return PROVIDERS[provider][0]
	name, belongs = MATCHED_ONLY.get(provider, ("", lambda m: False))
	return name if belongs(model) else None


def _base(value: Any) -> float | None:
	if value is None:
		return None
	return float(getattr(value, "base", value))  # a tiered price: its base tier


def _at(value: Any, prompt: int) -> float | None:
	"""A price for a prompt of this many tokens: past a tier's start, the tier's (all tokens)."""
	if value is None:
		return None
	for tier in reversed(getattr(value, "tiers", ())):
		if prompt > tier.start:
			return float(tier.price)
	return _base(value)


Price = tuple[float, float, float, float | None]

_FIELDS = ("input_mtok", "cache_read_mtok", "output_mtok", "cache_write_mtok")


def _price(price: Any, prompt: int = 0) -> Price | None:
	"""(input, cached, output, write) for a prompt of ``prompt`` tokens; None: not per token."""
	inp, cached, outp, write = (_at(getattr(price, f), prompt) for f in _FIELDS)
	if inp is None or outp is None:
		return None  # not priced per token (images, audio minutes, embeddings)
	return (inp, inp if cached is None else cached, outp, write)


def _tiers(price: Any) -> tuple[tuple[int, Price], ...]:
	"""The prices past each tier's start, in ascending order: genai-prices' "cliff" model,
	where a prompt past the start pays the tier's price for all its tokens (every field's)."""
	starts = sorted({t.start for f in _FIELDS for t in getattr(getattr(price, f), "tiers", ())})
	out = []
	for start in starts:
		tier = _price(price, start + 1)
		if tier is not None:
			out.append((start, tier))
	return tuple(out)


def _priced(
	now: datetime | None = None,
) -> dict[str, list[tuple[str, Any, Price]]]:
	"""Every model genai-prices prices per token, by our provider name, in its matching order:
	(model id, its match rule, its price now)."""
	from genai_prices import data_snapshot

	when = now or datetime.now(UTC)
	out: dict[str, list[tuple[str, Any, Price]]] = {}
	for provider in data_snapshot.get_snapshot().providers:
		for model in provider.models:
			name = _ours(provider.id, model.id)
			price = _price(model.get_prices(when)) if name is not None else None
			if name is not None and price is not None:
				out.setdefault(name, []).append((model.id, model.match, price))
	return out


def tiers(now: datetime | None = None) -> dict[str, dict[str, tuple[tuple[int, Price], ...]]]:
	"""Each provider's tiered models by genai-prices id: their prices past each threshold."""
	from genai_prices import data_snapshot

	when = now or datetime.now(UTC)
	out: dict[str, dict[str, tuple[tuple[int, Price], ...]]] = {}
	for provider in data_snapshot.get_snapshot().providers:
		if provider.id in PROVIDERS:
			out.setdefault(PROVIDERS[provider.id][0], {})
		for model in provider.models:
			name = _ours(provider.id, model.id)
			price = model.get_prices(when) if name is not None else None
			if name is not None and _price(price) is not None and _tiers(price):
				out.setdefault(name, {})[model.id] = _tiers(price)
	return {provider: dict(sorted(models.items())) for provider, models in out.items()}


def _listed(provider: str, model: str) -> bool:
	"""Whether our provider lists a model genai-prices prices for it (its own API's ids)."""
	return next(listed for name, listed in PROVIDERS.values() if name == provider)(model)


def table(now: datetime | None = None) -> dict[str, dict[str, Price]]:
	"""The token prices genai-prices gives each model now: (input, cached, output, write)."""
	return {
		provider: dict(sorted((m, price) for m, _, price in models if _listed(provider, m)))
		for provider, models in _priced(now).items()
	}


def _clause(match: Any) -> tuple[Any, ...]:
	"""A genai-prices match rule as plain tuples: ``(kind, text)``, ``("or"|"and", (rules))``."""
	for kind in ("starts_with", "ends_with", "contains", "regex", "equals"):
		if hasattr(match, kind):
			return (kind, getattr(match, kind))
	kind = "or" if hasattr(match, "or_") else "and"
	return (kind, tuple(_clause(c) for c in getattr(match, f"{kind}_")))


_MEDIA_FIELDS = (
	"output_audio_mtok",
	"output_image_mtok",
	"input_image_mtok",
	"cache_image_read_mtok",
)
"""The price fields of a model that speaks or draws (a realtime, audio, live or image model): its
audio or images are priced apart from text tokens. A chat model that reads images or audio prices
them as input tokens, or has only ``input_audio_mtok`` (Gemini Flash)."""


_SPEECH = re.compile(r"(^|-)tts($|-)|transcribe")
"""The names of the text-to-speech and transcription models: genai-prices prices them in plain
tokens (``gpt-4o-mini-tts``, ``gemini-2.5-flash-tts``: their audio output as output tokens), so
no price field tells them; they speak or listen, as a realtime model does."""


_UNCONVERSANT = re.compile(
	r"^(ada|babbage|curie|davinci)(-\d{3})?$|^text-(ada|babbage|curie|davinci)-|-instruct($|-)"
	r"|^computer-use"
)
"""The names of the models no agent's request reaches: the legacy completion models, served on
``/v1/completions`` only (the openai SDK's Completions models ``gpt-3.5-turbo-instruct``,
``davinci-002``, ``babbage-002``, and the retired GPT-3 ids genai-prices keeps: ``ada``,
``text-davinci-003``...), and ``computer-use-preview``, which takes only the computer tool."""


def media(now: datetime | None = None) -> dict[str, tuple[str, ...]]:
	"""Each provider's listed models (`table`) priced for audio or images apart (`_MEDIA_FIELDS`),
	its speech models (`_SPEECH`) and those no agent's request reaches (`_UNCONVERSANT`): no model
	for an agent's conversation, which ``openmolt models`` leaves out (``--all`` shows)."""
	from genai_prices import data_snapshot

	when = now or datetime.now(UTC)
	listed = table(now)
	out: dict[str, tuple[str, ...]] = {}
	for provider in data_snapshot.get_snapshot().providers:
		if provider.id not in PROVIDERS:
			continue
		name = PROVIDERS[provider.id][0]
		found = {
			model.id
			for model in provider.models
			if model.id in listed.get(name, {})
			and (
				any(getattr(model.get_prices(when), f, None) is not None for f in _MEDIA_FIELDS)
				or _SPEECH.search(model.id)
				or _UNCONVERSANT.search(model.id)
			)
		}
		out[name] = tuple(sorted(found))
	return out


AUDIO_SUPPLEMENT: dict[str, dict[str, tuple[float, float, float | None]]] = {
	"openai": {
		# https://developers.openai.com/api/docs/models/gpt-4o-audio-preview: audio tokens, input
		# $40 per 1M (text $2.50), output $80 (text $10); no cached audio price, so the same.
		"gpt-4o-audio-preview": (40.0, 40.0, 80.0),
		# https://developers.openai.com/api/docs/models/gpt-4o-mini-audio-preview: audio tokens,
		# input $10 per 1M (text $0.15), output $20 (text $0.60).
		"gpt-4o-mini-audio-preview": (10.0, 10.0, 20.0),
	},
}
"""Audio prices genai-prices lacks, from the vendor's own model page (named beside each):
without them the audio of these Chat audio models was priced as text, 16 to 66 times too low
(their spoken replies 8 to 33 times).
Only a gap is filled (genai-prices' own price wins), and a test fails once genai-prices prices
one of them, so the entry goes (tests/providers/test_openai_audio_price.py)."""


def audio(
	now: datetime | None = None, *, with_supplement: bool = True
) -> dict[str, dict[str, tuple[float, float, float | None]]]:
	"""Each provider's priced models (by genai-prices id) whose audio has its own price: (input
	audio, cached input audio, output audio or None: the output price) per million tokens
	(``input_audio_mtok``, ``cache_audio_read_mtok``, ``output_audio_mtok``; Gemini Flash: input
	only). The media models (`media`) too: OpenAI's Chat audio models (``gpt-audio``) converse
	with an agent, their audio 13 times the price of text, their spoken replies 6 times. With
	``with_supplement``, `AUDIO_SUPPLEMENT` fills the models genai-prices gives none."""
	from genai_prices import data_snapshot

	when = now or datetime.now(UTC)
	out: dict[str, dict[str, tuple[float, float, float | None]]] = {}
	for provider in data_snapshot.get_snapshot().providers:
		if provider.id not in PROVIDERS:
			continue
		found = out.setdefault(PROVIDERS[provider.id][0], {})
		for model in provider.models:
			price = model.get_prices(when)
			plain = _price(price)
			heard = _base(getattr(price, "input_audio_mtok", None))
			spoken = _base(getattr(price, "output_audio_mtok", None))
			if plain is None or (heard is None and spoken is None):
				continue
			if heard is None:  # only its spoken replies cost apart: its audio in costs text's
				found[model.id] = (plain[0], plain[1], spoken)
				continue
			cached = _base(getattr(price, "cache_audio_read_mtok", None))
			found[model.id] = (heard, heard if cached is None else cached, spoken)
	for provider, models in AUDIO_SUPPLEMENT.items() if with_supplement else ():
		for model, prices in models.items():
			out.setdefault(provider, {}).setdefault(model, prices)
	return {provider: dict(sorted(models.items())) for provider, models in out.items()}


def rules(now: datetime | None = None) -> dict[str, tuple[tuple[tuple[Any, ...], Price, str], ...]]:
	"""Each provider's match rules in genai-prices' order, each with its model's price and id."""
	return {
		provider: tuple((_clause(match), price, model) for model, match, price in models)
		for provider, models in _priced(now).items()
	}


def render(
	prices: dict[str, dict[str, Price]],
	matches: dict[str, tuple[tuple[tuple[Any, ...], Price, str], ...]],
	tiered: dict[str, dict[str, tuple[tuple[int, Price], ...]]],
	media_models: dict[str, tuple[str, ...]],
	heard: dict[str, dict[str, tuple[float, float]]],
) -> str:
	"""The module text for a table."""
	from importlib.metadata import version

	lines = [
		'"""List prices per million tokens: (input, cached input, output, cache write), in USD.',
		"",
		f"Generated from genai-prices {version('genai-prices')} by tests/providers/update_prices.py",
		"(``uv run nox -s prices``); do not edit by hand. `PRICES` and `MATCH` hold the base",
		"tier; `TIERS` the prices past a long-context threshold; `MEDIA` the models that speak or",
		"draw; `AUDIO` the prices of audio where they differ from text (with the few the",
		"script's `AUDIO_SUPPLEMENT` takes from the vendor's model page where genai-prices has none).",
		'"""',
		"",
		"from __future__ import annotations",
		"",
		"from typing import Any",
		"",
		'__all__ = ["AUDIO", "MATCH", "MEDIA", "PRICES", "TIERS"]',
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
		"MATCH: dict[str, tuple[tuple[Any, tuple[float, float, float, float | None], str], ...]] = {",
	]
	for provider, entries in matches.items():
		lines.append(f'\t"{provider}": (')
		lines += [f"\t\t({clause!r}, {price!r}, {model!r})," for clause, price, model in entries]
		lines.append("\t),")
	lines += [
		"}",
		'"""genai-prices\' match rules in its order, each with its model\'s price: an id that is not',
		"in `PRICES` (a fine-tune ``ft:gpt-4o-mini-2024-07-18:org::id``, a dated preview, another",
		"spelling) is priced as genai-prices prices it, and tiered as its model (the id after the",
		"price, a key of `TIERS`). A rule: ``(kind, text)`` with kind ``starts_with``,",
		'``ends_with``, ``contains``, ``regex`` or ``equals``, or ``("or" | "and", rules)``."""',
		"",
		"TIERS: dict[str, dict[str, tuple[tuple[int, tuple[float, float, float, float | None]], ...]]] = {",
	]
	for provider, models in tiered.items():
		lines.append(f'\t"{provider}": {{')
		lines += [f'\t\t"{model}": {steps!r},' for model, steps in models.items()]
		lines.append("\t},")
	lines += [
		"}",
		'"""The tiered models by genai-prices id: ``(start, price)`` in ascending order; a prompt of',
		"more than ``start`` tokens (cached and written ones included) pays that price for all its",
		'tokens, input and output (the "cliff" model of the price pages and genai-prices)."""',
		"",
		"MEDIA: dict[str, tuple[str, ...]] = {",
	]
	for provider, models in media_models.items():
		lines.append(f"\t{provider!r}: {models!r},")
	lines += [
		"}",
		'"""The models of `PRICES` genai-prices prices for audio or images apart from text tokens',
		"(output audio or images, image input: realtime, audio, live and image models), the",
		"text-to-speech and transcription models (named ``-tts``, ``transcribe``), and the legacy",
		"completion and computer-use models, which take no agent's conversation: ``openmolt",
		'models`` leaves them out unless ``--all``."""',
		"",
		"AUDIO: dict[str, dict[str, tuple[float, float, float | None]]] = {",
	]
	for provider, models in heard.items():
		lines.append(f'\t"{provider}": {{')
		lines += [f'\t\t"{model}": {prices!r},' for model, prices in models.items()]
		lines.append("\t},")
	lines += [
		"}",
		'"""The models by genai-prices id whose audio costs other than text: (input audio, cached',
		"input audio, output audio or None: the output price) per million tokens. Audio tokens are",
		"among a prompt's (a reply's) tokens; the usage says how many (Gemini:",
		"``promptTokensDetails``, ``candidatesTokensDetails``, modality ``AUDIO``; Chat Completions:",
		'``prompt_tokens_details.audio_tokens``, ``completion_tokens_details.audio_tokens``)."""',
	]
	return "\n".join(lines) + "\n"


if __name__ == "__main__":
	TABLE.write_text(render(table(), rules(), tiers(), media(), audio()), encoding="utf-8")
	print(f"wrote {TABLE} ({sum(len(m) for m in table().values())} models)", file=sys.stderr)
