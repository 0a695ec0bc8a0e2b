"""The viewer shows what happened outside a run: a stranded durable run, a schedule's skips."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core._durable import RunStrandedEvent
from openmolt_core.runstore import RunStore
from openmolt_core.scheduler import RunRecord, ScheduleEvent
from openmolt_core.testing import ScriptedModel, finish
from openmolt_ui import Viewer

pytestmark = pytest.mark.anyio  # uvicorn serves on asyncio only: the default backend here


async def test_a_stranded_run_and_a_schedules_skip_show_as_such(tmp_path: Path) -> None:
	"""A stranded run is 'stranded' (not killed); a skipped due time lists with its schedule."""
	path = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=path)
	agent = om.create_agent(name="Slow", model=ScriptedModel([finish({"ok": True})]))
	await agent.run("x")
	store = om.run_store
	assert isinstance(store, RunStore)
	[row] = await store.runs()
	with sqlite3.connect(path) as conn:  # as a durable run whose worker died looks
		conn.execute(
			"UPDATE agent_runs SET status = 'running', ended = NULL, pid = 999999999"
			" WHERE run_id = ?",
			(row.run_id,),
		)
	events = agent._events  # as a durable worker and a scheduler emit them
	await events.emit(
		RunStrandedEvent(
			agent="Slow", step=0, run_id=row.run_id, version="v1", current="v2", worker="w"
		)
	)
	due = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
	record = RunRecord(
		schedule_id="nightly",
		agent="Slow",
		due=due,
		started=due,
		ended=due,
		status="skipped",
		note="overlap: a run of agent 'Slow' is still going",
	)
	await events.emit(
		ScheduleEvent(
			agent="Slow", step=0, schedule_id="nightly", record=record, name="schedule:skip"
		)
	)
	async with Viewer(store=path) as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		base = f"http://127.0.0.1:{viewer.port}"
		stranded = (await http.get(f"{base}/api/runs?status=stranded", headers=headers)).json()
		assert [r["run_id"] for r in stranded["runs"]] == [row.run_id]
		assert "'v1'" in stranded["runs"][0]["error"]
		killed = (await http.get(f"{base}/api/runs?status=killed", headers=headers)).json()
		assert killed["runs"] == []
		skips = await http.get(f"{base}/api/runs?trigger=schedule", headers=headers)
		[skip] = skips.json()["runs"]
		assert skip["status"] == "skipped" and skip["trigger"]["where"] == "nightly"
		assert skip["error"] == record.note
		view = (await http.get(f"{base}/api/runs/{row.run_id}", headers=headers)).json()
		assert "run:stranded" in [e["name"] for e in view["events"]]


async def _scheduled_run(om: OpenMolt) -> str:
	"""A run as a schedule drives it: ``schedule:run`` before it starts, ``schedule:end`` after."""
	from openmolt import RunState

	agent = om.create_agent(name="Nightly", model=ScriptedModel([finish({"ok": True})]))
	state = RunState()
	due = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
	record = RunRecord(schedule_id="nightly", agent="Nightly", due=due, started=due)
	fire = ScheduleEvent(
		agent="Nightly", step=0, schedule_id="nightly", record=record, run_id=state.run_id
	)
	await agent._events.emit(fire)  # as the scheduler emits them
	await agent.run("x", history=state)
	record.status, record.ended = "success", due
	end = ScheduleEvent(
		agent="Nightly",
		step=0,
		schedule_id="nightly",
		record=record,
		run_id=state.run_id,
		name="schedule:end",
	)
	await agent._events.emit(end)
	return state.run_id


async def test_a_scheduled_runs_fire_and_end_show_with_it_without_a_store_too(
	tmp_path: Path,
) -> None:
	"""The live view of a run (no run store) holds the events outside it that name it, in order.

	The run store keeps a scheduled run's ``schedule:run`` and ``schedule:end`` with its events;
	the viewer's memory of this process's runs kept neither, so a viewer without a store showed
	the run as if no schedule had started it.
	"""
	stored = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	stored_id = await _scheduled_run(stored)
	assert stored.run_store is not None
	kept = [e.name for e in await stored.run_store.events(stored_id)]
	assert kept[0] == "schedule:run" and kept[-1] == "schedule:end"
	om = OpenMolt(entry_points=False)
	async with Viewer(om) as viewer, httpx.AsyncClient() as http:
		run_id = await _scheduled_run(om)
		headers = {"x-openmolt-token": viewer.token}
		view = (
			await http.get(f"http://127.0.0.1:{viewer.port}/api/runs/{run_id}", headers=headers)
		).json()
	assert view["source"] == "live"
	assert [e["name"] for e in view["events"]] == kept
	assert [e["id"] for e in view["events"]] == list(range(1, len(kept) + 1))
