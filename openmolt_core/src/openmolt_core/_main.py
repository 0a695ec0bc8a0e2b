"""The ``openmolt`` console script: a Ctrl-C while the command is still loading is its own.

Python answers a SIGINT that lands during an import with a ``KeyboardInterrupt`` traceback; the
command's own handler (`openmolt_core.cli.main`) is not there yet while its modules load (the
first 30-50 ms of the process). This module imports nothing at its top, so that window shrinks
to the interpreter's start and ``openmolt_core``'s small ``__init__``.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

_INTERRUPTED = 130
"""`openmolt_core.cli.ExitCode.INTERRUPTED`, which cannot be imported before the command loads."""


def main() -> int:
	"""Load the ``openmolt`` command and run it (`openmolt_core.cli.main`).

	Returns:
		The command's exit code; 130 when Ctrl-C came while it loaded.
	"""
	try:
		from openmolt_core._startup import StartupGC  # imports only gc

		# The command's modules are objects for the life of the process: the collector, paused
		# while they load, would walk them and free nothing (the rule: `openmolt_core._startup`).
		loading = StartupGC()
		try:
			from openmolt_core.cli import main as command
		finally:
			loading.close()
	except KeyboardInterrupt:
		sys.stderr.write("openmolt: interrupted\n")
		return _INTERRUPTED
	return command()
