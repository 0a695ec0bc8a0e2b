"""A worker's recovery of its own id: nothing stranded, nothing run twice.

When a fenced worker's lease comes back, it hands the runs pending under its own id to DBOS's
recovery (`openmolt_dbos._engine.Engine._recover`).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from _harness import start_held, until

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_dbos import _engine


def _status(run_id: str) -> str | None:
	from dbos._dbos import _get_dbos_instance

	sys_db = _get_dbos_instance()._sys_db
	table = sys_db.tables.workflow_status
	with sys_db.engine.connect() as conn:
		return conn.execute(
			sa.select(table.c.status).where(table.c.workflow_uuid == run_id)
		).scalar()


async def _stopped() -> None:
	"""Stop this process's engine, as a process that ends does (its runs stay pending)."""
	from dbos import DBOS

	engine = _engine._ENGINE
	if engine is not None and engine.launched:
		await engine.shutdown()
	DBOS.destroy()
	_engine.reset_engine()


@pytest.mark.anyio
async def test_a_run_executing_here_is_not_recovered_beside_itself(url: str) -> None:
	"""The lease came back while a run executes here: the recovery leaves that run alone."""
	om = OpenMolt(durability=url, entry_points=False)
	gate, calls, handle, model = await start_held(om, "Busy", "own-run-1")
	engine = _engine._ENGINE
	assert engine is not None
	await anyio.to_thread.run_sync(engine._recover, engine.executor_id)
	await anyio.sleep(3)  # the queue's dequeue, were the run handed to it
	gate.set()
	result = await handle.result()
	assert result.ok
	assert calls == ["x"], calls
	assert len(model.requests) == 2
	await om.aclose()


@pytest.mark.anyio
async def test_a_run_its_own_recovery_could_not_hand_on_is_looked_at_again(
	url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A run pending under this live worker's id that recovery could not re-enqueue is not left."""
	import dbos._recovery as recovery
	from dbos._dbos import _get_dbos_instance

	from openmolt_dbos import _ownership

	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([[finish(result="done")]])
	agent = om.create_agent(name="Once", model=model)
	result = await agent.run("go")
	assert result.ok
	run_id = result.state.run_id
	await until(lambda: _status(run_id) == "SUCCESS", "the recorded end")
	engine = _engine._ENGINE
	assert engine is not None
	sys_db = _get_dbos_instance()._sys_db
	table = sys_db.tables.workflow_status
	with sys_db.engine.begin() as conn:  # as if the fence had stopped it here
		conn.execute(
			sa.update(table).where(table.c.workflow_uuid == run_id).values(status="PENDING")
		)

	def refused(*args: Any) -> bool:
		raise sa.exc.OperationalError("UPDATE", {}, Exception("connection lost"))

	# Either way of handing it on fails (DBOS's recovery logged such a run and went on).
	monkeypatch.setattr(recovery, "_recover_workflow", refused)
	monkeypatch.setattr(_ownership, "hand_back", refused, raising=False)
	for _ in range(3):  # seen idle, then not handed on: still owed each time
		# (before: DBOS's recovery logged the run and the recovery counted as done)
		assert await anyio.to_thread.run_sync(engine._recover, engine.executor_id) is False
	monkeypatch.undo()
	assert await anyio.to_thread.run_sync(engine._recover, engine.executor_id)  # handed on
	await until(lambda: _status(run_id) == "SUCCESS", "the recovered run's end")
	assert len(model.requests) == 1  # its journal answered it
	await om.aclose()


def test_a_run_the_startup_recovery_could_not_hand_on_is_looked_at_again(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""DBOS's recovery at launch logs a run it could not re-enqueue; the worker's looks take it."""
	import dbos._recovery as recovery
	from _durable import stop_process

	durability = {"url": store, "heartbeat": 0.2, "lapse": 2.0, "worker_id": "w-own"}
	model = ScriptedModel([[finish(result="done")]])

	async def crashed() -> str:
		from dbos._dbos import _get_dbos_instance

		om = OpenMolt(durability=durability, entry_points=False)
		agent = om.create_agent(name="Once", model=model)
		result = await agent.run("go")
		run_id = result.state.run_id
		await until(lambda: _status(run_id) == "SUCCESS", "the recorded end")
		sys_db = _get_dbos_instance()._sys_db
		table = sys_db.tables.workflow_status
		with sys_db.engine.begin() as conn:  # as if this worker had crashed in it
			conn.execute(
				sa.update(table).where(table.c.workflow_uuid == run_id).values(status="PENDING")
			)
		await om.aclose()
		await stop_process()
		return run_id

	async def restarted(run_id: str) -> None:
		om = OpenMolt(durability=durability, entry_points=False)
		om.create_agent(name="Once", model=model)
		try:
			engine = _engine._ENGINE
			assert engine is not None
			await engine.launch()  # as a worker does at its start
			await until(lambda: _status(run_id) == "SUCCESS", "the recovered run's end", 20)
		finally:
			await om.aclose()
			await stop_process()

	run_id = anyio.run(crashed)

	def refused(*args: Any) -> Any:
		raise sa.exc.OperationalError("UPDATE", {}, Exception("connection lost"))

	monkeypatch.setattr(recovery, "_recover_workflow", refused)  # the launch's recovery fails
	anyio.run(restarted, run_id)
	assert len(model.requests) == 1


@pytest.mark.anyio
async def test_a_run_the_fence_is_stopping_is_looked_at_until_it_stopped(url: str) -> None:
	"""The lease comes back before the fence's cancels reached a busy event loop: the run still
	executing then stops a moment later, and is handed back at a later look, not left."""
	import threading

	om = OpenMolt(durability=url, entry_points=False)
	gate, calls, handle, model = await start_held(om, "Fenced", "own-run-3")
	engine = _engine._ENGINE
	assert engine is not None
	looked: list[bool] = []

	def fence_then_look() -> None:
		engine._fence()  # the lease ran out: the runs here are to stop ...
		looked.append(engine._recover(engine.executor_id))  # ... and it came back at once

	thread = threading.Thread(target=fence_then_look)
	thread.start()
	thread.join()  # on the event loop's thread: the fence's cancels wait behind this
	assert looked == [False]  # before: True, and the run the fence stopped was left pending
	await until(
		lambda: _status("own-run-3") == "PENDING" and not engine.runs_here("own-run-3"), "the stop"
	)
	for _ in range(3):  # seen idle, then handed back
		if await anyio.to_thread.run_sync(engine._recover, engine.executor_id):
			break
	await until(lambda: len(calls) == 2, "the run's execution again")
	gate.set()
	result = await handle.result()
	assert result.ok and len(model.requests) == 2
	await om.aclose()
