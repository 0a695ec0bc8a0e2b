"""Durable OpenMolt runs on DBOS: they survive a crash, and parked questions are answered anywhere.

Schedules fire once across all workers, and a dead worker's runs are taken over.

```python
om = OpenMolt(durability="runs.sqlite")          # or "postgresql://user@host/db"
agent = om.create_agent(name="Digest", model="openai:gpt-5-mini", instructions="...")
result = await agent.run("...")                  # a DBOS workflow; its id is the run id
await om.answer(result.state.run_id, "yes")      # from any process, for a parked question
```

The core finds this package through the ``openmolt.extensions`` entry point ``dbos`` when an
instance is given ``durability=...``; nothing imports DBOS otherwise. See docs/guides/durable.md.

| module | what |
| --- | --- |
| `openmolt_dbos._settings` | ``durability=...``: the store and this process's options |
| `openmolt_dbos._engine` | the process's DBOS engine, agents by name, launching |
| `openmolt_dbos._port` | the core's `RunPort` on DBOS steps, sleep and clock |
| `openmolt_dbos._runs` | the run workflow, parked questions, results as JSON |
| `openmolt_dbos._backend` | what ``agent.run``, ``om.answer``, ``om.pending``, ``om.result`` do |
| `openmolt_dbos._schedules` | schedules on the engine (``<schedule key>@<due time>``) |
| `openmolt_dbos._workers` | executor ids, heartbeats, takeover of dead workers' runs |
| `openmolt_dbos.worker` | ``openmolt worker``, ``openmolt runs``, ``openmolt answer`` |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports
from openmolt_dbos._settings import ENV_URL, ENV_WORKER_ID, Settings, parse_settings

if TYPE_CHECKING:
	from openmolt_core._durable import DurabilityConfig
	from openmolt_core.openmolt import OpenMolt
	from openmolt_dbos._backend import AlreadyAnsweredError, DBOSBackend
	from openmolt_dbos._port import DBOSPort

__all__ = [
	"ENV_URL",
	"ENV_WORKER_ID",
	"AlreadyAnsweredError",
	"DBOSBackend",
	"DBOSPort",
	"Settings",
	"cli_main",
	"durability_backend",
	"parse_settings",
]


_EXPORTS = {
	"AlreadyAnsweredError": "openmolt_dbos._backend",
	"DBOSBackend": "openmolt_dbos._backend",
	"DBOSPort": "openmolt_dbos._port",
}
"""Names whose modules import DBOS, seconds of imports: loaded when first used, so that
``openmolt worker --help`` (which imports this package) answers at once."""

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


def durability_backend(om: OpenMolt, config: DurabilityConfig) -> DBOSBackend:
	"""The backend for ``OpenMolt(durability=config)`` (the entry point the core loads).

	Raises:
		ConfigurationError: The configuration is wrong, or the process already uses another store.
	"""
	from openmolt_dbos._backend import DBOSBackend

	return DBOSBackend(om, parse_settings(config))


def cli_main(args: list[str]) -> int:
	"""Run ``openmolt worker``, ``openmolt runs`` or ``openmolt answer`` (``args[0]`` says which).

	Returns:
		The exit code.
	"""
	from openmolt_dbos.worker import main

	return main(args)
