"""The guardrails that judge the text people read judge every word the model writes for a person.

A finish's ``humanMessage`` was judged (``message=True``); a question (``requestHumanInput``)
and a call's reason (for the person who approves the call) were not: an output PII redaction let
``"Is ada@example.com the right address?"`` reach the human-input handler, a chat, the page that
answers, and the approver. They go through `Capability.before_words` now, judged by the same
guardrails, their verdicts journaled under ``guard:<step>:output.<field>:<index>:<n>``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import Capability, OpenMolt, Proceed
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.decisions import ApprovalRequest
from openmolt_core.guardrails import Guardrail, GuardrailCheck, guardrail
from openmolt_core.guardrails.pii import pii_redaction
from openmolt_core.hooks import Run, Words
from openmolt_core.result import RunState, waiting_for
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish

from .test_durability import JournalPort
from .test_streaming import Streamer, collect

pytestmark = pytest.mark.anyio

QUESTION = "Is ada@example.com the right address?"
REDACTED = "Is [email] the right address?"


def redaction() -> Guardrail:
	return pii_redaction("output", kinds=["email"])


def park(question: str) -> str:
	raise HumanInputUnavailable(question)  # nobody can answer now: the run parks


def answering(asked: list[str], answer: str) -> Any:
	"""A human-input handler that notes each question it is asked and answers ``answer``."""

	def handler(question: str) -> str:
		asked.append(question)
		return answer

	return handler


def _agent(model: Any, *guards: Guardrail, **options: Any) -> Any:
	return OpenMolt(entry_points=False).create_agent(
		name="Asker", model=model, guardrails=list(guards), max_steps=4, **options
	)


async def gather(agent: Any) -> tuple[list[Any], Any]:
	"""Stream a run: every event, and its result."""
	events, result = await collect(agent)
	return list(events), result


def told(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	"""The results the model read at its ``call``-th request."""
	return list(json.loads(model.requests[call].messages[-1].content)["results"])


# the question -------------------------------------------------------------------------------


async def test_the_question_is_redacted_before_the_handler_sees_it() -> None:
	"""The handler, the humanInput event and the audit see the question as the guardrail left it."""
	asked: list[str] = []
	model = ScriptedModel([ask_human(QUESTION), finish(result="ok")])
	agent = _agent(model, redaction(), on_human_input_request=answering(asked, "yes"))
	events: list[Any] = []
	agent.on("humanInput", events.append)
	result = await agent.run("go")
	assert result.status == "success"
	assert asked == [REDACTED]
	assert [(e.message, e.response) for e in events] == [(REDACTED, "yes")]
	assert result.state.audit == [
		{
			"by": "pii_redaction",
			"stage": "output",
			"action": "rewrite",
			"reason": "redacted 1 email",
			"step": 1,
			"field": "message",  # the question, not the output
		}
	]
	assert told(model, 1) == [{"command": "requestHumanInput", "ok": True, "result": "yes"}]


async def test_a_parked_question_is_saved_and_shown_redacted() -> None:
	"""A run parked on its question keeps the redacted one: pending, its error, what waits."""
	model = ScriptedModel([ask_human(QUESTION), finish(result="ok")])
	agent = _agent(model, redaction(), on_human_input_request=park)
	parked = await agent.run("go")
	assert parked.status == "human_input_required"
	assert parked.state.pending is not None and parked.state.pending["message"] == REDACTED
	assert "ada@" not in (parked.error or "") and waiting_for(parked.state.pending) == (
		f"an answer to: {REDACTED}"
	)
	events: list[Any] = []
	agent.on("humanInput", events.append)
	done = await agent.resume(RunState.from_dict(parked.state.to_dict()), answer="yes")
	assert done.status == "success" and [e.message for e in events] == [REDACTED]


async def test_a_tripping_guardrail_stops_the_run_before_anyone_is_asked() -> None:
	"""A tripwire on the question: the handler is never called, the run stops with the reason."""
	asked: list[str] = []
	stop = pii_redaction("output", kinds=["email"], action="trip")
	model = ScriptedModel([ask_human(QUESTION)])
	result = await _agent(model, stop, on_human_input_request=asked.append).run("go")
	assert result.status == "guardrail_tripped" and asked == []
	assert "tripped on the question: personal data (1 email)" in (result.error or "")
	assert result.state.pending is None
	last = json.loads(result.state.messages[-1].content)["results"]
	assert last == [
		{
			"command": "requestHumanInput",
			"ok": False,
			"error": "stopped: guardrail 'pii_redaction' tripped (personal data (1 email))",
			"guardrail": "pii_redaction",
		}
	]


async def test_a_refused_question_is_the_models_to_fix() -> None:
	"""A refusal: nobody is asked, the model reads why and asks again without the address."""
	asked: list[str] = []
	no_pii = pii_redaction("output", kinds=["email"], action="refuse")
	model = ScriptedModel(
		[ask_human(QUESTION), ask_human("Is the address on file right?"), finish(result="ok")]
	)
	agent = _agent(model, no_pii, on_human_input_request=answering(asked, "yes"))
	result = await agent.run("go")
	assert result.status == "success"
	assert asked == ["Is the address on file right?"]
	(entry,) = told(model, 1)
	assert entry["ok"] is False and entry["guardrail"] == "pii_redaction"
	assert "fix it and ask again" in entry["error"]


async def test_a_guardrail_without_message_never_sees_the_question() -> None:
	"""An output guardrail that reads the output's fields is not asked about a question."""
	seen: list[str] = []

	@guardrail("output")
	def fields(check: GuardrailCheck) -> None:
		seen.append(check.field)

	model = ScriptedModel([ask_human(QUESTION), finish(result="ok")])
	result = await _agent(model, fields, on_human_input_request=lambda q: "yes").run("go")
	assert result.status == "success" and seen == ["output"]


async def test_a_message_guardrail_is_told_it_judges_a_question() -> None:
	"""The check names the field (``message``), and a guardrail agent's payload says so too."""
	seen: list[tuple[str, str, Any]] = []

	@guardrail("output", message=True)
	def note(check: GuardrailCheck) -> None:
		seen.append((check.stage, check.field, check.value))

	model = ScriptedModel([ask_human("Which month?"), finish(result="ok", human_message="Done.")])
	result = await _agent(model, note, on_human_input_request=lambda q: "May").run("go")
	assert result.status == "success"
	assert seen == [
		("output", "message", "Which month?"),
		("output", "output", {"result": "ok"}),
		("output", "humanMessage", "Done."),
	]
	check = GuardrailCheck("output", "Which month?", "A", "r", 1, field="message")
	assert check.payload() == {"stage": "output", "value": "Which month?", "field": "message"}


async def test_each_verdicts_event_names_the_words_it_judged() -> None:
	"""The guardrail event says which words it judged (the run viewer labels it): ``field``."""
	from openmolt_core.guardrails import refuse

	@guardrail("output", message=True)
	def flag(check: GuardrailCheck) -> Any:
		return refuse("not that") if "bad" in json.dumps(check.value) else None

	model = ScriptedModel(
		[
			ask_human("a bad question?"),
			finish(result="bad", human_message="a bad message"),
			finish(result="ok", human_message="fine"),
		]
	)
	events: list[Any] = []
	agent = _agent(model, flag, on_human_input_request=lambda q: "yes")
	agent.on("guardrail", events.append)
	assert (await agent.run("go")).status == "success"
	assert [(e.stage, e.field, e.tool) for e in events] == [
		("output", "message", ""),
		("output", "", ""),  # the finish's output: no words for a person
	]
	events.clear()
	model = ScriptedModel([finish(result="ok", human_message="a bad message"), finish(result="ok")])
	agent = _agent(model, flag)
	agent.on("guardrail", events.append)
	assert (await agent.run("go")).status == "success"
	assert [(e.stage, e.field) for e in events] == [("output", "humanMessage")]
	events.clear()
	model = ScriptedModel([refund_call("a bad reason"), finish("done")])
	agent = _payer(model, flag, on_approval_request=lambda r: r.approve())
	agent.on("guardrail", events.append)
	assert (await agent.run("go")).status == "success"
	assert [(e.stage, e.field, e.tool, e.call) for e in events] == [
		("output", "reason", "local.refund", "tool:1:0:local.refund")
	]


async def test_the_audit_and_the_cli_line_name_the_words_a_verdict_judged() -> None:
	"""``state.audit`` and the CLI's line say a verdict was on a question or a reason, not the answer."""
	from openmolt_core.cli._progress import guardrail_line
	from openmolt_core.guardrails import refuse

	@guardrail("output", message=True)
	def flag(check: GuardrailCheck) -> Any:
		return refuse("not that") if "bad" in json.dumps(check.value) else None

	model = ScriptedModel([ask_human("a bad question?"), finish(result="ok")])
	events: list[Any] = []
	agent = _agent(model, flag, on_human_input_request=lambda q: "yes")
	agent.on("guardrail", events.append)
	result = await agent.run("go")
	assert [(a["stage"], a.get("field")) for a in result.state.audit] == [("output", "message")]
	assert "refused the question" in guardrail_line(events[0])
	assert "the answer" not in guardrail_line(events[0])
	model = ScriptedModel([finish(result="ok", human_message="a bad message"), finish(result="ok")])
	events.clear()
	agent = _agent(model, flag)
	agent.on("guardrail", events.append)
	result = await agent.run("go")
	assert [a.get("field") for a in result.state.audit] == ["humanMessage"]
	assert "refused the message for people" in guardrail_line(events[0])
	model = ScriptedModel([refund_call("a bad reason"), finish("done")])
	events.clear()
	agent = _payer(model, flag, on_approval_request=lambda r: r.approve())
	agent.on("guardrail", events.append)
	result = await agent.run("go")
	assert [(a.get("field"), a.get("tool")) for a in result.state.audit] == [
		("reason", "local.refund")
	]
	assert "refused the reason of the call of local.refund" in guardrail_line(events[0])


async def test_a_question_rewritten_into_no_text_trips() -> None:
	"""The question stays text: a rewrite into a dict stops the run before anyone is asked."""
	from openmolt_core.guardrails import rewrite

	odd = Guardrail(
		lambda c: rewrite({"x": 1}) if c.field == "message" else None,
		on="output",
		message=True,
		name="odd",
	)
	asked: list[str] = []
	model = ScriptedModel([ask_human("Which month?")])
	result = await _agent(model, odd, on_human_input_request=asked.append).run("go")
	assert result.status == "guardrail_tripped" and asked == []
	assert "tripped on the question: it rewrote the question into something not text" in (
		result.error or ""
	)


# durable ------------------------------------------------------------------------------------


async def test_a_replay_decides_the_same_without_asking_the_guardrail_again() -> None:
	"""The verdicts are journaled; the keys of the finish's checks are as they were."""
	judged: list[str] = []

	@guardrail("output", message=True)
	def counting(check: GuardrailCheck) -> Any:
		judged.append(check.field)
		return redaction().check(check)  # type: ignore[operator]  # a function guardrail

	asked: list[str] = []
	replies = [ask_human(QUESTION), finish(result="ok", human_message="Thanks ada@example.com")]

	def agent(model: ScriptedModel) -> Any:
		return _agent(model, counting, on_human_input_request=answering(asked, "yes"))

	first_agent = agent(ScriptedModel(list(replies)))
	state = first_agent.new_state("go")
	saved = state.to_dict()
	port = JournalPort()
	first = await first_agent.execute(state, port=port)
	assert first.status == "success" and first.human_message == "Thanks [email]"
	assert port.keys() == [
		"model:1",
		"guard:1:output.message:0:0",
		"human:1:0",
		"model:2",
		"guard:2:output:0:0",
		"guard:2:output.humanMessage:0:0",
	]
	assert judged == ["message", "output", "humanMessage"] and asked == [REDACTED]

	replayed = await agent(ScriptedModel([])).execute(
		RunState.from_dict(saved), port=JournalPort(port.recorded)
	)
	assert judged == ["message", "output", "humanMessage"] and asked == [REDACTED]
	assert replayed.state.audit == first.state.audit
	assert replayed.human_message == first.human_message
	assert [m.content for m in replayed.state.messages] == [m.content for m in first.state.messages]


# streaming ----------------------------------------------------------------------------------


def previewed(events: list[Any]) -> str:
	"""What the previews and the events for people carried (not the model's own record).

	``llmOutput`` and ``commandsQueued`` are the reply as the model wrote it, for the operator,
	as for a finish's humanMessage.
	"""
	out = [e.text for e in events if e.name == "text:delta"]
	out += [repr(e.command) for e in events if e.name == "command:ready"]
	out += [f"{e.message} {e.response}" for e in events if e.name == "humanInput"]
	out += [repr(e.__dict__ if hasattr(e, "__dict__") else e) for e in events if e.name == "error"]
	for e in events:
		if e.name == "finish":
			result = e.result
			out += [str(result.error), str(result.human_message), repr(result.state.pending)]
	return "\n".join(out)


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
async def test_a_guarded_question_is_not_previewed(stream: bool) -> None:
	"""Under a message guardrail a question does not stream; the finish event shows it redacted."""
	replies = [{"commands": [ask_human(QUESTION)]}]
	model = Streamer(replies, size=4) if stream else ScriptedModel(replies)
	agent = _agent(model, redaction(), on_human_input_request=park)
	events, result = await gather(agent)
	assert result.status == "human_input_required"
	assert result.state.pending is not None and result.state.pending["message"] == REDACTED
	shown = previewed(events)
	assert "ada@example.com" not in shown and REDACTED in shown
	assert not [e for e in events if e.name == "text:delta" and e.field == "message"]


async def test_a_question_answered_while_streaming_shows_only_the_redacted_one() -> None:
	"""Answered at once: the humanInput event and the model's result carry the redacted question."""
	replies = [{"commands": [ask_human(QUESTION)]}, {"commands": [finish("ok")]}]
	agent = _agent(Streamer(replies, size=3), redaction(), on_human_input_request=lambda q: "yes")
	events, result = await gather(agent)
	assert result.status == "success"
	assert "ada@example.com" not in previewed(events)
	assert [e.message for e in events if e.name == "humanInput"] == [REDACTED]


# a call's reason, for its approver ---------------------------------------------------------


def refund(customer: str, amount: int) -> dict[str, Any]:
	"""Refund a customer.

	Args:
		customer: The customer id.
		amount: Cents.
	"""
	return {"refunded": amount}


def refund_call(reason: str = "ada@example.com asked for it", **extra: Any) -> dict[str, Any]:
	return {**call_tool("local.refund", customer="cus_1", amount=500, **extra), "reason": reason}


def _payer(model: Any, guard: Guardrail, **options: Any) -> Any:
	return OpenMolt(entry_points=False).create_agent(
		name="Pay",
		model=model,
		tools=[refund],
		requires_approval=["local.refund"],
		guardrails=[guard],
		max_steps=4,
		**options,
	)


async def test_a_reason_is_redacted_before_the_approver_reads_it() -> None:
	"""The approver, the approval:request event and a parked call's record see the redacted reason."""
	seen: list[ApprovalRequest] = []

	def approve(request: ApprovalRequest) -> Any:
		seen.append(request)
		return request.approve()

	model = ScriptedModel([refund_call(), finish("done")])
	agent = _payer(model, redaction(), on_approval_request=approve)
	events: list[Any] = []
	agent.on("approval:request", events.append)
	result = await agent.run("go")
	assert result.status == "success"
	assert [r.reason for r in seen] == ["[email] asked for it"]
	assert [e.request.reason for e in events] == ["[email] asked for it"]

	parked = await _payer(ScriptedModel([refund_call(), finish("done")]), redaction()).run("go")
	assert parked.status == "approval_required"
	assert parked.state.pending is not None
	(call,) = parked.state.pending["calls"]
	assert call["reason"] == "[email] asked for it"
	assert "ada@" not in (waiting_for(parked.state.pending) or "")


async def test_a_refused_reason_runs_nothing_and_a_tripped_one_stops_the_run() -> None:
	"""Refused: the call does not run and the model reads why; tripped: the run stops."""
	asked: list[str] = []

	def approve(request: ApprovalRequest) -> Any:
		asked.append(request.reason)
		return request.approve()

	no_pii = pii_redaction("output", kinds=["email"], action="refuse")
	model = ScriptedModel([refund_call(), refund_call("the customer asked"), finish("done")])
	result = await _payer(model, no_pii, on_approval_request=approve).run("go")
	assert result.status == "success" and asked == ["the customer asked"]
	(entry,) = told(model, 1)
	assert entry["tool"] == "local.refund" and entry["ok"] is False
	assert "not run: refused by guardrail 'pii_redaction'" in entry["error"]

	asked.clear()
	stop = pii_redaction("output", kinds=["email"], action="trip")
	model = ScriptedModel([refund_call()])
	stopped = await _payer(model, stop, on_approval_request=approve).run("go")
	assert stopped.status == "guardrail_tripped" and asked == []
	assert "tripped on the reason: personal data (1 email)" in (stopped.error or "")


async def test_a_batch_reserves_the_steps_of_its_reasons() -> None:
	"""Calls of a concurrent batch: their reasons' verdict steps are reserved in command order."""
	port = JournalPort()
	model = ScriptedModel([[refund_call(), refund_call("again ada@example.com")], finish("ok")])
	reasons: list[str] = []
	agent = _payer(
		model,
		redaction(),
		on_approval_request=lambda r: reasons.append(r.reason) or r.approve(),  # type: ignore[func-returns-value]
	)
	result = await agent.execute(None, port=port, input="go")
	assert result.status == "success"
	assert sorted(reasons) == ["[email] asked for it", "again [email]"]
	(batch,) = port.reserved
	assert "guard:1:output.reason:0:0" in batch and "guard:1:output.reason:1:0" in batch
	assert batch.index("guard:1:output.reason:0:0") < batch.index("tool:1:1:local.refund")


async def test_a_streamed_call_is_previewed_without_its_reason() -> None:
	"""command:ready of a call comes without its reason while a guardrail judges reasons."""
	replies = [{"commands": [refund_call()]}, {"commands": [finish("ok")]}]
	agent = _payer(
		Streamer(replies, size=5), redaction(), on_approval_request=lambda r: r.approve()
	)
	events, result = await gather(agent)
	assert result.status == "success"
	ready = next(e.command for e in events if e.name == "command:ready")
	assert ready["tool"] == "local.refund" and "reason" not in ready


# the hook -----------------------------------------------------------------------------------


class Polite(Capability):
	"""A capability of its own that rewrites the words people read."""

	name = "polite"

	def __init__(self) -> None:
		self.seen: list[Words] = []

	async def before_words(self, run: Run, words: Words) -> Proceed | str:
		self.seen.append(words)
		return f"Please: {words.text}" if words.field == "message" else Proceed()


async def test_any_capability_may_judge_the_words_through_the_hook() -> None:
	"""before_words is a capability hook: a text it answers is what the person reads."""
	asked: list[str] = []
	polite = Polite()
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=ScriptedModel([ask_human("which month?"), finish("ok")]),
		capabilities=[polite],
		on_human_input_request=answering(asked, "May"),
	)
	assert (await agent.run("go")).status == "success"
	assert asked == ["Please: which month?"]
	assert polite.seen == [Words("message", "which month?")]


async def test_a_hook_that_answers_nonsense_is_named() -> None:
	"""A before_words answer that is neither a decision nor text is a bug naming the fix."""
	from openmolt import RunError

	class Odd(Capability):
		name = "odd"

		async def before_words(self, run: Run, words: Words) -> Any:
			return 42

	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=ScriptedModel([ask_human("which month?")]),
		capabilities=[Odd()],
		on_human_input_request=lambda q: "May",
	)
	with pytest.raises(RunError, match=r"before_words returned int; return Proceed\(\), the text"):
		await agent.run("go")
