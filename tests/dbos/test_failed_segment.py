"""A resumed segment that failed with an outbound call under way: delivered again, it never pays twice.

The run parks on [pay, check]; the delivery resumes it in the segment ``<run>+1``, where pay
begins (its effect happens) and the capability deciding check raises: the batch is cancelled
before pay's result is journaled, and the segment ends in error, having journaled no tool step.
The same delivery again starts ``<run>+1~1`` from the parked state. Before, the start of pay was
recorded under the failed segment's workflow id, so the retry found no start and paid again; the
start is the run's now, so the retry finds pay in doubt and follows its policy (``ask``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from openmolt import Capability, OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import RunError
from openmolt_core.hooks import Park, Proceed, Run
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


class Clerk(Capability):
	"""Parks each call until given a word; while ``down``, deciding ``local.check`` raises."""

	name: ClassVar[str] = "clerk"

	def __init__(self) -> None:
		self.down = False

	async def before_tool(self, run: Run, call: Any, tool: Any) -> Any:
		if run.state.ext.get("clerk") is None:
			return Park("the clerk decides", {"ticket": 1})
		if self.down and call.tool == "local.check":
			await anyio.sleep(1.0)  # pay has begun meanwhile
			raise ConnectionError("the clerk's ledger is unreachable")
		return Proceed()

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		run.state.ext["clerk"] = given


async def test_a_parked_state_given_again_after_its_segment_failed_mid_call_pays_once(
	url: str,
) -> None:
	"""The second delivery finds pay in doubt (started by the failed segment) and asks."""
	paid: list[int] = []

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		await anyio.sleep(6)  # the bank's confirmation: the segment fails meanwhile
		return "paid"

	@tool
	async def check(account: str) -> str:
		"""Check an account.

		Args:
			account: Which.
		"""
		return "ok"

	clerk = Clerk()
	model = ScriptedModel(
		[
			[call_tool("local.pay", amount=5), call_tool("local.check", account="A")],
			finish("done"),
		]
	)
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Clerked",
		model=model,
		tools=[pay, check],
		capabilities=[clerk],
		on_human_input_request=park,
	)
	try:
		parked = await agent.run("pay")
		assert parked.status == "approval_required"
		saved = json.loads(json.dumps(parked.state.to_dict()))
		clerk.down = True
		with pytest.raises(RunError):
			await agent.resume(saved, given="yes")
		assert paid == [5]
		clerk.down = False
		again = await agent.resume(saved, given="yes")
		assert paid == [5]  # not paid again: in doubt, the run asks whether it went through
		assert again.status == "human_input_required"
		assert again.state.pending is not None
		assert "In doubt" in again.state.pending["message"]
		assert "local.pay" in again.state.pending["message"]
		run_id = parked.state.run_id
		await om.answer(run_id, "yes, it went through")
		done = await om.result(run_id)
		assert done is not None and done.status == "success" and paid == [5]
		model.assert_consumed()
	finally:
		await om.aclose()


@pytest.mark.timeout(180)
def test_an_approval_delivered_again_by_another_process_after_its_segment_failed_pays_once(
	store: str, spawn: Any, tmp_path: Path
) -> None:
	"""Two processes, one approval key: the second delivery asks instead of paying again."""
	paid, saved = tmp_path / "paid", tmp_path / "saved.json"
	env = {"OPENMOLT_APPROVAL_KEY": "k" * 32}
	args = ["failed_segment_agent.py", store, str(paid), str(saved)]
	first = spawn([*args, "first"], env, name="first")
	assert first.popen.wait(90) == 0, first.output()[-3000:]
	assert "raised RunError" in first.output(), first.output()[-3000:]
	assert len(paid.read_text().splitlines()) == 1
	again = spawn([*args, "again"], env, name="again")
	assert again.popen.wait(90) == 0, again.output()[-3000:]
	out = again.output()
	lines = paid.read_text().splitlines()
	assert len(lines) == 1, (lines, out[-3000:])  # before: a second process paid again
	assert "resume human_input_required" in out and "In doubt" in out, out[-3000:]


def _older_version(tmp_path: Path, began: float) -> Any:
	"""A store an older version wrote: its ``openmolt_calls`` holds the start of ``run-1``'s call
	``tool:1:0:local.pay`` by ``w1`` at ``began`` (its worker's wall clock); then today's tables.
	"""
	import sqlalchemy as sa

	from openmolt_dbos._workers import _META, make_engine

	engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
	with engine.begin() as conn:
		conn.execute(
			sa.text(
				"CREATE TABLE openmolt_calls (workflow_id VARCHAR(400), step VARCHAR(400), "
				"executor_id VARCHAR(200), started_at FLOAT, PRIMARY KEY (workflow_id, step))"
			)
		)
		conn.execute(
			sa.text("INSERT INTO openmolt_calls VALUES ('run-1', 'tool:1:0:local.pay', 'w1', :t)"),
			{"t": began},
		)
	_META.create_all(engine)
	return engine


def test_a_call_an_older_version_started_is_in_doubt_after_the_upgrade(tmp_path: Path) -> None:
	"""Before the starts were the run's, they were kept per workflow (``openmolt_calls``): a call
	in flight when the worker died on the old version is in doubt for the upgraded one too."""
	from openmolt_dbos._workers import record_start

	engine = _older_version(tmp_path, began=0)
	assert record_start(engine, "run-1", "tool:1:0:local.pay", "run-1", "w2") is True
	assert record_start(engine, "run-1", "tool:1:1:local.pay", "run-1", "w2") is False
	engine.dispose()


def test_a_call_an_older_version_started_keeps_its_age_after_the_upgrade(tmp_path: Path) -> None:
	"""A keyed call an older version started a day ago is in doubt after the upgrade with its own
	age, not the upgrade's: before, its start was recorded anew (age 0), and the call was sent
	again with a key the service had pruned (Stripe keeps keys 24 h)."""
	import time

	from openmolt_dbos._workers import call_age, record_start

	began = time.time() - 30 * 3600  # the old version wrote its worker's wall clock
	engine = _older_version(tmp_path, began=began)
	assert record_start(engine, "run-1", "tool:1:0:local.pay", "run-1", "w2") is True
	age = call_age(engine, "run-1", "tool:1:0:local.pay")
	assert age is not None and 29 * 3600 < age < 31 * 3600, age
	assert record_start(engine, "run-1", "tool:1:0:local.pay", "run-1", "w3") is True  # again
	age = call_age(engine, "run-1", "tool:1:0:local.pay")
	assert age is not None and age > 29 * 3600, age
	assert record_start(engine, "run-1", "tool:1:1:local.pay", "run-1", "w2") is False
	fresh = call_age(engine, "run-1", "tool:1:1:local.pay")
	assert fresh is not None and fresh < 60
	engine.dispose()
