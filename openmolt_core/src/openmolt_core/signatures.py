"""Moved: `openmolt_serve.signatures` (``pip install "openmolt[serve]"``); re-exported here.

The names resolve on first use (PEP 562), so the core itself never imports ``openmolt-serve``;
where it is not installed, using one says what to install.
"""

from __future__ import annotations

import importlib
from typing import Any

_MOVED = "openmolt_serve.signatures"


def __getattr__(name: str) -> Any:
	try:
		module = importlib.import_module(_MOVED)
	except ModuleNotFoundError as exc:  # pragma: no cover - the test environment has it
		if exc.name not in {"openmolt_serve", _MOVED}:
			raise
		from openmolt_core._hints import install_command

		raise ModuleNotFoundError(
			f"openmolt_core.signatures moved to {_MOVED} (the openmolt-serve distribution); "
			f"install it: {install_command('openmolt[serve]')}",
			name=exc.name,
		) from None
	return getattr(module, name)
