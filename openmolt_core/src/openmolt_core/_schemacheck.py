"""Moved: `openmolt_core._support.metaschema` (the metaschema check); re-exported here."""

from __future__ import annotations

from openmolt_core._support.metaschema import *  # noqa: F403
from openmolt_core._support.metaschema import __all__ as __all__
