"""What OpenAI models accept: reasoning effort levels and sampling parameters.

From the reasoning and GPT-5 guides (https://platform.openai.com/docs/guides/reasoning,
https://platform.openai.com/docs/guides/latest-model): o-series and GPT-5 models are reasoning
models, and so are ``codex-mini-latest`` (a fine-tuned o4-mini, its model page says) and the
GPT-6 family; ``gpt-5`` accepts effort ``minimal`` and GPT-5.1 and later accept ``none``;
``gpt-5-pro`` accepts only ``high`` (the API reference of ``reasoning.effort``); temperature and
top_p are rejected by reasoning models, except GPT-5.1 and later at effort ``none``; web search
does not run at effort ``minimal``. Every rule reads the model's name through
`openmolt_providers._model_id.model_name`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from openmolt_providers._model_id import model_name

if TYPE_CHECKING:
	from openmolt_core.llm import ModelConfig
	from openmolt_providers.openai import OpenAIProvider

__all__ = ["CACHE_KEY_LIMIT", "Sampling", "cache_key", "is_reasoning", "only_effort", "sampling"]

_GPT5X = re.compile(r"^gpt-5\.\d")
_REASONING = re.compile(r"^(o[1-9]|codex-mini|gpt-([5-9]|[1-9][0-9]))(?![0-9])")
"""The reasoning models: the o-series, codex-mini and GPT-5 and later (the one rule)."""
_ONLY_EFFORT = ((re.compile(r"^gpt-5-pro(?![.0-9a-z])"), "high"),)
"""Models that accept one reasoning effort only, and that effort."""


def is_reasoning(model: str) -> bool:
	"""Whether the model is a reasoning model.

	The o-series, ``codex-mini-latest`` and GPT-5 and later, except the chat variants
	(``gpt-5-chat-latest``).

	Args:
		model: The model id (a prefix or a fine-tune is read as its base model).
	"""
	m = model_name(model)
	return bool(_REASONING.match(m)) and "chat" not in m


def only_effort(model: str) -> str | None:
	"""The one reasoning effort the model accepts (``gpt-5-pro``: ``high``), or None.

	Args:
		model: The model id.
	"""
	m = model_name(model)
	return next((effort for rule, effort in _ONLY_EFFORT if rule.match(m)), None)


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


def sampling(provider: OpenAIProvider, model: str, config: ModelConfig) -> Sampling:
	"""Map thinking, temperature, top_p (and whether stop works) onto what the model accepts.

	Dropped or adjusted values warn once per model with `ModelConfigWarning`.
	"""
	thinking: Any = config.thinking
	if not is_reasoning(model):
		if thinking not in (None, False):
			provider.warn(model, "thinking", "is not a reasoning model; 'thinking' ignored")
		return Sampling(None, config.temperature, config.top_p, True)
	m = model_name(model)
	none_ok = bool(_GPT5X.match(m))
	effort: str | None
	if thinking is None:
		effort = None
	elif thinking is True:
		effort = "medium"
	elif thinking is False:
		if none_ok:
			effort = "none"
		elif m.startswith("gpt-5"):
			effort = "minimal"
		else:
			effort = "low"
			provider.warn(model, "thinking", "reasoning cannot be turned off; using effort 'low'")
	else:
		effort = str(thinking)
	fixed = only_effort(model)
	if fixed is not None and effort is not None and effort != fixed:
		provider.warn(
			model, "thinking", f"accepts only reasoning effort '{fixed}'; using '{fixed}'"
		)
		effort = fixed
	if config.search and effort == "minimal":
		effort = "low"
		provider.warn(
			model, "search", "web search needs reasoning effort 'low' or more; using 'low'"
		)
	effective = effort if effort is not None else ("none" if none_ok else "medium")
	temperature, top_p = config.temperature, config.top_p
	if effective != "none":
		for key, value in (("temperature", temperature), ("top_p", top_p)):
			if value is not None:
				provider.warn(
					model,
					key,
					f"reasoning models reject '{key}' unless thinking is False on GPT-5.1 or later; dropped",
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
