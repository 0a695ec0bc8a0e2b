"""A parked status the servers have no special view of still parks the run there: it never fails.

The statuses of a parked run come from the core (`openmolt_core.result.PARKED_STATUSES`); a
status added there (a capability's ``Park``) reaches A2A and AG-UI as a waiting task, an
interrupt and a chat reply that says it waits, not as a failed task, a run error or "could not
finish", before they learn to show it better.
"""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import RunErrorEvent, RunFinishedEvent

from openmolt import OpenMolt
from openmolt_core.llm import Usage
from openmolt_core.result import PARKED_STATUSES, RunResult, RunState
from openmolt_core.secrets import Redactor
from openmolt_core.testing import ScriptedModel, finish
from openmolt_serve import _agui_events, a2a

pytestmark = pytest.mark.anyio

NEW = "payment_required"


def _result(status: str = NEW) -> RunResult:
	state = RunState(run_id="r1", steps=2, pending={"kind": "capability", "calls": []})
	return RunResult(
		output=None,
		status=status,  # type: ignore[arg-type]
		human_message="",
		plan=[],
		steps=2,
		usage=Usage(),
		state=state,
		error="waits for a payment",
	)


class Updater:
	"""The calls an A2A task updater gets."""

	context_id = "c1"
	task_id = "t1"

	def __init__(self) -> None:
		self.calls: list[str] = []

	def __getattr__(self, name: str) -> Any:
		async def record(*args: Any, **kwargs: Any) -> None:
			self.calls.append(name)

		return record


async def test_a2a_parks_a_task_on_a_parked_status_it_does_not_know(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	monkeypatch.setattr(a2a, "PARKED_STATUSES", PARKED_STATUSES | {NEW})
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([finish("x")]))
	executor = a2a.OpenMoltExecutor(agent, lambda key: None)  # type: ignore[arg-type]
	updater = Updater()
	await executor._report(updater, "t1", _result())  # type: ignore[arg-type]
	assert updater.calls == ["requires_auth"] and "t1" in executor.parked


def test_agui_ends_a_run_parked_on_a_status_it_does_not_know_with_an_interrupt(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	monkeypatch.setattr(_agui_events, "PARKED", PARKED_STATUSES | {NEW})
	events = _agui_events.AguiEvents("th", "run", Redactor())
	out = events.finished(_result(), None, [], decide_approvals=False)
	assert not any(isinstance(e, RunErrorEvent) for e in out)
	[finished] = [e for e in out if isinstance(e, RunFinishedEvent)]
	[interrupt] = finished.outcome.interrupts  # type: ignore[union-attr]
	assert interrupt.reason == NEW and "waits for a payment" in interrupt.message


def test_a_chat_says_a_run_waits_on_a_parked_status_it_does_not_know(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	from openmolt_serve import chats

	monkeypatch.setattr(chats, "PARKED_STATUSES", PARKED_STATUSES | {NEW})
	assert chats._reply(_result(), None) == "This waits: waits for a payment"
	assert "could not finish" in chats._reply(_result("failure"), None)
