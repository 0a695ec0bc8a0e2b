import pytest
from pydantic import BaseModel

from openmolt import FunctionTool, OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


class Report(BaseModel):
	result: str


async def test_the_issue_example_runs_with_a_scripted_model() -> None:
	"""An agent calls a tool, then finishes with output that validates into the schema."""
	tool = FunctionTool(
		handle="add",
		description="Add two numbers.",
		function=lambda i, c: {"sum": i["a"] + i["b"]},
		input_schema={
			"type": "object",
			"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
			"required": ["a", "b"],
		},
	)
	model = ScriptedModel([call_tool("local.add", a=1, b=2), finish(result="3")])
	om = OpenMolt(max_steps=10, entry_points=False)
	agent = om.create_agent(name="Reporter", model=model, tools=[tool], output_schema=Report)
	seen: list[str] = []
	agent.on("tool:call", lambda e: seen.append(e.tool))
	result = await agent.run("Initial input")
	assert result.output == Report(result="3")
	assert result.status == "success"
	assert seen == ["local.add"]
	model.assert_consumed()
