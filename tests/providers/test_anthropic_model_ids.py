"""A Claude model's version is read from every spelling of its id, so what is sent is what that
model accepts.

The ids as the platforms write them (Anthropic's "Claude on Amazon Bedrock" and "Claude on Vertex
AI" pages, and gateways): ``anthropic.claude-sonnet-4-5-20250929-v1:0`` and the cross-region
``us.``/``global.`` profiles on Bedrock, ``claude-sonnet-4-5@20250929`` on Vertex AI,
``anthropic/claude-opus-4.6`` (a dotted version) on OpenRouter. The Vertex id was read as 4.0 and
the dotted one as unknown, so Claude Opus 4.7 there was sent ``budget_tokens`` and
``temperature``, which it refuses with a 400, and Claude 3.5 Sonnet was sent thinking.
"""

from __future__ import annotations

import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.anthropic._models import NEWEST, version

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
	("model", "expected"),
	[
		("claude-sonnet-4-5-20250929", (4, 5)),
		("anthropic.claude-sonnet-4-5-20250929-v1:0", (4, 5)),
		("us.anthropic.claude-opus-4-7-v1", (4, 7)),
		("global.anthropic.claude-haiku-4-5-20251001-v1:0", (4, 5)),
		("claude-sonnet-4-5@20250929", (4, 5)),
		("claude-opus-4-7@20260416", (4, 7)),
		("claude-3-5-sonnet-v2@20241022", (3, 5)),
		("claude-3-haiku@20240307", (3, 0)),
		("anthropic/claude-opus-4.6", (4, 6)),
		("claude-sonnet-4.5", (4, 5)),
		("claude-3.7-sonnet", (3, 7)),
		("claude-3.5-haiku", (3, 5)),
		("claude-2.1", (2, 1)),
		("CLAUDE-OPUS-4-7", (4, 7)),
		# Claude 1 and 2 as Bedrock and the first API named them.
		("anthropic.claude-v2:1", (2, 1)),
		("anthropic.claude-v2", (2, 0)),
		("claude-instant-v1", (1, 0)),
		# A Claude id that names no version: newer than the versioned ones.
		("claude-mythos-preview", NEWEST),
		("us.anthropic.claude-mythos-preview-v1:0", NEWEST),
		# Another model behind a Messages API (Ollama, LiteLLM): no Claude version in its name.
		("llama3.2", (0, 0)),
		("qwen2.5:7b", (0, 0)),
		("glm-4.5", (0, 0)),
	],
)
def test_the_version_of_every_spelling(model, expected) -> None:
	"""Dates (``-20250929``, ``@20250929``), Bedrock's ``-v1:0`` and dots do not hide it."""
	assert version(model) == expected


def provider(server):
	return AnthropicProvider({"api_key": "sk-ant-test"}, server.http, sleep=server.sleep)


@pytest.mark.parametrize(
	"model", ["claude-opus-4-7@20260416", "anthropic/claude-opus-4.7", "claude-opus-4.7"]
)
async def test_claude_47_spelt_otherwise_thinks_adaptively_without_temperature(
	server, load, req, model
) -> None:
	"""Claude 4.7 however spelt: adaptive thinking, and no temperature (it refuses both others)."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="temperature"):
		await provider(server).generate(req(model, thinking=True, temperature=0.3))
	assert server.body["thinking"]["type"] == "adaptive"
	assert "temperature" not in server.body


@pytest.mark.parametrize("model", ["claude-3-5-sonnet-v2@20241022", "claude-3.5-haiku"])
async def test_claude_35_spelt_otherwise_is_not_sent_thinking(server, load, req, model) -> None:
	"""Claude 3.5 however spelt has no extended thinking: none is sent."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="no extended thinking"):
		await provider(server).generate(req(model, thinking=True))
	assert "thinking" not in server.body


@pytest.mark.parametrize(
	"model", ["claude-mythos-preview", "anthropic.claude-mythos-preview", "claude-opus-latest"]
)
async def test_a_claude_id_without_a_version_is_sent_what_the_newest_accept(
	server, load, req, model
) -> None:
	"""Claude Mythos Preview names no version: it was read as unknown and sent ``budget_tokens``
	(a 400: it "only supports adaptive thinking", Anthropic's and Bedrock's adaptive thinking
	pages) and ``temperature`` (rejected from Claude Opus 4.7 on). Adaptive thinking with the
	effort asked, no temperature, structured output: what the latest generation accepts."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="temperature"):
		await provider(server).generate(req(model, thinking="high", temperature=0.3))
	assert server.body["thinking"] == {"type": "adaptive"}
	assert server.body["output_config"]["effort"] == "high"
	assert "temperature" not in server.body


async def test_another_model_behind_the_messages_api_keeps_its_temperature(
	server, load, req
) -> None:
	"""A model that is no Claude (Ollama's qwen2.5:7b) is not read as the newest Claude: its
	temperature is sent, and thinking in the form those servers take (``budget_tokens``)."""
	server.reply(load("anthropic_text"))
	await provider(server).generate(req("qwen2.5:7b", temperature=0.3))
	assert server.body["temperature"] == 0.3
	server.reply(load("anthropic_text"))
	await provider(server).generate(req("qwen2.5:7b", thinking=True))
	assert server.body["thinking"]["type"] == "enabled"


@pytest.mark.parametrize(
	"model",
	["claude-3-haiku-20240307", "claude-3-opus-20240229", "anthropic.claude-3-haiku-20240307-v1:0"],
)
async def test_a_claude_3_model_is_not_sent_web_search(server, load, req, model) -> None:
	"""The web search tool exists on Claude 3.5 Haiku, 3.5 Sonnet (new), 3.7 Sonnet and Claude 4
	and later (the web search tool page, "Supported models"): Claude 3 Haiku was sent it and
	refused with a 400 at every step. Dropped with a warning, as Chat drops it."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="web search"):
		await provider(server).generate(req(model, search=True))
	assert "tools" not in server.body


@pytest.mark.parametrize("model", ["claude-3-5-haiku-20241022", "claude-3-7-sonnet-latest"])
async def test_claude_35_and_later_search(server, load, req, model) -> None:
	server.reply(load("anthropic_text"))
	await provider(server).generate(req(model, search=True))
	assert server.body["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-3-5-haiku-20241022"])
async def test_claude_is_sent_a_temperature_of_at_most_1(server, load, req, model) -> None:
	"""The Messages API takes temperature from 0.0 to 1.0 (OpenAI's and Gemini's go to 2.0, which
	model_config allows): 1.5 was refused with a 400 at every step. Sent as 1.0, with a warning."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="0.0 to 1.0"):
		await provider(server).generate(req(model, temperature=1.5))
	assert server.body["temperature"] == 1.0


async def test_another_model_behind_the_messages_api_keeps_a_temperature_over_1(
	server, load, req
) -> None:
	server.reply(load("anthropic_text"))
	await provider(server).generate(req("qwen2.5:7b", temperature=1.5))
	assert server.body["temperature"] == 1.5
