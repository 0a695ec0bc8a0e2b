"""One whole reply of each API, asked for without streaming or streamed from the same content.

`generate` answers a provider's call with a reply body; `stream` sends the same reply as the
vendor's stream of server-sent events (built from the body, in chunks of ``size`` bytes), so a
test can check that both give the same `ModelResponse`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from openmolt_core.llm import ModelResponse
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from tests.providers.conftest import make_request

CMD = '{"commands":[{"type":"finish","status":"success","output":"Oslo"}]}'
"""A valid reply text: it runs unless the finish reason says otherwise."""

MODELS = {
	"openai": "gpt-5-mini",
	"chat": "gpt-5-mini",
	"anthropic": "claude-sonnet-4-5",
	"google": "gemini-2.5-flash",
}


class Chunks(httpx.AsyncByteStream):
	"""A response body sent in chunks of ``size`` bytes."""

	def __init__(self, body: bytes, size: int) -> None:
		self.body, self.size = body, size

	async def __aiter__(self) -> AsyncIterator[bytes]:
		for i in range(0, len(self.body), self.size):
			yield self.body[i : i + self.size]


def provider(vendor: str, handler: Any, **settings: Any) -> Any:
	"""A provider of ``vendor`` (``chat``: OpenAI's Chat Completions) whose calls ``handler`` answers.

	``settings`` are added to the provider's (``context_window=...``).
	"""
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))

	async def sleep(_: float) -> None:
		return None

	if vendor == "google":
		return GeminiProvider({"api_key": "AIza-test", **settings}, lambda: client, sleep=sleep)
	if vendor == "anthropic":
		return AnthropicProvider(
			{"api_key": "sk-ant-test", **settings}, lambda: client, sleep=sleep
		)
	mode = {"api_mode": "chat"} if vendor == "chat" else {}
	return OpenAIProvider({"api_key": "sk-test", **mode, **settings}, lambda: client, sleep=sleep)


async def generate(vendor: str, reply: dict[str, Any], **settings: Any) -> ModelResponse:
	"""The provider's `ModelResponse` for a reply body, asked for without streaming."""
	p = provider(vendor, lambda request: httpx.Response(200, json=reply), **settings)
	response: ModelResponse = await p.generate(make_request(MODELS[vendor]))
	return response


async def stream(
	vendor: str, reply: dict[str, Any], size: int = 5, **settings: Any
) -> ModelResponse:
	"""The provider's final `ModelResponse` for the same reply, streamed; the deltas are checked.

	The text deltas must add up to the final text.
	"""
	body = "".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events(vendor, reply))
	if vendor == "chat":
		body += "data: [DONE]\n\n"

	def handle(request: httpx.Request) -> httpx.Response:
		kind = {"content-type": "text/event-stream"}
		return httpx.Response(200, headers=kind, stream=Chunks(body.encode(), size))

	p = provider(vendor, handle, **settings)
	deltas: list[str] = []
	final: ModelResponse | None = None
	async for chunk in p.stream(make_request(MODELS[vendor])):
		if isinstance(chunk, ModelResponse):
			final = chunk
		else:
			deltas.append(chunk.text)
	assert final is not None
	assert "".join(deltas) == final.text
	return final


def events(vendor: str, reply: dict[str, Any]) -> list[dict[str, Any]]:
	"""The vendor's stream events for a whole reply body."""
	if vendor == "google":
		return [reply]
	if vendor == "anthropic":
		return _anthropic(reply)
	if vendor == "chat":
		return _chat(reply)
	return _responses(reply)


def _anthropic(reply: dict[str, Any]) -> list[dict[str, Any]]:
	prompt = (reply.get("usage") or {}).get("input_tokens", 1)
	start = {**reply, "content": [], "stop_reason": None, "usage": {"input_tokens": prompt}}
	out: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
	for i, block in enumerate(reply.get("content") or ()):
		if block["type"] == "text":
			out.append(
				{"type": "content_block_start", "index": i, "content_block": {**block, "text": ""}}
			)
			text = block["text"]
			for j in range(0, len(text), 4):
				delta = {"type": "text_delta", "text": text[j : j + 4]}
				out.append({"type": "content_block_delta", "index": i, "delta": delta})
		else:
			empty = {**block, "input": {}} if "input" in block else block
			out.append({"type": "content_block_start", "index": i, "content_block": empty})
			if "input" in block:
				delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
				out.append({"type": "content_block_delta", "index": i, "delta": delta})
		out.append({"type": "content_block_stop", "index": i})
	usage = {"output_tokens": (reply.get("usage") or {}).get("output_tokens", 1)}
	out.append(
		{
			"type": "message_delta",
			"delta": {"stop_reason": reply.get("stop_reason")},
			"usage": usage,
		}
	)
	out.append({"type": "message_stop"})
	return out


def _chat(reply: dict[str, Any]) -> list[dict[str, Any]]:
	choice = reply["choices"][0]
	message = choice.get("message") or {}
	head = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-5-mini"}
	out: list[dict[str, Any]] = []
	text = message.get("content") or ""
	for j in range(0, len(text), 4):
		out.append({**head, "choices": [{"index": 0, "delta": {"content": text[j : j + 4]}}]})
	if message.get("refusal"):
		out.append({**head, "choices": [{"index": 0, "delta": {"refusal": message["refusal"]}}]})
	for k, call in enumerate(message.get("tool_calls") or ()):
		delta = {"tool_calls": [{**call, "index": k}]}
		out.append({**head, "choices": [{"index": 0, "delta": delta}]})
	end = {"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason")}
	out.append({**head, "choices": [end]})
	out.append({**head, "choices": [], "usage": reply.get("usage") or {"prompt_tokens": 1}})
	return out


def _responses(reply: dict[str, Any]) -> list[dict[str, Any]]:
	out: list[dict[str, Any]] = []
	for index, item in enumerate(reply.get("output") or ()):
		# The item opens with its fields and no content yet, as the API streams it.
		opened = {k: v for k, v in item.items() if k != "content"}
		out.append({"type": "response.output_item.added", "output_index": index, "item": opened})
		for part in item.get("content") or ():
			if part.get("type") == "output_text":
				delta = {"delta": part["text"], "output_index": index}
				out.append({"type": "response.output_text.delta", **delta})
			elif part.get("type") == "refusal":
				delta = {"delta": part["refusal"], "output_index": index}
				out.append({"type": "response.refusal.delta", **delta})
	kind = {"incomplete": "response.incomplete", "failed": "response.failed"}
	out.append({"type": kind.get(reply.get("status", ""), "response.completed"), "response": reply})
	return out
