"""Fixtures of the durable tests: stores (SQLite and PostgreSQL 15), the fake server, processes.

PostgreSQL comes from ``OPENMOLT_TEST_POSTGRES_URL`` (``.ci/run`` starts a throwaway cluster and
sets it); each test gets a database of its own. Without the variable, PostgreSQL cases skip.

These tests run in five xdist groups, each serially (per store, those that start processes and
those that do not, and one for the tests named for no one store; `_group`), with per-test
timeouts: each one starts real DBOS engines, often in subprocesses.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

# The helpers (_durable.py, _harness.py, crash_agents.py) are imported by the test modules and by
# the worker processes the tests start; this folder is not a package.
_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
	sys.path.insert(0, str(_HERE))

from _durable import FakeServer  # noqa: E402
from _harness import STORES, Proc, make_store, start_python  # noqa: E402


# tryfirst: pytest-xdist's worker reads the xdist_group marks in this same hook to send a group
# to one worker. This conftest is registered before that worker plugin when a run names files
# of this folder (``pytest tests/dbos/test_crash_sqlite.py``), after it when the folder is found
# by collection; hooks run latest-registered first, so without tryfirst such a run spread the
# group over both workers, and each worker set the crash harness up for each store (4 setups).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
	# Whether a folder is this one or below it, asked once per folder: every worker runs this
	# hook over the whole suite's items (16,000), and a Path and its parents made for each item
	# cost each worker about a second of CPU.
	inside: dict[Path, bool] = {}
	for item in items:
		folder = item.path.parent
		here = inside.get(folder)
		if here is None:
			here = inside[folder] = folder == _HERE or _HERE in folder.parents
		if here:
			item.add_marker(pytest.mark.xdist_group(_group(item)))
			if item.get_closest_marker("timeout") is None:
				item.add_marker(pytest.mark.timeout(120))


def _group(item: pytest.Item) -> str:
	"""The xdist group of a durable test: each group runs serially on one worker, the groups side
	by side (each test has its own database, files and ports).

	A store's tests are two groups: those that start processes (a worker, a driver, the crash
	harness: fixtures ``spawn`` and ``crashed``) and those that run in this process; the tests
	named for no one store (their own PostgreSQL database or SQLite file, or none) and the served
	triggers' durable tests (tests/serve) are a fifth, "dbos-shared". With a group per store the
	longest, PostgreSQL's, was the suite's critical path (1,333 s of group time on a loaded
	machine, against 1,045 for SQLite's and 472 for the shared one; its two halves now 727 and
	607 s, the longest group 727 s)."""
	store = next((s for s in STORES if s in item.nodeid), None)
	if store is None:
		return "dbos-shared"
	processes = {"spawn", "crashed"} & set(getattr(item, "fixturenames", ()))
	return f"dbos-{store}-processes" if processes else f"dbos-{store}"


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
	"""A fresh store, on SQLite and on PostgreSQL."""
	yield from make_store(request.param, tmp_path)


@pytest.fixture(params=STORES)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
	"""A fresh store for a durable instance in this process; the engine is shut down after."""
	stores = make_store(request.param, tmp_path)
	store_url = next(stores)
	try:
		yield store_url
	finally:
		from dbos import DBOS

		from openmolt_dbos import _engine

		engine = _engine._ENGINE
		if engine is not None and engine.launched:
			await engine.shutdown()
		DBOS.destroy()
		_engine.reset_engine()
		for _ in stores:
			pass


@pytest.fixture
def tables(store: str) -> Iterator[Any]:
	"""The workers' table on a fresh store (SQLite and PostgreSQL): the engine, disposed after."""
	from openmolt_dbos._workers import create_tables, make_engine

	engine = make_engine(store)
	create_tables(engine)
	try:
		yield engine
	finally:
		engine.dispose()


@pytest.fixture
def server() -> Iterator[FakeServer]:
	"""The fake model and tool server, in a thread."""
	fake = FakeServer()
	yield fake
	fake.close()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
	"""Start subprocesses (killed at the end of the test if still running)."""
	procs: list[Proc] = []

	def start(args: list[str], env: dict[str, str] | None = None, name: str = "proc") -> Proc:
		proc = start_python(args, env, tmp_path / f"{name}-{len(procs)}.log")
		procs.append(proc)
		return proc

	yield start
	for proc in procs:
		if proc.popen.poll() is None:
			proc.kill()
		proc._out.close()
