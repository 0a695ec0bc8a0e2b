"""Every way a run can wait shows in the viewer: listed as waiting, with what it waits for, redacted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest

from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.hooks import Capability, Park
from openmolt_core.result import RunStatus
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, mock_http
from openmolt_ui import Viewer
from openmolt_weather import weather

pytestmark = pytest.mark.anyio

SECRET = "wx-secret-789"


class Hold(Capability):
	"""Parks every weather call until the hold desk says so (its request names the key)."""

	name = "hold-desk"

	def __init__(self, status: Any) -> None:
		self.status = status

	async def before_tool(self, run: Any, call: Any, tool: Any) -> Any:
		return Park(f"the hold desk checks key {SECRET}", {"ticket": 7, "key": SECRET}, self.status)


def _nobody(question: str) -> str:
	raise HumanInputUnavailable("not now")


def _om(store: Path) -> OpenMolt:
	om = OpenMolt(
		entry_points=False,
		run_store=store,
		http_client=mock_http(lambda request: httpx.Response(200, json={"summary": "rain"})),
		integrations={"weather": {"apiKey": SECRET}},
	)
	om.register_integration("weather", weather.WEATHER)
	return om


async def _parked_runs(om: OpenMolt) -> dict[str, str]:
	"""One run per way of waiting, by what it waits for; returns run ids by case."""
	weather_call = call_tool("weather.getForecast", city="Oslo")
	ids: dict[str, str] = {}
	for status in ("approval_required", "human_input_required", "authorization_required"):
		agent = om.create_agent(
			name=f"Held-{status}",
			model=ScriptedModel([weather_call]),
			integrations=["weather"],
			capabilities=[Hold(status)],
		)
		result = await agent.run("weather?")
		assert result.status == status and result.state.pending["kind"] == "capability"
		ids[f"capability:{status}"] = result.state.run_id
	asker = om.create_agent(
		name="Asker",
		model=ScriptedModel([ask_human(f"Which city? ({SECRET})")]),
		on_human_input_request=_nobody,
		integrations=["weather"],
	)
	ids["question"] = (await asker.run("weather?")).state.run_id
	gated = om.create_agent(
		name="Gated",
		model=ScriptedModel([weather_call]),
		integrations=["weather"],
		requires_approval=["weather.getForecast"],
	)
	result = await gated.run("weather?")
	assert result.status == "approval_required" and result.state.pending["kind"] == "approval"
	ids["approval"] = result.state.run_id
	return ids


@pytest.mark.parametrize("live", [False, True])
async def test_every_parked_run_is_listed_as_waiting_with_what_it_waits_for(
	tmp_path: Path, live: bool
) -> None:
	"""Runs parked by a capability (any status), a question or an approval are all waiting items.

	From the store (another process's runs) and live (this process's, watched by the viewer).
	"""
	store = tmp_path / "runs.db"
	om = _om(store)
	viewer = Viewer(om) if live else Viewer(store=store)
	if not live:
		ids = await _parked_runs(om)
	async with viewer, httpx.AsyncClient() as http:
		if live:
			ids = await _parked_runs(om)
		headers = {"x-openmolt-token": viewer.token}
		base = f"http://127.0.0.1:{viewer.port}"
		state = (await http.get(f"{base}/api/state", headers=headers)).json()
		listed = (await http.get(f"{base}/api/runs", headers=headers)).json()["runs"]
		page = {
			run_id: (await http.get(f"{base}/api/runs/{run_id}", headers=headers)).json()["run"]
			for run_id in ids.values()
		}
	assert SECRET not in json.dumps(state) + json.dumps(listed) + json.dumps(page)
	waiting = {item["run_id"]: item for item in state["questions"] + state["approvals"]}
	assert set(waiting) == set(ids.values())  # every parked run waits for someone
	rows = {row["run_id"]: row for row in listed}
	for case, run_id in ids.items():
		assert rows[run_id]["waiting_for"], case  # the run list says what it waits for
		assert page[run_id]["waiting_for"] == rows[run_id]["waiting_for"], case
	for status in ("approval_required", "human_input_required", "authorization_required"):
		run_id = ids[f"capability:{status}"]
		item = waiting[run_id]
		assert item["by"] == "hold-desk" and item["can_answer"] is False
		assert item["request"] == {"ticket": 7, "key": "[redacted]"}
		assert "weather.getForecast" in item["message"] and "hold desk" in item["message"]
		assert "hold-desk" in rows[run_id]["waiting_for"]
		assert "agent.resume(state, given=" in item["how"]
	assert rows[ids["question"]]["waiting_for"] == "an answer to: Which city? ([redacted])"
	await om.aclose()
	assert "weather.getForecast" in rows[ids["approval"]]["waiting_for"]


async def test_the_list_filters_by_every_status_a_run_can_end_with(tmp_path: Path) -> None:
	"""Each RunStatus is a status the list accepts (a new one cannot be forgotten)."""
	async with Viewer(store=tmp_path / "r.db") as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		for status in get_args(RunStatus):
			answer = await http.get(
				f"http://127.0.0.1:{viewer.port}/api/runs?status={status}", headers=headers
			)
			assert answer.status_code == 200, status
