"""`PluginInfo`: one installed plugin entry point, as `openmolt_core.plugins.Plugins.installed` lists it.

Apart from `openmolt_core.plugins`, which re-exports it on first use: a run looks plugins up but
never lists them, and building the class (a frozen dataclass: its methods are compiled from
generated source) cost a one-shot run some 4 M instructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
	from openmolt_core.hookspecs import Group

__all__ = ["PluginInfo"]


@dataclass(frozen=True, slots=True)
class PluginInfo:
	"""An installed plugin entry point.

	Args:
		group: ``providers``, ``integrations`` or ``skills``.
		name: The entry-point name: the id users type.
		value: What the entry point loads (``module:object``).
		distribution: The distribution that provides it.
		version: That distribution's version.
	"""

	group: Group
	name: str
	value: str
	distribution: str
	version: str
