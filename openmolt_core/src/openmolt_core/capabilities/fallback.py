"""Model fallback as a capability: a step the first model fails goes to the agent's next model.

``create_agent(model=[...])`` (or ``fallback_models=[...]``) builds `ModelFallback` for an agent
of more than one model; `openmolt_core.fallback` documents the feature and re-exports these names.
Around each call of the agent's models (`Capability.wrap_model`: a step's, or a summary's through
``run.models.own``) it sends the call to its model; a failure the provider's retry policy gave up
on (`fallback_reason`) goes, with the same messages, to the next model, in the request the loop
builds for it (``run.models.request``: its prompt and the reply schema fitted to its dialect).
Each move is logged and emits ``model:fallback``, numbered from the call's reserved numbers
(`Capability.model_call_events`), so a replay, which reads the step from the journal, numbers
the run's later events the same; the journal records which model answered.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from openmolt_core._chain import AgentModels, ModelSlot, add_by_model, total
from openmolt_core.errors import ConfigurationError, ProviderError, UnreadableAttachment
from openmolt_core.events import Event
from openmolt_core.hooks import Capability
from openmolt_core.llm import ModelResponse, Usage

if TYPE_CHECKING:
	from openmolt_core.hooks import Run
	from openmolt_core.llm import ModelRequest

__all__ = [
	"ChainProvider",
	"FallbackReason",
	"ModelChain",
	"ModelFallback",
	"ModelFallbackEvent",
	"fallback_reason",
	"first_answer",
]

log: logging.Logger = logging.getLogger("openmolt")

FallbackReason = Literal[
	"server_error", "rate_limited", "overloaded", "timeout", "unreachable", "blocked", "unreadable"
]
"""Why a step moved to the next model (`openmolt_core.fallback` has the table)."""


def fallback_reason(exc: BaseException) -> FallbackReason | None:
	"""Why a failed model call should go to the next model, or None when it should not.

	Args:
		exc: What the provider raised.

	Returns:
		The reason for a failure the retry policy gave up on (a `ProviderError` marked
		``retryable``, or a `TimeoutError`), or for a file the model cannot read (an
		`UnreadableAttachment`: another model may read it); None for authentication and
		validation errors and anything else.
	"""
	if isinstance(exc, TimeoutError):
		return "timeout"
	if isinstance(exc, UnreadableAttachment):
		return "unreadable"
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


async def first_answer(
	models: Sequence[str],
	ask: Callable[[int], Awaitable[ModelResponse]],
	on_fallback: Callable[[int, FallbackReason, BaseException], Any],
	price: Callable[[ModelResponse], None] | None = None,
) -> tuple[int, ModelResponse]:
	"""Ask each model in turn until one answers, or a failure must not fall back.

	A reply whose provider blocked the conversation (finish reason ``blocked``: asked again, that
	model would block it again) goes to the next model too, reason ``blocked``. Its tokens were
	billed, as were those of a failed call whose error carries them (`ProviderError.usage`): the
	response returned, or the error raised, carries them too, each under the model that made
	the call (``usage_by_model``; a blocked reply priced first, with ``price``, at its own
	model's price).

	Args:
		models: The models' ids, in the order they are tried.
		ask: Asks the model at a position.
		on_fallback: Called (awaited if it returns an awaitable) with the position of the model
			that failed, the reason and the error, before the next model is asked.
		price: Prices a response its provider did not price (`openmolt_core.hooks.ModelAccess`).

	Returns:
		The position of the model that answered, and its response.

	Raises:
		ProviderError: Every model failed (the message names each failure: a model after the
			first that lacks its key or a setting is one), or one failed in a way that does not
			fall back.
	"""
	failures: list[str] = []
	spent: dict[str, Usage] = {}  # what the calls moved past were billed, by model id
	for position, model in enumerate(models):
		try:
			response = await ask(position)
			if response.finish_reason == "blocked" and position < len(models) - 1:
				if price is not None and response.usage.cost_usd is None:
					price(response)
				add_by_model(spent, {model: response.usage})
				why = ProviderError(
					f"{model} blocked the conversation (its safety system refuses the prompt)",
					provider=model.partition(":")[0],
					model=model.partition(":")[2],
				)
				failures.append(str(why))
				moved = on_fallback(position, "blocked", why)
				if hasattr(moved, "__await__"):
					await moved
				continue
			return position, _with_spent(response, model, spent, price)
		except Exception as exc:
			reason = fallback_reason(exc)
			said = str(exc) if isinstance(exc, ProviderError) else f"{model}: {exc!r}"
			billed = _billed(exc, model)
			if reason is None or position == len(models) - 1:
				add_by_model(spent, billed)
				usage = total(spent.values()) if spent else None
				if failures and isinstance(exc, ProviderError):
					failures.append(said)
					raise ProviderError(
						"every model failed: " + "; ".join(failures),
						provider=exc.provider,
						model=exc.model,
						status_code=exc.status_code,
						retryable=exc.retryable,
						context_exceeded=exc.context_exceeded,
						usage=usage,
						usage_by_model=spent,
					) from exc
				# The last one timed out, or lacks its key or a setting (the run started: the
				# first model was asked, so the run fails with its state): name each too.
				if failures and (reason is not None or isinstance(exc, ConfigurationError)):
					failures.append(said)
					provider, _, name = model.partition(":")
					raise ProviderError(
						"every model failed: " + "; ".join(failures),
						provider=provider,
						model=name,
						retryable=reason is not None,
						usage=usage,
						usage_by_model=spent,
					) from exc
				raise
			add_by_model(spent, billed)
			failures.append(said)
			result = on_fallback(position, reason, exc)
			if hasattr(result, "__await__"):
				await result
	raise AssertionError("unreachable: the last model returns or raises")  # pragma: no cover


def _billed(exc: BaseException, model: str) -> dict[str, Usage]:
	"""What a failed call was billed for (`ProviderError.usage`) by model id, ``model``'s if none."""
	if not isinstance(exc, ProviderError) or exc.usage is None:
		return {}
	return dict(exc.usage_by_model) or {model: exc.usage}


def _with_spent(
	response: ModelResponse,
	model: str,
	spent: Mapping[str, Usage],
	price: Callable[[ModelResponse], None] | None,
) -> ModelResponse:
	"""``response`` (``model``'s) with what the calls before it were billed for added.

	Its usage becomes the sum, and ``usage_by_model`` says each model's part, so the run
	counts each under the model that made the call.
	"""
	if not spent:
		return response
	if price is not None and response.usage.cost_usd is None:
		price(response)
	by_model: dict[str, Usage] = {}
	add_by_model(by_model, spent)
	add_by_model(by_model, {model: response.usage})
	response.usage_by_model = by_model
	response.usage = total(by_model.values())
	return response


@dataclass(slots=True, kw_only=True)
class ModelFallbackEvent(Event):
	"""A model failed in a way its retries gave up on; the step goes to the next model.

	``reason`` is one of `FallbackReason` (``server_error``, ``rate_limited``, ``overloaded``,
	``timeout``, ``unreachable``, ``blocked``, ``unreadable``); ``error`` the failure's message (secrets scrubbed) and
	``status_code`` its HTTP status, when there was one. The fallback capability
	(`ModelFallback`) emits it when a handler listens to it.
	"""

	from_model: str
	to_model: str
	reason: str
	error: str
	status_code: int | None = None
	name: str = "model:fallback"


class ModelFallback(Capability):
	"""Send a call of the agent's models that fails for good to its next model.

	Args:
		models: The agent's model ids in order (``agent.models``), the first the one each step
			asks.
	"""

	__slots__ = ("model_call_events", "model_calls", "models")

	name: ClassVar[str] = "model-fallback"
	in_fingerprint: ClassVar[bool] = False  # its fingerprint entry names the models

	def __init__(self, models: Sequence[str]) -> None:
		self.models: tuple[str, ...] = tuple(models)
		self.model_call_events = max(len(self.models) - 1, 0)  # one model:fallback per move
		self.model_calls = max(len(self.models), 1)  # the hooks inside run once per model tried

	def fingerprint(self) -> dict[str, Any]:
		"""The models a failed step may go to: a journaled run is recovered only with the same."""
		return {"fallback": list(self.models[1:])}

	async def wrap_model(
		self,
		run: Run,
		request: ModelRequest,
		call: Callable[[ModelRequest], Awaitable[ModelResponse]],
	) -> ModelResponse:
		"""The call's model, then each next one while the failure is one to fall back on."""
		access = run.models
		if access is None or request.model_id not in self.models:  # a compactor's model
			return await call(request)
		tried = self.models[self.models.index(request.model_id) :]

		def ask(position: int) -> Awaitable[ModelResponse]:
			return call(request if position == 0 else access.request(tried[position]))

		def moved(position: int, reason: FallbackReason, exc: BaseException) -> Awaitable[None]:
			return _fell_back(run, tried[position], tried[position + 1], reason, exc)

		return (await first_answer(tried, ask, moved, access.price))[1]


async def _fell_back(
	run: Run, failed: str, next_model: str, reason: FallbackReason, exc: BaseException
) -> None:
	"""Log the move and emit ``model:fallback`` (or count its number when nobody listens)."""
	message = run.redact(str(exc))
	log.warning(
		"%s step %d: %s failed (%s), trying %s: %s",
		run.agent,
		run.step,
		failed,
		reason,
		next_model,
		message,
	)
	if not run.wants("model:fallback"):
		run.skip_event()
		return
	await run.emit(
		ModelFallbackEvent(
			agent=run.agent,
			step=run.step,
			from_model=failed,
			to_model=next_model,
			reason=reason,
			error=message,
			status_code=getattr(exc, "status_code", None),
		)
	)


class ModelChain(AgentModels):
	"""An agent's models in fallback order, asked in turn outside a run (`generate`).

	Args:
		slots: The models, the primary first.
	"""

	__slots__ = ()

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
			send: Sends one model's request instead of its provider's ``generate``.

		Returns:
			The model that answered, its request and its response.

		Raises:
			ProviderError: Every model failed (the message names each failure), or one failed in a
				way that does not fall back.
			ConfigurationError: A model's key or settings are missing.
		"""
		slots = self.slots
		sent: list[ModelRequest] = []

		async def ask(position: int) -> ModelResponse:
			slot = slots[position]
			built = request(slot)
			sent.append(built)
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
			return response

		def moved(position: int, reason: FallbackReason, exc: BaseException) -> Any:
			return on_fallback(slots[position], slots[position + 1], reason, exc)

		position, response = await first_answer([s.id for s in slots], ask, moved)
		return slots[position], sent[-1], response


class ChainProvider:
	"""An agent's model chain as one provider, for calls outside a run.

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
