"""The ``openmolt`` command's garbage collector: paused while it starts, frozen as it ends.

The one home of the rule, which the console script (`openmolt_core._main`) and the command
(`openmolt_core.cli.main`) both follow. A one-shot ``openmolt agent.json`` imports some 400
modules and builds their classes, pydantic models and the agent before its first model request:
objects that live as long as the process. The cyclic collector, counting allocations, walked them
some 70 times on the way (about 4 % of the CPU time to the first request) and found next to
nothing to free. So the command pauses it (`StartupGC`) until the agent is built, then freezes
what start-up made (`gc.freeze`: later collections skip those objects, as a forking server does)
and turns it back on; `StartupGC.close` at the end of the command gives the frozen objects back
to the collector, so a caller of `openmolt_core.cli.main` in a longer process (a test) keeps its
collector as it was.

The pause begins where a run is the likely outcome: the console script pauses the collector while
it imports the command (and closes that pause once it is loaded: what loaded counts as old, no
pass over it starts at once), and `main` pauses again from the first word that is no core command
(a file, ``-m``, or a plugin's command, which is given the collector back before it starts:
`openmolt serve` and `worker` run on with Python's own). `import openmolt` never touches the
collector while a program runs (the assembly's exit handler only spares the interpreter's
shutdown its passes over what is alive then). As the command's process ends, `freeze_for_exit`
spares the interpreter's shutdown its last passes over every object the command loaded.

This module imports nothing but `gc` (built in): the console script loads it before the command.
"""

from __future__ import annotations

import gc

__all__ = ["StartupGC", "freeze_for_exit"]

_seen_frozen = False
"""Whether the process was seen holding objects it froze itself: then it is taken to keep them.
Asking again costs a walk over every frozen object in Python 3.11 (`gc.get_freeze_count`: 24 ms
in a process that froze a large heap, at each in-process command); a process that unfreezes
them later only loses the pause."""
_ours = 0
"""How many pauses have frozen start-up and not yet given it back (their freeze is no process's)."""


class StartupGC:
	"""The collector paused from construction until `resume` (then frozen start-up), then `close`.

	A collector the process had turned off stays off, and is neither frozen nor turned on. A
	process that froze objects itself (an application that embeds the command, a pre-fork
	server) keeps its collector as it is: `close` would give its frozen objects back too.
	"""

	__slots__ = ("_frozen", "_paused")

	def __init__(self) -> None:
		global _seen_frozen
		self._paused = gc.isenabled() and not _seen_frozen and not _ours
		if self._paused and gc.get_freeze_count():
			_seen_frozen, self._paused = True, False
		self._frozen = False
		if self._paused:
			gc.disable()

	def resume(self) -> None:
		"""Start-up is over: freeze what it made and turn the collector back on (once)."""
		self._resume()

	def _resume(self) -> None:
		global _ours
		if self._paused:
			self._paused = False
			gc.freeze()
			self._frozen = True
			_ours += 1
			gc.enable()

	def close(self) -> None:
		"""The pause is over: resume if not done, and give the frozen objects back.

		What start-up made then counts as old (the oldest generation), and the count of
		allocations since the last collection is 0, as `gc.freeze` leaves it: turned on, the
		collector does not start at once by walking every object the start-up made.
		"""
		self._resume()  # not `resume`: the command's start-up is not over where a pause closes
		global _ours
		if self._frozen:
			self._frozen = False
			_ours -= 1
			gc.unfreeze()


def freeze_for_exit() -> None:
	"""The command is done and its process ends: skip the collector's last passes over it.

	Python's shutdown runs the cyclic collector over every object the command loaded (a few
	hundred modules' functions, classes and schemas), to free memory the process is about to give
	back: 70-200 ms of a command's exit on a 2-core machine (`benchmarks/run.py`, figure 7).
	Freezing them first leaves them to the operating system. Nothing that must run is skipped:
	`atexit` handlers and ``weakref.finalize`` callbacks still run, and the command has closed
	what it opened (the run store, the HTTP clients, the durable backend) before it returns.
	Only the console script's process calls it (`openmolt_core.cli.main` without arguments).
	"""
	gc.freeze()
