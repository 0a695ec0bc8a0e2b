"""An option of the wrong type is refused where it is given, naming the option and the fix.

Found by giving each option of ``OpenMolt(...)`` and ``create_agent(...)`` a value of another
type: some raised Python's own errors from deep inside (``AttributeError: 'list' object has no
attribute 'items'``, ``dictionary update sequence element #0 has length 1``, ``'<' not supported
between 'str' and 'int'``), a string given for a list was read letter by letter (``tools="slack"``:
"tools[0] is a str"), and some were taken and failed later or never (``name=5`` at the first
request, ``instructions=[...]`` sent as a list's repr, ``on_human_input_request=5`` silently
turned off, ``compaction={"share": 3}`` never compacting).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.llm import CompactionConfig

MODEL = "openai:gpt-5-mini"


def _refused(match: str, **options: Any) -> None:
	om = OpenMolt({"openai": {"api_key": "sk-test"}})
	with pytest.raises(ConfigurationError, match=match):
		om.create_agent(**{"name": "a", "model": MODEL, **options})


@pytest.mark.parametrize(
	("options", "match"),
	[
		({"name": 5}, r"name must be text, the agent's name \(got int 5\)"),
		({"name": "  "}, r"name must be text"),
		({"instructions": ["Be", "brief"]}, r"instructions must be text \(got list .*'\\n'\.join"),
		({"instructions_path": 5}, r"instructions_path must be a file's path \(text .*got int"),
		({"instructions_path": "a\x00.md"}, r"instructions_path .* no NUL character \(.* at 1\)"),
		(
			{"instructions_path": b"a.md"},
			r"instructions_path must be a file's path \(text .*got bytes",
		),
		({"tools": "slack"}, r"tools must be a list of tools .*got str 'slack'.*integrations=\["),
		({"tools": {"add": 1}}, r"tools must be a list .*got dict"),
		({"integrations": "slack"}, r"integrations must be a list .*integrations=\['slack'\]"),
		({"skills": "./pdf"}, r"skills must be a list .*skills=\['./pdf'\]"),
		({"fallback_models": "openai:gpt-5"}, r"fallback_models must be a list .*got str"),
		({"guardrails": "pii"}, r"guardrails must be a list .*guardrails=\[pii_redaction\(\)\]"),
		({"on_human_input_request": 5}, r"on_human_input_request must be a function"),
		({"on_approval_request": "yes"}, r"on_approval_request must be a function"),
		({"model_config": [1]}, r"model_config must be a dict of its settings"),
		(
			{"model_config": {"temprature": 1}},
			r"unknown key 'temprature'; did you mean 'temperature'",
		),
		(
			{"model_config": {"temperature": 5}},
			r"temperature must be less than or equal to 2 \(got int 5\)",
		),
		({"model_config": {"thinking": "max"}}, r"thinking must be a valid boolean or 'low'"),
		({"compaction": {"share": 3}}, r"create_agent: compaction: share must be a fraction"),
		({"compaction": {"keep_steps": 0}}, r"keep_steps must be a whole number >= 1, got 0"),
		({"compaction": {"threshold_tokens": -5}}, r"threshold_tokens must be a whole number"),
		({"compaction": {"model": 5}}, r"compaction: model must be a 'provider:model' id"),
	],
)
def test_create_agent_names_the_wrong_option(options: dict[str, Any], match: str) -> None:
	"""Each wrong type is a ConfigurationError naming the option and the fix, at creation."""
	_refused(match, **options)


def test_a_list_given_another_way_still_works() -> None:
	"""A tuple or a generator is a list of tools; a lone Guardrail is still taken."""
	from openmolt_core.guardrails import pii_redaction

	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		return a + b

	om = OpenMolt({"openai": {"api_key": "sk-test"}})
	agent = om.create_agent(
		name="a", model=MODEL, tools=(t for t in [add]), guardrails=pii_redaction()
	)
	assert agent.tools == ["local.add"]


@pytest.mark.parametrize(
	("options", "match"),
	[
		({"llm_providers": ["openai"]}, r"llm_providers must be a dict of settings by name"),
		({"llm_providers": "openai"}, r"llm_providers must be a dict .*got str"),
		({"llm_providers": {"openai": "sk-x"}}, r"llm_providers\['openai'\] must be a dict"),
		({"integrations": "slack"}, r"integrations must be a dict of settings by name"),
		({"integrations": {"slack": "xoxb-1"}}, r"integrations\['slack'\] must be a dict"),
		({"max_steps": "3"}, r"max_steps must be a whole number >= 1, got '3'"),
		({"max_steps": True}, r"max_steps must be a whole number"),
		({"run_store": 5}, r"run_store must be a path"),
		({"files_dir": 5}, r"files_dir must be a path"),
		({"schedule_store": 5.0}, r"schedule_store must be a path"),
		({"run_store": "runs\x00.db"}, r"run_store must be a path with no NUL character"),
		({"files_dir": Path("files\x00")}, r"files_dir must be a path with no NUL character"),
		({"http_client": "x"}, r"http_client must be an httpx.AsyncClient"),
		({"http_client": httpx.Client()}, r"http_client must be an httpx.AsyncClient .*got Client"),
		({"guardrails": "pii"}, r"OpenMolt: guardrails must be a list"),
	],
)
def test_openmolt_names_the_wrong_option(options: dict[str, Any], match: str) -> None:
	"""The instance's options too: no AttributeError or TypeError from inside."""
	with pytest.raises(ConfigurationError, match=match):
		OpenMolt(**options)


def test_a_compaction_config_made_in_code_is_checked() -> None:
	"""``CompactionConfig`` itself refuses what would never compact or always would."""
	for wrong in ({"share": 0}, {"share": True}, {"summary_words": "600"}, {"keep_steps": 1.5}):
		with pytest.raises(ValueError, match="compaction: "):
			CompactionConfig(**wrong)
	assert CompactionConfig(share=1, threshold_tokens=1000).share == 1


def _agent() -> Any:
	from openmolt_core.testing import ScriptedModel, finish

	om = OpenMolt()
	return om.create_agent(name="a", model=ScriptedModel([finish("ok")]), instructions="x")


@pytest.mark.anyio
@pytest.mark.parametrize(
	("call", "match"),
	[
		(
			lambda a: a.run("hi", attachments="receipt.pdf"),
			r"attachments must be a list of Attachment",
		),
		(
			lambda a: a.run("hi", attachments=5),
			r"attachments must be a list of Attachment .*got int",
		),
		(
			lambda a: a.run("hi", attachments=["receipt.pdf"]),
			r"attachments\[0\] must be an Attachment",
		),
		(lambda a: a.run("hi", history="x"), r"history must be a saved run state .*got str"),
		(lambda a: a.resume(None), r"resume: state must be a saved run state .*got NoneType"),
		(lambda a: a.resume("x"), r"resume: state must be a saved run state"),
	],
)
async def test_a_run_names_the_wrong_argument(call: Any, match: str) -> None:
	"""A path given for an attachment, a state that is no state: named, nothing runs."""
	agent = _agent()
	with pytest.raises(ConfigurationError, match=match):
		await call(agent)


def test_agent_on_and_schedule_name_the_mistake() -> None:
	"""A misspelt event gets its near name; a handler that is no function and a schedule given
	as text are refused where they are given, not when the event or the time comes."""
	agent = _agent()
	with pytest.raises(ValueError, match=r"unknown event 'tool:cal'; did you mean 'tool:call'\?"):
		agent.on("tool:cal", print)
	with pytest.raises(TypeError, match=r"the handler must be a function .*got int"):
		agent.on("tool:call", 5)
	with pytest.raises(ConfigurationError, match=r"a schedule must be a dict, got str: e\.g\."):
		agent.schedule("every 5 minutes")


@pytest.mark.parametrize(
	("made", "match"),
	[
		(lambda: FunctionTool(5, "d", _echo), r"handle must be the tool's name \(text\), got 5"),
		(lambda: FunctionTool("t", None, _echo), r"description must be text .*got NoneType"),
		(lambda: FunctionTool("t", "d", 5), r"function must be callable .*got int"),
		(
			lambda: FunctionTool("t", "d", _echo, input_schema={"type": "objekt"}),
			r"input_schema is not a valid JSON Schema: input_schema: type: must be one of",
		),
		(
			lambda: FunctionTool("t", "d", _echo, output_schema={"type": 5}),
			r"output_schema is not a valid JSON Schema",
		),
		(lambda: FunctionTool.from_function(5), r"a tool is made from a function .*got int"),
	],
)
def test_a_function_tool_names_what_is_wrong(made: Any, match: str) -> None:
	"""A FunctionTool made wrong is refused when it is made, not when the model calls it (a schema
	that is no JSON Schema was shown to the model and failed every call's check)."""
	with pytest.raises(TypeError, match=match):
		made()


def _echo(input: dict[str, Any], context: Any) -> Any:
	return input


def test_as_tool_names_what_is_wrong() -> None:
	"""A sub-agent's tool with a name or description that is not text, or a schema that is no
	JSON Schema, is refused when it is made."""
	agent = _agent()
	for options, match in (
		({"name": 5}, r"as_tool: name must be text, got int 5"),
		({"description": ["x"]}, r"as_tool: description must be text"),
		({"input_schema": "task"}, r"as_tool: input_schema must be a JSON Schema dict, got str"),
		({"input_schema": {"type": "objekt"}}, r"as_tool: input_schema is not a valid JSON Schema"),
	):
		with pytest.raises(ConfigurationError, match=match):
			agent.as_tool(**options)
	assert agent.as_tool(name="").handle == "a"  # empty: the agent's name, as before


def test_stores_name_a_path_that_is_not_one(tmp_path: Any) -> None:
	"""A session or run store given a number for its path says so (was Python's TypeError)."""
	from openmolt_core.runstore import RunStore
	from openmolt_core.sessions import SQLiteSession

	with pytest.raises(ConfigurationError, match=r"SQLiteSession path must be a file's path"):
		SQLiteSession("chat-1", path=5)  # type: ignore[arg-type]
	with pytest.raises(ConfigurationError, match=r"RunStore: path must be a file's path"):
		RunStore(5)  # type: ignore[arg-type]
	from openmolt_core.credstore import EncryptedFileStore

	with pytest.raises(ConfigurationError, match=r"EncryptedFileStore: path .* no NUL character"):
		EncryptedFileStore("creds\x00.json")
	for nul in ("s\x00.db", Path("s\x00.db")):  # the OS refuses it later: "embedded null byte"
		with pytest.raises(ConfigurationError, match=r"SQLiteSession path .* no NUL character"):
			SQLiteSession("chat-1", path=nul)
		with pytest.raises(ConfigurationError, match=r"RunStore: path .* no NUL character"):
			RunStore(nul)
	assert SQLiteSession("chat-1", path=tmp_path / "s.db").path == tmp_path / "s.db"


def test_instructions_path_that_is_not_utf8_is_named(tmp_path: Any) -> None:
	"""The instructions file saved as UTF-16: named, with the fix (was UnicodeDecodeError)."""
	path = tmp_path / "instructions.md"
	path.write_bytes("Be brief.".encode("utf-16"))
	with pytest.raises(
		ConfigurationError, match=r"instructions_path .* is not UTF-8 text: it is UTF-16"
	):
		OpenMolt().create_agent(name="a", model=MODEL, instructions_path=path)


def test_a_long_text_in_the_wrong_place_is_not_repeated() -> None:
	"""A key pasted where a list or a dict goes is named by its length, never repeated."""
	key = "xoxb-1234567890-abcdefghijklmnop"
	for options in ({"integrations": key}, {"model_config": {"provider_options": key}}):
		with pytest.raises(ConfigurationError) as caught:
			OpenMolt().create_agent(name="a", model=MODEL, **options)
		assert key not in str(caught.value) and "str of 32 characters" in str(caught.value)


def test_definition_errors_do_not_repeat_the_values_given() -> None:
	"""An integration definition's errors name the field and the problem, never a value (its
	headers may hold a token): pydantic's own text repeated each ``input_value``."""
	key = "xoxb-1234567890-abcdefghijklmnop"
	tool = {"handle": "a", "description": "d", "method": "GETT", "headers": {"Authorization": key}}
	definitions = (
		key,
		{"name": "X", "baseUrl": "https://x.example", "tools": [tool]},
		{"name": "X", "tools": [key]},
	)
	for definition in definitions:
		with pytest.raises(ConfigurationError) as caught:
			OpenMolt().register_integration("x", definition)  # type: ignore[arg-type]
		assert key not in str(caught.value) and caught.value.__cause__ is None
	with pytest.raises(ConfigurationError) as caught:
		OpenMolt().create_agent(name="a", model=MODEL, config={"max_cost": key})
	assert key not in str(caught.value) and "str of 32 characters" in str(caught.value)


def test_an_unknown_key_inside_an_option_is_named_where_it_is() -> None:
	"""A key unknown to ``credential`` (inside an integration entry) or to a memory part names that
	place and its keys, not the outer option's (it listed the entry's keys for a credential's)."""
	with pytest.raises(ConfigurationError) as caught:
		OpenMolt().create_agent(
			name="a",
			model=MODEL,
			integrations=[{"integration": "slack", "credential": {"tpye": "bearer"}}],
		)
	assert (
		"integrations[slack]['credential']: unknown key 'tpye'; did you mean 'type'? "
		"(allowed: type, config, on_token_refresh)"
	) in str(caught.value)
	with pytest.raises(ConfigurationError) as caught:
		OpenMolt().create_agent(name="a", model=MODEL, memory={"long_term": {"dat": "x"}})
	assert (
		"memory['long_term']: unknown key 'dat'; did you mean 'data'? (allowed: data, on_update, untrusted, shared)"
	) in str(caught.value)
