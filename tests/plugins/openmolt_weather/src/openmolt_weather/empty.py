"""A broken third-party plugin: its entry point is installed, but its hook registers nothing."""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register nothing (the author forgot to call register)."""
