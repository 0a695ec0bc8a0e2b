"""An agent with approvals keeps strict structured output: callTool's reason fits every dialect."""

from __future__ import annotations

import json

import jsonschema
import pytest

from openmolt import OpenMolt, RunState
from openmolt_core._execute import check
from openmolt_core._parse import parse_reply
from openmolt_core.durability import LOCAL_PORT
from openmolt_core.prompt import dumps
from openmolt_core.structured import SchemaDialect, fit
from openmolt_core.testing import ScriptedModel
from openmolt_providers.anthropic._dialect import ANTHROPIC
from openmolt_providers.gemini._dialect import GEMINI
from openmolt_providers.openai._dialect import OPENAI


def send(to: str) -> str:
	"""Send a message.

	Args:
		to: The recipient.
	"""
	return to


@pytest.mark.parametrize("dialect", [OPENAI, ANTHROPIC, GEMINI], ids=lambda d: d.name)
def test_a_reason_fits_strictly_and_a_reply_with_it_runs(dialect: SchemaDialect) -> None:
	"""Mode strict, no fallback; a reply valid under the fitted schema restores and parses."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A", model=ScriptedModel([]), tools=[send], requires_approval="local.send"
	)
	fitted = fit(agent.envelope, dialect)
	assert fitted.mode == "strict" and not fitted.encoded
	[variant] = [
		v
		for v in fitted.schema["properties"]["commands"]["items"]["anyOf"]
		if "local.send" in json.dumps(v["properties"].get("tool"))  # a const, or a one-value enum
	]
	assert "reason" in variant["properties"]
	reply = {
		"commands": [
			{"type": "callTool", "tool": "local.send", "input": {"to": "ada"}, "reason": "asked"}
		]
	}
	jsonschema.validate(reply, fitted.schema)
	ctx = agent._context(RunState(), LOCAL_PORT)
	parsed = parse_reply(json.dumps(reply), dumps=dumps, check=check(ctx), restore=fitted.restore)
	assert not parsed.errors and parsed.commands[0].reason == "asked"
