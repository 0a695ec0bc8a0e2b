"""A third-party capability found through its entry point only (tests/plugins: acme-approver)."""

import json
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt, PluginError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


sent: list[str] = []


@tool(labels=["outbound"])
def send(to: str) -> str:
	"""Send a letter.

	Args:
		to: The address.
	"""
	sent.append(to)
	return "sent"


def agent(model: ScriptedModel, **options: Any) -> Any:
	return OpenMolt().create_agent(
		name="Post",
		model=model,
		tools=[send],
		capabilities=[{"name": "acme-approver", "options": {"guard": ["local.send"]}}],
		**options,
	)


async def test_an_installed_capability_approves_a_call_adds_a_tool_and_keeps_state() -> None:
	sent.clear()
	model = ScriptedModel(
		[[call_tool("approver.policy"), call_tool("local.send", to="ada")], finish("done")]
	)
	parked = await agent(model).run("write to ada")
	assert parked.status == "approval_required" and sent == []
	assert parked.error == "local.send waits for approval"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	done = await agent(model).resume(saved, given="approve")
	assert done.status == "success" and sent == ["ada"]
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert results[0]["result"] == "approval needed for: local.send"
	assert results[1]["result"] == "sent"
	assert list(done.state.ext["approver"]) == ["approved"]


async def test_a_denial_reaches_the_model() -> None:
	sent.clear()
	model = ScriptedModel([call_tool("local.send", to="eve"), finish("gave up")])
	parked = await agent(model).run("write to eve")
	done = await agent(model).resume(parked.state, given="deny")
	assert sent == [] and done.output == "gave up"
	assert json.loads(model.requests[1].messages[-1].content)["results"] == [
		{"tool": "local.send", "ok": False, "error": "not run: a person denied this call"}
	]


def test_an_unknown_capability_name_is_a_plugin_error_with_a_hint() -> None:
	with pytest.raises(PluginError, match="acme-approver"):
		OpenMolt().create_agent(name="A", model=ScriptedModel([]), capabilities=["acme-aprover"])


def test_bad_options_name_the_capability() -> None:
	with pytest.raises(ConfigurationError, match="'acme-approver' could not be built"):
		OpenMolt().create_agent(
			name="A",
			model=ScriptedModel([]),
			capabilities=[{"name": "acme-approver", "options": {"nope": 1}}],
		)


def test_an_agent_file_names_capabilities(tmp_path: Any) -> None:
	from openmolt_core.cli._agentfile import AgentFileError
	from openmolt_core.cli._run import load

	path = tmp_path / "a.json"
	spec = {
		"name": "A",
		"model": "openai:gpt-5-mini",
		"capabilities": [{"name": "acme-approver", "options": {"guard": ["approver.policy"]}}],
	}
	path.write_text(json.dumps(spec))
	agent = load(str(path), env_file=None, verbose=False).agent
	assert "approver" in agent._hooks.by_name and "approver.policy" in agent.tools
	path.write_text(json.dumps({**spec, "capabilities": [{"name": "acme-approver", "opts": {}}]}))
	with pytest.raises(AgentFileError, match="capabilities"):
		load(str(path), env_file=None, verbose=False)
