"""`pytest -n N --dist loadgroup` (the suite's command, N=4) keeps each xdist_group on one worker.

The durable tests (a group per store, "dbos-sqlite" and "dbos-postgres", and "dbos-shared" for
those of no one store) and the browser tests
("browser") rely on it: pytest 9.2 with pytest-xdist 3.8 dropped the groups without a word
(pytest-dev/pytest-xdist#1386), and the crash harness was set up once per store on each worker.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

MODULE = textwrap.dedent(
	"""
	import json, os, pytest

	pytestmark = pytest.mark.xdist_group("together")

	@pytest.mark.parametrize("i", range(4))
	def test_where(i):
		with open(os.environ["WHERE"], "a") as f:
			f.write(json.dumps(os.environ["PYTEST_XDIST_WORKER"]) + "\\n")
	"""
)


def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
	for name in ("test_a.py", "test_b.py"):
		(tmp_path / name).write_text(MODULE)
	where = tmp_path / "where.jsonl"
	done = subprocess.run(
		[sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:randomly"],
		cwd=tmp_path,
		env={**os.environ, "WHERE": str(where)},
		capture_output=True,
		text=True,
		timeout=120,
	)
	assert done.returncode == 0, done.stdout[-2000:]
	workers = [json.loads(line) for line in where.read_text().splitlines()]
	assert len(workers) == 8
	assert len(set(workers)) == 1, workers
