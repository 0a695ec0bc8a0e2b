"""A Gemini reply's ``usageMetadata`` costs what genai-prices reads from it.

Gemini's usage counts apart what the price pages price apart: ``promptTokenCount`` holds the
cached tokens (``cachedContentTokenCount``), ``toolUsePromptTokenCount`` and
``thoughtsTokenCount`` are counted beside the prompt and the candidates, and the modality lists
(``promptTokensDetails``, ``cacheTokensDetails``, ``candidatesTokensDetails``) say which are audio
(Gemini Flash prices audio input apart; a live model its spoken reply; only the live models,
which take no ``generateContent`` call, price images apart). Each reply is priced as
genai-prices' own extractor (``extract_usage``) prices it (Gemini API reference,
``GenerateContentResponse.UsageMetadata``, v1beta).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.gemini._convert import _usage


def _never() -> httpx.AsyncClient:
	raise AssertionError("nothing is sent")


def _modalities(**counts: int) -> list[dict[str, Any]]:
	return [{"modality": m.upper(), "tokenCount": n} for m, n in counts.items()]


USAGES = {
	"thoughts, cache, tool use and audio in": {
		"promptTokenCount": 100_000,
		"cachedContentTokenCount": 50_000,
		"toolUsePromptTokenCount": 1_000,
		"candidatesTokenCount": 2_000,
		"thoughtsTokenCount": 3_000,
		"promptTokensDetails": _modalities(text=60_000, audio=40_000),
		"cacheTokensDetails": _modalities(text=30_000, audio=20_000),
		"candidatesTokensDetails": _modalities(text=2_000),
	},
	"a spoken reply": {
		"promptTokenCount": 10_000,
		"candidatesTokenCount": 2_000,
		"promptTokensDetails": _modalities(text=4_000, audio=6_000),
		"candidatesTokensDetails": _modalities(text=500, audio=1_500),
	},
	"past the long-context threshold": {
		"promptTokenCount": 250_000,
		"cachedContentTokenCount": 100_000,
		"candidatesTokenCount": 4_000,
		"thoughtsTokenCount": 6_000,
	},
}


@pytest.mark.parametrize(
	"model",
	["gemini-2.5-flash", "gemini-2.5-pro", "gemini-3-flash-preview", "gemini-live-2.5-flash"],
)
@pytest.mark.parametrize("shape", list(USAGES))
def test_a_replys_usage_costs_what_genai_prices_says(model: str, shape: str) -> None:
	from genai_prices import extract_usage

	reply = {
		"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
		"usageMetadata": USAGES[shape],
		"modelVersion": model,
	}
	theirs = extract_usage(reply, provider_id="google")
	ours = _usage(GeminiProvider({"api_key": "k"}, _never), model, reply)
	assert ours.input_tokens == theirs.usage.input_tokens
	assert ours.output_tokens == theirs.usage.output_tokens
	assert ours.cost_usd == pytest.approx(float(theirs.calc_price().total_price), rel=1e-9)
