"""Request body and reply parsing for the Gemini API ``generateContent`` (``v1beta``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse, Usage
from openmolt_providers._attach import fit_images, parts
from openmolt_providers._body import Turns, last_key, merge_options, turn_text
from openmolt_providers._common import (
	billed,
	filled_window,
	joined,
	no_answer,
	provider_message,
	reply_failure,
	retry_delay,
	window_stop,
)
from openmolt_providers._schema import reply_format
from openmolt_providers._shape import fields, items, reads_replies, tokens, word
from openmolt_providers.gemini._dialect import alias, resolved, version

if TYPE_CHECKING:
	from collections.abc import Mapping, Sequence

	from openmolt_core.llm import Attachment, Message, ModelRequest
	from openmolt_providers.gemini import GeminiProvider

__all__ = [
	"BUDGETS",
	"CONTINUATION",
	"MAX_CONTINUATIONS",
	"build",
	"continued",
	"go_on",
	"hops_usage",
	"parse",
	"parse_continued",
	"reply_error",
]

BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
"""Thinking budgets (tokens) for Gemini 2.5 models, which take ``thinkingBudget``."""

_LEVELS = {"low": "LOW", "medium": "MEDIUM", "high": "HIGH"}

_NO_MINIMAL = re.compile(r"^gemini-3(\.\d+)?-pro|^gemini-3\.[7-9]-flash(?!-lite)|^gemini-[4-9]")
"""Gemini 3 and later models without the thinking level MINIMAL, so thinking cannot stop (LOW is
their lowest): the Pro models, Gemini 3.7 Flash and later Flash models (not their Flash-Lite), and
Gemini 4 (Google's thinking page, "supported thinking_level values": 3.7 and 3.8 Flash take LOW,
MEDIUM and HIGH; 3 Flash, 3.5 and 3.6 Flash and the Flash-Lite models take MINIMAL too; Gemini 4
Argon's page: "tunable thinking levels (low, medium, high)")."""


def _family(model: str) -> str:
	"""How the model is asked to think: ``3`` in levels, ``2.5`` in budgets.

	Levels on Gemini 3 and later, and on an alias whose model is not known (Google points each
	at a current model).
	"""
	m = resolved(model)
	if m.startswith("gemma-"):
		return "gemma"
	if (m.startswith("gemini-") and version(model) >= (3, 0)) or alias(model):
		return "3"
	if m.startswith("gemini-2.5"):
		return "2.5"
	return "old"


def _plain(role: str, content: str) -> dict[str, Any]:
	"""A turn of text as ``contents`` holds it."""
	return {
		"role": "model" if role == "assistant" else "user",
		"parts": [{"text": turn_text(content)}],
	}


_TURNS = Turns(_plain)
"""The plain turns, each built and encoded once (`openmolt_providers._body.Turns`)."""


def _content(
	provider: GeminiProvider,
	model: str,
	message: Message,
	shown: Sequence[Attachment | str],
	sent: list[int],
) -> dict[str, Any]:
	if not shown:
		return _TURNS(message.role, message.content)
	from openmolt_providers.gemini._inline import inline_parts

	turn = _plain(message.role, message.content)
	parts: list[dict[str, Any]] = turn["parts"]
	for a in shown:
		if isinstance(a, str):  # the note in place of an image left out
			parts.append({"text": a})
		else:
			parts.extend(inline_parts(provider, model, [a], sent))
	return turn


def _thinking(provider: GeminiProvider, model: str, thinking: Any) -> dict[str, Any] | None:
	if thinking is None:
		return None
	family = _family(model)
	name = resolved(model)
	pro = "-pro" in name
	if family == "3":
		if thinking is False:
			# An alias whose model is not known: LOW, which every Gemini 3 model takes (MINIMAL
			# only on a Flash-Lite).
			if _NO_MINIMAL.match(name) or (alias(model) and "flash-lite" not in name):
				provider.warn(
					model,
					"thinking",
					"this model cannot stop thinking (it has no level MINIMAL); using level LOW",
				)
				return {"thinkingLevel": "LOW"}
			return {"thinkingLevel": "MINIMAL"}
		level = "HIGH" if thinking is True else _LEVELS[thinking]
		if level == "MEDIUM" and name.startswith("gemini-3-pro"):
			provider.warn(model, "thinking", "Gemini 3 Pro has no MEDIUM level; using HIGH")
			level = "HIGH"
		return {"thinkingLevel": level}
	if family == "2.5":
		if thinking is False:
			if pro:
				provider.warn(model, "thinking", "Gemini 2.5 Pro cannot stop thinking; budget 128")
				return {"thinkingBudget": 128}
			return {"thinkingBudget": 0}
		return {"thinkingBudget": -1 if thinking is True else BUDGETS[thinking]}
	if thinking is not False:
		provider.warn(model, "thinking", "this model does not think; 'thinking' ignored")
	return None


_MOST_OUTPUT: tuple[tuple[re.Pattern[str], int], ...] = (
	(
		re.compile(r"^gemini-(1\.5|2\.0)-(pro|flash)(-lite)?(-\d{3}|-preview.*|-exp.*|-latest)?$"),
		8_192,
	),
	(re.compile(r"^gemini-2\.5-(pro|flash|flash-lite)(-\d{3}|-preview-[\d-]+)?$"), 65_536),
	(re.compile(r"^gemini-3(\.1)?-(pro|flash)(-preview)?$"), 65_536),
)
"""The most output tokens each model writes ("Output token limit" on the Gemini API's models
page, ai.google.dev/gemini-api/docs/models, read 2026-12): Gemini 1.5 and 2.0 8,192, Gemini
2.5 Pro, Flash and Flash-Lite and Gemini 3 Pro and Flash 65,536. Above it the API answers 400
INVALID_ARGUMENT ("the supported range is from 1 (inclusive) to 65537 (exclusive)"). Only the
text models are listed (the image, TTS and live variants have limits of their own); a model not
listed is sent what the agent asks."""


def most_output(model: str) -> int | None:
	"""The most output tokens the model writes (`_MOST_OUTPUT`), or None when not known here.

	Args:
		model: The model id (an alias is read as the model it names).
	"""
	name = resolved(model)
	return next((most for rule, most in _MOST_OUTPUT if rule.match(name)), None)


STOP_LIMIT = 5
"""The most stop sequences the Gemini API takes (``GenerationConfig.stopSequences``: "The set of
character sequences (up to 5)"): more is a 400; another server decides for itself."""


def build(provider: GeminiProvider, request: ModelRequest) -> dict[str, Any]:
	"""The ``generateContent`` body for one call.

	The system instruction and the first contents stay identical from step to step, so Gemini's
	implicit prefix cache keeps hitting (``cachedContentTokenCount`` reports it).
	"""
	config = request.config
	model = request.model
	generation: dict[str, Any] = {}
	if config.temperature is not None:
		generation["temperature"] = config.temperature
	if config.top_p is not None:
		generation["topP"] = config.top_p
	if config.max_output_tokens is not None:
		most = most_output(model) if provider.official else None
		generation["maxOutputTokens"] = provider.capped_output(
			model, config.max_output_tokens, most
		)
	if config.stop:
		generation["stopSequences"] = list(config.stop)
		if provider.official and len(config.stop) > STOP_LIMIT:
			generation["stopSequences"] = generation["stopSequences"][:STOP_LIMIT]
			provider.warn(
				model, "stop", f"takes {STOP_LIMIT} stop sequences at most; the first sent"
			)
	thinking = _thinking(provider, model, config.thinking)
	if thinking is not None:
		generation["thinkingConfig"] = thinking
	schema, json_mode = reply_format(provider, request)
	gemma = _family(model) == "gemma"
	# Gemini 2.5 and older cannot combine controlled JSON output with Google Search grounding:
	# then the prompt asks for JSON and the loop validates it. Gemma has no JSON mode at all.
	if json_mode and not gemma and not (config.search and version(model) < (3, 0)):
		generation["responseMimeType"] = "application/json"
		if schema is not None:
			generation["responseJsonSchema"] = schema
	sent = [0]  # the request's inline data so far (base64 characters): Gemini caps it
	fitted = fit_images(provider, request, "GEMINI") if provider.official else {}
	contents = [
		_content(provider, model, m, parts(fitted, i, m), sent)
		for i, m in enumerate(request.messages)
	]
	body: dict[str, Any] = {}
	if gemma and contents:
		# Gemma refuses a system instruction ("Developer instruction is not enabled"): it
		# opens the first turn instead, which stays the same at every step.
		# A new first turn: the one `_TURNS` keeps is shared and must not change.
		first = contents[0]
		contents[0] = {**first, "parts": [{"text": request.system}, *first["parts"]]}
	else:
		body["systemInstruction"] = {"parts": [{"text": request.system}]}
	body["contents"] = contents
	if config.search:
		body["tools"] = [{"googleSearch": {}}]
	if generation:
		body["generationConfig"] = generation
	if config.provider_options:
		merge_options(body, config.provider_options)
	return last_key(body, "contents")


_SAFETY = frozenset(
	{
		"SAFETY",
		"RECITATION",
		"PROHIBITED_CONTENT",
		"BLOCKLIST",
		"SPII",
		"IMAGE_SAFETY",
		"IMAGE_PROHIBITED_CONTENT",
		"IMAGE_RECITATION",
		"MODEL_ARMOR",
		"ESCALATION",
	}
)
"""Finish reasons of a content filter (``RECITATION``: the reply was stopped for quoting;
``MODEL_ARMOR``: "blocked by Model Armor", on Vertex AI; ``ESCALATION``: "filtered by an
escalation rule", google-genai 3.6 ``FinishReason``). The model is told a filter blocked its
answer, not asked to send it whole again."""

_CALLS = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})
"""Finish reasons of a native function call (the loop declares no functions)."""

_BLOCKED = frozenset({"PUP_LIMITED_DISABLED"})
"""Finish reasons that every later request meets as well: ``PUP_LIMITED_DISABLED``, "the user
account is limited or disabled due to Prohibited Use Policy (PUP) violations" (google-genai 3.6
``FinishReason``). ``blocked``: the run ends (or the next model answers) instead of asking the
model again at every step."""


def _finish(reason: str | None) -> str | None:
	"""The loop's finish reason for a Gemini ``finishReason`` (API reference: ``FinishReason``).

	Only ``STOP`` ends a complete reply; every other reason (``OTHER``, ``LANGUAGE``,
	``MALFORMED_RESPONSE``, one added later...) stopped it before its end, so none of it runs.
	"""
	if not reason:
		return None
	if reason == "STOP":
		return "stop"
	if reason == "MAX_TOKENS":
		return "max_tokens"
	if reason in _SAFETY:
		return "safety"
	if reason in _CALLS:
		return "tool_calls"
	if reason in _BLOCKED:
		return "blocked"
	return "incomplete"


def reply_error(provider: GeminiProvider, model: str, data: Any, what: str) -> ProviderError:
	"""The error a body's ``error`` stands for: a stream's event, or a body sent with 200.

	Google's errors (``google.rpc.Status`` in JSON) carry the HTTP status as ``error.code``: a
	503 is retried later, and a prompt past the context window is the window error the loop
	compacts on. A ``usageMetadata`` beside the error is what the body reports it was billed
	for: the error carries it.

	Args:
		provider: The provider (its ``scrub`` masks the key in the message).
		model: The model.
		data: The body holding ``error``.
		what: What failed, for the message (``the stream``, ``the reply``).
	"""
	error = data.get("error") if isinstance(data, dict) else None
	code = error.get("code") if isinstance(error, dict) else None
	status = code if isinstance(code, int) and not isinstance(code, bool) else None
	why = provider.scrub(provider_message(data) or "no reason given")
	reported = isinstance(data, dict) and isinstance(data.get("usageMetadata"), dict)
	spent = _usage(provider, model, data) if reported and data["usageMetadata"] else None
	wait = retry_delay(data)  # Google's RetryInfo: the wait a 429 sent as a status asks for too
	return reply_failure(provider, model, what, why, status, usage=spent, wait=wait)


@reads_replies("Gemini")
def parse(provider: GeminiProvider, model: str, data: dict[str, Any]) -> ModelResponse:
	"""Turn a ``generateContent`` reply into a `ModelResponse` (thought parts skipped).

	Raises:
		ProviderError: The body is an error in place of a reply (as a gateway passes it on with
			status 200), or the reply filled the model's known context window (`filled_window`).
	"""
	if data.get("error") and not data.get("candidates"):
		raise reply_error(provider, model, data, "the reply")
	candidates = items(data.get("candidates"), "candidates")
	text = ""
	finish: str | None
	if candidates:
		first = fields(candidates[0], "candidates[0]")
		content = fields(first.get("content"), "candidates[0].content")
		at = "candidates[0].content.parts"
		parts = [fields(p, f"{at}[{i}]") for i, p in enumerate(items(content.get("parts"), at))]
		text = "".join(
			word(p.get("text"), f"{at}[{i}].text") or ""
			for i, p in enumerate(parts)
			if not p.get("thought")
		)
		finish = _finish(word(first.get("finishReason"), "candidates[0].finishReason"))
		if finish is None and _prompt_blocked(data):
			finish = "blocked"  # a candidate without a finish beside a blocked prompt: not run
		elif finish in (None, "stop") and any("functionCall" in p for p in parts):
			finish = "tool_calls"
	elif _prompt_blocked(data):
		# The prompt itself was blocked (no model wrote anything): the same prompt is blocked
		# again, so the model is not asked to rephrase what it never wrote.
		finish = "blocked"
	else:
		reported = isinstance(data.get("usageMetadata"), dict) and data["usageMetadata"]
		raise no_answer(provider, model, _usage(provider, model, data) if reported else None)
	usage = _usage(provider, model, data)
	if finish == "max_tokens" and filled_window(provider, model, usage):
		raise window_stop(provider, model, "MAX_TOKENS", usage)
	return ModelResponse(text=text, usage=usage, raw=data, finish_reason=finish)


def _prompt_blocked(data: dict[str, Any]) -> bool:
	"""Whether the reply says the prompt was blocked (``promptFeedback.blockReason``)."""
	return bool(fields(data.get("promptFeedback"), "promptFeedback").get("blockReason"))


def _usage(provider: GeminiProvider, model: str, data: dict[str, Any]) -> Usage:
	"""A reply's ``usageMetadata`` with its estimated cost; none: tokens and cost unknown (not free).

	``promptTokenCount`` holds the cached tokens (``cachedContentTokenCount``); the tool-use
	prompt and the thoughts are counted apart from it and from ``candidatesTokenCount``
	(``totalTokenCount`` is the sum of the four).
	"""
	raw = fields(data.get("usageMetadata"), "usageMetadata")
	if not raw:
		return Usage(calls=1)
	at = "usageMetadata"
	inp = tokens(raw, "promptTokenCount", at) + tokens(raw, "toolUsePromptTokenCount", at)
	thoughts = tokens(raw, "thoughtsTokenCount", at)
	out = tokens(raw, "candidatesTokenCount", at) + thoughts
	cached = tokens(raw, "cachedContentTokenCount", at)
	price = provider.cost(
		model,
		input_tokens=inp,
		output_tokens=out,
		cached_tokens=cached,
		audio_tokens=_heard(raw, "promptTokensDetails"),
		cached_audio_tokens=_heard(raw, "cacheTokensDetails"),
		output_audio_tokens=_heard(raw, "candidatesTokensDetails"),
	)
	return Usage(
		input_tokens=inp,
		output_tokens=out,
		cached_tokens=cached,
		reasoning_tokens=thoughts,
		cost_usd=price,
		calls=1,
	)


def _heard(raw: Mapping[str, Any], key: str) -> int:
	"""The audio tokens of a usage's list by modality; 0 when it names none.

	``promptTokensDetails``: ``[{"modality": "AUDIO", "tokenCount": 40}]``; Gemini prices audio
	apart from text (a live model's spoken reply too: ``candidatesTokensDetails``).
	"""
	at = f"usageMetadata.{key}"
	return sum(
		tokens(entry, "tokenCount", at)
		for entry in (fields(e, at) for e in items(raw.get(key), at))
		if entry.get("modality") == "AUDIO"
	)


CONTINUATION = "CONTINUATION"
"""The finish reason of a reply the API stopped at its per-request token limit before it was
complete (``FinishReason.CONTINUATION``, google-genai 3.6 types): "the model response can be
continued via a subsequent request using the returned ``continuation_token``"."""

MAX_CONTINUATIONS = 8
"""How many times one model call goes on with a reply the API stopped (each is another billed
request); a reply still stopped after them is ``incomplete``: none of it runs."""


def continued(data: dict[str, Any]) -> str | None:
	"""The token to go on with, when the API stopped this reply before its end (`CONTINUATION`).

	As the SDK reads it (``should_continue_generation``): the first candidate's
	``continuationToken``, when its finish reason is ``CONTINUATION``. None otherwise, and for a
	reply of another shape (`parse` names what is wrong with it).

	Args:
		data: A ``generateContent`` reply (or a stream's reply put back together).
	"""
	candidates = data.get("candidates")
	first = candidates[0] if isinstance(candidates, list) and candidates else None
	if not isinstance(first, dict) or first.get("finishReason") != CONTINUATION:
		return None
	token = first.get("continuationToken")
	return token if isinstance(token, str) and token else None


def go_on(body: dict[str, Any], token: str) -> dict[str, Any]:
	"""The request that goes on with a reply the API stopped (`CONTINUATION`): the same, with its token.

	The token is the request's top-level ``continuationToken`` (base64 text, sent back as it
	came), as the SDK's Gemini API converter writes ``GenerateContentConfig.continuation_token``;
	the conversation stays last, so the request's prefix is the first one's.

	Args:
		body: The call's request body.
		token: The stopped reply's ``continuationToken``.
	"""
	return last_key({**body, "continuationToken": token}, "contents")


@reads_replies("Gemini")
def parse_continued(
	provider: GeminiProvider, model: str, hops: list[dict[str, Any]], last: dict[str, Any]
) -> ModelResponse:
	"""The reply of a call the API stopped and went on with (`go_on`): one reply.

	As the SDK merges them (``merge_continuation_responses``): the first candidate's parts are
	every reply's, in order; its finish reason and the window check are the last reply's; the
	usage adds up every request's, each billed.

	Args:
		provider: The provider.
		model: The model.
		hops: The replies the API stopped, oldest first.
		last: The reply that ended the call.
	"""
	if not hops:
		return parse(provider, model, last)
	if last.get("error") and not last.get("candidates"):
		# The request that went on failed: its error, not the stopped parts read as a reply.
		raise billed(
			reply_error(provider, model, last, "the reply"), hops_usage(provider, model, hops)
		)
	parts: list[Any] = []
	for reply in (*hops, last):
		for candidate in items(reply.get("candidates"), "candidates")[:1]:
			content = fields(fields(candidate, "candidates[0]").get("content"), "content")
			parts.extend(items(content.get("parts"), "candidates[0].content.parts"))
	candidates = items(last.get("candidates"), "candidates")
	end = fields(candidates[0], "candidates[0]") if candidates else {}
	merged = {**last, "candidates": [{**end, "content": {"role": "model", "parts": parts}}]}
	try:
		response = parse(provider, model, merged)
	except ProviderError as exc:  # the stopped requests were billed all the same
		billed(exc, hops_usage(provider, model, hops))
		raise
	return joined(response, hops_usage(provider, model, hops), _usage(provider, model, last))


def hops_usage(provider: GeminiProvider, model: str, hops: list[dict[str, Any]]) -> Usage:
	"""What the requests the API stopped (`CONTINUATION`) were billed for, each having answered."""
	usage = Usage()
	for reply in hops:
		usage.add(_usage(provider, model, reply))
	return usage
