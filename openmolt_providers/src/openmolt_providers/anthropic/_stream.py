"""Streaming over the Messages API (``"stream": true``, server-sent events).

``message_start`` carries the message with empty content; each content block comes as
``content_block_start``, deltas (``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta``, ``citations_delta``) and ``content_block_stop``; ``message_delta`` sets the
stop reason and the output usage; ``message_stop`` ends the stream. A turn the API paused
(``pause_turn``: its server tools ran long) goes on in another stream (`_convert.go_on`), whose
text follows. The events are put back
together into the message a call without streaming returns, which `_convert.parse` reads. A stream
without its ``message_stop`` raises a retryable `ProviderError` and runs nothing; an ``error``
event raises as the same error would over plain HTTP (``overloaded_error`` is a 529).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_core.streaming import StreamChunk, TextDelta
from openmolt_providers._body import encode
from openmolt_providers._common import billed
from openmolt_providers._shape import decoded, event_data, fields, position, reads_stream
from openmolt_providers._sse import Deltas
from openmolt_providers.anthropic import _convert

if TYPE_CHECKING:
	from openmolt_core.llm import ModelRequest
	from openmolt_providers.anthropic import AnthropicProvider

__all__ = ["stream"]

_APPEND = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}


@reads_stream("Messages")
async def stream(provider: AnthropicProvider, request: ModelRequest) -> AsyncIterator[StreamChunk]:
	"""Stream one Messages API call; a turn the API paused (``pause_turn``) goes on streaming."""
	model = request.model
	body = provider._body(request)
	paused: list[dict[str, Any]] = []
	message: dict[str, Any] = {}
	while True:
		payload = _convert.go_on(body, paused) if paused else body
		try:
			async for chunk in _one(provider, {**payload, "stream": True}, model, message):
				yield chunk
		except ProviderError as exc:  # the paused requests before it were billed all the same
			if paused:
				billed(exc, _convert.paused_usage(provider, model, paused))
			raise
		if message.get("stop_reason") != _convert.PAUSE or len(paused) == _convert.MAX_PAUSES:
			break
		paused.append(message)
		message = {}
	yield _convert.parse_paused(provider, model, paused, message)


async def _one(
	provider: AnthropicProvider, payload: dict[str, Any], model: str, message: dict[str, Any]
) -> AsyncIterator[StreamChunk]:
	"""Stream one request: its text as it comes; ``message`` is the whole reply once it ended."""
	blocks: dict[int, dict[str, Any]] = {}
	partial: dict[int, list[str]] = {}
	texts: dict[int, Deltas] = {}  # per text block: a pair split between two deltas is joined
	async for event in provider.post_stream(
		provider.base_url + "/messages", encode(payload), model=model
	):
		data = event_data(provider, model, event)
		kind = data.get("type") if isinstance(data, dict) else None
		# Each object field is read through `fields`: a string or a list there is named (dict()
		# of one raised a bare ValueError).
		if kind == "message_start":
			message.clear()
			message.update(fields(data.get("message"), "message"))
			message["usage"] = dict(fields(message.get("usage"), "message.usage"))
		elif kind == "content_block_start":
			block = fields(data.get("content_block"), "content_block")
			blocks[position(data.get("index", len(blocks)))] = dict(block)
		elif kind == "content_block_delta":
			index = position(data.get("index", 0))
			block = blocks.setdefault(index, {"type": "text", "text": ""})
			delta = fields(data.get("delta"), "delta")
			dtype = delta.get("type")
			if dtype in _APPEND:
				key = _APPEND[dtype]
				piece = str(delta.get(key) or "")
				if dtype == "text_delta":
					piece = texts.setdefault(index, Deltas())(piece)
				block[key] = str(block.get(key) or "") + piece
				if dtype == "text_delta" and piece and block.get("type") == "text":
					yield TextDelta(piece)
			elif dtype == "input_json_delta":
				partial.setdefault(index, []).append(str(delta.get("partial_json") or ""))
			elif dtype == "citations_delta":
				if not isinstance(block.get("citations"), list):
					block["citations"] = []  # a text block opens with "citations": null
				block["citations"].append(delta.get("citation"))
		elif kind == "content_block_stop":
			index = position(data.get("index", 0))
			for chunk in _rest(blocks, texts, index):
				yield chunk
			if index in partial and index in blocks:
				text = "".join(partial.pop(index))
				try:
					blocks[index]["input"] = decoded(text) if text else {}
				except ValueError:
					blocks[index]["input"] = text
		elif kind == "message_delta":
			message.update(fields(data.get("delta"), "delta"))
			# Cumulative counts; a field the event leaves null (the SDK's MessageDeltaUsage has
			# them all optional) keeps message_start's count.
			usage = fields(data.get("usage"), "usage")
			message.setdefault("usage", {}).update(
				(k, v) for k, v in usage.items() if v is not None
			)
		elif kind == "message_stop":
			for index in list(texts):
				for chunk in _rest(blocks, texts, index):
					yield chunk
			message["content"] = [blocks[i] for i in sorted(blocks)]
			return
		elif kind == "error":
			raise _convert.reply_error(provider, model, data.get("error"), "the stream")
	raise ProviderError(
		"the stream ended before the reply was complete, so none of it was run; try again",
		provider=provider.name,
		model=model,
		retryable=True,
	)


def _rest(
	blocks: dict[int, dict[str, Any]], texts: dict[int, Deltas], index: int
) -> list[StreamChunk]:
	"""What a text block's `Deltas` still held, added to the block (and reported) as it ends."""
	deltas = texts.pop(index, None)
	rest = deltas.rest() if deltas is not None else ""
	if not rest or index not in blocks:
		return []
	block = blocks[index]
	block["text"] = str(block.get("text") or "") + rest
	return [TextDelta(rest)] if block.get("type") == "text" else []
