"""One normalisation of model ids, for every lookup a provider makes by model name.

A model id may arrive with a gateway's ``provider/`` prefix (``openai/gpt-5``), Gemini's
resource prefix (``models/gemini-3-pro-preview``), in capitals, or as an OpenAI fine-tune
(``ft:o4-mini-2025-04-16:org::id``, a fine-tune of o4-mini), or as Amazon Bedrock names a
Claude model (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``, ``anthropic.claude-opus-4-7``:
the model is ``claude-...``). The rules (context windows, reasoning levels, structured-output
dialects) are written for the bare base name, so each lookup reads `model_name` rather than the
id as given.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["fine_tuned", "model_name"]

_BEDROCK = re.compile(r"^(?:[a-z-]+\.)?anthropic\.(?=claude)")
"""Bedrock's vendor part before a Claude id, with a cross-region profile's (``us.``,
``global.``, ``us-gov.``...)."""


@lru_cache(maxsize=256)
def model_name(model: str) -> str:
	"""The base model's name: lowercase, no ``provider/`` or ``models/`` prefix, no fine-tune.

	``models/gemini-3-pro-preview`` is ``gemini-3-pro-preview``, ``openai/GPT-5`` is ``gpt-5``,
	``ft:gpt-4o-mini-2024-07-18:org::id`` is ``gpt-4o-mini-2024-07-18``,
	``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` is ``claude-sonnet-4-5-20250929-v1:0``. A
	colon is kept in other names (``qwen3:8b`` on Ollama is a different model from ``qwen3``).

	Args:
		model: The model id as the agent names it.
	"""
	name = model.rsplit("/", 1)[-1].lower()
	if name.startswith("ft:"):
		return name.removeprefix("ft:").split(":", 1)[0]
	return _BEDROCK.sub("", name)


def fine_tuned(model: str) -> bool:
	"""Whether the id names an OpenAI fine-tune (``ft:base:org::id``).

	Args:
		model: The model id as the agent names it.
	"""
	return model.rsplit("/", 1)[-1].lower().startswith("ft:")
