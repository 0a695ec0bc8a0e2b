"""One line per run on ``openmolt serve``'s stderr: when a trigger starts it, and when it ends.

```
openmolt serve: run hook-triage-1a2b of Triage started by webhook Triage
openmolt serve: run hook-triage-1a2b of Triage: success · 2 steps · 1,234 tokens · $0.0012
```

A run observer (`openmolt_core.observe`), so every run of the served instances is told once,
whatever started it; a sub-agent's runs are part of their caller's line.
"""

from __future__ import annotations

from collections.abc import Callable

from openmolt_core._support.masking import mask_url_logins
from openmolt_core._support.words import money, quantity
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome

__all__ = ["RunLines"]


class RunLines(RunObserver):
	"""Prints a line when a run starts (or resumes) and when it ends.

	Args:
		line: Prints one line (``openmolt serve``'s ``_line``).
	"""

	def __init__(self, line: Callable[[str], None]) -> None:
		self.line = line

	@staticmethod
	def _origin(run: ObservedRun) -> str:
		trigger = run.trigger
		details = [str(trigger[k]) for k in ("where", "sender") if trigger.get(k)]
		return " ".join([str(trigger.get("kind", "api")), *details])

	async def started(self, run: ObservedRun) -> None:
		"""A trigger started (or resumed) a run."""
		if run.trigger.get("kind") == "agent":
			return
		verb = "resumed" if run.resumed else "started"
		self.line(f"run {run.run_id} of {run.agent_name} {verb} by {self._origin(run)}")

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""The run ended (or parked): its status, steps, tokens and cost."""
		if run.trigger.get("kind") == "agent":
			return
		usage = run.state.usage
		parts = [
			outcome.status.replace("_", " "),
			quantity(run.state.steps, "step"),
			quantity(usage.input_tokens + usage.output_tokens, "token"),
		]
		cost = money(usage.cost_usd, usage.unpriced_calls)  # a partial cost is a lower bound
		if cost is not None:
			parts.append(cost)
		if outcome.error and outcome.status not in ("success", "failure"):
			parts.append(mask_url_logins(run.redact(outcome.error))[:200])  # masked, then cut
		self.line(f"run {run.run_id} of {run.agent_name}: {' · '.join(parts)}")
