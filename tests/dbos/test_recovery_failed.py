"""A takeover whose recovery failed for one run is tried again, never left with the run stranded.

DBOS's recovery logs a run it could not re-enqueue (a lost connection, a lock timeout) and goes
on with the next one; ``Heartbeat.take_over`` took the return as success and kept the dead
worker's row ``taken``, so no worker looked at that row again and the run stayed pending under
the dead worker's id forever (no error, nothing ran it).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import sqlalchemy as sa

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


async def test_a_run_recovery_could_not_hand_on_fails_the_takeover(
	url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	import dbos._recovery as recovery
	from dbos._dbos import _get_dbos_instance

	from openmolt_dbos import _engine

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Once", model=ScriptedModel([[finish(result="done")]]))
	result = await agent.run("go")
	assert result.ok
	engine = _engine._ENGINE
	assert engine is not None and engine.launched
	sys_db = _get_dbos_instance()._sys_db
	status = sys_db.tables.workflow_status
	for _ in range(200):  # the run's result comes before DBOS records its workflow's end
		with sys_db.engine.connect() as conn:
			done = conn.execute(
				sa.select(status.c.status).where(status.c.workflow_uuid == result.state.run_id)
			).scalar()
		if done == "SUCCESS":
			break
		await anyio.sleep(0.05)
	assert done == "SUCCESS"
	with sys_db.engine.begin() as conn:  # as if a worker "dead" had died in the run
		conn.execute(
			sa.update(status)
			.where(status.c.workflow_uuid == result.state.run_id)
			.values(status="PENDING", executor_id="dead")
		)
	real = recovery._recover_workflow

	def refused(*args: Any) -> Any:
		raise sa.exc.OperationalError("UPDATE", {}, Exception("connection lost"))

	monkeypatch.setattr(recovery, "_recover_workflow", refused)
	with pytest.raises(RuntimeError, match=r"1 run\(s\) of worker dead"):
		engine._recover("dead")  # before: returned, and the takeover counted as done
	monkeypatch.setattr(recovery, "_recover_workflow", real)
	engine._recover("dead")  # the next look hands it on
	assert sys_db.get_pending_workflows("dead", engine.app_version) == []
	await om.aclose()
