"""The instance's run observers as a capability: the run store, the viewer, telemetry.

Every agent of an `OpenMolt` instance gets it (one object, shared: the run tells which agent runs) (``OpenMolt(observers=[...])``, ``run_store=...``,
the CLI's run log, the viewer and OpenTelemetry add observers, also after agents exist). Around
each drive of a run (``wrap_run``) it routes the run's events and port through the observers and
tells them how the run starts and ends; with no observer it only passes the drive on.

The capability is defined in `openmolt_core.capabilities` (every agent has it: a plain run
loads no feature module); this path re-exports it.
"""

from openmolt_core.capabilities import Observers

__all__ = ["Observers"]
