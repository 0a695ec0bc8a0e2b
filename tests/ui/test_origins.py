"""The viewer's origin menu offers what runs record, and only that."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core.observe import started_by
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_ui._choices import ORIGINS

pytestmark = pytest.mark.anyio


async def test_every_origin_a_run_records_is_in_the_menu_and_operator_is_not(
	tmp_path: Path,
) -> None:
	"""Python's run (api), the CLI's (cli) and a sub-agent's (agent) can each be filtered by."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	helper = om.create_agent(
		name="helper", instructions="Helps.", model=ScriptedModel([finish({"n": 1})])
	)
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.helper", task="x"), finish({"n": 2})]),
		tools=[helper],
	)
	await boss.run("go")
	with started_by("cli", where="boss"):
		await om.create_agent(name="solo", model=ScriptedModel([finish({"n": 3})])).run("go")
	assert om.run_store is not None
	recorded = {(r.trigger or {}).get("kind") for r in await om.run_store.runs()}
	assert recorded == {"api", "agent", "cli"}
	assert recorded <= set(ORIGINS)
	assert "operator" not in ORIGINS  # a trust class, never a run's recorded kind
	await om.aclose()
