"""The viewer shows a run's error and its events with a URL's login masked, as its output."""

from __future__ import annotations

import json

from openmolt_ui.viewer import _shown, described

PASSWORD = "Pw-7f3a9e21c4d8"
URL = f"postgresql://app:{PASSWORD}@db.example/runs"
SHOWN = "postgresql://app:[redacted]@db.example/runs"


def test_a_runs_row_masks_the_login_in_its_error_too() -> None:
	row = {"run_id": "r1", "status": "error", "output": URL, "error": f"could not reach {URL}"}
	out = _shown(row)
	assert PASSWORD not in json.dumps(out), out
	assert out["error"] == f"could not reach {SHOWN}" and out["output"] == SHOWN


def test_an_events_data_masks_the_login() -> None:
	event = {"name": "llmOutput", "data": {"output": f'{{"greeting": "{URL}"}}'}}
	out = described(event)
	assert PASSWORD not in json.dumps(out), out
	assert SHOWN in out["data"]["output"]
