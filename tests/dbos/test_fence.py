"""Fencing in one process: no call begins, and no result is journaled, where the run is not owned.

The outage tests (test_outage.py) cut PostgreSQL under two workers; these take the two conditions
apart, on SQLite and PostgreSQL: another execution owning the run (DBOS's ownership token), and
this worker's lease running out while a call is under way.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from _harness import start_held, until

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_dbos import _engine, _workers

pytestmark = pytest.mark.anyio


def _journal(run_id: str) -> list[str]:
	from dbos._dbos import _get_dbos_instance

	sys_db = _get_dbos_instance()._sys_db
	table = sys_db.tables.operation_outputs
	import sqlalchemy as sa

	with sys_db.engine.connect() as conn:
		rows = conn.execute(
			sa.select(table.c.function_name)
			.where(table.c.workflow_uuid == run_id)
			.order_by(table.c.function_id)
		)
		return [str(r[0]) for r in rows]


def _give_away(run_id: str) -> None:
	"""Another execution claims the run (as a takeover, a resume or a fork does)."""
	import sqlalchemy as sa
	from dbos._dbos import _get_dbos_instance

	sys_db = _get_dbos_instance()._sys_db
	table = sys_db.tables.workflow_status
	with sys_db.engine.begin() as conn:
		conn.execute(
			sa.update(table).where(table.c.workflow_uuid == run_id).values(owner_xid="elsewhere")
		)


async def test_an_execution_that_lost_its_run_makes_no_further_call(url: str) -> None:
	"""Once another execution owns the run, the next model call is not made here (it is theirs)."""
	om = OpenMolt(durability=url, entry_points=False)
	charged: list[int] = []

	def charge(cents: int) -> str:
		"""Charge an amount.

		Args:
			cents: The amount.
		"""
		charged.append(cents)
		return "ok"

	model = ScriptedModel([call_tool("local.charge", cents=5), finish(result="charged")])
	agent = om.create_agent(name="Payer", model=model, tools=[charge])
	# The tool's result is journaled, then its response event goes out: the run changes hands
	# between that step and the next model call.
	handed: list[float] = []

	def give_away(event: Any) -> None:
		_give_away("fence-run-1")
		handed.append(time.monotonic())

	agent.on("tool:response", give_away)
	state = agent.new_state("pay")
	state.run_id = "fence-run-1"

	async def watch(scope: anyio.CancelScope) -> None:
		# The hand-off may take long on a loaded machine; from then on, 3 s for a call the stale
		# execution must not make.
		await until(lambda: handed, "the hand-off", seconds=120)
		await anyio.sleep(3)
		scope.cancel()

	ended: list[Any] = []
	async with anyio.create_task_group() as tg:
		tg.start_soon(watch, tg.cancel_scope)
		# The caller is not told the run failed: it goes on with its owner (polled for).
		ended.append(await agent.run(history=state))
	assert handed and not ended  # still waiting for the owner's result when cancelled
	assert len(model.requests) == 1 and charged == [5]
	assert _journal("fence-run-1")[-1] == "tool:1:0:local.charge"  # nothing after the hand-off
	await om.aclose()


async def test_a_call_that_ends_after_the_lease_ran_out_is_not_journaled(url: str) -> None:
	"""The lease runs out during a tool call: its result is not journaled, no next call begins."""
	om = OpenMolt(durability=url, entry_points=False)
	gate, calls, _, model = await start_held(om, "Leased", "fence-run-2")
	engine = _engine._ENGINE
	heartbeat = engine.heartbeat if engine is not None else None
	assert heartbeat is not None
	heartbeat._stop.set()  # no more beats (as when the store is unreachable) ...
	heartbeat.renewed = (
		_workers._lease_clock() - heartbeat.fence_after
	)  # ... for as long as the lease
	gate.set()
	await until(lambda: heartbeat.fenced, "the fence")
	await anyio.sleep(0.5)
	journal = _journal("fence-run-2")
	assert "model:1" in journal and not any(name.startswith("tool:") for name in journal)
	assert len(model.requests) == 1 and calls == ["x"]
	assert await om.result("fence-run-2", wait=False) is None  # pending: resumed by a leaseholder
	await om.aclose()
