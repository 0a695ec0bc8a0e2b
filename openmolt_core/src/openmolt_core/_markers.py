"""The markers of OpenMolt's plugin hooks: ``@hookspec`` declares one, ``@hookimpl`` implements one.

`openmolt_core.hookspecs` declares the hooks and re-exports both (``from openmolt_core import
hookimpl`` is the public name); a built-in plugin below it (the ``httpRequest`` integration) marks
its hooks from here, without importing the plugin machinery.
"""

from __future__ import annotations

import pluggy

__all__ = ["hookimpl", "hookspec"]

hookspec: pluggy.HookspecMarker = pluggy.HookspecMarker("openmolt")
"""Marks a function of `openmolt_core.hookspecs` as a hook plugins may implement."""
hookimpl: pluggy.HookimplMarker = pluggy.HookimplMarker("openmolt")
"""Marks a plugin's function as the implementation of the hook of the same name."""
