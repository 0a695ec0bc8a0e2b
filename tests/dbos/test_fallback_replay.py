"""A durable run whose step fell back, stopped and recovered: the journal says who answered.

The fallback capability runs inside the journaled model step: the recovered run reads the step
from the journal (the answering model with it), asks no model again for it, and emits no
``model:fallback`` for it; the step after falls back live, numbered as it would have been.
"""

from __future__ import annotations

from typing import Any

import anyio
from _durable import stop_process

from openmolt import OpenMolt, ProviderError
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.testing import ScriptedModel, call_tool, finish

RUN = "fallback-replay-1"


class Overloaded:
	"""The first model: overloaded at every call, so each step falls back."""

	name = "primary"
	model = "big"

	def __init__(self) -> None:
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		raise ProviderError("overloaded (529)", provider="primary", status_code=529, retryable=True)


def add(a: int, b: int) -> int:
	"""Add two numbers.

	Args:
		a: One.
		b: Two.
	"""
	return a + b


def _agent(om: OpenMolt, primary: Overloaded, backup: ScriptedModel, seen: list[Any]) -> Any:
	agent = om.create_agent(name="Falls", model=[primary, backup], tools=[add])
	for name in ("model:fallback", "llmOutput", "finish"):
		agent.on(name, seen.append)
	return agent


async def _first(store: dict[str, Any], seen: list[Any]) -> None:
	asked = anyio.Event()

	async def hang(request: ModelRequest) -> Any:
		asked.set()
		await anyio.sleep_forever()

	om = OpenMolt(durability=store, entry_points=False)
	backup = ScriptedModel([call_tool("local.add", a=2, b=3), hang], name="backup")
	agent = _agent(om, Overloaded(), backup, seen)
	try:
		await agent.start("add them", run_id=RUN)
		with anyio.fail_after(30):
			await asked.wait()  # step 1 fell back and is journaled; step 2's backup call hangs
	finally:
		await stop_process()


async def _second(store: dict[str, Any], seen: list[Any]) -> tuple[Any, Overloaded, ScriptedModel]:
	om = OpenMolt(durability=store, entry_points=False)
	primary = Overloaded()
	backup = ScriptedModel([finish(result="5")], name="backup")
	_agent(om, primary, backup, seen)
	durable = om.durability
	assert durable is not None
	try:
		await durable.start()  # recovers this worker's unfinished run
		with anyio.fail_after(60):
			return await om.result(RUN), primary, backup
	finally:
		await stop_process()


def test_a_recovered_run_reads_the_step_that_fell_back_from_the_journal(store: str) -> None:
	durability = {"url": store, "worker_id": "fallback-worker", "heartbeat": 0.2, "lapse": 1.0}
	first: list[Any] = []
	anyio.run(_first, durability, first)
	live = [(e.name, e.step, e.seq) for e in first]
	assert live[:2] == [("model:fallback", 1, 2), ("llmOutput", 1, 1)]
	# step 2 fell back too before its backup call hung: the recovered run numbers it the same
	[before] = [seq for name, step, seq in live if (name, step) == ("model:fallback", 2)]
	again: list[Any] = []
	result, primary, backup = anyio.run(_second, durability, again)
	assert result is not None and result.output == {"result": "5"}, result
	# the journal said the backup answered step 1: only step 2 asked the models again
	assert result.state.models == ["backup:scripted", "backup:scripted"]
	assert (primary.calls, backup.calls) == (1, 1)
	fell = [e for e in again if e.name == "model:fallback"]
	assert [(e.step, e.from_model, e.to_model) for e in fell] == [
		(2, "primary:big", "backup:scripted")
	]
	[output] = [e for e in again if e.name == "llmOutput"]
	assert fell[0].seq == output.seq + 1  # in step 2's block
	assert fell[0].seq == before
