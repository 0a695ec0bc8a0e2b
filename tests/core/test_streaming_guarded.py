"""A finish an output guardrail has yet to check is not previewed: what it refuses never streamed."""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.guardrails import guardrail, refuse, rewrite, trip
from openmolt_core.testing import ScriptedModel, ask_human, finish

from .test_streaming import Streamer, collect

pytestmark = pytest.mark.anyio

LEAK = "the payroll of Ada is 9120"


def streamed(events: list[Any]) -> str:
	"""Everything the previews carried: the deltas' text and the commands announced."""
	texts = [e.text for e in events if e.name == "text:delta"]
	texts += [repr(e.command) for e in events if e.name == "command:ready"]
	return "\n".join(texts)


@guardrail("output")
def no_payroll(check: Any) -> Any:
	if "payroll" in str(check.value):
		return refuse("no payroll figures in the output")
	return None


@guardrail("output")
def stop_on_payroll(check: Any) -> Any:
	if "payroll" in str(check.value):
		return trip("payroll figures")
	return None


@guardrail("output")
def masked_figures(check: Any) -> Any:
	return rewrite(str(check.value).replace("9120", "[figure]"))


def park(question: str) -> str:
	raise HumanInputUnavailable(question)  # the run parks on its question


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
async def test_a_refused_finish_never_reaches_a_listener(stream: bool) -> None:
	"""The guardrail refuses the first finish: neither its output nor its message streamed."""
	replies = [
		{"commands": [finish(LEAK, human_message=f"Here it is: {LEAK}")]},
		{"commands": [finish("withheld", human_message="I cannot share payroll figures.")]},
	]
	model = Streamer(replies, size=4) if stream else ScriptedModel(replies)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="G", model=model, guardrails=[no_payroll], max_steps=4)
	events, result = await collect(agent)
	assert result.status == "success" and result.output == "withheld"
	assert "9120" not in streamed(events)


async def test_a_tripped_finish_never_reaches_a_listener() -> None:
	"""A guardrail that stops the run on the output: the text it stopped was never previewed."""
	model = Streamer([{"commands": [finish(LEAK, human_message=f"Here: {LEAK}")]}], size=3)
	agent = OpenMolt(entry_points=False).create_agent(
		name="G", model=model, guardrails=[stop_on_payroll], max_steps=2
	)
	events, result = await collect(agent)
	assert result.status == "guardrail_tripped"
	assert "9120" not in streamed(events)


async def test_a_rewritten_output_is_the_only_one_a_listener_sees() -> None:
	"""The output a guardrail rewrites is not previewed as the model wrote it."""
	model = Streamer([{"commands": [finish(LEAK, human_message="done")]}], size=5)
	agent = OpenMolt(entry_points=False).create_agent(
		name="G", model=model, guardrails=[masked_figures], max_steps=2
	)
	events, result = await collect(agent)
	assert result.output == "the payroll of Ada is [figure]"
	assert "9120" not in streamed(events)
	assert next(e for e in events if e.name == "finish").result.output == result.output


async def test_a_question_still_streams_under_an_output_guardrail() -> None:
	"""Only a finish waits for the guardrail: a question's message streams as before."""
	model = Streamer([{"commands": [ask_human("Which month do you mean?")]}], size=4)
	agent = OpenMolt(entry_points=False).create_agent(
		name="G", model=model, guardrails=[no_payroll], max_steps=2
	)
	agent.on_human_input_request = park
	events, result = await collect(agent)
	asked = "".join(e.text for e in events if e.name == "text:delta" and e.field == "message")
	assert result.status == "human_input_required" and asked == "Which month do you mean?"


async def test_an_agent_without_output_guardrails_streams_its_finish() -> None:
	"""No guardrail checks the finish: its message streams as it is written."""
	model = Streamer([{"commands": [finish("ok", human_message="all good here")]}], size=3)
	agent = OpenMolt(entry_points=False).create_agent(name="G", model=model, max_steps=2)
	events, _ = await collect(agent)
	said = "".join(e.text for e in events if e.name == "text:delta" and e.field == "humanMessage")
	assert said == "all good here"


async def test_a_sub_agents_message_its_caller_judges_is_not_previewed() -> None:
	"""The caller's message guardrail judges the sub-agent's finish: its message as written never streams."""
	from openmolt_core.guardrails.pii import pii_redaction
	from openmolt_core.testing import call_tool

	om = OpenMolt(entry_points=False)
	said = "Could not refund ada@example.com: the card expired."
	sub = om.create_agent(
		name="helper",
		model=Streamer(
			[{"commands": [finish(None, status="failure", human_message=said)]}], size=4
		),
		max_steps=2,
	)
	caller = om.create_agent(
		name="boss",
		model=Streamer([call_tool("local.helper", task="refund"), {"commands": [finish("done")]}]),
		tools=[sub],
		guardrails=[pii_redaction("output", kinds=["email"], action="rewrite")],
		max_steps=4,
	)
	events, result = await collect(caller)
	assert result.status == "success"
	assert "ada@example.com" not in streamed(events)
	(ended,) = [e for e in events if e.name == "finish" and e.parent_run_id]
	assert ended.result.human_message == "Could not refund [email]: the card expired."
