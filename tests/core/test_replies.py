"""Replies that cannot derail a run: the parser's rules, caps, and errors that keep the state."""

import json
from dataclasses import replace
from typing import Any

import pytest

from openmolt import FunctionTool, OpenMolt, RunError
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan

pytestmark = pytest.mark.anyio

ADD = {
	"type": "object",
	"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
	"required": ["a", "b"],
	"additionalProperties": False,
}
OUT = {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


class Truncating:
	"""A provider whose first reply is cut at the output limit (but happens to parse)."""

	name = "trunc"

	def __init__(self, replies: list[tuple[str, str]]) -> None:
		self.replies = replies
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(replace(request, messages=list(request.messages)))
		text, reason = self.replies[len(self.requests) - 1]
		return ModelResponse(text=text, usage=Usage(1, 1), finish_reason=reason)


def agent_with(model: Any, ran: list[Any] | None = None, **options: Any) -> Any:
	ran = ran if ran is not None else []
	tool = FunctionTool(
		handle="add", description="", function=lambda i, c: ran.append(i) or 3, input_schema=ADD
	)
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="R", model=model, tools=[tool], output_schema=OUT, **options)


def results(model: Any, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


def envelope(*commands: dict[str, Any]) -> str:
	return json.dumps({"commands": list(commands)})


async def test_a_truncated_reply_runs_nothing_even_when_it_parses() -> None:
	"""finish_reason max_tokens: none of the reply runs, and the model is told why."""
	ran: list[Any] = []
	model = Truncating(
		[
			(envelope(call_tool("local.add", a=1, b=2)), "max_tokens"),
			(envelope(finish(result="x")), "stop"),
		]
	)
	result = await agent_with(model, ran).run()
	assert ran == [] and result.status == "success"
	[error] = results(model, 1)
	assert (
		"cut off at the output token limit" in error["error"]
		and "none of it was run" in error["error"]
	)


async def test_a_reply_with_two_json_objects_runs_nothing() -> None:
	"""Two envelopes in one reply: which one was meant is a guess, so neither runs."""
	ran: list[Any] = []
	two = (
		envelope(call_tool("local.add", a=1, b=2))
		+ "\n"
		+ envelope(call_tool("local.add", a=3, b=4))
	)
	model = ScriptedModel([two, finish(result="x")])
	await agent_with(model, ran).run()
	assert ran == []
	assert "held 2 JSON objects" in model.last_turn()["results"][0]["error"]


async def test_commands_after_finish_are_named_as_ignored() -> None:
	"""finish ends the reply: later commands do not run, and each one is reported."""
	ran: list[Any] = []
	errors: list[Any] = []
	model = ScriptedModel(
		[[finish(result="done"), call_tool("local.add", a=1, b=1), update_plan("x")]]
	)
	agent = agent_with(model, ran)
	agent.on("error", errors.append)
	result = await agent.run()
	assert result.status == "success" and ran == []
	ignored = [e.message for e in errors if e.kind == "ignored"]
	assert ignored == [
		"command 1 (callTool) did not run: it came after finish",
		"command 2 (updatePlan) did not run: it came after finish",
	]


async def test_commands_after_an_answered_question_are_reported_to_the_model() -> None:
	"""requestHumanInput ends the reply too; the model reads which commands did not run."""
	ran: list[Any] = []
	model = ScriptedModel(
		[[ask_human("ok?"), call_tool("local.add", a=1, b=1)], finish(result="x")]
	)
	await agent_with(model, ran, on_human_input_request=lambda q: "yes").run()
	assert ran == []
	assert results(model, 1) == [
		{"command": "requestHumanInput", "ok": True, "result": "yes"},
		{"ok": False, "error": "command 1 (callTool) did not run: it came after requestHumanInput"},
	]


async def test_a_valid_command_next_to_an_invalid_one_does_not_run_and_both_are_named() -> None:
	"""All or nothing: the model hears about the invalid command and the valid one that did not run."""
	ran: list[Any] = []
	model = ScriptedModel(
		[[call_tool("local.add", a=1, b=2), call_tool("local.add", a="x", b=2)], finish(result="x")]
	)
	await agent_with(model, ran).run()
	assert ran == []
	invalid, not_run = results(model, 1)
	assert "command 1 (callTool local.add): invalid input" in invalid["error"]
	assert "command(s) 0 were valid but did not run" in not_run["error"]


async def test_a_reply_nested_a_thousand_levels_is_an_error_for_the_model_not_a_crash() -> None:
	"""Deep nesting is refused with a clear error; the run goes on and keeps its state."""
	deep = (
		'{"commands": [{"type": "callTool", "tool": "local.add", "input": '
		+ "[" * 1000
		+ "]" * 1000
		+ "}]}"
	)
	model = ScriptedModel([deep, finish(result="x")])
	result = await agent_with(model).run()
	assert result.status == "success"
	assert "nested too deeply" in results(model, 1)[0]["error"]


@pytest.mark.parametrize("depth", [70, 5000])
async def test_deep_nesting_in_prose_is_refused_too(depth: int) -> None:
	"""Deep nesting inside prose around the JSON is refused the same way."""
	text = "Here: " + '{"type": "finish", "output": ' + "[" * depth + "]" * depth + "} ok"
	model = ScriptedModel([text, finish(result="x")])
	result = await agent_with(model).run()
	assert result.status == "success"
	assert "nested too deeply" in results(model, 1)[0]["error"]


async def test_a_reply_over_the_size_cap_runs_nothing_and_is_not_kept_whole() -> None:
	"""A reply past max_reply_chars is refused; the history keeps only its start."""
	big = envelope(call_tool("local.add", a=1, b=2)) + " " * 5000
	model = ScriptedModel([big, finish(result="x")])
	agent = agent_with(model, config={"max_reply_chars": 2000})
	result = await agent.run()
	assert "more than the 2000 allowed" in results(model, 1)[0]["error"]
	assert len(result.history[1].content) <= 1000


async def test_broken_json_of_a_megabyte_gets_one_clear_error() -> None:
	"""Unbalanced braces across a megabyte of text are parsed once, linearly, into one error."""
	text = '{"a": "' + "{" * 300_000 + '" ' + "{" * 300_000
	model = ScriptedModel([text, finish(result="x")])
	result = await agent_with(model).run()
	assert result.status == "success"
	assert "not valid JSON" in results(model, 1)[0]["error"]


async def test_unknown_names_get_the_nearest_ones_first() -> None:
	"""With many tools, an unknown tool gets the closest handles, not the whole list."""
	tools = [
		FunctionTool(
			handle=f"tool{i:02d}", description="", function=lambda i, c: 1, input_schema=ADD
		)
		for i in range(50)
	]
	tools.append(
		FunctionTool(
			handle="sendMessage", description="", function=lambda i, c: 1, input_schema=ADD
		)
	)
	model = ScriptedModel([call_tool("local.sendMesage", a=1, b=2), finish(result="x")])
	om = OpenMolt(entry_points=False)
	await om.create_agent(name="N", model=model, tools=tools, output_schema=OUT).run()
	error = results(model, 1)[0]["error"]
	assert "did you mean 'local.sendMessage'?" in error and len(error) < 200


async def test_a_tool_named_with_another_verb_for_its_act_gets_that_tool_first() -> None:
	"""``sendMessage`` is ``postMessage`` here: spelling alone offered ``scheduleMessage``."""
	handles = ["postMessage", "scheduleMessage", "deleteMessage", "listChannels", "getUser"]
	tools = [
		FunctionTool(handle=h, description="", function=lambda i, c: 1, input_schema=ADD)
		for h in handles
	]
	script = [
		call_tool("local.sendMessage", a=1, b=2),
		call_tool("local.removeMessage", a=1, b=2),
		call_tool("local.fetchUser", a=1, b=2),
		finish(result="x"),
	]
	model = ScriptedModel(script)
	om = OpenMolt(entry_points=False)
	await om.create_agent(name="N", model=model, tools=tools, output_schema=OUT).run()
	errors = [results(model, step)[0]["error"] for step in (1, 2, 3)]
	assert "did you mean 'local.postMessage'?" in errors[0]
	assert "did you mean 'local.deleteMessage'?" in errors[1]
	assert "did you mean 'local.getUser'?" in errors[2]


def test_same_act_knows_the_verbs_apis_use_for_one_act() -> None:
	"""Another verb of the act and the same object; the prefix and case of what exists kept."""
	from openmolt_core._hints import close_match
	from openmolt_core._support.suggest import same_act

	pool = ["slack.postMessage", "slack.scheduleMessage", "github.listIssues", "s3.putObject"]
	assert same_act("slack.sendMessage", pool) == ["slack.postMessage"]
	assert same_act("github.getIssues", pool) == ["github.listIssues"]
	assert same_act("github.searchIssues", pool) == ["github.listIssues"]
	assert same_act("s3.uploadObject", pool) == ["s3.putObject"]
	assert same_act("github.sendMessage", pool) == []  # another integration's tool is not it
	assert same_act("slack.frobMessage", pool) == []
	assert same_act("postMessage", pool) == []
	assert close_match("slack.sendMessage", pool) == "slack.postMessage"


def test_a_near_exact_name_comes_before_another_verb_and_a_cancel_is_no_delete() -> None:
	"""``getMessage`` is ``getMessages`` before ``listMessage``; the same name spelt otherwise
	first; ``cancel`` and ``archive`` are acts of their own (never offered as a delete)."""
	from openmolt_core._hints import close_match
	from openmolt_core._support.suggest import nearest, same_act

	pool = ["gmail.getMessages", "gmail.listMessage", "gmail.trashMessage"]
	assert close_match("gmail.getMessage", pool) == "gmail.getMessages"
	assert nearest("gmail.getMessage", pool)[0] == "gmail.getMessages"
	assert nearest("x.post_message", ["x.send_message", "x.postMessage"])[0] == "x.postMessage"
	assert same_act("x.removeLabel", ["x.archiveLabel", "x.cancelLabel", "x.deleteLabel"]) == [
		"x.deleteLabel"
	]
	assert same_act("stripe.cancelSubscription", ["stripe.deleteSubscription"]) == []


async def test_an_unknown_field_gets_the_nearest_field_name() -> None:
	"""A misspelled command field is named with the field it probably meant."""
	model = ScriptedModel([{"type": "finish", "outptu": {"result": "x"}}, finish(result="x")])
	await agent_with(model).run()
	error = results(model, 1)[0]["error"]
	assert "outptu" in error and "did you mean 'output'" in error


class Exploding:
	name = "boom"
	calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		if self.calls == 1:
			return ModelResponse(text=envelope(call_tool("local.add", a=1, b=2)), usage=Usage(1, 1))
		return ModelResponse(text=envelope(finish(result="x")), usage=Usage(1, 1))


async def test_an_unexpected_exception_in_a_step_is_a_run_error_with_the_state(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A bug inside a step ends the run as RunError carrying the state, never a bare exception."""
	from openmolt_core import offload

	async def broken(*args: Any, **kwargs: Any) -> Any:
		raise RecursionError("maximum recursion depth exceeded")

	monkeypatch.setattr(offload.Offload, "shrink", broken)
	agent = agent_with(Exploding())
	with pytest.raises(RunError, match="RecursionError") as info:
		await agent.run("go")
	state = info.value.result.state
	assert info.value.result.status == "error" and state.steps == 1
	assert agent.last_state is state


TEXT_IN = {
	"type": "object",
	"properties": {"text": {"type": "string"}},
	"required": ["text"],
	"additionalProperties": False,
}
ANY_OUT = {"type": "object", "properties": {"value": {}}, "required": ["value"]}


def text_agent(model: Any, ran: list[Any], result: Any = "ok", **options: Any) -> Any:
	tool = FunctionTool(
		handle="echo",
		description="",
		function=lambda i, c: ran.append(i) or result,
		input_schema=TEXT_IN,
	)
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="S", model=model, tools=[tool], output_schema=ANY_OUT, **options)


def _encodes(state: Any) -> None:
	"""The state is JSON that encodes as UTF-8, as a store writes it."""
	json.dumps(state.to_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")


POISON = [
	# (where the model's text goes, the raw reply, what the error says)
	(
		"tool input",
		r'{"commands":[{"type":"callTool","tool":"local.echo","input":{"text":"a\ud800"}}]}',
		"lone surrogate",
	),
	(
		"low half alone",
		r'{"commands":[{"type":"callTool","tool":"local.echo","input":{"text":"\udc00b"}}]}',
		"lone surrogate",
	),
	(
		"a key",
		r'{"commands":[{"type":"callTool","tool":"local.echo","input":{"text":"x","\ud800":1}}]}',
		"lone surrogate",
	),
	(
		"finish output",
		r'{"commands":[{"type":"finish","status":"success","output":{"value":"\ud800"}}]}',
		"lone surrogate",
	),
	(
		"human message",
		r'{"commands":[{"type":"finish","status":"success","output":{"value":1},"humanMessage":"\udfff"}]}',
		"lone surrogate",
	),
	(
		"plan",
		r'{"commands":[{"type":"updatePlan","plan":[{"step":"\ud83d","status":"pending"}]}]}',
		"lone surrogate",
	),
	(
		"question",
		r'{"commands":[{"type":"requestHumanInput","message":"\ud800?"}]}',
		"lone surrogate",
	),
	(
		"NaN output",
		'{"commands":[{"type":"finish","status":"success","output":{"value":NaN}}]}',
		"NaN is not a JSON number",
	),
	(
		"Infinity",
		'{"commands":[{"type":"finish","status":"success","output":{"value":-Infinity}}]}',
		"-Infinity is not a JSON number",
	),
	(
		"overflowing number",
		'{"commands":[{"type":"finish","status":"success","output":{"value":1e999}}]}',
		"too large for a JSON number",
	),
	(
		"duplicate key",
		'{"commands":[{"type":"callTool","tool":"local.echo","input":{"text":"a","text":"b"}}]}',
		"appears twice",
	),
	(
		"duplicate command field",
		'{"commands":[{"type":"callTool","type":"finish","tool":"local.echo","input":{"text":"a"}}]}',
		"appears twice",
	),
	(
		"duplicate in prose",
		'Sure: {"commands":[{"type":"callTool","tool":"local.echo","input":{"text":"a","text":"b"}}]} done',
		"appears twice",
	),
	(
		"surrogate in prose",
		r'Here {"commands":[{"type":"callTool","tool":"local.echo","input":{"text":"\ud800"}}]}',
		"lone surrogate",
	),
]


@pytest.mark.parametrize(("where", "reply", "said"), POISON, ids=[p[0] for p in POISON])
async def test_a_reply_a_state_could_not_hold_runs_nothing_and_the_state_stays_encodable(
	where: str, reply: str, said: str
) -> None:
	"""Lone surrogates, NaN/Infinity and duplicate keys are refused as feedback, never run."""
	ran: list[Any] = []
	model = ScriptedModel([reply, finish(value="done")])
	result = await text_agent(model, ran).run()
	assert ran == [] and result.status == "success" and result.output == {"value": "done"}
	error = results(model, 1)[0]["error"]
	assert said in error and "nothing was run" in error
	_encodes(result.state)
	json.dumps(result.to_dict(), allow_nan=False).encode("utf-8")


async def test_a_pair_of_surrogate_escapes_is_one_character_and_fine() -> None:
	"""A valid escaped pair (an emoji) is text: it runs."""
	ran: list[Any] = []
	reply = (
		r'{"commands":[{"type":"callTool","tool":"local.echo","input":{"text":"\ud83d\ude00"}}]}'
	)
	model = ScriptedModel([reply, finish(value="done")])
	await text_agent(model, ran).run()
	assert ran == [{"text": "\U0001f600"}]


@pytest.mark.parametrize(
	"bad",
	['{"text":"\\ud800"}', '{"text":"a","text":"b"}', '{"text":NaN}'],
	ids=["surrogate", "duplicate", "nan"],
)
async def test_a_tool_input_sent_as_json_text_is_held_to_the_same_rules(bad: str) -> None:
	"""Where a dialect sends a tool's input as JSON text, the decoded text is checked too."""
	from openmolt_core._parse import parse_reply
	from openmolt_core._support.schemafit import Decode, ObjectRepair
	from openmolt_core.prompt import dumps

	def restore(data: Any) -> Any:
		for command in data["commands"]:
			ObjectRepair((("input", False, Decode()),))(command)
		return data

	reply = json.dumps({"commands": [{"type": "callTool", "tool": "local.echo", "input": bad}]})
	parsed = parse_reply(reply, dumps=dumps, restore=restore)
	assert parsed.commands == [] and "nothing was run" in parsed.errors[0]
	parsed.cleaned.encode("utf-8")


@pytest.mark.parametrize(
	"value",
	["bad\ud800text", float("nan"), float("inf"), {"k\udc00": [float("-inf"), "\ud800"]}],
	ids=["surrogate", "nan", "inf", "nested"],
)
async def test_a_tool_result_a_state_could_not_hold_is_made_encodable(value: Any) -> None:
	"""A tool's result is not the model's to fix: it reaches the model and the state encodable."""
	ran: list[Any] = []
	model = ScriptedModel([call_tool("local.echo", text="x"), finish(value="done")])
	result = await text_agent(model, ran, result=value).run()
	assert ran and result.status == "success"
	turn = model.requests[1].messages[-1].content
	turn.encode("utf-8")
	assert json.loads(turn)["results"][0]["ok"] is True
	_encodes(result.state)


async def test_a_result_parked_for_a_human_stays_encodable() -> None:
	"""Results held in the saved state while a question waits are made encodable too."""
	ran: list[Any] = []
	model = ScriptedModel([[call_tool("local.echo", text="x"), ask_human("ok?")]])
	from openmolt import HumanInputUnavailable

	def nobody(question: Any) -> Any:
		raise HumanInputUnavailable("no one to ask")

	agent = text_agent(
		model, ran, result={"v": float("nan"), "s": "\ud800"}, on_human_input_request=nobody
	)
	result = await agent.run()
	assert result.status == "human_input_required", result.status
	_encodes(result.state)


@pytest.mark.parametrize(
	"value",
	[
		"\ud800" + "x" * 5000,
		{"a": [float("nan")] * 500, "b": "\udc00" * 2000},
		'["\\ud800", "' + "x" * 5000 + '"]',
	],
	ids=["text", "document", "json-text"],
)
async def test_a_large_result_stored_as_a_file_stays_encodable(value: Any) -> None:
	"""A result past the size cap is stored in the file store: that path is made encodable too."""
	ran: list[Any] = []
	model = ScriptedModel([call_tool("local.echo", text="x"), finish(value="done")])
	agent = text_agent(model, ran, result=value, config={"max_result_chars": 1000})
	result = await agent.run()
	assert result.status == "success" and ran
	turn = json.loads(model.requests[1].messages[-1].content)
	assert "stored" in turn["results"][0]["result"]
	_encodes(result.state)


async def test_a_pydantic_output_is_held_to_the_schema_the_model_was_shown() -> None:
	"""``"5"`` is no integer and ``"off"`` no boolean: pydantic's lax mode took both, while the
	same schema as a dict (and every tool input) refused them. The model is asked again."""
	from pydantic import BaseModel

	class Out(BaseModel):
		n: int
		flag: bool
		meta: dict[str, Any]

	model = ScriptedModel(
		[
			finish(n="5", flag="off", meta={}),
			finish(n=5, flag=False, meta={}),
		]
	)
	om = OpenMolt(entry_points=False)
	result = await om.create_agent(name="P", model=model, output_schema=Out).run()
	assert result.ok and result.output == Out(n=5, flag=False, meta={})
	error = results(model, 1)[0]["error"]
	assert "n: Input should be a valid integer" in error and "flag:" in error


async def test_json_text_a_reply_carries_is_held_to_the_depth_cap() -> None:
	"""An output sent as JSON text (the OpenAI dialect sends a free-form output so) was decoded
	after the depth cap was checked: 900 levels ran. It is refused as a deep reply is."""
	import httpx

	def reply(text: str) -> dict[str, Any]:
		content = [{"type": "output_text", "text": text}]
		return {"status": "completed", "output": [{"type": "message", "content": content}]}

	answers = [
		reply(json.dumps({"commands": [{"type": "finish", "output": "[" * 900 + "]" * 900}]})),
		reply(json.dumps({"commands": [{"type": "finish", "output": "[]"}]})),
	]
	sent: list[dict[str, Any]] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(json.loads(request.content))
		return httpx.Response(200, json=answers[len(sent) - 1])

	om = OpenMolt(
		llm_providers={"openai": {"api_key": "sk-test-000000", "max_retries": 0}},
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
	)
	result = await om.create_agent(name="D", model="openai:gpt-5-mini").run("go")
	assert result.ok and result.output == []
	assert "nested too deeply" in json.dumps(sent[1])
	await om.aclose()


@pytest.mark.parametrize("tag", ["<think>", "<THINKING>", "<think>{"])
def test_unclosed_think_tags_are_read_in_linear_time(tag: str) -> None:
	"""A megabyte of think tags that never close is one clear error, quickly (it took minutes)."""
	import time

	from openmolt_core._parse import parse_reply

	text = tag * (1_000_000 // len(tag))
	start = time.process_time()
	parsed = parse_reply(text, dumps=json.dumps)
	# 0.1 s here; a quadratic scan took 10 minutes; CPU time: another process's load does not stretch it
	assert time.process_time() - start < 5
	assert parsed.errors and not parsed.commands


THINK_OUTPUT = "Wrap it as <think>plan</think> then <THINKING>x</THINKING> answer"


@pytest.mark.parametrize(
	"shape",
	[
		"{}",
		"```json\n{}\n```",
		"<think>I will {finish}.</think>\n{}",
		"<thinking>first</thinking> <think>then</think>{}",
		'<think>he said "hi {</think>{}',
		"Here it is: {} — done.",
	],
)
def test_think_tags_inside_a_json_string_are_content(shape: str) -> None:
	"""Only think blocks around the JSON are dropped: a value that speaks of them is kept whole."""
	from openmolt_core._parse import parse_reply

	reply = json.dumps({"commands": [finish({"text": THINK_OUTPUT})]})
	parsed = parse_reply(shape.replace("{}", reply), dumps=json.dumps)
	assert not parsed.errors
	assert parsed.commands[0].output == {"text": THINK_OUTPUT}
