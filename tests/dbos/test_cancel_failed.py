"""A durable run whose latest segment failed can be cancelled: its kept state then goes nowhere.

A failed run is not over: its error keeps the state it reached (``RunError.result.state``), and
``agent.run(history=that_state)`` (or the parked state delivered again, when the failed segment
ran nothing with effects) goes on with it in a new segment. ``om.cancel`` refused such a run
("has ended (status error); nothing to do"), so nothing could stop a later resume, retry or
surface from going on with it; ``openmolt runs`` showed ``error`` for good.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError, ProviderError, RunCancelledError, RunError
from openmolt_core.llm import ModelRequest
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def _down(request: ModelRequest) -> Any:
	raise ProviderError("the provider is down", provider="scripted", status_code=400)


async def test_a_run_whose_segment_failed_is_cancelled_and_its_kept_state_goes_nowhere(
	url: str,
) -> None:
	"""om.cancel records the cancel; runs says cancelled, result and a resume of the state refuse."""
	notes: list[str] = []

	@tool(labels=["outbound"])
	async def note(text: str) -> str:
		"""Write a note.

		Args:
			text: The note.
		"""
		notes.append(text)
		return "noted"

	model = ScriptedModel(
		[call_tool("local.note", text="a"), _down, call_tool("local.note", text="b"), finish("x")]
	)
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Noter", model=model, tools=[note])
	try:
		with pytest.raises(RunError) as failed:
			await agent.run("note")
		kept = failed.value.result.state
		run_id = kept.run_id
		assert notes == ["a"]
		await om.cancel(run_id)  # before: "run ... has ended (status error); nothing to do"
		runs = await om.durability.runs()  # type: ignore[union-attr]
		assert [(r["run_id"], r["status"]) for r in runs] == [(run_id, "cancelled")]
		with pytest.raises(RunCancelledError, match="was cancelled") as read:
			await om.result(run_id)
		assert read.value.result.state.steps == kept.steps  # the state its failure kept
		with pytest.raises(ConfigurationError, match=f"run {run_id} was cancelled"):
			await agent.run(history=kept)
		assert notes == ["a"] and len(model.requests) == 2  # nothing went on
		await om.cancel(run_id)  # again: nothing changes
	finally:
		await om.aclose()
