"""The command protocol has one source: schema, parser, prompt and builders agree."""

import json
import re
import typing
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from openmolt import FunctionTool, OpenMolt, RunState
from openmolt_core import testing
from openmolt_core._execute import check
from openmolt_core._parse import parse_reply
from openmolt_core.commands import (
	COMMAND_TYPES,
	COMMANDS,
	Command,
	command_class,
)
from openmolt_core.durability import LOCAL_PORT
from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.prompt import dumps, maestro_prompt
from openmolt_core.testing import ScriptedModel

from ._schema_strategy import instances

SEARCH = {
	"type": "object",
	"properties": {
		"query": {"type": "string", "minLength": 1},
		"limit": {"type": "integer", "minimum": 1, "maximum": 50},
		"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
	},
	"required": ["query"],
	"additionalProperties": False,
}
SEND = {
	"type": "object",
	"properties": {"to": {"type": "string"}, "urgent": {"type": "boolean"}},
	"required": ["to", "urgent"],
	"additionalProperties": False,
}
OUTPUT = {
	"type": "object",
	"properties": {"result": {"type": "string"}, "count": {"type": "integer"}},
	"required": ["result"],
	"additionalProperties": False,
}


def _tool(handle: str, schema: dict[str, Any]) -> FunctionTool:
	return FunctionTool(
		handle=handle, description=handle, function=lambda i, c: i, input_schema=schema
	)


def _agent(*, human: bool = True, approvals: bool = False) -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(
		name="P",
		model=ScriptedModel([]),
		tools=[_tool("search", SEARCH), _tool("send", SEND)],
		output_schema=OUTPUT,
		on_human_input_request=(lambda q: "yes") if human else None,
		requires_approval=["local.send"] if approvals else None,
	)


# The reply schema differs when some tool waits for approval (callTool takes a reason): both
# agents are held to it.
AGENTS = {"plain": _agent(), "approvals": _agent(approvals=True)}
SCHEMAS = {name: agent.envelope.schema() for name, agent in AGENTS.items()}
VALIDATORS = {name: jsonschema.Draft202012Validator(s) for name, s in SCHEMAS.items()}
AGENT = AGENTS["plain"]
SCHEMA = SCHEMAS["plain"]
VALIDATOR = VALIDATORS["plain"]


def parser_accepts(data: Any, agent: str = "plain") -> bool:
	ctx = AGENTS[agent]._context(RunState(), LOCAL_PORT)
	parsed = parse_reply(json.dumps(data), dumps=dumps, check=check(ctx))
	return not parsed.errors


@pytest.mark.parametrize("agent", list(AGENTS))
def test_the_envelope_schema_is_valid_json_schema(agent: str) -> None:
	"""The canonical reply schema is itself a valid JSON Schema (2020-12)."""
	jsonschema.Draft202012Validator.check_schema(SCHEMAS[agent])


@settings(
	max_examples=200,
	deadline=None,
	suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(instances(SCHEMA))
def test_every_reply_the_schema_accepts_the_parser_accepts(reply: Any) -> None:
	"""Anything valid under the agent's reply schema parses and passes every check."""
	assert parser_accepts(reply), reply


@settings(
	max_examples=200,
	deadline=None,
	suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(instances(SCHEMAS["approvals"]))
def test_every_reply_the_schema_accepts_the_parser_accepts_with_approvals(reply: Any) -> None:
	"""The same, for an agent whose calls may carry a reason."""
	assert parser_accepts(reply, "approvals"), reply


_scalars = st.one_of(
	st.none(),
	st.booleans(),
	st.integers(-5, 70),
	st.floats(-1, 70),
	st.integers(-1, 70).map(float),  # 10.0: an integer to JSON Schema
	st.integers(0, 70).map(str),  # "10": no number to JSON Schema
	st.text(max_size=5),
)
_values = st.recursive(
	_scalars,
	lambda inner: (
		st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
	),
	max_leaves=6,
)


def _mutations() -> st.SearchStrategy[Any]:
	"""Replies near the valid ones: right shapes with wrong, missing or extra fields."""
	field_names = st.sampled_from(
		[
			"type",
			"tool",
			"input",
			"seconds",
			"plan",
			"memory",
			"mode",
			"data",
			"message",
			"status",
			"output",
			"humanMessage",
			"name",
			"notes",
			"subSteps",
			"query",
			"limit",
			"to",
			"urgent",
			"reason",
			"x",
		]
	)
	kinds = st.sampled_from([*COMMAND_TYPES, "dance"])
	tools = st.sampled_from(["local.search", "local.send", "local.nope"])
	field_values = st.one_of(
		_values,
		kinds,
		tools,
		st.sampled_from(
			["longTerm", "shortTerm", "append", "replace", "success", "failure", "pending"]
		),
		st.fixed_dictionaries(
			{"query": st.text(max_size=3)}, optional={"limit": st.integers(0, 60)}
		),
		st.fixed_dictionaries({"to": st.text(max_size=3), "urgent": st.booleans()}),
		st.fixed_dictionaries({"result": st.text(max_size=3)}, optional={"count": st.integers()}),
		st.lists(
			st.fixed_dictionaries(
				{"name": st.text(max_size=3)},
				optional={"status": st.sampled_from(["pending", "done"])},
			),
			max_size=2,
		),
	)
	command = st.fixed_dictionaries({"type": kinds}, optional={"tool": tools}).flatmap(
		lambda base: st.dictionaries(field_names, field_values, max_size=4).map(
			lambda extra: {**extra, **base}
		)
	)
	return st.fixed_dictionaries({"commands": st.lists(command, min_size=0, max_size=3)})


@pytest.mark.parametrize("agent", list(AGENTS))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
@example(reply={"commands": [{"type": "requestHumanInput", "message": "x"}, {"type": "callTool"}]})
@example(reply={"commands": [{"type": "finish", "output": {"result": "x"}}, {"type": "wait"}]})
def test_the_parser_accepts_exactly_what_the_schema_accepts(agent: str, reply: Any) -> None:
	"""On replies near the valid ones, the parser and the schema say the same (both directions)."""
	assert parser_accepts(reply, agent) == VALIDATORS[agent].is_valid(reply), reply


def validate(command: dict[str, Any]) -> Any:
	cls = command_class(command["type"])
	assert cls is not None
	return cls.model_validate(command)


def test_the_command_union_is_the_source_of_the_parser() -> None:
	"""COMMANDS and COMMAND_TYPES come from the Command union; each type finds its class."""
	assert typing.get_args(typing.get_args(Command)[0]) == COMMANDS
	assert tuple(c.model_fields["type"].annotation.__args__[0] for c in COMMANDS) == COMMAND_TYPES
	assert [command_class(t) for t in COMMAND_TYPES] == list(COMMANDS)
	assert command_class("dance") is None


def test_the_builders_make_commands_the_parser_accepts() -> None:
	"""Each test builder produces a command that validates into its model."""
	built = [
		testing.call_tool("local.search", query="q"),
		testing.wait(1),
		testing.update_plan("a", {"name": "b", "status": "completed"}),
		testing.update_memory("x", memory="longTerm", mode="replace"),
		testing.ask_human("?"),
		testing.finish(result="ok", human_message="done"),
	]
	kinds = [validate(b).type for b in built]
	assert kinds == list(COMMAND_TYPES)
	assert testing.finish("x", human_message="hi")["humanMessage"] == "hi"


@pytest.mark.parametrize("human", [True, False])
@pytest.mark.parametrize("enforced", [True, False])
def test_the_prompt_has_no_template_residue_and_its_examples_parse(
	human: bool, enforced: bool
) -> None:
	"""No doubled braces or placeholders; every example line is a command the parser accepts."""
	prompt = maestro_prompt(name="P", output_schema=OUTPUT, human_input=human, enforced=enforced)
	assert '{{"' not in prompt and "{{ " not in prompt and "}} " not in prompt
	assert not re.search(r"\{[a-z_]+\}", prompt), re.findall(r"\{[a-z_]+\}", prompt)
	assert ("requestHumanInput" in prompt) is human
	examples = [line for line in prompt.splitlines() if line.startswith('{"type":')]
	assert bool(examples) is not enforced
	for line in examples:
		command = validate(json.loads(line))
		if command.type == "finish":
			jsonschema.validate(command.output, OUTPUT)
	assert "humanMessage" in prompt and "shortTerm" in prompt and "at once" in prompt
	# what the reply schema says, the prompt says only when the provider does not enforce it
	for rule in ("60 seconds", "one level", "append or replace", "success or failure"):
		assert (rule in prompt) is not enforced


def test_the_prompt_describes_every_command_from_its_model() -> None:
	"""Each command's docstring summary, rules and shape lines appear in the prompt."""
	prompt = maestro_prompt(name="P", output_schema=None, human_input=True)
	lean = maestro_prompt(name="P", output_schema=None, human_input=True, enforced=True)
	for cls in COMMANDS:
		assert cls.__doc__.strip().splitlines()[0].rstrip(".") in prompt
		for rule in cls.rules:
			assert rule in prompt and rule in lean
		for rule in cls.shape:
			assert rule in prompt and rule not in lean


def test_the_envelope_follows_the_agent() -> None:
	"""callTool is one variant per visible tool; requestHumanInput only with a handler."""
	schema = _agent(human=False).envelope.schema()
	variants = schema["properties"]["commands"]["items"]["anyOf"]
	tools = [v["properties"]["tool"]["const"] for v in variants if "tool" in v["properties"]]
	assert tools == ["local.search", "local.send"]
	kinds = [v["properties"]["type"]["const"] for v in variants]
	assert "requestHumanInput" not in kinds and kinds[-1] == "finish"
	bare = Envelope.build(
		[ToolSchema("x.y", {"type": "object"})], output_schema=None, human_input=True
	)
	finish = bare.schema()["properties"]["commands"]["items"]["anyOf"][-1]
	assert "output" not in finish["required"]


def test_tool_and_output_schemas_with_their_own_definitions_resolve_in_the_envelope() -> None:
	"""$defs of a tool or an output schema are lifted to the root, so the whole schema resolves."""
	address = {
		"$defs": {
			"Address": {
				"type": "object",
				"properties": {"city": {"type": "string"}},
				"required": ["city"],
			}
		},
		"type": "object",
		"properties": {"to": {"$ref": "#/$defs/Address"}},
		"required": ["to"],
	}
	output = {
		"definitions": {"R": {"type": "string"}},
		"type": "object",
		"properties": {"r": {"$ref": "#/definitions/R"}},
	}
	envelope = Envelope.build(
		[ToolSchema("x.ship", address)], output_schema=output, human_input=False
	)
	schema = envelope.schema()
	assert set(schema["$defs"]) == {"t0.Address", "out.R"}
	validator = jsonschema.Draft202012Validator(schema)
	good = {
		"commands": [
			{"type": "callTool", "tool": "x.ship", "input": {"to": {"city": "Oslo"}}},
			{"type": "finish", "output": {"r": "ok"}},
		]
	}
	assert validator.is_valid(good)
	assert not validator.is_valid(
		{"commands": [{"type": "callTool", "tool": "x.ship", "input": {"to": {}}}]}
	)
	assert not validator.is_valid({"commands": [{"type": "finish", "output": {"r": 5}}]})


def test_approval_rules_appear_only_with_approvals() -> None:
	"""A command's approval_rules are in the prompt exactly when some tool waits for approval."""
	with_rules = [c for c in COMMANDS if c.approval_rules]
	assert with_rules
	on = maestro_prompt(name="P", output_schema=None, human_input=False, approvals=True)
	off = maestro_prompt(name="P", output_schema=None, human_input=False)
	for cls in with_rules:
		for rule in cls.approval_rules:
			assert rule in on and rule not in off
	assert len(on) - len(off) < 150  # the prompt stays small
