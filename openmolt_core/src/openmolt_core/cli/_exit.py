"""The ``openmolt`` command's exit codes: one per way a command or a run can end.

docs/cli.md lists the same table; a test checks that the two agree.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["EXIT_CODES", "ExitCode", "for_status"]


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
