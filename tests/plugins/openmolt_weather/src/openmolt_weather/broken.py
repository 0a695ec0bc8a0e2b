"""A broken third-party provider plugin: its factory returns something that is not a provider."""

from __future__ import annotations

from collections.abc import Callable

from openmolt_core import hookimpl


@hookimpl
def register_providers(register: Callable[..., None]) -> None:
	"""Register a factory that returns a plain object."""
	register(lambda settings, http: object(), name="broken")
