"""Connection limits of the trigger server: the run viewer's, shared (`openmolt_ui._conn`)."""

from __future__ import annotations

from openmolt_ui._conn import (
	DEFAULT_HEADER_TIMEOUT,
	DEFAULT_MAX_CONNECTIONS,
	GuardedH11Protocol,
	guarded_protocol,
)

__all__ = [
	"DEFAULT_HEADER_TIMEOUT",
	"DEFAULT_MAX_CONNECTIONS",
	"GuardedH11Protocol",
	"guarded_protocol",
]
