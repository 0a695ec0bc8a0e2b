"""Moved: `openmolt_core.integrations._client` (the shared HTTP client); re-exported here."""

from __future__ import annotations

from openmolt_core.integrations._client import *  # noqa: F403
from openmolt_core.integrations._client import __all__ as __all__
