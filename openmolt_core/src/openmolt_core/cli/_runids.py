"""A run id as people type it: the whole id, or any prefix of it that only one run has.

The summary, ``openmolt logs`` and ``openmolt runs`` print whole ids (32 hex digits); every command
that takes one (``openmolt logs RUN_ID``, ``openmolt answer``, ``openmolt runs --cancel`` and
``--migrate``) accepts a unique prefix, as git does for commits, and names the runs that match
when several do. Plugin commands use it as `openmolt_core.agentfile.resolve_run_id`, with the ids they know.
"""

from __future__ import annotations

from collections.abc import Iterable

from openmolt_core.errors import ConfigurationError

__all__ = ["ENOUGH", "resolve_run_id"]

_SHOWN = 5

ENOUGH = _SHOWN + 1
"""How many of the ids that start with a prefix `resolve_run_id` needs (a store may pass only
these): the most it names, and one more to know there are more."""


def resolve_run_id(given: str, ids: Iterable[str], *, where: str = "") -> str:
	"""The one id of ``ids`` that ``given`` is, or is a prefix of.

	Args:
		given: What the user typed.
		ids: The ids the command knows (those that start with ``given`` are enough, and the
			first `ENOUGH` of those too).
		where: Where they were looked for, for the message (``in ~/.local/state/...``).

	Returns:
		The whole id.

	Raises:
		ConfigurationError: No id starts with ``given``, or several do (the message names them).
	"""
	known = list(dict.fromkeys(ids))
	if given in known:
		return given
	hits = [run_id for run_id in known if given and run_id.startswith(given)]
	if len(hits) == 1:
		return hits[0]
	place = f" {where}" if where else ""
	if not hits:
		raise ConfigurationError(f"no run {given!r}{place}")
	shown = ", ".join(hits[:_SHOWN]) + (", ..." if len(hits) > _SHOWN else "")
	# Past the shown ones, no count: a caller may pass only the first few (`openmolt logs`).
	count = len(hits) if len(hits) <= _SHOWN else f"more than {_SHOWN}"
	raise ConfigurationError(
		f"{count} runs{place} start with {given!r} ({shown}): give more of the id"
	)
