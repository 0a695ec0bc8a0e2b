"""Request body and reply parsing for the Anthropic Messages API (``POST /v1/messages``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse, Usage
from openmolt_providers._attach import (
	ANTHROPIC_IMAGE,
	IMAGES,
	decoded_size,
	fit_images,
	media,
	parts,
	plain_text,
	refused,
	textual,
)
from openmolt_providers._body import Turns, last_key, merge_options, turn_text
from openmolt_providers._common import (
	billed,
	filled_window,
	joined,
	reply_failure,
	window_stop,
)
from openmolt_providers._schema import reply_format
from openmolt_providers._shape import fields, items, reads_replies, tokens, word
from openmolt_providers.anthropic._models import (
	adaptive,
	default_max_tokens,
	has_thinking,
	most_output,
	one_sampler,
	sampling_removed,
	searches,
	version,
)

if TYPE_CHECKING:
	from collections.abc import Sequence

	from openmolt_core.llm import Attachment, Message, ModelRequest
	from openmolt_providers.anthropic import AnthropicProvider

__all__ = [
	"BUDGETS",
	"MAX_PAUSES",
	"PAUSE",
	"build",
	"go_on",
	"parse",
	"parse_paused",
	"paused_usage",
	"reply_error",
]

BUDGETS = {"low": 2048, "medium": 8192, "high": 16384}
"""Thinking budgets (tokens) for models that take ``budget_tokens`` (before Claude 4.6)."""

_CACHE = {"type": "ephemeral"}


_MAX_IMAGE = ANTHROPIC_IMAGE
"""The largest image the Messages API takes, as base64 (`openmolt_providers._attach.ANTHROPIC_IMAGE`)."""


def _attachment(provider: AnthropicProvider, model: str, a: Attachment) -> dict[str, Any]:
	"""The content block of an attachment; an error for one the API cannot read.

	Raises:
		ProviderError: Not an image, PDF or text file the API takes, a text file that is not
			UTF-8, or an image over 5 MB.
	"""
	kind = media(a)
	if kind in IMAGES:
		if len(a.data) > _MAX_IMAGE:  # the base64 text, as the API measures it
			why = (
				"Anthropic takes images of at most 5 MB as base64 (3.75 MB of image), and this "
				f"one is {len(a.data) / 2**20:.1f} MB ({decoded_size(a) / 2**20:.1f} MB of image)"
			)
			raise refused(provider, model, a, why, fix="make it smaller, or use another model")
		return {
			"type": "image",
			"source": {"type": "base64", "media_type": kind, "data": a.data},
		}
	if kind == "application/pdf":
		return {
			"type": "document",
			"source": {"type": "base64", "media_type": kind, "data": a.data},
		}
	if textual(a):
		# A text document's source is its text, of type text/plain (the only one it takes):
		# CSV, Markdown, JSON... are read as the text they are.
		text = plain_text(provider, model, a)
		source = {"type": "text", "media_type": "text/plain", "data": text}
		return {"type": "document", "source": source}
	raise refused(
		provider, model, a, "Anthropic reads JPEG, PNG, GIF and WEBP images, PDF and text files"
	)


def _plain(role: str, content: str) -> dict[str, Any]:
	"""A turn of text as ``messages`` holds it (no cache breakpoint on it)."""
	return {"role": role, "content": turn_text(content)}


def _marked(role: str, content: str) -> dict[str, Any]:
	"""A turn of text with a cache breakpoint (the first turn and the last)."""
	return {"role": role, "content": [_text(content, True)]}


_TURNS = Turns(_plain)
"""The plain turns, each built and encoded once (`openmolt_providers._body.Turns`)."""

_MARKED = Turns(_marked)
"""The turns of text with a cache breakpoint: the first is the same at every step."""


def _turn(
	provider: AnthropicProvider,
	model: str,
	message: Message,
	shown: Sequence[Attachment | str],
	cache: bool,
) -> dict[str, Any]:
	if not shown:
		return (_MARKED if cache else _TURNS)(message.role, message.content)
	return {"role": message.role, "content": _blocks(provider, model, message, shown, cache)}


def _text(content: str, cache: bool) -> dict[str, Any]:
	"""The text block of a turn, with a cache breakpoint or without."""
	text: dict[str, Any] = {"type": "text", "text": turn_text(content)}
	if cache:
		text["cache_control"] = _CACHE
	return text


def _blocks(
	provider: AnthropicProvider,
	model: str,
	message: Message,
	shown: Sequence[Attachment | str],
	cache: bool,
) -> list[dict[str, Any]]:
	blocks: list[dict[str, Any]] = [
		{"type": "text", "text": a} if isinstance(a, str) else _attachment(provider, model, a)
		for a in shown
	]  # a str: the note in place of an image left out (`openmolt_providers._images.fit`)
	blocks.append(_text(message.content, cache))
	return blocks


def _thinking(provider: AnthropicProvider, request: ModelRequest, body: dict[str, Any]) -> bool:
	"""Set thinking (and effort) in the body; return whether thinking is on."""
	thinking = request.config.thinking
	if thinking is None or thinking is False:
		return False
	model = request.model
	if not has_thinking(model):
		provider.warn(
			model, "thinking", "has no extended thinking (Claude 3.7 Sonnet and later do); ignored"
		)
		return False
	if adaptive(model):
		body["thinking"] = {"type": "adaptive"}
		if thinking is not True:
			body.setdefault("output_config", {})["effort"] = thinking
		return True
	budget = BUDGETS["medium" if thinking is True else str(thinking)]
	max_tokens = body["max_tokens"]
	if request.config.max_output_tokens is None:
		body["max_tokens"] = max(max_tokens, budget + 8192)
	elif max_tokens <= 1024:
		provider.warn(model, "thinking", "needs max_output_tokens above 1024; thinking off")
		return False
	elif budget >= max_tokens:
		budget = max(1024, max_tokens // 2)
		provider.warn(
			model, "thinking", f"budget lowered to {budget} tokens to fit max_output_tokens"
		)
	body["thinking"] = {"type": "enabled", "budget_tokens": budget}
	return True


def _max_tokens(provider: AnthropicProvider, request: ModelRequest) -> int:
	"""The body's ``max_tokens``: the agent's, within the model's output limit, or a default.

	An ``anthropic-beta`` header that names a longer output (Claude 3.7 Sonnet's
	``output-128k-2025-02-19``) lifts the limit: the agent's value is sent as asked.
	"""
	model = request.model
	asked = request.config.max_output_tokens
	if not asked:
		return default_max_tokens(model)
	betas = next(
		(v for k, v in provider.extra_headers.items() if k.lower() == "anthropic-beta"), ""
	)
	most = None if "output-" in betas else most_output(model)
	return provider.capped_output(model, asked, most)


def build(provider: AnthropicProvider, request: ModelRequest) -> dict[str, Any]:
	"""The Messages API body for one call.

	Cache breakpoints go on the system prompt, the first user message (the run's stable start)
	and the last message, so each step reads the previous steps from the cache.
	"""
	config = request.config
	model = request.model
	messages = request.messages
	last = len(messages) - 1
	fitted = fit_images(provider, request, "ANTHROPIC")
	body: dict[str, Any] = {
		"model": model,
		"max_tokens": _max_tokens(provider, request),
		"system": [{"type": "text", "text": request.system, "cache_control": _CACHE}],
		"messages": [
			_turn(provider, model, m, parts(fitted, i, m), i == 0 or i == last)
			for i, m in enumerate(messages)
		],
	}
	thinking = _thinking(provider, request, body)
	temperature, top_p = config.temperature, config.top_p
	if sampling_removed(model) and (temperature is not None or top_p is not None):
		provider.warn(
			model, "temperature", "Claude 4.7 and later reject temperature and top_p; dropped"
		)
		temperature = top_p = None
	if thinking and temperature is not None:
		provider.warn(model, "temperature", "temperature cannot be set with thinking on; dropped")
		temperature = None
	if thinking and top_p is not None and top_p < 0.95:
		provider.warn(model, "top_p", "with thinking on, top_p must be 0.95 to 1; dropped")
		top_p = None
	if temperature is not None and temperature > 1 and version(model) != (0, 0):
		provider.warn(model, "temperature", "Claude takes temperature 0.0 to 1.0; sending 1.0")
		temperature = 1.0
	if temperature is not None and top_p is not None and one_sampler(model):
		provider.warn(
			model, "top_p", "this model takes temperature or top_p, not both; top_p dropped"
		)
		top_p = None
	if temperature is not None:
		body["temperature"] = temperature
	if top_p is not None:
		body["top_p"] = top_p
	if config.stop:
		body["stop_sequences"] = list(config.stop)
	if config.search and not searches(model):
		provider.warn(
			model, "search", "has no web search tool (Claude 3.5 and later have); dropped"
		)
	elif config.search:
		body["tools"] = [{"type": "web_search_20250305", "name": "web_search"}]
	schema, _ = reply_format(provider, request)  # Claude has no JSON mode without a schema
	if schema is not None:
		body.setdefault("output_config", {})["format"] = {"type": "json_schema", "schema": schema}
	if config.provider_options:
		merge_options(body, config.provider_options)
	return last_key(body, "messages")


_STOP = {
	"end_turn": "stop",
	"stop_sequence": "stop",
	"max_tokens": "max_tokens",
	# Anthropic's safety classifiers stopped the reply; the docs ("Handle streaming refusals"):
	# continuing without resetting the conversation "will result in continued refusals".
	"refusal": "blocked",
	"tool_use": "tool_calls",
}
"""The loop's finish reasons for the API's ``stop_reason``s; any other one (``pause_turn``: a
server tool's long turn paused halfway, or one added later) stopped the reply before its end.
``model_context_window_exceeded`` ("the response filled the model's context window", docs:
stop reasons) is not among them: it is the window error (`window_stop`), not the output limit."""

_WINDOW = "model_context_window_exceeded"


_STATUS = {
	"overloaded_error": 529,
	"api_error": 500,
	"rate_limit_error": 429,
	"billing_error": 402,
	"conflict_error": 409,
	"timeout_error": 504,
	"request_too_large": 413,
	"invalid_request_error": 400,
	"authentication_error": 401,
	"permission_error": 403,
	"not_found_error": 404,
}
"""Error types of the API and the HTTP status each stands for (docs: errors)."""


def reply_error(
	provider: AnthropicProvider, model: str, error: Any, what: str, usage: Usage | None = None
) -> ProviderError:
	"""The error an ``error`` object stands for: a stream's event, or a body sent with 200.

	Its ``type`` names the status it would have come with (``overloaded_error`` is a 529, retried
	later); a prompt past the context window is the window error the loop compacts on.

	Args:
		provider: The provider (its ``scrub`` masks the key in the message).
		model: The model.
		error: The ``error`` object (``type``, ``message``), or anything else.
		what: What failed, for the message (``the stream``, ``the reply``).
		usage: What the body reports it was billed for (a ``usage`` beside the error); None
			when it reports nothing.
	"""
	error = error if isinstance(error, dict) else {"message": str(error or "")}
	status = _STATUS.get(str(error.get("type")))
	why = provider.scrub(str(error.get("message") or error.get("type") or "no reason given"))
	return reply_failure(provider, model, what, why, status, error.get("type"), usage=usage)


@reads_replies("Messages")
def parse(provider: AnthropicProvider, model: str, data: dict[str, Any]) -> ModelResponse:
	"""Turn a Messages API reply into a `ModelResponse` (text blocks joined, thinking skipped).

	Raises:
		ProviderError: The body is an error in place of a reply (``"type": "error"``, as a
			gateway passes it on with status 200), or the reply filled the context window
			(`window_stop`, the window error the loop compacts on).
	"""
	if data.get("type") == "error" or (data.get("error") and not data.get("content")):
		spent = _usage(provider, model, data) if data.get("usage") else None
		raise reply_error(provider, model, data.get("error"), "the reply", spent)
	blocks = [
		fields(block, f"content[{i}]")
		for i, block in enumerate(items(data.get("content"), "content"))
	]
	text = "".join(
		word(block.get("text"), f"content[{i}].text") or ""
		for i, block in enumerate(blocks)
		if block.get("type") == "text"
	)
	reason = word(data.get("stop_reason"), "stop_reason")
	finish = _STOP.get(reason, "incomplete") if reason else None
	if finish in (None, "stop") and any(block.get("type") == "tool_use" for block in blocks):
		finish = "tool_calls"  # a call of the caller's tools (the loop declares none)
	usage = _usage(provider, model, data)
	if reason == _WINDOW or (finish == "max_tokens" and filled_window(provider, model, usage)):
		raise window_stop(provider, model, str(reason), usage)
	return ModelResponse(text=text, usage=usage, raw=data, finish_reason=finish)


PAUSE = "pause_turn"
"""The stop reason of a turn the API paused: its server tools (web search) ran long. The docs
(server tools, "The server-side loop and pause_turn"): send the response back as it is, as the
assistant's turn, and the API goes on with it."""

MAX_PAUSES = 5
"""How many times one model call goes on with a paused turn (each is another billed request);
a turn still paused after them is ``incomplete``: none of it runs, and the model is told so."""


def go_on(body: dict[str, Any], paused: list[dict[str, Any]]) -> dict[str, Any]:
	"""The request that goes on with a turn the API paused (`PAUSE`), as the docs say.

	The paused replies' content blocks (server tool calls and their results, text, thinking with
	its signature), all of them in order, are the assistant's turn at the end of the messages,
	sent back as they came; a code execution container goes on in the same container.

	Args:
		body: The call's request body.
		paused: The replies paused so far, oldest first.
	"""
	content = [block for reply in paused for block in reply.get("content") or ()]
	turn = {"role": "assistant", "content": content}
	out = {**body, "messages": [*body["messages"], turn]}
	container = paused[-1].get("container")
	if isinstance(container, dict) and container.get("id"):
		out["container"] = container["id"]
	return last_key(out, "messages")


@reads_replies("Messages")
def parse_paused(
	provider: AnthropicProvider, model: str, paused: list[dict[str, Any]], last: dict[str, Any]
) -> ModelResponse:
	"""The reply of a call whose turn the API paused and went on with (`go_on`): one reply.

	Its content is every reply's, in order; its stop reason and the window check are the last
	reply's (each request's prompt holds the ones before); its usage adds up every request's,
	each billed, and so does the error's when the last one failed (the window error,
	`window_stop`, or an error in place of the last reply): the paused requests were billed.
	"""
	if not paused:
		return parse(provider, model, last)
	content = [block for reply in (*paused, last) for block in reply.get("content") or ()]
	try:
		response = parse(provider, model, {**last, "content": content})
	except ProviderError as exc:
		billed(exc, paused_usage(provider, model, paused))
		raise
	return joined(response, paused_usage(provider, model, paused), _usage(provider, model, last))


def paused_usage(provider: AnthropicProvider, model: str, paused: list[dict[str, Any]]) -> Usage:
	"""What the paused requests of a turn were billed for (each answered: `PAUSE`)."""
	usage = Usage()
	for reply in paused:
		usage.add(_usage(provider, model, reply))
	return usage


def _usage(provider: AnthropicProvider, model: str, data: dict[str, Any]) -> Usage:
	"""A reply's usage, with its estimated cost; tokens and cost unknown (not free) if it has none.

	``input_tokens`` counts only the prompt tokens neither read from nor written to the cache:
	the three add up to the prompt. ``cache_creation`` splits the writes by TTL: the 1-hour ones
	cost twice the input price, the 5-minute ones 1.25 times (`openmolt_providers._prices.cost`). ``output_tokens_details.thinking_tokens`` (anthropic SDK
	``OutputTokensDetails``, 2026-05) are the reasoning part of ``output_tokens``, which stays
	the billed total.
	"""
	raw = fields(data.get("usage"), "usage")
	if not raw:
		return Usage(calls=1)
	fresh = tokens(raw, "input_tokens", "usage")
	written = tokens(raw, "cache_creation_input_tokens", "usage")
	read = tokens(raw, "cache_read_input_tokens", "usage")
	out = tokens(raw, "output_tokens", "usage")
	details = raw.get("output_tokens_details")
	at = "usage.output_tokens_details"
	thinking = tokens(details if isinstance(details, dict) else {}, "thinking_tokens", at)
	# The writes by TTL (the SDK's CacheCreation): an hour's cost more than 5 minutes'.
	ttl = raw.get("cache_creation")
	at = "usage.cache_creation"
	hour = tokens(ttl if isinstance(ttl, dict) else {}, "ephemeral_1h_input_tokens", at)
	inp = fresh + written + read
	return Usage(
		input_tokens=inp,
		output_tokens=out,
		cached_tokens=read,
		reasoning_tokens=thinking,
		cost_usd=provider.cost(
			model,
			input_tokens=inp,
			output_tokens=out,
			cached_tokens=read,
			cache_write_tokens=written,
			hour_writes=hour,
		),
		calls=1,
	)
