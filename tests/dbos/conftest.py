"""Fixtures of the durable tests: stores (SQLite and PostgreSQL 15), the fake server, processes.

PostgreSQL comes from ``OPENMOLT_TEST_POSTGRES_URL`` (``.ci/run`` starts a throwaway cluster and
sets it); each test gets a database of its own. Without the variable, PostgreSQL cases skip.

These tests run serially per store (an xdist group each: SQLite's, PostgreSQL's) with per-test
timeouts: each one starts real DBOS engines, often in subprocesses.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

# The helpers (_durable.py, crash_agents.py) are imported by the test modules and by the worker
# processes the tests start; this folder is not a package.
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
	sys.path.insert(0, str(HERE))

from _durable import FakeServer  # noqa: E402

POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
STORES = ["sqlite", "postgres"]


# tryfirst: pytest-xdist's worker reads the xdist_group marks in this same hook to send a group
# to one worker. This conftest is registered before that worker plugin when a run names files
# of this folder (``pytest tests/dbos/test_crash_sqlite.py``), after it when the folder is found
# by collection; hooks run latest-registered first, so without tryfirst such a run spread the
# group over both workers, and each worker set the crash harness up for each store (4 setups).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
	for item in items:
		if HERE in Path(str(item.fspath)).parents or Path(str(item.fspath)).parent == HERE:
			item.add_marker(pytest.mark.xdist_group(_group(item)))
			if item.get_closest_marker("timeout") is None:
				item.add_marker(pytest.mark.timeout(120))


def _group(item: pytest.Item) -> str:
	"""The xdist group of a durable test: one per store, so each store's tests run serially
	and the two stores' tests on two workers side by side (each database its own). A test
	of no one store goes with PostgreSQL's, the shorter group (SQLite's has the serve tests)."""
	return "dbos-sqlite" if "sqlite" in item.nodeid else "dbos-postgres"


def _postgres_database() -> Iterator[str]:
	if not POSTGRES_URL:
		pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL (.ci/run starts a cluster)")
	import psycopg

	name = f"om_{uuid.uuid4().hex[:12]}"
	admin = POSTGRES_URL
	with psycopg.connect(admin, autocommit=True) as conn:
		conn.execute(f'CREATE DATABASE "{name}"')
	base, _, _ = admin.rpartition("/")
	try:
		yield f"{base}/{name}"
	finally:
		with psycopg.connect(admin, autocommit=True) as conn:
			conn.execute(
				"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
				(name,),
			)
			conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def make_store(kind: str, tmp_path: Path) -> Iterator[str]:
	"""A fresh store of the kind: a SQLite file, or a new PostgreSQL database."""
	if kind == "sqlite":
		yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
	else:
		yield from _postgres_database()


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
def server() -> Iterator[FakeServer]:
	"""The fake model and tool server, in a thread."""
	fake = FakeServer()
	yield fake
	fake.close()


class Proc:
	"""A subprocess of the test (a worker or a driver); its output goes to a file."""

	def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
		self.log = log
		self._out = log.open("w")
		self.started = time.time()
		self.popen = subprocess.Popen(
			args, env=env, stdout=self._out, stderr=subprocess.STDOUT, cwd=HERE
		)

	def output(self) -> str:
		if not self._out.closed:
			self._out.flush()
		return self.log.read_text(errors="replace")

	def wait_line(self, text: str, timeout: float = 90) -> float:
		"""Wait until the process printed a line holding ``text``; the time it was seen."""
		deadline = time.time() + timeout
		while time.time() < deadline:
			if text in self.output():
				return time.time()
			if self.popen.poll() is not None:
				raise AssertionError(f"the process ended early:\n{self.output()[-4000:]}")
			time.sleep(0.05)
		raise AssertionError(f"no line {text!r} in time:\n{self.output()[-4000:]}")

	def kill(self) -> None:
		"""SIGKILL, as a crash."""
		if self.popen.poll() is None:
			self.popen.send_signal(signal.SIGKILL)
		self.popen.wait(30)
		self._out.close()

	def stop(self, timeout: float = 60) -> int:
		"""SIGTERM, then wait (SIGKILL if it does not stop)."""
		if self.popen.poll() is None:
			self.popen.send_signal(signal.SIGTERM)
		try:
			return self.popen.wait(timeout)
		except subprocess.TimeoutExpired:
			self.popen.kill()
			self.popen.wait(30)
			raise AssertionError(f"the process did not stop:\n{self.output()[-4000:]}") from None
		finally:
			self._out.close()


def start_python(args: list[str], env: dict[str, str] | None, log: Path) -> Proc:
	"""Start ``python ARGS`` in tests/dbos with this folder importable; output to ``log``."""
	full = dict(os.environ)
	full["PYTHONPATH"] = os.pathsep.join([str(HERE), full.get("PYTHONPATH", "")])
	full.update(env or {})
	return Proc([sys.executable, *args], full, log)


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
