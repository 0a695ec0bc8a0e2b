"""Two migrations of one stranded run at once: it goes on in one execution."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _durable import stop_process
from _harness import STORES, make_store

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
	"""A fresh store, on SQLite and on PostgreSQL."""
	yield from make_store(request.param, tmp_path)


def _agent(om: OpenMolt, paid: list[int]) -> Any:
	@tool(labels=["outbound"], in_doubt="fail")
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		await anyio.sleep(1.5)
		return "paid"

	model = ScriptedModel([call_tool("local.pay", amount=1), finish("paid")])
	return om.create_agent(name="Payer", model=model, tools=[pay]), model


def _strand(store: str, run_id: str) -> None:
	"""Give the run's workflow a version no worker serves (its agent changed since)."""
	import sqlalchemy as sa
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		table = client._sys_db.tables.workflow_status
		with client._sys_db.engine.begin() as conn:
			conn.execute(
				sa.update(table)
				.where(table.c.workflow_uuid == run_id)
				.values(application_version="openmolt-0000000000000000")
			)
	finally:
		client.destroy()


@pytest.mark.timeout(120)
def test_a_stranded_run_migrated_twice_at_once_goes_on_in_one_execution(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Two ``openmolt runs --migrate`` of one run at once: both found it stranded, both moved
	it, and the second handed the run to a second execution while the first paid: that one
	found the payment started and told the model it was in doubt."""
	from openmolt_dbos._backend import DBOSBackend

	paid: list[int] = []
	run_id = "stranded-run"

	async def first() -> None:
		om = OpenMolt(durability=store, entry_points=False)
		agent, _ = _agent(om, [])
		try:
			await om.durability.start()  # type: ignore[union-attr]
			await agent.start("pay", run_id=run_id)
		finally:
			await stop_process()  # before it runs: pending, as a worker that died

	anyio.run(first)
	_strand(store, run_id)
	real = DBOSBackend._going
	read: list[str] = []
	both = anyio.Event()

	async def going(self: Any, run: str) -> Any:
		status = await real(self, run)
		read.append(run)
		later = len(read) == 2
		if later:
			both.set()
		with anyio.fail_after(10):
			await both.wait()  # each migration found it stranded
			while later and not paid:  # noqa: ASYNC110  # the later one moves it as the first pays
				await anyio.sleep(0.02)
		return status

	async def second() -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		_, model = _agent(om, paid)
		try:
			await om.durability.start()  # type: ignore[union-attr]
			monkeypatch.setattr(DBOSBackend, "_going", going)
			outcomes: list[Any] = []

			async def migrate() -> None:
				try:
					outcomes.append(await om.durability.migrate(run_id))  # type: ignore[union-attr]
				except Exception as exc:
					outcomes.append(exc)

			async with anyio.create_task_group() as tg:
				tg.start_soon(migrate)
				tg.start_soon(migrate)
			monkeypatch.setattr(DBOSBackend, "_going", real)
			with anyio.fail_after(60):
				result = await om.result(run_id)
			return result, model, outcomes
		finally:
			await stop_process()

	result, model, outcomes = anyio.run(second)
	assert result.status == "success", result.error
	assert paid == [1]
	said = model.requests[1].messages[-1].content
	assert "in doubt" not in said and "paid" in said
	assert sorted(type(o).__name__ for o in outcomes) == ["ConfigurationError", "str"], outcomes
