"""Moved: `openmolt_core.integrations._openapi_load`; re-exported here."""

from __future__ import annotations

from openmolt_core.integrations._openapi_load import *  # noqa: F403
from openmolt_core.integrations._openapi_load import __all__ as __all__
