"""The durable guide's example runs as written (on a SQLite file of the test's own)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "durable.md"


def test_the_sqlite_example_of_the_guide_runs(tmp_path: Path) -> None:
	"""Park, list, answer from the API, read the result: as the guide prints it."""
	blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
	example = next(b for b in blocks if "durability=store" in b)
	code = example.replace('"runs.sqlite"', repr(str(tmp_path / "runs.sqlite")))
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, timeout=180, cwd=tmp_path
	)
	assert done.returncode == 0, done.stderr[-3000:]
	assert done.stdout.splitlines() == [
		"human_input_required",
		"True Pay INV-1 or INV-2?",
		"success paid INV-2",
	]
	assert (tmp_path / "runs.sqlite").exists()
