"""Moved: `openmolt_core.integrations._openapi_schemas`; re-exported here."""

from __future__ import annotations

from openmolt_core.integrations._openapi_schemas import *  # noqa: F403
from openmolt_core.integrations._openapi_schemas import __all__ as __all__
