"""Streaming over the Responses API and Chat Completions (``"stream": true``, server-sent events).

Responses API: ``response.output_text.delta`` events carry the text; the stream ends with
``response.completed`` (or ``response.incomplete``, ``response.failed``), whose ``response`` is the
object a call without streaming returns, so it is parsed by the same `_responses.parse`. Chat
Completions: ``chat.completion.chunk`` objects carry ``choices[0].delta.content``, the last ones
the ``finish_reason`` and (asked for with ``stream_options.include_usage``) the usage; the chunks
are put back together into the ``chat.completion`` object `_chat.parse` reads. A refusal
(``response.refusal.delta``, ``choices[0].delta.refusal``) streams as text, as Anthropic's and
Gemini's do, when the reply has no other text: the final text is the refusal then, so the deltas
add up to it. Either way, a stream that ends before its last event raises a retryable
`ProviderError` and runs nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_core.streaming import StreamChunk, TextDelta
from openmolt_providers._body import encode
from openmolt_providers._shape import event_data, fields, items, position, reads_stream
from openmolt_providers._sse import Deltas
from openmolt_providers.openai import _chat, _responses
from openmolt_providers.openai._errors import body_error, reply_error

if TYPE_CHECKING:
	from openmolt_core.llm import ModelRequest
	from openmolt_providers.openai import OpenAIProvider

__all__ = ["chat", "cut_off", "responses"]

_ENDS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_TEXT = frozenset({"response.output_text.delta", "response.refusal.delta"})


def cut_off(provider: OpenAIProvider, model: str) -> ProviderError:
	"""The error of a stream that ended before its last event (retryable: nothing ran)."""
	return ProviderError(
		"the stream ended before the reply was complete, so none of it was run; try again",
		provider=provider.name,
		model=model,
		retryable=True,
	)


def _choice_error(data: dict[str, Any]) -> Any:
	"""The ``error`` of a chunk's first choice (OpenRouter's, beside ``finish_reason: "error"``)."""
	choices = data.get("choices")
	first = choices[0] if isinstance(choices, list) and choices else None
	return first.get("error") if isinstance(first, dict) else None


@reads_stream("Responses")
async def responses(provider: OpenAIProvider, request: ModelRequest) -> AsyncIterator[StreamChunk]:
	"""Stream one Responses API call."""
	model = request.model
	payload = {**provider._body(request), "stream": True}
	url = provider.base_url + "/responses"
	deltas, refused = Deltas(), Deltas()
	wrote = False  # whether output text came: a refusal beside it is not the reply's text
	snapshot: Any = None  # the last response a lifecycle event held: its usage, if it said
	commentary: set[Any] = set()  # the output items that are commentary, not the answer
	async for event in provider.post_stream(url, encode(payload), model=model):
		data = event_data(provider, model, event)
		if not isinstance(data, dict):
			continue
		kind = data.get("type") or event.event
		delta = data.get("delta")
		if isinstance(data.get("response"), dict):
			snapshot = data["response"]
		if kind == "response.output_item.added":
			item = data.get("item")
			if isinstance(item, dict) and item.get("phase") == _responses.COMMENTARY:
				commentary.add(data.get("output_index"))
		elif data.get("output_index") in commentary and kind in _TEXT:
			continue  # as `_responses.parse` leaves it out of the reply
		elif kind == "response.output_text.delta":
			if isinstance(delta, str) and delta:
				wrote = True
				if piece := deltas(delta):
					yield TextDelta(piece)
		elif kind == "response.refusal.delta":
			if isinstance(delta, str) and not wrote and (piece := refused(delta)):
				yield TextDelta(piece)
		elif kind in _ENDS and isinstance(data.get("response"), dict):
			if rest := deltas.rest() or ("" if wrote else refused.rest()):
				yield TextDelta(rest)
			yield _responses.parse(provider, model, data["response"])
			return
		elif kind == "error":
			# The event holds no usage (``ResponseErrorEvent``); a snapshot before it may have.
			spent = _responses.reported(provider, model, snapshot)
			raise _responses.failure(provider, model, data, "the stream", spent)
		elif not str(kind).startswith("response.") and (error := body_error(data)):
			# A gateway's error as an event of no Responses type (OpenRouter's ``{"error": ...}``,
			# vLLM's ``{"object": "error", "type": "BadRequestError"}``), as Chat reads it.
			spent = _responses.reported(provider, model, data if data.get("usage") else snapshot)
			raise reply_error(provider, model, error, "the stream", spent)
	raise cut_off(provider, model)


@reads_stream("Chat Completions")
async def chat(provider: OpenAIProvider, request: ModelRequest) -> AsyncIterator[StreamChunk]:
	"""Stream one Chat Completions call."""
	model = request.model
	body = provider._body(request)
	payload = {**body, "stream": True, "stream_options": {"include_usage": True}}
	url = provider.base_url + "/chat/completions"
	texts: list[str] = []
	deltas, refused = Deltas(), Deltas()
	refusals: list[str] = []
	calls: list[Any] = []
	first: dict[str, Any] = {}
	finish: str | None = None
	usage: Any = None
	done = False
	async for event in provider.post_stream(url, encode(payload), model=model):
		if event.data.strip() == "[DONE]":
			done = True
			break
		data = event_data(provider, model, event)
		if not isinstance(data, dict):
			continue
		# A gateway's error chunk, or its choice's (OpenRouter: ``finish_reason: "error"``); a
		# null one is none, as in a reply sent whole (`_chat.parse`).
		error = body_error(data) or _choice_error(data)
		if error:
			# A chunk before it (or this one) may have reported usage.
			spent = data.get("usage") or usage
			billed = _chat.usage(provider, model, spent) if isinstance(spent, dict) else None
			raise reply_error(provider, model, error, "the stream", billed)
		if not first:
			first = data
		if data.get("usage"):
			usage = data["usage"]
		for i, choice in enumerate(items(data.get("choices") or [], "choices")):
			choice = fields(choice, f"choices[{i}]")
			if position(choice.get("index", 0), f"choices[{i}].index") != 0:
				continue  # another choice (n > 1 is never asked for)
			delta = choice.get("delta") or {}
			content = delta.get("content")
			refusal = delta.get("refusal")
			# Parts, as a whole reply's may be (`_chat.content_parts`): Mistral's thinking models.
			if isinstance(content, list):
				content, refused_part = _chat.content_parts(content)
				refusal = refusal or refused_part
			if isinstance(content, str) and content:
				piece = deltas(content)
				if piece:
					texts.append(piece)
					yield TextDelta(piece)
			if isinstance(refusal, str) and refusal:
				refusals.append(refusal)
				if not texts and (piece := refused(refusal)):  # the text when there is no other
					yield TextDelta(piece)
			if delta.get("tool_calls") or delta.get("function_call"):
				calls.extend(delta.get("tool_calls") or [delta["function_call"]])
			if choice.get("finish_reason"):
				finish = choice["finish_reason"]
	if finish is None or not (done or usage):  # the usage chunk follows the finish reason
		raise cut_off(provider, model)
	if rest := deltas.rest():
		texts.append(rest)
		yield TextDelta(rest)
	elif not texts and (rest := refused.rest()):
		yield TextDelta(rest)
	message: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
	if refusals:
		message["refusal"] = "".join(refusals)
	if calls:
		message["tool_calls"] = calls  # their pieces, as streamed: only their presence is read
	whole = {
		"id": first.get("id"),
		"object": "chat.completion",
		"created": first.get("created"),
		"model": first.get("model", model),
		"choices": [{"index": 0, "message": message, "finish_reason": finish}],
		"usage": usage,
	}
	yield _chat.parse(provider, model, whole)
