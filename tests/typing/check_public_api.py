"""Public use of OpenMolt, type-checked by mypy --strict (never run)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openmolt import FunctionTool, ModelConfig, OpenMolt, RunResult, ToolContext
from openmolt_core.events import ToolCallEvent
from openmolt_core.testing import ScriptedModel, call_tool, finish


class Report(BaseModel):
	result: str


def add(input: dict[str, Any], context: ToolContext) -> dict[str, int]:
	return {"sum": int(input["a"]) + int(input["b"])}


async def example() -> str:
	om = OpenMolt(llm_providers={"openai": {"api_key": "sk"}}, max_steps=5, verbose=False)
	agent = om.create_agent(
		name="Typed",
		model=ScriptedModel([call_tool("local.add", a=1, b=2), finish(result="3")]),
		model_config=ModelConfig(thinking="low", temperature=0.2),
		tools=[FunctionTool(handle="add", description="Add.", function=add)],
		output_schema=Report,
	)

	def on_call(event: ToolCallEvent) -> None:
		print(event.tool, event.input)

	agent.on("tool:call", on_call)
	result: RunResult = await agent.run("go")
	assert isinstance(result.output, Report)
	return result.output.result
