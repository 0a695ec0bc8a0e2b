"""Two calls of one batch in doubt after a crash: their questions keep their journal places.

A concurrent batch's steps take their ids in command order before any call awaits, so a replay
numbers them the same whichever call ends first. The questions a recovered run asks about calls
it finds in doubt (``indoubt:``) are steps of the batch too: without ids of their own they were
numbered in the order the calls found their starts, which the store's round trips decide, and a
later recovery that found them in the other order stopped with DBOS's "was recorded when ...
was expected".
"""

from __future__ import annotations

from typing import Any

import anyio
from _durable import stop_process

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

RUN = "indoubt-batch-1"


def _agent(om: OpenMolt, model: Any, started: list[str], asked: list[str], both: Any = None) -> Any:
	def begin(name: str) -> None:
		started.append(name)
		if both is not None and len(started) == 2:
			both.set()

	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		begin("pay")
		await anyio.sleep_forever()
		return "paid"

	@tool(labels=["outbound"])
	async def mail(to: str) -> str:
		"""Mail.

		Args:
			to: Whom.
		"""
		begin("mail")
		await anyio.sleep_forever()
		return "sent"

	def person(question: str) -> str:
		asked.append(question)
		return "it did not go through"

	return om.create_agent(
		name="Doubter", model=model, tools=[pay, mail], on_human_input_request=person
	)


def _slow(key_part: str) -> Any:
	"""Delay the journal's answer for one call's step, so the other call goes first."""
	from openmolt_dbos._port import DBOSPort

	step = DBOSPort.step

	async def slowed(self: Any, key: str, fn: Any, **kw: Any) -> Any:
		if key.startswith("tool:") and key_part in key:
			await anyio.sleep(0.5)
		return await step(self, key, fn, **kw)

	return slowed


async def _first(store: dict[str, Any]) -> None:
	"""The run starts; both calls begin (their starts recorded) and the process stops."""
	both = anyio.Event()
	model = ScriptedModel([[call_tool("local.pay", amount=5), call_tool("local.mail", to="a")]])
	om = OpenMolt(durability=store, entry_points=False)
	agent = _agent(om, model, [], [], both)
	try:
		await agent.start("pay and mail", run_id=RUN)
		with anyio.fail_after(60):
			await both.wait()
	finally:
		await stop_process()


async def _recover(store: dict[str, Any], late: str, last: bool) -> Any:
	"""This worker starts again and recovers the run, ``late``'s step answered last; it stops
	once the model is asked the next step, or (``last``) returns the run's result."""
	from openmolt_dbos._port import DBOSPort

	asked_model = anyio.Event()

	async def hang(request: Any) -> Any:
		asked_model.set()
		await anyio.sleep_forever()

	model = ScriptedModel([finish("done") if last else hang])
	started: list[str] = []
	asked: list[str] = []
	om = OpenMolt(durability=store, entry_points=False)
	_agent(om, model, started, asked)
	original = DBOSPort.step
	DBOSPort.step = _slow(late)  # type: ignore[method-assign]
	try:
		durable = om.durability
		assert durable is not None
		await durable.start()  # recovers this worker's unfinished run
		if last:
			with anyio.fail_after(60):
				return await om.result(RUN), asked
		with anyio.fail_after(60):
			await asked_model.wait()
		assert started == [] and len(asked) == 2, (started, asked)  # neither ran again
		assert "local.mail" in asked[0], asked
		return None, asked
	finally:
		DBOSPort.step = original  # type: ignore[method-assign]
		await stop_process()


def test_two_calls_in_doubt_in_one_batch_replay_their_questions_in_place(store: str) -> None:
	"""Found in doubt in one order, replayed in the other: the run goes on and ends."""
	durability = {"url": store, "worker_id": "doubt-worker", "heartbeat": 0.2, "lapse": 1.0}

	anyio.run(_first, durability)
	# Recovered: both calls are in doubt; mail's is found first, and its question asked first.
	anyio.run(_recover, durability, "local.pay", False)
	# Recovered again, pay's step answered first: the questions replay from the journal.
	result, asked = anyio.run(_recover, durability, "local.mail", True)
	assert result is not None and result.status == "success", result
	assert asked == []  # both answered before; the journal holds the answers
