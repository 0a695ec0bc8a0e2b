"""What the command prints keeps non-ASCII text as it is: no \\u escapes, JSON or not."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._info import list_integrations
from openmolt_core.integrations import ApiSetup, HttpTool, Integration


def test_a_wrong_value_in_an_agent_file_is_quoted_as_written(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""maxSteps: "dix étapes" is said with its é, not \\u00e9."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	agent = {"name": "a", "model": "openai:gpt-5-mini", "maxSteps": "dix étapes ✓"}
	(tmp_path / "agent.json").write_text(json.dumps(agent, ensure_ascii=False))
	assert openmolt_main(["agent.json"]) == 2
	err = capsys.readouterr().err
	assert '(got "dix étapes ✓")' in err and "\\u" not in err, err


def test_integrations_listed_as_json_keep_their_names() -> None:
	"""`openmolt tools --json`: a plugin named Météo is Météo."""
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"meteo",
		Integration(
			id="meteo",
			name="Météo ✓",
			api_setup=ApiSetup(base_url="https://api.example.com"),
			scopes={"lire": "Lire les prévisions."},
			tools=[HttpTool(handle="prevision", description="Prévision", endpoint="/p")],
		),
	)
	out = io.StringIO()
	list_integrations(om, out, as_json=True)
	assert '"name": "Météo ✓"' in out.getvalue()
	assert "\\u" not in out.getvalue()
