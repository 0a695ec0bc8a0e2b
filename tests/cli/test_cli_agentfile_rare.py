"""An agent file without triggers, schedules, OpenAPI sources or config builds none of their models.

`openmolt_core.cli._agentfile.validate` checks such a file with the agent-file model less those
four fields' models (about half the model's 12 ms of CPU in a fresh process): it must accept and
refuse exactly what `AgentFile` does, in the same words, and give the same `AgentFile`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from openmolt_core.cli._agentfile import AgentFile, validate

BASE: dict[str, Any] = {"name": "A", "model": "openai:gpt-5-mini"}

FILES: list[dict[str, Any]] = [
	BASE,
	{**BASE, "$schema": "./agent-file.schema.json", "instructions": "Do it.", "input": {"a": [1]}},
	{**BASE, "model": ["openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"], "maxSteps": 3},
	{**BASE, "max_steps": 3, "max_tokens": 100, "timeout": 1.5, "maxCost": 0.5},
	{**BASE, "modelConfig": {"temperature": 0.2, "maxOutputTokens": 100}},
	{**BASE, "model_config": {"thinking": "high"}},
	{**BASE, "integrations": ["slack", {"integration": "notion", "scopes": ["read"]}]},
	{**BASE, "integrations": {"slack": {"botToken": "xoxb-1"}}},
	{**BASE, "memory": {"enabled": True}, "humanInput": False, "requiresApproval": ["slack"]},
	{**BASE, "outputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
	{**BASE, "taintPolicy": "refuse", "guardrails": [{"use": "max_size"}], "skills": ["x"]},
	{**BASE, "capabilities": ["c", {"name": "d", "options": {"k": 1}}], "toolLoading": "search"},
	{**BASE, "llmProviders": {"openai": {"apiKey": "sk-1"}}, "mcpServers": {"m": {"url": "u"}}},
	{**BASE, "durability": "runs.db", "fallbackModels": ["openai:gpt-5"]},
	# refused
	{},
	{"name": "", "model": "openai:gpt-5-mini"},
	{**BASE, "model": []},
	{**BASE, "model": 3},
	{**BASE, "maxSteps": "10"},
	{**BASE, "maxSteps": 0, "timeout": -1, "maxCost": float("inf")},
	{**BASE, "maxSteps": 3, "max_steps": 4},
	{**BASE, "trigers": {}, "schedule": []},
	{**BASE, "modelConfig": {"temprature": 0.2}},
	{**BASE, "temperature": 0.2},
	{**BASE, "integrations": [3, {"integraton": "notion"}]},
	{**BASE, "integrations": {"slack": "xoxb-1"}},
	{**BASE, "outputSchema": {"type": "objekt"}},
	{**BASE, "memory": {"enabled": "yes"}},
	{**BASE, "toolLoading": "some", "humanInput": 1, "requiresApproval": 3},
	{**BASE, "capabilities": [{"options": {}}], "guardrails": ["max_size"]},
	{**BASE, "$schema": 1, "instructionsPath": ["a"], "mcpServers": []},
	{**BASE, "été": 1, "": 2},
	# a rare one given: the whole model
	{**BASE, "schedules": [{"cron": "0 9 * * *"}], "config": {"maxSteps": 2}},
	{**BASE, "openapi": {"pets": "petstore.json"}, "triggers": {"webhook": {}}},
	{**BASE, "config": {"maxStep": 2}},
	{**BASE, "schedules": "daily"},
	{**BASE, "Triggers": {}, "OpenAPI": 1},
]


def _outcome(check: Any, data: dict[str, Any]) -> tuple[str, Any]:
	try:
		made = check(json.loads(json.dumps(data)))
	except ValidationError as exc:
		# An error's context may hold the exception a validator raised: compared as text.
		errors = [
			{**e, "ctx": {k: repr(v) for k, v in e.get("ctx", {}).items()}}
			for e in exc.errors(include_url=False)
		]
		return "refused", (str(exc), errors, exc.title)
	return "made", (made, sorted(made.model_fields_set), type(made))


@pytest.mark.parametrize("data", FILES, ids=range(len(FILES)))
def test_a_file_is_checked_as_the_whole_model_checks_it(data: dict[str, Any]) -> None:
	"""Each file is accepted with the same fields, or refused with the same errors, either way."""
	strict = _outcome(lambda d: AgentFile.model_validate(d, strict=True), data)
	assert _outcome(validate, data) == strict


def test_every_spelling_of_a_rare_field_gets_the_whole_model() -> None:
	"""A rare field's name, alias and validation aliases (normalized) all route to `AgentFile`."""
	from openmolt_core.cli._agentfile import _RARE, _norm, _rare_spellings

	spellings = _rare_spellings()
	for name in _RARE:
		field = AgentFile.model_fields[name]
		assert {_norm(name), _norm(field.alias)} <= spellings
	assert "modelconfig" not in spellings  # a common field's aliases are not rare


def test_a_file_without_the_rare_fields_builds_none_of_their_models(tmp_path: Path) -> None:
	"""In a fresh process, a plain file's load builds neither `AgentFile` nor the trigger models."""
	path = tmp_path / "agent.json"
	path.write_text(json.dumps({**BASE, "integrations": ["slack"], "maxSteps": 2}))
	code = (
		"import json, sys\n"
		"from pathlib import Path\n"
		"from openmolt_core.cli._agentfile import AgentFile, load_json_file\n"
		"from openmolt_core.triggers import Triggers\n"
		"from openmolt_core.schedule import CronSchedule\n"
		"from openmolt_core.agentconfig import AgentConfig\n"
		f"spec = load_json_file(Path({str(path)!r}))\n"
		"print(json.dumps([spec.max_steps, spec.triggers, spec.schedules, spec.openapi,\n"
		"	[c.__pydantic_complete__ for c in (AgentFile, Triggers, CronSchedule, AgentConfig)]]))\n"
	)
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout) == [2, None, [], {}, [False, False, False, False]]


def test_the_schedule_and_trigger_types_load_with_the_model_on_every_path() -> None:
	"""`AgentFile` names them, and their modules load when the model is first built, however.

	A plain file's load and ``-m`` import neither module (`tests/cli/test_cli_fast_start.py`);
	an application that validates a file with `AgentFile` itself, or asks its JSON Schema, in a
	fresh process, gets the typed schedules and triggers as before.
	"""
	code = (
		"import json, sys\n"
		"from openmolt_core.agentfile import AgentFile\n"
		"rare = ('openmolt_core.schedule', 'openmolt_core.triggers')\n"
		"before = [m in sys.modules for m in rare]\n"
		"spec = AgentFile.model_validate({'name': 'A', 'model': 'openai:gpt-5-mini',\n"
		"	'schedules': [{'type': 'interval', 'value': 60}], 'triggers': {'webhook': {}}})\n"
		"defs = AgentFile.model_json_schema()['$defs']\n"
		"print(json.dumps([before, [m in sys.modules for m in rare],\n"
		"	type(spec.schedules[0]).__name__, type(spec.triggers.webhook).__name__,\n"
		"	'Triggers' in defs, 'CronSchedule' in defs]))\n"
	)
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout) == [
		[False, False],
		[True, True],
		"IntervalSchedule",
		"WebhookTrigger",
		True,
		True,
	]


def test_a_python_agent_file_s_triggers_are_read_with_their_model(tmp_path: Path) -> None:
	"""A Python agent file's ``triggers`` dict becomes `Triggers` (their module loaded for it)."""
	path = tmp_path / "agent.py"
	path.write_text(
		"from openmolt_core import OpenMolt\n"
		"agent = OpenMolt().create_agent(name='a', model='openai:gpt-5-mini')\n"
		"triggers = {'webhook': {'scheme': 'github'}}\n"
	)
	code = (
		"import sys\n"
		"from pathlib import Path\n"
		"from openmolt_core.cli._agentfile import load_python_file\n"
		f"loaded = load_python_file(Path({str(path)!r}))\n"
		"print(type(loaded.triggers).__name__, loaded.triggers.webhook.scheme)\n"
	)
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
	assert done.returncode == 0, done.stderr
	assert done.stdout.split() == ["Triggers", "github"]


_USES = """
from pydantic import BaseModel, TypeAdapter
from openmolt_core.agentfile import AgentFile

data = {"name": "A", "model": "openai:gpt-5-mini", "triggers": {"webhook": {"secret": "s"}}}
assert TypeAdapter(AgentFile).validate_python(data).triggers is not None
assert TypeAdapter(list[AgentFile]).validate_python([data])[0].name == "A"


class Deploy(BaseModel):
	agent: AgentFile


assert Deploy.model_validate({"agent": data}).agent.triggers is not None


class Mine(AgentFile):
	owner: str = "ops"


assert Mine.model_validate(data).triggers is not None
print("ok")
"""


@pytest.mark.parametrize("first", ["", "import openmolt_core.cli._agentfile\n"])
def test_the_public_agent_file_model_is_whole_in_a_fresh_process(first: str) -> None:
	"""`openmolt_core.agentfile.AgentFile` (the public name the sibling distributions and
	programs use) validates as a field of another model, through a TypeAdapter and as a base
	class, its ``triggers`` and ``schedules`` read, in a process where nothing built it before.
	Since its trigger and schedule types load only at its own first validation, each of these
	failed with pydantic's "`...` is not fully defined"."""
	done = subprocess.run(
		[sys.executable, "-c", first + _USES], capture_output=True, text=True, timeout=120
	)
	assert done.returncode == 0, done.stderr[-2000:]
	assert done.stdout.strip() == "ok"
