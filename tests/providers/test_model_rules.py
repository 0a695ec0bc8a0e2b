"""The model rules read one normalised name; reasoning models, fixed efforts, refusals streamed.

Facts checked against the vendors' references: ``codex-mini-latest`` is a fine-tuned o4-mini, a
reasoning model with a 200,000-token window (platform.openai.com/docs/models/codex-mini-latest);
``gpt-5-pro`` defaults to and only supports reasoning effort ``high`` (the API reference of
``reasoning.effort``); Gemini 3 Pro has no MEDIUM thinking level.
"""

from __future__ import annotations

import warnings

import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers._model_id import model_name
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from openmolt_providers.openai._models import is_reasoning
from tests.providers._replies import stream

pytestmark = pytest.mark.anyio

NO = "I can't help with that."


def _openai(server, **settings):
	return OpenAIProvider({"api_key": "sk-test-123456", **settings}, server.http)


def _gemini(server):
	return GeminiProvider({"api_key": "AIza-test"}, server.http)


@pytest.mark.parametrize(
	("model", "name"),
	[
		("models/gemini-3-pro-preview", "gemini-3-pro-preview"),
		("openai/GPT-5", "gpt-5"),
		("ft:gpt-4o-mini-2024-07-18:org::abc123", "gpt-4o-mini-2024-07-18"),
		("qwen3:8b", "qwen3:8b"),
	],
)
def test_one_normalisation_of_model_ids(model, name) -> None:
	"""A prefix, capitals and a fine-tune's ``ft:...:org::id`` are read as the base name."""
	assert model_name(model) == name


@pytest.mark.parametrize(
	("model", "reasoning"),
	[
		("codex-mini-latest", True),
		("o3-pro", True),
		("o4-mini-deep-research", True),
		("gpt-5-pro", True),
		("gpt-6-astra", True),
		("gpt-6.1-sol", True),
		("ft:o4-mini-2025-04-16:org::id", True),
		("gpt-5-chat-latest", False),
		("gpt-4.1", False),
		("gpt-4o", False),
		("omni-moderation-latest", False),
	],
)
def test_what_a_reasoning_model_is(model, reasoning) -> None:
	"""One rule: the o-series, codex-mini and GPT-5 and later, chat variants excepted."""
	assert is_reasoning(model) is reasoning


async def test_codex_mini_is_sent_a_reasoning_effort(server, load, req) -> None:
	"""codex-mini-latest is a reasoning model: thinking becomes reasoning.effort, no temperature."""
	server.reply(load("openai_text"))
	with pytest.warns(ModelConfigWarning, match="temperature"):
		await _openai(server).generate(req("codex-mini-latest", thinking="low", temperature=0.2))
	assert server.body["reasoning"] == {"effort": "low"}
	assert "temperature" not in server.body


@pytest.mark.parametrize("thinking", ["low", "medium", False])
async def test_gpt5_pro_is_sent_effort_high_only(server, load, req, thinking) -> None:
	"""gpt-5-pro accepts only 'high': a lower effort is sent as 'high', with a warning."""
	server.reply(load("openai_text"))
	with pytest.warns(ModelConfigWarning, match="accepts only reasoning effort 'high'"):
		await _openai(server).generate(req("gpt-5-pro-2025-10-06", thinking=thinking))
	assert server.body["reasoning"] == {"effort": "high"}


async def test_gpt5_pro_high_or_default_is_sent_as_asked(server, load, req) -> None:
	"""No warning when the effort is already the one it accepts, or left to its default."""
	server.reply(load("openai_text"))
	with warnings.catch_warnings():
		warnings.simplefilter("error", ModelConfigWarning)
		await _openai(server).generate(req("gpt-5-pro", thinking="high"))
		assert server.body["reasoning"] == {"effort": "high"}
		await _openai(server).generate(req("gpt-5-pro"))
		assert "reasoning" not in server.body


@pytest.mark.parametrize("model", ["models/gemini-3-pro-preview", "google/gemini-3-pro-preview"])
async def test_gemini3_pro_level_check_reads_a_prefixed_id(server, load, req, model) -> None:
	"""``models/gemini-3-pro-preview`` has no MEDIUM level either: HIGH, with a warning."""
	server.reply(load("gemini_text"))
	with pytest.warns(ModelConfigWarning, match="no MEDIUM level"):
		await _gemini(server).generate(req(model, thinking="medium"))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "HIGH"}


@pytest.mark.parametrize(
	("vendor", "model", "size"),
	[
		("google", "models/gemini-3-pro-preview", 1_048_576),
		("openai", "ft:gpt-4o-mini-2024-07-18:org::abc123", 128_000),
		("openai", "openai/GPT-5", 400_000),
		("openai", "codex-mini-latest", 200_000),
		# The aliases name current Gemini models (1M tokens each); 128k was assumed.
		("google", "gemini-flash-latest", 1_048_576),
		("google", "models/gemini-pro-latest", 1_048_576),
		("google", "gemini-flash-lite-latest", 1_048_576),
	],
)
def test_context_window_reads_the_base_name(server, vendor, model, size) -> None:
	"""A ``models/`` or gateway prefix and a fine-tune's ``ft:`` do not hide the model family."""
	provider = _gemini(server) if vendor == "google" else _openai(server)
	assert provider.context_window(model) == size


def _chat_refusal() -> dict:
	message = {"role": "assistant", "content": None, "refusal": NO}
	return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def _responses_refusal() -> dict:
	content = [{"type": "refusal", "refusal": NO}]
	message = {"type": "message", "role": "assistant", "content": content}
	return {"status": "completed", "output": [message]}


@pytest.mark.parametrize(
	("vendor", "reply"), [("chat", _chat_refusal()), ("openai", _responses_refusal())]
)
@pytest.mark.parametrize("size", [1, 7, 4096])
async def test_a_refusal_streams_as_text(vendor, reply, size) -> None:
	"""A refusal streams as text deltas (as on Anthropic and Gemini): they add up to the final
	text, which is the refusal (`stream` checks the sum)."""
	response = await stream(vendor, reply, size=size)
	assert (response.finish_reason, response.text) == ("refusal", NO)


def test_a_context_window_kept_per_model_is_each_provider_class_s_own(server) -> None:
	"""The window read from the model's name is kept by the windows and the model, so a subclass
	with its own windows (a tuple or a list) answers its own, and a setting still wins."""

	class Wider(OpenAIProvider):
		context_windows = (("gpt-4o", 1_000_000),)

	class Listed(OpenAIProvider):
		context_windows = [("gpt-4o", 64_000)]  # type: ignore[assignment]  # noqa: RUF012  # a plugin's mistake

	assert _openai(server).context_window("gpt-4o") == 128_000
	assert Wider({"api_key": "sk-test-123456"}, server.http).context_window("gpt-4o") == 1_000_000
	assert Listed({"api_key": "sk-test-123456"}, server.http).context_window("gpt-4o") == 64_000
	assert Listed({"api_key": "sk-test-123456"}, server.http).context_window("o9") is None
	assert _openai(server).context_window("gpt-4o") == 128_000  # its own, after the others
	assert _openai(server, context_window=32_000).context_window("gpt-4o") == 32_000
