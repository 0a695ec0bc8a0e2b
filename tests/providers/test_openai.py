from __future__ import annotations

import json

import pytest

from openmolt_core.llm import Attachment
from openmolt_providers import ModelConfigWarning
from openmolt_providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

KEY = {"api_key": "sk-test-123456"}
BASE = {
	"model": "gpt-4.1",
	"instructions": "You are Finder.",
	"input": [{"role": "user", "content": '{"input": "Capital of Norway?"}'}],
	"store": False,
	"prompt_cache_key": "openmolt:Finder",
}


def provider(server, **settings):
	return OpenAIProvider({**KEY, **settings}, server.http, sleep=server.sleep)


async def test_minimal_request_body_and_headers(server, load, req) -> None:
	"""A plain call posts exactly the base body to /v1/responses with a bearer key."""
	server.reply(load("openai_text"))
	await provider(server).generate(req("gpt-4.1"))
	sent = server.requests[0]
	assert str(sent.url) == "https://api.openai.com/v1/responses"
	assert sent.headers["authorization"] == "Bearer sk-test-123456"
	assert sent.headers["content-type"] == "application/json"
	assert server.body == BASE


@pytest.mark.parametrize(
	("config", "extra"),
	[
		({"temperature": 0.2}, {"temperature": 0.2}),
		({"top_p": 0.9}, {"top_p": 0.9}),
		({"max_output_tokens": 500}, {"max_output_tokens": 500}),
		({"search": True}, {"tools": [{"type": "web_search"}]}),
		({"provider_options": {"service_tier": "flex"}}, {"service_tier": "flex"}),
	],
)
async def test_each_config_key_on_a_non_reasoning_model(server, load, req, config, extra) -> None:
	"""Each model_config key maps to its Responses API field on gpt-4.1."""
	server.reply(load("openai_text"))
	await provider(server).generate(req("gpt-4.1", **config))
	assert server.body == {**BASE, **extra}


@pytest.mark.parametrize(
	("model", "thinking", "effort"),
	[
		("gpt-5-mini", True, "medium"),
		("gpt-5-mini", "high", "high"),
		("gpt-5-mini", "low", "low"),
		("gpt-5-mini", False, "minimal"),
		("gpt-5.1", False, "none"),
	],
)
async def test_thinking_maps_to_reasoning_effort(
	server, load, req, model, thinking, effort
) -> None:
	"""thinking becomes reasoning.effort; False is the lowest effort the model has."""
	server.reply(load("openai_text"))
	await provider(server).generate(req(model, thinking=thinking))
	assert server.body["reasoning"] == {"effort": effort}


async def test_temperature_on_reasoning_model_is_dropped_with_warning(server, load, req) -> None:
	"""gpt-5-mini rejects temperature and top_p: they are dropped with one warning each."""
	server.reply(load("openai_text"))
	p = provider(server)
	with pytest.warns(ModelConfigWarning, match="reasoning models reject") as record:
		await p.generate(req("gpt-5-mini", temperature=0.3, top_p=0.5))
	assert len(record) == 2
	assert "temperature" not in server.body and "top_p" not in server.body
	await p.generate(req("gpt-5-mini", temperature=0.3, top_p=0.5))  # warned once only


async def test_temperature_kept_on_gpt51_without_thinking(server, load, req) -> None:
	"""GPT-5.1 at effort none accepts temperature."""
	server.reply(load("openai_text"))
	await provider(server).generate(req("gpt-5.1", thinking=False, temperature=0.3))
	assert server.body["temperature"] == 0.3


async def test_search_lifts_minimal_effort(server, load, req) -> None:
	"""Web search does not run at minimal effort, so it is raised to low with a warning."""
	server.reply(load("openai_text"))
	with pytest.warns(ModelConfigWarning, match="search"):
		await provider(server).generate(req("gpt-5", thinking=False, search=True))
	assert server.body["reasoning"] == {"effort": "low"}
	assert server.body["tools"] == [{"type": "web_search"}]


async def test_stop_is_dropped_with_warning(server, load, req) -> None:
	"""The Responses API has no stop sequences: a warning, no field."""
	server.reply(load("openai_text"))
	with pytest.warns(ModelConfigWarning, match="stop"):
		await provider(server).generate(req("gpt-4.1", stop=["END"]))
	assert server.body == BASE


async def test_thinking_on_non_reasoning_model_warns(server, load, req) -> None:
	"""gpt-4.1 has no reasoning: thinking is ignored with a warning."""
	server.reply(load("openai_text"))
	with pytest.warns(ModelConfigWarning, match="not a reasoning model"):
		await provider(server).generate(req("gpt-4.1", thinking="high"))
	assert "reasoning" not in server.body


async def test_provider_options_merge_nested(server, load, req) -> None:
	"""provider_options merge one level deep, keeping the mapped effort."""
	server.reply(load("openai_text"))
	options = {"reasoning": {"summary": "auto"}}
	await provider(server).generate(req("gpt-5-mini", thinking="low", provider_options=options))
	assert server.body["reasoning"] == {"effort": "low", "summary": "auto"}


async def test_strict_structured_output(server, load, req, schema) -> None:
	"""An unfitted schema with a strict form is fitted and sent strict: objects closed, all required."""
	server.reply(load("openai_text"))
	await provider(server).generate(req("gpt-4.1", schema=schema))
	fmt = server.body["text"]["format"]
	assert (fmt["type"], fmt["name"], fmt["strict"]) == ("json_schema", "commands", True)
	item = fmt["schema"]["properties"]["commands"]["items"]["anyOf"][0]
	assert item["additionalProperties"] is False
	assert item["properties"]["type"] == {"type": "string", "const": "finish"}
	assert item["required"] == ["type", "answer"]
	assert fmt["schema"]["additionalProperties"] is False


async def test_unfitted_schema_without_strict_form_gets_json_mode(
	server, load, req, schema
) -> None:
	"""An unfitted schema with a free-form object has no strict form as a whole: JSON mode."""
	server.reply(load("openai_text"))
	schema["properties"]["commands"]["items"]["anyOf"][0]["properties"]["input"] = {
		"type": "object"
	}
	await provider(server).generate(req("gpt-4.1", schema=schema))
	assert server.body["text"]["format"] == {"type": "json_object"}


async def test_attachments(server, load, req) -> None:
	"""Images and PDFs become input_image and input_file parts with data URLs."""
	server.reply(load("openai_text"))
	files = [
		Attachment("image/png", "iVBORw0KGgo="),
		Attachment("application/pdf", "JVBERi0=", "a.pdf"),
	]
	await provider(server).generate(req("gpt-4.1", attachments=files))
	assert server.body["input"][0]["content"] == [
		{"type": "input_text", "text": '{"input": "Capital of Norway?"}'},
		{
			"type": "input_image",
			"image_url": "data:image/png;base64,iVBORw0KGgo=",
			"detail": "auto",
		},
		{
			"type": "input_file",
			"filename": "a.pdf",
			"file_data": "data:application/pdf;base64,JVBERi0=",
		},
	]


async def test_history_keeps_roles(server, load, req) -> None:
	"""Assistant turns are sent as assistant messages after the first user turn."""
	server.reply(load("openai_text"))
	await provider(server).generate(req("gpt-4.1", history=True))
	assert [m["role"] for m in server.body["input"]] == ["user", "assistant", "user"]


async def test_parse_text_usage_and_cost(server, load, req) -> None:
	"""Text comes from output_text; usage counts cached and reasoning tokens; cost is priced."""
	raw = load("openai_text")
	server.reply(raw)
	response = await provider(server).generate(req("gpt-5-mini"))
	assert json.loads(response.text)["commands"][0]["output"] == {"answer": "Oslo"}
	assert response.finish_reason == "stop"
	assert response.raw == raw
	u = response.usage
	assert (u.input_tokens, u.output_tokens, u.cached_tokens, u.reasoning_tokens) == (
		1200,
		300,
		1024,
		256,
	)
	assert u.cost_usd == pytest.approx((176 * 0.25 + 1024 * 0.025 + 300 * 2.0) / 1e6)


async def test_parse_search_citations(server, load, req) -> None:
	"""A web search reply yields the message text; citations stay in raw."""
	server.reply(load("openai_search"))
	response = await provider(server).generate(req("gpt-5-mini", search=True))
	assert json.loads(response.text)["commands"][0]["type"] == "finish"
	annotations = response.raw["output"][1]["content"][0]["annotations"]
	assert annotations[0]["url"] == "https://en.wikipedia.org/wiki/Oslo"


async def test_parse_refusal_and_truncation(server, load, req) -> None:
	"""A refusal and a max_output_tokens stop are normalized."""
	server.reply(load("openai_refusal"), load("openai_incomplete"))
	p = provider(server)
	refused = await p.generate(req("gpt-5-mini"))
	assert (refused.finish_reason, refused.text) == ("refusal", "I can't help with that.")
	cut = await p.generate(req("gpt-5-mini"))
	assert cut.finish_reason == "max_tokens"
	assert cut.text.startswith('{"commands"')


async def test_failed_status_raises(server, load, req) -> None:
	"""A response with status failed raises a ProviderError with the reason."""
	from openmolt_core.errors import ProviderError

	server.reply(
		{
			**load("openai_text"),
			"status": "failed",
			"error": {"code": "server_error", "message": "boom"},
		}
	)
	with pytest.raises(ProviderError, match="boom"):
		await provider(server).generate(req("gpt-5-mini"))


async def test_chat_mode_for_a_local_server(server, load, req) -> None:
	"""api_mode chat posts Chat Completions to base_url, needs no key, and sends no OpenAI-only fields."""
	server.reply(load("openai_chat"))
	p = OpenAIProvider({"base_url": "http://localhost:11434/v1", "api_mode": "chat"}, server.http)
	response = await p.generate(
		req(
			"llama3.2",
			schema={"type": "object"},
			temperature=0.1,
			max_output_tokens=64,
			stop=["END"],
		)
	)
	sent = server.requests[0]
	assert str(sent.url) == "http://localhost:11434/v1/chat/completions"
	assert "authorization" not in sent.headers
	assert server.body == {
		"model": "llama3.2",
		"messages": [
			{"role": "system", "content": "You are Finder."},
			{"role": "user", "content": '{"input": "Capital of Norway?"}'},
		],
		"temperature": 0.1,
		"max_tokens": 64,
		"stop": ["END"],
		"response_format": {"type": "json_object"},
	}
	assert json.loads(response.text)["commands"][0]["type"] == "finish"
	assert (response.usage.input_tokens, response.usage.cached_tokens) == (900, 512)
	assert response.usage.cost_usd is None


async def test_chat_mode_on_openai_with_reasoning_model(server, load, req) -> None:
	"""On api.openai.com chat mode sends store, prompt_cache_key, reasoning_effort, max_completion_tokens."""
	server.reply(load("openai_chat"))
	p = provider(server, api_mode="chat")
	with pytest.warns(ModelConfigWarning, match="stop"):
		await p.generate(req("o4-mini", thinking="high", max_output_tokens=99, stop=["x"]))
	body = server.body
	assert server.requests[0].headers["authorization"] == "Bearer sk-test-123456"
	assert body["store"] is False and body["prompt_cache_key"] == "openmolt:Finder"
	assert body["reasoning_effort"] == "high" and body["max_completion_tokens"] == 99
	assert "stop" not in body


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4.1-mini", "gpt-5-chat-latest"])
async def test_chat_mode_on_openai_caps_output_with_max_completion_tokens(
	server, load, req, model
) -> None:
	"""On api.openai.com every model takes ``max_completion_tokens``; ``max_tokens`` is
	deprecated in its favour (the SDK's ``CompletionCreateParams``) and refused by the GPT-5
	family ("Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens'")."""
	server.reply(load("openai_chat"))
	await provider(server, api_mode="chat").generate(req(model, max_output_tokens=99))
	assert server.body["max_completion_tokens"] == 99 and "max_tokens" not in server.body


async def test_chat_mode_joins_content_parts_from_compatible_servers(server, load, req) -> None:
	"""A server that answers with content parts instead of a string still yields the reply text."""
	reply = load("openai_chat")
	text = reply["choices"][0]["message"]["content"]
	reply["choices"][0]["message"]["content"] = [
		{"type": "text", "text": text[:10]},
		{"type": "text", "text": text[10:]},
	]
	server.reply(reply)
	p = OpenAIProvider({"base_url": "http://localhost:11434/v1", "api_mode": "chat"}, server.http)
	response = await p.generate(req("llama3.2"))
	assert response.text == text


@pytest.mark.parametrize("api_mode", ["responses", "chat"])
async def test_a_fine_tuned_reasoning_model_gets_the_reasoning_parameters(
	server, load, req, api_mode
) -> None:
	"""``ft:o4-mini-...`` is an o4-mini: no temperature (refused by reasoning models), an effort,
	and on Chat ``max_completion_tokens`` (it was sent temperature and max_tokens: a 400)."""
	server.reply(load("openai_chat" if api_mode == "chat" else "openai_text"))
	model = "ft:o4-mini-2025-04-16:acme:support:AbC123"
	with pytest.warns(ModelConfigWarning, match="reasoning models reject"):
		await provider(server, api_mode=api_mode).generate(
			req(model, temperature=0.2, thinking="low", max_output_tokens=99)
		)
	body = server.body
	assert "temperature" not in body
	if api_mode == "chat":
		assert body["reasoning_effort"] == "low" and body["max_completion_tokens"] == 99
		assert "max_tokens" not in body
	else:
		assert body["reasoning"] == {"effort": "low"}


async def test_responses_body_to_another_server_has_no_openai_only_field(server, load, req) -> None:
	"""A Responses call to a vLLM/llama.cpp-style server sends no prompt_cache_key (it may 400)."""
	server.reply(load("openai_text"))
	p = OpenAIProvider(
		{"base_url": "http://localhost:8000/v1", "api_mode": "responses"}, server.http
	)
	await p.generate(req("gpt-4.1"))
	assert str(server.requests[0].url) == "http://localhost:8000/v1/responses"
	assert "prompt_cache_key" not in server.body
	assert server.body["store"] is False  # a Responses API field: the server keeps nothing


async def test_chat_body_to_another_server_has_no_openai_only_field(server, load, req) -> None:
	"""A Chat call to another server sends neither store nor prompt_cache_key."""
	server.reply(load("openai_chat"))
	p = OpenAIProvider({"base_url": "http://localhost:8000/v1", "api_mode": "chat"}, server.http)
	await p.generate(req("gpt-4.1"))
	assert not {"store", "prompt_cache_key"} & set(server.body)
