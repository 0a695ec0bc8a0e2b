"""What OpenAI models accept: reasoning effort levels and sampling parameters.

From the reasoning and GPT-5 guides (https://platform.openai.com/docs/guides/reasoning,
https://platform.openai.com/docs/guides/latest-model), the API reference of ``reasoning.effort``
and the model pages: o-series and GPT-5 models are reasoning models, and so are
``codex-mini-latest`` (a fine-tuned o4-mini, its model page says) and the GPT-6 family. Which
efforts each family accepts is `_EFFORTS` (the API answers any other with 400
``unsupported_value``, "Supported values are: 'low', 'medium', and 'high'"): ``gpt-5`` adds
``minimal``, GPT-5.1 adds ``none`` and defaults to it, GPT-5.2 and later add ``xhigh``; the codex
models of GPT-5 and later have neither ``none`` nor ``minimal``; ``gpt-5-pro`` accepts only
``high`` and the later pro models ``medium`` to ``xhigh``; the deep research models
(``o3-deep-research``, ``o4-mini-deep-research``) only ``medium``; a family not listed is sent only
``low``, ``medium`` or ``high``. Temperature and top_p are rejected by reasoning models, except
at effort ``none``, and by the search models (``gpt-4o-search-preview``); web search does not run
at effort ``minimal``. Every rule reads the model's
name through `openmolt_providers._model_id.model_name`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core._support import LazyPattern
from openmolt_providers._model_id import model_name

if TYPE_CHECKING:
	from openmolt_core.llm import ModelConfig
	from openmolt_providers.openai import OpenAIProvider

__all__ = [
	"BLIND",
	"CACHE_KEY_LIMIT",
	"DEAF",
	"Sampling",
	"cache_key",
	"chat_only",
	"efforts",
	"hears",
	"is_reasoning",
	"most_output",
	"responses_only",
	"sampling",
	"sees",
]

# Each rule compiles at its first use: a run asks the few its model reaches (`efforts` stops at
# the first match), and a process that imports the provider need not compile the rest.
_REASONING = LazyPattern(r"^(o[1-9]|codex-mini|gpt-([5-9]|[1-9][0-9]))(?![0-9])")
"""The reasoning models: the o-series, codex-mini and GPT-5 and later (the one rule)."""

_LEVELS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The reasoning efforts of the API, from none to the most."""

_AFTER_51 = r"gpt-5\.([2-9]|[1-9][0-9])"
"""GPT-5.2 and later GPT-5 versions."""

_EFFORTS: tuple[tuple[LazyPattern, tuple[str, ...]], ...] = (
	(LazyPattern(r"^gpt-5-pro(?![.0-9a-z])"), ("high",)),
	(LazyPattern(rf"^{_AFTER_51}-pro(?![a-z])"), ("medium", "high", "xhigh")),
	(LazyPattern(r"^gpt-5\.1-codex-max"), ("low", "medium", "high", "xhigh")),
	(LazyPattern(r"^gpt-5(\.1)?-codex"), ("low", "medium", "high")),
	(LazyPattern(rf"^{_AFTER_51}-codex"), ("low", "medium", "high", "xhigh")),
	(LazyPattern(r"^gpt-5\.1(?![0-9])"), ("none", "low", "medium", "high")),
	(LazyPattern(rf"^{_AFTER_51}(?![0-9])"), ("none", "low", "medium", "high", "xhigh")),
	(LazyPattern(r"^gpt-5(?![.0-9])"), ("minimal", "low", "medium", "high")),
	(LazyPattern(r"^o\d+(-mini)?-deep-research"), ("medium",)),
)
"""The efforts each family accepts, first match wins (the module docstring's sources)."""

_ANY_REASONING = ("low", "medium", "high")
"""The efforts of a reasoning family `_EFFORTS` does not list (the o-series, codex-mini, GPT-6):
the three every reasoning model accepts."""


_SEARCH = LazyPattern(r"-search-preview(?![a-z])")
"""The search models of Chat Completions (``gpt-4o-search-preview``,
``gpt-4o-mini-search-preview``), which refuse ``temperature`` and ``top_p`` with a 400 ("Model
incompatible request arguments supplied: temperature, top_p")."""


def is_reasoning(model: str) -> bool:
	"""Whether the model is a reasoning model.

	The o-series, ``codex-mini-latest`` and GPT-5 and later, except the chat variants
	(``gpt-5-chat-latest``).

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	m = model_name(model)
	return bool(_REASONING().match(m)) and "chat" not in m


_RESPONSES_ONLY = LazyPattern(
	r"^(o1-pro|o3-pro|o\d+(-mini)?-deep-research|computer-use|gpt-5-pro|gpt-5\.5-pro|gpt-5-codex"
	r"|gpt-5\.1-codex-max|gpt-5\.6-cyber|gpt-6-cyber|gpt-rosalind-research|gpt-6-rosalind"
	r"|gpt-6\.2-astra-law|gpt-daybreak-)(?![.0-9])"
)
"""The models the Responses API serves and Chat Completions does not: the ``openai`` SDK's
``ResponsesModel`` names beyond its ``ChatModel`` (3.57; tests/providers/test_openai_efforts.py
holds the two in step)."""


_CHAT_ONLY = LazyPattern(r"-search-(preview|api)(?![a-z])|^gpt(-4o(-mini)?)?-audio")
"""The models Chat Completions serves and the Responses API does not: the search models
(``gpt-4o-search-preview``, "a specialized model for web search in Chat Completions", and
``gpt-5-search-api``, the web search guide's model for a Chat Completions search integration;
the Responses API searches with its ``web_search`` tool) and the audio models
(``gpt-4o-audio-preview``, ``gpt-audio``: the Responses API takes no audio)."""


def chat_only(model: str) -> bool:
	"""Whether OpenAI serves the model over Chat Completions only (not the Responses API).

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	return bool(_CHAT_ONLY().search(model_name(model)))


def responses_only(model: str) -> bool:
	"""Whether OpenAI serves the model over the Responses API only (not Chat Completions).

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	return bool(_RESPONSES_ONLY().match(model_name(model)))


_TEXT_ONLY = LazyPattern(
	r"^(gpt-3\.5|gpt-4($|-0314|-0613|-32k|-1106-preview|-0125-preview|-turbo-preview)"
	r"|o1-mini|o1-preview|o3-mini)(?![.0-9])"
)
"""OpenAI's models without vision: GPT-3.5, GPT-4 before GPT-4 Turbo with vision
(``gpt-4-turbo``, ``gpt-4-vision-preview`` read images; the ``-preview`` Turbos do not), and the
earlier mini reasoning models (o1-mini, o1-preview, o3-mini: text only, their model pages say;
o4-mini reads images). The API refuses an image part to them, and a PDF file input, which the
file inputs guide gives to "models that support both text and image inputs". The audio models
(`hears`: text and audio in, "Image: Not supported" on their model pages) see none either."""


BLIND = (
	"this model reads no images, nor PDF files",
	"use a model that reads them (gpt-4o, gpt-4.1, o4-mini, GPT-5 and later), as the model or a "
	"fallback model",
)
"""What an image or PDF refused to a model without vision says (`sees`): why, and the fix."""

DEAF = (
	"this model hears no audio: Chat Completions takes it on its audio models only "
	"(gpt-4o-audio-preview, gpt-audio)",
	"use one of them, or a Gemini model, as the model or a fallback model",
)
"""What audio refused to a Chat model that takes none (`hears`) says: why, and the fix."""


def sees(model: str) -> bool:
	"""Whether the model reads images (and so PDF files) (`_TEXT_ONLY` and the audio models: not).

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	return not _TEXT_ONLY().match(model_name(model)) and not hears(model)


def hears(model: str) -> bool:
	"""Whether Chat Completions takes ``input_audio`` for the model (its audio models only).

	``gpt-4o-audio-preview``, ``gpt-4o-mini-audio-preview``, ``gpt-audio`` (the audio guide).

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	return "audio" in model_name(model)


def efforts(model: str) -> tuple[str, ...]:
	"""The reasoning efforts a reasoning model accepts, in `_LEVELS` order.

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	m = model_name(model)
	return next((accepted for rule, accepted in _EFFORTS if rule().match(m)), _ANY_REASONING)


def _nearest(wanted: str, accepted: tuple[str, ...]) -> str:
	"""The accepted effort nearest to `wanted` in `_LEVELS`, the higher of two as near."""
	rank = _LEVELS.index(wanted)
	return min(
		accepted, key=lambda level: (abs(_LEVELS.index(level) - rank), -_LEVELS.index(level))
	)


class Sampling:
	"""The effort and sampling values to send for a model_config, after the model's rules.

	Args:
		effort: The reasoning effort to send, or None.
		temperature: The temperature to send, or None.
		top_p: The top_p to send, or None.
		stop_ok: Whether the model accepts stop sequences (Chat Completions).
	"""

	__slots__ = ("effort", "stop_ok", "temperature", "top_p")

	def __init__(
		self, effort: str | None, temperature: float | None, top_p: float | None, stop_ok: bool
	) -> None:
		self.effort = effort
		self.temperature = temperature
		self.top_p = top_p
		self.stop_ok = stop_ok


def _instead(thinking: object, effort: str, accepted: tuple[str, ...]) -> str:
	"""The warning for a thinking value sent as another effort: what the model accepts."""
	if len(accepted) == 1:
		return f"accepts only reasoning effort '{effort}'; using '{effort}'"
	if thinking is False:
		return f"reasoning cannot be turned off; using effort '{effort}'"
	return f"accepts reasoning effort {', '.join(map(repr, accepted))} only; using '{effort}'"


def sampling(provider: OpenAIProvider, model: str, config: ModelConfig) -> Sampling:
	"""Map thinking, temperature, top_p (and whether stop works) onto what the model accepts.

	Dropped or adjusted values warn once per model with `ModelConfigWarning`.
	"""
	thinking: Any = config.thinking
	if not is_reasoning(model):
		if thinking not in (None, False):
			provider.warn(model, "thinking", "is not a reasoning model; 'thinking' ignored")
		temperature, top_p = config.temperature, config.top_p
		if _SEARCH().search(model_name(model)):
			for key, value in (("temperature", temperature), ("top_p", top_p)):
				if value is not None:
					provider.warn(model, key, f"the search models reject '{key}'; dropped")
			temperature = top_p = None
		return Sampling(None, temperature, top_p, True)
	accepted = efforts(model)
	effort: str | None
	if thinking is None:
		effort = None
	else:
		wanted = "medium" if thinking is True else "none" if thinking is False else str(thinking)
		effort = _nearest(wanted, accepted)
		if effort != wanted and not (thinking is False and effort == "minimal"):
			provider.warn(model, "thinking", _instead(thinking, effort, accepted))
	if config.search and effort == "minimal":
		effort = "low"
		provider.warn(
			model, "search", "web search needs reasoning effort 'low' or more; using 'low'"
		)
	effective = effort if effort is not None else accepted[0]  # none is the default where it is
	temperature, top_p = config.temperature, config.top_p
	if effective != "none":
		for key, value in (("temperature", temperature), ("top_p", top_p)):
			if value is not None:
				provider.warn(
					model,
					key,
					f"reasoning models reject '{key}' unless thinking is False on a model with effort 'none' (GPT-5.1 and later); dropped",
				)
		temperature = top_p = None
	return Sampling(effort, temperature, top_p, False)


CACHE_KEY_LIMIT = 64
"""The longest ``prompt_cache_key`` the API takes, in characters: a longer one is refused with
400 ``string_above_max_length`` ("Expected a string with maximum length 64")."""


def cache_key(key: str) -> str:
	"""A request's cache key as ``prompt_cache_key`` takes it: at most `CACHE_KEY_LIMIT` characters.

	The loop's key is ``openmolt:`` and the agent's name, which may be long: every call of an
	agent named with more than 55 characters was refused. A longer key keeps its start and ends
	with a digest of the whole, so it stays stable from call to call and two keys that share
	their start stay apart.

	Args:
		key: The request's ``cache_key``.
	"""
	if len(key) <= CACHE_KEY_LIMIT:
		return key
	import hashlib

	digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
	return f"{key[: CACHE_KEY_LIMIT - len(digest) - 1]}:{digest}"


_MOST_OUTPUT: tuple[tuple[LazyPattern, int], ...] = (
	(LazyPattern(r"^gpt-3\.5-turbo"), 4_096),
	(LazyPattern(r"^gpt-4o-2024-05-13"), 4_096),
	(LazyPattern(r"^gpt-4-(turbo|\d{4}-preview|vision)"), 4_096),
	(LazyPattern(r"^gpt-4(-\d{4})?$"), 8_192),
	(LazyPattern(r"^(gpt-4o|chatgpt-4o|gpt-4\.5|gpt-5-chat|gpt-audio)(?![.0-9])"), 16_384),
	(LazyPattern(r"^gpt-4\.1(?![0-9])"), 32_768),
	(LazyPattern(r"^o1-preview"), 32_768),
	(LazyPattern(r"^o1-mini"), 65_536),
	(LazyPattern(r"^(o1|o3|o4-mini|codex-mini)(?![0-9])"), 100_000),
	(LazyPattern(r"^gpt-5-pro(?![.0-9a-z])"), 272_000),
	(LazyPattern(r"^gpt-5(\.[12])?(?![.0-9])"), 128_000),
)
"""The most output tokens each family writes ("Max output tokens" on each model page,
developers.openai.com/api/docs/models, read 2026-12; first match wins): GPT-3.5 Turbo, GPT-4
Turbo and the first GPT-4o snapshot 4,096, GPT-4 8,192, GPT-4o, GPT-4.5, the audio models and
``gpt-5-chat-latest`` 16,384, GPT-4.1 32,768, o1-preview 32,768, o1-mini 65,536, the o-series
100,000, GPT-5 to 5.2 128,000, ``gpt-5-pro`` 272,000. Above it the API answers 400 ("max_tokens is
too large ... This model supports at most 16384 completion tokens"). A family not listed (a later
one) is sent what the agent asks."""


def most_output(model: str) -> int | None:
	"""The most output tokens the model writes, or None when not known here (`_MOST_OUTPUT`).

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	m = model_name(model)
	if "realtime" in m or "search" in m or "transcribe" in m or "tts" in m:
		return None  # their own limits, not the chat models' of their family
	return next((most for rule, most in _MOST_OUTPUT if rule().match(m)), None)
