"""What a parked run waits for, as the viewer lists it: every way a run can park, one reading.

A run parks on a question (``state.pending`` kind ``human_input``), on calls the approvals gate
holds (kind ``approval``), on calls a capability parked (kind ``capability``: `openmolt_core.hooks.Park`,
with any of the statuses a `Park` may give), or on calls a gate of another capability holds under
its own kind (`openmolt_core.hooks.Capability.parks`). `waiting_for` says which, in one line, for
the run list and the run page; `capability_waits` makes the list's items for the calls the page
cannot answer itself (the application resumes them). The line is the core's reading of a
parked state (`openmolt_core.observe.waiting_for`), which a sub-agent's caller reads too. Rows come from the run store, which keeps
``pending`` redacted, or from a live run's summary, redacted the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openmolt_core.observe import waiting_for as state_waiting_for
from openmolt_core.result import PARKED_STATUSES

__all__ = ["PARKED", "capability_waits", "waiting_for"]

PARKED: frozenset[str] = PARKED_STATUSES
"""The statuses of a parked run (the core's `openmolt_core.result.PARKED_STATUSES`)."""

ANSWERED_HERE = {"human_input": "human_input_required", "approval": "approval_required"}
"""The kinds of parked step the page answers itself, with their run's status."""


def waiting_for(row: Mapping[str, Any]) -> str | None:
	"""What a run waits for, in one line (None: it is not parked; see `state_waiting_for`).

	Args:
		row: The run's row (``status`` and ``pending``, as the run store keeps them).
	"""
	if row.get("status") not in PARKED:
		return None
	return state_waiting_for(row.get("pending"))


def capability_waits(row: Mapping[str, Any]) -> list[dict[str, Any]]:
	"""The list's items for calls parked by a capability or another gate's kind (not answerable).

	Calls parked by the accounts capability are left to the viewer's authorization items (with
	the consent link); questions and approvals to its answerable items.

	Args:
		row: The run's row.
	"""
	pending = row.get("pending")
	if row.get("status") not in PARKED or not isinstance(pending, Mapping):
		return []
	kind = str(pending.get("kind") or "")
	if ANSWERED_HERE.get(kind) == row.get("status"):
		return []
	how = (
		"the application resumes it: agent.resume(state, given=...) hands what it delivers to "
		"the capability"
		if kind == "capability"
		else f"the application resumes it: agent.resume(state, decision=...) (kind {kind!r})"
	)
	out = []
	for call in _calls(pending):
		by = _who(kind, call)
		if kind == "capability" and by == "accounts":
			continue
		request = call.get("request")
		out.append(
			{
				"id": f"parked:{row['run_id']}:{call.get('index', '')}",
				"kind": "parked",
				"run_id": row["run_id"],
				"agent": row.get("agent", ""),
				"message": f"{call.get('tool', '')} waits for {by}: {_said(call)}".rstrip(": "),
				"by": by,
				"request": request if isinstance(request, Mapping) else {},
				"how": how,
				"asked": row.get("ended") or row.get("updated"),
				"can_answer": False,
			}
		)
	return out


def _calls(pending: Mapping[str, Any]) -> list[Mapping[str, Any]]:
	return [c for c in pending.get("calls") or () if isinstance(c, Mapping)]


def _who(kind: str, call: Mapping[str, Any]) -> str:
	return str(call.get("by") or kind or "a capability")


def _said(call: Mapping[str, Any]) -> str:
	return str(call.get("message") or call.get("reason") or "")
