"""A sub-agent's words for people are judged by its callers' message guardrails too.

A sub-agent runs as a tool of its caller: its question and its calls' reasons reach people of the
caller (the caller's approver decides the sub-agent's calls when it has none; its events, with
``parent_run_id``, reach the caller's handlers, a chat, a viewer, AG-UI; a question it parks on
is what the caller's call says it waits for). They were judged only by the sub-agent's own
message guardrails: a caller that redacts e-mail addresses from what people read let
``"Is ada@example.com the right address?"`` from a sub-agent without one reach them. The safety
capability hands its message guardrails down to the runs its calls start (`CallerWords`): the
sub-agent's own judge first, then its caller's, the outermost caller's last.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.decisions import ApprovalRequest
from openmolt_core.guardrails import Guardrail, GuardrailCheck, guardrail, rewrite
from openmolt_core.guardrails.pii import pii_redaction
from openmolt_core.result import RunState, waiting_for
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

QUESTION = "Is ada@example.com the right address?"
REDACTED = "Is [email] the right address?"
REASON = "ada@example.com asked for it"
REDACTED_REASON = "[email] asked for it"
ADDRESS = "ada@example.com"
WATCHED = (
	"approval:request",
	"approval:decision",
	"error",
	"finish",
	"guardrail",
	"humanInput",
	"tool:call",
	"tool:response",
)
"""The events a person of the caller may read (a chat, a viewer, AG-UI)."""


def redaction(action: Any = "rewrite") -> Guardrail:
	return pii_redaction("output", kinds=["email"], action=action)


def refund(customer: str, amount: int) -> dict[str, Any]:
	"""Refund a customer.

	Args:
		customer: The customer id.
		amount: Cents.
	"""
	return {"refunded": amount}


def refund_call(reason: str = REASON) -> dict[str, Any]:
	return {**call_tool("local.refund", customer="cus_1", amount=500), "reason": reason}


def delegate(task: str = "refund ada") -> dict[str, Any]:
	return call_tool("local.helper", task=task)


def park(question: str) -> str:
	raise HumanInputUnavailable(question)  # nobody can answer now: the run parks


def helper(om: OpenMolt, replies: list[Any], *guards: Guardrail, **options: Any) -> Any:
	"""A sub-agent that may refund (each refund waits for approval), with no approver of its own."""
	return om.create_agent(
		name="helper",
		model=ScriptedModel(replies),
		tools=[refund],
		requires_approval=["local.refund"],
		guardrails=list(guards),
		max_steps=4,
		**options,
	)


def boss(om: OpenMolt, replies: list[Any], sub: Any, *guards: Guardrail, **options: Any) -> Any:
	"""The calling agent: it delegates to ``sub``."""
	return om.create_agent(
		name="boss",
		model=ScriptedModel(replies),
		tools=[sub],
		guardrails=list(guards),
		max_steps=4,
		**options,
	)


def approving(seen: list[ApprovalRequest]) -> Any:
	def approve(request: ApprovalRequest) -> Any:
		seen.append(request)
		return request.approve()

	return approve


def answering(asked: list[str], answer: str) -> Any:
	"""A human-input handler that notes each question it is asked and answers ``answer``."""

	def handler(question: str) -> str:
		asked.append(question)
		return answer

	return handler


def approving_noting(reasons: list[str]) -> Any:
	"""An approver that notes each reason it reads and approves."""

	def approve(request: ApprovalRequest) -> Any:
		reasons.append(request.reason)
		return request.approve()

	return approve


def everything(agent: Any) -> list[Any]:
	"""Every event the agent's handlers get (its sub-agents' too)."""
	events: list[Any] = []
	for name in WATCHED:
		agent.on(name, events.append)
	return events


def shown(events: list[Any]) -> str:
	"""What the events carry, as text (a viewer's, a chat's, AG-UI's reading of them)."""
	out = []
	for e in events:
		if e.name in ("llmOutput", "commandsQueued"):
			continue  # the model's own reply, for the operator (as for the caller's own words)
		if e.name == "finish":
			r = e.result
			pending = r.state.pending or {}
			# What waits, as a viewer lists it (the parked step's reply is the model's record).
			out += [str(r.error), str(r.human_message), str(waiting_for(pending))]
			out += [str(pending.get("message")), repr(pending.get("calls")), repr(r.state.audit)]
			continue
		out.append(repr(e))
	return "\n".join(out)


# a call's reason, for the caller's approver ---------------------------------------------------


async def test_a_sub_agents_reason_reaches_the_callers_approver_redacted() -> None:
	"""The caller's approver decides the sub-agent's call: it reads the reason the caller's guardrail let through."""
	om = OpenMolt(entry_points=False)
	seen: list[ApprovalRequest] = []
	sub = helper(om, [refund_call(), finish("refunded")])
	caller = boss(
		om, [delegate(), finish("done")], sub, redaction(), on_approval_request=approving(seen)
	)
	events = everything(caller)
	result = await caller.run("go")
	assert result.status == "success"
	assert [r.reason for r in seen] == [REDACTED_REASON]
	requests = [e for e in events if e.name == "approval:request"]
	assert [(e.agent, e.request.reason) for e in requests] == [("helper", REDACTED_REASON)]
	assert ADDRESS not in shown(events)
	verdicts = [e for e in events if e.name == "guardrail"]
	assert [(e.agent, e.guardrail, e.action, e.field, e.tool) for e in verdicts] == [
		("helper", "pii_redaction", "rewrite", "reason", "local.refund")
	]
	assert verdicts[0].parent_run_id == result.state.run_id


async def test_a_parked_sub_agents_call_keeps_the_redacted_reason() -> None:
	"""Nobody decides: the sub-agent parks, and its pending call (in its finish event) holds the redacted reason."""
	om = OpenMolt(entry_points=False)
	sub = helper(om, [refund_call()])
	caller = boss(om, [delegate(), finish("done")], sub, redaction())
	events = everything(caller)
	result = await caller.run("go")
	assert result.status == "success"
	(ended,) = [e for e in events if e.name == "finish" and e.parent_run_id]
	assert ended.result.status == "approval_required"
	(call,) = ended.result.state.pending["calls"]
	assert call["reason"] == REDACTED_REASON
	assert ADDRESS not in shown(events)


# a question -----------------------------------------------------------------------------------


async def test_a_sub_agents_question_is_redacted_for_whoever_answers_it() -> None:
	"""The sub-agent's handler and the humanInput event the caller's handlers get see the redacted question."""
	om = OpenMolt(entry_points=False)
	asked: list[str] = []

	def answer(question: str) -> str:
		asked.append(question)
		return "yes"

	sub = helper(om, [ask_human(QUESTION), finish("ok")], on_human_input_request=answer)
	caller = boss(om, [delegate(), finish("done")], sub, redaction())
	events = everything(caller)
	result = await caller.run("go")
	assert result.status == "success"
	assert asked == [REDACTED]
	assert [e.message for e in events if e.name == "humanInput"] == [REDACTED]
	assert ADDRESS not in shown(events)


async def test_a_question_a_sub_agent_parks_on_reaches_the_caller_redacted() -> None:
	"""What the caller's call says the sub-agent waits for, its error event and the sub-run's pending: redacted."""
	om = OpenMolt(entry_points=False)
	sub = helper(om, [ask_human(QUESTION)], on_human_input_request=park)
	model_replies = [delegate(), finish("done")]
	caller = boss(om, model_replies, sub, redaction())
	events = everything(caller)
	result = await caller.run("go")
	assert result.status == "success"
	(entry,) = caller.provider().last_turn()["results"]
	assert entry["ok"] is False and f"an answer to: {REDACTED}" in entry["error"]
	(ended,) = [e for e in events if e.name == "finish" and e.parent_run_id]
	assert ended.result.state.pending["message"] == REDACTED
	assert ADDRESS not in shown(events)


async def test_a_resumed_caller_hands_its_guardrails_down_too() -> None:
	"""A caller parked on its own question and resumed: the sub-agent it then calls is judged by its guardrails."""
	om = OpenMolt(entry_points=False)
	seen: list[ApprovalRequest] = []
	sub = helper(om, [refund_call(), finish("refunded")])
	replies = [ask_human("Which customer?"), delegate(), finish("done")]
	caller = boss(
		om,
		replies,
		sub,
		redaction(),
		on_human_input_request=park,
		on_approval_request=approving(seen),
	)
	parked = await caller.run("go")
	assert parked.status == "human_input_required"
	events = everything(caller)
	done = await caller.resume(RunState.from_dict(parked.state.to_dict()), answer="cus_1")
	assert done.status == "success"
	assert [r.reason for r in seen] == [REDACTED_REASON]
	assert ADDRESS not in shown(events)


# refusals and tripwires -------------------------------------------------------------------------


async def test_a_callers_refusal_goes_back_to_the_sub_agents_model() -> None:
	"""A caller's refusing guardrail: nobody is asked, the sub-agent's model reads why and asks again."""
	om = OpenMolt(entry_points=False)
	asked: list[str] = []
	sub_replies = [ask_human(QUESTION), ask_human("Is the address on file right?"), finish("ok")]
	sub = helper(om, sub_replies, on_human_input_request=answering(asked, "yes"))
	caller = boss(om, [delegate(), finish("done")], sub, redaction("refuse"))
	result = await caller.run("go")
	assert result.status == "success"
	assert asked == ["Is the address on file right?"]
	sub_model: ScriptedModel = sub.provider()
	(entry,) = json.loads(sub_model.requests[1].messages[-1].content)["results"]
	assert entry["ok"] is False and entry["guardrail"] == "pii_redaction"
	assert "fix it and ask again" in entry["error"]


async def test_a_callers_tripwire_stops_the_sub_agent_and_so_its_call() -> None:
	"""A caller's tripwire on the sub-agent's reason: no approver is asked, the sub-run stops, the call fails."""
	om = OpenMolt(entry_points=False)
	seen: list[ApprovalRequest] = []
	sub = helper(om, [refund_call()])
	caller = boss(
		om,
		[delegate(), finish("done")],
		sub,
		redaction("trip"),
		on_approval_request=approving(seen),
	)
	events = everything(caller)
	result = await caller.run("go")
	assert result.status == "success" and seen == []
	(entry,) = caller.provider().last_turn()["results"]
	assert entry["ok"] is False and "guardrail_tripped" in entry["error"]
	assert "tripped on the reason" in entry["error"]
	assert ADDRESS not in shown(events)


# order, nesting -------------------------------------------------------------------------------


def tag(label: str, seen: list[tuple[str, str, Any]] | None = None) -> Guardrail:
	"""A message guardrail that appends ``[label]`` to the words for people (and notes each check)."""

	def add(check: GuardrailCheck) -> Any:
		if seen is not None:
			seen.append((label, check.field, check.value))
		if check.field in ("message", "reason"):
			return rewrite(f"{check.value} [{label}]")
		return None

	return guardrail("output", name=label, message=True)(add)


async def test_the_sub_agents_own_judge_first_then_each_caller_outermost_last() -> None:
	"""Three deep: the innermost's own guardrail, then its caller's, then the top caller's, each once."""
	om = OpenMolt(entry_points=False)
	seen: list[ApprovalRequest] = []
	asked: list[str] = []
	inner = helper(
		om,
		[ask_human("Which month?"), refund_call("as asked"), finish("refunded")],
		tag("c"),
		on_human_input_request=answering(asked, "May"),
	)
	middle = om.create_agent(
		name="middle",
		model=ScriptedModel([delegate(), finish("ok")]),
		tools=[inner],
		guardrails=[tag("b")],
		max_steps=4,
	)
	top = om.create_agent(
		name="top",
		model=ScriptedModel([call_tool("local.middle", task="go"), finish("done")]),
		tools=[middle],
		guardrails=[tag("a")],
		on_approval_request=approving(seen),
		max_steps=4,
	)
	events = everything(top)
	assert (await top.run("go")).status == "success"
	assert asked == ["Which month? [c] [b] [a]"]
	assert [r.reason for r in seen] == ["as asked [c] [b] [a]"]
	verdicts = [(e.agent, e.guardrail, e.field) for e in events if e.name == "guardrail"]
	assert verdicts == [
		("helper", "c", "message"),
		("helper", "b", "message"),
		("helper", "a", "message"),
		("helper", "c", "reason"),
		("helper", "b", "reason"),
		("helper", "a", "reason"),
	]


async def test_a_caller_between_without_message_guardrails_passes_the_outer_ones_on() -> None:
	"""Top (with one) -> middle (none) -> inner: the top caller's guardrail still judges the inner words."""
	om = OpenMolt(entry_points=False)
	seen: list[ApprovalRequest] = []
	inner = helper(om, [refund_call(), finish("refunded")], tag("c"))
	middle = om.create_agent(
		name="middle",
		model=ScriptedModel([delegate(), finish("ok")]),
		tools=[inner],
		max_steps=4,
	)
	top = om.create_agent(
		name="top",
		model=ScriptedModel([call_tool("local.middle", task="go"), finish("done")]),
		tools=[middle],
		guardrails=[tag("a"), redaction()],
		on_approval_request=approving(seen),
		max_steps=4,
	)
	assert (await top.run("go")).status == "success"
	assert [r.reason for r in seen] == [f"{REDACTED_REASON} [c] [a]"]


async def test_the_callers_guardrails_pass_through_an_agent_without_safety() -> None:
	"""Top -> a hand-built Agent with no Safety -> inner: CallerWords hands itself on, once per run."""
	from tests.core._bare import bare_agent

	om = OpenMolt(entry_points=False)
	seen: list[ApprovalRequest] = []
	inner = helper(om, [refund_call(), finish("refunded")], tag("c"))

	async def relay(task: str, context: ToolContext) -> Any:
		"""Hand a task on to the helper.

		Args:
			task: The task.
		"""
		assert context.run is not None
		return (await inner.run(task, parent=context.run)).status

	built = om.create_agent(name="middle", model=ScriptedModel([]), tools=[relay])
	middle_model = ScriptedModel([call_tool("local.relay", task="refund"), finish("relayed")])
	middle = bare_agent(built, middle_model, name="middle", tools=list(built._tools.values()))
	assert "safety" not in middle._hooks.by_name

	async def delegate_to(task: str, context: ToolContext) -> Any:
		"""Hand a task to the middle agent.

		Args:
			task: The task.
		"""
		assert context.run is not None
		return (await middle.run(task, parent=context.run)).status

	top = om.create_agent(
		name="top",
		model=ScriptedModel([call_tool("local.delegate_to", task="go"), finish("done")]),
		tools=[delegate_to],
		guardrails=[tag("a"), redaction()],
		on_approval_request=approving(seen),
		max_steps=4,
	)
	assert (await top.run("go")).status == "success"
	assert [r.reason for r in seen] == [f"{REDACTED_REASON} [c] [a]"]


async def test_a_run_any_tool_nests_is_judged_by_its_callers_guardrails() -> None:
	"""A function tool's ``run(parent=context.run)``: the nested run's question is redacted for its handler."""
	om = OpenMolt(entry_points=False)
	asked: list[str] = []
	checker = om.create_agent(
		name="checker",
		model=ScriptedModel([ask_human(QUESTION), finish("fine")]),
		on_human_input_request=answering(asked, "yes"),
	)

	async def check(text: str, context: ToolContext) -> Any:
		"""Check a text.

		Args:
			text: The text.
		"""
		assert context.run is not None
		return (await checker.run(text, parent=context.run)).output

	caller = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.check", text="draft"), finish("ok")]),
		tools=[check],
		guardrails=[redaction()],
	)
	assert (await caller.run("go")).status == "success"
	assert asked == [REDACTED]


async def test_a_caller_without_message_guardrails_hands_none_down() -> None:
	"""No guardrail judges the text people read up the chain: the sub-agent's words go as they are."""
	om = OpenMolt(entry_points=False)
	seen: list[ApprovalRequest] = []
	outputs: list[str] = []

	@guardrail("output")
	def fields(check: GuardrailCheck) -> None:
		outputs.append(check.field)

	sub = helper(om, [refund_call(), finish("refunded")])
	caller = boss(
		om, [delegate(), finish("done")], sub, fields, on_approval_request=approving(seen)
	)
	assert (await caller.run("go")).status == "success"
	assert [r.reason for r in seen] == [REASON]
	assert outputs == ["output"]  # the caller's own finish only


async def test_a_sub_agents_finish_message_is_judged_by_its_callers_guardrails_its_output_not() -> (
	None
):
	"""The sub-agent's humanMessage reaches the caller's people (its finish event); its output is the caller's tool result."""
	om = OpenMolt(entry_points=False)
	seen: list[tuple[str, str, Any]] = []
	sub = helper(om, [finish("ok", human_message="Done for ada")])
	caller = boss(om, [delegate(), finish("done", human_message="All done")], sub, tag("a", seen))
	assert (await caller.run("go")).status == "success"
	assert seen == [
		("a", "humanMessage", "Done for ada"),
		("a", "output", "done"),
		("a", "humanMessage", "All done"),
	]


async def test_a_failing_sub_agents_message_reaches_the_callers_people_redacted() -> None:
	"""A sub-agent that fails says why to people (AG-UI's SUBAGENT_ERROR, a viewer): the caller's guardrail judges it."""
	om = OpenMolt(entry_points=False)
	said = f"Could not refund {ADDRESS}: the card expired."
	sub = helper(om, [finish(None, status="failure", human_message=said)])
	caller = boss(om, [delegate(), finish("done")], sub, redaction())
	events = everything(caller)
	result = await caller.run("go")
	assert result.status == "success"
	(ended,) = [e for e in events if e.name == "finish" and e.parent_run_id]
	assert ended.result.status == "failure"
	assert ended.result.human_message == "Could not refund [email]: the card expired."
	(verdict,) = [e for e in events if e.name == "guardrail"]
	assert (verdict.agent, verdict.action, verdict.field) == ("helper", "rewrite", "humanMessage")
	assert ADDRESS not in shown(events)


async def test_a_callers_refusal_of_a_sub_agents_message_goes_back_to_its_model() -> None:
	"""A refusing caller guardrail: the sub-agent's model reads why and finishes again."""
	om = OpenMolt(entry_points=False)
	sub = helper(
		om, [finish("ok", human_message=f"Done for {ADDRESS}"), finish("ok", human_message="Done")]
	)
	caller = boss(om, [delegate(), finish("done")], sub, redaction("refuse"))
	events = everything(caller)
	assert (await caller.run("go")).status == "success"
	sub_model: ScriptedModel = sub.provider()
	(entry,) = json.loads(sub_model.requests[1].messages[-1].content)["results"]
	assert entry["ok"] is False and "fix the humanMessage and finish again" in entry["error"]
	(ended,) = [e for e in events if e.name == "finish" and e.parent_run_id]
	assert ended.result.human_message == "Done"


# durable ----------------------------------------------------------------------------------------


def nested_in(guards: list[Guardrail]) -> Any:
	"""What a caller with these guardrails hands the run of its first call (its ``run.link``)."""
	from openmolt_core.capabilities.safety import Safety
	from openmolt_core.llm import Usage
	from openmolt_core.tools import CallingRun

	class Top:
		link = None
		state = RunState(run_id="top")
		tools: ClassVar[dict[str, Any]] = {}

	(handed,) = Safety(guards).hand_down(Top(), [object()])  # type: ignore[arg-type, list-item]

	async def nowhere(event: Any) -> None:
		"""Nobody up the chain listens."""

	return CallingRun(
		"top", "tool:1:0:local.helper", 1, 0, Usage(), lambda name: False, nowhere, **handed
	)


async def test_the_callers_verdicts_are_journaled_under_the_called_runs_keys() -> None:
	"""Keys apart from the run's own (``caller.``); a replay asks no guardrail again and says the same."""
	from .test_durability import JournalPort

	judged: list[tuple[str, str, Any]] = []
	asked: list[str] = []
	replies = [ask_human(QUESTION), finish("ok", human_message=f"Asked {ADDRESS}")]

	def agent(model: ScriptedModel) -> Any:
		return OpenMolt(entry_points=False).create_agent(
			name="helper",
			model=model,
			guardrails=[tag("own", judged)],
			on_human_input_request=answering(asked, "yes"),
			max_steps=4,
		)

	link = nested_in([tag("up", judged), redaction()])
	first_agent = agent(ScriptedModel(list(replies)))
	state = first_agent.new_state("go")
	saved = state.to_dict()
	port = JournalPort()
	first = await first_agent.execute(state, port=port, parent=link)
	assert first.status == "success"
	assert asked == ["Is [email] the right address? [own] [up]"]
	assert port.keys() == [
		"model:1",
		"guard:1:output.message:0:0",
		"guard:1:caller.output.message:0:0",
		"guard:1:caller.output.message:0:1",
		"human:1:0",
		"model:2",
		"guard:2:output:0:0",
		"guard:2:output.humanMessage:0:0",
		"guard:2:caller.output.humanMessage:0:0",
		"guard:2:caller.output.humanMessage:0:1",
	]
	assert first.human_message == "Asked [email]"
	count = len(judged)
	replayed = await agent(ScriptedModel([])).execute(
		RunState.from_dict(saved), port=JournalPort(port.recorded), parent=link
	)
	assert len(judged) == count and len(asked) == 1
	assert replayed.state.audit == first.state.audit
	assert [m.content for m in replayed.state.messages] == [m.content for m in first.state.messages]


async def test_a_batch_reserves_the_steps_of_the_callers_verdicts_on_reasons() -> None:
	"""Calls of a concurrent batch of a called run: the callers' verdicts on reasons are reserved in command order."""
	from .test_durability import JournalPort

	reasons: list[str] = []
	model = ScriptedModel([[refund_call(), refund_call("again " + ADDRESS)], finish("ok")])
	port = JournalPort()
	agent = OpenMolt(entry_points=False).create_agent(
		name="helper",
		model=model,
		tools=[refund],
		requires_approval=["local.refund"],
		on_approval_request=approving_noting(reasons),
		max_steps=4,
	)
	result = await agent.execute(None, port=port, input="go", parent=nested_in([redaction()]))
	assert result.status == "success"
	assert sorted(reasons) == [REDACTED_REASON, "again [email]"]
	(batch,) = port.reserved
	first, second = "guard:1:caller.output.reason:0:0", "guard:1:caller.output.reason:1:0"
	assert first in batch and second in batch
	assert batch.index(first) < batch.index("tool:1:1:local.refund")
