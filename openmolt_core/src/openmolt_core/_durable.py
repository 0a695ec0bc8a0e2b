"""An instance's durable runs, assembly side: the backend's contract, and the backend found.

`openmolt_core.durability` is the kernel's side: the port the loop journals through, and the
`openmolt_core.durability.RunDriver` an agent hands its durable runs to. Here is the whole
contract a durable engine fulfils for an instance (`DurabilityBackend`: ``openmolt-dbos``), what
it lists of parked runs (`PendingRun`), what ``OpenMolt(durability=...)`` takes
(`DurabilityConfig`), how the backend is found (by entry point), and what needs one says so when
the instance has none. The event a backend's worker emits on the agents whose durable runs wait
for a version it does not serve (``run:stranded``) lives here too. `openmolt_core.durability`
re-exports the contract's names under their old path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from openmolt_core.durability import DurableAgent, RunDriver
from openmolt_core.errors import ConfigurationError
from openmolt_core.events import Event

if TYPE_CHECKING:
	from pathlib import Path

__all__ = [
	"DurabilityBackend",
	"DurabilityConfig",
	"PendingRun",
	"RunStrandedEvent",
	"load_backend",
	"required",
]

DurabilityConfig = str | os.PathLike[str] | Mapping[str, Any]
"""``OpenMolt(durability=...)``: a SQLite file path, a ``sqlite:///`` or ``postgresql://`` URL, or
a dict with ``url`` and the backend's options (see ``openmolt_dbos``)."""


@dataclass(frozen=True, slots=True)
class PendingRun:
	"""A durable run parked on a question, waiting for ``om.answer(run_id, text)``.

	Args:
		run_id: The run's id (its workflow id).
		agent: The agent's name.
		question: What the agent asked.
		asked_at: When it asked (UTC).
		step: The step the question belongs to.
		user: The end user the run acts for (``agent.run(input, user=...)``), when it has one:
			a surface that takes answers from several people (a group chat) lets only this
			one answer. None for a run parked by a version that did not record it.
	"""

	run_id: str
	agent: str
	question: str
	asked_at: datetime
	step: int
	user: str | None = None

	def to_dict(self) -> dict[str, Any]:
		"""The parked run as JSON."""
		return {
			"run_id": self.run_id,
			"agent": self.agent,
			"question": self.question,
			"asked_at": self.asked_at.isoformat(),
			"step": self.step,
			**({"user": self.user} if self.user is not None else {}),
		}


@runtime_checkable
class DurabilityBackend(RunDriver, Protocol):
	"""What an `OpenMolt` instance with ``durability=...`` delegates to (``openmolt-dbos``).

	A backend that fires schedules too has ``schedule_backend()``
	(`openmolt_core.scheduler.DurableSchedules`).
	"""

	@property
	def files_dir(self) -> Path:
		"""Where the file store lives when none is given: persistent, shared by the workers."""
		...

	async def start(self) -> None:
		"""Launch the engine in this process: recover its unfinished runs, take over dead ones."""
		...

	def register(self, agent: DurableAgent) -> None:
		"""Know an agent by name, so its runs can be recovered in this process."""
		...

	async def answer(self, run_id: str, text: str, *, step: int | None = None) -> None:
		"""Answer the question a parked run waits on, from any process.

		``step``: the step of the question answered (`PendingRun.step`); None: the one pending now.
		"""
		...

	async def pending(self, *, agent: str | None = None) -> list[PendingRun]:
		"""The runs parked on a question (of one agent, or all)."""
		...

	async def cancel(self, run_id: str) -> str:
		"""Cancel an unfinished run, from any process; the engine's id for it (its workflow's).

		Running, parked, stranded, or failed with a state that could go on
		(``RunError.result.state``), the run takes no further step wherever it lives: a call
		under way is stopped (a sub-agent in it too), the next one never begins, and nothing of
		the run runs once this returns (a backend that cannot wait that long says so); an
		answer, a resume or a result asked of it later is refused with an error that says it
		was cancelled. Final: it cannot be undone.

		Args:
			run_id: The run's id (``result.state.run_id``, `pending`, ``openmolt runs``).

		Raises:
			ConfigurationError: No run has that id, or it has ended.
		"""
		...

	async def aclose(self) -> None:
		"""Release what this instance holds (the engine itself lives as long as the process)."""
		...


@dataclass(slots=True, kw_only=True)
class RunStrandedEvent(Event):
	"""A durable run of this agent waits for an agent version no live worker serves.

	Emitted by a worker at start (``run_id`` is the stranded run's). Keep a worker of the old
	definition until such runs finish, cancel them, or resume them on the current definition
	when the change is compatible (docs/guides/durable.md).

	Args:
		version: The application version the run was started under.
		current: The version this worker serves.
		worker: The worker that ran it last.
	"""

	version: str
	current: str
	worker: str
	name: str = "run:stranded"


def load_backend(om: object, config: DurabilityConfig) -> DurabilityBackend:
	"""Build the durability backend for an instance (``openmolt-dbos``, found by entry point).

	Args:
		om: The `OpenMolt` instance it serves, handed to the backend's factory as it is (the
			kernel reads nothing of it, so it does not name the assembly layer's type).
		config: What ``OpenMolt(durability=...)`` was given.

	Raises:
		ConfigurationError: ``openmolt-dbos`` is not installed, or the configuration is wrong.
	"""
	from importlib import metadata

	for entry in metadata.entry_points(group="openmolt.extensions", name="dbos"):
		factory = getattr(entry.load(), "durability_backend", None)
		if callable(factory):
			backend: DurabilityBackend = factory(om, config)
			return backend
	from openmolt_core._hints import install_command

	raise ConfigurationError(
		"durability=... needs openmolt-dbos, which is not installed; run: "
		f"{install_command('openmolt[dbos]')}"
	)


def required(backend: DurabilityBackend | None, what: str) -> DurabilityBackend:
	"""The instance's backend, for something only durable runs can do.

	Args:
		backend: The instance's durability backend, or None.
		what: What needs it (``om.answer``), for the message.

	Raises:
		ConfigurationError: The instance's runs are not durable.
	"""
	if backend is None:
		raise ConfigurationError(
			f"{what} needs durable runs: create OpenMolt(durability='runs.sqlite') (or a "
			"postgresql:// URL); in one process, use agent.resume(state, answer=...)"
		)
	return backend
