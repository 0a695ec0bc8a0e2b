"""Estimated cost of a call, from the list prices in US dollars per million tokens.

One source: `openmolt_providers._price_table`, generated from pydantic's genai-prices (its data
follows the providers' pricing pages: https://openai.com/api/pricing,
https://platform.claude.com/docs/en/about-claude/pricing, https://ai.google.dev/gemini-api/docs/pricing)
by tests/providers/update_prices.py, with a test that fails when the committed table and the
locked genai-prices disagree, so the table is as current as the lock. genai-prices itself is not
imported at run time: on the 2-core CI machine, importing it took 0.5 s and pricing a first call
another 0.25 s when idle (2 to 3.7 s under load), for 1.6 MB of data, pydantic models and its own
HTTP client (httpx2); importing the generated table takes about 10 ms, and only once a reply is
priced.

A prompt past a model's long-context threshold (Claude Sonnet 4.5 and Gemini Pro past 200k
tokens, GPT-5.4 and later past 272k) pays that tier's prices for all its tokens, input and output,
as the price pages and genai-prices say (`openmolt_providers._price_table.TIERS`). Audio in a
prompt, and in a spoken reply, costs its own price where the model has one (Gemini Flash's
input, OpenAI's audio models' both: `openmolt_providers._price_table.AUDIO`, which takes the
GPT-4o audio previews' from OpenAI's model pages, genai-prices having none). Web searches and
batch discounts are not included, so the cost is an estimate. A Claude id as Amazon Bedrock writes it costs what genai-prices
says for Bedrock; one its Bedrock entries miss costs the model's in-region price, or Anthropic's
price with the 10% regional premium of Claude 4.5 and later (`REGIONAL_PREMIUM`). A model id is
looked up as it is, without a ``provider/`` or ``models/`` prefix, and without a date or ``-latest`` suffix
(unless genai-prices names the id itself: ``gemini-pro-latest`` is Gemini 3.1 Pro, not the
``gemini-pro`` of 2023); then by genai-prices' own match rules
(`openmolt_providers._price_table.MATCH`), so a fine-tune (``ft:gpt-4o-mini-2024-07-18:org::id``),
a dated preview or another spelling costs what genai-prices says. An unknown model has no cost (``None``) rather than a wrong one: it is not
free.

The CLI's ``--dry-run`` asks the provider (``provider.price(model)``), so it uses this table too.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from openmolt_providers._price_table import AUDIO, MATCH, PRICES, TIERS

__all__ = [
	"HOUR_WRITE",
	"PRICES",
	"REGIONAL_PREMIUM",
	"Price",
	"audio_price_for",
	"cost",
	"price_for",
	"priced_as",
]

Price = tuple[float, float, float, float | None]
"""(input, cached input read, output, cache write) in USD per million tokens."""

_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")
_ALIASES = {"claude-sonnet-4": "claude-sonnet-4-0"}
_cache: dict[tuple[str, str], tuple[str, Price] | None] = {}
_premium: dict[tuple[str, str], float] = {}
"""The factor a model id's price is scaled by, where not 1: a regional Bedrock Claude id priced
from Anthropic's API (`REGIONAL_PREMIUM`)."""


def price_for(provider: str, model: str, prompt_tokens: int = 0) -> Price | None:
	"""A model's list price, ignoring a date or ``-latest`` suffix; or None.

	Args:
		provider: ``openai``, ``anthropic`` or ``google``.
		model: The model id.
		prompt_tokens: The prompt's size: past a long-context threshold, that tier's price
			(`TIERS`); 0, the base tier's.
	"""
	found = _found(provider, model)
	return _scaled(provider, model, _tier(provider, *found, prompt_tokens)) if found else None


def priced_as(provider: str, model: str) -> str | None:
	"""The genai-prices id a model id is priced as (an alias: the model it names), or None.

	Args:
		provider: ``openai``, ``anthropic`` or ``google``.
		model: The model id.
	"""
	found = _found(provider, model)
	return found[0] if found is not None else None


def audio_price_for(provider: str, model: str) -> float | None:
	"""The price of a model's audio input per million tokens where it has its own (`AUDIO`), or None.

	Args:
		provider: ``openai``, ``anthropic`` or ``google``.
		model: The model id.
	"""
	return _audio(provider, model, 0)


def spoken_price_for(provider: str, model: str) -> float | None:
	"""The price of a model's audio output per million tokens where it has its own (`AUDIO`), or None.

	Args:
		provider: ``openai``, ``anthropic`` or ``google``.
		model: The model id.
	"""
	return _audio(provider, model, 2)


def _audio(provider: str, model: str, which: int) -> float | None:
	"""One of a model's `AUDIO` prices (0: input, 2: output), its premium applied; None: none."""
	found = _found(provider, model)
	prices = AUDIO.get(provider, {}).get(found[0]) if found is not None else None
	price = prices[which] if prices is not None else None
	return price * _premium.get((provider, model), 1.0) if price is not None else None


def _found(provider: str, model: str) -> tuple[str, Price] | None:
	"""The genai-prices id a model id is priced as, and its base price; None when unknown."""
	key = (provider, model)
	if key not in _cache:
		table = PRICES.get(provider, {})
		name = model.rsplit("/", 1)[-1].lower()
		base = _SUFFIX.sub("", name)
		# A model named without "-preview" while only its preview is priced: the preview's price
		# (the spec's gemini-3.1-pro).
		listed = (name, base, _ALIASES.get(base, ""), f"{base}-preview")
		known = next((m for m in listed if table.get(m)), None)
		# An alias genai-prices names (gemini-pro-latest: Gemini 3.1 Pro) is the model it names,
		# not the one its cut name is (gemini-pro: Gemini 1.0 Pro).
		named = _matched(provider, name, exact=True) if known not in (None, name) else None
		if named is not None:
			_cache[key] = named
		else:
			_cache[key] = (known, table[known]) if known else _matched(provider, name)
		if _cache[key] is None and (bedrock := _BEDROCK.match(name)) is not None:
			_cache[key] = _bedrock(provider, key, name, *bedrock.groups())
	return _cache[key]


def _bedrock(
	provider: str, key: tuple[str, str], name: str, profile: str | None, claude: str
) -> tuple[str, Price] | None:
	"""The price of a Bedrock Claude id genai-prices' Bedrock entries miss.

	A regional profile they leave out (``apac.`` for Opus 4.8) is priced as the model's in-region
	id (``anthropic.claude-opus-4-8``), which genai-prices prices at the regional price; failing
	that, the model it names at Anthropic's price, `REGIONAL_PREMIUM` times it at a regional
	endpoint (a profile other than ``global.``, or none) for Claude 4.5 and later.
	"""
	if profile not in (None, "global"):
		bare = name.split(".", 1)[1]
		found = _found(provider, bare)
		if (provider, bare) in _premium:
			_premium[key] = _premium[(provider, bare)]
		return found
	found = _found(provider, claude)
	if found is not None and profile is None and _version(claude) >= REGIONAL_SINCE:
		_premium[key] = REGIONAL_PREMIUM
	return found


_BEDROCK = re.compile(r"^(?:([a-z-]+)\.)?anthropic\.(claude.*?)(?:-v\d+(?::\d+)?)?$")
"""A Claude id as Amazon Bedrock writes it: its cross-region profile, ``anthropic.``, the model,
and the endpoint's version (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``)."""

REGIONAL_PREMIUM = 1.1
"""What a regional Bedrock endpoint costs in Anthropic's prices, for Claude 4.5 and later
(`REGIONAL_SINCE`): every regional entry of genai-prices' ``aws`` provider is 10% dearer than
Anthropic's API (tests/providers/test_prices_bedrock.py holds each to it), ``global.`` the same.
Applied to a regional id those entries miss, so it costs what its neighbours do."""

REGIONAL_SINCE = (4, 5)
"""The first Claude version whose regional Bedrock endpoints cost `REGIONAL_PREMIUM`."""

_VERSION = re.compile(r"^claude-(?:[a-z]+-)?(\d+)(?:-(\d{1,2}))?(?=-|$)")


def _version(claude: str) -> tuple[int, int]:
	"""A Claude id's (major, minor) version, (0, 0) when it names none (``claude-v1``).

	``claude-opus-4-5`` is (4, 5), ``claude-3-7-sonnet`` (3, 7), ``claude-opus-4-20250514`` (4, 0).
	"""
	found = _VERSION.match(claude)
	return (int(found.group(1)), int(found.group(2) or 0)) if found else (0, 0)


def _scaled(provider: str, model: str, price: Price) -> Price:
	"""A price scaled by the model id's premium (`_premium`), if any."""
	factor = _premium.get((provider, model), 1.0)
	if factor == 1.0:
		return price
	inp, cached, out, write = price
	return (inp * factor, cached * factor, out * factor, None if write is None else write * factor)


def _matched(provider: str, name: str, *, exact: bool = False) -> tuple[str, Price] | None:
	"""The model and price genai-prices' match rules give a model id (its ``find_model``).

	The first rule that matches wins; an id with a compact date (``gpt-5.2-20251211``, as
	LiteLLM and OpenRouter write it) is tried again with the date dashed.

	Args:
		provider: The provider whose rules are read.
		name: The model id, lowercase, without a prefix.
		exact: Only a rule that names the id itself (an ``equals`` clause) matches.
	"""
	rules = MATCH.get(provider, ())
	if exact:
		return next(((m, p) for rule, p, m in rules if name in _named(rule)), None)
	for ref in dict.fromkeys((name, _COMPACT_DATE.sub(_dashed, name))):
		for rule, price, model in rules:
			if _matches(rule, ref):
				return model, price
	return None


def _named(rule: tuple[Any, ...]) -> set[str]:
	"""The ids a match rule names exactly: its ``equals`` clauses."""
	kind, value = rule
	if kind in ("or", "and"):
		return {name for r in value for name in _named(r)}
	return {str(value).lower()} if kind == "equals" else set()


def _tier(provider: str, model: str, price: Price, prompt: int) -> Price:
	"""The prices a prompt of ``prompt`` tokens pays: past a tier's start, the tier's (`TIERS`)."""
	for start, tier in reversed(TIERS.get(provider, {}).get(model, ())):
		if prompt > start:
			return tier
	return price


def _matches(rule: tuple[Any, ...], ref: str) -> bool:
	kind, value = rule
	if kind == "or":
		return any(_matches(r, ref) for r in value)
	if kind == "and":
		return all(_matches(r, ref) for r in value)
	if kind == "regex":
		return re.search(value, ref) is not None
	text = str(value).lower()
	if kind == "equals":
		return ref == text
	if kind == "starts_with":
		return ref.startswith(text)
	if kind == "ends_with":
		return ref.endswith(text)
	return text in ref  # contains


_COMPACT_DATE = re.compile(r"(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)")


def _dashed(match: re.Match[str]) -> str:
	year, month, day = (int(match.group(i)) for i in (2, 3, 4))
	try:
		date(year, month, day)
	except ValueError:
		return match.group(0)
	return f"-{year:04d}-{month:02d}-{day:02d}"


def cost(
	provider: str,
	model: str,
	*,
	input_tokens: int,
	output_tokens: int,
	cached_tokens: int = 0,
	cache_write_tokens: int = 0,
	hour_writes: int = 0,
	audio_tokens: int = 0,
	cached_audio_tokens: int = 0,
	output_audio_tokens: int = 0,
) -> float | None:
	"""Estimate the cost of one call in US dollars.

	Args:
		provider: ``openai``, ``anthropic`` or ``google``.
		model: The model name.
		input_tokens: All prompt tokens, cached and cache-written ones included; past the
			model's long-context threshold, every token costs the tier's price (`TIERS`).
		output_tokens: All output tokens, reasoning included.
		cached_tokens: Prompt tokens read from the cache.
		cache_write_tokens: Prompt tokens written to the cache, the 1-hour ones included.
		hour_writes: Of ``cache_write_tokens``, those written for an hour (Anthropic's ``ttl:
			"1h"``): `HOUR_WRITE` times the input price, where the table's write price is the
			5-minute one.
		audio_tokens: Of ``input_tokens``, those of audio (cached ones included): the model's
			audio price where it has one (`openmolt_providers._price_table.AUDIO`), else the
			input price.
		cached_audio_tokens: Of ``cached_tokens``, those of audio.
		output_audio_tokens: Of ``output_tokens``, those of audio (a spoken reply: Chat
			Completions' ``completion_tokens_details.audio_tokens``): the model's audio output
			price where it has one (`AUDIO`'s third price), else the output price.

	Returns:
		The cost, or None when the model's price is unknown.
	"""
	found = _found(provider, model)
	if found is None:
		return None
	inp, cached, out, write = _scaled(provider, model, _tier(provider, *found, input_tokens))
	fresh = max(input_tokens - cached_tokens - cache_write_tokens, 0)
	hour = min(max(hour_writes, 0), cache_write_tokens)
	factor = _premium.get((provider, model), 1.0)
	audio = AUDIO.get(provider, {}).get(found[0])
	heard, heard_cached = (inp, cached) if audio is None else (audio[0] * factor, audio[1] * factor)
	spoken = out if audio is None or audio[2] is None else audio[2] * factor
	cached_audio = min(max(cached_audio_tokens, 0), cached_tokens)
	fresh_audio = min(max(audio_tokens - cached_audio, 0), fresh)
	said = min(max(output_audio_tokens, 0), output_tokens)
	total = (
		(fresh - fresh_audio) * inp
		+ fresh_audio * heard
		+ (cached_tokens - cached_audio) * cached
		+ cached_audio * heard_cached
		+ (cache_write_tokens - hour) * (write if write is not None else inp)
		+ hour * HOUR_WRITE * inp
		+ (output_tokens - said) * out
		+ said * spoken
	)
	return round(total / 1_000_000, 10)


HOUR_WRITE = 2.0
"""What a prompt token written to Anthropic's cache for an hour costs, in input prices: "1-hour
cache write tokens are 2 times the base input tokens price" (5-minute ones 1.25 times, the
table's write price; platform.claude.com/docs/en/about-claude/pricing, prompt caching).
genai-prices has no price for them."""
