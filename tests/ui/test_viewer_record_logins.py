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


def test_an_events_data_masks_what_the_story_s_rule_masks_now() -> None:
	"""A stored event is a run's story: the store's own rule (`mask_urls`) again as it is served.

	An older writer, or another process's, kept a ``?api_key=`` or a ``?code=`` the rule masks
	now; the page showed them (it read events with the output's rule, logins only).
	"""
	key, code = "k3y-7f3a9e21c4d8b6a0", "c0de-5d1e0f7a9b"
	data = {
		"input": {"url": f"https://api.example/v1/x?api_key={key}"},
		"response": f"redirected to https://app.example/cb?code={code}",
	}
	out = described({"name": "tool:response", "data": data})
	assert key not in json.dumps(out) and code not in json.dumps(out), out
	assert "api.example" in out["data"]["input"]["url"]
