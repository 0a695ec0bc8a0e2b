"""Moved: `openmolt_core.capabilities._replydecoder` (the streaming capability's); re-exported here."""

from __future__ import annotations

from openmolt_core.capabilities._replydecoder import *  # noqa: F403
from openmolt_core.capabilities._replydecoder import __all__ as __all__
