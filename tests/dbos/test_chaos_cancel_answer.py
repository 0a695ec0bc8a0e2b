"""A cancel from another process racing an answer: once ``om.cancel`` returns, the run has stopped."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import pytest
from _crash_cases import run_sync
from _durable import FakeServer

from openmolt import OpenMolt
from openmolt_dbos._engine import reset_engine

HEARTBEAT, LAPSE = 0.3, 3.0


def _pending(store: str) -> list[Any]:
	try:
		return list(run_sync(store, "pending"))
	except Exception:  # the driver has not made the store (or its tables) yet
		return []


@pytest.mark.timeout(120)
def test_a_question_answered_as_the_cancel_reads_it_stops_before_the_cancel_returns(
	store: str, server: FakeServer, spawn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The run is parked on a question when the cancel reads it; an answer lands before the
	cancel does, and the run starts a refund. The cancel took the run for parked (it runs
	nowhere) and returned at once, while the refund went on in the worker."""
	from openmolt_dbos._backend import DBOSBackend
	from openmolt_dbos._workers import make_engine, stopped

	server.scripts["cq"] = [
		{"type": "requestHumanInput", "message": "Refund P-1?"},
		{
			"type": "callTool",
			"tool": "local.refund",
			"input": {"scenario": "cq", "value": "P-1", "hold": "cq"},
		},
		{"type": "finish", "status": "success", "output": {"result": "refunded"}},
	]
	server.holds["cq"] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}
	driver = spawn(["driver.py", store, "w1", "cq"], env, name="w1")
	driver.wait_line("ready")
	run_id = next(
		line.split()[2] for line in driver.output().splitlines() if line.startswith("started ")
	)
	real = DBOSBackend._going

	async def going(self: Any, run: str) -> Any:
		status = await real(self, run)  # parked on its question
		await self.om.answer(run, "yes")  # from a chat, a moment later
		await anyio.to_thread.run_sync(
			lambda: server.wait_for(lambda: server.entries("tool", name="refund"), 30, "refund")
		)
		return status

	deadline = time.time() + 60
	while run_id not in [p.run_id for p in _pending(store)]:
		assert time.time() < deadline, driver.output()[-3000:]
		time.sleep(0.2)

	async def main() -> bool:
		om = OpenMolt(durability=store, entry_points=False)
		try:
			monkeypatch.setattr(DBOSBackend, "_going", going)
			await om.cancel(run_id)
			tables = make_engine(store)
			try:
				done = stopped(tables, run_id)
			finally:
				tables.dispose()
			return done
		finally:
			await om.aclose()
			reset_engine()

	try:
		done = anyio.run(main)
	finally:
		server.holds["cq"].set()
	assert done, "om.cancel returned before the worker stopped the run"
	# The refund under way was stopped in the worker: the run takes no further step.
	time.sleep(1)
	assert len(server.entries("tool", name="refund")) == 1
	assert server.entries("model", name="cq", turn=2) == []


@pytest.mark.timeout(120)
def test_a_run_taken_over_as_the_cancel_reads_it_stops_before_the_cancel_returns(
	store: str, server: FakeServer, spawn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The cancel reads a dead worker's run while the takeover has queued it; the live worker
	dequeues it and charges again before the cancel lands. The cancel took the queued run for
	one that runs nowhere and returned while the charge went on in the worker."""
	import copy

	from openmolt_dbos._backend import DBOSBackend
	from openmolt_dbos._workers import make_engine, stopped

	server.scripts["eq"] = [
		{
			"type": "callTool",
			"tool": "svc.charge",
			"input": {"scenario": "eq", "value": "E-1", "hold": "eq"},
		},
		{"type": "finish", "status": "success", "output": {"result": "charged"}},
	]
	server.holds["eq"] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": "1.5",
	}
	driver = spawn(["driver.py", store, "w1", "eq"], env, name="w1")
	driver.wait_line("ready")
	run_id = next(
		line.split()[2] for line in driver.output().splitlines() if line.startswith("started ")
	)
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store, "--id", "w2"]
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", "1.5"], env, "w2")
	worker.wait_line("ready")
	server.wait_for(lambda: server.entries("tool", name="charge", scenario="eq"), 60, "charge")
	driver.kill()  # w2 takes the run over: queued, then dequeued, and it charges again
	real = DBOSBackend._going

	async def going(self: Any, run: str) -> Any:
		await anyio.to_thread.run_sync(
			lambda: server.wait_for(
				lambda: server.entries("tool", name="charge", scenario="eq")[1:], 60, "again"
			)
		)
		status = copy.copy(await real(self, run))
		# What a read a moment earlier found: queued by the takeover, under the dead worker.
		status.status, status.executor_id = "ENQUEUED", "w1"
		return status

	async def main() -> bool:
		om = OpenMolt(durability=store, entry_points=False)
		try:
			monkeypatch.setattr(DBOSBackend, "_going", going)
			await om.cancel(run_id)
			tables = make_engine(store)
			try:
				return stopped(tables, run_id)
			finally:
				tables.dispose()
		finally:
			await om.aclose()
			reset_engine()

	try:
		done = anyio.run(main)
	finally:
		server.holds["eq"].set()
	assert done, "om.cancel returned before the worker stopped the run"
	time.sleep(1)
	assert server.entries("model", name="eq", turn=1) == []  # no step after the cancel
	worker.stop()
