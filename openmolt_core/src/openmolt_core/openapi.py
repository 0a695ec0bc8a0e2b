"""Moved: `openmolt_core.integrations.openapi`; re-exported here."""

from __future__ import annotations

from openmolt_core.integrations.openapi import *  # noqa: F403
from openmolt_core.integrations.openapi import __all__ as __all__
