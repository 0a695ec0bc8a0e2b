"""A run store keeps one SQLite connection: opened at first use, closed by `OpenMolt.aclose`.

Each write used to open its own connection, which made, checkpointed and deleted the
write-ahead log every time (a one-step run: 6 connections, 20 ``fdatasync`` calls). Now one
connection serves every call of a store, one worker thread at a time; what it commits is read
by other processes at once and survives the writer's crash.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.runstore import RunStore
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


@tool(labels=[])
def double(n: int) -> int:
	"""Twice n."""
	return 2 * n


def has_wal(path: Path) -> bool:
	"""Whether the store's write-ahead log is there (its connection is open)."""
	return Path(f"{path}-wal").exists()


def count_connects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
	"""Every ``sqlite3.connect`` from now on, by the path it opened."""
	opened: list[str] = []
	connect = sqlite3.connect

	def counted(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
		opened.append(str(database))
		return connect(database, *args, **kwargs)

	monkeypatch.setattr(sqlite3, "connect", counted)
	return opened


async def test_a_run_and_its_reads_use_one_connection(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A two-step run (its start, every event, its end) and the reads after it: one connection."""
	path = tmp_path / "runs.db"
	opened = count_connects(monkeypatch)
	om = OpenMolt(entry_points=False, run_store=path)
	model = ScriptedModel([[call_tool("local.double", n=2)], finish(answer=4)])
	agent = om.create_agent(name="A", model=model, tools=[double])
	result = await agent.run("go")
	assert om.run_store is not None
	(run,) = await om.run_store.runs()
	assert run.run_id == result.state.run_id and run.status == "success"
	assert len(await om.run_store.events(run.run_id)) >= 5
	await om.aclose()
	assert opened.count(str(path)) == 1


async def test_aclose_closes_the_connection_and_a_later_call_opens_another(
	tmp_path: Path,
) -> None:
	"""Open, the store keeps its write-ahead log; `aclose` checkpoints and removes it."""
	path = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=path)
	agent = om.create_agent(name="A", model=ScriptedModel([finish(answer=1)]))
	await agent.run("hi")
	assert has_wal(path)  # the connection is open
	await om.aclose()
	assert not has_wal(path)
	assert om.run_store is not None
	(run,) = await om.run_store.runs()  # usable again: a new connection
	assert run.status == "success"
	om.run_store.close()
	assert not has_wal(path)


async def test_concurrent_runs_share_the_connection_one_thread_at_a_time(tmp_path: Path) -> None:
	"""Twenty runs at once (worker threads writing together) are all recorded whole."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	agents = [
		om.create_agent(
			name=f"A{i}",
			model=ScriptedModel([[call_tool("local.double", n=i)], finish(answer=2 * i)]),
			tools=[double],
		)
		for i in range(20)
	]
	async with anyio.create_task_group() as tg:
		for agent in agents:
			tg.start_soon(agent.run, "go")
	assert om.run_store is not None
	runs = await om.run_store.runs()
	assert sorted(r.agent for r in runs) == sorted(a.name for a in agents)
	assert {r.status for r in runs} == {"success"}
	for run in runs:
		names = [e.name for e in await om.run_store.events(run.run_id)]
		assert names.count("tool:response") == 1 and names[-1] == "finish"
	await om.aclose()


_WRITER = textwrap.dedent(
	"""
	import asyncio, os, signal, sys
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, finish

	async def main():
		om = OpenMolt(entry_points=False, run_store=sys.argv[1])
		agent = om.create_agent(name="Writer", model=ScriptedModel([finish(answer=42)]))
		result = await agent.run("from another process")
		print(result.state.run_id, flush=True)
		if sys.argv[2] == "crash":
			sys.stdin.readline()  # the reader reads while this connection is open
			os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint, no exit handlers

	asyncio.run(main())
	"""
)


async def read_back(path: Path, run_id: str) -> tuple[str, list[str]]:
	"""The run's status and event names, read with a store of this process's own."""
	store = RunStore(path)
	try:
		run = await store.run(run_id)
		assert run is not None and run.output == {"answer": 42}
		return run.status, [e.name for e in await store.events(run_id)]
	finally:
		store.close()


def test_another_process_reads_a_committed_run_and_a_crash_loses_none_of_it(
	tmp_path: Path,
) -> None:
	"""The writer's connection open, then the writer killed: the run is read whole both times."""
	path = tmp_path / "runs.db"
	with subprocess.Popen(
		[sys.executable, "-c", _WRITER, str(path), "crash"],
		stdin=subprocess.PIPE,
		stdout=subprocess.PIPE,
		text=True,
	) as writer:
		try:
			assert writer.stdout is not None and writer.stdin is not None
			run_id = writer.stdout.readline().strip()
			while_open = anyio.run(read_back, path, run_id)
			assert while_open[0] == "success" and while_open[1][-1] == "finish"
			writer.stdin.write("go\n")
			writer.stdin.flush()
			assert writer.wait(timeout=60) == -signal.SIGKILL
		finally:
			if writer.poll() is None:
				writer.kill()
	assert anyio.run(read_back, path, run_id) == while_open


def test_a_store_left_open_is_closed_at_exit(tmp_path: Path) -> None:
	"""A program that never calls ``aclose``: the interpreter's exit closes the connection
	(the write-ahead log checkpointed and removed), and the run is there."""
	path = tmp_path / "runs.db"
	done = subprocess.run(
		[sys.executable, "-c", _WRITER, str(path), "exit"],
		capture_output=True,
		text=True,
		timeout=120,
		check=True,
	)
	assert not Path(f"{path}-wal").exists()
	conn = sqlite3.connect(path)
	try:
		row = conn.execute(
			"SELECT status FROM agent_runs WHERE run_id = ?", (done.stdout.strip(),)
		).fetchone()
	finally:
		conn.close()
	assert row == ("success",)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_fork_closes_the_connection_and_both_processes_record(tmp_path: Path) -> None:
	"""A store open when the process forks (``multiprocessing``'s default on Linux): its
	connection is closed first, so the child holds none of SQLite's state for the file (which
	must not cross a fork); the child writes through a connection of its own, the parent reads
	what it wrote and goes on writing.
	"""
	store = RunStore(tmp_path / "runs.db")
	store.check()
	assert has_wal(store.path)
	pid = os.fork()
	if pid == 0:  # pragma: no cover - the child
		code = 1
		try:
			if store._shared.conn is not None:
				os._exit(3)  # the parent's connection came along
			store._write(
				"INSERT INTO agent_runs (run_id, agent, model, status, started, updated)"
				" VALUES ('child', 'c', 'm', 'success', 't', 't')",
				(),
			)
			store.close()
			code = 0
		finally:
			os._exit(code)
	_, status = os.waitpid(pid, 0)
	assert os.waitstatus_to_exitcode(status) == 0
	assert [r.run_id for r in anyio.run(store.runs)] == ["child"]
	store._write(
		"INSERT INTO agent_runs (run_id, agent, model, status, started, updated)"
		" VALUES ('parent', 'p', 'm', 'success', 'u', 'u')",
		(),
	)
	assert [r.run_id for r in anyio.run(store.runs)] == ["parent", "child"]
	store.close()
