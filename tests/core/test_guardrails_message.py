"""Output guardrails that read text judge the finish's humanMessage too: the words people read.

A chat's reply, an AG-UI or A2A message is the finish's ``humanMessage``. An output PII
redaction that saw only ``output`` let ``"Write to ada@example.com"`` through to the person.
"""

import json
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.guardrails import Guardrail, GuardrailCheck, guardrail, refuse, rewrite
from openmolt_core.guardrails.pii import pii_redaction
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


def _agent(model: ScriptedModel, *guards: Guardrail) -> Any:
	return OpenMolt(entry_points=False).create_agent(
		name="Writer", model=model, guardrails=list(guards)
	)


async def test_output_pii_redaction_redacts_the_human_message_too() -> None:
	"""pii_redaction("output"): both the output and the humanMessage come back redacted."""
	model = ScriptedModel(
		[finish(result="mail ada@example.com", human_message="Write to ada@example.com")]
	)
	result = await _agent(model, pii_redaction("output", kinds=["email"])).run("go")
	assert result.status == "success"
	assert result.output == {"result": "mail [email]"}
	assert result.human_message == "Write to [email]"
	stages = [(a["stage"], a["action"]) for a in result.state.audit]
	assert stages == [("output", "rewrite"), ("output", "rewrite")]


async def test_a_guardrail_without_message_never_sees_the_text() -> None:
	"""A guardrail that reads the output's fields is asked once, with the output only."""
	seen: list[tuple[str, Any]] = []

	@guardrail("output")
	def fields(check: GuardrailCheck) -> None:
		seen.append((check.field, check.value))

	model = ScriptedModel([finish(result="ok", human_message="Done.")])
	result = await _agent(model, fields).run("go")
	assert result.status == "success" and seen == [("output", {"result": "ok"})]


async def test_a_refused_message_is_the_models_to_fix() -> None:
	"""message=True refusing the text: the model reads that its humanMessage was refused."""

	@guardrail("output", message=True)
	def polite(check: GuardrailCheck) -> Any:
		if check.field == "humanMessage" and "stupid" in check.value:
			return refuse("be polite")
		return None

	model = ScriptedModel(
		[
			finish(result="ok", human_message="That was a stupid request."),
			finish(result="ok", human_message="Done."),
		]
	)
	result = await _agent(model, polite).run("go")
	assert result.status == "success" and result.human_message == "Done."
	told = json.loads(model.requests[1].messages[-1].content)["results"][0]
	assert told["ok"] is False and "fix the humanMessage" in told["error"]


async def test_a_message_rewritten_into_no_text_trips() -> None:
	"""The humanMessage stays text: a rewrite into a dict stops the run with a reason."""
	odd = Guardrail(
		lambda c: rewrite({"x": 1}) if c.field == "humanMessage" else None,
		on="output",
		message=True,
		name="odd",
	)
	result = await _agent(ScriptedModel([finish(result="ok", human_message="hi")]), odd).run("go")
	assert result.status == "guardrail_tripped"
	assert "tripped on the humanMessage" in (result.error or "")


async def test_an_empty_message_is_not_judged() -> None:
	"""No humanMessage, no second check."""
	seen: list[str] = []
	both = Guardrail(lambda c: seen.append(c.field), on="output", message=True, name="both")
	result = await _agent(ScriptedModel([finish(result="ok")]), both).run("go")
	assert result.status == "success" and seen == ["output"]


def test_message_is_for_output_guardrails_only() -> None:
	"""message=True at another stage names the option and the stage."""
	with pytest.raises(ConfigurationError, match="message judges a finish's humanMessage"):
		Guardrail(lambda c: None, on="input", message=True)
	assert pii_redaction("input").message is False
	assert pii_redaction("output").message is True
	assert pii_redaction("output", message=False).message is False


def test_a_guard_agent_is_told_which_field_it_judges() -> None:
	"""The payload a guardrail agent reads names the humanMessage; the output's stays as it was."""
	check = GuardrailCheck("output", "hi", "A", "r", 1, field="humanMessage")
	assert check.payload() == {"stage": "output", "value": "hi", "field": "humanMessage"}
	output = GuardrailCheck("output", {"r": 1}, "A", "r", 1, field="output")
	assert output.payload() == {"stage": "output", "value": {"r": 1}}


@pytest.mark.parametrize(
	("result", "message", "output", "said"),
	[
		("ok", "Write to ada@example.com", "ok", "Write to [email]"),  # the message only
		("mail ada@example.com", "Done.", "mail [email]", "Done."),  # the output only
	],
)
async def test_a_redaction_under_a_pydantic_output_schema_keeps_the_run(
	result: str, message: str, output: str, said: str
) -> None:
	"""With an output model, a redacted finish ends the run with an instance of that model.

	The finish's output is already the model's instance when capabilities see it: the loop's
	check of a rewritten finish read it as JSON and stopped the run ("a valid dictionary").
	"""
	from pydantic import BaseModel

	class Out(BaseModel):
		result: str

	model = ScriptedModel([finish(result=result, human_message=message)])
	agent = OpenMolt(entry_points=False).create_agent(
		name="Writer",
		model=model,
		output_schema=Out,
		guardrails=[pii_redaction("output", kinds=["email"])],
	)
	got = await agent.run("go")
	assert got.status == "success", got.error
	assert got.output == Out(result=output) and got.human_message == said
