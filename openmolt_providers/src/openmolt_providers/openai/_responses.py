"""Request body and reply parsing for the OpenAI Responses API (``POST /v1/responses``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse, Usage
from openmolt_providers._attach import (
	IMAGES,
	filename,
	fit_images,
	media,
	parts,
	refused,
	textual,
)
from openmolt_providers._body import ROLE_CONTENT, data_url, last_key, merge_options
from openmolt_providers._common import (
	FLAGGED_FIX,
	exceeds_context,
	filled_window,
	window_error,
	window_stop,
)
from openmolt_providers._schema import reply_format
from openmolt_providers._shape import fields, items, reads_replies, tokens, word
from openmolt_providers.openai._errors import RETRY_WORDS, body_error, reply_error
from openmolt_providers.openai._models import BLIND, cache_key, most_output, sampling, sees

if TYPE_CHECKING:
	from collections.abc import Sequence

	from openmolt_core.llm import Attachment, Message, ModelRequest
	from openmolt_providers.openai import OpenAIProvider

__all__ = [
	"COMMENTARY",
	"RETRYABLE_CODES",
	"build",
	"failure",
	"parse",
	"reported",
	"text_format",
]


_TURNS = ROLE_CONTENT
"""The plain turns, each built and encoded once, shared with the other OpenAI API (`ROLE_CONTENT`)."""


def _turn(
	provider: OpenAIProvider, model: str, message: Message, shown: Sequence[Attachment | str]
) -> dict[str, Any]:
	if not shown:
		return _TURNS(message.role, message.content)
	return {"role": message.role, "content": _content(provider, model, message, shown)}


def _content(
	provider: OpenAIProvider, model: str, message: Message, shown: Sequence[Attachment | str]
) -> list[dict[str, Any]]:
	parts: list[dict[str, Any]] = [{"type": "input_text", "text": message.content}]
	for a in shown:
		if isinstance(a, str):  # the note in place of an image left out
			parts.append({"type": "input_text", "text": a})
			continue
		if provider.official:
			_check(provider, model, a)
		url = data_url(media(a), a.data)  # the bare type: no parameter in the URL
		if a.media_type.startswith("image/"):
			parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
		else:
			parts.append({"type": "input_file", "filename": filename(a), "file_data": url})
	return parts


def _check(provider: OpenAIProvider, model: str, attachment: Attachment) -> None:
	"""Refuse, before sending, an attachment OpenAI's Responses API cannot read."""
	kind = media(attachment)
	if kind.startswith("image/") and kind not in IMAGES:
		raise refused(provider, model, attachment, "OpenAI reads PNG, JPEG, WEBP and GIF images")
	if kind.startswith("audio/"):
		raise refused(
			provider,
			model,
			attachment,
			"the Responses API takes no audio (Chat Completions, api_mode 'chat', takes WAV and "
			"MP3 on an audio model)",
		)
	if kind.startswith("video/"):
		raise refused(provider, model, attachment, "OpenAI's models take no video")
	if not textual(attachment) and not sees(model):
		raise refused(provider, model, attachment, BLIND[0], fix=BLIND[1])


def text_format(provider: OpenAIProvider, request: ModelRequest) -> dict[str, Any] | None:
	"""The ``text.format`` for a request: strict JSON schema, JSON mode, or None for neither.

	Mode ``partial`` is strict too: the inputs that fell back are strings in the schema.
	"""
	schema, json_mode = reply_format(provider, request)
	if schema is not None:
		return {"type": "json_schema", "name": "commands", "schema": schema, "strict": True}
	if json_mode and not provider.plain_json:
		return {"type": "json_object"}
	return None


LEAST_OUTPUT = 16
"""The least ``max_output_tokens`` the Responses API takes: a smaller one is a 400
(``integer_below_min_value``, "Expected a value >= 16"), from OpenAI and from the servers that
follow it (Azure OpenAI); raised to it, on any server, as raising cannot be refused."""


def build(provider: OpenAIProvider, request: ModelRequest) -> dict[str, Any]:
	"""The Responses API body for one call.

	The instructions (system prompt) come first and the input grows only at the end, so OpenAI's
	automatic prefix cache keeps hitting; ``prompt_cache_key`` routes the agent's calls together
	(sent to api.openai.com only: it is no field of the Responses API other servers implement, and
	a strict one, vLLM's or llama.cpp's, may refuse the body with a 400). ``store`` is the Responses
	API's own field (those servers take it): false, so no server keeps the conversation.
	"""
	config = request.config
	model = request.model
	limits = provider.image_limits
	fitted = fit_images(provider, request, limits) if limits is not None else {}
	body: dict[str, Any] = {
		"model": model,
		"instructions": request.system,
		"input": [
			_turn(provider, model, m, parts(fitted, i, m)) for i, m in enumerate(request.messages)
		],
		"store": False,
	}
	if request.cache_key and provider.official:
		body["prompt_cache_key"] = cache_key(request.cache_key)
	s = sampling(provider, model, config)
	if s.effort is not None:
		body["reasoning"] = {"effort": s.effort}
	if s.temperature is not None:
		body["temperature"] = s.temperature
	if s.top_p is not None:
		body["top_p"] = s.top_p
	if config.max_output_tokens is not None:
		# The vendor's models: at api.openai.com or an Azure OpenAI resource, not another server.
		most = most_output(model) if provider.official or provider.azure else None
		wanted = provider.capped_output(model, config.max_output_tokens, most)
		body["max_output_tokens"] = max(wanted, LEAST_OUTPUT)
		if config.max_output_tokens < LEAST_OUTPUT:
			provider.warn(
				model,
				"max_output_tokens",
				f"the Responses API takes {LEAST_OUTPUT} or more; sending {LEAST_OUTPUT}",
			)
	if config.stop:
		provider.warn(
			model, "stop", "the Responses API has no stop sequences; dropped (api_mode 'chat' has)"
		)
	if config.search:
		body["tools"] = [{"type": "web_search"}]
	fmt = text_format(provider, request)
	if fmt is not None:
		body["text"] = {"format": fmt}
	if config.provider_options:
		merge_options(body, config.provider_options)
	return last_key(body, "input")


RETRYABLE_CODES = frozenset(RETRY_WORDS)
"""Error codes of a failed response (``ResponseError.code``) or a stream's ``error`` event that
another try may not meet: the server's trouble or a rate limit, not the request's (the words
`openmolt_providers.openai._errors.RETRY_WORDS` reads, one list for both)."""


_POLICY = frozenset({"invalid_prompt", "bio_policy", "image_content_policy_violation"})
"""Codes of a response failed on a usage policy (``ResponseErrorCode``): the same input fails
again, as a 400 from the content filter does (`openmolt_providers._common.FLAGGED_FIX`)."""


def failure(
	provider: OpenAIProvider, model: str, error: Any, what: str, usage: Usage | None = None
) -> ProviderError:
	"""The error of a failed response's ``error`` or of a stream's ``error`` event.

	The API reference puts the event's ``code`` and ``message`` at its top (``ResponseErrorEvent``);
	the API sends them nested in ``error`` too (``{"type": "error", "error": {"type":
	"too_many_requests", "code": ..., "message": ...}}``), as the ``openai`` SDK's stream reads
	them: both are read. A refusal of a prompt past the context window is the window error the
	loop compacts on; a server error or a rate limit may pass on another try.

	Args:
		provider: The provider (its ``scrub`` masks the key in the message).
		model: The model.
		error: The error object (or the event holding it), or anything else.
		what: What failed, for the message (``the stream``, ``the response``).
		usage: What the failed response reports it was billed for (its ``usage``), so the run
			counts it; None when it reports nothing.
	"""
	if isinstance(error, dict) and isinstance(error.get("error"), dict | str):
		error = error["error"]  # the event's own error, an object or its text
	if not isinstance(error, dict):
		error = {"message": str(error or "")}
	codes = {error.get("code"), error.get("type")}
	why = str(error.get("message") or error.get("code") or error.get("type") or "")
	why = provider.scrub(why or "no reason given")
	if exceeds_context(" ".join(str(c or "") for c in codes), why):
		refusal = window_error(provider, model, why)
		refusal.usage = usage
		return refusal
	if codes & _POLICY:
		return ProviderError(
			f"{what} failed: the prompt was refused under a usage policy: {why}: {FLAGGED_FIX}",
			provider=provider.name,
			model=model,
			usage=usage,
		)
	return ProviderError(
		f"{what} failed: {why}",
		provider=provider.name,
		model=model,
		retryable=any(isinstance(c, str) and c in RETRYABLE_CODES for c in codes),
		usage=usage,
	)


def reported(provider: OpenAIProvider, model: str, data: Any) -> Usage | None:
	"""What a response (a failed one, a stream's snapshot) reports it was billed for, or None.

	Only a ``usage`` object counts: a response without one reports nothing, and a failure
	without it is not counted (unlike a reply, whose unknown usage the loop estimates).
	"""
	raw = data.get("usage") if isinstance(data, dict) else None
	return usage(provider, raw, model) if isinstance(raw, dict) and raw else None


_INCOMPLETE = {"max_output_tokens": "max_tokens", "content_filter": "safety"}

_STATUSES = frozenset({"completed", "failed", "in_progress", "cancelled", "queued", "incomplete"})
"""A response's ``status`` values (``ResponseStatus``): a body that has one is a response, whose
``error`` is the API's own (``ResponseError``, its ``code`` a word), not a gateway's error body."""

COMMENTARY = "commentary"
"""The ``phase`` of an output message that is the model's intermediate commentary, not its
answer (openai SDK 3.57 ``ResponseOutputMessage.phase``: ``commentary`` or ``final_answer``, "for
models like gpt-5.3-codex and beyond"): no part of the reply's text, whole or streamed."""

_NATIVE_CALLS = frozenset(
	{
		"function_call",
		"custom_tool_call",
		"computer_call",
		"local_shell_call",
		"shell_call",
		"apply_patch_call",
		"tool_search_call",
		"mcp_approval_request",
	}
)
"""Output items that ask the caller to act (openai SDK 3.57's ``ResponseOutputItem``): a call of
its function or custom tool, of computer use, a local shell, apply_patch or a client tool search,
and an MCP call waiting for its approval. The loop declares none of those tools (its tools are
called by commands), but ``provider_options`` may add them. A call the API ran itself has its
output item beside it (``shell_call_output`` of a hosted shell) or says so (a tool search's
``execution: "server"``), and the
API's own tools' calls (``web_search_call``...) are not among them."""


@reads_replies("Responses")
def parse(provider: OpenAIProvider, model: str, data: dict[str, Any]) -> ModelResponse:
	"""Turn a Responses API reply into a `ModelResponse`.

	Raises:
		ProviderError: The response failed (``status: failed``), the body is an error in
			place of a reply (OpenRouter's, with status 200), or the reply filled the model's
			known context window (`filled_window`).
	"""
	status = data.get("status")
	if status == "failed" or (data.get("error") and not data.get("output") and status in _STATUSES):
		# The response's own error (``ResponseError``), billed for what its usage says.
		spent = reported(provider, model, data)
		raise failure(provider, model, data.get("error") or {}, "the response", spent)
	error = body_error(data)
	if error and not data.get("output"):
		spent = reported(provider, model, data)
		raise reply_error(provider, model, error, "the reply", spent)
	texts: list[str] = []
	refusal: str | None = None
	output = [
		fields(item, f"output[{i}]") for i, item in enumerate(items(data.get("output"), "output"))
	]
	# The calls the API answered itself, in this very output (their output items).
	ran = {item.get("call_id") for item in output if str(item.get("type")).endswith("_output")}
	native = False
	for i, item in enumerate(output):
		kind = word(item.get("type"), f"output[{i}].type")
		if kind in _NATIVE_CALLS and item.get("execution") != "server":
			native = native or item.get("call_id") is None or item["call_id"] not in ran
		if kind != "message" or item.get("phase") == COMMENTARY:
			continue  # commentary is the model's intermediate word, not its answer
		for j, part in enumerate(items(item.get("content"), f"output[{i}].content")):
			at = f"output[{i}].content[{j}]"
			part = fields(part, at)
			kind = word(part.get("type"), f"{at}.type")
			if kind == "output_text":
				texts.append(word(part.get("text"), f"{at}.text") or "")
			elif kind == "refusal":
				refusal = word(part.get("refusal"), f"{at}.refusal") or ""
	text = "".join(texts)
	if status == "incomplete":
		reason = (data.get("incomplete_details") or {}).get("reason") or ""
		finish = _INCOMPLETE.get(reason, "incomplete")
	elif status not in (None, "completed"):
		finish = "incomplete"  # queued, in_progress or cancelled: no whole reply yet
	elif refusal is not None:  # beside text too: the text of a refused answer must not run
		finish, text = "refusal", text or refusal
	elif native:
		finish = "tool_calls"
	else:
		finish = "stop"
	used = usage(provider, data.get("usage"), model)
	if finish == "max_tokens" and filled_window(provider, model, used):
		raise window_stop(provider, model, "max_output_tokens", used)
	return ModelResponse(text=text, usage=used, raw=data, finish_reason=finish)


def usage(provider: OpenAIProvider, raw: Any, model: str) -> Usage:
	"""Usage from a Responses API ``usage`` object, with the estimated cost (`HTTPProvider.cost`)."""
	if not raw:
		return Usage(calls=1)
	raw = fields(raw, "usage")
	inp = tokens(raw, "input_tokens", "usage")
	out = tokens(raw, "output_tokens", "usage")
	details = fields(raw.get("input_tokens_details"), "usage.input_tokens_details")
	cached = tokens(details, "cached_tokens", "usage.input_tokens_details")
	# priced apart on newer models
	written = tokens(details, "cache_write_tokens", "usage.input_tokens_details")
	thinking = fields(raw.get("output_tokens_details"), "usage.output_tokens_details")
	reasoning = tokens(thinking, "reasoning_tokens", "usage.output_tokens_details")
	return Usage(
		input_tokens=inp,
		output_tokens=out,
		cached_tokens=cached,
		reasoning_tokens=reasoning,
		cost_usd=provider.cost(
			model,
			input_tokens=inp,
			output_tokens=out,
			cached_tokens=cached,
			cache_write_tokens=written,
		),
		calls=1,
	)
