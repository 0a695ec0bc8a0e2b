"""The command's run store: each run's error recorded as the command said it.

The engine's errors speak to Python code (``llm_providers['ollama']['base_url']``); the command
says them as its user sets things (``llmProviders.ollama.baseUrl in the agent file``, or the
variable with ``-m``). `openmolt logs` and the viewer read the record, so it keeps what the run
printed: the run's error and the messages of its ``error`` events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from openmolt_core.events import ErrorEvent
from openmolt_core.runstore import RunStore

if TYPE_CHECKING:
	from openmolt_core.events import Event
	from openmolt_core.observe import ObservedRun, RunOutcome

__all__ = ["CommandRunStore"]


class CommandRunStore(RunStore):
	"""A `RunStore` that records errors reworded by the command's ``voice``.

	Args:
		path: The SQLite file.
		voice: What the command prints for an error's text (`openmolt_core.cli._run.error_voice`).
	"""

	def __init__(self, path: str | Path, voice: Callable[[str], str]) -> None:
		super().__init__(path)
		self._voice = voice

	async def event(self, run: ObservedRun, event: Event) -> None:
		"""Record the event, an ``error`` event's message as the command said it."""
		if isinstance(event, ErrorEvent) and event.message:
			event = replace(event, message=self._voice(event.message))
		await super().event(run, event)

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""Complete the run's row, its error as the command said it."""
		if outcome.error:
			outcome = replace(outcome, error=self._voice(outcome.error))
		await super().ended(run, outcome)
