"""A streamed text cut between the two halves of a surrogate pair equals the text asked for whole.

The APIs stream text as JSON strings; one whose delta ends in ``"\\ud83d"`` and whose next delta
starts with ``"\\ude00"`` decodes to two lone surrogates, which Python does not join. The reply
then differed from the same reply without streaming (the loop writes lone surrogates as U+FFFD:
the model's emoji became two replacement characters), and a text delta carried a lone surrogate
that no UTF-8 consumer of the events can encode. Each provider's stream now joins the halves.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from openmolt_core.llm import ModelResponse
from openmolt_providers._sse import Deltas, paired
from tests.providers._replies import MODELS, Chunks, generate, make_request, provider

pytestmark = pytest.mark.anyio

TEXT = '{"commands":[{"type":"finish","status":"success","output":"😀 ok 𝄞 done 🎉"}]}'
_LONE = re.compile("[\ud800-\udfff]")


def _units(text: str, size: int) -> list[str]:
	"""``text`` cut every ``size`` UTF-16 code units: pairs are cut wherever they fall."""
	units = text.encode("utf-16-le", "surrogatepass")
	step = 2 * size
	return [
		units[i : i + step].decode("utf-16-le", "surrogatepass") for i in range(0, len(units), step)
	]


def _events(vendor: str, pieces: list[str]) -> list[dict[str, Any]]:
	if vendor == "chat":
		head = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-5-mini"}
		out = [{**head, "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
		out.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
		out.append({**head, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
		return out
	if vendor == "anthropic":
		start = {"type": "message", "content": [], "usage": {"input_tokens": 1}}
		block = {"type": "text", "text": ""}
		out = [
			{"type": "message_start", "message": start},
			{"type": "content_block_start", "index": 0, "content_block": block},
		]
		for p in pieces:
			delta = {"type": "text_delta", "text": p}
			out.append({"type": "content_block_delta", "index": 0, "delta": delta})
		out.append({"type": "content_block_stop", "index": 0})
		out.append(
			{
				"type": "message_delta",
				"delta": {"stop_reason": "end_turn"},
				"usage": {"output_tokens": 1},
			}
		)
		out.append({"type": "message_stop"})
		return out
	if vendor == "openai":
		out = [{"type": "response.output_text.delta", "delta": p} for p in pieces]
		out.append({"type": "response.completed", "response": _responses("".join(pieces))})
		return out
	out = [
		{"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": p}]}}]}
		for p in pieces
	]
	out[-1]["candidates"][0]["finishReason"] = "STOP"
	return out


def _responses(text: str) -> dict[str, Any]:
	content = [{"type": "output_text", "text": text, "annotations": []}]
	message = {"type": "message", "role": "assistant", "content": content}
	return {"status": "completed", "output": [message]}


def _whole(vendor: str) -> dict[str, Any]:
	if vendor == "openai":
		return _responses(TEXT)
	if vendor == "chat":
		message = {"role": "assistant", "content": TEXT}
		return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
	if vendor == "anthropic":
		return {
			"type": "message",
			"stop_reason": "end_turn",
			"content": [{"type": "text", "text": TEXT}],
		}
	return {"candidates": [{"content": {"parts": [{"text": TEXT}]}, "finishReason": "STOP"}]}


async def _stream(vendor: str, pieces: list[str], size: int) -> tuple[list[str], ModelResponse]:
	# ensure_ascii: every astral character travels as an escaped pair, as the APIs write them
	body = "".join(f"data: {json.dumps(e)}\n\n" for e in _events(vendor, pieces))
	if vendor == "chat":
		body += "data: [DONE]\n\n"
	data = body.encode()

	def handle(request: httpx.Request) -> httpx.Response:
		kind = {"content-type": "text/event-stream"}
		return httpx.Response(200, headers=kind, stream=Chunks(data, size))

	deltas: list[str] = []
	final: ModelResponse | None = None
	async for chunk in provider(vendor, handle).stream(make_request(MODELS[vendor])):
		if isinstance(chunk, ModelResponse):
			final = chunk
		else:
			deltas.append(chunk.text)
	assert final is not None
	return deltas, final


@pytest.mark.parametrize("vendor", ["openai", "chat", "anthropic", "google"])
@pytest.mark.parametrize("units", [1, 2, 3, 7])
@pytest.mark.parametrize("size", [1, 4096])
async def test_a_pair_cut_between_deltas_is_one_character(vendor, units, size) -> None:
	"""The final text equals the reply asked for whole; every delta is text (no lone half)."""
	whole = await generate(vendor, _whole(vendor))
	assert whole.text == TEXT
	deltas, final = await _stream(vendor, _units(TEXT, units), size)
	assert final.text == TEXT
	assert "".join(deltas) == TEXT
	assert not any(_LONE.search(d) for d in deltas)


@pytest.mark.parametrize("vendor", ["openai", "chat", "anthropic", "google"])
async def test_a_stream_ending_inside_a_pair_keeps_the_half(vendor) -> None:
	"""A half whose pair never came is still reported, last (the loop writes it as U+FFFD)."""
	deltas, final = await _stream(vendor, ["ab", "\ud83d"], 4096)
	assert final.text == "ab\ud83d"
	assert "".join(deltas) == final.text


def test_the_helpers() -> None:
	"""`paired` joins valid pairs only; `Deltas` holds a high half back until its pair."""
	assert paired("\ud83d\ude00 \ud800 x") == "😀 \ud800 x"
	assert paired("plain") == "plain"
	deltas = Deltas()
	assert [deltas("a\ud83d"), deltas("\ude00b"), deltas("\ud83d"), deltas.rest()] == [
		"a",
		"😀b",
		"",
		"\ud83d",
	]
