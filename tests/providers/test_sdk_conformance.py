"""Our request bodies and recorded replies, checked against the official SDKs' own types."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import pytest
import typing_extensions
from pydantic import ConfigDict, TypeAdapter

from openmolt_core.llm import Attachment
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider

FILES = [
	Attachment("image/png", "iVBORw0KGgo="),
	Attachment("application/pdf", "JVBERi0=", "a.pdf"),
]
CONFIGS = [
	{},
	{"thinking": "high", "search": True, "max_output_tokens": 2000},
	{"thinking": False, "temperature": 0.3, "top_p": 0.9, "stop": ["END"]},
	{"thinking": True, "max_output_tokens": 3000},
]

# The official SDKs' types (anthropic, google-genai, google-ads) are imported by these tests
# only: in one xdist group, one worker imports them, not each of the four (noxfile.py).
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("sdk-types")]


def _forbid_extra(tp: Any, seen: set[int]) -> None:
	"""Mark every TypedDict reachable from a type as extra='forbid', so unknown keys fail."""
	if id(tp) in seen:
		return
	seen.add(id(tp))
	if typing_extensions.is_typeddict(tp):
		tp.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
		for hint in typing_extensions.get_type_hints(tp, include_extras=True).values():
			_forbid_extra(hint, seen)
		return
	for arg in typing.get_args(tp):
		_forbid_extra(arg, seen)


def strict_adapter(tp: Any) -> TypeAdapter[Any]:
	_forbid_extra(tp, set())
	return TypeAdapter(tp)


def materialize(value: Any) -> Any:
	"""Consume pydantic's lazy Iterable validators so nested items are validated too."""
	if isinstance(value, dict):
		return {k: materialize(v) for k, v in value.items()}
	if isinstance(value, list | tuple):
		return [materialize(v) for v in value]
	if isinstance(value, Iterator) or type(value).__name__ == "ValidatorIterator":
		return [materialize(v) for v in value]
	return value


@pytest.fixture(scope="module")
def openai_params() -> TypeAdapter[Any]:
	from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

	return strict_adapter(ResponseCreateParamsNonStreaming)


@pytest.fixture(scope="module")
def chat_params() -> TypeAdapter[Any]:
	from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

	return strict_adapter(CompletionCreateParamsNonStreaming)


@pytest.fixture(scope="module")
def anthropic_params() -> TypeAdapter[Any]:
	from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

	return strict_adapter(MessageCreateParamsNonStreaming)


def _noop():
	raise AssertionError("no HTTP in these tests")


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("model", ["gpt-5-mini", "gpt-4.1", "gpt-5.1"])
def test_openai_bodies_match_the_sdk_types(openai_params, req, schema, model, config) -> None:
	"""Responses API bodies validate against openai's ResponseCreateParams, unknown keys refused."""
	p = OpenAIProvider({"api_key": "k"}, _noop)
	import warnings

	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		body = p.build(req(model, schema=schema, attachments=FILES, history=True, **config))
	materialize(openai_params.validate_python(body))


def test_openai_validator_catches_a_wrong_field(openai_params, req) -> None:
	"""The check is real: a misspelled field fails."""
	body = OpenAIProvider({"api_key": "k"}, _noop).build(req("gpt-4.1"))
	body["max_tokens"] = 10
	with pytest.raises(ValueError, match="max_tokens"):
		materialize(openai_params.validate_python(body))
	body = OpenAIProvider({"api_key": "k"}, _noop).build(req("gpt-4.1", attachments=FILES))
	body["input"][0]["content"][1]["url"] = "x"
	with pytest.raises(ValueError):
		materialize(openai_params.validate_python(body))


@pytest.mark.parametrize("config", CONFIGS)
def test_chat_bodies_match_the_sdk_types(chat_params, req, schema, config) -> None:
	"""Chat Completions bodies validate against openai's CompletionCreateParams."""
	import warnings

	p = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, _noop)
	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		body = p.build(req("gpt-4.1", schema=schema, attachments=FILES, history=True, **config))
	materialize(chat_params.validate_python(body))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-6", "claude-opus-4-7"])
def test_anthropic_bodies_match_the_sdk_types(anthropic_params, req, schema, model, config) -> None:
	"""Messages API bodies validate against anthropic's MessageCreateParams, unknown keys refused."""
	import warnings

	p = AnthropicProvider({"api_key": "k"}, _noop)
	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		body = p.build(req(model, schema=schema, attachments=FILES, history=True, **config))
	# Sampling parameters are deprecated API parameters: anthropic 1.0 removed them from its types
	# (its migration guide sends them through extra_body); the API still takes them before 4.7.
	deprecated = {k: body.pop(k) for k in ("temperature", "top_p") if k in body}
	if model == "claude-opus-4-7":
		assert not deprecated
	materialize(anthropic_params.validate_python(body))


def test_anthropic_validator_catches_a_wrong_field(anthropic_params, req) -> None:
	"""The check is real: a misspelled nested field fails."""
	body = AnthropicProvider({"api_key": "k"}, _noop).build(req("claude-sonnet-4-5", thinking=True))
	body["thinking"]["budget"] = 10
	with pytest.raises(ValueError, match="budget"):
		materialize(anthropic_params.validate_python(body))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
def test_gemini_bodies_match_the_sdk_types(req, schema, model, config) -> None:
	"""generateContent bodies validate against google-genai's Content, Tool and GenerationConfig."""
	import warnings

	from google.genai import types

	p = GeminiProvider({"api_key": "k"}, _noop)
	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		body = p.build(req(model, schema=schema, attachments=FILES, history=True, **config))
	allowed = {"contents", "systemInstruction", "tools", "generationConfig"}
	assert set(body) <= allowed
	for content in body["contents"]:
		types.Content.model_validate(content)
	types.Content.model_validate(body["systemInstruction"])
	for tool in body.get("tools", []):
		types.Tool.model_validate(tool)
	if "generationConfig" in body:
		config_model = types.GenerationConfig.model_validate(body["generationConfig"])
		assert (
			config_model.model_dump(by_alias=True, exclude_none=True, mode="json").keys()
			== body["generationConfig"].keys()
		)


def test_gemini_validator_catches_a_wrong_field() -> None:
	"""The check is real: google-genai refuses unknown fields."""
	from google.genai import types

	with pytest.raises(ValueError):
		types.GenerationConfig.model_validate({"maxTokens": 10})


@pytest.mark.parametrize(
	"name", ["openai_text", "openai_search", "openai_refusal", "openai_incomplete"]
)
async def test_recorded_openai_replies_parse_with_the_sdk(server, load, req, name) -> None:
	"""Recorded replies are valid openai Response objects, and we read what the SDK reads."""
	from openai.types.responses import Response

	raw = load(name)
	sdk = Response.model_validate(raw)
	server.reply(raw)
	ours = await OpenAIProvider({"api_key": "k"}, server.http).generate(req("gpt-5-mini"))
	if ours.finish_reason != "refusal":
		assert ours.text == sdk.output_text
	assert sdk.usage is not None
	assert ours.usage.input_tokens == sdk.usage.input_tokens
	assert ours.usage.cached_tokens == sdk.usage.input_tokens_details.cached_tokens
	assert ours.usage.reasoning_tokens == sdk.usage.output_tokens_details.reasoning_tokens


async def test_recorded_chat_reply_parses_with_the_sdk(server, load, req) -> None:
	"""The recorded Chat Completions reply is a valid openai ChatCompletion."""
	from openai.types.chat import ChatCompletion

	raw = load("openai_chat")
	sdk = ChatCompletion.model_validate(raw)
	server.reply(raw)
	ours = await OpenAIProvider({"api_key": "k", "api_mode": "chat"}, server.http).generate(
		req("gpt-4.1")
	)
	assert ours.text == sdk.choices[0].message.content
	assert sdk.usage is not None and sdk.usage.prompt_tokens_details is not None
	assert ours.usage.cached_tokens == sdk.usage.prompt_tokens_details.cached_tokens


@pytest.mark.parametrize(
	"name", ["anthropic_text", "anthropic_search", "anthropic_refusal", "anthropic_max_tokens"]
)
async def test_recorded_anthropic_replies_parse_with_the_sdk(server, load, req, name) -> None:
	"""Recorded replies are valid anthropic Message objects, and we read what the SDK reads."""
	from anthropic.types import Message

	raw = load(name)
	sdk = Message.model_validate(raw)
	server.reply(raw)
	ours = await AnthropicProvider({"api_key": "k"}, server.http).generate(req("claude-sonnet-4-5"))
	assert ours.text == "".join(b.text for b in sdk.content if b.type == "text")
	u = sdk.usage
	assert ours.usage.input_tokens == u.input_tokens + (u.cache_creation_input_tokens or 0) + (
		u.cache_read_input_tokens or 0
	)
	assert ours.usage.cached_tokens == u.cache_read_input_tokens
	assert sdk.stop_reason is not None


@pytest.mark.parametrize(
	"name", ["gemini_text", "gemini_search", "gemini_safety", "gemini_blocked", "gemini_max_tokens"]
)
async def test_recorded_gemini_replies_parse_with_the_sdk(server, load, req, name) -> None:
	"""Recorded replies are valid google-genai GenerateContentResponse objects (unknown fields refused)."""
	from google.genai import types

	raw = load(name)
	sdk = types.GenerateContentResponse.model_validate(raw)
	server.reply(raw)
	ours = await GeminiProvider({"api_key": "k"}, server.http).generate(req("gemini-2.5-flash"))
	parts = sdk.candidates[0].content.parts if sdk.candidates else None
	assert ours.text == "".join(p.text or "" for p in parts or [] if not p.thought)
	meta = sdk.usage_metadata
	assert meta is not None
	assert ours.usage.cached_tokens == (meta.cached_content_token_count or 0)
	assert ours.usage.reasoning_tokens == (meta.thoughts_token_count or 0)


def _fitted_request(req, provider, model: str, mode: str):
	"""A request carrying a reply schema fitted to the provider's dialect, in the given mode."""
	import dataclasses

	from openmolt_core.envelope import Envelope, ToolSchema
	from openmolt_core.structured import fit

	issue = ToolSchema(
		"github.createIssue",
		{
			"type": "object",
			"properties": {
				"title": {"type": "string", "maxLength": 256},
				"labels": {"type": "array", "items": {"type": "string"}},
				"state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
			},
			"required": ["title"],
		},
	)
	anything = ToolSchema("x.any", {"type": "object", "properties": {"value": {}}})
	tools = [issue] if mode == "strict" else [issue, anything]
	output = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
	envelope = Envelope.build(tools, output_schema=output, human_input=True)
	fitted = fit(envelope, None if mode == "off" else provider.schema_dialect(model))
	assert fitted.mode == mode
	return dataclasses.replace(
		req(model, attachments=FILES, history=True),
		response_schema=fitted.schema,
		response_mode=fitted.mode,
	)


@pytest.mark.parametrize("mode", ["strict", "partial", "off"])
def test_fitted_bodies_match_the_sdk_types(
	openai_params, chat_params, anthropic_params, req, mode
) -> None:
	"""Bodies carrying a fitted schema, in every mode, validate against each SDK's request types."""
	from google.genai import types

	openai = OpenAIProvider({"api_key": "k"}, _noop)
	materialize(
		openai_params.validate_python(
			openai.build(_fitted_request(req, openai, "gpt-5-mini", mode))
		)
	)
	chat = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, _noop)
	materialize(
		chat_params.validate_python(chat.build(_fitted_request(req, chat, "gpt-4.1", mode)))
	)
	claude = AnthropicProvider({"api_key": "k"}, _noop)
	body = claude.build(_fitted_request(req, claude, "claude-sonnet-4-5", mode))
	assert ("output_config" in body) is (mode != "off")
	materialize(anthropic_params.validate_python(body))
	gemini = GeminiProvider({"api_key": "k"}, _noop)
	config = gemini.build(_fitted_request(req, gemini, "gemini-2.5-flash", mode))[
		"generationConfig"
	]
	model = types.GenerationConfig.model_validate(config)
	assert model.model_dump(by_alias=True, exclude_none=True, mode="json").keys() == config.keys()
