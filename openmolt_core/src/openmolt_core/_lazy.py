"""Moved: `openmolt_core._support` (the lazy re-exports); re-exported here."""

from __future__ import annotations

from openmolt_core._support import *  # noqa: F403
from openmolt_core._support import __all__ as __all__
