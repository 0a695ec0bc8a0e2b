"""What the durable tests share besides fixtures: paths, stores, and the processes they start.

Test modules import these from here, never from ``conftest`` (the name of every folder's
conftest: which one ``import conftest`` finds depends on what else the run collected).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
"""This folder: the helpers (_durable.py, crash_agents.py) are imported from it by the test
modules and by the worker processes the tests start (it is not a package)."""

POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
STORES = ["sqlite", "postgres"]


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


async def until(check: Any, what: str, seconds: float = 30) -> None:
	"""Wait until ``check()`` is true; fail naming ``what`` after ``seconds``."""
	import anyio

	deadline = time.monotonic() + seconds
	while not check():
		assert time.monotonic() < deadline, f"no {what} in {seconds} s"
		await anyio.sleep(0.02)


async def start_held(om: Any, name: str, run_id: str) -> tuple[Any, list[str], Any, Any]:
	"""Start a durable run whose one tool call waits for a gate; return once the call is made.

	Returns:
		The gate (set it to let the call end), the calls made, the run's handle, its model.
	"""
	import anyio

	from openmolt_core.testing import ScriptedModel, call_tool, finish

	gate = anyio.Event()
	calls: list[str] = []

	async def slow(what: str) -> str:
		"""Wait for the gate.

		Args:
			what: Anything.
		"""
		calls.append(what)
		await gate.wait()
		return what

	model = ScriptedModel([call_tool("local.slow", what="x"), finish(result="done")])
	agent = om.create_agent(name=name, model=model, tools=[slow])
	handle = await agent.start("go", run_id=run_id)
	await until(lambda: calls, "the call")
	return gate, calls, handle, model
