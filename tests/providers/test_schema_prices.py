from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_providers._price_table import AUDIO, MATCH, MEDIA
from openmolt_providers._prices import PRICES, cost, price_for
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from tests.providers.conftest import make_request


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
	"""Our price table agrees with genai-prices for every model in it, cache writes included."""
	from genai_prices import Usage, calc_price

	ours = cost(
		provider,
		model,
		input_tokens=10_000,
		output_tokens=2_000,
		cached_tokens=4_000,
		cache_write_tokens=1_000,
	)
	usage = Usage(
		input_tokens=10_000, output_tokens=2_000, cache_read_tokens=4_000, cache_write_tokens=1_000
	)
	theirs = calc_price(usage, model, provider_id=provider).total_price
	assert ours == pytest.approx(float(theirs), rel=1e-6)


def test_the_price_table_is_current() -> None:
	"""The committed table is what the locked genai-prices says now (else: uv run nox -s prices)."""
	import importlib.util
	from pathlib import Path

	path = Path(__file__).with_name("update_prices.py")
	spec = importlib.util.spec_from_file_location("update_prices", path)
	module = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(module)
	assert module.table() == PRICES, "the price table is stale: run `uv run nox -s prices`"
	assert module.rules() == MATCH, "the match rules are stale: run `uv run nox -s prices`"
	assert module.media() == MEDIA, "the media models are stale: run `uv run nox -s prices`"
	assert module.audio() == AUDIO, "the audio prices are stale: run `uv run nox -s prices`"


SPELLINGS = [
	("openai", "ft:gpt-4o-mini-2024-07-18:acme:support:AbC123"),
	("openai", "ft:gpt-4o-2024-08-06:acme::BX1"),
	("openai", "ft:gpt-3.5-turbo-0125:acme::x"),
	("openai", "gpt-5-chat-latest"),
	("openai", "GPT-4o"),
	("openai", "gpt-4o-mini-search-preview-2025-03-11"),
	("openai", "gpt-5.2-20251211"),
	("google", "gemini-2.5-flash-preview-05-20"),
	("google", "gemini-2.0-flash-001"),
	("google", "gemini-2.5-flash-lite-preview-09-2025"),
	("google", "gemini-flash-latest"),
	("anthropic", "claude-sonnet-4.5"),
]


@pytest.mark.parametrize(("provider", "model"), SPELLINGS)
def test_every_spelling_genai_prices_knows_is_priced_as_it_says(provider, model) -> None:
	"""A fine-tune, a dated preview, a compact date or another case costs what genai-prices
	says (they had no price: cost None, shown as unknown)."""
	from genai_prices import Usage, calc_price

	ours = cost(provider, model, input_tokens=10_000, output_tokens=2_000, cached_tokens=4_000)
	usage = Usage(input_tokens=10_000, output_tokens=2_000, cache_read_tokens=4_000)
	theirs = calc_price(usage, model, provider_id=provider).total_price
	assert ours == pytest.approx(float(theirs), rel=1e-6)


def _named(rule: tuple[Any, ...]) -> list[str]:
	"""The ids a genai-prices match rule names exactly (its ``equals`` clauses)."""
	kind, value = rule
	if kind in ("or", "and"):
		return [name for r in value for name in _named(r)]
	return [str(value).lower()] if kind == "equals" else []


NAMED = sorted({(p, name) for p, rules in MATCH.items() for r, _, _ in rules for name in _named(r)})
"""Every id genai-prices names exactly (``gemini-pro-latest``, ``claude-3-5-sonnet-latest``...)."""


@pytest.mark.parametrize(("provider", "model"), NAMED)
def test_every_id_genai_prices_names_costs_what_it_says(provider, model) -> None:
	"""An id genai-prices names exactly costs what it says: ``gemini-pro-latest`` (Gemini 3.1 Pro
	now) cost what Gemini 1.0 Pro did, 16 times less, because the ``-latest`` was cut first. A
	Bedrock Claude id (``us.anthropic.claude-opus-5``) is named by genai-prices' ``aws``."""
	from genai_prices import Usage, calc_price

	ours = cost(provider, model, input_tokens=10_000, output_tokens=2_000, cached_tokens=4_000)
	usage = Usage(input_tokens=10_000, output_tokens=2_000, cache_read_tokens=4_000)
	theirs_id = "aws" if "anthropic.claude" in model else provider
	theirs = calc_price(usage, model, provider_id=theirs_id).total_price
	assert ours == pytest.approx(float(theirs), rel=1e-6)


@pytest.mark.parametrize(
	("provider", "model"),
	[("google", "models/gemini-2.5-flash"), ("openai", "openai/gpt-5-mini")],
)
def test_a_prefixed_id_is_priced_as_the_model(provider, model) -> None:
	"""``models/`` (Gemini's resource name) and ``provider/`` (gateways) prefixes are ignored."""
	assert price_for(provider, model) == price_for(provider, model.rsplit("/", 1)[-1])
	assert price_for(provider, model) is not None


@pytest.mark.parametrize("model", ["my-finetune", "llama3.2", "ft:gpt-4.1-2025-04-14:acme::x"])
def test_a_model_without_a_known_price_is_not_free(model) -> None:
	"""No price is None (unknown), never 0."""
	assert price_for("openai", model) is None
	assert cost("openai", model, input_tokens=10, output_tokens=10) is None


@pytest.mark.parametrize(
	("provider", "model"),
	[
		("anthropic", "claude-sonnet-4-6"),
		("google", "gemini-3.1-pro"),
		("openai", "gpt-5-mini-2025-08-07"),
		("openai", "chatgpt-4o-latest"),
		("anthropic", "claude-sonnet-4-5-20250929"),
	],
)
def test_the_models_users_name_have_a_price(provider, model) -> None:
	"""The spec's and docs' model ids (dated, -latest, GA names of previews) are priced."""
	assert price_for(provider, model) is not None


def test_openai_cache_writes_are_priced() -> None:
	"""A Responses usage with cache_write_tokens costs them at the model's write price."""
	from openmolt_providers.openai._responses import usage

	model = next(m for m, p in PRICES["openai"].items() if p[3] is not None and p[3] != p[0])
	write = PRICES["openai"][model][3]
	raw = {
		"input_tokens": 1000,
		"output_tokens": 0,
		"input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 1000},
	}
	openai = OpenAIProvider({"api_key": "sk-test"}, httpx.AsyncClient)
	assert usage(openai, raw, model).cost_usd == pytest.approx(1000 * write / 1e6)


@pytest.mark.parametrize(
	("vendor", "reply"),
	[
		(
			"openai",
			{
				"status": "completed",
				"output": [],
				"usage": {"input_tokens": 1000, "output_tokens": 100},
			},
		),
		(
			"anthropic",
			{
				"content": [],
				"stop_reason": "end_turn",
				"usage": {"input_tokens": 1000, "output_tokens": 100},
			},
		),
		(
			"google",
			{
				"candidates": [{"content": {"parts": []}, "finishReason": "STOP"}],
				"usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 100},
			},
		),
	],
)
@pytest.mark.anyio
async def test_a_server_other_than_the_vendors_has_no_cost(vendor, reply) -> None:
	"""Behind another base URL (a local server, a proxy) a known model name costs None, as
	docs/guides/providers.md says and as Chat Completions did (Responses, Anthropic and Gemini
	priced it at the vendor's list price)."""
	from tests.providers._replies import MODELS

	client = httpx.AsyncClient(
		transport=httpx.MockTransport(lambda r: httpx.Response(200, json=reply))
	)
	cls = {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "google": GeminiProvider}
	request = make_request(MODELS[vendor])
	vendors = cls[vendor]({"api_key": "k"}, lambda: client)
	assert (await vendors.generate(request)).usage.cost_usd is not None
	other = cls[vendor]({"api_key": "k", "base_url": "http://localhost:8000/v1"}, lambda: client)
	response = await other.generate(request)
	assert response.usage.input_tokens == 1000 and response.usage.cost_usd is None


@pytest.mark.anyio
@pytest.mark.parametrize("streamed", [False, True])
async def test_anthropic_one_hour_cache_writes_cost_twice_the_input_price(streamed: bool) -> None:
	"""``usage.cache_creation`` splits the writes by TTL: a 1-hour write costs 2x the base input
	price, a 5-minute one 1.25x (platform.claude.com pricing, prompt caching); every write was
	priced at the 5-minute rate."""
	from tests.providers import _replies

	reply = {
		"type": "message",
		"role": "assistant",
		"content": [{"type": "text", "text": _replies.CMD}],
		"stop_reason": "end_turn",
		"usage": {
			"input_tokens": 100,
			"cache_creation_input_tokens": 1500,
			"cache_read_input_tokens": 0,
			"cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 1000},
			"output_tokens": 10,
		},
	}
	if streamed:  # message_start carries the input counts as the API sends them
		reply_events = _replies.events("anthropic", reply)
		reply_events[0]["message"]["usage"] = reply["usage"]
		response = await _stream_events(reply_events)
	else:
		response = await _replies.generate("anthropic", reply)
	inp, _, out, write = PRICES["anthropic"]["claude-sonnet-4-5"]
	assert write == 1.25 * inp
	expected = (100 * inp + 500 * write + 1000 * 2 * inp + 10 * out) / 1e6
	assert response.usage.input_tokens == 1600
	assert response.usage.cost_usd == pytest.approx(expected)


async def _stream_events(reply_events: list[dict[str, Any]]) -> Any:
	from tests.providers import _replies

	body = "".join(f"data: {json.dumps(e)}\n\n" for e in reply_events)

	def handle(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)

	provider = _replies.provider("anthropic", handle)
	final = None
	async for chunk in provider.stream(_replies.make_request("claude-sonnet-4-5")):
		final = chunk
	return final


def _supplemented() -> set[tuple[str, str]]:
	"""The audio prices the table takes from the vendor's model pages, genai-prices having none
	(update_prices.py's ``AUDIO_SUPPLEMENT``: tests/providers/test_openai_audio_price.py)."""
	import importlib.util
	from pathlib import Path

	path = Path(__file__).with_name("update_prices.py")
	spec = importlib.util.spec_from_file_location("update_prices", path)
	assert spec is not None and spec.loader is not None
	module = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(module)
	return {(p, m) for p, models in module.AUDIO_SUPPLEMENT.items() for m in models}


_SUPPLEMENTED = _supplemented()


@pytest.mark.parametrize(
	("provider", "model"),
	[(p, m) for p, t in AUDIO.items() for m in t if (p, m) not in _SUPPLEMENTED],
)
def test_audio_input_costs_its_own_price(provider, model) -> None:
	"""Audio in a prompt costs genai-prices' audio price (Gemini 2.5 Flash: 1.00 a million, text
	0.30), fresh and cached: it was priced as text, so a run reading audio cost three times what
	its max_cost saw."""
	from genai_prices import Usage, calc_price

	ours = cost(
		provider,
		model,
		input_tokens=100_000,
		output_tokens=2_000,
		cached_tokens=50_000,
		audio_tokens=40_000,
		cached_audio_tokens=20_000,
	)
	usage = Usage(
		input_tokens=100_000,
		output_tokens=2_000,
		cache_read_tokens=50_000,
		input_audio_tokens=40_000,
		cache_audio_read_tokens=20_000,
	)
	theirs = calc_price(usage, model, provider_id=provider).total_price
	assert ours == pytest.approx(float(theirs), rel=1e-6)


@pytest.mark.parametrize(
	("provider", "model"),
	[(p, m) for p, t in AUDIO.items() for m, a in t.items() if a[2] is not None],
)
def test_audio_output_costs_its_own_price(provider, model) -> None:
	"""A spoken reply's audio tokens cost genai-prices' (or, for the supplemented GPT-4o audio
	previews, the model page's) audio output price (gpt-audio: 64 a million, text 10): they were
	priced as text output."""
	from genai_prices import Usage, calc_price

	ours = cost(provider, model, input_tokens=1_000, output_tokens=5_000, output_audio_tokens=4_000)
	theirs = float(
		calc_price(
			Usage(input_tokens=1_000, output_tokens=5_000, output_audio_tokens=4_000),
			model,
			provider_id=provider,
		).total_price
	)
	if (provider, model) in _SUPPLEMENTED:  # genai-prices prices their audio as text
		out = PRICES[provider][model][2]
		theirs += 4_000 * (AUDIO[provider][model][2] - out) / 1e6
	assert ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.anyio
async def test_gemini_reads_the_audio_of_its_prompt() -> None:
	"""Gemini's usage names the audio tokens by modality (``promptTokensDetails``,
	``cacheTokensDetails``); the reply's cost prices them as audio."""
	from genai_prices import Usage, calc_price

	from tests.providers._replies import generate

	usage = {
		"promptTokenCount": 100_000,
		"cachedContentTokenCount": 50_000,
		"candidatesTokenCount": 2_000,
		"promptTokensDetails": [
			{"modality": "TEXT", "tokenCount": 60_000},
			{"modality": "AUDIO", "tokenCount": 40_000},
		],
		"cacheTokensDetails": [
			{"modality": "TEXT", "tokenCount": 30_000},
			{"modality": "AUDIO", "tokenCount": 20_000},
		],
	}
	reply = {
		"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
		"usageMetadata": usage,
	}
	response = await generate("google", reply)
	expected = calc_price(
		Usage(
			input_tokens=100_000,
			output_tokens=2_000,
			cache_read_tokens=50_000,
			input_audio_tokens=40_000,
			cache_audio_read_tokens=20_000,
		),
		"gemini-2.5-flash",
		provider_id="google",
	).total_price
	assert response.usage.cost_usd == pytest.approx(float(expected), rel=1e-6)
