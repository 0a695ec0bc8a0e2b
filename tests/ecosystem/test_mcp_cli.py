"""`openmolt mcp AGENT_FILE` tested with the official SDK's client, and mcpServers in agent files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _ecosystem import children
from mcp import Client, StdioServerParameters

from openmolt_core.cli._run import load
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent

AGENT_PY = """
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

om = OpenMolt(entry_points=False)
model = ScriptedModel([
    lambda request: finish({"greeting": "Hello, " + __import__("json").loads(
        request.messages[0].content)["input"]["name"]}, human_message="greeted"),
    finish({"greeting": ""}, status="failure", human_message="I could not greet"),
])
agent = om.create_agent(
    name="Greeter Bot",
    model=model,
    instructions="Greet the person named in the input.",
    output_schema={"type": "object", "properties": {"greeting": {"type": "string"}},
                   "required": ["greeting"]},
)
"""


def _server(tmp_path: Path) -> StdioServerParameters:
	agent_file = tmp_path / "greeter.py"
	agent_file.write_text(AGENT_PY, encoding="utf-8")
	return StdioServerParameters(
		command=sys.executable,
		args=["-m", "openmolt", "mcp", str(agent_file)],
		env={"PYTHONPATH": os.pathsep.join(sys.path)},
		cwd=str(tmp_path),
	)


async def test_an_agent_served_over_stdio_is_one_tool_with_its_schemas(tmp_path: Path) -> None:
	"""The SDK client lists one tool (input, output schema) and a call runs the agent."""
	with anyio.fail_after(60):
		async with Client(_server(tmp_path), cache=None) as client:
			(tool,) = (await client.list_tools()).tools
			assert tool.name == "Greeter_Bot"
			assert tool.description == "Greet the person named in the input."
			assert tool.input_schema["required"] == ["input"]
			assert tool.output_schema == {
				"type": "object",
				"properties": {"greeting": {"type": "string"}},
				"required": ["greeting"],
			}
			result = await client.call_tool("Greeter_Bot", {"input": '{"name": "Ada"}'})
			assert result.is_error is False
			assert result.structured_content == {"greeting": "Hello, Ada"}
			assert json.loads(result.content[0].text) == {"greeting": "Hello, Ada"}
			failed = await client.call_tool("Greeter_Bot", {"input": "again"})
			assert failed.is_error is True
			assert "status 'failure': I could not greet" in failed.content[0].text


async def test_openmolt_mcp_without_the_extension_says_what_to_install(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""No openmolt-mcp installed: the command names the extra to install."""
	from openmolt_core._hints import install_command
	from openmolt_core.cli import _ecosystem

	monkeypatch.setattr(_ecosystem.metadata, "entry_points", lambda **kw: [])
	with pytest.raises(ConfigurationError) as caught:
		_ecosystem.extension("mcp", needed_for="openmolt mcp")
	assert str(caught.value).endswith(f"run: {install_command('openmolt[mcp]')}")


async def test_mcp_servers_in_a_json_agent_file_become_integrations(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""An mcpServers block registers each server (with ${VAR} read from the environment)."""
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	monkeypatch.setenv("DEMO_TOKEN_VALUE", "from-the-env-123456")
	agent_file = tmp_path / "agent.json"
	agent_file.write_text(
		json.dumps(
			{
				"name": "Files",
				"model": "openai:gpt-5-mini",
				"mcpServers": {
					"ours": {
						"command": sys.executable,
						"args": [str(HERE / "stdio_server.py")],
						"env": {"DEMO_TOKEN": "${DEMO_TOKEN_VALUE}"},
						"excludeTools": ["fail"],
						"labels": {"whoami": []},
					}
				},
			}
		),
		encoding="utf-8",
	)
	loaded = load(str(agent_file), env_file=None, verbose=False)
	om = loaded.om
	try:
		assert om.plugins.integration("ours").source is not None
		assert loaded.agent.lists_tools_at_run_time
		model = ScriptedModel([call_tool("ours.whoami"), finish(result="ok")])
		twin = om.create_agent(name="Twin", model=model, integrations=["ours"])
		await twin.run("who")
		listed = [t["tool"] for t in json.loads(model.requests[0].messages[0].content)["tools"]]
		assert listed == ["ours.whoami", "ours.sleep", "ours.send"]
		result: Any = json.loads(model.requests[1].messages[-1].content)["results"][0]
		assert result["ok"] is True and result["result"]["token"] == "[redacted]"
		assert "untrusted" not in result  # the agent file's labels declare whoami safe
		assert twin.labels["ours.send"] == {"untrusted", "outbound"}  # no entry, no annotations
	finally:
		await om.aclose()
	assert not children("stdio_server.py")


def test_an_unset_variable_in_mcp_servers_names_the_field(tmp_path: Path) -> None:
	"""${NAME} with NAME unset fails the load with the field and the fix."""
	agent_file = tmp_path / "agent.json"
	agent_file.write_text(
		json.dumps(
			{
				"name": "X",
				"model": "openai:gpt-5-mini",
				"mcpServers": {"gh": {"command": "x", "env": {"TOKEN": "${OPENMOLT_NOPE_UNSET}"}}},
			}
		),
		encoding="utf-8",
	)
	with pytest.raises(
		ConfigurationError, match=r"mcpServers\.gh\.env\.TOKEN: .*OPENMOLT_NOPE_UNSET"
	):
		load(str(agent_file), env_file=None, verbose=False)


def test_a_dry_run_lists_the_tools_of_mcp_servers(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""--dry-run starts the agent file's MCP servers to list their tools, then stops them."""
	from openmolt_core.cli import main as openmolt_main

	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	monkeypatch.setenv("DEMO_TOKEN_VALUE", "from-the-env-123456")
	agent_file = tmp_path / "agent.json"
	agent_file.write_text(
		json.dumps(
			{
				"name": "Files",
				"model": "openai:gpt-5-mini",
				"mcpServers": {
					"ours": {
						"command": sys.executable,
						"args": [str(HERE / "stdio_server.py")],
						"env": {"DEMO_TOKEN": "${DEMO_TOKEN_VALUE}"},
						"excludeTools": ["fail"],
					}
				},
			}
		),
		encoding="utf-8",
	)
	assert openmolt_main([str(agent_file), "--dry-run", "--json"]) == 0
	data = json.loads(capsys.readouterr().out)
	listed = [t["tool"] for t in data["tools"]]
	assert {"ours.whoami", "ours.sleep"} <= set(listed) and "ours.fail" not in listed
	assert not children("stdio_server.py")


ASKING_PY = """
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish

om = OpenMolt(entry_points=False)
model = ScriptedModel([
    ask_human("Which name?"),
    lambda request: finish({"greeting": "Hello, " + __import__("json").loads(
        request.messages[-1].content)["results"][0]["result"]}),
])
agent = om.create_agent(
    name="Greeter",
    model=model,
    output_schema={"type": "object", "properties": {"greeting": {"type": "string"}},
                   "required": ["greeting"]},
)
"""


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_question_over_stdio_is_asked_of_the_clients_user(
	tmp_path: Path, mode: str
) -> None:
	"""Over stdio, the agent's question reaches the client's elicitation handler (in the call's
	result on 2026-07-28, as elicitation/create on a legacy connection) and its answer the run."""
	from mcp.types import ElicitResult

	agent_file = tmp_path / "asking.py"
	agent_file.write_text(ASKING_PY, encoding="utf-8")
	server = StdioServerParameters(
		command=sys.executable,
		args=["-m", "openmolt", "mcp", str(agent_file)],
		env={"PYTHONPATH": os.pathsep.join(sys.path)},
		cwd=str(tmp_path),
	)
	asked: list[str] = []

	async def elicit(context: Any, params: Any) -> ElicitResult:
		asked.append(params.message)
		return ElicitResult(action="accept", content={"answer": "Ada"})

	with anyio.fail_after(60):
		async with Client(server, cache=None, mode=mode, elicitation_callback=elicit) as client:
			result = await client.call_tool("Greeter", {"input": "greet someone"})
	assert asked == ["Which name?"]
	assert result.structured_content == {"greeting": "Hello, Ada"}


def test_the_cli_prints_a_servers_stderr_with_controls_escaped(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt --dry-run` starts the servers: what one prints on its stderr shows escaped.

	The command escapes every outside text it prints (`printable`); a server's stderr went to the
	terminal as it was, and the terminal obeyed it (a colour, OSC 52 writing the clipboard, a
	bidi override reordering the line).
	"""
	from openmolt_core.cli import main as openmolt_main

	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	agent_file = tmp_path / "agent.json"
	server = {
		"command": sys.executable,
		"args": [str(HERE / "hostile_stdio_server.py")],
		"env": {"SHOUT_AT_START": "1"},
	}
	agent_file.write_text(
		json.dumps({"name": "A", "model": "openai:gpt-5-mini", "mcpServers": {"h": server}}),
		encoding="utf-8",
	)
	assert openmolt_main([str(agent_file), "--dry-run", "--json"]) == 0
	err = capfd.readouterr().err
	assert (
		"\\u001b[31mred\\u001b[0m \\u001b]52;c;cm0gLXJmIC8=\\u0007 \\u202eevil\\u202c done" in err
	)
	assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
	assert not children("hostile_stdio_server.py")
