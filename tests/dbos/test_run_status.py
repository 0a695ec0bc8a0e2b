"""What a durable run's status reads as: the run's, not its workflow's.

A run parked on an approval or an account ends its workflow (the workflow returns the park), and a
run that ended on ``failure`` or ``limit_reached`` returns from its workflow too: DBOS records both
as SUCCESS, and ``openmolt runs --all`` listed them as ``success``. A run resumed from a park goes
on in a workflow of its own (a segment), and the listing showed the parked segment as well.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import anyio
import pytest
from _harness import HERE

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool
from openmolt_dbos._engine import reset_engine

pytestmark = pytest.mark.anyio


def _payer(paid: list[int]) -> Any:
	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	return pay


def _park(question: str) -> str:
	raise HumanInputUnavailable(question)


async def _rows(om: OpenMolt) -> dict[str, dict[str, Any]]:
	rows = await om.durability.runs()  # type: ignore[union-attr]
	return {str(r["run_id"]): r for r in rows}


async def test_a_run_parked_on_an_approval_is_listed_parked_with_what_it_waits_for(
	url: str,
) -> None:
	"""Parked on an approval: ``parked``, on ``approval_required``, waiting for a decision on the
	call; once approved and done, one row for the run, ``success``; cancelled while parked:
	``cancelled``. A question's park reads the same way."""
	paid: list[int] = []
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[call_tool("local.pay", amount=1), finish("paid"), call_tool("local.pay", amount=2)]
	)
	agent = om.create_agent(
		name="Payer", model=model, tools=[_payer(paid)], requires_approval=["local.pay"]
	)
	asker = om.create_agent(
		name="Asker", model=ScriptedModel([ask_human("Ship it?")]), on_human_input_request=_park
	)
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		run_id = parked.state.run_id
		row = (await _rows(om))[run_id]
		assert (row["status"], row["parked_on"], row["waiting_for"]) == (
			"parked",
			"approval_required",
			"a decision on local.pay (rule: local.pay)",
		)
		(request,) = agent.approval_requests(parked.state)
		done = await agent.resume(parked.state, decision=request.approve())
		assert done.status == "success" and paid == [1]
		rows = await om.durability.runs()  # type: ignore[union-attr]
		assert [(r["run_id"], r["status"], r["parked_on"]) for r in rows] == [
			(run_id, "success", None)
		]
		second = await agent.run("pay again")
		await om.cancel(second.state.run_id)
		assert (await _rows(om))[second.state.run_id]["status"] == "cancelled"
		question = await asker.run("ship")
		row = (await _rows(om))[question.state.run_id]
		assert (row["status"], row["parked_on"], row["waiting_for"]) == (
			"parked",
			"human_input_required",
			"an answer to: Ship it?",
		)
	finally:
		await om.aclose()


async def test_a_run_that_ended_short_of_success_is_listed_with_its_own_status(url: str) -> None:
	"""A run out of steps (``limit_reached``) or that failed (``failure``) is not ``success``."""
	om = OpenMolt(durability=url, entry_points=False)
	looping = om.create_agent(
		name="Looper",
		model=ScriptedModel([call_tool("local.pay", amount=1)]),
		tools=[_payer([])],
		max_steps=1,
	)
	failing = om.create_agent(name="Failer", model=ScriptedModel([finish("no", status="failure")]))
	try:
		limited = await looping.run("loop")
		failed = await failing.run("fail")
		assert (limited.status, failed.status) == ("limit_reached", "failure")
		rows = await _rows(om)
	finally:
		await om.aclose()
	assert rows[limited.state.run_id]["status"] == "limit_reached"
	assert rows[failed.state.run_id]["status"] == "failure"


async def test_the_limit_counts_the_agents_runs_not_every_workflow(url: str) -> None:
	"""``runs(agent=..., limit=n)`` gives that agent's n latest runs, whatever ran after them.

	Before, the limit was applied to every agent's workflows first, then the agent's were kept:
	an agent whose runs were older than another's latest ``limit`` had none listed.
	"""
	om = OpenMolt(durability=url, entry_points=False)
	quiet = om.create_agent(name="Quiet", model=ScriptedModel([finish("a"), finish("b")]))
	busy = om.create_agent(name="Busy", model=ScriptedModel([finish(str(i)) for i in range(4)]))
	try:
		mine = [(await quiet.run("q")).state.run_id for _ in range(2)]
		for _ in range(4):
			await busy.run("b")
		rows = await om.durability.runs(agent="Quiet", limit=2)  # type: ignore[union-attr]
		newest = await om.durability.runs(limit=3)  # type: ignore[union-attr]
	finally:
		await om.aclose()
	assert [r["run_id"] for r in rows] == mine[::-1]
	assert len(newest) == 3 and {r["agent"] for r in newest} == {"Busy"}


def _cli(cli_in_process: Any, *args: str) -> subprocess.CompletedProcess[str]:
	"""`openmolt ARGS` in this process (a fresh one imports DBOS first: 4 s or more)."""
	env = {k: v for k, v in os.environ.items() if k != "OPENMOLT_DURABILITY"}
	try:
		return cli_in_process(list(args), cwd=HERE, env=env)
	finally:
		reset_engine()


@pytest.mark.timeout(240)
async def test_openmolt_runs_all_shows_a_run_parked_on_an_approval_as_parked(
	tmp_path: Any, cli_in_process: Any
) -> None:
	"""``openmolt runs --all`` prints the park and what it waits for (JSON: the same fields).

	It printed ``success``: the workflow had returned the park."""
	from dbos import DBOS

	store = str(tmp_path / "runs.sqlite")
	om = OpenMolt(durability=store, entry_points=False)
	agent = om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=1)]),
		tools=[_payer([])],
		requires_approval=["local.pay"],
	)
	try:
		parked = await agent.run("pay")
		run_id = parked.state.run_id
	finally:
		await om.aclose()
		DBOS.destroy()
		reset_engine()
	plain = await anyio.to_thread.run_sync(
		_cli, cli_in_process, "runs", "--all", "--durability", store
	)
	assert plain.returncode == 0, plain.stderr
	[line] = plain.stdout.splitlines()
	assert line.startswith(
		f"{run_id}  Payer  parked, waits for a decision on local.pay (rule: local.pay)  "
	)
	listed = await anyio.to_thread.run_sync(
		_cli, cli_in_process, "runs", "--all", "--json", "--durability", store
	)
	[row] = json.loads(listed.stdout)
	assert (row["status"], row["parked_on"]) == ("parked", "approval_required")
