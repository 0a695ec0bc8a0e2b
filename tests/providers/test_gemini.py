from __future__ import annotations

import json

import pytest

from openmolt_core.llm import Attachment
from openmolt_providers import ModelConfigWarning
from openmolt_providers.gemini import GeminiProvider

pytestmark = pytest.mark.anyio

KEY = "AIzaSyTestKey0000000000"
BASE = {
	"systemInstruction": {"parts": [{"text": "You are Finder."}]},
	"contents": [{"role": "user", "parts": [{"text": '{"input": "Capital of Norway?"}'}]}],
}


def provider(server, **settings):
	return GeminiProvider({"api_key": KEY, **settings}, server.http, sleep=server.sleep)


async def test_minimal_request_key_in_header_not_url(server, load, req) -> None:
	"""The key goes in x-goog-api-key, never in the URL."""
	server.reply(load("gemini_text"))
	await provider(server).generate(req("gemini-2.5-flash"))
	sent = server.requests[0]
	assert str(sent.url) == (
		"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
	)
	assert KEY not in str(sent.url)
	assert sent.headers["x-goog-api-key"] == KEY
	assert server.body == BASE


@pytest.mark.parametrize(
	("config", "generation", "extra"),
	[
		({"temperature": 0.2}, {"temperature": 0.2}, {}),
		({"top_p": 0.9}, {"topP": 0.9}, {}),
		({"max_output_tokens": 500}, {"maxOutputTokens": 500}, {}),
		({"stop": ["END"]}, {"stopSequences": ["END"]}, {}),
		({"search": True}, None, {"tools": [{"googleSearch": {}}]}),
		({"thinking": True}, {"thinkingConfig": {"thinkingBudget": -1}}, {}),
		({"thinking": "low"}, {"thinkingConfig": {"thinkingBudget": 1024}}, {}),
		({"thinking": False}, {"thinkingConfig": {"thinkingBudget": 0}}, {}),
		({"provider_options": {"safetySettings": []}}, None, {"safetySettings": []}),
	],
)
async def test_each_config_key(server, load, req, config, generation, extra) -> None:
	"""Each model_config key maps to its generateContent field on Gemini 2.5 Flash."""
	server.reply(load("gemini_text"))
	await provider(server).generate(req("gemini-2.5-flash", **config))
	expected = {**BASE, **extra}
	if generation:
		expected["generationConfig"] = generation
	assert server.body == expected


@pytest.mark.parametrize(
	("model", "thinking", "config"),
	[
		("gemini-3-flash-preview", "medium", {"thinkingLevel": "MEDIUM"}),
		("gemini-3-flash-preview", False, {"thinkingLevel": "MINIMAL"}),
		("gemini-3-pro-preview", True, {"thinkingLevel": "HIGH"}),
	],
)
async def test_gemini3_uses_thinking_level(server, load, req, model, thinking, config) -> None:
	"""Gemini 3 takes thinkingLevel instead of a budget."""
	server.reply(load("gemini_text"))
	await provider(server).generate(req(model, thinking=thinking))
	assert server.body["generationConfig"]["thinkingConfig"] == config


async def test_pro_cannot_stop_thinking(server, load, req) -> None:
	"""Gemini 2.5 Pro cannot turn thinking off: the lowest budget, with a warning."""
	server.reply(load("gemini_text"))
	with pytest.warns(ModelConfigWarning, match="cannot stop thinking"):
		await provider(server).generate(req("gemini-2.5-pro", thinking=False))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 128}


async def test_structured_output_and_search_fallback(server, load, req, schema) -> None:
	"""JSON schema output on its own; with search on 2.5 it is left out, on Gemini 3 kept."""
	server.reply(load("gemini_text"))
	p = provider(server)
	await p.generate(req("gemini-2.5-flash", schema=schema))
	gen = server.body["generationConfig"]
	assert gen["responseMimeType"] == "application/json"
	item = gen["responseJsonSchema"]["properties"]["commands"]["items"]["anyOf"][0]
	assert item["properties"]["type"] == {"enum": ["finish"], "type": "string"}
	await p.generate(req("gemini-2.5-flash", schema=schema, search=True))
	assert "generationConfig" not in server.body
	await p.generate(req("gemini-3-flash-preview", schema=schema, search=True))
	assert server.body["generationConfig"]["responseMimeType"] == "application/json"
	assert server.body["tools"] == [{"googleSearch": {}}]


async def test_attachments_and_roles(server, load, req) -> None:
	"""Attachments are inlineData parts; assistant turns have role model."""
	server.reply(load("gemini_text"))
	files = [Attachment("image/png", "iVBORw0KGgo=")]
	await provider(server).generate(req("gemini-2.5-flash", attachments=files, history=True))
	contents = server.body["contents"]
	assert contents[0]["parts"][1] == {
		"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}
	}
	assert [c["role"] for c in contents] == ["user", "model", "user"]


async def test_parse_text_usage_and_cost(server, load, req) -> None:
	"""Thought parts are skipped; usage reports cached and thought tokens."""
	raw = load("gemini_text")
	server.reply(raw)
	response = await provider(server).generate(req("gemini-2.5-flash"))
	assert json.loads(response.text)["commands"][0]["output"] == {"answer": "Oslo"}
	assert response.finish_reason == "stop" and response.raw == raw
	u = response.usage
	assert (u.input_tokens, u.output_tokens, u.cached_tokens, u.reasoning_tokens) == (
		1300,
		260,
		1024,
		200,
	)
	assert u.cost_usd == pytest.approx((276 * 0.3 + 1024 * 0.03 + 260 * 2.5) / 1e6)


async def test_parse_grounded_reply(server, load, req) -> None:
	"""A grounded reply yields its text; grounding metadata stays in raw."""
	server.reply(load("gemini_search"))
	response = await provider(server).generate(req("gemini-2.5-flash", search=True))
	assert json.loads(response.text)["commands"][0]["type"] == "finish"
	assert response.raw["candidates"][0]["groundingMetadata"]["webSearchQueries"] == [
		"capital of Norway"
	]


@pytest.mark.parametrize(
	("name", "finish"),
	[
		("gemini_safety", "safety"),
		("gemini_blocked", "blocked"),
		("gemini_max_tokens", "max_tokens"),
	],
)
async def test_parse_safety_blocks_and_truncation(server, load, req, name, finish) -> None:
	"""Safety stops, blocked prompts and truncation are normalized."""
	server.reply(load(name))
	response = await provider(server).generate(req("gemini-2.5-flash"))
	assert response.finish_reason == finish


async def test_gemma_gets_its_instructions_in_the_first_turn_and_no_json_mode(
	server, load, req, schema
) -> None:
	"""Gemma on the Gemini API refuses a system instruction ("Developer instruction is not
	enabled") and JSON mode ("JSON mode is not enabled"): the instructions open the first turn
	(the same at every step), and the prompt alone asks for JSON."""
	server.reply(load("gemini_text"))
	p = provider(server)
	await p.generate(req("gemma-3-27b-it", schema=schema, history=True))
	body = server.body
	assert "systemInstruction" not in body and "generationConfig" not in body
	first = body["contents"][0]
	assert first["role"] == "user"
	assert first["parts"][0] == {"text": "You are Finder."}
	assert first["parts"][1] == {"text": '{"input": "Capital of Norway?"}'}
	assert body["contents"][1]["role"] == "model"
	assert p.schema_dialect("gemma-3-27b-it") is None
