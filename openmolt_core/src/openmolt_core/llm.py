"""The model-provider contract: what the loop sends a model, and what it gets back."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
	"DEFAULT_COMPACTION",
	"DEFAULT_CONTEXT_WINDOW",
	"DEFAULT_MODEL_CONFIG",
	"Attachment",
	"CompactionConfig",
	"LLMProvider",
	"Message",
	"ModelConfig",
	"ModelRequest",
	"ModelResponse",
	"StructuredMode",
	"Usage",
	"options_for",
	"scoped_options",
]

StructuredMode = Literal["strict", "partial", "off"]
"""How much of a reply the provider constrains: all, part (the rest as JSON text), or none."""


class ModelConfig(BaseModel):
	"""One model configuration for every provider (a key a model cannot honour is dropped or refused)."""

	# Built on first use (validation, a schema): an agent on the defaults never validates one.
	model_config: ClassVar[ConfigDict] = ConfigDict(
		extra="forbid", populate_by_name=True, frozen=True, defer_build=True
	)

	thinking: bool | Literal["low", "medium", "high"] | None = Field(
		default=None, description="Reasoning: True/False, or an effort level."
	)
	search: bool = Field(default=False, description="Let the model use the provider's web search.")
	temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature.")
	max_output_tokens: int | None = Field(
		default=None, gt=0, alias="maxOutputTokens", description="Cap on tokens per reply."
	)
	top_p: float | None = Field(
		default=None, ge=0, le=1, alias="topP", description="Nucleus sampling."
	)
	stop: list[str] | None = Field(default=None, description="Stop sequences.")
	provider_options: dict[str, Any] = Field(
		default_factory=dict,
		alias="providerOptions",
		description=(
			"Passed through to the provider's request body as is; for an agent whose models are "
			"of several providers, keyed by provider: {'anthropic': {'top_k': 5}}."
		),
	)


def scoped_options(options: Mapping[str, Any], providers: Collection[str]) -> bool:
	"""Whether ``provider_options`` are keyed by provider: each key one of ``providers``, a dict.

	Args:
		options: The ``provider_options`` of a model configuration.
		providers: The names of the providers the agent's models (and its summaries') use.
	"""
	return bool(options) and all(
		key in providers and isinstance(value, Mapping) for key, value in options.items()
	)


def options_for(config: ModelConfig, provider: str, providers: Collection[str]) -> ModelConfig:
	"""The configuration one provider's requests carry: only its own ``provider_options``.

	Args:
		config: The agent's model configuration.
		provider: The provider the request goes to (the prefix of its model id).
		providers: The names of the providers the agent's models use.

	Returns:
		``config`` itself when its options are not keyed by provider; else a copy holding
		``provider``'s part (nothing when the options name no part for it).
	"""
	options = config.provider_options
	if not scoped_options(options, providers):
		return config
	own = options.get(provider)
	return config.model_copy(update={"provider_options": dict(own) if own else {}})


DEFAULT_MODEL_CONFIG = ModelConfig.model_construct()  # every field's default: nothing to validate
"""The configuration of agents created without ``model_config`` (frozen, shared)."""

DEFAULT_CONTEXT_WINDOW = 128_000
"""Tokens assumed for a model whose provider does not say (``context_window(model)``)."""


@dataclass(frozen=True, slots=True)
class CompactionConfig:
	"""How an agent compacts its history (``create_agent(compaction=...)``).

	Args:
		threshold_tokens: Compact before a call whose prompt would pass this many tokens (None:
			``share`` of the model's context window).
		share: The share of the context window used when ``threshold_tokens`` is None.
		keep_steps: The latest steps kept verbatim; every older one is summarised.
		summary_words: The most words the summary may take.
		model: The model that writes the summary: a ``"provider:model"`` id or a provider
			object; None for the agent's own model.
	"""

	threshold_tokens: int | None = None
	share: float = 0.6
	keep_steps: int = 4
	summary_words: int = 600
	model: Any = None

	def __post_init__(self) -> None:
		# ValueError: the errors module imports this one (create_agent names the option).
		for name in ("threshold_tokens", "keep_steps", "summary_words"):
			value = getattr(self, name)
			if name == "threshold_tokens" and value is None:
				continue
			if not isinstance(value, int) or isinstance(value, bool) or value < 1:
				raise ValueError(f"compaction: {name} must be a whole number >= 1, got {value!r}")
		share = self.share
		if not isinstance(share, int | float) or isinstance(share, bool) or not 0 < share <= 1:
			raise ValueError(
				f"compaction: share must be a fraction of the context window, above 0 and at "
				f"most 1 (0.6: compact at 60%), got {share!r}"
			)
		if (
			self.model is not None
			and not isinstance(self.model, str)
			and not hasattr(self.model, "generate")
		):
			raise ValueError(
				"compaction: model must be a 'provider:model' id or a provider object, got "
				f"{type(self.model).__name__}"
			)


DEFAULT_COMPACTION = CompactionConfig()
"""The configuration of ``compaction=True`` (the default), shared: it is frozen."""


@dataclass(slots=True)
class Attachment:
	"""A file sent to the model with the input: an image or a PDF, as base64.

	Args:
		media_type: The MIME type, e.g. ``image/png`` or ``application/pdf``.
		data: The content, base64-encoded.
		name: An optional file name.
	"""

	media_type: str
	data: str
	name: str | None = None


@dataclass(slots=True)
class Message:
	"""One turn of the conversation.

	Args:
		role: ``user`` for what the runtime tells the model, ``assistant`` for the model's replies.
		content: The text of the turn (JSON for everything the loop writes).
		attachments: Files sent with a user turn.
	"""

	role: Literal["user", "assistant"]
	content: str
	attachments: list[Attachment] = field(default_factory=list)


@dataclass(slots=True)
class ModelRequest:
	"""Everything a provider needs for one call (the prompt and first turns stay byte-identical).

	Args:
		model: The model name without the provider prefix (``gpt-5-mini``).
		system: The maestro (system) prompt.
		messages: The conversation so far, oldest first. This is the run's own list: read it during
			``generate`` but do not keep or modify it.
		response_schema: JSON Schema of the reply envelope, fitted to the provider's dialect.
		config: The agent's model configuration.
		cache_key: A stable key for the static prefix (agent identity), for providers that use one.
		response_mode: How the provider should use ``response_schema`` (`StructuredMode`); None
			when the provider declared no dialect.
		plain_system: Builds the step's system prompt for a provider that drops this request's
			structured output, to send instead of ``system`` (None: nothing to drop).
		model_id: Which of the agent's models the request is for (``provider:model``; None: the
			call's own). Providers do not read it.
	"""

	model: str
	system: str
	messages: list[Message]
	response_schema: dict[str, Any] | None = None
	config: ModelConfig = field(default_factory=ModelConfig)
	cache_key: str | None = None
	response_mode: StructuredMode | None = None
	plain_system: Callable[[], str] | None = None
	model_id: str | None = None


@dataclass(slots=True)
class Usage:
	"""Tokens used by one call or summed over a run.

	Args:
		input_tokens: Prompt tokens, cached ones included.
		output_tokens: Completion tokens, reasoning included.
		cached_tokens: Prompt tokens served from the provider's cache.
		reasoning_tokens: Output tokens spent on reasoning.
		cost_usd: Estimated cost in US dollars, when known (of the priced calls: `cost_partial`).
		calls: How many model calls this covers.
		unpriced_calls: How many of them had no price: their cost is in no ``cost_usd``.
	"""

	input_tokens: int = 0
	output_tokens: int = 0
	cached_tokens: int = 0
	reasoning_tokens: int = 0
	cost_usd: float | None = None
	calls: int = 0
	unpriced_calls: int = 0

	@property
	def cost_partial(self) -> bool:
		"""Whether ``cost_usd`` counts only some calls (a lower bound): others had no price."""
		return self.cost_usd is not None and self.unpriced_calls > 0

	@property
	def total_tokens(self) -> int:
		"""Input plus output tokens."""
		return self.input_tokens + self.output_tokens

	def add(self, other: Usage) -> None:
		"""Add another usage to this one in place."""
		self.input_tokens += other.input_tokens
		self.output_tokens += other.output_tokens
		self.cached_tokens += other.cached_tokens
		self.reasoning_tokens += other.reasoning_tokens
		calls = other.calls or 1
		self.calls += calls
		if other.cost_usd is not None:
			self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd
			self.unpriced_calls += other.unpriced_calls
		else:  # none of its calls was priced
			self.unpriced_calls += max(calls, other.unpriced_calls)

	def to_dict(self) -> dict[str, Any]:
		"""The usage as a JSON-serializable dict (``unpriced_calls`` only when not zero)."""
		out: dict[str, Any] = {
			"input_tokens": self.input_tokens,
			"output_tokens": self.output_tokens,
			"cached_tokens": self.cached_tokens,
			"reasoning_tokens": self.reasoning_tokens,
			"cost_usd": self.cost_usd,
			"calls": self.calls,
		}
		if self.unpriced_calls:
			out["unpriced_calls"] = self.unpriced_calls
		return out

	@classmethod
	def from_dict(cls, data: dict[str, Any]) -> Usage:
		"""Build a usage from `to_dict`'s output.

		Raises:
			ValueError: A count is no whole, non-negative number, or the cost no number.
		"""
		if not isinstance(data, Mapping):
			raise ValueError("a usage is a JSON object of counts")
		out = cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
		for name in (f for f in cls.__dataclass_fields__ if f != "cost_usd"):
			count = getattr(out, name)
			if not isinstance(count, int) or isinstance(count, bool) or count < 0:
				raise ValueError(f"a usage's {name} is no whole, non-negative number")
		cost = out.cost_usd
		if cost is not None and (not isinstance(cost, int | float) or isinstance(cost, bool)):
			raise ValueError("a usage's cost_usd is no number")
		return out


@dataclass(slots=True)
class ModelResponse:
	"""What a provider returns for one call.

	Args:
		text: The model's reply text (the JSON commands).
		usage: Tokens used by this call.
		raw: The provider's raw response, JSON-serializable, for the ``llmOutput`` event.
		finish_reason: Why the model stopped: ``stop`` or None (the reply is complete), or one
			under which none of it runs: ``max_tokens``, ``refusal``, ``safety``, ``tool_calls``,
			``incomplete`` (any other value too), or ``blocked`` (the provider refuses the
			conversation itself: the run ends with a `openmolt_core.errors.RunError`).
		model: Which of the agent's models answered (``provider:model``); the loop sets it.
		usage_by_model: ``usage`` split by model id, when calls of several models make it up
			(empty when it is all ``model``'s).
		prompt_tokens: The input tokens of the request that gave the reply, when ``usage`` adds
			up several requests (None: ``usage.input_tokens`` is it).
	"""

	text: str
	usage: Usage = field(default_factory=Usage)
	raw: Any = None
	finish_reason: str | None = None
	model: str | None = None
	usage_by_model: dict[str, Usage] = field(default_factory=dict)
	prompt_tokens: int | None = None

	def to_dict(self) -> dict[str, Any]:
		"""The response as JSON-serializable data (``raw`` as the provider gave it)."""
		out = {
			"text": self.text,
			"usage": self.usage.to_dict(),
			"raw": self.raw,
			"finish_reason": self.finish_reason,
			"model": self.model,
		}
		if self.usage_by_model:  # a journal of one model's reply stays as it was
			out["usage_by_model"] = {k: u.to_dict() for k, u in self.usage_by_model.items()}
		if self.prompt_tokens is not None:
			out["prompt_tokens"] = self.prompt_tokens
		return out

	@classmethod
	def from_dict(cls, data: dict[str, Any]) -> ModelResponse:
		"""Rebuild a response from `to_dict`'s output."""
		by_model = data.get("usage_by_model") or {}
		return cls(
			text=str(data["text"]),
			usage=Usage.from_dict(data.get("usage") or {}),
			raw=data.get("raw"),
			finish_reason=data.get("finish_reason"),
			model=data.get("model"),
			usage_by_model={k: Usage.from_dict(v) for k, v in by_model.items()},
			prompt_tokens=_count(data.get("prompt_tokens")),
		)


def _count(value: Any) -> int | None:
	"""A journaled token count (None: none, or not a count)."""
	return value if isinstance(value, int) and not isinstance(value, bool) else None


@runtime_checkable
class LLMProvider(Protocol):
	"""A language-model provider: one async call per agent step."""

	name: str
	"""The prefix users write in model ids (``openai`` in ``openai:gpt-5``).

	A provider with structured output may also define ``schema_dialect(model: str, config:
	ModelConfig | None = None) -> SchemaDialect | None`` (`openmolt_core.structured`).
	"""

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send one request to the model and return its reply.

		Args:
			request: The prompt, the conversation and the configuration.

		Returns:
			The reply text, usage and raw response.

		Raises:
			ProviderError: The provider refused or failed after retries.
		"""
		...
