"""Moved to `openmolt_core.capabilities.offload` (this path keeps importing)."""

from openmolt_core.capabilities.offload import *  # noqa: F403
from openmolt_core.capabilities.offload import __all__ as __all__
