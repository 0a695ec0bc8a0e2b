"""Moved: `openmolt_core._support.private`; re-exported here."""

from __future__ import annotations

from openmolt_core._support.private import *  # noqa: F403
from openmolt_core._support.private import __all__ as __all__
