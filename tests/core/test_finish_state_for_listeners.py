"""The ``finish`` event hands listeners a masked copy of the run's state; ``run()`` the real one.

A listener is a copy of what the run shows to someone else (a log, a dashboard, a queue): it
fails closed, so a URL's key the model read (``?api_key=``) is masked in ``event.result.state``
as in every event. A state saved from it to resume later has lost that key, and the model would
go on with ``[redacted]``; what ``run()`` (or ``resume()``, ``await stream.result()``) returns is
the caller's own and holds it (docs/guides/agents.md says to save that one).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import HumanInputUnavailable, OpenMolt, RunState
from openmolt_core.testing import ScriptedModel, ask_human, finish

pytestmark = pytest.mark.anyio

KEY = "k3y-5d1e0f7a9b2c4e6f"
LINK = f"https://api.example/v1/report?api_key={KEY}"


def _later(question: str) -> str:
	raise HumanInputUnavailable(question)


async def test_a_listener_gets_the_state_masked_and_run_returns_it_whole() -> None:
	model = ScriptedModel([[ask_human("Which month?")], finish("fetched")])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Reporter", model=model)
	agent.on_human_input_request = _later
	heard: list[Any] = []
	agent.on("finish", lambda event: heard.append(event.result.state.to_dict()))
	parked = await agent.run(f"Fetch the report from {LINK}")
	assert parked.status == "human_input_required"
	(saved_by_listener,) = heard
	assert KEY not in json.dumps(saved_by_listener)  # fail closed: a listener is someone else
	assert KEY in json.dumps(parked.state.to_dict())  # the caller's own: whole
	done = await agent.resume(RunState.from_dict(parked.state.to_dict()), answer="May")
	assert done.status == "success"
	assert KEY in model.requests[-1].messages[0].content  # the model still reads its link
	await om.aclose()
