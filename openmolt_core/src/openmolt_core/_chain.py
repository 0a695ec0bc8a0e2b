"""An agent's models: the chain each model call goes through, and what each answered.

Every agent has a chain, of one model or more (``create_agent(model=[...])``). A step asks the
first model; a failure its provider's retry policy gave up on goes, with the same messages, to the
next (`fallback_reason`). Each model gets its own request (its prompt, and the reply schema fitted
to its dialect), and the run's state records which model answered each step and its usage
(`record`). The feature, its options and its event are documented in `openmolt_core.fallback`,
which re-exports these names and reads the option (`openmolt_core.fallback.model_list`, re-exported
here on first use); the chain itself is the kernel's, as every model call uses it.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from openmolt_core._support import lazy_exports
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse, Usage
from openmolt_core.structured import fit

if TYPE_CHECKING:
	from openmolt_core.envelope import Envelope
	from openmolt_core.llm import LLMProvider, ModelConfig, ModelRequest
	from openmolt_core.result import RunState
	from openmolt_core.structured import FittedSchema, SchemaDialect

__all__ = [
	"ChainProvider",
	"FallbackReason",
	"ModelChain",
	"ModelSlot",
	"fallback_reason",
	"record",
	"slot_id",
]

FallbackReason = Literal["server_error", "rate_limited", "overloaded", "timeout", "unreachable"]
"""Why a step moved to the next model (`openmolt_core.fallback` has the table)."""

_FITTED = 32  # fitted schemas kept per model (one per loaded tool set seen)


def fallback_reason(exc: BaseException) -> FallbackReason | None:
	"""Why a failed model call should go to the next model, or None when it should not.

	Args:
		exc: What the provider raised.

	Returns:
		The reason for a failure the retry policy gave up on (a `ProviderError` marked
		``retryable``, or a `TimeoutError`); None for authentication and validation errors and
		anything else.
	"""
	if isinstance(exc, TimeoutError):
		return "timeout"
	if not isinstance(exc, ProviderError) or not exc.retryable:
		return None
	status = exc.status_code
	if status == 429:
		return "rate_limited"
	if status in (503, 529):
		return "overloaded"
	if status == 408:
		return "timeout"
	if status is None:
		cause = exc.__cause__
		timed_out = cause is not None and "timeout" in type(cause).__name__.lower()
		return "timeout" if timed_out else "unreachable"
	return "server_error"


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

	def fitted(self, key: tuple[str, ...], envelope: Envelope) -> FittedSchema:
		"""The envelope fitted to this model's dialect (cached by the envelope's key)."""
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


def _ask(declare: Callable[..., Any], model: str, config: ModelConfig | None) -> Any:
	"""Ask a provider for its dialect, with the model config when it takes one (search on)."""
	return (
		declare(model, config) if config is not None and _takes_config(declare) else declare(model)
	)


_TAKES: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], bool]] = weakref.WeakKeyDictionary()
"""A provider's ``schema_dialect`` function -> (what its signature is read from, the answer)."""


def _takes_config(declare: Callable[..., Any]) -> bool:
	"""Whether ``declare`` takes two arguments (the model and its config).

	Asked at every run: `inspect.signature` costs 10 to 15 µs, so the answer for a provider's
	method is kept per function, as long as what its signature is read from is the same (its
	code, and the ``__signature__`` and ``__wrapped__`` that `inspect.signature` would follow).
	"""
	plain = getattr(declare, "__func__", None)  # a bound method: its function
	key: tuple[Any, ...] | None = None
	if type(plain) is types.FunctionType:
		key = (
			plain.__code__,
			getattr(plain, "__signature__", None),
			getattr(plain, "__wrapped__", None),
		)
		known = _TAKES.get(plain)
		if known is not None and known[0] == key:  # the same code (and signature) as before
			return known[1]
	import inspect

	try:
		takes = len(inspect.signature(declare).parameters) >= 2
	except (TypeError, ValueError):  # a builtin: call it with the model only
		takes = False
	if key is not None:
		_TAKES[plain] = (key, takes)
	return takes


def slot_id(provider_name: str, model: str, provider: Any = None) -> str:
	"""The id of a model: ``provider:model``, or for a provider object its name and model."""
	if provider_name:
		return f"{provider_name}:{model}"
	return f"{getattr(provider, 'name', 'custom')}:{model}"


class ModelChain:
	"""An agent's models in fallback order.

	Args:
		slots: The models, the primary first.
	"""

	__slots__ = ("slots",)

	def __init__(self, slots: Sequence[ModelSlot]) -> None:
		self.slots: tuple[ModelSlot, ...] = tuple(slots)
		if len(self.slots) > 1:
			ids = [s.id for s in self.slots]
			for i, slot in enumerate(self.slots):
				if ids.count(slot.id) > 1:  # two provider objects of the same name
					slot.id = f"{slot.id}#{ids[:i].count(slot.id) + 1}"

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

	def forget(self) -> None:
		"""Drop every model's fitted schemas (the agent's tools changed)."""
		for slot in self.slots:
			slot.forget()

	def begin(self, config: ModelConfig) -> None:
		"""Start a run: each model's dialect is asked again when it is next used."""
		for slot in self.slots:
			slot.begin(config)

	async def generate(
		self,
		request: Callable[[ModelSlot], ModelRequest],
		on_fallback: Callable[[ModelSlot, ModelSlot, FallbackReason, BaseException], Any],
		send: Callable[[ModelSlot, ModelRequest], Awaitable[ModelResponse]] | None = None,
	) -> tuple[ModelSlot, ModelRequest, ModelResponse]:
		"""Ask each model in turn until one answers, or a failure must not fall back.

		Args:
			request: Builds the request for one model (its prompt and fitted schema).
			on_fallback: Awaited with (failed model, next model, reason, error) before the next
				model is tried.
			send: Sends one model's request instead of its provider's ``generate``: the
				capabilities' ``wrap_model`` around the provider or a capability's sender
				(`openmolt_core.hooks.Capability.send_model`: streaming's). None: ``generate``.

		Returns:
			The model that answered, its request and its response.

		Raises:
			ProviderError: Every model failed (the message names each failure), or one failed in a
				way that does not fall back.
			ConfigurationError: A model's key or settings are missing.
		"""
		failures: list[str] = []
		for position, slot in enumerate(self.slots):
			built = request(slot)
			try:
				if send is None:
					response = await slot.provider().generate(built)
				else:
					response = await send(slot, built)
				if not isinstance(response, ModelResponse) or not isinstance(response.text, str):
					raise ProviderError(
						f"the provider returned {type(response).__name__} without reply text",
						provider=slot.provider_name or "custom",
						model=slot.model,
					)
				return slot, built, response
			except Exception as exc:
				reason = fallback_reason(exc)
				last = position == len(self.slots) - 1
				if reason is None or last:
					if failures and isinstance(exc, ProviderError):
						failures.append(str(exc))
						raise ProviderError(
							"every model failed: " + "; ".join(failures),
							provider=exc.provider,
							model=exc.model,
							status_code=exc.status_code,
							retryable=exc.retryable,
							context_exceeded=exc.context_exceeded,
						) from exc
					raise
				failures.append(
					str(exc) if isinstance(exc, ProviderError) else f"{slot.id}: {exc!r}"
				)
				result = on_fallback(slot, self.slots[position + 1], reason, exc)
				if hasattr(result, "__await__"):
					await result
		raise AssertionError("unreachable: the last model returns or raises")  # pragma: no cover


class ChainProvider:
	"""An agent's model chain as one provider, for calls outside a step (compaction summaries).

	Each call goes to the first model, falling back as a step does; the request's ``model`` is
	replaced by each model's own.

	Args:
		chain: The models.
		on_fallback: As for `ModelChain.generate`.
	"""

	def __init__(
		self,
		chain: ModelChain,
		on_fallback: Callable[[ModelSlot, ModelSlot, FallbackReason, BaseException], Any],
	) -> None:
		self.name = chain.primary.provider_name or "custom"
		self._chain = chain
		self._on_fallback = on_fallback

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send the request to the first model that answers."""
		from dataclasses import replace

		_, _, response = await self._chain.generate(
			lambda slot: replace(request, model=slot.model), self._on_fallback
		)
		return response


def record(state: RunState, model_id: str, usage: Usage) -> None:
	"""Record which model answered a step, and its usage (called once per answered step)."""
	state.models.append(model_id)
	per_model = state.usage_by_model.get(model_id)
	if per_model is None:
		per_model = state.usage_by_model[model_id] = Usage()
	per_model.add(usage)


# The option reader of the fallback feature, under its old name here (loaded on first use).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(),
	{
		"model_list": "openmolt_core.fallback",
		"ModelFallbackEvent": "openmolt_core.fallback",  # built only when a handler listens
	},
)
