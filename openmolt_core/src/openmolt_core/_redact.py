"""Moved: `openmolt_core.secrets` (the redactors live beside the secret sets and the logging filter they feed); re-exported here."""

from __future__ import annotations

from openmolt_core.secrets import *  # noqa: F403
from openmolt_core.secrets import __all__ as __all__
