"""A durable step refused as too long, summarised and asked again, then the process stops.

DBOS journals a step's error as it journals a value: the recovered run reads the refusal
(``model:3``) and the summary (``compact:3:1``) from the store, asks neither model again, and asks
only the second try (``model:3:1``), which the first process never finished.
"""

from __future__ import annotations

from typing import Any

import anyio
from _durable import stop_process

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelRequest
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests.core.test_compaction_overflow import Summariser

RUN = "overflow-replay-1"


def note(i: int) -> str:
	"""Note a number.

	Args:
		i: The number.
	"""
	return f"noted {i}"


def _agent(om: OpenMolt, model: ScriptedModel, summariser: Summariser) -> Any:
	agent = om.create_agent(
		name="Noter",
		model=model,
		tools=[note],
		compaction={"threshold_tokens": 1_000_000, "keep_steps": 1},
	)
	agent.compactor = lambda: (summariser, "cheap")
	return agent


def _too_long(request: ModelRequest) -> Any:
	raise ProviderError(
		"the prompt is longer than the model's context window (400)",
		provider="scripted",
		model=request.model,
		status_code=400,
		context_exceeded=True,
	)


async def _first(store: dict[str, Any], summariser: Summariser) -> ScriptedModel:
	asked = anyio.Event()

	async def hang(request: ModelRequest) -> Any:
		asked.set()
		await anyio.sleep_forever()

	om = OpenMolt(durability=store, entry_points=False)
	model = ScriptedModel(
		[call_tool("local.note", i=1), call_tool("local.note", i=2), _too_long, hang]
	)
	agent = _agent(om, model, summariser)
	try:
		await agent.start("note things", run_id=RUN)
		with anyio.fail_after(60):
			await asked.wait()  # refused, summarised, and the second try in flight
	finally:
		await stop_process()
	return model


async def _second(store: dict[str, Any], summariser: Summariser) -> tuple[Any, ScriptedModel]:
	om = OpenMolt(durability=store, entry_points=False)
	model = ScriptedModel([finish(result="noted")])
	_agent(om, model, summariser)
	durable = om.durability
	assert durable is not None
	try:
		await durable.start()  # recovers this worker's unfinished run
		with anyio.fail_after(60):
			return await om.result(RUN), model
	finally:
		await stop_process()


def test_a_recovered_run_replays_the_refusal_and_the_summary(store: str) -> None:
	"""The second process asks the model once (the second try) and writes no summary."""
	durability = {"url": store, "worker_id": "overflow-worker", "heartbeat": 0.2, "lapse": 1.0}
	first = Summariser()
	model = anyio.run(_first, durability, first)
	assert len(model.requests) == 4 and first.calls == 1
	again = Summariser()
	result, second = anyio.run(_second, durability, again)
	assert result is not None and result.status == "success", result
	assert result.output == {"result": "noted"}
	assert second.calls == 1 and again.calls == 0
	assert '"compacted":' in second.requests[0].messages[0].content
	assert result.state.compaction is not None and result.state.compaction["refused_at"] > 0
