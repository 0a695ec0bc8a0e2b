"""`openmolt serve` prints a scheduled run's record and a run's line with a URL's login masked.

The record's JSON line on stdout and the run's line on stderr said what the run gave (a
connection string's password no source knows) as is, where a served answer masks it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

PASSWORD = "Pw-7f3a9e21c4d8"
URL = f"postgresql://app:{PASSWORD}@db.example/runs"


def test_a_scheduled_runs_record_line_masks_a_urls_login(tmp_path: Path) -> None:
	(tmp_path / "echo.json").write_text(
		json.dumps(
			{
				"name": "Echo",
				"model": "echo:v1",
				"schedules": [{"type": "interval", "value": 0.3}],
				"input": URL,
			}
		)
	)
	proc = subprocess.Popen(
		[sys.executable, "-m", "openmolt", "serve", str(tmp_path / "echo.json"), "--port", "0"],
		stdout=subprocess.PIPE,
		stderr=subprocess.PIPE,
		text=True,
		env={**os.environ, "OPENMOLT_RUN_STORE": str(tmp_path / "runs.db")},
		cwd=tmp_path,
	)
	try:
		assert proc.stdout is not None
		first = proc.stdout.readline()  # the first scheduled run's record
		time.sleep(0.1)
	finally:
		proc.send_signal(signal.SIGTERM)
		out, err = proc.communicate(timeout=60)
	record = json.loads(first)
	assert record["status"] == "success", (first, err)
	assert "postgresql://app:[redacted]@db.example/runs" in first, first
	assert PASSWORD not in first + out + err, first + out + err


@pytest.mark.anyio
async def test_a_runs_line_masks_a_urls_login_in_its_error(
	capsys: pytest.CaptureFixture[str],
) -> None:
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_serve import cli
	from openmolt_serve._lines import RunLines

	def failing(request: object) -> dict[str, object]:
		raise RuntimeError(f"could not connect to {URL}")

	om = OpenMolt(entry_points=False)
	om.observers.append(RunLines(cli._line))
	agent = om.create_agent(name="Triage", model=ScriptedModel([failing]))
	with pytest.raises(Exception):  # noqa: B017 - the run's own error
		await agent.run("go")
	await om.aclose()
	err = capsys.readouterr().err
	assert "could not connect to postgresql://app:[redacted]@db.example" in err, err
	assert PASSWORD not in err
