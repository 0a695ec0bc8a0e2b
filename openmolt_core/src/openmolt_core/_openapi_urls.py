"""Moved: `openmolt_core.integrations._openapi_urls`; re-exported here."""

from __future__ import annotations

from openmolt_core.integrations._openapi_urls import *  # noqa: F403
from openmolt_core.integrations._openapi_urls import __all__ as __all__
