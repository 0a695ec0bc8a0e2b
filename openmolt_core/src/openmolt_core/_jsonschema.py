"""Moved: `openmolt_core._support.jsonschema` (JSON Schema validation); re-exported here."""

from __future__ import annotations

from openmolt_core._support.jsonschema import *  # noqa: F403
from openmolt_core._support.jsonschema import __all__ as __all__
