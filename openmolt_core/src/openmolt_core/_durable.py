"""An instance's durable runs, assembly side: the backend found for its configuration.

`openmolt_core.durability` is the kernel's side (the port the loop journals through, and the
`DurabilityBackend` protocol); here the backend is found (``openmolt-dbos``, by entry point) and
what needs one says so when the instance has none. The event a backend's worker emits on the
agents whose durable runs wait for a version it does not serve (``run:stranded``) lives here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from openmolt_core.durability import DurabilityBackend, DurabilityConfig
from openmolt_core.errors import ConfigurationError
from openmolt_core.events import Event

__all__ = ["RunStrandedEvent", "load_backend", "required"]


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
