"""Moved: `openmolt_core.capabilities.sources` (tools listed at run time: the kernel never names a source); re-exported here."""

from __future__ import annotations

from openmolt_core.capabilities.sources import ToolSource, source_gates, trusts_descriptions

__all__ = ["ToolSource", "source_gates", "trusts_descriptions"]
