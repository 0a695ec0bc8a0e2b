from __future__ import annotations

import json

import pytest

from openmolt_core.llm import Attachment
from openmolt_providers import ModelConfigWarning
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.anthropic._models import version

pytestmark = pytest.mark.anyio

EPHEMERAL = {"type": "ephemeral"}
FIRST = '{"input": "Capital of Norway?"}'
BASE = {
	"model": "claude-sonnet-4-5",
	"max_tokens": 16384,
	"system": [{"type": "text", "text": "You are Finder.", "cache_control": EPHEMERAL}],
	"messages": [
		{"role": "user", "content": [{"type": "text", "text": FIRST, "cache_control": EPHEMERAL}]}
	],
}


def provider(server, **settings):
	return AnthropicProvider(
		{"apiKey": "sk-ant-test-0000", **settings}, server.http, sleep=server.sleep
	)


async def test_minimal_request_body_and_headers(server, load, req) -> None:
	"""A plain call posts the base body with x-api-key and the pinned anthropic-version."""
	server.reply(load("anthropic_text"))
	await provider(server).generate(req("claude-sonnet-4-5"))
	sent = server.requests[0]
	assert str(sent.url) == "https://api.anthropic.com/v1/messages"
	assert sent.headers["x-api-key"] == "sk-ant-test-0000"
	assert sent.headers["anthropic-version"] == "2023-06-01"
	assert "authorization" not in sent.headers
	assert server.body == BASE


@pytest.mark.parametrize(
	("config", "extra"),
	[
		({"temperature": 0.2}, {"temperature": 0.2}),
		({"top_p": 0.9}, {"top_p": 0.9}),
		({"max_output_tokens": 500}, {"max_tokens": 500}),
		({"stop": ["END"]}, {"stop_sequences": ["END"]}),
		({"search": True}, {"tools": [{"type": "web_search_20250305", "name": "web_search"}]}),
		({"provider_options": {"metadata": {"user_id": "u1"}}}, {"metadata": {"user_id": "u1"}}),
		({"thinking": True}, {"thinking": {"type": "enabled", "budget_tokens": 8192}}),
		(
			{"thinking": "high"},
			{"thinking": {"type": "enabled", "budget_tokens": 16384}, "max_tokens": 24576},
		),
		({"thinking": False}, {}),
	],
)
async def test_each_config_key(server, load, req, config, extra) -> None:
	"""Each model_config key maps to its Messages API field on Claude Sonnet 4.5."""
	server.reply(load("anthropic_text"))
	await provider(server).generate(req("claude-sonnet-4-5", **config))
	assert server.body == {**BASE, **extra}


async def test_adaptive_thinking_on_new_models(server, load, req) -> None:
	"""Claude 4.6+ thinks adaptively, with the level as output_config.effort."""
	server.reply(load("anthropic_text"))
	await provider(server).generate(req("claude-opus-4-6", thinking="low"))
	assert server.body["thinking"] == {"type": "adaptive"}
	assert server.body["output_config"] == {"effort": "low"}


async def test_temperature_with_thinking_is_dropped(server, load, req) -> None:
	"""Thinking forbids temperature: dropped with a warning, thinking kept."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="temperature cannot be set with thinking"):
		await provider(server).generate(req("claude-sonnet-4-5", thinking=True, temperature=0.5))
	assert "temperature" not in server.body
	assert server.body["thinking"]["type"] == "enabled"


async def test_sampling_removed_on_opus_47(server, load, req) -> None:
	"""Claude Opus 4.7 rejects temperature and top_p: dropped with a warning."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="4.7"):
		await provider(server).generate(req("claude-opus-4-7", temperature=0.5, top_p=0.9))
	assert "temperature" not in server.body and "top_p" not in server.body


async def test_only_one_sampler_on_45(server, load, req) -> None:
	"""Claude 4.5 takes temperature or top_p: top_p is dropped with a warning."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="not both"):
		await provider(server).generate(req("claude-haiku-4-5", temperature=0.5, top_p=0.9))
	assert server.body["temperature"] == 0.5 and "top_p" not in server.body


async def test_small_max_tokens_lowers_budget(server, load, req) -> None:
	"""A thinking budget must stay under max_tokens: it is lowered with a warning."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="budget lowered"):
		await provider(server).generate(
			req("claude-sonnet-4-5", thinking="high", max_output_tokens=4000)
		)
	assert server.body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
	assert server.body["max_tokens"] == 4000


async def test_structured_output_and_search_fallback(server, load, req, schema) -> None:
	"""A strict-able schema goes to output_config.format; with search (citations) it is left out."""
	server.reply(load("anthropic_text"))
	p = provider(server)
	await p.generate(req("claude-sonnet-4-5", schema=schema))
	fmt = server.body["output_config"]["format"]
	assert fmt["type"] == "json_schema"
	assert fmt["schema"]["additionalProperties"] is False
	assert fmt["schema"]["properties"]["commands"]["minItems"] == 1
	await p.generate(req("claude-sonnet-4-5", schema=schema, search=True))
	assert "output_config" not in server.body


async def test_free_form_schema_falls_back(server, load, req) -> None:
	"""A free-form object has no structured-output form: instruction-only JSON."""
	server.reply(load("anthropic_text"))
	await provider(server).generate(req("claude-sonnet-4-5", schema={"type": "object"}))
	assert "output_config" not in server.body


async def test_cache_breakpoints_and_attachments(server, load, req) -> None:
	"""Breakpoints mark the first and last turns; attachments are image and document blocks."""
	server.reply(load("anthropic_text"))
	files = [Attachment("image/jpeg", "/9j/4AAQ"), Attachment("application/pdf", "JVBERi0=")]
	await provider(server).generate(req("claude-sonnet-4-5", attachments=files, history=True))
	messages = server.body["messages"]
	assert messages[0]["content"] == [
		{
			"type": "image",
			"source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"},
		},
		{
			"type": "document",
			"source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
		},
		{"type": "text", "text": FIRST, "cache_control": EPHEMERAL},
	]
	assert messages[1] == {"role": "assistant", "content": '{"commands": []}'}
	assert messages[2]["content"][-1]["cache_control"] == EPHEMERAL


async def test_parse_thinking_usage_and_cost(server, load, req) -> None:
	"""Thinking blocks are skipped; input counts fresh, written and read cache tokens."""
	raw = load("anthropic_text")
	server.reply(raw)
	response = await provider(server).generate(req("claude-sonnet-4-5-20250929"))
	assert json.loads(response.text)["commands"][0]["output"] == {"answer": "Oslo"}
	assert response.finish_reason == "stop" and response.raw == raw
	u = response.usage
	assert (u.input_tokens, u.output_tokens, u.cached_tokens) == (1250, 120, 1000)
	assert u.cost_usd == pytest.approx((50 * 3 + 200 * 3.75 + 1000 * 0.3 + 120 * 15) / 1e6)


async def test_parse_search_joins_cited_text(server, load, req) -> None:
	"""Text split around citations is joined back into one reply."""
	server.reply(load("anthropic_search"))
	response = await provider(server).generate(req("claude-sonnet-4-5", search=True))
	assert json.loads(response.text)["commands"][0]["type"] == "finish"


async def test_parse_refusal_and_max_tokens(server, load, req) -> None:
	"""stop_reason refusal (the conversation is blocked) and max_tokens are normalized."""
	server.reply(load("anthropic_refusal"), load("anthropic_max_tokens"))
	p = provider(server)
	assert (await p.generate(req("claude-sonnet-4-5"))).finish_reason == "blocked"
	assert (await p.generate(req("claude-sonnet-4-5"))).finish_reason == "max_tokens"


@pytest.mark.parametrize(
	("model", "expected"),
	[
		("claude-sonnet-4-5-20250929", (4, 5)),
		("claude-3-7-sonnet-latest", (3, 7)),
		("claude-sonnet-4-20250514", (4, 0)),
		("claude-opus-4-7", (4, 7)),
		("claude-sonnet-5", (5, 0)),
	],
)
def test_version_parsing(model, expected) -> None:
	"""Model ids give their version with or without a date."""
	assert version(model) == expected


@pytest.mark.parametrize(
	("model", "max_tokens"),
	[
		("claude-3-haiku-20240307", 4096),
		("claude-3-opus-latest", 4096),
		("claude-3-5-haiku-latest", 8192),
		("claude-3-7-sonnet-latest", 8192),
		("claude-sonnet-4-5", 16384),
	],
)
async def test_default_max_tokens_is_within_the_models_output_limit(
	server, load, req, model, max_tokens
) -> None:
	"""``max_tokens`` is required; without max_output_tokens each model gets one it allows (the
	Claude 3 models allow 4,096: they were sent 8,192, which the API refuses)."""
	server.reply(load("anthropic_text"))
	await provider(server).generate(req(model))
	assert server.body["max_tokens"] == max_tokens
