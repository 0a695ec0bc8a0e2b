"""Compaction as a capability: older steps summarised before a step's model call (``before_model``).

``create_agent(compaction=...)`` builds it (on by default; `openmolt_core.compaction` holds the
settings and the summariser). Before each step it estimates the request's size; past the threshold
(a share of the context window, the smallest of the models a step may fall back to, or a fixed
number of tokens) it replaces the older steps with a summary written by the compactor model, or by
the agent's own models (falling back as a step does, through the fallback capability). The summary call is a journaled step of its own
(``compact:<step>``), so a replay reads it instead of asking again, and the ``compaction`` event
follows it; it goes through the run's ``wrap_model`` hooks like a step's call.

`Compaction`, which every agent has by default, is defined in `openmolt_core.capabilities` with
its check; this module, loaded when a run compacts, writes the summary (`compact_run`).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from openmolt_core import _cost
from openmolt_core._chain import slot_id, spend_failed
from openmolt_core.capabilities import Compaction, summary_provider  # every agent has them
from openmolt_core.compaction import CompactionEvent, compact
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse

if TYPE_CHECKING:
	from openmolt_core._execute import RunContext
	from openmolt_core._toolset import ToolSet
	from openmolt_core.llm import LLMProvider, ModelRequest
	from openmolt_core.result import RunState

__all__ = ["Compaction", "compact_run"]

log: logging.Logger = logging.getLogger("openmolt")


def _loaded(toolset: ToolSet, state: RunState) -> dict[str, Any]:
	"""What a summary must keep of a run's tools: the descriptions of those it loaded.

	The results that carried them (``loadTools``'s) may be summarised away; the tools stay
	callable, so the model must still read their inputs: every tool callable now that the first
	turn did not list.
	"""
	first = set(toolset.callable())
	loaded = [h for h in toolset.callable(state) if h not in first]
	if not loaded:
		return {}
	return {"loadedTools": [toolset.tools[h].describe() for h in loaded]}


async def compact_run(
	cap: Compaction, ctx: RunContext, threshold: int, system: str, *, again: bool = False
) -> bool:
	"""Replace the older steps of a run whose coming request passes the threshold with a summary.

	Args:
		cap: The agent's compaction capability (its settings and compactor).
		ctx: The run, before its step's model call.
		threshold: The threshold in effect (tokens).
		system: The agent's system prompt for this step.
		again: The model refused the step's request as longer than its context window: the
			summary is written whatever the estimate says (`Compaction.context_exceeded`).

	Returns:
		Whether older steps were summarised (False: too few to summarise).
	"""
	models = ctx.models
	assert models is not None  # the check that called this read them
	state = ctx.state
	if cap.compactor is not None:
		provider, model = cap.compactor()
	else:  # the agent's own models, through the run's hooks as a step's call
		provider, model = models.own(ctx)

	async def journal(key: str, fn: Any) -> ModelResponse:
		try:
			response: ModelResponse = await ctx.port.step(
				key, fn, encode=ModelResponse.to_dict, decode=ModelResponse.from_dict
			)
		except ProviderError as exc:  # a summary billed but not usable counts all the same
			if cap.compactor is not None and exc.usage is not None:
				_cost.price_call(provider, model, exc.usage)
			spend_failed(state, exc, slot_id("", model, provider))
			raise
		# The summary is a model's text going into the history: masked like a reply.
		response = replace(response, text=ctx.redact(response.text))
		# A summary the provider did not price costs its model's price (the run's cost).
		if cap.compactor is not None:
			_cost.price_call(provider, model, response.usage)
			response = replace(response, model=slot_id("", model, provider))  # its usage's key
		else:  # the agent's own models: the one that answered, else the primary
			models.price(response)
		return response

	record = await compact(
		state,
		config=cap.config,
		threshold=threshold,
		step=state.steps + 1,
		# The agent's own models' calls go through the hooks already (`ModelAccess.own`).
		provider=_Wrapped(provider, ctx)
		if ctx.hooks.wrap_model and cap.compactor is not None
		else provider,
		model=model,
		# A summary model of another provider gets its own part of provider_options.
		model_config=models.config
		if cap.compactor is None
		else models.config_for(summary_provider(cap.config.model, provider) or "custom"),
		journal=journal,
		system=system,
		keep=_loaded(ctx.toolset, state) if ctx.toolset is not None else None,
		again=again,
	)
	if record is None:
		return False
	log.info("%s: steps 1-%d compacted", ctx.agent, record.through_step)
	if ctx.wants("compaction"):
		await ctx.emit(
			CompactionEvent(
				agent=ctx.agent,
				step=record.step,
				through_step=record.through_step,
				tokens_before=record.tokens_before,
				tokens_after=record.tokens_after,
				files=list(record.files),
			)
		)
	else:
		ctx.skip_event()
	return True


class _Wrapped:
	"""A provider whose calls go through the run's ``wrap_model`` hooks, as a step's call does.

	The summary sends the older history to a model: a capability that wraps each model call
	(scrubbing what is sent, auditing, tracing) must see it too.

	Args:
		provider: The provider that writes the summary.
		ctx: The run.
	"""

	__slots__ = ("_send", "name")

	def __init__(self, provider: LLMProvider, ctx: RunContext) -> None:
		self.name: str = provider.name
		self._send = ctx.hooks.wrap(ctx, provider.generate)

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send the request through the hooks to the provider."""
		return await self._send(request)
