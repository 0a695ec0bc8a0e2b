"""Moved: `openmolt_core.integrations._aiohttp`; re-exported here."""

from __future__ import annotations

from openmolt_core.integrations._aiohttp import *  # noqa: F403
from openmolt_core.integrations._aiohttp import __all__ as __all__
