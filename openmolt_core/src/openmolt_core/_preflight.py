"""Moved: `openmolt_core.integrations.preflight` (credential checks); re-exported here."""

from __future__ import annotations

from openmolt_core.integrations.preflight import *  # noqa: F403
from openmolt_core.integrations.preflight import __all__ as __all__
