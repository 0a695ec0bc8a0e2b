"""A conversation's id from outside that can pass for another's is refused before anything runs.

An AG-UI ``threadId``, an A2A ``contextId`` and a webhook payload's ``session`` value name a
session (`openmolt_serve._launch.session_id`); ``run(session=...)`` refuses a session id that
can alias another's (`openmolt_core._support.userids.key_problem`). Each surface says it first,
to the caller: AG-UI and a webhook with a 400 (a 5xx is retried, and a retry fails the same way)
before a thread, a claim or a run is made; A2A with the task failed, naming ``contextId``. The
control characters a payload may hold are escaped by the session id, so those keys still run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _serve_fakes import eventually
from a2a.helpers.proto_helpers import get_text_parts
from a2a.types import TaskState

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_serve._launch import key_refused
from tests.serve.test_serve_a2a_limits import message, send, served
from tests.serve.test_serve_agui_shared import client, post, run_input, server
from tests.serve.test_serve_webhooks import github_headers, serving

pytestmark = pytest.mark.anyio

ALIASES = {
	"zero-width space": "t-1\u200b",
	"full-width": "\uff54-1",
	"trailing space": "t-1 ",
	"leading space": " t-1",
	"Cyrillic among Latin": "\u0442hread-1x\u0430",
	"right-to-left override": "t-1\u202e",
}


def test_the_keys_surfaces_send_are_taken() -> None:
	for key in ["t-1", "7f9c2b0e-1d2c-4a8e-9b1a-2f0c3d4e5f60", "issue\x00\n7", "42", "a:b%c"]:
		assert key_refused("agui", "Helper", key, caller="crm") is None, key
		assert key_refused("hook", "Triage", key) is None, key
	for key in ALIASES.values():
		assert key_refused("agui", "Helper", key) is not None, key


@pytest.mark.parametrize("name", sorted(ALIASES))
async def test_an_agui_thread_id_that_can_alias_another_is_a_400(name: str, tmp_path: Path) -> None:
	model = ScriptedModel([finish("ok")])
	async with server(model, tmp_path) as (a, _), client(a) as crm:
		status, body = await post(crm, run_input(thread=ALIASES[name]))
		assert status == 400, body
		assert "threadId" in str(body) and "refused" in str(body)
		assert model.requests == []
		status, _ = await post(crm, run_input(thread="t-1"))
		assert status == 200
	assert len(model.requests) == 1


@pytest.mark.parametrize("name", ["zero-width space", "full-width", "Cyrillic among Latin"])
async def test_an_a2a_context_id_that_can_alias_another_fails_the_task(name: str) -> None:
	model = ScriptedModel([finish({"result": "Rain."})])
	om = OpenMolt(entry_points=False)
	async with served(om, model) as (a2a, _):
		task = await send(a2a, message("Weather?", context_id=ALIASES[name]))
		assert task.status.state == TaskState.TASK_STATE_FAILED
		said = get_text_parts(task.status.message.parts)[0]
		assert "contextId" in said and "refused" in said, said
		ok = await send(a2a, message("Weather?", context_id="c-1"))
		assert ok.status.state == TaskState.TASK_STATE_COMPLETED
	await om.aclose()
	assert len(model.requests) == 1


@pytest.mark.parametrize("name", ["zero-width space", "full-width", "Cyrillic among Latin"])
async def test_a_payload_session_key_that_can_alias_another_is_a_400(name: str) -> None:
	"""Nothing claimed: the same delivery id with a proper key then runs."""
	model = ScriptedModel([finish("one")])
	async for srv, http in serving(model, {"scheme": "github", "session": "issue.key"}):
		body = json.dumps({"issue": {"key": ALIASES[name]}}).encode()
		refused = await http.post("/hooks/Triage", content=body, headers=github_headers(body))
		assert refused.status_code == 400, refused.text
		assert "issue.key" in refused.json()["error"] and "refused" in refused.json()["error"]
		assert not model.requests
		body = json.dumps({"issue": {"key": "t-1"}}).encode()
		taken = await http.post("/hooks/Triage", content=body, headers=github_headers(body))
		assert taken.status_code == 202, taken.text
		await eventually(lambda: len(model.requests) == 1)
		launcher = srv.launcher
		assert launcher is not None
		await eventually(lambda launcher=launcher: not launcher.running)
