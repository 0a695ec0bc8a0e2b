"""Cancellation leaves a valid conversation; parked runs resume with their answer, anywhere."""

import itertools
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import ConfigurationError, FunctionTool, HumanInputUnavailable, OpenMolt, RunState
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish

pytestmark = pytest.mark.anyio

NONE = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def nobody(question: str) -> str:
	raise HumanInputUnavailable(f"no one to ask: {question}")


def roles_alternate(state: RunState) -> bool:
	roles = [m.role for m in state.messages]
	return roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))


async def test_cancelling_during_a_tool_call_keeps_a_resumable_state() -> None:
	"""The interrupted call is recorded as such; the state ends on a user turn and resumes."""
	started = anyio.Event()
	done = threading.Event()

	def fast(input: dict[str, Any], context: Any) -> str:
		done.set()  # a sync tool: it runs in a worker thread
		return "done"

	async def slow(input: dict[str, Any], context: Any) -> str:
		await anyio.to_thread.run_sync(done.wait, 5.0)  # cancel once the fast call is done
		await anyio.sleep(0.05)
		started.set()
		await anyio.sleep(30)
		return "never"

	tools = [
		FunctionTool(handle="slow", description="", function=slow, input_schema=NONE, labels=[]),
		FunctionTool(handle="fast", description="", function=fast, input_schema=NONE, labels=[]),
	]
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="C",
		model=ScriptedModel([[call_tool("local.fast"), call_tool("local.slow")]]),
		tools=tools,
	)
	with anyio.fail_after(10):
		async with anyio.create_task_group() as tg:
			tg.start_soon(agent.run, "go")
			await started.wait()
			tg.cancel_scope.cancel()
	state = agent.last_state
	assert state is not None and roles_alternate(state)
	assert state.messages[-1].role == "user"
	assert json.loads(state.messages[-1].content)["results"] == [
		{"tool": "local.fast", "ok": True, "result": "done"},
		{"tool": "local.slow", "ok": False, "error": "interrupted: the run was cancelled"},
	]
	again = om.create_agent(name="C", model=ScriptedModel([finish("ok")]), tools=tools)
	result = await again.run(history=RunState.from_dict(json.loads(json.dumps(state.to_dict()))))
	assert result.status == "success" and roles_alternate(result.state)


async def test_cancelling_during_the_model_call_keeps_the_state_too() -> None:
	"""A run cancelled while the model thinks keeps its state, ending on the unanswered user turn."""

	async def thinking(request: Any) -> Any:
		await anyio.sleep(30)

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="M", model=ScriptedModel([thinking]))
	with anyio.move_on_after(0.1):
		await agent.run("go")
	assert agent.last_state is not None and agent.last_state.messages[-1].role == "user"


async def test_a_parked_question_gets_its_answer_on_resume() -> None:
	"""resume(state, answer=...) delivers the answer as the pending question's result."""
	om = OpenMolt(entry_points=False)
	tool = FunctionTool(
		handle="find",
		description="",
		function=lambda i, c: ["INV-1", "INV-2"],
		input_schema=NONE,
		labels=[],
	)
	agent = om.create_agent(
		name="P",
		model=ScriptedModel([[call_tool("local.find"), ask_human("Which invoice?")]]),
		tools=[tool],
		on_human_input_request=nobody,
	)
	parked = await agent.run("pay")
	assert parked.status == "human_input_required"
	assert parked.error == "no one to ask: Which invoice?"
	assert parked.state.pending is not None and parked.state.pending["message"] == "Which invoice?"
	model = ScriptedModel([finish("paid INV-2")])
	later = om.create_agent(name="P", model=model, tools=[tool], on_human_input_request=nobody)
	answers: list[Any] = []
	later.on("humanInput", answers.append)
	result = await later.resume(parked.state.to_dict(), answer="INV-2")
	assert result.status == "success" and result.output == "paid INV-2"
	assert model.last_turn()["results"] == [
		{"tool": "local.find", "ok": True, "result": ["INV-1", "INV-2"]},
		{"command": "requestHumanInput", "ok": True, "result": "INV-2"},
	]
	assert [(a.message, a.response) for a in answers] == [("Which invoice?", "INV-2")]
	assert result.state.pending is None and roles_alternate(result.state)


async def test_run_with_an_input_and_a_parked_history_delivers_the_input_as_the_answer() -> None:
	"""run(answer, history=state) on a parked run is the same as resume."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="R", model=ScriptedModel([ask_human("Name?")]), on_human_input_request=nobody
	)
	parked = await agent.run()
	model = ScriptedModel([finish("hi Ada")])
	again = om.create_agent(name="R", model=model, on_human_input_request=nobody)
	await again.run("Ada", history=parked.state)
	assert model.last_turn()["results"] == [
		{"command": "requestHumanInput", "ok": True, "result": "Ada"}
	]


async def test_resuming_a_parked_run_without_an_answer_tells_the_model() -> None:
	"""run(history=parked) with no answer: the model hears that nobody answered."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="R", model=ScriptedModel([ask_human("Name?")]), on_human_input_request=nobody
	)
	parked = await agent.run()
	model = ScriptedModel([finish("unknown")])
	again = om.create_agent(name="R", model=model, on_human_input_request=nobody)
	await again.run(history=parked.state)
	assert "nobody answered" in model.last_turn()["results"][0]["error"]


async def test_resume_and_run_refuse_what_they_cannot_use() -> None:
	"""resume() needs a parked state; run(input, history=...) refuses an input it would drop."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="D", model=ScriptedModel([finish("x")]))
	done = await agent.run()
	with pytest.raises(ConfigurationError, match="waits for no answer"):
		await agent.resume(done.state, answer="hello")
	with pytest.raises(ConfigurationError, match="already has its input"):
		await agent.run("new input", history=done.state)


PARK = """
import json, sys, anyio
from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human

def nobody(question):
	raise HumanInputUnavailable(question)

async def main():
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="X", model=ScriptedModel([ask_human("Color?")]), on_human_input_request=nobody)
	result = await agent.run("paint")
	open(sys.argv[1], "w").write(json.dumps(result.state.to_dict()))
	print(result.status)

anyio.run(main)
"""

RESUME = """
import json, sys, anyio
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

async def main():
	model = ScriptedModel([lambda request: finish("painted " + json.loads(request.messages[-1].content)["results"][0]["result"])])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="X", model=model, on_human_input_request=lambda q: "unused")
	state = json.loads(open(sys.argv[1]).read())
	result = await agent.resume(state, answer=sys.argv[2])
	print(result.status, result.output, result.steps)

anyio.run(main)
"""


def test_a_parked_run_resumes_in_another_process(tmp_path: Path) -> None:
	"""The parked state is written as JSON by one process and resumed by a new one."""
	path = tmp_path / "state.json"
	first = subprocess.run(
		[sys.executable, "-c", textwrap.dedent(PARK), str(path)],
		capture_output=True,
		text=True,
		timeout=60,
	)
	assert first.stdout.strip() == "human_input_required", first.stderr
	assert json.loads(path.read_text())["pending"]["message"] == "Color?"
	second = subprocess.run(
		[sys.executable, "-c", textwrap.dedent(RESUME), str(path), "teal"],
		capture_output=True,
		text=True,
		timeout=60,
	)
	assert second.stdout.strip() == "success painted teal 2", second.stderr
