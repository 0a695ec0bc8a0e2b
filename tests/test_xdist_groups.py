"""`pytest -n N --dist loadgroup` (the suite's command, N=4) keeps each xdist_group on one worker.

The durable tests (two groups per store, "dbos-sqlite" and "dbos-sqlite-processes", the same for
PostgreSQL, and "dbos-shared" for those of no one store) and the browser tests ("browser") rely
on it: pytest 9.2 with pytest-xdist 3.8 dropped the groups without a word
(pytest-dev/pytest-xdist#1386), and the crash harness was set up once per store on each worker.
The groups of `tests._xdist_order.FIRST` are handed out before the others.
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


ORDERED = textwrap.dedent(
	"""
	import json, os, pytest

	@pytest.mark.xdist_group("many")
	@pytest.mark.parametrize("i", range(6))
	def test_many(i):
		with open(os.environ["WHERE"], "a") as f:
			f.write(json.dumps("many") + "\\n")

	@pytest.mark.xdist_group("dbos-postgres-processes")
	def test_few():
		with open(os.environ["WHERE"], "a") as f:
			f.write(json.dumps("few") + "\\n")
	"""
)

CONFTEST = textwrap.dedent(
	"""
	import sys
	sys.path.insert(0, {root!r})
	from tests._xdist_order import make_scheduler

	def pytest_xdist_make_scheduler(config, log):  # as tests/conftest.py does
		return make_scheduler(config, log)
	"""
)


def test_the_longest_groups_are_handed_out_first(tmp_path: Path) -> None:
	"""A group of `FIRST` goes to a worker before a group of more tests (xdist's own order
	hands the group of more tests out first)."""
	(tmp_path / "test_order.py").write_text(ORDERED)
	root = str(Path(__file__).resolve().parent.parent)
	(tmp_path / "conftest.py").write_text(CONFTEST.format(root=root))
	where = tmp_path / "where.jsonl"
	done = subprocess.run(
		[sys.executable, "-m", "pytest", "-n", "1", "--dist", "loadgroup", "-p", "no:randomly"],
		cwd=tmp_path,
		env={**os.environ, "WHERE": str(where)},
		capture_output=True,
		text=True,
		timeout=120,
	)
	assert done.returncode == 0, done.stdout[-2000:]
	ran = [json.loads(line) for line in where.read_text().splitlines()]
	assert ran == ["few"] + ["many"] * 6, ran
