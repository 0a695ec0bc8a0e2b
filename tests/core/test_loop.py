import json
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from openmolt import FunctionTool, OpenMolt, RunError, RunState, ToolError
from openmolt_core import ModelRequest, ModelResponse, ProviderError, Usage
from openmolt_core.testing import (
	ScriptedModel,
	ScriptedModelError,
	ask_human,
	call_tool,
	finish,
	update_memory,
	update_plan,
	wait,
)

pytestmark = pytest.mark.anyio

ADD_SCHEMA = {
	"type": "object",
	"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
	"required": ["a", "b"],
	"additionalProperties": False,
}


class Report(BaseModel):
	result: str


def add_tool(**kw: Any) -> FunctionTool:
	return FunctionTool(
		handle="add",
		description="Add two integers.",
		function=lambda i, c: {"sum": i["a"] + i["b"]},
		input_schema=ADD_SCHEMA,
		**{"labels": [], **kw},  # declares no labels: these tests are not about taint
	)


def make_agent(replies: list[Any], **options: Any) -> tuple[Any, ScriptedModel]:
	model = ScriptedModel(replies)
	om = OpenMolt(entry_points=False, max_steps=options.pop("om_max_steps", 10))
	options.setdefault("tools", [add_tool()])
	agent = om.create_agent(name="Tester", model=model, **options)
	return agent, model


def results_of(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	"""The results the model received at a given call (0-based)."""
	return json.loads(model.requests[call].messages[-1].content)["results"]


async def test_tool_result_reaches_the_model_at_the_next_step() -> None:
	"""A callTool result is fed back to the model in the next user turn."""
	agent, model = make_agent(
		[call_tool("local.add", a=2, b=40), finish(result="42")], output_schema=Report
	)
	result = await agent.run("add")
	assert results_of(model, 1) == [{"tool": "local.add", "ok": True, "result": {"sum": 42}}]
	assert result.output == Report(result="42")
	assert result.steps == 2


async def test_invalid_json_is_fed_back_and_counted() -> None:
	"""A reply that is not JSON becomes an error the model sees, and the step counts."""
	agent, model = make_agent(["I think I will add", finish(result="x")], output_schema=Report)
	result = await agent.run()
	[error] = results_of(model, 1)
	assert error["ok"] is False and "not valid JSON" in error["error"]
	assert result.steps == 2 and result.status == "success"


async def test_fenced_json_and_bare_lists_are_accepted() -> None:
	"""JSON in Markdown fences, a bare command list and a single command object all parse."""
	fenced = '```json\n{"commands": [{"type": "callTool", "tool": "local.add", "input": {"a": 1, "b": 1}}]}\n```'
	bare = json.dumps([{"type": "callTool", "tool": "local.add", "input": {"a": 2, "b": 2}}])
	single = json.dumps({"type": "finish", "output": {"result": "ok"}})
	agent, model = make_agent([fenced, bare, single], output_schema=Report)
	result = await agent.run()
	assert results_of(model, 1)[0]["result"] == {"sum": 2}
	assert results_of(model, 2)[0]["result"] == {"sum": 4}
	assert result.output == Report(result="ok")


async def test_the_history_holds_the_cleaned_reply_not_the_raw_text() -> None:
	"""Only the validated, re-serialized form of a reply goes into the history."""
	fenced = 'Sure!\n```json\n{"commands": [{"type": "callTool", "tool": "local.add", "input": {"a": 1, "b": 1}}]}\n```'
	agent, model = make_agent([fenced, finish(result="2")], output_schema=Report)
	await agent.run()
	assistant = model.requests[1].messages[1]
	assert assistant.role == "assistant"
	assert assistant.content.startswith('{"commands":[{"type":"callTool"')
	assert "Sure" not in assistant.content


async def test_unknown_command_type_is_refused_and_nothing_runs() -> None:
	"""An unknown command type is reported and the reply's other commands do not run."""
	calls: list[Any] = []
	tool = FunctionTool(
		handle="add", description="", function=lambda i, c: calls.append(i), input_schema=ADD_SCHEMA
	)
	reply = [call_tool("local.add", a=1, b=2), {"type": "dance"}]
	agent, model = make_agent([reply, finish(result="x")], tools=[tool], output_schema=Report)
	await agent.run()
	error, not_run = results_of(model, 1)
	assert "0 were valid but did not run" in not_run["error"]
	assert "unknown command type 'dance'" in error["error"]
	assert "callTool" in error["error"]
	assert calls == []


async def test_malformed_command_names_the_field() -> None:
	"""A command missing a field gets an error naming that field."""
	agent, model = make_agent(
		[{"type": "callTool", "input": {}}, finish(result="x")], output_schema=Report
	)
	await agent.run()
	[error] = results_of(model, 1)
	assert (
		"command 0 (callTool)" in error["error"]
		and "tool: required field is missing" in error["error"]
	)


async def test_unknown_tool_lists_the_available_ones() -> None:
	"""Calling a tool that does not exist returns an error listing the real tools."""
	agent, model = make_agent(
		[call_tool("local.mul", a=1, b=2), finish(result="x")], output_schema=Report
	)
	await agent.run()
	[error] = results_of(model, 1)
	assert error == {
		"ok": False,
		"error": "command 0 (callTool): unknown tool 'local.mul'; did you mean 'local.add'? "
		"use one of: local.add",
	}


async def test_tool_input_failing_its_schema_is_explained() -> None:
	"""Input that fails the tool's schema is refused with the field and the problem; the tool never runs."""
	ran: list[Any] = []
	tool = FunctionTool(
		handle="add", description="", function=lambda i, c: ran.append(i), input_schema=ADD_SCHEMA
	)
	agent, model = make_agent(
		[call_tool("local.add", a="one", c=3), finish(result="x")],
		tools=[tool],
		output_schema=Report,
	)
	await agent.run()
	[error] = results_of(model, 1)
	assert error["ok"] is False
	assert "a: Input should be a valid integer" in error["error"]
	assert "b: required field is missing" in error["error"]
	assert "c: unknown field; remove it" in error["error"]
	assert ran == []


async def test_a_tool_that_raises_becomes_an_error_result() -> None:
	"""An exception inside a tool is reported to the model; the run goes on."""

	def boom(i: Any, c: Any) -> Any:
		raise RuntimeError("disk on fire")

	tool = FunctionTool(
		handle="add", description="", function=boom, input_schema=ADD_SCHEMA, labels=[]
	)
	agent, model = make_agent(
		[call_tool("local.add", a=1, b=2), finish(result="x")], tools=[tool], output_schema=Report
	)
	result = await agent.run()
	[error] = results_of(model, 1)
	assert error == {
		"tool": "local.add",
		"ok": False,
		"error": "the tool failed: RuntimeError: disk on fire",
	}
	assert result.status == "success"


async def test_a_tool_error_carries_status_and_details() -> None:
	"""A ToolError's status and details reach the model."""

	def refuse(i: Any, c: Any) -> Any:
		raise ToolError("not found", status_code=404, details={"id": "x"})

	tool = FunctionTool(
		handle="add", description="", function=refuse, input_schema=ADD_SCHEMA, labels=[]
	)
	agent, model = make_agent(
		[call_tool("local.add", a=1, b=2), finish(result="x")], tools=[tool], output_schema=Report
	)
	await agent.run()
	[error] = results_of(model, 1)
	assert error == {
		"tool": "local.add",
		"ok": False,
		"error": "not found",
		"details": {"status": 404, "details": {"id": "x"}},
	}


@pytest.mark.parametrize("raised", ["tool error", "exception", "tool error not text"])
async def test_a_huge_tool_error_reaches_the_model_cut_with_a_note(
	raised: str, caplog: pytest.LogCaptureFixture
) -> None:
	"""An error's text and details are cut (a successful result is stored and previewed; an error
	was sent whole: an MCP server's 5 MB isError text went into the next model request, its
	event and a warning line). A message that is not text (a tool's own ``ToolError`` of a
	list) is cut as its JSON, as a detail is: it went whole."""
	from openmolt_core._execute import MAX_ERROR_CHARS

	def refuse(i: Any, c: Any) -> Any:
		if raised == "exception":
			raise RuntimeError("e" * 1_000_000)
		if raised == "tool error not text":
			raise ToolError(["e" * 1_000_000])  # type: ignore[arg-type]
		raise ToolError("e" * 1_000_000, details={"blob": "d" * 1_000_000})

	tool = FunctionTool(
		handle="add", description="", function=refuse, input_schema=ADD_SCHEMA, labels=[]
	)
	agent, model = make_agent(
		[call_tool("local.add", a=1, b=2), finish(result="x")], tools=[tool], output_schema=Report
	)
	responses: list[Any] = []
	agent.on("tool:response", responses.append)
	with caplog.at_level("WARNING", logger="openmolt"):
		await agent.run()
	[error] = results_of(model, 1)
	assert len(json.dumps(error)) < MAX_ERROR_CHARS + 3000
	assert len(json.dumps(responses[0].response)) < MAX_ERROR_CHARS + 3000
	assert caplog.records and all(
		len(r.getMessage()) < MAX_ERROR_CHARS + 3000 for r in caplog.records
	)
	assert error["error"].endswith(" characters]") and "trimmed" in error["error"]
	if raised == "tool error":
		assert isinstance(error["details"]["details"], str)
		assert error["details"]["details"].startswith('{"blob":"ddd')


async def test_finish_output_failing_the_schema_is_refused_until_fixed() -> None:
	"""A finish whose output fails the schema is fed back; the run ends on the valid finish."""
	agent, model = make_agent(
		[finish(result=3), finish(wrong="x"), finish(result="3")], output_schema=Report
	)
	result = await agent.run()
	first, second = results_of(model, 1)[0], results_of(model, 2)[0]
	assert "result: Input should be a valid string" in first["error"]
	assert "result: Field required" in second["error"] or "result: required" in second["error"]
	assert result.output == Report(result="3") and result.steps == 3


async def test_json_schema_output_is_validated_and_returned_as_a_dict() -> None:
	"""A JSON Schema output schema validates the output, which comes back as a dict."""
	schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
	agent, model = make_agent([finish(n="1"), finish(n=1)], output_schema=schema)
	result = await agent.run()
	assert "n: Input should be a valid integer" in results_of(model, 1)[0]["error"]
	assert result.output == {"n": 1}


async def test_finish_with_failure_status_and_human_message() -> None:
	"""The finish status and humanMessage come back in the result."""
	agent, _ = make_agent(
		[finish(status="failure", human_message="No access.", result="")], output_schema=Report
	)
	result = await agent.run()
	assert result.status == "failure" and result.human_message == "No access." and not result.ok


async def test_wait_over_a_minute_is_refused_and_short_wait_waits() -> None:
	"""A wait above 60 s is an error for the model; a short one sleeps."""
	agent, model = make_agent([wait(61), wait(0.01), finish(result="x")], output_schema=Report)
	await agent.run()
	assert "seconds: Input should be less than or equal to 60" in results_of(model, 1)[0]["error"]
	assert results_of(model, 2)[0] == {"command": "wait", "ok": True, "result": "waited 0.01 s"}


async def test_update_plan_replaces_the_plan_and_emits() -> None:
	"""updatePlan replaces the plan, emits planUpdate, and the result carries the plan."""
	steps = [
		{"name": "a", "status": "completed", "notes": "done"},
		{"name": "b", "status": "inProgress", "subSteps": [{"name": "b1"}]},
	]
	agent, _ = make_agent(
		[update_plan(*steps), update_plan("only"), finish(result="x")], output_schema=Report
	)
	plans: list[Any] = []
	agent.on("planUpdate", lambda e: plans.append(e.plan))
	result = await agent.run()
	assert plans[0][1]["subSteps"] == [{"name": "b1", "status": "pending", "notes": ""}]
	assert result.plan == [{"name": "only", "status": "pending", "notes": "", "subSteps": []}]


async def test_sub_steps_may_not_nest() -> None:
	"""A sub-step with its own sub-steps is refused (one level only)."""
	bad = {"name": "a", "subSteps": [{"name": "b", "subSteps": [{"name": "c"}]}]}
	agent, model = make_agent([update_plan(bad), finish(result="x")], output_schema=Report)
	result = await agent.run()
	assert "unknown field" in results_of(model, 1)[0]["error"]
	assert result.plan == []


async def test_memory_append_and_replace_call_on_update() -> None:
	"""updateMemory appends or replaces, calls the memory's on_update (sync or async), and emits."""
	long_seen: list[str] = []
	short_seen: list[str] = []

	async def on_short(data: str) -> None:
		short_seen.append(data)

	memory = {
		"long_term": {"data": "likes tea", "on_update": long_seen.append},
		"shortTerm": {"data": "", "onUpdate": on_short},
	}
	replies = [
		[update_memory("likes cake", memory="longTerm"), update_memory("id=7")],
		update_memory("id=8", mode="replace"),
		finish(result="x"),
	]
	agent, model = make_agent(replies, output_schema=Report, memory=memory)
	events: list[Any] = []
	agent.on("memoryUpdate", lambda e: events.append((e.memory, e.mode, e.data)))
	result = await agent.run()
	assert long_seen == ["likes tea\nlikes cake"]
	assert short_seen == ["id=7", "id=8"]
	assert events[-1] == ("shortTerm", "replace", "id=8")
	assert result.state.memory == {"longTerm": "likes tea\nlikes cake", "shortTerm": "id=8"}
	first = json.loads(model.requests[0].messages[0].content)
	assert first["memory"] == {"longTerm": "likes tea", "shortTerm": ""}


async def test_a_failing_memory_callback_does_not_break_the_run() -> None:
	"""An on_update callback that raises is logged; the run finishes."""

	def broken(data: str) -> None:
		raise ValueError("db down")

	agent, _ = make_agent(
		[update_memory("x"), finish(result="ok")],
		output_schema=Report,
		memory={"short_term": {"data": "", "on_update": broken}},
	)
	assert (await agent.run()).status == "success"


async def test_human_input_is_asked_and_answered() -> None:
	"""requestHumanInput calls the handler and feeds the answer back."""
	asked: list[str] = []

	async def human(question: str) -> str:
		asked.append(question)
		return "INV-2"

	agent, model = make_agent(
		[ask_human("Which invoice?"), finish(result="paid")],
		output_schema=Report,
		on_human_input_request=human,
	)
	await agent.run()
	assert asked == ["Which invoice?"]
	assert results_of(model, 1) == [{"command": "requestHumanInput", "ok": True, "result": "INV-2"}]
	assert "requestHumanInput" in model.requests[0].system


async def test_human_input_without_a_handler_is_refused_and_not_described() -> None:
	"""With no handler the command is not described, and using it anyway is an error."""
	agent, model = make_agent(
		[ask_human("?"), finish(result="x")], output_schema=Report, on_human_input_request=False
	)
	await agent.run()
	assert "requestHumanInput" not in model.requests[0].system
	assert "nobody can answer this agent" in results_of(model, 1)[0]["error"]


async def test_human_input_unavailable_ends_with_its_status() -> None:
	"""A handler raising HumanInputUnavailable ends the run with status human_input_required."""
	from openmolt import HumanInputUnavailable

	def nobody(question: str) -> str:
		raise HumanInputUnavailable("no terminal")

	agent, _ = make_agent(
		[ask_human("Approve?")], output_schema=Report, on_human_input_request=nobody
	)
	result = await agent.run()
	assert result.status == "human_input_required" and result.output is None
	assert result.error == "no terminal"


async def test_step_budget_is_exact_and_the_last_step_is_told() -> None:
	"""max_steps=N makes N model calls at most; the Nth is told it is the last, then limit_reached."""
	replies = [call_tool("local.add", a=1, b=1)] * 2
	agent, model = make_agent(replies, output_schema=Report, max_steps=2)
	result = await agent.run()
	assert result.status == "limit_reached" and result.steps == 2 and model.calls == 2
	assert "notice" not in json.loads(model.requests[0].messages[-1].content)
	notice = json.loads(model.requests[1].messages[-1].content)["notice"]
	assert "last step" in notice and "2 steps" in notice
	assert result.error == "2 steps used"
	assert len(result.history) == 5  # first turn + 2 x (reply, results)


async def test_step_budget_final_step_can_finish() -> None:
	"""A model that finishes on the last step succeeds; with max_steps=1 the first turn says so."""
	agent, _model = make_agent(
		[call_tool("local.add", a=1, b=1), finish(result="late")], output_schema=Report, max_steps=2
	)
	result = await agent.run()
	assert result.status == "success" and result.output == Report(result="late")
	one, model1 = make_agent([finish(result="now")], output_schema=Report, max_steps=1)
	assert (await one.run()).status == "success"
	assert "last step" in json.loads(model1.requests[0].messages[0].content)["notice"]


async def test_token_budget_ends_the_run_gracefully() -> None:
	"""No call starts once max_tokens is reached; a call expected to reach it is told it is the last."""
	agent, model = make_agent(
		[call_tool("local.add", a=1, b=1)] * 3, output_schema=Report, max_tokens=30
	)
	result = await agent.run()  # 15 tokens per call: call 2 reaches 30
	assert result.status == "limit_reached" and "30 of 30 tokens used" in (result.error or "")
	assert model.calls == 2
	assert "last step" in json.loads(model.requests[1].messages[-1].content)["notice"]


async def test_time_budget_ends_the_run_gracefully() -> None:
	"""A time budget ends the run with limit_reached instead of raising."""
	agent, _ = make_agent([wait(0.05), wait(0.05), wait(0.05)], output_schema=Report, timeout=0.01)
	result = await agent.run()
	assert result.status == "limit_reached" and "seconds elapsed" in (result.error or "")


async def test_events_fire_in_order() -> None:
	"""Events come in the spec's order for a step: llmOutput, commandsQueued, tool:call, tool:response..."""
	agent, _ = make_agent(
		[[update_plan("a"), call_tool("local.add", a=1, b=2)], finish(result="3")],
		output_schema=Report,
	)
	seen: list[str] = []
	for name in (
		"llmOutput",
		"commandsQueued",
		"tool:call",
		"tool:response",
		"planUpdate",
		"finish",
		"error",
	):
		agent.on(name, lambda e, name=name: seen.append(name))
	await agent.run()
	assert seen == [
		"llmOutput",
		"commandsQueued",
		"planUpdate",
		"tool:call",
		"tool:response",
		"llmOutput",
		"commandsQueued",
		"finish",
	]


async def test_async_handlers_are_awaited_and_failing_handlers_are_logged(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""Async handlers run; a handler that raises is logged and the run goes on."""
	got: list[Any] = []

	async def good(e: Any) -> None:
		got.append(e.response)

	def bad(e: Any) -> None:
		raise RuntimeError("handler bug")

	agent, _ = make_agent(
		[call_tool("local.add", a=1, b=2), finish(result="3")], output_schema=Report
	)
	agent.on("tool:response", bad)
	agent.on("tool:response", good)
	result = await agent.run()
	assert got == [{"sum": 3}] and result.status == "success"
	assert "event handler for 'tool:response' failed" in caplog.text


async def test_off_removes_a_handler() -> None:
	"""agent.off removes exactly the handler given."""
	agent, _ = make_agent(
		[call_tool("local.add", a=1, b=2), finish(result="3")], output_schema=Report
	)
	a: list[Any] = []
	b: list[Any] = []
	agent.on("tool:call", a.append)
	agent.on("tool:call", b.append)
	agent.off("tool:call", a.append)
	await agent.run()
	assert a == [] and len(b) == 1


async def test_unknown_event_name_is_refused() -> None:
	"""Subscribing to an unknown event names the valid ones."""
	agent, _ = make_agent([])
	with pytest.raises(ValueError, match="unknown event 'tool_call'"):
		agent.on("tool_call", print)


async def test_finish_event_carries_the_result() -> None:
	"""The finish event has the same result run() returns."""
	agent, _ = make_agent([[update_plan("a"), finish(result="x")]], output_schema=Report)
	got: list[Any] = []
	agent.on("finish", got.append)
	result = await agent.run()
	assert (
		got[0].result is result
		and got[0].plan == result.plan
		and got[0].output == Report(result="x")
	)


async def test_independent_tool_calls_run_concurrently_and_report_in_order() -> None:
	"""Consecutive callTool commands run at the same time; results keep command order."""
	started: list[int] = []
	gate = anyio.Event()

	async def slow(i: dict[str, Any], c: Any) -> Any:
		started.append(i["a"])
		if len(started) == 3:
			gate.set()
		with anyio.fail_after(2):
			await gate.wait()  # only returns if all three started before any finished
		return {"sum": i["a"] + i["b"]}

	tool = FunctionTool(handle="add", description="", function=slow, input_schema=ADD_SCHEMA)
	reply = [call_tool("local.add", a=n, b=0) for n in (3, 1, 2)]
	agent, model = make_agent([reply, finish(result="x")], tools=[tool], output_schema=Report)
	await agent.run()
	assert [r["result"]["sum"] for r in results_of(model, 1)] == [3, 1, 2]


async def test_cancelling_the_caller_stops_the_run_cleanly() -> None:
	"""Cancelling the caller's scope cancels a run in the middle of a tool call."""
	entered = anyio.Event()

	async def forever(i: Any, c: Any) -> Any:
		entered.set()
		await anyio.sleep(30)

	tool = FunctionTool(handle="add", description="", function=forever, input_schema=ADD_SCHEMA)
	agent, _ = make_agent(
		[call_tool("local.add", a=1, b=1), finish(result="x")], tools=[tool], output_schema=Report
	)
	with anyio.move_on_after(5) as scope:
		async with anyio.create_task_group() as tg:
			tg.start_soon(agent.run)
			await entered.wait()
			tg.cancel_scope.cancel()
	assert not scope.cancelled_caught  # the run stopped at once, not after the 5 s guard


async def test_the_prefix_stays_byte_identical_and_history_only_grows() -> None:
	"""System prompt and earlier turns never change between steps (prompt caches keep hitting)."""
	agent, model = make_agent(
		[
			call_tool("local.add", a=1, b=1),
			update_memory("x"),
			call_tool("local.add", a=2, b=2),
			finish(result="x"),
		],
		output_schema=Report,
	)
	await agent.run("task")
	for before, after in zip(model.requests, model.requests[1:], strict=False):
		assert before.system == after.system
		# a request's turns reappear unchanged at the start of the next one
		snapshot = [(m.role, m.content) for m in before.messages]
		assert snapshot == [(m.role, m.content) for m in after.messages][: len(snapshot)]


async def test_the_first_turn_has_instructions_tools_then_input() -> None:
	"""The first turn lists instructions, visible tools with schemas, memory, plan, then the input."""
	agent, model = make_agent(
		[finish(result="x")], output_schema=Report, instructions="Be brief.", config={"maxSteps": 4}
	)
	await agent.run({"q": 1})
	text = model.requests[0].messages[0].content
	first = json.loads(text)
	assert first["about"] == {"agent": "Tester", "instructions": "Be brief."}
	assert first["maxSteps"] == 4
	assert first["tools"] == [
		{"tool": "local.add", "description": "Add two integers.", "inputSchema": ADD_SCHEMA}
	]
	assert first["input"] == {"q": 1}
	assert text.index('"tools"') < text.index('"input"')


async def test_the_maestro_prompt_documents_every_command_and_the_schema() -> None:
	"""The system prompt describes each command with an example, the plan format and the output schema."""
	agent, model = make_agent(
		[finish(result="x")], output_schema=Report, on_human_input_request=lambda q: "a"
	)
	await agent.run()
	system = model.requests[0].system
	for word in (
		"callTool",
		"wait",
		"updatePlan",
		"updateMemory",
		"requestHumanInput",
		"finish",
		"subSteps",
		"humanMessage",
		'"result"',
		"only.",
	):
		assert word in system
	assert model.requests[0].response_schema is not None


async def test_the_state_round_trips_through_json_and_resumes() -> None:
	"""A run's state serializes to JSON and a new run resumes from it."""
	agent, _ = make_agent(
		[call_tool("local.add", a=1, b=1), update_plan("keep")], output_schema=Report, max_steps=2
	)
	first = await agent.run("task")
	assert first.status == "limit_reached"
	saved = json.loads(json.dumps(first.state.to_dict()))
	agent2, model2 = make_agent([finish(result="resumed")], output_schema=Report)
	result = await agent2.run(history=saved)
	assert result.output == Report(result="resumed")
	assert result.steps == 3 and result.plan == first.plan
	assert [m.content for m in model2.requests[0].messages][:5] == [
		m.content for m in first.history
	]
	assert result.usage.calls == 3


async def test_a_bad_saved_state_is_refused() -> None:
	"""Resuming from something that is not a saved state raises a clear error."""
	from openmolt import ConfigurationError

	agent, _ = make_agent([finish(result="x")])
	with pytest.raises(ConfigurationError, match="not a saved run state"):
		await agent.run(history={"plan": []})


async def test_usage_is_summed_over_the_run() -> None:
	"""Token usage of every call is summed in the result."""
	agent, _ = make_agent(
		[call_tool("local.add", a=1, b=1), finish(result="x")], output_schema=Report
	)
	result = await agent.run()
	assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.calls) == (
		20,
		10,
		2,
	)


class FailingProvider:
	name = "flaky"

	def __init__(self) -> None:
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		if self.calls == 2:
			raise ProviderError("overloaded", provider="flaky", model="m", status_code=529)
		return ModelResponse(
			text=json.dumps({"commands": [call_tool("local.add", a=1, b=1)]}), usage=Usage(1, 1)
		)


async def test_a_provider_failure_raises_with_the_state_to_resume() -> None:
	"""A provider error raises RunError carrying the partial state; nothing is lost."""
	provider = FailingProvider()
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=provider, tools=[add_tool()])
	errors: list[Any] = []
	agent.on("error", errors.append)
	with pytest.raises(RunError) as info:
		await agent.run("x")
	assert info.value.result.status == "error"
	assert info.value.result.steps == 1 and len(info.value.result.state.messages) == 3
	assert errors[-1].fatal and errors[-1].kind == "provider"


async def test_scripted_model_fails_clearly_when_over_called() -> None:
	"""A scripted model called more than scripted fails the run like any provider, clearly."""
	agent, _ = make_agent([call_tool("local.add", a=1, b=1)], output_schema=Report)
	with pytest.raises(RunError, match="only 1 reply was scripted") as info:
		await agent.run()
	assert isinstance(info.value.__cause__, ScriptedModelError)
	assert info.value.result.steps == 1


async def test_large_tool_results_are_stored_for_the_model_but_whole_in_the_event() -> None:
	"""A huge result is stored and previewed in the history; the event gets all of it."""
	big = "x" * 50_000
	tool = FunctionTool(
		handle="add", description="", function=lambda i, c: big, input_schema=ADD_SCHEMA
	)
	agent, model = make_agent(
		[call_tool("local.add", a=1, b=1), finish(result="x")], tools=[tool], output_schema=Report
	)
	full: list[Any] = []
	agent.on("tool:response", lambda e: full.append(e.response))
	await agent.run()
	seen = results_of(model, 1)[0]["result"]
	assert seen["stored"].startswith("openmolt-file:") and seen["chars"] == 50_000
	assert seen["preview"].startswith("xxx") and "openmolt.readResult" in seen["read"]
	assert len(model.requests[1].messages[-1].content) < 3_000
	assert full == [big]


async def test_state_round_trip_keeps_attachments() -> None:
	"""Attachments survive the JSON round trip of the state."""
	from openmolt import Attachment

	agent, _ = make_agent([call_tool("local.add", a=1, b=1)], max_steps=1, output_schema=Report)
	agent.max_steps = 0  # no budget: the scripted model runs out instead
	state = RunState()
	with pytest.raises(RunError):
		await agent.run(
			"see", history=state, attachments=[Attachment("image/png", "aGk=", "a.png")]
		)
	again = RunState.from_dict(json.loads(json.dumps(state.to_dict())))
	assert again.messages[0].attachments[0].media_type == "image/png"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	"""The loop runs on anyio: every test here runs on asyncio and on trio."""
	return str(request.param)


async def test_steps_left_appears_only_near_the_end_of_the_budget() -> None:
	"""Results carry stepsLeft once three or fewer steps remain, not before."""
	agent, model = make_agent(
		[call_tool("local.add", a=1, b=1)] * 5 + [finish(result="x")],
		output_schema=Report,
		max_steps=6,
	)
	await agent.run()
	seen = [json.loads(r.messages[-1].content).get("stepsLeft") for r in model.requests[1:]]
	assert seen == [None, None, 3, 2, 1]
	assert json.loads(model.requests[0].messages[0].content)["maxSteps"] == 6


@pytest.mark.parametrize(
	"reply",
	[
		'```json\n{"commands": [{"type": "finish", "output": {"result": "ok"}}]}\n```\nLet me know if you need more.',
		'{"commands": [{"type": "finish", "output": {"result": "ok"}}]} Let me know {if} needed',
		'<think>I could answer {x} or {"y": 1}.</think>{"commands": [{"type": "finish", "output": {"result": "ok"}}]}',
		'Here you go: {"type": "finish", "output": {"result": "ok"}} — done.',
	],
)
async def test_replies_wrapped_in_prose_fences_or_thinking_still_parse(reply: str) -> None:
	"""Common model formatting around the JSON does not cost a step."""
	agent, model = make_agent([reply], output_schema=Report)
	result = await agent.run()
	assert result.output == Report(result="ok") and model.calls == 1


async def test_a_step_that_parks_keeps_its_results_for_the_answer() -> None:
	"""Tool results before a parked question are kept with it; resume sends them with the answer."""
	from openmolt import HumanInputUnavailable

	def nobody(question: str) -> str:
		raise HumanInputUnavailable("no terminal")

	agent, _ = make_agent(
		[[call_tool("local.add", a=1, b=2), ask_human("Go on?")]],
		output_schema=Report,
		on_human_input_request=nobody,
	)
	result = await agent.run()
	assert result.status == "human_input_required"
	assert result.history[-1].role == "assistant"
	assert result.state.pending == {
		"kind": "human_input",
		"message": "Go on?",
		"results": [{"tool": "local.add", "ok": True, "result": {"sum": 3}}],
	}


class BrokenProvider:
	name = "broken"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		raise KeyError("choices")


async def test_an_unexpected_provider_exception_becomes_a_run_error_with_state() -> None:
	"""A provider raising anything (not only ProviderError) ends the run with its state kept."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=BrokenProvider(), tools=[add_tool()])
	with pytest.raises(RunError, match="KeyError") as info:
		await agent.run("x")
	assert info.value.result.status == "error"
	assert len(info.value.result.state.messages) == 1


class CutOffProvider:
	name = "cut"

	def __init__(self) -> None:
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		if self.calls == 1:
			return ModelResponse(
				text='{"commands": [{"type": "callT', usage=Usage(1, 1), finish_reason="max_tokens"
			)
		return ModelResponse(
			text=json.dumps({"commands": [finish(result="ok")]}), usage=Usage(1, 1)
		)


async def test_a_reply_cut_off_by_the_token_limit_is_explained() -> None:
	"""A truncated reply gets feedback naming the output limit, not just 'invalid JSON'."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=CutOffProvider(), output_schema=Report)
	errors: list[str] = []
	agent.on("error", lambda e: errors.append(e.message))
	result = await agent.run("x")
	assert result.output == Report(result="ok")
	assert "output token limit" in errors[0]


async def test_long_term_memory_carries_over_to_the_next_run_of_the_agent() -> None:
	"""What a run stored in long-term memory is there when the same agent runs again; short-term is not."""
	agent, model = make_agent(
		[
			[
				update_memory("likes tea", memory="longTerm", mode="replace"),
				update_memory("scratch"),
			],
			finish(result="a"),
			finish(result="b"),
		],
		output_schema=Report,
		memory={"long_term": {"data": "old"}},
	)
	await agent.run("one")
	await agent.run("two")
	second_first_turn = json.loads(model.requests[2].messages[0].content)
	assert second_first_turn["memory"] == {"longTerm": "likes tea", "shortTerm": ""}


async def test_agent_config_overrides_the_instance_settings() -> None:
	"""config adjusts the constructor's settings for one agent; keyword arguments win; typos are named."""
	from openmolt import ConfigurationError

	om = OpenMolt(entry_points=False, max_steps=10)
	agent = om.create_agent(name="A", model=ScriptedModel([]), config={"maxSteps": 3, "timeout": 5})
	assert (agent.max_steps, agent.timeout) == (3, 5)
	explicit = om.create_agent(
		name="B", model=ScriptedModel([]), config={"maxSteps": 3}, max_steps=7
	)
	assert explicit.max_steps == 7
	with pytest.raises(ConfigurationError, match=r"'maxStep'.*did you mean 'maxSteps'"):
		om.create_agent(name="C", model=ScriptedModel([]), config={"maxStep": 3})
	with pytest.raises(ConfigurationError, match=r"config\['max_steps'\] must be a whole number"):
		om.create_agent(name="D", model=ScriptedModel([]), config={"max_steps": "ten"})


async def test_a_failing_human_input_handler_is_reported_to_the_model() -> None:
	"""A handler that raises is logged; the model is told and the run goes on."""

	def broken(question: str) -> str:
		raise OSError("terminal gone")

	agent, model = make_agent(
		[ask_human("?"), finish(result="x")], output_schema=Report, on_human_input_request=broken
	)
	result = await agent.run()
	assert result.status == "success"
	assert "could not be asked (OSError)" in results_of(model, 1)[0]["error"]


async def test_an_answer_whose_str_raises_is_a_failed_handler_too() -> None:
	"""An answer that cannot be written as text is the handler's failure, not the run's end."""

	class Unwritable:
		def __str__(self) -> str:
			raise RuntimeError("no text")

	agent, model = make_agent(
		[ask_human("?"), finish(result="x")],
		output_schema=Report,
		on_human_input_request=lambda question: Unwritable(),
	)
	result = await agent.run()
	assert result.status == "success"
	assert "could not be asked (RuntimeError)" in results_of(model, 1)[0]["error"]


class SlowProvider:
	name = "slow"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		await anyio.sleep(30)
		raise AssertionError("not reached")


async def test_the_time_budget_bounds_a_model_call_in_flight() -> None:
	"""A model call still running when the time budget ends stops the run with limit_reached."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=SlowProvider(), timeout=0.05)
	with anyio.fail_after(5):
		result = await agent.run("x")
	assert result.status == "limit_reached" and "during a model call" in (result.error or "")


async def test_a_one_step_budget_says_one_step() -> None:
	"""The limit's words read right for one: "1 step used", not "1 steps used"."""
	agent, model = make_agent([call_tool("local.add", a=1, b=1)], output_schema=Report, max_steps=1)
	result = await agent.run()
	assert (result.status, result.error) == ("limit_reached", "1 step used")
	notice = json.loads(model.requests[0].messages[-1].content)["notice"]
	assert "(1 step)" in notice
