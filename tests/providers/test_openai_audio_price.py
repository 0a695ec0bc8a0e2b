"""The audio input of OpenAI's Chat audio models costs its own price, as Gemini Flash's does.

``gpt-audio`` reads audio at 32 USD a million tokens where text costs 2.50 (``gpt-audio-mini``:
10 and 0.60; genai-prices' ``input_audio_mtok``). The model-71 merge routes these models to Chat
Completions and sends them ``input_audio``; their audio was priced as text (the price table left
them out of `openmolt_providers._price_table.AUDIO` as media models), so a call's cost was a
thirteenth of its bill and the budget's estimate of a prompt holding audio (``max_cost``) let a
run pass its cap.
"""

from __future__ import annotations

import pytest

from openmolt_providers.openai import OpenAIProvider
from openmolt_providers.openai._chat import usage


def _never() -> None:
	raise AssertionError("nothing is sent")


def openai() -> OpenAIProvider:
	return OpenAIProvider({"api_key": "k", "api_mode": "chat"}, _never)


@pytest.mark.parametrize(
	("model", "audio"), [("gpt-audio", 32.0), ("gpt-audio-1.5", 32.0), ("gpt-audio-mini", 10.0)]
)
def test_the_audio_models_audio_price_is_their_own(model, audio) -> None:
	"""What the budget prices a prompt holding audio at (`audio_price`)."""
	assert openai().audio_price(model) == audio


def test_a_chat_calls_audio_tokens_cost_the_audio_price() -> None:
	"""``prompt_tokens_details.audio_tokens`` (Chat Completions' usage) are priced as audio."""
	raw = {
		"prompt_tokens": 1_000,
		"completion_tokens": 100,
		"prompt_tokens_details": {"audio_tokens": 900, "cached_tokens": 0},
	}
	found = usage(openai(), "gpt-audio", raw)
	assert found.cost_usd == pytest.approx((100 * 2.5 + 900 * 32.0 + 100 * 10.0) / 1e6)


@pytest.mark.parametrize(
	("model", "text", "audio"),
	[
		("gpt-4o-audio-preview", 2.5, 40.0),
		("gpt-4o-audio-preview-2025-06-03", 2.5, 40.0),
		("gpt-4o-mini-audio-preview", 0.15, 10.0),
		("gpt-4o-mini-audio-preview-2024-12-17", 0.15, 10.0),
	],
)
def test_the_audio_preview_models_audio_costs_openais_audio_price(model, text, audio) -> None:
	"""genai-prices gives the GPT-4o audio previews no audio input price, so their audio was
	priced as text (2.50 a million where OpenAI's model page says 40): a sixteenth of the bill,
	and a budget's estimate of a prompt holding audio let a run past its cap. The price table's
	supplement (tests/providers/update_prices.py, `AUDIO_SUPPLEMENT`) holds the model page's."""
	assert openai().audio_price(model) == audio
	raw = {
		"prompt_tokens": 1_000,
		"completion_tokens": 100,
		"prompt_tokens_details": {"audio_tokens": 900, "cached_tokens": 0},
	}
	found = usage(openai(), model, raw)
	out = openai().price(model)
	assert out is not None
	assert found.cost_usd == pytest.approx((100 * text + 900 * audio + 100 * out[2]) / 1e6)


def _update_prices():
	import importlib.util
	from pathlib import Path

	path = Path(__file__).with_name("update_prices.py")
	spec = importlib.util.spec_from_file_location("update_prices", path)
	assert spec is not None and spec.loader is not None
	module = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(module)
	return module


def test_the_supplement_holds_only_what_genai_prices_lacks() -> None:
	"""Once genai-prices prices a supplemented model's audio, it is the source: the supplement's
	entry is stale and must go (the table takes genai-prices' price either way)."""
	module = _update_prices()
	assert module.AUDIO_SUPPLEMENT["openai"]
	theirs = module.audio(with_supplement=False)
	for provider, models in module.AUDIO_SUPPLEMENT.items():
		for model in models:
			assert model in module.table()[provider], f"{model}: genai-prices has no such model"
			assert model not in theirs.get(provider, {}), f"{model}: genai-prices prices it now"


@pytest.mark.parametrize(
	("model", "text_out", "spoken"),
	[
		("gpt-audio", 10.0, 64.0),
		("gpt-audio-mini", 2.4, 20.0),
		("gpt-4o-audio-preview", 10.0, 80.0),
		("gpt-4o-mini-audio-preview", 0.6, 20.0),
	],
)
def test_a_chat_calls_audio_output_costs_the_audio_output_price(model, text_out, spoken) -> None:
	"""``completion_tokens_details.audio_tokens`` (a reply spoken with ``modalities: ["text",
	"audio"]``) are priced as audio output (gpt-audio: 64 USD a million, text 10; the model
	pages' "Audio tokens, Output"): they were priced as text output, a sixth to an eighth of the
	bill."""
	raw = {
		"prompt_tokens": 1_000,
		"completion_tokens": 500,
		"prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": 0},
		"completion_tokens_details": {"audio_tokens": 400, "reasoning_tokens": 0},
	}
	found = usage(openai(), model, raw)
	price = openai().price(model)
	assert price is not None
	expected = (1_000 * price[0] + 100 * text_out + 400 * spoken) / 1e6
	assert found.cost_usd == pytest.approx(expected)
	assert found.output_tokens == 500


@pytest.mark.parametrize("model", ["gpt-audio", "gpt-audio-mini", "gpt-4o", "o3", "gpt-5-mini"])
def test_a_chat_usage_costs_what_genai_prices_reads_from_it(model) -> None:
	"""Chat Completions' usage (cached, audio in and out, reasoning) is priced as genai-prices'
	own extractor prices it (``api_flavor="chat"``)."""
	from genai_prices import extract_usage

	raw = {
		"prompt_tokens": 10_000,
		"completion_tokens": 5_000,
		"prompt_tokens_details": {"audio_tokens": 6_000, "cached_tokens": 2_000},
		"completion_tokens_details": {"audio_tokens": 4_000, "reasoning_tokens": 500},
	}
	if "audio" not in model:  # a text model's usage names no audio
		raw["prompt_tokens_details"]["audio_tokens"] = 0
		raw["completion_tokens_details"]["audio_tokens"] = 0
	reply = {"model": model, "object": "chat.completion", "usage": raw}
	theirs = extract_usage(reply, provider_id="openai", api_flavor="chat")
	found = usage(openai(), model, raw)
	assert found.cost_usd == pytest.approx(float(theirs.calc_price().total_price), rel=1e-9)
