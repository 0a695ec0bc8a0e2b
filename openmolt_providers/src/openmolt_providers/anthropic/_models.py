"""What Claude models accept, by version (from Anthropic's model, thinking and migration guides).

- Extended thinking exists on Claude 3.7 Sonnet and Claude 4 and later (extended thinking page,
  "Supported models"); the Claude 3 and 3.5 models refuse ``thinking`` with a 400.
- Claude 4.6 and later think adaptively (``thinking: {"type": "adaptive"}`` with
  ``output_config.effort``); 4.7 and later reject the older ``budget_tokens`` form, which is the
  only form before 4.6.
- ``temperature`` and ``top_p`` are deprecated API parameters (the ``anthropic`` SDK 1.0 dropped
  them from its types; the API still takes them before 4.7). Claude 4.7 and later reject them;
  Claude 4.1 and later take only one of the two; with thinking on, ``temperature`` is not allowed and ``top_p`` must be 0.95 to 1.
- Structured outputs (``output_config.format``) exist on the 4.5 models and later (Opus 4.1 had
  them only in the beta), and do not combine with citations, which web search results always
  carry (see `openmolt_providers.anthropic._dialect`).
- ``temperature`` goes from 0.0 to 1.0 (the Messages API reference; OpenAI's and Gemini's to 2.0).
- The web search tool exists on Claude 3.5 Haiku and Sonnet, 3.7 Sonnet and Claude 4 and later
  (web search tool page, "Supported models"), not on the Claude 3 models.
- A Claude id that names no version (``claude-mythos-preview``) is a newer model than the
  versioned ones (`NEWEST`): it is sent what the latest generation accepts.
"""

from __future__ import annotations

import re
from functools import lru_cache

from openmolt_providers._model_id import model_name

__all__ = [
	"NEWEST",
	"adaptive",
	"default_max_tokens",
	"has_thinking",
	"most_output",
	"one_sampler",
	"sampling_removed",
	"searches",
	"structured",
	"version",
]

_TOKENS = re.compile(r"[-.@:_]")
"""What separates the parts of an id: ``claude-opus-4-7``, ``claude-opus-4.7`` (gateways),
``claude-opus-4-7@20260416`` (Vertex AI), ``anthropic.claude-opus-4-7-v1:0`` (Bedrock)."""
_END = re.compile(r"^(v\d+|\d{6,})$")
"""The part after which an id holds no version: Bedrock's ``v1`` and a date."""
_OLD = re.compile(r"^v(\d)$")
"""The version of a Claude 1 or 2 id, right after ``claude``: ``claude-v1``, ``claude-instant-v1``,
Bedrock's ``anthropic.claude-v2:1`` (Claude 2.1)."""

NEWEST = (99, 0)
"""The version of a Claude id that names none (``claude-mythos-preview``): a model newer than
the versioned ones. Anthropic's previews and new families are named so ("Claude Mythos
Preview", ``anthropic.claude-mythos-preview`` on Bedrock), and the newer models accept only
adaptive thinking (``budget_tokens`` is a 400 from Claude Opus 4.7 and Mythos Preview on) and
reject ``temperature`` and ``top_p``: the request every model of the latest generation accepts."""


@lru_cache(maxsize=64)
def version(model: str) -> tuple[int, int]:
	"""The (major, minor) version in a Claude model id, ignoring a date; (0, 0) when not Claude.

	``claude-sonnet-4-5-20250929`` is (4, 5), ``claude-3-7-sonnet-latest`` is (3, 7),
	``claude-sonnet-4-20250514`` is (4, 0); so are the same models as Bedrock
	(``anthropic.claude-sonnet-4-5-20250929-v1:0``), Vertex AI (``claude-sonnet-4-5@20250929``)
	and gateways (``anthropic/claude-sonnet-4.5``) write them; ``claude-v2:1`` is (2, 1). A
	Claude id that names no version (``claude-mythos-preview``) is `NEWEST`; an id without
	``claude`` (another model behind a Messages API) is (0, 0). Read once per model id (asked
	three times a request).
	"""
	name = model_name(model)
	if "claude" not in name:
		return (0, 0)  # another model behind a Messages API (Ollama's qwen2.5:7b): not Claude's
	parts: list[int] = []
	previous = ""
	for part in _TOKENS.split(name[name.find("claude") :]):
		old = _OLD.match(part) if previous in ("claude", "instant") else None
		previous = part
		if old is not None:  # claude-v2:1: Claude 2.1 (not Bedrock's -v1 after a name)
			parts.append(int(old.group(1)))
			continue
		if _END.match(part) or len(parts) == 2:
			break
		if part.isdigit() and len(part) <= 2:
			parts.append(int(part))
	if not parts:
		return NEWEST
	return (parts[0], parts[1] if len(parts) > 1 else 0)


def has_thinking(model: str) -> bool:
	"""Whether the model has extended thinking (Claude 3.7 Sonnet and later).

	Another model behind a Messages API (`version` gives (0, 0)) is given the benefit of the
	doubt: Ollama and LiteLLM take ``budget_tokens``.
	"""
	v = version(model)
	return v == (0, 0) or v >= (3, 7)


def adaptive(model: str) -> bool:
	"""Whether the model thinks adaptively (Claude 4.6 and later)."""
	return version(model) >= (4, 6)


def sampling_removed(model: str) -> bool:
	"""Whether the model rejects temperature and top_p (Claude 4.7 and later)."""
	return version(model) >= (4, 7)


def one_sampler(model: str) -> bool:
	"""Whether the model takes only one of temperature and top_p (Claude 4.1 and later)."""
	return version(model) >= (4, 1)


def searches(model: str) -> bool:
	"""Whether the model has the web search tool (Claude 3.5 and later).

	The web search tool page ("Supported models") lists none of the Claude 3 models. Another
	model behind a Messages API (`version` (0, 0)) is given it: the server decides.
	"""
	v = version(model)
	return v == (0, 0) or v >= (3, 5)


def structured(model: str) -> bool:
	"""Whether the model supports structured outputs (the 4.5 models and later)."""
	return version(model) >= (4, 5)


def default_max_tokens(model: str) -> int:
	"""A sensible ``max_tokens`` when the agent sets none (it is required by the API).

	Within each model's output limit (models overview): 4,096 tokens for the Claude 3 models
	(Haiku, Sonnet, Opus allow no more: 8,192 was refused with a 400), 8,192 for Claude 3.5 and
	3.7, and 16,384 from Claude 4 on (which all allow 32,000 or more).
	"""
	v = version(model)
	if v < (3, 5):
		return 4096
	return 8192 if v < (4, 0) else 16384


def most_output(model: str) -> int | None:
	"""The most output tokens the model writes (``max_tokens`` above it is a 400), or None.

	From the models overview and each model's page ("Max output", platform.claude.com, read
	2026-12): the Claude 3 models 4,096, Claude 3.5 8,192, Claude 3.7 Sonnet 64,000 (128,000
	with the ``output-128k-2025-02-19`` beta header: the build then assumes none), Opus 4 and
	4.1 32,000, Sonnet 4 and the 4.5 models 64,000,
	Claude 4.6 to 5 128,000. None for a later or unversioned Claude (`NEWEST`) and for another
	model behind a Messages API: what the agent asks is sent.

	Args:
		model: The model id (as Anthropic, Bedrock, Vertex AI or a gateway writes it).
	"""
	v = version(model)
	if v == (0, 0) or v > (5, 0):
		return None
	if v < (3, 5):
		return 4_096
	if v < (3, 7):
		return 8_192
	if v < (4, 0):
		return 64_000
	if v < (4, 5):
		return 32_000 if "opus" in model_name(model) else 64_000
	return 64_000 if v < (4, 6) else 128_000
