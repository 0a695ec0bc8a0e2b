"""An edited input nests no deeper than a model's reply may: the person's edit is held to the same.

A model's reply nested past `DEFAULT_MAX_DEPTH` levels runs nothing, and every served body is
refused past it; an approval's edit (a handler's ``approve(input=...)``, the run viewer's JSON,
the terminal's) had no bound: 600 levels ran the tool and went into the state and the journal,
and near Python's recursion limit the decision was refused as ``forged`` (its digest could not
be computed), which said the wrong thing.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._parse import DEFAULT_MAX_DEPTH
from openmolt_core.decisions import ApprovalDecision, ApprovalRequest
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


def _nested(levels: int) -> dict[str, Any]:
	"""An object ``levels`` objects deep (itself counted)."""
	value: dict[str, Any] = {}
	inner = value
	for _ in range(levels - 1):
		inner["a"] = {}
		inner = inner["a"]
	return value


async def _run(data: dict[str, Any]) -> tuple[list[Any], ScriptedModel, list[Any]]:
	ran: list[Any] = []

	def store(data: dict) -> str:
		"""Store data.

		Args:
			data: Anything.
		"""
		ran.append(data)
		return "ok"

	def edited(request: ApprovalRequest) -> ApprovalDecision:
		return request.approve(input={"data": data})

	model = ScriptedModel([call_tool("local.store", data={}), finish()])
	agent = OpenMolt(entry_points=False).create_agent(
		name="S",
		model=model,
		tools=[store],
		requires_approval=["local.store"],
		on_approval_request=edited,
	)
	errors: list[Any] = []
	agent.on("error", errors.append)
	await agent.run("go")
	return ran, model, errors


@pytest.mark.parametrize("levels", [DEFAULT_MAX_DEPTH, 600, 980])
async def test_an_edit_nested_past_a_replys_bound_does_not_run(levels: int) -> None:
	"""Refused as invalid, saying how deep it may be; the tool does not run."""
	ran, model, errors = await _run(_nested(levels))
	assert ran == []
	[entry] = model.last_turn()["results"]
	assert "refused (invalid)" in entry["error"], entry
	assert "nested more than" in errors[0].message


async def test_an_edit_within_the_bound_runs() -> None:
	"""An edit a model could have written runs as before."""
	ran, _, _ = await _run(_nested(10))
	assert len(ran) == 1
