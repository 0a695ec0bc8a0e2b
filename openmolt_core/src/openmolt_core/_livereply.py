"""Moved: `openmolt_core.capabilities.streaming` (the streaming capability); re-exported here."""

from __future__ import annotations

from openmolt_core.capabilities.streaming import *  # noqa: F403
from openmolt_core.capabilities.streaming import __all__ as __all__
