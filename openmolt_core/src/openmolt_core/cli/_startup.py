"""The garbage collector during a run's start-up: paused while the command imports and builds.

A one-shot ``openmolt agent.json`` imports some 400 modules and builds their classes, pydantic
models and the agent before its first model request: objects that live as long as the process.
The cyclic collector, counting allocations, walked them some 70 times on the way (about 4 % of
the CPU time to the first request) and found next to nothing to free. So the command pauses it
until the agent is built, then freezes what start-up made (`gc.freeze`: later collections skip
those objects, as a forking server does) and turns it back on; `StartupGC.close` at the end of
the command gives the frozen objects back to the collector, so a caller of
`openmolt_core.cli.main` in a longer process (a test) keeps its collector as it was.

The pause begins where a run is the likely outcome: the console script (`openmolt_core._main`)
pauses the collector while it imports the command, and `main` from the first word that is no
core command (a file, ``-m``, or a plugin's command, which is given the collector back before
it starts: `openmolt serve` and `worker` run on with Python's own). `import openmolt` never
touches the collector.
"""

from __future__ import annotations

import gc

__all__ = ["StartupGC"]


class StartupGC:
	"""The collector paused from construction until `resume` (then frozen start-up), then `close`.

	A collector the process had turned off stays off, and is neither frozen nor turned on. A
	process that froze objects itself (an application that embeds the command, a pre-fork
	server) keeps its collector as it is: `close` would give its frozen objects back too.
	"""

	__slots__ = ("_frozen", "_paused")

	def __init__(self) -> None:
		self._paused = gc.isenabled() and gc.get_freeze_count() == 0
		self._frozen = False
		if self._paused:
			gc.disable()

	def resume(self) -> None:
		"""Start-up is over: freeze what it made and turn the collector back on (once)."""
		if self._paused:
			self._paused = False
			gc.freeze()
			self._frozen = True
			gc.enable()

	def close(self) -> None:
		"""The command is over: resume if not done, and give the frozen objects back."""
		self.resume()
		if self._frozen:
			self._frozen = False
			gc.unfreeze()
