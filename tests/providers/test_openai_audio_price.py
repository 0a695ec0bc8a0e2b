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
