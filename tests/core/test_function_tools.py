"""Plain typed functions are tools: schema from the signature, context only when asked for."""

import json
import threading
from datetime import date
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from openmolt import ConfigurationError, FunctionTool, OpenMolt, ToolContext
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def add(a: int, b: int = 0) -> int:
	"""Add two integers.

	Args:
		a: The first number.
		b: The second number,
			zero when left out.
	"""
	return a + b


class Address(BaseModel):
	city: str
	zip: str | None = None


async def ship(
	to: Address, on: date, speed: Literal["fast", "slow"] = "slow", *, context: ToolContext
) -> dict[str, Any]:
	"""Ship a parcel.

	:param to: Where it goes.
	:param on: The shipping day.
	"""
	return {"city": to.city, "weekday": on.isoweekday(), "speed": speed, "agent": context.agent}


def results(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
	"""Types, defaults, required fields and Google-style descriptions make the input schema."""
	made = tool(add)
	assert made.handle == "add" and made.description == "Add two integers."
	assert made.input_schema == {
		"additionalProperties": False,
		"properties": {
			"a": {"description": "The first number.", "type": "integer"},
			"b": {
				"default": 0,
				"description": "The second number, zero when left out.",
				"type": "integer",
			},
		},
		"required": ["a"],
		"type": "object",
	}
	assert made.output_schema == {"type": "integer"}


def test_nested_models_context_and_sphinx_docstrings() -> None:
	"""A pydantic parameter is inlined, a ToolContext parameter is not input, Sphinx :param: works."""
	made = tool(ship)
	props = made.input_schema["properties"]
	assert set(props) == {"to", "on", "speed"}
	assert props["to"]["properties"]["city"] == {"type": "string"}
	assert props["on"] == {"description": "The shipping day.", "format": "date", "type": "string"}
	assert props["to"]["description"] == "Where it goes."
	assert made.input_schema["required"] == ["to", "on"]


async def test_plain_functions_run_in_an_agent_sync_and_async() -> None:
	"""tools=[fn] works for sync and async functions; pydantic coerces the JSON input."""
	model = ScriptedModel(
		[
			[
				call_tool("local.add", a=2, b=40),
				call_tool("local.ship", to={"city": "Oslo"}, on="2026-12-01"),
			],
			finish("ok"),
		]
	)
	om = OpenMolt(entry_points=False)
	# add declares that it does nothing with data; ship, a plain function, declares nothing,
	# so its result counts as untrusted (fail closed: openmolt_core.taint).
	agent = om.create_agent(name="F", model=model, tools=[tool(labels=[])(add), ship])
	result = await agent.run()
	assert result.status == "success"
	assert results(model, 1) == [
		{"tool": "local.add", "ok": True, "result": 42},
		{
			"tool": "local.ship",
			"ok": True,
			"result": {"city": "Oslo", "weekday": 2, "speed": "slow", "agent": "F"},
			"untrusted": True,
		},
	]


async def test_a_sync_function_runs_off_the_event_loop_thread() -> None:
	"""A blocking sync tool runs in a worker thread."""
	seen: list[str] = []

	def where() -> str:
		"""Report the thread."""
		seen.append(threading.current_thread().name)
		return "ok"

	model = ScriptedModel([call_tool("local.where"), finish("ok")])
	agent = OpenMolt(entry_points=False).create_agent(name="T", model=model, tools=[where])
	await agent.run()
	assert seen and seen[0] != threading.main_thread().name


async def test_wrong_input_is_refused_before_the_function_runs() -> None:
	"""Input that fails the signature's schema never reaches the function."""
	called: list[Any] = []

	@tool(name="double", description="Double a number.")
	def twice(n: int) -> int:
		called.append(n)
		return 2 * n

	model = ScriptedModel([call_tool("local.double", n="four"), finish("x")])
	agent = OpenMolt(entry_points=False).create_agent(name="W", model=model, tools=[twice])
	await agent.run()
	assert called == []
	assert "n: Input should be a valid integer" in results(model, 1)[0]["error"]


async def test_the_input_context_form_still_works() -> None:
	"""FunctionTool(handle, description, function(input, context), input_schema) is unchanged."""
	legacy = FunctionTool(
		handle="echo",
		description="Echo.",
		function=lambda input, context: {"got": input["x"], "by": context.integration},
		input_schema={"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
		labels=[],
	)
	model = ScriptedModel([call_tool("local.echo", x="hi"), finish("x")])
	await OpenMolt(entry_points=False).create_agent(name="L", model=model, tools=[legacy]).run()
	assert results(model, 1) == [
		{"tool": "local.echo", "ok": True, "result": {"got": "hi", "by": "local"}}
	]


def test_things_that_are_not_tools_are_refused_clearly() -> None:
	"""A non-callable, *args, or an unnamed lambda is a ConfigurationError naming the entry."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match=r"tools\[0\] is a int"):
		om.create_agent(name="x", model=ScriptedModel([]), tools=[5])  # type: ignore[list-item]

	def spread(*values: int) -> int:
		return sum(values)

	with pytest.raises(ConfigurationError, match=r"tools\[1\].*\*args"):
		om.create_agent(name="x", model=ScriptedModel([]), tools=[add, spread])
	with pytest.raises(ConfigurationError, match="lambda needs a name"):
		om.create_agent(name="x", model=ScriptedModel([]), tools=[lambda a: a])
