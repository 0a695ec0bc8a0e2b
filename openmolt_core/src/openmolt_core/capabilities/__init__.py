"""The features that attach to runs as capabilities (`openmolt_core.hooks.Capability`).

Each module holds one feature and what builds it from ``create_agent``'s keyword options; the
loop never imports them. See docs/guides/capabilities.md and Architecture.md.

Here are the capabilities every agent of ``create_agent`` has, whole when they are light (the
instance's run observers, `Observers`; the approvals gate, `ApprovalGate`), or in their part
that runs at every step (`Compaction`: whether the request is near the threshold), so a plain
run loads no feature module: each loads its feature (`openmolt_core.observe`,
`openmolt_core._approve`, `openmolt_core.capabilities.compaction`) when a run uses it. Their
features' modules re-export them (same objects).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core._cost import needs_compaction
from openmolt_core.hooks import Capability
from openmolt_core.llm import DEFAULT_CONTEXT_WINDOW

if TYPE_CHECKING:
	from openmolt_core._execute import RunContext
	from openmolt_core.agent import Agent
	from openmolt_core.commands import CallTool
	from openmolt_core.decisions import ApprovalDecision, ApprovalRequest
	from openmolt_core.hooks import Gated, Run, ToolSpec
	from openmolt_core.llm import CompactionConfig, LLMProvider
	from openmolt_core.observe import RunObserver
	from openmolt_core.result import RunResult

__all__ = ["ApprovalGate", "Compaction", "Observers"]


class Observers(Capability):
	"""Tell the instance's observers about each drive of the agent's runs.

	Args:
		observers: Returns the instance's observers (read at each drive: they may be added
			after the agent was created).
	"""

	__slots__ = ("observers",)

	name = "run-observers"
	in_fingerprint: ClassVar[bool] = False  # observing changes nothing a run journals

	def __init__(self, observers: Callable[[], Sequence[RunObserver]]) -> None:
		self.observers = observers

	async def wrap_run(self, run: Run, drive: Callable[[], Awaitable[RunResult]]) -> RunResult:
		"""Run the drive watched by the observers (`openmolt_core.observe`), if there are any."""
		observers = self.observers()
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		agent: Agent | None = ctx.owner
		if not observers or agent is None:
			return await drive()
		from openmolt_core.observe import watch_run

		link = ctx.link
		watch = watch_run(
			agent,
			ctx.state,
			observers,
			redact=ctx.redact,
			parent=link.run_id if link is not None else None,
		)
		return await watch.drive(ctx, drive)


class ApprovalGate(Capability):
	"""The approvals gate: asks, uses delivered decisions, or parks (`openmolt_core._approve`)."""

	__slots__ = ()

	name = "approval-gate"
	in_fingerprint: ClassVar[bool] = False  # its steps are the journal's ``approval:`` keys
	parks: ClassVar[str] = "approval"  # `openmolt_core._approve.KIND`

	async def gate_tool(
		self, run: Run, step: Any, index: int, call: CallTool, tool: ToolSpec, rule: str | None
	) -> Gated:
		"""Decide whether a call that waits for approval runs (see `Capability.gate_tool`).

		Args:
			run: The run.
			step: The step's record (a parked call is added to its ``pending``).
			index: The call's index in the reply.
			call: The call, as the capabilities let it through.
			tool: Its tool's record.
			rule: The rule a capability makes the call wait under, or None.
		"""
		from openmolt_core import _approve  # here: a run that gates nothing never loads it

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return await _approve.gate(ctx, step, index, call, tool, rule)  # type: ignore[arg-type]

	def receive(
		self, run: Run, parked: Mapping[str, Any], given: Any, answer: str | None
	) -> list[ApprovalDecision]:
		"""Read ``agent.resume(state, decision=...)``: the decisions, their signatures checked.

		Args:
			run: The parked run.
			parked: ``state.pending``.
			given: One decision or several, objects or their dicts, or None.
			answer: Refused: the run waits for decisions.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return _approve.receive(ctx, given, answer)

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		"""Check each decision against the call it decides; the gate uses them as the step goes on.

		Args:
			run: The resumed run.
			parked: ``state.pending``: the parked step.
			given: The decisions `receive` read.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		await _approve.resume(ctx, parked, given)

	def requests(self, run: Run, parked: Mapping[str, Any]) -> list[ApprovalRequest]:
		"""The calls that wait for a decision, as requests signed by the instance's signer.

		Args:
			run: The parked run.
			parked: ``state.pending``: the parked step.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return _approve.pending_requests(ctx, parked)


class Compaction(Capability):
	"""Summarise older steps when a run's context grows past the threshold.

	The check runs before each step's model call; the summary, when one is due, is written by
	`openmolt_core.capabilities.compaction` (loaded then).

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
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		models = ctx.models
		if models is None:  # pragma: no cover - the loop always gives it
			return
		threshold = self.config.threshold_tokens
		if threshold is None:
			size = models.context_window()
			threshold = int((size or DEFAULT_CONTEXT_WINDOW) * self.config.share)
		system = models.system()
		if not needs_compaction(ctx.state, threshold, system):
			return
		from openmolt_core.capabilities.compaction import compact_run

		await compact_run(self, ctx, threshold, system)
