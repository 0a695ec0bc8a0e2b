"""``openmolt worker``, ``openmolt runs`` and ``openmolt answer``, registered with the command.

The ``openmolt.commands`` entry point ``dbos`` names this module; the ``openmolt`` command calls its
``register_commands`` hook when it meets one of these names (`openmolt_dbos.worker` runs them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from openmolt_core import hookimpl

if TYPE_CHECKING:
	from openmolt_core.plugins import CommandRegistrar

__all__ = ["register_commands"]

_SUMMARIES = {
	"worker": "run durable runs (and recover crashed ones) from agent files",
	"runs": "list durable runs and what they wait for",
	"answer": "answer a durable run's question",
}


@hookimpl
def register_commands(register: CommandRegistrar) -> None:
	"""Register the durable commands (each runs `openmolt_dbos.worker.main` with its name)."""
	for name, summary in _SUMMARIES.items():
		register(name, _command(name), summary=summary)


def _command(name: str) -> Callable[[list[str]], int]:
	def main(args: list[str]) -> int:
		from openmolt_dbos import cli_main

		return cli_main([name, *args])

	return main
