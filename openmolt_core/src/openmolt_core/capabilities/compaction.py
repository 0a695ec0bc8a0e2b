"""Compaction as a capability: older steps summarised before a step's model call (``before_model``).

``create_agent(compaction=...)`` builds it (on by default; `openmolt_core.compaction` holds the
settings and the summariser). Before each step it estimates the request's size; past the threshold
(a share of the primary model's context window, or a fixed number of tokens) it replaces the older
steps with a summary written by the compactor model, or by the agent's own models falling back as
a step does. The summary call is a journaled step of its own (``compact:<step>``), so a replay
reads it instead of asking again, and the ``compaction`` event follows it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core.hooks import Capability

if TYPE_CHECKING:
	from openmolt_core._execute import RunContext
	from openmolt_core.compaction import CompactionConfig
	from openmolt_core.hooks import Run
	from openmolt_core.llm import LLMProvider, ModelResponse

__all__ = ["Compaction"]

log: logging.Logger = logging.getLogger("openmolt")


class Compaction(Capability):
	"""Summarise older steps when a run's context grows past the threshold.

	Args:
		config: The settings (`openmolt_core.compaction.CompactionConfig`).
		compactor: Returns the provider and model name that write summaries; None: the agent's
			own models.
	"""

	__slots__ = ("compactor", "config")

	name = "compaction"
	in_fingerprint: ClassVar[bool] = False  # it journals its own steps; the agent's are unchanged

	def __init__(
		self,
		config: CompactionConfig,
		compactor: Callable[[], tuple[LLMProvider, str]] | None = None,
	) -> None:
		self.config = config
		self.compactor = compactor

	async def before_model(self, run: Run) -> None:
		"""Compact the state's older steps if the coming request would be too large."""
		from openmolt_core import _cost
		from openmolt_core.compaction import DEFAULT_CONTEXT_WINDOW, compact, needs_compaction
		from openmolt_core.events import CompactionEvent
		from openmolt_core.llm import ModelResponse

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		models = ctx.models
		if models is None:  # pragma: no cover - the loop always gives it
			return
		config = self.config
		threshold = config.threshold_tokens
		if threshold is None:
			size = models.context_window()
			threshold = int((size or DEFAULT_CONTEXT_WINDOW) * config.share)
		state = ctx.state
		system = models.system()
		if not needs_compaction(state, threshold, system):
			return
		if self.compactor is not None:
			provider, model = self.compactor()
		else:  # the agent's own models, falling back as a step does
			provider, model = models.own(ctx)

		async def journal(key: str, fn: Any) -> ModelResponse:
			response: ModelResponse = await ctx.port.step(
				key, fn, encode=ModelResponse.to_dict, decode=ModelResponse.from_dict
			)
			# A summary the provider did not price costs its model's price (the run's cost).
			if self.compactor is not None:
				_cost.price_call(provider, model, response.usage)
			else:  # the agent's own models: the one that answered, else the primary
				models.price(response)
			return response

		record = await compact(
			state,
			config=config,
			threshold=threshold,
			step=state.steps + 1,
			provider=provider,
			model=model,
			model_config=models.config,
			journal=journal,
			system=system,
			keep=ctx.toolset.kept(state) if ctx.toolset is not None else None,
		)
		if record is None:
			return
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
