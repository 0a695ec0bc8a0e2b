"""What each provider sends for a fitted reply schema, per mode; and plain JSON for a server that
refuses ``response_format``."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import httpx
import pytest

from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelConfig, ModelRequest
from openmolt_core.structured import FittedSchema, fit
from openmolt_providers import ModelConfigWarning
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.anthropic._dialect import ANTHROPIC
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.gemini._dialect import GEMINI
from openmolt_providers.openai import OpenAIProvider
from openmolt_providers.openai._dialect import OPENAI, OPENAI_FINE_TUNED

pytestmark = pytest.mark.anyio

ISSUE = ToolSchema(
	"github.createIssue",
	{
		"type": "object",
		"properties": {"title": {"type": "string"}, "body": {"type": "string"}},
		"required": ["title"],
	},
)
PAGE = ToolSchema(
	"notion.createPage",
	{
		"type": "object",
		"properties": {"properties": {"type": "object"}, "icon": {"description": "Any JSON."}},
	},
)
"""A tool without a strict form anywhere (a property that allows any value)."""
ENVELOPES = {
	"strict": Envelope.build([ISSUE], output_schema=None, human_input=False),
	"partial": Envelope.build([ISSUE, PAGE], output_schema=None, human_input=False),
}


def fitted(provider: Any, model: str, mode: str) -> FittedSchema:
	if mode == "off":
		return fit(ENVELOPES["strict"], None)
	result = fit(ENVELOPES[mode], provider.schema_dialect(model))
	assert result.mode == mode
	return result


def request(req: Any, model: str, f: FittedSchema, **config: Any) -> ModelRequest:
	r: ModelRequest = req(model, **config)
	return dataclasses.replace(r, response_schema=f.schema, response_mode=f.mode)


def noop() -> httpx.AsyncClient:
	raise AssertionError("no HTTP here")


@pytest.mark.parametrize("mode", ["strict", "partial", "off"])
def test_openai_responses_text_format(req, mode) -> None:
	"""Responses: strict and partial send the fitted schema with strict true; off asks JSON mode."""
	p = OpenAIProvider({"api_key": "k"}, noop)
	f = fitted(p, "gpt-5-mini", mode)
	fmt = p.build(request(req, "gpt-5-mini", f))["text"]["format"]
	if mode == "off":
		assert fmt == {"type": "json_object"}
	else:
		assert fmt == {
			"type": "json_schema",
			"name": "commands",
			"schema": f.schema,
			"strict": True,
		}
	if mode == "partial":
		page = fmt["schema"]["properties"]["commands"]["items"]["anyOf"][1]
		assert page["properties"]["input"]["type"] == "string"


@pytest.mark.parametrize("mode", ["strict", "partial", "off"])
def test_openai_chat_response_format(req, mode) -> None:
	"""Chat Completions: the same three modes in response_format."""
	p = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, noop)
	f = fitted(p, "gpt-4.1", mode)
	fmt = p.build(request(req, "gpt-4.1", f))["response_format"]
	if mode == "off":
		assert fmt == {"type": "json_object"}
	else:
		spec = {"name": "commands", "schema": f.schema, "strict": True}
		assert fmt == {"type": "json_schema", "json_schema": spec}


@pytest.mark.parametrize("mode", ["strict", "partial", "off"])
def test_anthropic_output_config_format(req, mode) -> None:
	"""Anthropic: strict and partial go to output_config.format; off sends no format."""
	p = AnthropicProvider({"api_key": "k"}, noop)
	f = fitted(p, "claude-sonnet-4-5", mode)
	body = p.build(request(req, "claude-sonnet-4-5", f))
	if mode == "off":
		assert "output_config" not in body
	else:
		assert body["output_config"] == {"format": {"type": "json_schema", "schema": f.schema}}


@pytest.mark.parametrize("mode", ["strict", "partial", "off"])
def test_gemini_response_json_schema(req, mode) -> None:
	"""Gemini: strict and partial send responseJsonSchema; off sends JSON mode only."""
	p = GeminiProvider({"api_key": "k"}, noop)
	f = fitted(p, "gemini-2.5-flash", mode)
	generation = p.build(request(req, "gemini-2.5-flash", f))["generationConfig"]
	assert generation["responseMimeType"] == "application/json"
	if mode == "off":
		assert "responseJsonSchema" not in generation
	else:
		assert generation["responseJsonSchema"] == f.schema


def test_each_provider_declares_its_dialect_per_model() -> None:
	"""Dialects by model: structured output where the API documents it, None where it does not."""
	openai = OpenAIProvider({"api_key": "k"}, noop)
	assert openai.schema_dialect("gpt-5-mini") is OPENAI
	assert openai.schema_dialect("ft:gpt-4o-mini:acme::1") is OPENAI_FINE_TUNED
	assert openai.schema_dialect("gpt-3.5-turbo") is None
	assert openai.schema_dialect("gpt-4-turbo") is None
	assert openai.schema_dialect("gpt-4o-2024-05-13") is None
	assert openai.schema_dialect("gpt-4o") is OPENAI
	# A fine-tune has its base model's structured output: none for GPT-3.5 and GPT-4 (they were
	# sent a strict schema, which the API refuses for them).
	assert openai.schema_dialect("ft:gpt-3.5-turbo-0125:acme::x") is None
	assert openai.schema_dialect("ft:gpt-4-0613:acme::x") is None
	assert openai.schema_dialect("ft:gpt-4.1-2025-04-14:acme::x") is OPENAI_FINE_TUNED
	claude = AnthropicProvider({"api_key": "k"}, noop)
	assert claude.schema_dialect("claude-sonnet-4-5") is ANTHROPIC
	assert claude.schema_dialect("claude-opus-5") is ANTHROPIC
	assert claude.schema_dialect("claude-3-7-sonnet-latest") is None
	assert claude.schema_dialect("claude-opus-4-1") is None
	search = ModelConfig(search=True)
	assert claude.schema_dialect("claude-sonnet-4-5", search) is None
	gemini = GeminiProvider({"api_key": "k"}, noop)
	assert gemini.schema_dialect("gemini-2.5-flash") is GEMINI
	assert gemini.schema_dialect("gemini-3-pro-preview", search) is GEMINI
	assert gemini.schema_dialect("gemini-2.5-flash", search) is None
	assert gemini.schema_dialect("gemini-2.0-flash") is None
	assert gemini.schema_dialect("models/gemini-flash-latest") is GEMINI


def test_search_turns_strict_output_off_with_a_warning(req) -> None:
	"""A schema fitted without knowing search is on: left out where they do not combine, said once."""
	claude = AnthropicProvider({"api_key": "k"}, noop)
	f = fit(ENVELOPES["strict"], ANTHROPIC)
	with pytest.warns(ModelConfigWarning, match="does not combine with search"):
		body = claude.build(request(req, "claude-sonnet-4-5", f, search=True))
	assert "output_config" not in body
	gemini = GeminiProvider({"api_key": "k"}, noop)
	g = fit(ENVELOPES["strict"], GEMINI)
	with pytest.warns(ModelConfigWarning, match="does not combine with search"):
		body = gemini.build(request(req, "gemini-2.5-flash", g, search=True))
	assert "generationConfig" not in body
	body = gemini.build(request(req, "gemini-3-flash-preview", g, search=True))
	assert body["generationConfig"]["responseJsonSchema"] == g.schema


def test_a_model_without_structured_output_is_fitted_off(req) -> None:
	"""A model whose dialect is None gets mode off: JSON mode on OpenAI, nothing on Claude 3.7."""
	openai = OpenAIProvider({"api_key": "k"}, noop)
	f = fit(ENVELOPES["strict"], openai.schema_dialect("gpt-3.5-turbo"))
	assert f.mode == "off"
	assert openai.build(request(req, "gpt-3.5-turbo", f))["text"] == {
		"format": {"type": "json_object"}
	}
	claude = AnthropicProvider({"api_key": "k"}, noop)
	c = fit(ENVELOPES["strict"], claude.schema_dialect("claude-3-7-sonnet-latest"))
	assert "output_config" not in claude.build(request(req, "claude-3-7-sonnet-latest", c))


# plain JSON for a server that refuses response_format ---------------------------------------

LOCAL = {"base_url": "http://localhost:8000/v1", "api_mode": "chat"}


def refuse(status: int, message: str) -> httpx.Response:
	return httpx.Response(status, json={"error": {"message": message}})


async def test_a_server_that_refuses_response_format_gets_plain_json_with_one_warning(
	server, load, req
) -> None:
	"""A compatible server's 400 on response_format: sent again without it, remembered, said once."""
	server.reply(refuse(400, "response_format json_schema is not supported"), load("openai_chat"))
	p = OpenAIProvider(LOCAL, server.http, sleep=server.sleep)
	f = fit(ENVELOPES["strict"], p.schema_dialect("llama3.2"))
	with pytest.warns(ModelConfigWarning) as caught:
		response = await p.generate(request(req, "llama3.2", f))
	assert response.text
	first, second = (r for r in server.requests)
	assert b"response_format" in first.content and b"response_format" not in second.content
	(warning,) = caught
	text = str(warning.message)
	assert "http://localhost:8000/v1" in text and "rejected response_format" in text
	assert "not supported" in text
	assert p.plain_json and p.schema_dialect("llama3.2") is None
	with warnings.catch_warnings():
		warnings.simplefilter("error")
		await p.generate(request(req, "llama3.2", f))
	assert b"response_format" not in server.requests[-1].content
	assert len(server.requests) == 3
	# Later agents on this provider are fitted off, and the body carries no JSON mode either.
	off = fit(ENVELOPES["strict"], p.schema_dialect("llama3.2"))
	assert "response_format" not in p.build(request(req, "llama3.2", off))


async def test_responses_mode_on_a_compatible_server_drops_text_format(server, load, req) -> None:
	"""The same on the Responses API: text.format goes, the rest of text stays."""
	server.reply(refuse(422, "unknown field text.format"), load("openai_text"))
	p = OpenAIProvider({"base_url": "http://gateway.local/v1", "api_key": "k"}, server.http)
	f = fit(ENVELOPES["strict"], p.schema_dialect("gpt-5-mini"))
	with pytest.warns(ModelConfigWarning, match="rejected text.format"):
		await p.generate(request(req, "gpt-5-mini", f))
	assert "text" not in server.body


async def test_the_official_api_is_not_second_guessed(server, req) -> None:
	"""api.openai.com refusing a schema is an error to report, not a reason to drop the format."""
	server.reply(refuse(400, "Invalid schema for response_format 'commands'"))
	p = OpenAIProvider({"api_key": "k"}, server.http)
	f = fit(ENVELOPES["strict"], OPENAI)
	with pytest.raises(ProviderError, match="Invalid schema"):
		await p.generate(request(req, "gpt-5-mini", f))
	assert len(server.requests) == 1 and not p.plain_json


async def test_a_refusal_that_was_not_about_the_format_is_raised_and_not_remembered(
	server, req
) -> None:
	"""When the plain request fails too, its error is raised and structured output stays on."""
	server.reply(refuse(400, "model llama9 not found"))
	p = OpenAIProvider(LOCAL, server.http)
	f = fit(ENVELOPES["strict"], p.schema_dialect("llama9"))
	with pytest.raises(ProviderError, match="not found"):
		await p.generate(request(req, "llama9", f))
	assert len(server.requests) == 2 and not p.plain_json
	assert p.schema_dialect("llama9") is OPENAI


async def test_no_retry_when_no_format_was_sent(server, req) -> None:
	"""A 400 on a request without structured output is raised at once."""
	server.reply(refuse(400, "bad request"))
	p = OpenAIProvider(LOCAL, server.http)
	with pytest.raises(ProviderError):
		await p.generate(req("llama3.2"))
	assert len(server.requests) == 1
