"""The tools a run's sources listed when it began, kept in its state: a run never binds others.

Tools listed at run time (`openmolt_core.hooks.Capability.list_tools`: an MCP server's) are listed
again before each run, resume and durable execution. A new run records the listed tools its first
turn was built from in ``state.ext["tool-sources"]["listed"]``: each handle with a digest of
what the model, the fingerprint and the capabilities read of it (description, schemas,
scopes, labels, whether it is allowed), then of what the handle calls and how a call found in
doubt is treated (the source's own name for the tool, its in-doubt policy). The state goes
through the durability port (a durable workflow's input, or its ``start`` step), so a run
recovered after a crash, or resumed in a new segment or process, binds the tools it began with:
a tool listed since is left out of that run, and a tool it began with that is gone or has
changed stops it with a clear error (the state kept) instead of binding another tool set in the
middle of the run. A run without such tools records nothing, and saves the bytes it saved before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from openmolt_core._support.jsonsafe import digest

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.result import RunState

__all__ = ["KEY", "kept", "record", "recorded", "refusal"]

KEY = "tool-sources"
"""Where a run's state keeps the record (the name of the built-in capability that lists tools)."""


def _digest(bound: BoundTool) -> str:
	"""``<what it says>:<what it does>``: the first part is the whole digest records kept before.

	What it says: description, schemas, scopes, labels, whether it is allowed. What it does: the
	source's own name for the tool (a handle a relisting gives another tool calls that one) and
	its in-doubt policy (a relisting that marks a write idempotent would have the call a crash
	cut off run again blindly).
	"""
	tool = bound.tool
	says = [
		tool.description,
		tool.input_schema,
		tool.output_schema,
		list(tool.scopes),
		sorted(bound.labels),
		bound.allowed,
	]
	does = [getattr(tool, "name", None), bound.in_doubt]
	return f"{digest(says)[:16]}:{digest(does)[:8]}"


def _same(began: str, now: str) -> bool:
	"""Whether a tool is as the run began with it (a record from before ``:`` checks the first part)."""
	return began == now or (":" not in began and now.partition(":")[0] == began)


def record(lists: Sequence[Sequence[BoundTool]]) -> dict[str, str]:
	"""The record of listed tools: each handle, in order, with its digest."""
	return {bound.handle: _digest(bound) for listed in lists for bound in listed}


def recorded(state: RunState) -> Mapping[str, str] | None:
	"""The listed tools a run began with (None: it recorded none, as a run saved before this)."""
	entry = state.ext.get(KEY)
	listed = entry.get("listed") if isinstance(entry, Mapping) else None
	return listed if isinstance(listed, Mapping) else None


def kept(
	began: Mapping[str, str],
	lists: Sequence[Sequence[BoundTool]],
	now: Mapping[str, str],
) -> tuple[list[list[BoundTool]], list[str], list[str]]:
	"""The listed tools a run binds: those it began with.

	Args:
		began: The run's record.
		lists: The tools listed now, one list per listing capability.
		now: Their record.

	Returns:
		The lists with only the tools the run began with, then the handles it began with that
		are gone, then those whose description or schemas changed (both empty: bind the lists).
	"""
	gone = [h for h in began if h not in now]
	changed = [h for h in began if h in now and not _same(began[h], now[h])]
	return [[b for b in listed if b.handle in began] for listed in lists], gone, changed


def refusal(gone: Sequence[str], changed: Sequence[str]) -> str:
	"""What a run whose listed tools went away or changed says (the handles, no values)."""
	parts = []
	if gone:
		parts.append(f"no longer lists {_names(gone)}")
	if changed:
		parts.append(f"changed {_names(changed)}")
	return (
		f"the tools listed at run time changed since this run began: its source {' and '.join(parts)}"
		"; a run binds the tools it began with, so it cannot go on. Bring those tools back as they "
		"were (the same server and version) and resume the saved state again, or start a new run"
	)


def _names(handles: Sequence[str]) -> str:
	return ", ".join(repr(h) for h in handles)
