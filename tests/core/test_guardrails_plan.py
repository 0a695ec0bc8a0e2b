"""A plan is words for people too: the guardrails that judge the text people read judge it.

An ``updatePlan``'s plan is what a page shows as the run's state (AG-UI's ``STATE_DELTA`` of
``/plan``), what the viewer lists and what the ``planUpdate`` event carries. An output PII
redaction (``message=True``) let ``"Email ada@example.com the invoice"`` reach them. The plan
goes through `Capability.before_words` as ``Words("plan", <its JSON text>)`` now: a rewrite
must still be a plan, a refusal is the model's to fix, a tripwire stops the run; verdicts are
journaled under ``guard:<step>:output.plan:<index>:<n>``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import Capability, OpenMolt, Proceed
from openmolt_core.guardrails import Guardrail, GuardrailCheck, guardrail
from openmolt_core.guardrails.pii import pii_redaction
from openmolt_core.hooks import Run, Words
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_plan

from .test_durability import JournalPort
from .test_streaming import Streamer, collect

pytestmark = pytest.mark.anyio

ADDRESS = "ada@example.com"
PLAN = update_plan(
	{"name": f"Email {ADDRESS} the invoice", "status": "inProgress", "notes": "due May 1"},
	{
		"name": "Close the ticket",
		"subSteps": [{"name": "Tell the team", "notes": f"cc {ADDRESS}"}],
	},
)


def redaction(action: Any = "rewrite") -> Guardrail:
	return pii_redaction("output", kinds=["email"], action=action)


def _agent(model: Any, *guards: Guardrail, **options: Any) -> Any:
	return OpenMolt(entry_points=False).create_agent(
		name="Planner", model=model, guardrails=list(guards), max_steps=4, **options
	)


def told(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	"""The results the model read at its ``call``-th request."""
	return list(json.loads(model.requests[call].messages[-1].content)["results"])


async def test_the_plan_is_redacted_before_the_state_and_the_event_carry_it() -> None:
	"""The plan kept, the planUpdate event and the final state hold the redacted plan, its shape kept."""
	agent = _agent(ScriptedModel([PLAN, finish("sent")]), redaction())
	updates: list[Any] = []
	agent.on("planUpdate", updates.append)
	verdicts: list[Any] = []
	agent.on("guardrail", verdicts.append)
	result = await agent.run("go")
	assert result.status == "success"
	assert ADDRESS not in json.dumps(result.state.plan)
	assert result.state.plan[0]["name"] == "Email [email] the invoice"
	assert (
		result.state.plan[0]["status"] == "inProgress"
		and result.state.plan[0]["notes"] == "due May 1"
	)
	assert result.state.plan[1]["subSteps"][0]["notes"] == "cc [email]"
	assert [u.plan for u in updates] == [result.state.plan]
	assert [(v.field, v.action) for v in verdicts] == [("plan", "rewrite")]


async def test_a_refused_plan_is_not_kept_and_the_model_reads_why() -> None:
	"""A refusing guardrail: no plan is kept, no planUpdate, the model is told to fix it."""
	model = ScriptedModel([PLAN, update_plan("Send the invoice"), finish("sent")])
	agent = _agent(model, redaction("refuse"))
	updates: list[Any] = []
	agent.on("planUpdate", updates.append)
	result = await agent.run("go")
	assert result.status == "success"
	(entry,) = told(model, 1)
	assert entry["ok"] is False and "fix it and update the plan again" in entry["error"]
	assert [u.plan[0]["name"] for u in updates] == ["Send the invoice"]
	assert result.state.plan[0]["name"] == "Send the invoice"


async def test_a_tripped_plan_stops_the_run_and_nothing_after_it_runs() -> None:
	"""A tripwire on the plan: the run stops there; the call written after the plan never runs."""
	ran: list[str] = []

	def post(text: str) -> str:
		"""Post a text."""
		ran.append(text)
		return "posted"

	model = ScriptedModel([[PLAN, call_tool("local.post", text="hi")], finish("done")])
	agent = _agent(model, redaction("trip"), tools=[post])
	result = await agent.run("go")
	assert result.status == "guardrail_tripped" and "tripped on the plan" in str(result.error)
	assert ran == [] and result.state.plan == []


class Scrambler(Capability):
	"""Answers a plan with text that is no plan."""

	name = "scrambler"

	async def before_words(self, run: Run, words: Words) -> Proceed | str:
		return "not a plan" if words.field == "plan" else Proceed()


async def test_a_rewrite_that_is_no_plan_stops_the_run() -> None:
	"""What a person would read is unknown: the run stops, naming the capability's mistake."""
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([PLAN, finish("x")]), capabilities=[Scrambler()]
	)
	result = await agent.run("go")
	assert result.status == "guardrail_tripped"
	assert "rewrote the plan into something that is not a plan" in str(result.error)
	assert result.state.plan == []


async def test_a_message_guardrail_is_told_it_judges_a_plan_as_json_text() -> None:
	"""check.field is "plan" and check.value the plan's JSON text; a guardrail without message=True never sees it."""
	seen: list[tuple[str, Any]] = []

	@guardrail("output", message=True)
	def reader(check: GuardrailCheck) -> None:
		seen.append((check.field, check.value))

	@guardrail("output")
	def output_only(check: GuardrailCheck) -> None:
		seen.append(("output-only:" + check.field, check.value))

	agent = _agent(ScriptedModel([update_plan("Look"), finish("ok")]), reader, output_only)
	assert (await agent.run("go")).status == "success"
	(field, value), *_ = seen
	assert field == "plan" and json.loads(value)[0]["name"] == "Look"
	assert [f for f, _ in seen if f.startswith("output-only")] == ["output-only:output"]


async def test_the_plans_verdicts_are_journaled_and_a_replay_asks_no_guardrail() -> None:
	"""guard:<step>:output.plan:<index>:<n>; replayed, the same plan, no guardrail asked again."""
	asked: list[str] = []

	@guardrail("output", message=True, name="counting")
	def counting(check: GuardrailCheck) -> None:
		asked.append(check.field)

	def agent(model: ScriptedModel) -> Any:
		return _agent(model, counting, redaction())

	first_agent = agent(ScriptedModel([PLAN, finish("ok")]))
	state = first_agent.new_state("go")
	saved = state.to_dict()
	port = JournalPort()
	first = await first_agent.execute(state, port=port)
	assert first.status == "success"
	assert port.keys()[:3] == ["model:1", "guard:1:output.plan:0:0", "guard:1:output.plan:0:1"]
	count = len(asked)
	replayed = await agent(ScriptedModel([])).execute(
		RunState.from_dict(saved), port=JournalPort(port.recorded)
	)
	assert len(asked) == count
	assert replayed.state.plan == first.state.plan and ADDRESS not in json.dumps(first.state.plan)


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
async def test_a_guarded_plan_is_not_previewed(stream: bool) -> None:
	"""Under a message guardrail the updatePlan command is not announced before it is judged."""
	replies = [{"commands": [PLAN]}, {"commands": [finish("ok")]}]
	model = Streamer(replies, size=4) if stream else ScriptedModel(replies)
	agent = _agent(model, redaction())
	events, result = await collect(agent)
	assert result.status == "success"
	previews = [repr(e.command) for e in events if e.name == "command:ready"]
	assert not any(ADDRESS in p for p in previews)
	assert ADDRESS not in repr([e.plan for e in events if e.name == "planUpdate"])


async def test_a_sub_agents_plan_is_judged_by_its_callers_guardrail() -> None:
	"""The caller's page shows the sub-agent's plan too: the caller's message guardrail redacts it."""
	om = OpenMolt(entry_points=False)
	sub = om.create_agent(name="helper", model=ScriptedModel([PLAN, finish("ok")]), max_steps=3)
	caller = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.helper", task="go"), finish("done")]),
		tools=[sub],
		guardrails=[redaction()],
		max_steps=4,
	)
	updates: list[Any] = []
	caller.on("planUpdate", updates.append)
	assert (await caller.run("go")).status == "success"
	assert [u.agent for u in updates] == ["helper"]
	assert ADDRESS not in json.dumps(updates[0].plan)
