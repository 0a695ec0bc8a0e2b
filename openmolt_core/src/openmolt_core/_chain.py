"""An agent's models: each one's provider and fitted reply schemas, and which answered a step.

A step asks the first model; around that call, a capability may send it to another (a run's
`openmolt_core.hooks.ModelAccess`: model fallback). The run's state records which model
answered each step and its usage (`record`). The fallback feature's old names here
(``ModelChain``...) are re-exported from it on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports
from openmolt_core._support.sync import parameter_count
from openmolt_core.errors import ProviderError
from openmolt_core.llm import DEFAULT_CONTEXT_WINDOW, Usage

if TYPE_CHECKING:
	from openmolt_core._support.schemafit import SchemaDialect
	from openmolt_core.envelope import Envelope, FittedSchema
	from openmolt_core.llm import LLMProvider, ModelConfig
	from openmolt_core.result import RunState

__all__ = [
	"AgentModels",
	"ModelSlot",
	"add_by_model",
	"blocked",
	"no_room",
	"record",
	"slot_id",
	"spend",
	"spend_failed",
	"split_id",
	"total",
	"unique_ids",
]

_FITTED = 32  # fitted schemas kept per model (one per loaded tool set seen)


@dataclass(slots=True)
class ModelSlot:
	"""One of an agent's models: its id, its provider, and the reply schemas fitted for it.

	Args:
		id: ``provider:model`` (``openai:gpt-5-mini``); for a provider object, its ``name`` and
			``model`` attributes.
		provider_name: The provider's prefix (empty for a provider object).
		model: The model name the provider is asked for.
		factory: Returns the provider (called once, on first use).
	"""

	id: str
	provider_name: str
	model: str
	factory: Callable[[], LLMProvider]
	_provider: LLMProvider | None = None
	_dialect: tuple[bool, SchemaDialect | None] | None = None
	_fitted: dict[tuple[str, ...], FittedSchema] | None = None  # made on first use
	_config: ModelConfig | None = None
	_asked: bool = False

	@property
	def ready(self) -> bool:
		"""Whether the provider was created already."""
		return self._provider is not None

	def provider(self) -> LLMProvider:
		"""The provider, created on first use."""
		if self._provider is None:
			self._provider = self.factory()
		return self._provider

	@property
	def declared(self) -> bool:
		"""Whether the provider declares a structured-output dialect."""
		return self._declared_dialect()[0]

	def begin(self, config: ModelConfig) -> None:
		"""Ask the provider for its dialect again at the next use (called at each run).

		A setting (``search`` on) or the server (an OpenAI-compatible one refusing
		``response_format``) may change the dialect; the fitted schemas are then dropped.

		Args:
			config: The agent's model configuration, which the provider may consider.
		"""
		self._config = config
		self._asked = False

	def _declared_dialect(self) -> tuple[bool, SchemaDialect | None]:
		if not self._asked or self._dialect is None:
			declare = getattr(self.provider(), "schema_dialect", None)
			answer = (
				(True, _ask(declare, self.model, self._config))
				if callable(declare)
				else (False, None)
			)
			if answer != self._dialect:
				self._dialect = answer
				self._fitted = None
			self._asked = True
		return self._dialect

	def fitted(
		self,
		key: tuple[str, ...],
		envelope: Envelope,
		fit: Callable[[Envelope, SchemaDialect | None], FittedSchema],
	) -> FittedSchema:
		"""The envelope fitted to this model's dialect (cached by the envelope's key).

		Args:
			key: The envelope's key (its tool set's).
			envelope: The envelope.
			fit: Fits it to a dialect, on a miss (the agent's: `openmolt_core.hooks.Capability.fit_reply`).
		"""
		dialect = self._declared_dialect()[1]  # first: a changed dialect drops the cache
		cache = self._fitted
		if cache is None:
			cache = self._fitted = {}
		fitted = cache.get(key)
		if fitted is None:
			if len(cache) >= _FITTED:
				cache.clear()
			fitted = cache[key] = fit(envelope, dialect)
		return fitted

	def forget(self) -> None:
		"""Drop the fitted schemas (the agent's tools changed)."""
		self._fitted = None

	def context_window(self) -> int | None:
		"""The model's context window in tokens, when its provider says (``context_window``)."""
		window = getattr(self.provider(), "context_window", None)
		size = window(self.model) if callable(window) else None
		return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def _ask(declare: Callable[..., Any], model: str, config: ModelConfig | None) -> Any:
	"""Ask a provider for its dialect, with the model config when it takes one (search on).

	Asked at every run: how many parameters ``declare`` has is read once per function
	(`openmolt_core._support.sync.parameter_count`).
	"""
	takes_config = config is not None and parameter_count(declare) >= 2
	return declare(model, config) if takes_config else declare(model)


def slot_id(provider_name: str, model: str, provider: Any = None) -> str:
	"""The id of a model: ``provider:model``, or for a provider object its name and model."""
	if provider_name:
		return f"{provider_name}:{model}"
	return f"{getattr(provider, 'name', 'custom')}:{model}"


_COPY = "#"
"""What `unique_ids` puts between an id and its copy's number (`split_id` removes it)."""


def unique_ids(ids: Sequence[str]) -> list[str]:
	"""The models' ids made unique: two provider objects of the same name get ``#1``, ``#2``."""
	if len(ids) < 2:
		return list(ids)
	return [
		f"{i}{_COPY}{ids[:n].count(i) + 1}" if ids.count(i) > 1 else i for n, i in enumerate(ids)
	]


def split_id(model_id: str) -> tuple[str, str]:
	"""A model id's provider prefix and the model its provider is asked for.

	Args:
		model_id: An id as an agent names its models (``openai:gpt-5-mini``, or
			``openai:gpt-5-mini#2`` for the second of two models of one id: `unique_ids`).

	Returns:
		``("openai", "gpt-5-mini")``: without the copy's number, which no provider knows.
	"""
	base, copy, number = model_id.rpartition(_COPY)
	if copy and number.isdigit():
		model_id = base
	provider, _, model = model_id.partition(":")
	return provider, model


class AgentModels:
	"""An agent's models, the one each step asks first at the head.

	Args:
		slots: The models, the first first (their ids are made unique: `unique_ids`).
	"""

	__slots__ = ("slots",)

	def __init__(self, slots: Sequence[ModelSlot]) -> None:
		self.slots: tuple[ModelSlot, ...] = tuple(slots)
		if len(self.slots) > 1:
			for slot, unique in zip(
				self.slots, unique_ids([s.id for s in self.slots]), strict=True
			):
				slot.id = unique

	@property
	def primary(self) -> ModelSlot:
		"""The first model."""
		return self.slots[0]

	def slot(self, model_id: str | None) -> ModelSlot:
		"""The model with this id (the primary for None or an id no longer in the chain)."""
		for slot in self.slots:
			if slot.id == model_id:
				return slot
		return self.slots[0]

	def context_window(self) -> int | None:
		"""The context window a step's prompt must fit: the smallest of the models it may reach.

		A step asks the first model, and model fallback sends it on to the next when that one
		fails, so the prompt must fit each. A model whose provider does not say counts as
		`openmolt_core.llm.DEFAULT_CONTEXT_WINDOW`, as it would alone. None when no model's
		provider says (the caller assumes the default).
		"""
		sizes = [slot.context_window() for slot in self.slots]
		if all(size is None for size in sizes):
			return None
		return min(DEFAULT_CONTEXT_WINDOW if size is None else size for size in sizes)

	def forget(self) -> None:
		"""Drop every model's fitted schemas (the agent's tools changed)."""
		for slot in self.slots:
			slot.forget()

	def begin(self, config: ModelConfig) -> None:
		"""Start a run: each model's dialect is asked again when it is next used."""
		for slot in self.slots:
			slot.begin(config)


def record(
	state: RunState, model_id: str, usage: Usage, by_model: Mapping[str, Usage] | None = None
) -> None:
	"""Record which model answered a step, and its usage (called once per answered step).

	Args:
		state: The run's state.
		model_id: The model that answered.
		usage: The step's usage.
		by_model: The same per model id, when calls of several models make it up
			(`openmolt_core.llm.ModelResponse.usage_by_model`); else all of it is ``model_id``'s.
	"""
	state.models.append(model_id)
	add_by_model(state.usage_by_model, by_model or {model_id: usage})


def total(usages: Iterable[Usage]) -> Usage:
	"""The sum of usages (the cost of those priced; None when none is)."""
	out = Usage()
	for usage in usages:
		out.add(usage)
	return out


def spend(state: RunState, usage: Usage, by_model: Mapping[str, Usage]) -> None:
	"""Add what a run spent besides its steps' model calls, to its usage and per model.

	The one way in for a sub-agent's run, a guardrail agent's and a compaction summary: the
	run's ``usage_by_model`` then adds up to its ``usage``, as its cost does.

	Args:
		state: The run's state.
		usage: The usage spent.
		by_model: The same, per model id (a nested run's ``usage_by_model``).
	"""
	state.usage.add(usage)
	add_by_model(state.usage_by_model, by_model)


def spend_failed(state: RunState, error: ProviderError, model_id: str) -> None:
	"""Count what a failed model call was billed for (`ProviderError.usage`), if anything.

	A reply the API sent and billed but the run cannot use (one that filled the context window)
	fails the call; its tokens count in the run's usage all the same, under the model that made
	each call (``error.usage_by_model``), else under ``model_id``.

	Args:
		state: The run's state.
		error: The failure.
		model_id: The model asked, when the error does not name its models.
	"""
	if error.usage is not None:
		spend(state, error.usage, error.usage_by_model or {model_id: error.usage})


def add_by_model(into: dict[str, Usage], by_model: Mapping[str, Usage]) -> None:
	"""Add usage per model id to a mapping of it (a calling run's, a sub-run's)."""
	for model_id, usage in by_model.items():
		_per_model(into, model_id).add(usage)


def _per_model(into: dict[str, Usage], model_id: str) -> Usage:
	found = into.get(model_id)
	if found is None:
		found = into[model_id] = Usage()
	return found


# The fallback feature's names, and the sub-agents' spend's, under their old home here (loaded
# on first use).
_SPEND = "openmolt_core.capabilities.spend"
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(),
	{
		"ChainProvider": "openmolt_core.capabilities.fallback",
		"FallbackReason": "openmolt_core.capabilities.fallback",
		"ModelChain": "openmolt_core.capabilities.fallback",
		"fallback_reason": "openmolt_core.capabilities.fallback",
		"model_list": "openmolt_core.fallback",
		"ModelFallbackEvent": "openmolt_core.capabilities.fallback",
		"add_spent": _SPEND,
		"passed_up": _SPEND,
		"read_spent": _SPEND,
		"spend_cut_off": _SPEND,
		"spent_entry": _SPEND,
		"summed": _SPEND,
	},
)


def blocked(slot: ModelSlot) -> ProviderError:
	"""The error of a reply whose provider blocked the conversation (finish reason ``blocked``).

	The model is not told "you refused": it did not, and the same request would be blocked
	again (Anthropic documents continued refusals until the conversation is reset).
	"""
	return ProviderError(
		"the provider blocked this conversation (finish reason 'blocked': its safety system "
		"refuses the prompt as it stands), so nothing of the reply was run and asking again "
		"would be blocked too; change the task, an attachment or the data a tool returned (the "
		"latest results are the usual cause), or use another model; the llmOutput event's raw "
		"reply says why, and the run's state is kept",
		provider=slot.provider_name or "custom",
		model=slot.model,
	)


def no_room(slot: ModelSlot) -> ProviderError:
	"""The error of a reply cut at the output limit before it wrote anything (reasoning took it).

	Telling the model "send fewer commands" would change nothing: it wrote none. The limit is
	the application's to raise.
	"""
	return ProviderError(
		"the model ran out of room before writing any answer (finish reason 'max_tokens', no "
		"text: its reasoning took every output token, or the conversation filled its context "
		"window), so nothing was run and asking again would end the same; raise model_config "
		"max_output_tokens (maxOutputTokens in an agent file) or lower its thinking effort, or, "
		"when the context window is full, compact earlier (a lower compaction threshold_tokens) "
		"or use a model with a larger window; the run's state is kept",
		provider=slot.provider_name or "custom",
		model=slot.model,
	)
