"""A reply whose fields have other types than the API's is one clear `ProviderError`, never a crash.

Measured before: of every field of a whole reply of each API, replaced by another JSON type or
removed, 107 cases raised ``TypeError``, ``AttributeError``, ``KeyError`` or ``ValueError`` from
inside a parser (``'int' object is not subscriptable``), which named neither the field nor the
fix, and a negative token count was taken as it came (a run's spending went down).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse
from tests._mutate import changed, variants
from tests.providers._replies import MODELS, events, generate, provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

CMD = '{"commands":[{"type":"finish","status":"success","output":"Oslo"}]}'

REPLIES: dict[str, dict[str, Any]] = {
	"chat": {
		"id": "c1",
		"choices": [
			{
				"index": 0,
				"message": {"role": "assistant", "content": CMD},
				"finish_reason": "stop",
			}
		],
		"usage": {
			"prompt_tokens": 10,
			"completion_tokens": 5,
			"prompt_tokens_details": {"cached_tokens": 2},
			"completion_tokens_details": {"reasoning_tokens": 1},
		},
	},
	"openai": {
		"id": "r1",
		"status": "completed",
		"output": [
			{"type": "reasoning", "id": "rs", "summary": []},
			{
				"type": "message",
				"role": "assistant",
				"content": [{"type": "output_text", "text": CMD, "annotations": []}],
			},
		],
		"usage": {
			"input_tokens": 10,
			"output_tokens": 5,
			"input_tokens_details": {"cached_tokens": 1},
			"output_tokens_details": {"reasoning_tokens": 1},
		},
	},
	"anthropic": {
		"type": "message",
		"role": "assistant",
		"content": [{"type": "text", "text": CMD}],
		"stop_reason": "end_turn",
		"usage": {
			"input_tokens": 10,
			"output_tokens": 5,
			"cache_read_input_tokens": 1,
			"output_tokens_details": {"thinking_tokens": 1},
		},
	},
	"google": {
		"candidates": [
			{
				"content": {"role": "model", "parts": [{"text": CMD}]},
				"finishReason": "STOP",
			}
		],
		"usageMetadata": {
			"promptTokenCount": 10,
			"candidatesTokenCount": 5,
			"thoughtsTokenCount": 1,
			"cachedContentTokenCount": 1,
		},
	},
}


async def read(vendor: str, body: Any, streamed: bool) -> ModelResponse | None:
	"""The provider's response to ``body``, sent whole or as the vendor's stream of it."""
	if not streamed:
		p = provider(vendor, lambda request: httpx.Response(200, json=body))
		response: ModelResponse = await p.generate(make_request(MODELS[vendor]))
		return response
	try:
		sent = events(vendor, body)  # the test's own stream builder reads the reply too
	except (TypeError, AttributeError, KeyError, IndexError):
		return None
	text = "".join(f"data: {json.dumps(e)}\n\n" for e in sent)
	text += "data: [DONE]\n\n" if vendor == "chat" else ""
	head = {"content-type": "text/event-stream"}
	p = provider(vendor, lambda request: httpx.Response(200, headers=head, content=text.encode()))
	final = None
	async for chunk in p.stream(make_request(MODELS[vendor])):
		final = chunk
	return final if isinstance(final, ModelResponse) else None


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("vendor", sorted(REPLIES))
async def test_every_field_of_another_type_is_a_provider_error(vendor, streamed) -> None:
	"""Each field of each API's reply replaced or removed: a response, or a ProviderError."""
	reply = REPLIES[vendor]
	crashed = []
	for at, other, body in variants(reply):
		try:
			await read(vendor, body, streamed)
		except ProviderError:
			pass
		except Exception as exc:  # what this test is for
			crashed.append((at, other, repr(exc)))
	assert crashed == []


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
	("vendor", "field", "where"),
	[
		("chat", ("usage", "prompt_tokens"), "usage.prompt_tokens"),
		(
			"chat",
			("usage", "completion_tokens_details", "reasoning_tokens"),
			"usage.completion_tokens_details.reasoning_tokens",
		),
		("openai", ("usage", "output_tokens"), "usage.output_tokens"),
		(
			"openai",
			("usage", "input_tokens_details", "cached_tokens"),
			"usage.input_tokens_details.cached_tokens",
		),
		("anthropic", ("usage", "input_tokens"), "usage.input_tokens"),
		("anthropic", ("usage", "output_tokens"), "usage.output_tokens"),
		("google", ("usageMetadata", "promptTokenCount"), "usageMetadata.promptTokenCount"),
		("google", ("usageMetadata", "thoughtsTokenCount"), "usageMetadata.thoughtsTokenCount"),
	],
)
@pytest.mark.parametrize("count", [-5, "12k", 2.5, [3], True])
async def test_a_token_count_that_is_no_whole_count_is_named(
	vendor, field, where, count, streamed
) -> None:
	"""A negative, fractional or non-number count fails, naming the field: budgets never go down."""
	with pytest.raises(ProviderError) as caught:
		await read(vendor, changed(REPLIES[vendor], field, count), streamed)
	message = str(caught.value)
	assert f"{where} is " in message
	assert "not a whole, non-negative number of tokens" in message
	assert "base_url" in message


@pytest.mark.parametrize("vendor", sorted(REPLIES))
async def test_counts_written_as_whole_floats_or_digits_are_read(vendor) -> None:
	"""``12.0`` and ``"12"`` (some compatible servers) are the counts they write."""
	reply = copy.deepcopy(REPLIES[vendor])
	usage = reply.get("usage") or reply["usageMetadata"]
	first = next(k for k, v in usage.items() if isinstance(v, int))
	usage[first] = "12"
	second = next(k for k, v in usage.items() if isinstance(v, int))
	usage[second] = 5.0
	response = await generate(vendor, reply)
	assert response.usage.input_tokens >= 12
	assert response.usage.output_tokens >= 5


@pytest.mark.parametrize(
	("vendor", "field", "where", "expected"),
	[
		("chat", ("choices",), "choices", "a JSON array"),
		("chat", ("choices", 0, "message"), "choices[0].message", "a JSON object"),
		("chat", ("choices", 0, "finish_reason"), "choices[0].finish_reason", "a string"),
		("openai", ("output", 1, "content"), "output[1].content", "a JSON array"),
		("openai", ("output", 1, "content", 0, "text"), "output[1].content[0].text", "a string"),
		("anthropic", ("content",), "content", "a JSON array"),
		("anthropic", ("stop_reason",), "stop_reason", "a string"),
		(
			"google",
			("candidates", 0, "content", "parts"),
			"candidates[0].content.parts",
			"a JSON array",
		),
		("google", ("candidates", 0, "finishReason"), "candidates[0].finishReason", "a string"),
	],
)
async def test_a_field_of_another_type_is_named_with_what_the_api_sends(
	vendor, field, where, expected
) -> None:
	"""The error says which field, what it held and what the API sends there."""
	with pytest.raises(ProviderError) as caught:
		await read(vendor, changed(REPLIES[vendor], field, 7), False)
	assert f"{where} is 7, not {expected}" in str(caught.value)


async def test_a_field_holding_the_key_is_quoted_masked() -> None:
	"""What the field held is quoted with the provider's key masked."""
	reply = changed(REPLIES["anthropic"], ("usage", "input_tokens"), "sk-ant-test")
	with pytest.raises(ProviderError) as caught:
		await generate("anthropic", reply)
	assert "sk-ant-test" not in str(caught.value)
	assert "usage.input_tokens is '[redacted]', not a whole" in str(caught.value)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_the_error_names_a_stream_or_a_reply(streamed) -> None:
	"""A streamed reply's error says "the stream", a whole one's "the reply"."""
	reply = changed(REPLIES["google"], ("candidates", 0, "content", "parts"), "x")
	with pytest.raises(ProviderError) as caught:
		await read("google", reply, streamed)
	said = "the stream" if streamed else "the reply"
	assert str(caught.value).startswith(f"google:gemini-2.5-flash: {said} does not have the shape")


@pytest.mark.parametrize("index", ["q", -1, 1.5, None, [0]])
async def test_an_anthropic_stream_block_index_of_another_type_is_named(index) -> None:
	"""A content block's index that is no whole, non-negative number is named, not int()ed."""
	events_ = [
		{"type": "message_start", "message": {"usage": {"input_tokens": 1}}},
		{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
		{
			"type": "content_block_delta",
			"index": index,
			"delta": {"type": "text_delta", "text": "x"},
		},
	]
	text = "".join(f"data: {json.dumps(e)}\n\n" for e in events_)
	head = {"content-type": "text/event-stream"}
	p = provider(
		"anthropic", lambda request: httpx.Response(200, headers=head, content=text.encode())
	)
	with pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request(MODELS["anthropic"])):
			pass
	assert "index is " in str(caught.value) and "not a whole, non-negative number" in str(
		caught.value
	)
