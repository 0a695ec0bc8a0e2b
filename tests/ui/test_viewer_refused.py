"""An answer to a run another surface went on with is refused, and says so."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_ui import Viewer

pytestmark = pytest.mark.anyio


def _nobody(question: str) -> str:
	raise HumanInputUnavailable("not now")


async def test_an_answer_to_a_run_another_server_took_says_it_went_on(tmp_path: Path) -> None:
	"""The page's answer after a server took the parked run read 'no parked run waits with that
	id', as for a run that never was; it now says the run went on elsewhere, and nothing ran."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	model = ScriptedModel([ask_human("Which city?"), finish("Oslo")])
	agent = om.create_agent(name="Desk", model=model, on_human_input_request=_nobody)
	parked = (await agent.run("go")).state
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		base = f"http://127.0.0.1:{viewer.port}/api/questions/parked:{parked.run_id}"
		assert om.run_store is not None
		assert await om.run_store.claim_parked(parked.run_id, parked.steps)  # a server took it
		answer = await http.post(base, json={"answer": "Bergen"}, headers=headers)
		assert answer.status_code == 404
		assert "waits for an answer no more: it is running now" in answer.json()["error"]
		nowhere = await http.post(f"{base}x", json={"answer": "Bergen"}, headers=headers)
		assert nowhere.json()["error"] == "no parked run waits with that id"
	assert model.calls == 1  # nothing resumed here
	await om.aclose()
