"""Request body and reply parsing for OpenAI-compatible Chat Completions (``POST /chat/completions``).

The dialect most local servers and gateways speak (Ollama, vLLM, LM Studio, OpenRouter). Fields only
api.openai.com knows (``store``, ``prompt_cache_key``) are sent only there, so a strict local server
does not reject them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core.llm import ModelResponse, Usage
from openmolt_providers._attach import (
	IMAGES,
	filename,
	fit_images,
	media,
	parts,
	refused,
	text_part,
	textual,
	wav_or_mp3,
)
from openmolt_providers._body import ROLE_CONTENT, data_url, last_key, merge_options
from openmolt_providers._common import filled_window, no_answer, window_stop
from openmolt_providers._schema import reply_format
from openmolt_providers._shape import fields, items, reads_replies, tokens, word
from openmolt_providers.openai._errors import body_error, reply_error
from openmolt_providers.openai._models import (
	BLIND,
	DEAF,
	cache_key,
	hears,
	is_reasoning,
	most_output,
	sampling,
	sees,
)

if TYPE_CHECKING:
	from collections.abc import Sequence

	from openmolt_core.errors import ProviderError
	from openmolt_core.llm import Attachment, Message, ModelRequest
	from openmolt_providers.openai import OpenAIProvider

__all__ = ["build", "content_parts", "parse", "response_format", "usage"]


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
	parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
	for a in shown:
		if isinstance(a, str):  # the note in place of an image left out
			parts.append({"type": "text", "text": a})
			continue
		kind = media(a)
		audio = wav_or_mp3(a)
		if provider.official:
			_check(provider, model, a, kind, audio)
		url = data_url(kind, a.data)  # the bare type: a parameter is no part of a data URL's
		if kind.startswith("image/"):
			parts.append({"type": "image_url", "image_url": {"url": url}})
		elif audio is not None:
			parts.append({"type": "input_audio", "input_audio": {"data": a.data, "format": audio}})
		elif textual(a):  # the file inputs guide: Chat reads a text file's content as text
			parts.append({"type": "text", "text": text_part(provider, model, a)})
		else:
			parts.append({"type": "file", "file": {"filename": filename(a), "file_data": url}})
	return parts


def _check(
	provider: OpenAIProvider, model: str, attachment: Attachment, kind: str, audio: str | None
) -> None:
	"""Refuse, before sending, an attachment OpenAI's Chat Completions cannot read.

	Its ``file`` part reads PDF only (file inputs guide); a text file goes as text. Another
	server (vLLM, Ollama...) decides for itself: it gets what it is given.
	"""
	if kind.startswith("image/") and kind not in IMAGES:
		raise refused(provider, model, attachment, "OpenAI reads PNG, JPEG, WEBP and GIF images")
	if kind.startswith("audio/") and audio is None:
		raise refused(provider, model, attachment, "Chat Completions takes WAV and MP3 audio")
	if kind.startswith("audio/") and not hears(model):
		raise refused(provider, model, attachment, DEAF[0], fix=DEAF[1])
	if kind.startswith("video/"):
		raise refused(provider, model, attachment, "OpenAI's models take no video")
	document = not kind.startswith(("image/", "audio/")) and not textual(attachment)
	if (kind.startswith("image/") or document) and not sees(model):
		raise refused(provider, model, attachment, BLIND[0], fix=BLIND[1])
	if document and kind != "application/pdf":
		raise refused(
			provider,
			model,
			attachment,
			"Chat Completions reads PDF files only (the Responses API, api_mode 'responses', "
			"reads documents, spreadsheets and text files too)",
		)


def response_format(provider: OpenAIProvider, request: ModelRequest) -> dict[str, Any] | None:
	"""The ``response_format`` for a request: strict JSON schema, JSON mode, or None for neither."""
	schema, json_mode = reply_format(provider, request)
	if schema is not None:
		spec = {"name": "commands", "schema": schema, "strict": True}
		return {"type": "json_schema", "json_schema": spec}
	if json_mode and not provider.plain_json:
		return {"type": "json_object"}
	return None


STOP_LIMIT = 4
"""The most stop sequences Chat Completions takes ("Up to 4 sequences", the openai SDK's
``stop``; Azure OpenAI's REST reference says "up to four sequences" too; the version targeted is
its GA inference api-version 2024-10-21): more is a 400 at api.openai.com and at Azure OpenAI
(`OpenAIProvider.azure`); another server decides for itself."""


def build(provider: OpenAIProvider, request: ModelRequest) -> dict[str, Any]:
	"""The Chat Completions body for one call."""
	config = request.config
	model = request.model
	messages: list[dict[str, Any]] = [{"role": "system", "content": request.system}]
	limits = provider.image_limits
	fitted = fit_images(provider, request, limits) if limits is not None else {}
	messages.extend(
		_turn(provider, model, m, parts(fitted, i, m)) for i, m in enumerate(request.messages)
	)
	body: dict[str, Any] = {"model": model, "messages": messages}
	if provider.official:
		body["store"] = False
		if request.cache_key:
			body["prompt_cache_key"] = cache_key(request.cache_key)
	s = sampling(provider, model, config)
	if s.effort is not None:
		body["reasoning_effort"] = s.effort
	if s.temperature is not None:
		body["temperature"] = s.temperature
	if s.top_p is not None:
		body["top_p"] = s.top_p
	if config.max_output_tokens is not None:
		# OpenAI's API takes max_completion_tokens for every model (max_tokens is deprecated in
		# its favour, and reasoning models and the GPT-5 family refuse it); many local servers
		# know only max_tokens.
		completion = provider.official or is_reasoning(model)
		# The vendor's models: at api.openai.com or an Azure OpenAI resource, not another server.
		most = most_output(model) if provider.official or provider.azure else None
		wanted = provider.capped_output(model, config.max_output_tokens, most)
		body["max_completion_tokens" if completion else "max_tokens"] = wanted
	if config.stop:
		if s.stop_ok:
			body["stop"] = list(config.stop)
			if (provider.official or provider.azure) and len(config.stop) > STOP_LIMIT:
				body["stop"] = body["stop"][:STOP_LIMIT]
				provider.warn(
					model, "stop", f"takes {STOP_LIMIT} stop sequences at most; the first sent"
				)
		else:
			provider.warn(model, "stop", "reasoning models reject stop sequences; dropped")
	if config.search:
		if "search" in model:
			body["web_search_options"] = {}
		else:
			provider.warn(
				model,
				"search",
				"Chat Completions searches only with a '-search' model; dropped (use api_mode 'responses')",
			)
	fmt = response_format(provider, request)
	if fmt is not None:
		body["response_format"] = fmt
	if config.provider_options:
		merge_options(body, config.provider_options)
	return last_key(body, "messages")


_FINISH = {
	# OpenAI's documented finish_reason values (ChatCompletion.Choice.finish_reason).
	"stop": "stop",
	"length": "max_tokens",
	"content_filter": "safety",
	"tool_calls": "tool_calls",
	"function_call": "tool_calls",
	# What OpenAI-compatible servers document besides: Hugging Face TGI ends with "eos_token"
	# or "stop_sequence"; Together AI with "eos" (its SDK's ``Choice.finish_reason``: stop, eos,
	# length, tool_calls, function_call).
	"eos_token": "stop",
	"stop_sequence": "stop",
	"eos": "stop",
}
"""The loop's finish reasons for Chat's ``finish_reason``; any other one (DeepSeek's
``insufficient_system_resource``, Mistral's and OpenRouter's ``error``, vLLM's ``abort``, one added
later) stopped the reply before its end: ``incomplete``, so none of it runs."""

_WINDOW = frozenset({"model_length"})
"""Finish reasons of a reply stopped at the model's context window, not at the request's output
limit: Mistral's ``model_length`` ("the context length of the model was exceeded"; ``length`` is
its ``max_tokens``). The window error (`window_stop`), which the loop compacts on. OpenAI's own
API has none: a prompt past the window is a 400 (``context_length_exceeded``). A ``length`` reply
whose prompt and reply fill the model's known window is the window too (`filled_window`)."""


@reads_replies("Chat Completions")
def parse(provider: OpenAIProvider, model: str, data: dict[str, Any]) -> ModelResponse:
	"""Turn a Chat Completions reply into a `ModelResponse`.

	Raises:
		ProviderError: The body is an error in place of a reply (OpenRouter's, with status 200),
			or the reply filled the context window (`_WINDOW`).
	"""
	error = body_error(data)
	if error and not data.get("choices"):
		raise _failed(provider, model, data, error)
	choices = items(data.get("choices"), "choices")
	if not choices:
		spent = data.get("usage")
		raise no_answer(provider, model, usage(provider, model, spent) if spent else None)
	choice = fields(choices[0], "choices[0]")
	if choice.get("error"):  # OpenRouter: the model failed while it wrote (finish_reason "error")
		raise _failed(provider, model, data, choice["error"])
	message = fields(choice.get("message"), "choices[0].message")
	content = message.get("content") or ""
	refusal = message.get("refusal")
	if isinstance(content, list):
		content, refused = content_parts(content)
		refusal = refusal or refused
	text = content if isinstance(content, str) else str(content)
	reason = word(choice.get("finish_reason"), "choices[0].finish_reason")
	finish = _FINISH.get(reason, "incomplete") if reason else None
	if refusal:  # beside text too: the text of a refused answer must not run
		text, finish = text or str(refusal), "refusal"
	elif finish in (None, "stop") and (message.get("tool_calls") or message.get("function_call")):
		# A native call beside a complete reply (a server may say "stop"): the loop sends no
		# tools. Beside ``length`` or ``content_filter`` the stop decides, as on the other APIs.
		finish = "tool_calls"
	used = usage(provider, model, data.get("usage"))
	if reason in _WINDOW or (reason == "length" and filled_window(provider, model, used)):
		raise window_stop(provider, model, reason, used)
	return ModelResponse(text=text, usage=used, raw=data, finish_reason=finish)


def _failed(
	provider: OpenAIProvider, model: str, data: dict[str, Any], error: Any
) -> ProviderError:
	"""The error a reply's ``error`` (in place of it, or in its choice) stands for, with its usage."""
	spent = data.get("usage")
	billed = usage(provider, model, spent) if isinstance(spent, dict) and spent else None
	return reply_error(provider, model, error, "the reply", billed)


def content_parts(parts: list[Any]) -> tuple[str, str]:
	"""The text and the refusal of a message's ``content`` sent as parts, not as a string.

	Some OpenAI-compatible servers send parts, whole and streamed (``delta.content``): text
	parts, a refusal part (``{"type": "refusal", "refusal": ...}``) that decides as the
	message's own ``refusal`` does, and Mistral's reasoning models' ``thinking`` parts, whose
	text (under ``thinking``) is no part of the reply.

	Args:
		parts: The ``content`` list.
	"""
	refusal = "".join(
		str(p.get("refusal") or "")
		for p in parts
		if isinstance(p, dict) and p.get("type") == "refusal"
	)
	text = "".join(
		str(p.get("text") or "") if isinstance(p, dict) else str(p)
		for p in parts
		if not (isinstance(p, dict) and p.get("type") == "refusal")
	)
	return text, refusal


def usage(provider: OpenAIProvider, model: str, raw: Any) -> Usage:
	"""A Chat ``usage`` object with its estimated cost; none (a stream without it): unknown."""
	if not raw:  # tokens and cost unknown (not free)
		return Usage(calls=1)
	raw = fields(raw, "usage")
	inp = tokens(raw, "prompt_tokens", "usage")
	out = tokens(raw, "completion_tokens", "usage")
	details = fields(raw.get("prompt_tokens_details"), "usage.prompt_tokens_details")
	cached = tokens(details, "cached_tokens", "usage.prompt_tokens_details")
	if not cached:  # DeepSeek's own field for its cache hits (beside prompt_cache_miss_tokens)
		cached = tokens(raw, "prompt_cache_hit_tokens", "usage")
	written = tokens(details, "cache_write_tokens", "usage.prompt_tokens_details")
	heard = tokens(details, "audio_tokens", "usage.prompt_tokens_details")  # the audio models'
	thinking = fields(raw.get("completion_tokens_details"), "usage.completion_tokens_details")
	reasoning = tokens(thinking, "reasoning_tokens", "usage.completion_tokens_details")
	# A spoken reply's (``modalities: ["text", "audio"]``): of completion_tokens, priced apart.
	said = tokens(thinking, "audio_tokens", "usage.completion_tokens_details")
	price = provider.cost(
		model,
		input_tokens=inp,
		output_tokens=out,
		cached_tokens=cached,
		cache_write_tokens=written,
		audio_tokens=heard,
		output_audio_tokens=said,
	)
	return Usage(
		input_tokens=inp,
		output_tokens=out,
		cached_tokens=cached,
		reasoning_tokens=reasoning,
		cost_usd=price,
		calls=1,
	)
