"""Moved to `openmolt_core.capabilities.structured` (this path keeps importing)."""

from openmolt_core.capabilities.structured import *  # noqa: F403
from openmolt_core.capabilities.structured import __all__ as __all__
