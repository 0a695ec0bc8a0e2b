"""In-doubt tool calls: started, but their result never journaled, when their worker died.

A durable run replays its journal after a crash; a tool call whose step had begun but whose
result was not recorded may or may not have taken effect. Before a call whose policy is not
``retry`` runs, the port records its start (`call_started`); a replay that finds the start
recorded handles the call by the tool's policy instead of running it blindly again:

| policy | what happens to an in-doubt call |
| --- | --- |
| ``retry`` | it runs again (reads, and calls that carry an idempotency key) |
| ``ask`` | the run asks a person whether it happened (it parks when nobody can answer now) |
| ``fail`` | the call ends with an error the model reads |

The default is ``retry`` for reads and for tools with an idempotency key, and ``ask`` for
``outbound`` tools without one (an HTTP ``POST``/``PATCH`` whose integration names no
``idempotencyHeader``, a function tool labelled ``outbound``). A tool declares its own with an
``in_doubt`` attribute (``@tool(in_doubt="fail")``, ``"inDoubt"`` on an HTTP tool's definition).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from openmolt_core.tools import InDoubt
from openmolt_core.tools import check_in_doubt as check_policy

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.durability import RunPort

__all__ = ["IN_DOUBT", "InDoubt", "check_policy", "in_doubt_entry", "policy_of", "question"]

IN_DOUBT = "_in_doubt"
"""The key of a tool step's journaled result when its call was in doubt."""

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


def policy_of(bound: BoundTool) -> InDoubt:
	"""A bound tool's in-doubt policy: its own, else the default for its kind (module docstring)."""
	tool = bound.tool
	declared = getattr(tool, "in_doubt", None)
	if declared is None:
		declared = getattr(tool, "inDoubt", None)
	if declared is not None:
		return check_policy(declared, f"tool {bound.handle!r}") or "retry"
	method = getattr(tool, "method", None)
	if isinstance(method, str) and not callable(getattr(tool, "execute", None)):
		method = method.upper()
		if method in _SAFE_METHODS:
			return "retry"
		setup = getattr(bound.integration, "api_setup", None)
		return "retry" if getattr(setup, "idempotency_header", None) else "ask"
	from openmolt_core.taint import declared_labels

	# What the tool declares, not what the taint policy makes of it: a function tool that
	# declares nothing (the policy treats it as outbound) is retried, with the call's
	# idempotency key (ToolContext.idempotency_key) to deduplicate; declare it outbound to be
	# asked instead.
	labels = declared_labels(bound) or frozenset()
	return "ask" if "outbound" in labels else "retry"


async def call_started(port: RunPort, key: str) -> bool:
	"""Record that a call starts; True if a previous execution had started it (in doubt).

	Ports without a journal of starts (the in-process one) never find one.
	"""
	started = getattr(port, "call_started", None)
	if started is None:
		return False
	return bool(await started(key))


def question(tool: str, tool_input: dict[str, Any]) -> str:
	"""The question a person answers about an in-doubt call."""
	shown = json.dumps(tool_input, ensure_ascii=False, default=str)
	if len(shown) > 300:
		shown = shown[:300] + "..."
	return (
		f"In doubt: the worker running the call {tool} {shown} stopped before its result was "
		"recorded. Did it take effect? Answer what happened (for example 'yes, it went through' "
		"or 'no, run it again'); the agent reads your answer."
	)


def in_doubt_entry(tool: str, how: str) -> dict[str, Any]:
	"""The result entry the model reads for an in-doubt call."""
	return {
		"tool": tool,
		"ok": False,
		"error": (
			"in doubt: the worker running this call stopped before its result was recorded, so "
			f"it may or may not have taken effect; {how}"
		),
	}
