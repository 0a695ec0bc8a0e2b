"""A schedule's run by hand on a standby worker while the due time's run is recovered after a crash.

Worker ``w1`` fires a due time of the schedule ``tick``; its run sends a refund (outbound, no
idempotency key: an in-doubt call asks a person) and is killed (SIGKILL) with the refund in
flight. This process serves the same agents and schedule (the standby): a ``run_now`` while the
killed run waits for its takeover is skipped (the due time's run still goes); the takeover
finds the refund in doubt and asks instead of sending it again; the due time ran once.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import pytest
from _durable import FakeServer, stop_process

HEARTBEAT, LAPSE = 0.3, 2.0


@pytest.mark.timeout(120)
def test_run_now_beside_a_due_time_s_run_recovering_after_a_kill_is_skipped(
	store: str, server: FakeServer, spawn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""run_now is skipped while the killed due time's run goes; that run sends nothing twice."""
	server.scripts["tick"] = [
		{
			"type": "callTool",
			"tool": "local.refund",
			"input": {"scenario": "tick", "value": "T-1", "hold": "tick"},
		},
		{"type": "finish", "status": "success", "output": {"result": "ticked"}},
	]
	server.holds["tick"] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_SCHEDULE": "3600",  # one due time in the test: its first
	}
	_due_soon(store, 6.0)
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store, "--id", "w1"]
	first = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], env, "w1")
	first.wait_line("ready")
	server.wait_for(lambda: server.entries("tool", name="refund"), 60, "the refund in flight")
	first.kill()
	server.holds["tick"].set()  # the refund went through: its effect happened
	for key, value in env.items():
		monkeypatch.setenv(key, value)

	async def standby() -> tuple[Any, list[Any]]:
		import crash_agents

		from openmolt import OpenMolt

		om = OpenMolt(
			durability={"url": store, "worker_id": "w2", "heartbeat": HEARTBEAT, "lapse": LAPSE},
			entry_points=False,
		)
		crash, _ = crash_agents.build(om)
		crash_agents.tokens_agent(om)
		try:
			await om.durability.start()  # type: ignore[union-attr]
			# The schedule w1 serves (crash_agents.schedules, read there from the environment).
			spec = {"id": "tick", "type": "interval", "value": 3600.0, "input": "tick"}
			schedule = crash.schedule(spec)
			async with anyio.create_task_group() as tg:
				await tg.start(om.scheduler.serve)  # its next due time is an hour away
				record = await om.scheduler.get(schedule).run_now()
				# The takeover: the refund is in doubt, so the run asks whether it happened.
				with anyio.fail_after(60):
					while not (pending := await om.pending()):  # noqa: ASYNC110  # the store
						await anyio.sleep(0.2)
				await om.answer(pending[0].run_id, "yes, it went through")
				result = await om.result(pending[0].run_id)
				om.scheduler.stop()
			return record, [result, pending]
		finally:
			await stop_process()

	record, (result, pending) = anyio.run(standby)
	assert record.status == "skipped" and "overlap" in (record.note or ""), record
	assert "In doubt" in pending[0].question
	assert result.status == "success" and result.output == {"result": "ticked"}
	assert len(server.entries("tool", name="refund")) == 1  # never sent again
	assert len(server.entries("model", name="tick", turn=0)) == 1  # run_now asked nothing


def _due_soon(store: str, seconds: float) -> None:
	"""Make the schedule's first due time come in ``seconds`` (its anchor an interval before)."""
	import sqlalchemy as sa

	from openmolt_dbos._workers import SCHEDULES, create_tables, make_engine

	tables = make_engine(store)
	try:
		create_tables(tables)
		with tables.begin() as conn:
			conn.execute(
				sa.insert(SCHEDULES).values(schedule_id="tick", anchor=time.time() - 3600 + seconds)
			)
	finally:
		tables.dispose()
