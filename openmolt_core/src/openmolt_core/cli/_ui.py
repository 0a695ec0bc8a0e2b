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


def record_runs(om: OpenMolt, voice: Callable[[str], str] | None = None) -> str | None:
	"""Record the instance's runs in the default run store (unless it has one, or it is off).

	Args:
		om: The command's instance.
		voice: What the command prints for an error (`openmolt_core.cli._run.error_voice`):
			the record says the same (`openmolt_core.cli._record.CommandRunStore`).

	Returns:
		None, or why the runs are not recorded, for a warning: the store named by
		``OPENMOLT_RUN_STORE`` cannot be made, or its file is no run store (a folder, another
		kind of file). A default store in a read-only home is passed over without a word.
	"""
	import os

	from openmolt_core.errors import ConfigurationError
	from openmolt_core.runstore import ENV_VAR, RunStore, default_path

	if om.run_store is not None:
		return None
	try:
		path = default_path()
	except ConfigurationError as exc:  # a URL: the run goes on unrecorded, as for a bad path
		return f"runs are not recorded: {exc}"
	if path is None:
		return None
	from openmolt_core._support.private import private_dir

	named = os.environ.get(ENV_VAR) is not None
	try:
		private_dir(path.parent, own=True)  # ~/.local/state/openmolt: 0700, also if made before
	except OSError as exc:
		if not named:
			return None  # a read-only home: run without history rather than fail
		return _unrecorded(f"{path.parent} cannot be made ({exc.strerror or exc})")
	if voice is not None:  # errors recorded as the command prints them
		from openmolt_core.cli._record import CommandRunStore

		store: RunStore = CommandRunStore(path, voice)
	else:
		store = RunStore(path)
	try:
		store.check()  # an observer that fails is skipped in silence: say it once, here
	except ConfigurationError as exc:
		return _unrecorded(str(exc))
	om.run_store = store
	om.observers.append(store)
	return None


def _unrecorded(why: str) -> str:
	return f"runs are not recorded: {why}; set OPENMOLT_RUN_STORE to another file, or to off"


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
