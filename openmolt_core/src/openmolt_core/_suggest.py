"""Moved: `openmolt_core._support.suggest`; re-exported here."""

from __future__ import annotations

from openmolt_core._support.suggest import *  # noqa: F403
from openmolt_core._support.suggest import __all__ as __all__
