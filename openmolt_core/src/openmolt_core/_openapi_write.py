"""Moved: `openmolt_core.integrations._openapi_write`; re-exported here."""

from __future__ import annotations

from openmolt_core.integrations._openapi_write import *  # noqa: F403
from openmolt_core.integrations._openapi_write import __all__ as __all__
