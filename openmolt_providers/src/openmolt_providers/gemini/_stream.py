"""Streaming over the Gemini API (``:streamGenerateContent?alt=sse``).

Each event is a ``GenerateContentResponse`` holding the next parts of the reply; the last one
carries the candidate's ``finishReason`` and the usage (a blocked prompt says so in
``promptFeedback`` instead). There is no end marker: a stream that ends without a finish reason or
a block was cut off, raises a retryable `ProviderError` and runs nothing. The parts are put back
together (adjacent text parts of the same kind joined) into the response a call without streaming
returns, which `_convert.parse` reads. A reply the API stopped at its per-request token limit
(``CONTINUATION``) goes on in another stream with its token (`_convert.go_on`), whose text follows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_core.streaming import StreamChunk, TextDelta
from openmolt_providers._body import encode
from openmolt_providers._common import billed
from openmolt_providers._shape import event_data, fields, items, position, reads_stream
from openmolt_providers._sse import Deltas
from openmolt_providers.gemini import _convert

if TYPE_CHECKING:
	from openmolt_core.llm import ModelRequest
	from openmolt_providers.gemini import GeminiProvider

__all__ = ["stream", "stream_url"]


def stream_url(provider: GeminiProvider, model: str) -> str:
	"""The ``streamGenerateContent`` URL of a model, asking for server-sent events."""
	return provider.url(model).removesuffix(":generateContent") + ":streamGenerateContent?alt=sse"


@reads_stream("Gemini")
async def stream(provider: GeminiProvider, request: ModelRequest) -> AsyncIterator[StreamChunk]:
	"""Stream one ``generateContent`` call; a reply the API stopped (``CONTINUATION``) goes on."""
	model = request.model
	body = provider._body(request)
	url = stream_url(provider, model)
	deltas = Deltas()  # the reply's text: a pair split between two parts is joined
	hops: list[dict[str, Any]] = []
	token: str | None = None
	while True:
		payload = body if token is None else _convert.go_on(body, token)
		whole: dict[str, Any] = {}
		try:
			async for chunk in _one(provider, url, encode(payload), model, deltas, whole):
				yield chunk
		except ProviderError as exc:  # the stopped requests before it were billed all the same
			if hops:
				billed(exc, _convert.hops_usage(provider, model, hops))
			raise
		token = _convert.continued(whole)
		if token is None or len(hops) == _convert.MAX_CONTINUATIONS:
			break
		hops.append(whole)
	if rest := deltas.rest():  # what it held back, the reply's last text
		yield TextDelta(rest)
		for candidate in whole.get("candidates") or ():
			_add(candidate["content"]["parts"], {"text": rest})
	yield _convert.parse_continued(provider, model, hops, whole)


async def _one(
	provider: GeminiProvider,
	url: str,
	body: bytes,
	model: str,
	deltas: Deltas,
	whole: dict[str, Any],
) -> AsyncIterator[StreamChunk]:
	"""Stream one request: its text as it comes; ``whole`` is the reply once the stream ended."""
	parts: list[dict[str, Any]] = []
	candidate: dict[str, Any] = {}
	ended = False
	async for event in provider.post_stream(url, body, model=model):
		data = event_data(provider, model, event)
		if not isinstance(data, dict):
			continue
		if data.get("error"):  # a null one is none, as in a reply sent whole (`_convert.parse`)
			raise _convert.reply_error(provider, model, data, "the stream")
		whole.update({k: v for k, v in data.items() if k != "candidates"})
		if fields(data.get("promptFeedback"), "promptFeedback").get("blockReason"):
			ended = True
		for i, item in enumerate(items(data.get("candidates"), "candidates")):
			item = fields(item, f"candidates[{i}]")
			if position(item.get("index", 0), f"candidates[{i}].index") != 0:
				continue
			content = fields(item.get("content"), "candidates[0].content")
			at = "candidates[0].content.parts"
			for j, part in enumerate(items(content.get("parts"), at)):
				part = fields(part, f"{at}[{j}]")
				text = part.get("text")
				if isinstance(text, str) and not part.get("thought") and text:
					part = {**part, "text": deltas(text)}
					if part["text"]:
						yield TextDelta(part["text"])
				_add(parts, part)
			candidate.update({k: v for k, v in item.items() if k != "content"})
			if item.get("finishReason"):
				ended = True
	if not ended:
		raise ProviderError(
			"the stream ended before the reply was complete, so none of it was run; try again",
			provider=provider.name,
			model=model,
			retryable=True,
		)
	if candidate or parts:
		whole["candidates"] = [{"content": {"parts": parts, "role": "model"}, **candidate}]


def _add(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
	"""Append a part, joining it to the last one when both are text of the same kind."""
	last = parts[-1] if parts else None
	if (
		last is not None
		and set(last) <= {"text", "thought"}
		and set(part) <= {"text", "thought"}
		and "text" in last
		and "text" in part
		and bool(last.get("thought")) == bool(part.get("thought"))
	):
		last["text"] += part["text"]
		return
	parts.append(dict(part))
