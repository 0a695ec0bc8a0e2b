"""A program that built an agent exits without walking its objects again (`assembly`'s exit handler).

Python's shutdown collected once, then again after each stage of clearing the modules: passes over
every object a program that built an agent holds. The handler does the first collection itself,
then freezes what is alive. Each case runs in a fresh interpreter; an `atexit` handler registered
before anything of OpenMolt is imported runs after the library's (they run last in, first out),
and reports what it sees.
"""

import subprocess
import sys
import textwrap

LATE = textwrap.dedent(
	"""
	import atexit, gc, sys

	def report():
		sys.stdout.write(f"frozen={gc.get_freeze_count() > 0} enabled={gc.isenabled()}\\n")

	atexit.register(report)  # first registered: runs after every handler registered later
	"""
)

AGENT = (
	"from openmolt import OpenMolt\n"
	"OpenMolt().create_agent(name='a', model='openai:gpt-5-mini', instructions='x')\n"
)


def _run(code: str) -> str:
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
	assert done.returncode == 0, done.stderr
	return done.stdout


def test_a_program_that_built_an_agent_exits_with_its_objects_frozen() -> None:
	"""After the handler, what was alive is frozen; the collector stays on."""
	assert _run(LATE + AGENT) == "frozen=True enabled=True\n"


def test_importing_openmolt_alone_leaves_the_exit_as_it_was() -> None:
	"""The handler comes with the assembly (a first agent), not with ``import openmolt``."""
	assert _run(LATE + "import openmolt\n") == "frozen=False enabled=True\n"


def test_a_program_with_its_collector_off_keeps_it_off() -> None:
	"""Nothing is collected or frozen at exit when the program turned the collector off."""
	assert _run(LATE + "gc.disable()\n" + AGENT) == "frozen=False enabled=False\n"


def test_the_garbage_a_program_leaves_is_still_finalized_at_exit() -> None:
	"""A cycle dropped before the exit is collected with its finalizer, as Python's shutdown does.

	Frozen without the collection first, the cycle would stay in memory and its ``__del__``
	would never run.
	"""
	garbage = textwrap.dedent(
		"""
		import gc, sys

		class Node:
			def __del__(self):
				sys.stdout.write("finalized\\n")

		node = Node()
		node.me = node
		gc.collect()  # the cycle is old now: no young collection reaches it before the exit's
		del node
		"""
	)
	assert _run(AGENT + garbage) == "finalized\n"
