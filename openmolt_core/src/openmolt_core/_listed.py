"""Moved to `openmolt_core.capabilities._listed` (this path keeps importing)."""

from openmolt_core.capabilities._listed import *  # noqa: F403
from openmolt_core.capabilities._listed import __all__ as __all__
