"""``max_output_tokens`` within the model's own output limit.

A request above the model's ceiling is refused by the vendor at every step: OpenAI's 400 "max_tokens
is too large: 200000. This model supports at most 16384 completion tokens", Anthropic's
"max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens", Gemini's
INVALID_ARGUMENT "the supported range is from 1 (inclusive) to 65537 (exclusive)". The ceiling of
a model whose limit its vendor's model pages state is sent, with a warning once; a model whose
limit is not known here (a newer one, another server's) gets what the agent asked.
"""

from __future__ import annotations

import httpx
import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider

ASKED = 1_000_000


def _never() -> httpx.AsyncClient:
	raise AssertionError("nothing is sent")


@pytest.mark.parametrize(
	("model", "most"),
	[
		("gpt-4o", 16_384),
		("gpt-4o-mini-2024-07-18", 16_384),
		("gpt-4o-2024-05-13", 4_096),
		("gpt-4.1", 32_768),
		("gpt-4.1-nano", 32_768),
		("o3", 100_000),
		("o4-mini", 100_000),
		("gpt-5", 128_000),
		("gpt-5-mini", 128_000),
		("gpt-5-chat-latest", 16_384),
		("gpt-3.5-turbo", 4_096),
		("gpt-4-turbo", 4_096),
	],
)
@pytest.mark.parametrize("api_mode", ["chat", "responses"])
def test_openai_sends_the_models_output_limit(req, model: str, most: int, api_mode: str) -> None:
	openai = OpenAIProvider({"api_key": "k", "api_mode": api_mode}, _never)
	with pytest.warns(ModelConfigWarning, match=f"at most {most:,} output tokens"):
		body = openai.build(req(model, max_output_tokens=ASKED))
	field = "max_output_tokens" if api_mode == "responses" else "max_completion_tokens"
	assert body[field] == most


def test_azure_openai_sends_the_models_output_limit(req) -> None:
	url = "https://my-res.openai.azure.com/openai/v1"
	azure = OpenAIProvider({"api_key": "k", "api_mode": "chat", "base_url": url}, _never)
	with pytest.warns(ModelConfigWarning, match="at most 16,384 output tokens"):
		body = azure.build(req("gpt-4o", max_output_tokens=ASKED))
	assert body["max_tokens"] == 16_384


@pytest.mark.parametrize(
	("model", "most"),
	[
		("claude-3-haiku-20240307", 4_096),
		("claude-3-5-haiku-latest", 8_192),
		("claude-3-7-sonnet-latest", 64_000),
		("claude-opus-4-1-20250805", 32_000),
		("claude-opus-4-20250514", 32_000),
		("claude-sonnet-4-20250514", 64_000),
		("claude-sonnet-4-5", 64_000),
		("claude-haiku-4-5", 64_000),
		("us.anthropic.claude-opus-4-1-20250805-v1:0", 32_000),
		("claude-opus-4-6", 128_000),
	],
)
def test_anthropic_sends_the_models_output_limit(req, model: str, most: int) -> None:
	anthropic = AnthropicProvider({"api_key": "k"}, _never)
	with pytest.warns(ModelConfigWarning, match=f"at most {most:,} output tokens"):
		body = anthropic.build(req(model, max_output_tokens=ASKED))
	assert body["max_tokens"] == most


def test_anthropic_thinking_budget_stays_under_the_limit(req) -> None:
	"""The thinking budget is fitted to the ceiling sent, not to what was asked: budget_tokens
	must be less than max_tokens."""
	anthropic = AnthropicProvider({"api_key": "k"}, _never)
	with pytest.warns(ModelConfigWarning):
		body = anthropic.build(req("claude-3-5-sonnet-latest", max_output_tokens=ASKED))
	assert body["max_tokens"] == 8_192
	with pytest.warns(ModelConfigWarning):
		body = anthropic.build(req("claude-opus-4-1", max_output_tokens=ASKED, thinking="high"))
	assert body["max_tokens"] == 32_000
	assert 1024 <= body["thinking"]["budget_tokens"] < body["max_tokens"]


@pytest.mark.parametrize(
	("model", "most"),
	[
		("gemini-2.5-pro", 65_536),
		("gemini-2.5-flash", 65_536),
		("gemini-2.5-flash-lite", 65_536),
		("gemini-2.0-flash", 8_192),
		("gemini-2.0-flash-lite", 8_192),
		("gemini-3-pro-preview", 65_536),
		("gemini-3-flash-preview", 65_536),
	],
)
def test_gemini_sends_the_models_output_limit(req, model: str, most: int) -> None:
	gemini = GeminiProvider({"api_key": "k"}, _never)
	with pytest.warns(ModelConfigWarning, match=f"at most {most:,} output tokens"):
		body = gemini.build(req(model, max_output_tokens=ASKED))
	assert body["generationConfig"]["maxOutputTokens"] == most


@pytest.mark.filterwarnings("error")
def test_within_the_limit_or_unknown_it_is_sent_as_asked(req) -> None:
	openai = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, _never)
	assert openai.build(req("gpt-4o", max_output_tokens=16_384))["max_completion_tokens"] == 16_384
	local = OpenAIProvider(
		{"api_key": "k", "api_mode": "chat", "base_url": "http://localhost:8000/v1"}, _never
	)
	assert local.build(req("gpt-4o", max_output_tokens=ASKED))["max_tokens"] == ASKED
	anthropic = AnthropicProvider({"api_key": "k"}, _never)
	assert (
		anthropic.build(req("claude-mythos-preview", max_output_tokens=ASKED))["max_tokens"]
		== ASKED
	)
	assert anthropic.build(req("qwen2.5:7b", max_output_tokens=ASKED))["max_tokens"] == ASKED
	gemini = GeminiProvider({"api_key": "k"}, _never)
	body = gemini.build(req("gemini-2.5-flash", max_output_tokens=65_536))
	assert body["generationConfig"]["maxOutputTokens"] == 65_536
