"""Model fallback: when a provider fails for good, the step goes to the agent's next model.

``create_agent(model=["openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"])`` (or
``model="openai:gpt-5-mini", fallback_models=["anthropic:claude-sonnet-4-5"]``) gives an agent a
chain of models, across providers. Each step starts with the first. When a call fails in a way the
provider's retry policy gave up on, the same step, with the same messages, goes to the next model:

| reason | what failed |
| --- | --- |
| ``server_error`` | 5xx after the retries |
| ``rate_limited`` | 429 past the retry budget |
| ``overloaded`` | 503 or 529 (overloaded) after the retries |
| ``timeout`` | the call timed out (408, a read timeout, ``TimeoutError``) |
| ``unreachable`` | the provider could not be reached (connection errors) |
| ``blocked`` | the provider blocked the conversation (Gemini's blocked prompt, Anthropic's safety refusal): that model would block it again; its billed tokens count in the step, under its model |
| ``unreadable`` | the model cannot read a file the conversation sends it (a video for Claude, an image over its size limit: `openmolt_core.errors.UnreadableAttachment`), refused before anything was sent; the next model may read it |

Anything else fails the run as without fallback: an authentication error (401, a missing key), a
request the provider refuses (400, 404, 413...), a reply that is no reply. Those would fail the
same way on the next step, and hiding them would hide a bug.

Each model gets its own request: its system prompt (a provider with enforced structured output
needs no examples) and the reply schema fitted to its dialect (`openmolt_core.structured.fit`).
The feature is a capability, `ModelFallback` (`openmolt_core.capabilities.fallback`), which the
agent gets when it has more than one model: it wraps each call of the agent's models
(``wrap_model``) and asks the loop for the request of the next model (``run.models.request``).
A ``model:fallback`` event (`ModelFallbackEvent`) says which model failed,
why, and which one is tried next. The run's state records which model answered each step
(``RunState.models``) and the usage and cost of each (``RunState.usage_by_model``: each call
under the model that made it, a blocked one too, ``ModelResponse.usage_by_model``); each
response names the model that answered (``ModelResponse.model``, journaled with it), so a
replayed step is parsed as that model's reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openmolt_core._chain import (  # the kernel's: an agent's models
	ModelSlot,
	record,
	slot_id,
	split_id,
)
from openmolt_core.capabilities.fallback import (  # the capability that falls back
	ChainProvider,
	FallbackReason,
	ModelChain,
	ModelFallback,
	ModelFallbackEvent,
	fallback_reason,
)
from openmolt_core.errors import ConfigurationError

__all__ = [
	"ChainProvider",
	"FallbackReason",
	"ModelChain",
	"ModelFallback",
	"ModelFallbackEvent",
	"ModelSlot",
	"fallback_reason",
	"model_list",
	"record",
	"slot_id",
	"split_id",
]


def model_list(model: Any, fallback_models: Sequence[Any] = ()) -> list[Any]:
	"""The agent's models in order: ``model`` (one, or a list) then ``fallback_models``.

	Args:
		model: A model id, a provider object, or a non-empty list of them.
		fallback_models: More models to fall back to, in order.

	Raises:
		ConfigurationError: The list is empty, or a model appears twice.
	"""
	models = list(model) if isinstance(model, (list, tuple)) else [model]
	models += list(fallback_models)
	if not models:
		raise ConfigurationError("create_agent: model must name at least one model")
	seen = [m for m in models if isinstance(m, str)]
	twice = sorted({m for m in seen if seen.count(m) > 1})
	if twice:
		raise ConfigurationError(f"create_agent: model(s) {twice} listed twice; list each once")
	return models
