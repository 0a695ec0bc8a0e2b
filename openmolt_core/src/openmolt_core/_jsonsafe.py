"""Moved: `openmolt_core._support.jsonsafe`; re-exported here."""

from __future__ import annotations

from openmolt_core._support.jsonsafe import *  # noqa: F403
from openmolt_core._support.jsonsafe import __all__ as __all__
