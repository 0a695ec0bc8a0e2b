"""A durable run whose source lists other tools when it is recovered binds the tools it began with."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from _durable import stop_process

from openmolt import OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.integrations import FunctionTool, Integration
from openmolt_core.llm import ModelRequest
from openmolt_core.testing import ScriptedModel, call_tool, finish


class ScriptedSource:
	"""A tool source whose list the test sets for each process."""

	def __init__(self, names: Sequence[str]) -> None:
		self.tools = tuple(_echo(n) for n in names)
		self.secrets: frozenset[str] = frozenset()

	async def list_tools(self) -> Sequence[Any]:
		return self.tools

	async def aclose(self) -> None:
		return None


def _echo(name: str) -> FunctionTool:
	return FunctionTool(
		handle=name,
		description=f"Echo via {name}.",
		function=lambda input, context: {"tool": name, "got": input},
		input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
	)


def _agent(store: dict[str, Any], names: Sequence[str], model: ScriptedModel) -> Any:
	om = OpenMolt(durability=store, entry_points=False)
	om.register_integration("srv", Integration(name="Server", source=ScriptedSource(names)))
	return om.create_agent(name="Lister", model=model, integrations=["srv"])


async def _first(store: dict[str, Any], run: str) -> None:
	asked = anyio.Event()

	async def hang(request: ModelRequest) -> Any:
		asked.set()
		await anyio.sleep_forever()

	agent = _agent(store, ["one"], ScriptedModel([call_tool("srv.one", text="a"), hang]))
	try:
		await agent.start("echo", run_id=run)
		with anyio.fail_after(30):
			await asked.wait()  # srv.one's call is journaled; the second model call hangs
	finally:
		await stop_process()


async def _second(
	store: dict[str, Any], run: str, names: Sequence[str], model: ScriptedModel
) -> Any:
	om = _agent(store, names, model).om
	durable = om.durability
	assert durable is not None
	try:
		await durable.start()  # recovers this worker's unfinished run
		with anyio.fail_after(60):
			return await om.result(run)
	finally:
		await stop_process()


def _store(store: str, worker: str) -> dict[str, Any]:
	return {"url": store, "worker_id": worker, "heartbeat": 0.2, "lapse": 1.0}


def test_a_recovered_run_does_not_bind_a_tool_listed_after_it_began(store: str) -> None:
	"""The source lists one more tool after the crash: the recovered run never sees it."""
	durability = _store(store, "lister-added")
	anyio.run(_first, durability, "lister-added-1")
	model = ScriptedModel([call_tool("srv.two", text="b"), finish(result="done")])
	result = anyio.run(_second, durability, "lister-added-1", ["one", "two"], model)
	assert result is not None and result.output == {"result": "done"}
	assert "srv.two" not in json.dumps(model.requests[0].response_schema)
	assert "unknown tool 'srv.two'" in model.requests[1].messages[-1].content


def test_a_recovered_run_whose_tool_is_gone_stops_clearly_with_its_state(store: str) -> None:
	"""The source no longer lists a tool the run began with: the run ends naming it."""
	durability = _store(store, "lister-gone")
	anyio.run(_first, durability, "lister-gone-1")
	model = ScriptedModel([])
	with pytest.raises(RunError) as caught:
		anyio.run(_second, durability, "lister-gone-1", ["two"], model)
	assert "no longer lists 'srv.one'" in str(caught.value)
	assert model.calls == 0
