"""Where the runs of a context come from: `started_by`'s context variable (see `openmolt_core.observe`).

It lives in the kernel's layer so that the loop itself can read it and mark a new run with it
(``RunState.ext["trigger"]``, `openmolt_core.result.TRIGGER_KEY`), and set it again from that mark
when it drives a run no trigger started here (a durable run recovered by another process): what
reads it (the accounts capability's chat links, the observers' record of the run) then sees the
same trigger in every process. The loop reads it only when this module was loaded (a trigger or
an observer imported it): a plain run never loads it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["current_trigger", "started_by"]

_trigger: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
	"openmolt_trigger", default=None
)


@contextmanager
def started_by(kind: str, **details: str | int | None) -> Iterator[None]:
	"""Say where the runs started inside this block come from; observers record it.

	``with started_by("webhook", where="Triage"): await agent.run(payload)`` records the run
	as started by the webhook ``Triage`` (the run store keeps it with the run's row), and marks
	the run's state with it, so a process that goes on with the run (a durable worker) knows it too.

	Args:
		kind: ``cli``, ``api``, ``schedule``, ``webhook``, ``chat``, ``mcp``... (the kinds of
			`openmolt_core.triggers`, plus ``cli`` and ``api``).
		**details: Which one: ``where`` (the trigger's or schedule's name, the chat channel),
			``sender`` (the chat user's id)... Empty values are left out.
	"""
	if not isinstance(kind, str) or not kind:
		raise ValueError("started_by: kind must be a non-empty string such as 'webhook'")
	token = _trigger.set(
		{"kind": kind, **{k: v for k, v in details.items() if v not in (None, "")}}
	)
	try:
		yield
	finally:
		_trigger.reset(token)


def current_trigger() -> dict[str, Any] | None:
	"""What started the runs of this context (`started_by`'s kind and details), or None."""
	found = _trigger.get()
	return None if found is None else dict(found)
