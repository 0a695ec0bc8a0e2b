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

import pytest

TOGETHER = textwrap.dedent(
	"""
	import json, os, pytest

	pytestmark = pytest.mark.xdist_group("together")

	@pytest.mark.parametrize("i", range(4))
	def test_where(i):
		with open(os.environ["WHERE"], "a") as f:
			f.write(json.dumps([os.environ["PYTEST_XDIST_WORKER"], "together"]) + "\\n")
	"""
)

ORDERED = textwrap.dedent(
	"""
	import json, os, pytest

	def _ran(name):
		with open(os.environ["WHERE"], "a") as f:
			f.write(json.dumps([os.environ["PYTEST_XDIST_WORKER"], name]) + "\\n")

	@pytest.mark.xdist_group("other")
	@pytest.mark.parametrize("i", range(3))
	def test_other(i):
		_ran("other")

	@pytest.mark.xdist_group("dbos-postgres-processes")
	def test_first():
		_ran("first")
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


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
	"""One run on two workers: (worker, group) of each test in the order they ran."""
	folder = tmp_path_factory.mktemp("groups")
	for name in ("test_a.py", "test_b.py"):
		(folder / name).write_text(TOGETHER)
	(folder / "test_c.py").write_text(ORDERED)
	root = str(Path(__file__).resolve().parent.parent)
	(folder / "conftest.py").write_text(CONFTEST.format(root=root))
	where = folder / "where.jsonl"
	done = subprocess.run(
		[sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:randomly"],
		cwd=folder,
		env={**os.environ, "WHERE": str(where)},
		capture_output=True,
		text=True,
		timeout=120,
	)
	assert done.returncode == 0, done.stdout[-2000:]
	return [tuple(json.loads(line)) for line in where.read_text().splitlines()]


def test_a_group_runs_on_one_worker(ran: list[tuple[str, str]]) -> None:
	workers = [worker for worker, group in ran if group == "together"]
	assert len(workers) == 8
	assert len(set(workers)) == 1, ran


def test_the_longest_groups_are_handed_out_first(ran: list[tuple[str, str]]) -> None:
	"""A group of `FIRST` is the first work of a worker, before a group of more tests that
	xdist's own order hands out first (the group "other", 3 tests, would go first, and the one
	test of "dbos-postgres-processes" would wait for a worker to finish it)."""
	[(worker, _)] = [entry for entry in ran if entry[1] == "first"]
	mine = [group for w, group in ran if w == worker]
	assert mine[0] == "first", ran
	assert len(ran) == 12
