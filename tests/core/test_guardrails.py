"""Guardrails: the four stages, rewrite, refuse and trip, parallel input checks, agents as guards."""

import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from openmolt import ConfigurationError, OpenMolt, RunState
from openmolt_core.capabilities.safety import GuardrailEvent
from openmolt_core.cli._exit import ExitCode, for_status
from openmolt_core.guardrails import (
	VERDICT_SCHEMA,
	Guardrail,
	GuardrailCheck,
	Verdict,
	allow,
	guardrail,
	refuse,
	rewrite,
	trip,
)
from openmolt_core.llm import ModelRequest, Usage
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_plan
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


class Desk:
	"""Two local tools that record what really ran."""

	def __init__(self) -> None:
		self.ran: list[tuple[str, dict[str, Any]]] = []

		def send(to: str, text: str) -> str:
			"""Send a message.

			Args:
				to: The address.
				text: The text.
			"""
			self.ran.append(("send", {"to": to, "text": text}))
			return "sent"

		def lookup(name: str) -> dict[str, str]:
			"""Look someone up.

			Args:
				name: Their name.
			"""
			self.ran.append(("lookup", {"name": name}))
			return {"name": name, "email": f"{name}@example.com", "note": "likes tea"}

		# Declared with no labels: a tool that declares nothing counts as untrusted and outbound.
		self.tools = [tool(labels=[])(send), tool(labels=[])(lookup)]

	def agent(self, model: ScriptedModel, om: OpenMolt | None = None, **options: Any) -> Any:
		return (om or OpenMolt()).create_agent(
			name="Desk", model=model, tools=self.tools, **options
		)


def entries(request: ModelRequest) -> list[dict[str, Any]]:
	return list(json.loads(request.messages[-1].content)["results"])


# input --------------------------------------------------------------------------------------


async def test_an_input_guardrail_rewrites_what_the_model_reads() -> None:
	@guardrail("input")
	def shout(check: GuardrailCheck) -> Verdict:
		return rewrite(str(check.value).upper(), "louder")

	model = ScriptedModel([finish(result="ok")])
	result = await Desk().agent(model, guardrails=[shout]).run("hello there")
	assert result.status == "success"
	assert '"input":"HELLO THERE"' in model.requests[0].messages[0].content
	assert "hello there" not in model.requests[0].messages[0].content
	assert result.state.messages[0].content == model.requests[0].messages[0].content
	assert result.state.audit == [
		{"by": "shout", "stage": "input", "action": "rewrite", "reason": "louder", "step": 0}
	]


async def test_an_input_tripwire_ends_the_run_before_any_model_call_with_the_state_kept() -> None:
	@guardrail("input")
	def no_secrets(check: GuardrailCheck) -> Verdict | None:
		return trip("the input holds a password") if "password" in check.value else None

	model = ScriptedModel([finish(result="never")])
	agent = Desk().agent(model, guardrails=[no_secrets])
	heard: list[Any] = []
	agent.on("guardrail", heard.append)
	result = await agent.run("my password is hunter2")
	assert result.status == "guardrail_tripped"
	assert model.calls == 0
	assert result.error == "guardrail 'no_secrets' tripped on the input: the input holds a password"
	assert len(result.state.messages) == 1  # the first turn is kept: the state is whole
	assert (
		RunState.from_dict(json.loads(json.dumps(result.state.to_dict()))).audit[0]["action"]
		== "trip"
	)
	assert isinstance(heard[0], GuardrailEvent) and heard[0].action == "trip"
	assert for_status(result.status) == ExitCode.GUARDRAIL_TRIPPED == 7
	assert (await agent.run("hello")).status == "success"  # the next run is not affected


async def test_instance_guardrails_run_before_the_agents_own_each_seeing_the_last_value() -> None:
	seen: list[tuple[str, Any]] = []

	def make(name: str, suffix: str) -> Guardrail:
		def check(c: GuardrailCheck) -> Verdict:
			seen.append((name, c.value))
			return rewrite(f"{c.value}{suffix}")

		return Guardrail(check, on="input", name=name)

	om = OpenMolt(guardrails=[make("first", "-a")])
	model = ScriptedModel([finish(result="ok")])
	await Desk().agent(model, om, guardrails=[make("second", "-b")]).run("x")
	assert seen == [("first", "x"), ("second", "x-a")]
	assert '"input":"x-a-b"' in model.requests[0].messages[0].content


async def test_a_parallel_input_guardrail_cancels_the_model_call_when_it_trips() -> None:
	started = anyio.Event()
	finished: list[bool] = []

	async def slow(request: ModelRequest) -> dict[str, Any]:
		started.set()
		await anyio.sleep(5)
		finished.append(True)
		return call_tool("local.send", to="a@example.com", text="hi")

	async def judge(check: GuardrailCheck) -> Verdict:
		await started.wait()
		return trip("off-topic")

	desk = Desk()
	agent = desk.agent(
		ScriptedModel([slow]), guardrails=[Guardrail(judge, on="input", parallel=True)]
	)
	with anyio.fail_after(3):
		result = await agent.run("write me a poem")
	assert result.status == "guardrail_tripped"
	assert finished == [] and desk.ran == []
	assert "off-topic" in (result.error or "")


async def test_a_parallel_input_guardrail_that_passes_lets_the_step_run() -> None:
	async def judge(check: GuardrailCheck) -> Verdict:
		await anyio.sleep(0.01)
		return allow()

	model = ScriptedModel([call_tool("local.lookup", name="ada"), finish(result="ok")])
	desk = Desk()
	agent = desk.agent(model, guardrails=[Guardrail(judge, on="input", parallel=True)])
	result = await agent.run("who is ada?")
	assert result.status == "success" and desk.ran == [("lookup", {"name": "ada"})]


async def test_a_parallel_guardrail_cannot_rewrite_and_trips_instead() -> None:
	parallel = Guardrail(lambda c: rewrite("other"), on="input", parallel=True, name="p")
	model = ScriptedModel([finish(result="ok")])
	result = await Desk().agent(model, guardrails=[parallel]).run("x")
	assert result.status == "guardrail_tripped"
	assert "cannot rewrite" in (result.error or "")


# tool calls ---------------------------------------------------------------------------------


async def test_a_tool_call_guardrail_refuses_one_call_with_a_reason_the_model_reads() -> None:
	@guardrail("tool_call", tools=["local.send"])
	def our_domain(check: GuardrailCheck) -> Verdict | None:
		if not check.value["to"].endswith("@example.com"):
			return refuse("mail goes to @example.com only; ask the user first")
		return None

	model = ScriptedModel(
		[
			[
				call_tool("local.send", to="x@evil.example", text="hi"),
				call_tool("local.lookup", name="ada"),
			],
			call_tool("local.send", to="ada@example.com", text="hi"),
			finish(result="ok"),
		]
	)
	desk = Desk()
	result = await desk.agent(model, guardrails=[our_domain]).run("go")
	assert result.status == "success"
	assert desk.ran == [
		("lookup", {"name": "ada"}),
		("send", {"to": "ada@example.com", "text": "hi"}),
	]
	refused = entries(model.requests[1])[0]
	assert refused == {
		"tool": "local.send",
		"ok": False,
		"error": "refused by guardrail 'our_domain': mail goes to @example.com only; ask the user "
		"first",
		"guardrail": "our_domain",
	}
	assert [a["action"] for a in result.state.audit] == ["refuse"]


async def test_a_rewritten_call_runs_with_the_new_input_and_the_result_shows_it() -> None:
	@guardrail("tool_call", tools=["local.send"])
	def sign(check: GuardrailCheck) -> Verdict:
		return rewrite({**check.value, "text": check.value["text"] + " -- sent by a bot"})

	model = ScriptedModel([call_tool("local.send", to="a@example.com", text="hi"), finish()])
	desk = Desk()
	await desk.agent(model, guardrails=[sign]).run("go")
	assert desk.ran == [("send", {"to": "a@example.com", "text": "hi -- sent by a bot"})]
	assert entries(model.requests[1])[0]["input"]["text"] == "hi -- sent by a bot"


async def test_a_rewrite_that_breaks_the_tools_schema_is_refused_not_run() -> None:
	bad = Guardrail(lambda c: rewrite({"to": 5}), on="tool_call", name="bad")
	model = ScriptedModel([call_tool("local.send", to="a@example.com", text="hi"), finish()])
	desk = Desk()
	await desk.agent(model, guardrails=[bad]).run("go")
	assert desk.ran == []
	error = entries(model.requests[1])[0]["error"]
	assert error.startswith("not run: the rewritten input does not match the tool's schema")


async def test_a_tool_call_tripwire_stops_the_run_and_later_commands_do_not_run() -> None:
	"""Calls of one reply run side by side: the tripped one does not run, nor anything after."""
	stop = Guardrail(
		lambda c: trip("no sending today"), on="tool_call", tools=("local.send",), name="stop"
	)
	model = ScriptedModel(
		[
			[
				call_tool("local.lookup", name="ada"),
				call_tool("local.send", to="a@example.com", text="hi"),
				update_plan("tell ada"),
				call_tool("local.lookup", name="bo"),
			]
		]
	)
	desk = Desk()
	result = await desk.agent(model, guardrails=[stop]).run("go")
	assert result.status == "guardrail_tripped"
	assert desk.ran == [("lookup", {"name": "ada"})]
	assert result.state.plan == []
	assert result.error == "guardrail 'stop' tripped on the call of local.send: no sending today"
	last = json.loads(result.state.messages[-1].content)["results"]
	assert [e["ok"] for e in last] == [True, False, False, False]
	model.assert_consumed()


async def test_a_guardrail_that_raises_or_answers_nonsense_fails_closed() -> None:
	def broken(check: GuardrailCheck) -> Verdict:
		raise RuntimeError("boom")

	model = ScriptedModel([call_tool("local.send", to="a@example.com", text="hi"), finish()])
	desk = Desk()
	await desk.agent(model, guardrails=[Guardrail(broken, on="tool_call")]).run("go")
	assert desk.ran == []
	assert "the guardrail failed (RuntimeError: boom)" in entries(model.requests[1])[0]["error"]

	model = ScriptedModel([finish()])
	nonsense = Guardrail(lambda c: "fine", on="input", name="nonsense")  # type: ignore[arg-type,return-value]
	result = await desk.agent(model, guardrails=[nonsense]).run("go")
	assert result.status == "guardrail_tripped"
	assert "returned str, not a Verdict" in (result.error or "")


async def test_labels_and_tools_select_what_a_tool_guardrail_checks() -> None:
	checked: list[str] = []

	def note(c: GuardrailCheck) -> None:
		checked.append(c.tool)

	model = ScriptedModel(
		[
			[
				call_tool("local.lookup", name="ada"),
				call_tool("local.send", to="a@example.com", text="hi"),
			],
			finish(),
		]
	)
	guards = [
		Guardrail(note, on="tool_call", tools=("local.*", "!local.lookup"), name="a"),
		Guardrail(note, on="tool_call", labels=("untrusted",), name="b"),
	]
	await Desk().agent(model, guardrails=guards).run("go")
	assert checked == ["local.send"]


@pytest.mark.parametrize(
	("rule", "level", "message"),
	[
		("send", "agent", r"'send' is a tool: did you mean 'local.send'"),
		("send", "instance", r"'send' is a tool: did you mean 'local.send'"),
		("local.sned", "agent", r"no tool of local matches 'sned'; did you mean 'send'"),
		("stripe", "agent", r"this agent uses no integration 'stripe'"),
	],
)
def test_a_tool_rule_that_selects_nothing_is_refused(rule: str, level: str, message: str) -> None:
	"""A guardrail's tools rule is checked against the agent's tools, as approval rules are."""
	guard = Guardrail(lambda c: None, on="tool_call", tools=[rule], name="g")
	om = OpenMolt(guardrails=[guard]) if level == "instance" else OpenMolt()
	own = [guard] if level == "agent" else []
	with pytest.raises(ConfigurationError, match=rf"guardrail 'g': tools\[0\] '{rule}': {message}"):
		om.create_agent(name="A", model=ScriptedModel([]), tools=Desk().tools, guardrails=own)
	# An instance's guardrail may name an integration other agents use.
	other = Guardrail(lambda c: None, on="tool_call", tools=["stripe"], name="g")
	OpenMolt(guardrails=[other]).create_agent(name="A", model=ScriptedModel([]), tools=Desk().tools)


def test_a_tool_rule_naming_a_capabilitys_run_time_tools_stands() -> None:
	"""A capability that lists tools at run time names their handles: a rule for them is kept."""
	from openmolt_core._binding import BoundTool
	from openmolt_core.hooks import Capability

	class Lister(Capability):
		name = "lister"

		async def list_tools(self) -> Sequence[BoundTool]:
			return ()

	guard = Guardrail(lambda c: None, on="tool_call", tools=["lister.x"], name="g")
	OpenMolt().create_agent(
		name="A", model=ScriptedModel([]), capabilities=[Lister()], guardrails=[guard]
	)


# tool results -------------------------------------------------------------------------------


async def test_a_result_guardrail_rewrites_or_withholds_what_the_model_reads() -> None:
	@guardrail("tool_result", tools=["local.lookup"])
	def drop_notes(check: GuardrailCheck) -> Verdict:
		if check.value["name"] == "eve":
			return refuse("eve's record is sealed")
		return rewrite({k: v for k, v in check.value.items() if k != "note"}, "notes dropped")

	model = ScriptedModel(
		[
			[call_tool("local.lookup", name="ada"), call_tool("local.lookup", name="eve")],
			finish(),
		]
	)
	await Desk().agent(model, guardrails=[drop_notes]).run("go")
	ada, eve = entries(model.requests[1])
	assert ada["result"] == {"name": "ada", "email": "ada@example.com"}
	assert eve == {
		"tool": "local.lookup",
		"ok": False,
		"error": "result withheld by guardrail 'drop_notes': eve's record is sealed",
		"guardrail": "drop_notes",
	}


# output -------------------------------------------------------------------------------------


async def test_an_output_guardrail_refuses_a_finish_and_the_model_tries_again() -> None:
	@guardrail("output")
	def polite(check: GuardrailCheck) -> Verdict | None:
		return refuse("no shouting") if check.value["result"].isupper() else None

	model = ScriptedModel([finish(result="DONE"), finish(result="Done.")])
	result = await Desk().agent(model, guardrails=[polite]).run("go")
	assert result.status == "success" and result.output == {"result": "Done."}
	(entry,) = entries(model.requests[1])
	assert entry["command"] == "finish" and entry["ok"] is False
	assert "no shouting" in entry["error"]


async def test_an_output_guardrail_rewrites_the_output_or_trips() -> None:
	redact = Guardrail(lambda c: rewrite({"result": "[redacted]"}), on="output", name="r")
	result = (
		await Desk().agent(ScriptedModel([finish(result="s3cret")]), guardrails=[redact]).run("go")
	)
	assert result.status == "success" and result.output == {"result": "[redacted]"}

	stop = Guardrail(lambda c: trip("leaks"), on="output", name="stop")
	result = (
		await Desk().agent(ScriptedModel([finish(result="s3cret")]), guardrails=[stop]).run("go")
	)
	assert result.status == "guardrail_tripped" and result.output is None
	assert result.error == "guardrail 'stop' tripped on the output: leaks"


async def test_an_output_rewrite_must_still_match_the_output_schema() -> None:
	schema = {
		"type": "object",
		"properties": {"n": {"type": "integer"}},
		"required": ["n"],
		"additionalProperties": False,
	}
	wrong = Guardrail(lambda c: rewrite({"n": "many"}), on="output", name="wrong")
	model = ScriptedModel([finish(n=3)])
	result = await Desk().agent(model, guardrails=[wrong], output_schema=schema).run("go")
	assert result.status == "guardrail_tripped"
	assert "does not match the output schema" in (result.error or "")


# agents as guardrails -----------------------------------------------------------------------


async def test_an_agent_as_guardrail_judges_with_a_verdict_and_its_usage_counts() -> None:
	om = OpenMolt()
	judge_model = ScriptedModel(
		[finish(action="refuse", reason="that address is not in the contacts")],
		usage=Usage(input_tokens=100, output_tokens=7),
	)
	judge = om.create_agent(name="Judge", model=judge_model, output_schema=VERDICT_SCHEMA)
	model = ScriptedModel([call_tool("local.send", to="x@evil.example", text="hi"), finish()])
	desk = Desk()
	result = await desk.agent(
		model, om, guardrails=[Guardrail(judge, on="tool_call", tools=("local.send",))]
	).run("go")
	assert desk.ran == []
	assert (
		"refused by guardrail 'Judge': that address is not in the contacts"
		in entries(model.requests[1])[0]["error"]
	)
	payload = json.loads(judge_model.requests[0].messages[0].content.split(',"input":', 1)[1][:-1])
	assert payload == {
		"stage": "tool_call",
		"value": {"to": "x@evil.example", "text": "hi"},
		"tool": "local.send",
		"labels": [],
	}
	assert result.usage.input_tokens == 2 * 10 + 100  # the guard's run counts in the caller's


async def test_a_guardrail_agent_that_does_not_succeed_fails_closed() -> None:
	om = OpenMolt()
	judge = om.create_agent(
		name="Judge", model=ScriptedModel([finish(status="failure", result="?")])
	)
	model = ScriptedModel([finish()])
	result = await Desk().agent(model, om, guardrails=[Guardrail(judge, on="input")]).run("go")
	assert result.status == "guardrail_tripped"
	assert "the guardrail agent ended with failure" in (result.error or "")


# configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
	("make", "message"),
	[
		(lambda: Guardrail(lambda c: None, on="later"), "on must be one of"),  # type: ignore[arg-type]
		(lambda: Guardrail(lambda c: None, on="input", tools=("local.send",)), "tools and labels"),
		(lambda: Guardrail(lambda c: None, on="output", parallel=True), "parallel is for input"),
		(lambda: Guardrail(lambda c: None, on="tool_call", labels=("loud",)), "not a label"),
		(lambda: Guardrail(42, on="input"), "check must be a function or an agent"),  # type: ignore[arg-type]
	],
)
def test_a_malformed_guardrail_is_refused_with_the_field(make: Any, message: str) -> None:
	with pytest.raises(ConfigurationError, match=message):
		make()


def test_a_bare_function_is_not_a_guardrail() -> None:
	with pytest.raises(ConfigurationError, match=r"guardrails\[0\] is a function, not a Guardrail"):
		OpenMolt(guardrails=[lambda c: None])  # type: ignore[list-item]
	with pytest.raises(ConfigurationError, match="create_agent: guardrails"):
		Desk().agent(ScriptedModel([]), guardrails=[print])


def test_verdicts_round_trip_and_bad_ones_are_named() -> None:
	for verdict in (allow(), rewrite({"a": 1}, "x"), refuse("no"), trip("stop")):
		assert Verdict.from_dict(verdict.to_dict()) == verdict
	with pytest.raises(ValueError, match="a verdict needs 'action'"):
		Verdict.from_dict({"action": "maybe"})
	with pytest.raises(ValueError, match="needs the new 'value'"):
		Verdict.from_dict({"action": "rewrite", "reason": ""})


async def test_a_call_rewritten_then_parked_for_approval_is_decided_and_run_as_rewritten() -> None:
	@guardrail("tool_call", tools=["local.send"])
	def sign(check: GuardrailCheck) -> Verdict:
		text = check.value["text"]
		return rewrite(
			{**check.value, "text": text if text.endswith("-- bot") else text + " -- bot"}
		)

	model = ScriptedModel([call_tool("local.send", to="a@example.com", text="hi"), finish()])
	desk = Desk()
	agent = desk.agent(model, guardrails=[sign], requires_approval=["local.send"])
	parked = await agent.run("go")
	assert parked.status == "approval_required" and desk.ran == []
	(request,) = agent.approval_requests(parked.state)
	assert request.input == {"to": "a@example.com", "text": "hi -- bot"}
	done = await agent.resume(parked.state, decision=request.approve())
	assert done.status == "success"
	assert desk.ran == [("send", {"to": "a@example.com", "text": "hi -- bot"})]


async def test_a_replayed_run_does_not_ask_its_guardrails_again() -> None:
	"""Verdicts are journaled through the run's port: after a restart the journal answers."""
	from openmolt_core.llm import Message

	from .test_approval_decisions import JournalPort

	asked: list[str] = []

	def note(check: GuardrailCheck) -> Verdict:
		asked.append(check.stage)
		return rewrite(check.value)  # rewrite to the same value: recorded in the audit

	guards = [Guardrail(note, on=stage, name=stage) for stage in ("input", "tool_call", "output")]
	port = JournalPort()
	desk = Desk()

	async def one_run() -> Any:
		model = ScriptedModel([call_tool("local.lookup", name="ada"), finish(result="ok")])
		agent = desk.agent(model, guardrails=guards)
		state = RunState(run_id="run-1")
		state.messages.append(Message("user", agent.first_message("go", state)))
		return await agent._loop(agent._context(state, port), None)

	first = await one_run()
	replayed = await one_run()
	assert asked == ["input", "tool_call", "output"]
	assert {"guard:0:input:0:0", "guard:1:tool_call:0:0", "guard:2:output:0:0"} <= set(port.keys)
	assert first.state.audit == replayed.state.audit
	assert [m.content for m in first.state.messages] == [m.content for m in replayed.state.messages]
	assert [a["stage"] for a in first.state.audit] == ["input", "tool_call", "output"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio starts a batch in random order
async def test_a_tripwire_in_a_batch_keeps_the_calls_that_have_not_started_from_running() -> None:
	"""A tripwire stops the run: a call of the same reply that has not started does not start.

	The guarded call comes first and trips before the unguarded one starts (asyncio starts the
	batch's tasks in order); that one is watched by no guardrail, and neither the taint policy
	nor any capability would refuse it.
	"""

	async def no_sending(check: GuardrailCheck) -> Verdict:
		return trip("no sending today")

	stop = Guardrail(no_sending, on="tool_call", tools=("local.send",), name="stop")
	model = ScriptedModel(
		[
			[
				call_tool("local.send", to="a@example.com", text="hi"),
				call_tool("local.lookup", name="ada"),
			]
		]
	)
	desk = Desk()
	agent = desk.agent(model, guardrails=[stop], taint_policy="allow")
	result = await agent.run("go")
	assert result.status == "guardrail_tripped"
	assert desk.ran == []  # lookup never ran
	last = json.loads(result.state.messages[-1].content)["results"]
	assert last[1] == {"tool": "local.lookup", "ok": False, "error": "not run: the run stopped"}
	assert last[0]["guardrail"] == "stop"
	model.assert_consumed()
