"""Stream events of another shape than the API's: a `ProviderError` naming the field, or read as
the same reply sent whole reads.

Anthropic's stream reader copied an object field of an event with ``dict(...)`` or
``dict.update``: a string or a list there raised a bare ``ValueError`` ("dictionary update
sequence element #0 has length 1; 2 is required"). A chunk carrying ``"error": null`` beside its
reply (Chat, Gemini) failed the stream as "the stream failed: None", where the same reply sent
whole is read. An event's name, quoted when its data is not JSON, is the server's text: it was
quoted raw and whole (a key echoed there showed in the error).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import CMD, MODELS, Chunks, make_request, provider

pytestmark = pytest.mark.anyio

SSE = {"content-type": "text/event-stream"}
KEYS = {"openai": "sk-test", "chat": "sk-test", "anthropic": "sk-ant-test", "google": "AIza-test"}


def _body(events: list[Any], *, done: bool = False, event: str | None = None) -> bytes:
	head = f"event: {event}\n" if event else ""
	text = "".join(f"{head}data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)
	return (text + ("data: [DONE]\n\n" if done else "")).encode()


async def _stream(vendor: str, body: bytes) -> Any:
	p = provider(vendor, lambda request: httpx.Response(200, headers=SSE, stream=Chunks(body, 7)))
	p.max_retries = 0
	final = None
	async for chunk in p.stream(make_request(MODELS[vendor])):
		final = chunk
	return final


START = {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}

ANTHROPIC = {
	"message": [{"type": "message_start", "message": "abc"}],
	"message list": [{"type": "message_start", "message": ["ab", "abc"]}],
	"usage": [{"type": "message_start", "message": {"usage": ["abc"]}}],
	"content_block": [START, {"type": "content_block_start", "index": 0, "content_block": "text"}],
	"delta": [START, {"type": "message_delta", "delta": ["abc"]}],
	"block delta": [START, {"type": "content_block_delta", "index": 0, "delta": "abc"}],
}


@pytest.mark.parametrize("case", sorted(ANTHROPIC))
async def test_an_anthropic_event_field_of_another_type_is_named(case) -> None:
	"""A field that must be an object and is not is named in a ProviderError."""
	with pytest.raises(ProviderError) as caught:
		await _stream("anthropic", _body(ANTHROPIC[case]))
	message = str(caught.value)
	assert caught.value.provider == "anthropic"
	assert "does not have the shape of the Messages API" in message
	assert "JSON object" in message


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
	choice = {"index": 0, "delta": delta, "finish_reason": finish}
	return {"id": "c1", "object": "chat.completion.chunk", "choices": [choice], "error": None}


async def test_a_chat_chunk_with_a_null_error_is_read() -> None:
	"""``"error": null`` beside a chunk's reply is no error, as in a reply sent whole."""
	body = _body([_chat_chunk({"content": CMD}), _chat_chunk({}, "stop")], done=True)
	final = await _stream("chat", body)
	assert final.text == CMD and final.finish_reason == "stop"


async def test_a_gemini_event_with_a_null_error_is_read() -> None:
	"""``"error": null`` beside an event's candidates is no error, as in a reply sent whole."""
	event = {
		"candidates": [{"content": {"parts": [{"text": CMD}]}, "finishReason": "STOP"}],
		"error": None,
	}
	final = await _stream("google", _body([event]))
	assert final.text == CMD and final.finish_reason == "stop"


async def test_a_responses_error_event_with_a_text_error_quotes_it() -> None:
	"""``{"type": "error", "error": "..."}``: the text is the reason, not the word "error"."""
	with pytest.raises(ProviderError, match="the stream failed: upstream overloaded"):
		await _stream("openai", _body([{"type": "error", "error": "upstream overloaded"}]))


@pytest.mark.parametrize("vendor", sorted(KEYS))
async def test_an_event_name_is_masked_and_cut_in_the_error(vendor) -> None:
	"""The name of an event whose data is not JSON is quoted masked and short."""
	key = KEYS[vendor]
	name = f"{key}-{'x' * 500}"
	with pytest.raises(ProviderError) as caught:
		await _stream(vendor, _body(["not json"], event=name))
	message = str(caught.value)
	assert "not JSON" in message
	assert key not in message and "x" * 100 not in message


@pytest.mark.parametrize("index", ["0", -1, 0.5, None, True])
@pytest.mark.parametrize("vendor", ["chat", "google"])
async def test_a_choice_index_of_another_type_is_named_not_read_as_cut(vendor, index) -> None:
	"""A choice's (candidate's) ``index`` that is no whole number is a shape error naming the
	field; it was skipped as another choice and the stream reported as cut off."""
	if vendor == "chat":
		chunks = [_chat_chunk({"content": CMD}), _chat_chunk({}, "stop")]
		for chunk in chunks:
			chunk["choices"][0]["index"] = index
		body = _body(chunks, done=True)
	else:
		part = {"content": {"parts": [{"text": CMD}]}, "finishReason": "STOP", "index": index}
		body = _body([{"candidates": [part]}])
	with pytest.raises(ProviderError) as caught:
		await _stream(vendor, body)
	message = str(caught.value)
	assert "does not have the shape" in message and "index" in message
	assert "cut off" not in message


async def test_a_chunk_of_another_choice_is_left_out() -> None:
	"""A chunk of choice 1 (a server that sends more than asked) is not part of the reply."""
	other = _chat_chunk({"content": "other"})
	other["choices"][0]["index"] = 1
	body = _body([_chat_chunk({"content": CMD}), other, _chat_chunk({}, "stop")], done=True)
	final = await _stream("chat", body)
	assert final.text == CMD


async def test_chat_content_streamed_as_parts_is_read_as_the_whole_reply_reads_it() -> None:
	"""Mistral's reasoning models stream ``delta.content`` as a list of ``thinking`` and ``text``
	chunks: the text chunks are the reply, as in the same reply sent whole (they were dropped:
	every streamed step of such a model was an empty answer)."""
	from openmolt_core.streaming import TextDelta
	from tests.providers._replies import generate

	thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}]}
	half = len(CMD) // 2
	chunks = [
		{"choices": [{"index": 0, "delta": {"role": "assistant", "content": [thinking]}}]},
		{"choices": [{"index": 0, "delta": {"content": [{"type": "text", "text": CMD[:half]}]}}]},
		{"choices": [{"index": 0, "delta": {"content": [{"type": "text", "text": CMD[half:]}]}}]},
		{"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}]},
	]
	p = provider(
		"chat", lambda request: httpx.Response(200, headers=SSE, content=_body(chunks, done=True))
	)
	deltas: list[str] = []
	final = None
	async for chunk in p.stream(make_request(MODELS["chat"])):
		if isinstance(chunk, TextDelta):
			deltas.append(chunk.text)
		final = chunk
	assert final is not None and final.text == CMD and final.finish_reason == "stop"
	assert "".join(deltas) == CMD
	whole = {
		"choices": [
			{
				"index": 0,
				"message": {"content": [thinking, {"type": "text", "text": CMD}]},
				"finish_reason": "stop",
			}
		]
	}
	assert (await generate("chat", whole)).text == CMD
