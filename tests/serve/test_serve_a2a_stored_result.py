"""A2A reads a run's result from the run store by its own finish event, never a sub-run's."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from openmolt_core.result import RunResult, RunState
from openmolt_serve.a2a import _stored_result

pytestmark = pytest.mark.anyio


class _Store:
	"""The run store's reads `_stored_result` makes, over one run and its events."""

	def __init__(self, status: str, events: list[tuple[str, dict[str, Any]]]) -> None:
		self.row = SimpleNamespace(status=status, output=None, steps=3, error="it failed")
		self.rows = [
			SimpleNamespace(id=n, name=name, data=data) for n, (name, data) in enumerate(events, 1)
		]

	async def run(self, run_id: str) -> Any:
		return self.row

	async def state(self, run_id: str) -> RunState:
		return RunState(run_id=run_id)

	async def events(self, run_id: str, *, after: int = 0, limit: int = 1000) -> list[Any]:
		return [e for e in self.rows if e.id > after][:limit]


def _finish(status: str, message: str) -> dict[str, Any]:
	state = RunState(run_id="r")
	result = RunResult(
		output={"said": message},
		status=status,  # type: ignore[arg-type]
		human_message=message,
		plan=[],
		steps=3,
		usage=state.usage,
		state=state,
	)
	return {"result": {k: v for k, v in result.to_dict().items() if k != "state"}}


async def test_a_sub_runs_finish_is_never_taken_for_the_runs_result() -> None:
	"""A run that ended without a finish of its own (an error) beside a sub-run's finish of
	the same status was answered with the sub-run's output and message; a sub-run's events
	under its caller's run carry ``sub_run_id``."""
	sub = {**_finish("error", "the helper's words"), "sub_run_id": "r1.1.0"}
	om = SimpleNamespace(run_store=_Store("error", [("finish", sub)]))
	result = await _stored_result(om, "r1")  # type: ignore[arg-type]
	assert result is not None
	assert result.human_message == "" and result.output is None
	assert result.error == "it failed"
	own = _finish("error", "the run's own words")
	om = SimpleNamespace(run_store=_Store("error", [("finish", sub), ("finish", own)]))
	result = await _stored_result(om, "r1")  # type: ignore[arg-type]
	assert result is not None and result.human_message == "the run's own words"
