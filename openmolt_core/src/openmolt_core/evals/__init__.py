"""Moved: evals are the ``openmolt-evals`` distribution (``pip install "openmolt[evals]"``).

This module re-exports `openmolt_evals`, so code written for ``openmolt_core.evals`` keeps working
where it is installed, and says what to install where it is not.
"""

from __future__ import annotations

try:
	from openmolt_evals import *  # noqa: F403
	from openmolt_evals import __all__ as __all__
except ModuleNotFoundError as exc:  # pragma: no cover - the test environment has it
	if exc.name != "openmolt_evals":
		raise
	from openmolt_core._hints import install_command

	raise ModuleNotFoundError(
		"openmolt_core.evals moved to the openmolt-evals distribution; install it: "
		f"{install_command('openmolt[evals]')}",
		name=exc.name,
	) from None
