"""Moved: `openmolt_core._support.schemafit` (the repairs live with the fitter); re-exported here."""

from __future__ import annotations

from openmolt_core._support.schemafit import *  # noqa: F403
from openmolt_core._support.schemafit import __all__ as __all__
