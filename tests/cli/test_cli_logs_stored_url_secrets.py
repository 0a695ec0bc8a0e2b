"""``openmolt logs`` masks the URL secrets of events a store kept unmasked (an older writer's).

The run store masks a URL's password and its secret query values as it writes an event
(`mask_urls`), but the rule grows (``?code=`` and the double encodings came later), and a store
is written by other processes and versions: ``openmolt logs RUN`` and its ``--json`` re-masked
the known secrets only, and printed an event's ``?api_key=`` or ``?code=`` as the store held
it. An event is a run's story, read with the story's rule again; the output keeps its links
(a person's deliverable, `mask_url_logins_deep`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

KEY = "k3y-7f3a9e21c4d8b6a0"
CODE = "c0de-5d1e0f7a9b"
PASSWORD = "Pw-7f3a9e21c4d8"
STORED = {
	"tool": "local.fetch",
	"input": {"url": f"https://api.example/v1/x?api_key={KEY}"},
	"response": f"redirected to https://app.example/cb?code={CODE}; db postgresql://app:{PASSWORD}@db/x",
}


@pytest.mark.parametrize("as_json", [False, True])
def test_openmolt_logs_masks_a_stored_event_s_url_secrets(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, as_json: bool
) -> None:
	from openmolt import OpenMolt
	from openmolt_core.cli import main
	from openmolt_core.testing import ScriptedModel, finish

	async def run() -> str:
		om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
		agent = om.create_agent(name="Helper", model=ScriptedModel([finish({"result": "ok"})]))
		result = await agent.run("go")
		await om.aclose()
		return result.state.run_id

	run_id = anyio.run(run)
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(tmp_path / "runs.db"))
	with sqlite3.connect(tmp_path / "runs.db") as db:  # as an older writer kept it
		db.execute(
			"INSERT INTO run_events (run_id, seq, name, step, time, data) VALUES (?,?,?,?,?,?)",
			(run_id, 99, "tool:response", 1, "2026-12-07T00:00:00+00:00", json.dumps(STORED)),
		)
	capsys.readouterr()
	assert main(["logs", run_id, *(["--json"] if as_json else [])]) == 0, capsys.readouterr().err
	out = capsys.readouterr().out
	assert "tool:response" in out
	for secret in (KEY, CODE, PASSWORD):
		assert secret not in out, (secret, out)
	assert "api.example" in out and "[redacted]" in out
