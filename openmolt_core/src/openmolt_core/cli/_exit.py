"""The ``openmolt`` command's exit codes: one per way a command or a run can end.

docs/cli.md lists the same table; a test checks that the two agree.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import IntEnum

__all__ = ["EXIT_CODES", "ExitCode", "for_status", "wait_for_abandoned_calls"]


class ExitCode(IntEnum):
	"""How the ``openmolt`` command ended; `EXIT_CODES` says what each code means.

	A single run ends with the code of its status; a scheduled process stopped by a signal ends
	with `SUCCESS` (each run's own status is in its record on stdout).
	"""

	SUCCESS = 0
	FAILURE = 1
	USAGE = 2
	LIMIT_REACHED = 3
	HUMAN_INPUT_REQUIRED = 4
	ERROR = 5
	APPROVAL_REQUIRED = 6
	GUARDRAIL_TRIPPED = 7
	AUTHORIZATION_REQUIRED = 8
	INTERNAL = 70
	INTERRUPTED = 130
	PIPE_CLOSED = 141
	TERMINATED = 143


EXIT_CODES: dict[ExitCode, str] = {
	ExitCode.SUCCESS: "the run ended with status success (or the command did its job)",
	ExitCode.FAILURE: "the agent finished with status failure: it could not do the task",
	ExitCode.USAGE: "a usage or configuration error (file, key, plugin): nothing ran",
	ExitCode.LIMIT_REACHED: "status limit_reached: a step, token or time budget ran out",
	ExitCode.HUMAN_INPUT_REQUIRED: "status human_input_required: nobody could answer",
	ExitCode.ERROR: "status error: the model provider failed for good",
	ExitCode.APPROVAL_REQUIRED: "status approval_required: a tool call waits for a decision",
	ExitCode.GUARDRAIL_TRIPPED: "status guardrail_tripped: a guardrail stopped the run",
	ExitCode.AUTHORIZATION_REQUIRED: (
		"status authorization_required: the end user (--user) must connect an account"
	),
	ExitCode.INTERNAL: "an unexpected error in OpenMolt or a plugin (--verbose shows it)",
	ExitCode.INTERRUPTED: "a single run cancelled by Ctrl-C (SIGINT)",
	ExitCode.PIPE_CLOSED: "stdout was closed early (`openmolt tools notion` piped into `head`)",
	ExitCode.TERMINATED: "a single run cancelled by SIGTERM",
}
"""What each exit code means; ``openmolt --help`` and docs/cli.md show this table."""


_BY_STATUS = {
	"success": ExitCode.SUCCESS,
	"failure": ExitCode.FAILURE,
	"limit_reached": ExitCode.LIMIT_REACHED,
	"human_input_required": ExitCode.HUMAN_INPUT_REQUIRED,
	"error": ExitCode.ERROR,
	"approval_required": ExitCode.APPROVAL_REQUIRED,
	"guardrail_tripped": ExitCode.GUARDRAIL_TRIPPED,
	"authorization_required": ExitCode.AUTHORIZATION_REQUIRED,
}


def for_status(status: str) -> ExitCode:
	"""The exit code of a single run that ended with ``status`` (a `RunStatus`)."""
	return _BY_STATUS.get(status, ExitCode.FAILURE)


def wait_for_abandoned_calls(
	*, json_lines: bool = False, exit: Callable[[int], object] = os._exit
) -> None:
	"""Before the process ends, wait for the sync calls a run stopped waiting for, saying so.

	Python cannot stop a thread: a sync tool still running when its run was cancelled (Ctrl-C,
	a timeout) keeps the process alive until it returns (`openmolt_core._support.sync`). The
	command said "cancelled" and then hung without a word, and a second Ctrl-C printed a
	traceback from the interpreter's ``threading._shutdown``. Now it says why it waits, and a
	Ctrl-C during the wait ends the process at once with `ExitCode.INTERRUPTED`.

	Args:
		json_lines: Say it as a JSON ``message`` event (``--json``: stderr is JSON lines).
		exit: How to end the process at once (``os._exit``: the interpreter would wait again).
	"""
	import threading

	from openmolt_core._support.sync import ABANDONED_THREAD

	left = [t for t in threading.enumerate() if t.name == ABANDONED_THREAD and t.is_alive()]
	if not left:
		return
	calls = (
		"a function the run called is"
		if len(left) == 1
		else f"{len(left)} functions the run called are"
	)
	said = (
		f"{calls} still running (a sync tool cannot be stopped); the command ends when it "
		"returns, or now with Ctrl-C"
	)

	def interrupted(*_: object) -> None:
		for stream in (sys.stdout, sys.stderr):
			try:
				stream.flush()
			except (OSError, ValueError):
				pass
		exit(ExitCode.INTERRUPTED)

	# The handler is in place before the line is said: a Ctrl-C that comes between saying it
	# and the join below (a loaded machine) raised KeyboardInterrupt outside the wait, and the
	# interpreter then waited for the thread without a word.
	import signal

	previous = None
	if threading.current_thread() is threading.main_thread():
		previous = signal.signal(signal.SIGINT, interrupted)
	try:
		if json_lines:
			import json

			print(json.dumps({"event": "message", "message": said}), file=sys.stderr)
		else:
			from openmolt_core.cli._terminal import printable

			print(f"openmolt: {printable(said)}", file=sys.stderr)
		for thread in left:
			thread.join()
	except KeyboardInterrupt:  # no handler of ours (not the main thread)
		interrupted()
	finally:
		if previous is not None:
			signal.signal(signal.SIGINT, previous)
