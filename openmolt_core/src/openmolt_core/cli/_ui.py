"""The run store the ``openmolt`` command records to, and ``openmolt ui`` / ``--ui``.

Every run the command makes is recorded in the default run store
(`openmolt_core.runstore.default_path`; ``OPENMOLT_RUN_STORE=off`` turns it off), so
``openmolt ui`` can show it. The viewer itself lives in ``openmolt-ui`` (``openmolt[ui]``), which
registers ``openmolt ui``; ``--ui`` finds it through the ``openmolt.extensions`` entry point
``ui``: the core never imports Starlette.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from openmolt_core.cli._ecosystem import extension

if TYPE_CHECKING:
	from openmolt_core.openmolt import OpenMolt

__all__ = ["record_runs", "run_with_ui"]


def record_runs(om: OpenMolt) -> None:
	"""Record the instance's runs in the default run store (unless it has one, or it is off)."""
	from openmolt_core.runstore import RunStore, default_path

	if om.run_store is not None:
		return
	path = default_path()
	if path is None:
		return
	from openmolt_core._support.private import private_dir

	try:
		private_dir(path.parent, own=True)  # ~/.local/state/openmolt: 0700, also if made before
	except OSError:
		return  # a read-only home: run without history rather than fail
	om.run_store = RunStore(path)
	om.observers.append(om.run_store)


async def run_with_ui(
	loaded: object, run: Callable[[], Awaitable[int]], line: Callable[[str], None], *, linger: bool
) -> int:
	"""Run an agent file with the viewer serving (``openmolt AGENT_FILE --ui``).

	Raises:
		ConfigurationError: ``openmolt[ui]`` is not installed.
	"""
	plugin = extension("ui", needed_for="--ui")
	code: int = await plugin.with_viewer(loaded, run, line=line, linger=linger)
	return code
