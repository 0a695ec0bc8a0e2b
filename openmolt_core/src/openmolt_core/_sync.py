"""Moved: `openmolt_core._support.sync`; re-exported here."""

from __future__ import annotations

from openmolt_core._support.sync import *  # noqa: F403
from openmolt_core._support.sync import __all__ as __all__
