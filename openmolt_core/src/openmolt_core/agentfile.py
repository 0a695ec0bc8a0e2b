"""Agent files, for the programs that run them: the public API the sibling distributions use.

``openmolt serve``, ``openmolt ui``, the durable worker (``openmolt worker``) and ``openmolt mcp``
load agent files the way the ``openmolt`` command does, parse their arguments with its
`CommandParser`, take run ids as it does (`resolve_run_id`) and show the ``openmolt`` logger on
stderr without repeating a verbose run's lines (`NotVerbose`), record their runs' errors as the
command says them (``record_runs(loaded.om, error_voice(loaded))``, or a
``CommandRunStore(path, error_voice(loaded))`` of their own), and print text from outside
(a model's, a service's) with the characters a terminal obeys escaped (`printable`). They import these names from here,
never from the core's private modules (``openmolt_core.cli._*``, ``openmolt_core._verbose``), so
the command can change inside without breaking them. Each name is the command's own object (a
re-export, checked for identity by the tests).

Example:
	>>> from openmolt_core.agentfile import check_ready, load
	>>> loaded = load("agent.json", env_file=None, verbose=False)  # doctest: +SKIP
	>>> check_ready(loaded, strict=True)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
	from openmolt_core._verbose import NotVerbose
	from openmolt_core.cli._agentfile import (
		AgentFile,
		AgentFileError,
		agent_files,
		call_factory,
		load_json_file,
		load_python_file,
	)
	from openmolt_core.cli._argparse import CommandParser, port
	from openmolt_core.cli._exit import EXIT_CODES, ExitCode, for_status
	from openmolt_core.cli._keys import apply_dotenv, default_dotenv, read_dotenv
	from openmolt_core.cli._progress import to_json
	from openmolt_core.cli._record import CommandRunStore
	from openmolt_core.cli._run import (
		Loaded,
		check_ready,
		error_voice,
		file_schedule,
		load,
		schedule_specs,
	)
	from openmolt_core.cli._runids import resolve_run_id
	from openmolt_core.cli._terminal import printable
	from openmolt_core.cli._ui import record_runs

__all__ = [
	"EXIT_CODES",
	"AgentFile",
	"AgentFileError",
	"CommandParser",
	"CommandRunStore",
	"ExitCode",
	"Loaded",
	"NotVerbose",
	"agent_files",
	"apply_dotenv",
	"call_factory",
	"check_ready",
	"default_dotenv",
	"error_voice",
	"file_schedule",
	"for_status",
	"load",
	"load_json_file",
	"load_python_file",
	"port",
	"printable",
	"read_dotenv",
	"record_runs",
	"resolve_run_id",
	"schedule_specs",
	"to_json",
]

_EXPORTS = {
	"AgentFile": "openmolt_core.cli._agentfile",
	"AgentFileError": "openmolt_core.cli._agentfile",
	"CommandParser": "openmolt_core.cli._argparse",
	"port": "openmolt_core.cli._argparse",
	"agent_files": "openmolt_core.cli._agentfile",
	"call_factory": "openmolt_core.cli._agentfile",
	"load_json_file": "openmolt_core.cli._agentfile",
	"load_python_file": "openmolt_core.cli._agentfile",
	"EXIT_CODES": "openmolt_core.cli._exit",
	"ExitCode": "openmolt_core.cli._exit",
	"for_status": "openmolt_core.cli._exit",
	"apply_dotenv": "openmolt_core.cli._keys",
	"default_dotenv": "openmolt_core.cli._keys",
	"read_dotenv": "openmolt_core.cli._keys",
	"to_json": "openmolt_core.cli._progress",
	"CommandRunStore": "openmolt_core.cli._record",
	"Loaded": "openmolt_core.cli._run",
	"check_ready": "openmolt_core.cli._run",
	"error_voice": "openmolt_core.cli._run",
	"file_schedule": "openmolt_core.cli._run",
	"load": "openmolt_core.cli._run",
	"schedule_specs": "openmolt_core.cli._run",
	"record_runs": "openmolt_core.cli._ui",
	"resolve_run_id": "openmolt_core.cli._runids",
	"printable": "openmolt_core.cli._terminal",
	"NotVerbose": "openmolt_core._verbose",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
