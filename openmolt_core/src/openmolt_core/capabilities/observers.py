"""The instance's run observers as a capability: the run store, the viewer, telemetry.

Every agent of an `OpenMolt` instance gets it (one object, shared: the run tells which agent runs) (``OpenMolt(observers=[...])``, ``run_store=...``,
the CLI's run log, the viewer and OpenTelemetry add observers, also after agents exist). Around
each drive of a run (``wrap_run``) it routes the run's events and port through the observers and
tells them how the run starts and ends; with no observer it only passes the drive on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from openmolt_core.hooks import Capability

if TYPE_CHECKING:
	from openmolt_core._execute import RunContext
	from openmolt_core.agent import Agent
	from openmolt_core.hooks import Run
	from openmolt_core.observe import RunObserver
	from openmolt_core.result import RunResult

__all__ = ["Observers"]


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
