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
	import gc  # built in

	# The command's modules are objects for the life of the process: the collector, paused
	# while they load, would walk them and free nothing (`openmolt_core.cli._startup`, which
	# pauses a run's start-up from there on). A collector the process turned off stays off.
	paused = gc.isenabled() and gc.get_freeze_count() == 0
	if paused:
		gc.disable()
	try:
		from openmolt_core.cli import main as command
	except KeyboardInterrupt:
		sys.stderr.write("openmolt: interrupted\n")
		return _INTERRUPTED
	finally:
		if paused:
			# What loaded goes to the oldest generation, and the count of allocations since the
			# last collection back to 0 (as `gc.freeze` does): turned on, the collector does not
			# start at once by walking every object the import made.
			gc.freeze()
			gc.unfreeze()
			gc.enable()
	return command()
