"""Provider-enforced structured output is a capability (`StructuredOutput`, `fit_reply`).

`create_agent` adds it to every agent; the kernel asks it for a model's reply schema and reads
replies through the record it answers. Without it the canonical schema goes with mode ``off``,
and an `Agent(...)` built by hand with an output schema is refused.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from openmolt import Capability, OpenMolt
from openmolt_core.capabilities import StructuredOutput
from openmolt_core.envelope import Envelope, FittedSchema
from openmolt_core.errors import ConfigurationError, PluginError
from openmolt_core.structured import SchemaDialect, fit
from openmolt_core.testing import ScriptedModel, finish

from ._bare import bare_agent

pytestmark = pytest.mark.anyio

OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
STRICT = SchemaDialect("strict-test", require_all=True, closed_objects=True)


class Dialected(ScriptedModel):
	"""A scripted model whose provider declares a dialect."""

	def schema_dialect(self, model: str) -> SchemaDialect:
		return STRICT


def test_a_hand_built_agent_with_an_output_schema_needs_the_capability() -> None:
	"""Agent(...) with an output schema and no StructuredOutput: refused, naming what to add."""
	built = OpenMolt(entry_points=False).create_agent(name="A", model=ScriptedModel([]))
	with pytest.raises(ConfigurationError, match=r"StructuredOutput\(\).*create_agent adds it"):
		bare_agent(built, ScriptedModel([]), output_schema=OUTPUT)
	agent = bare_agent(
		built, ScriptedModel([]), output_schema=OUTPUT, capabilities=[StructuredOutput()]
	)
	assert agent.output_schema == OUTPUT


async def test_without_the_capability_the_canonical_schema_goes_with_mode_off() -> None:
	"""A dialect and no capability that fits: the request sends the canonical schema, mode off."""
	built = OpenMolt(entry_points=False).create_agent(name="A", model=Dialected([]))
	bare = bare_agent(built, Dialected([finish("ok")]))
	request = bare.first_request("go")
	assert request.response_mode == "off"
	assert request.response_schema == bare.envelope.schema()
	assert bare.structured_output().notes == (
		"no capability fits the reply schema to the provider's dialect (fit_reply)",
	)
	assert (await bare.run("go")).output == "ok"


def test_with_the_capability_a_hand_built_agent_sends_what_create_agent_s_does() -> None:
	"""StructuredOutput() on a hand-built agent: the schema fitted as create_agent's agents get."""
	built = OpenMolt(entry_points=False).create_agent(name="A", model=Dialected([]))
	bare = bare_agent(built, Dialected([]), capabilities=[StructuredOutput()])
	request = bare.first_request("go")
	expected = fit(bare.envelope, STRICT)
	assert request.response_mode == expected.mode == "strict"
	assert request.response_schema == expected.schema
	assert built.structured_output().mode == "strict"


def test_the_first_capability_that_answers_decides_and_a_wrong_answer_is_named() -> None:
	"""fit_reply: None passes to the next; an answer that is no FittedSchema names the hook."""
	seen: list[str] = []

	class Passes(Capability):
		name: ClassVar[str] = "passes"

		def fit_reply(self, envelope: Envelope, dialect: SchemaDialect) -> FittedSchema | None:
			seen.append(dialect.name)
			return None

	class Wrong(Capability):
		name: ClassVar[str] = "wrong"

		def fit_reply(self, envelope: Envelope, dialect: SchemaDialect) -> Any:
			return {"type": "object"}

	built = OpenMolt(entry_points=False).create_agent(name="A", model=Dialected([]))
	agent = bare_agent(built, Dialected([]), capabilities=[Passes(), StructuredOutput()])
	assert agent.structured_output().mode == "strict" and seen == ["strict-test"]
	wrong = bare_agent(built, Dialected([]), capabilities=[Wrong()])
	with pytest.raises((TypeError, PluginError), match="fit_reply"):
		wrong.structured_output()
