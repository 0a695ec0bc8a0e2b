"""--dry-run and `openmolt tools AGENT_FILE` list the tools a run gets, from every source.

An agent file's tools come from its integrations, its OpenAPI documents (a document, one with
importer options, the JSON import-openapi writes), its MCP servers (started to list them), its
skills; a Python file's also from functions, agents used as tools and HTTP tools it registers.
The dry run showed 0 tools for an agent whose tools come from MCP servers; `openmolt tools` took
an agent file for an integration id.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from _ecosystem import children

from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._agentfile import AgentFileError
from openmolt_core.cli._run import load

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[1] / "docs" / "guides"

SKILL = """---
name: invoices
description: How we check invoices.
---
Check them.
"""

PYTHON_FILE = """
from openmolt_core.integrations import ApiSetup, HttpTool, Integration


def lookup(order: str) -> str:
    \"\"\"Look an order up.\"\"\"
    return order


def agent(om):
    om.register_integration("weather", Integration(
        name="Weather",
        api_setup=ApiSetup(base_url="https://api.example.com"),
        tools=[HttpTool(handle="forecast", description="The forecast.", endpoint="/forecast",
                        input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                      "required": ["city"]})],
    ))
    om.register_integration("petstore", Integration.from_openapi(
        str(__import__("pathlib").Path(__file__).parent / "petstore.json"), id="petstore",
        operations=["listPets"]))
    helper = om.create_agent(name="Helper", model="openai:gpt-5-mini", instructions="Help.")
    return om.create_agent(
        name="Main", model="openai:gpt-5-mini", tools=[lookup, helper],
        integrations=["weather", "petstore", "httpRequest"],
        skills=[str(__import__("pathlib").Path(__file__).parent / "skills")],
    )
"""

JSON_TOOLS = {
	"httpRequest.request",  # an integration
	"petstore.listPets",  # an OpenAPI document, the four operations of the guide's sample
	"petstore.createPet",
	"petstore.showPetById",
	"petstore.getInventory",
	"pets.listPets",  # the same with importer options: the pet tag only
	"pets.createPet",
	"pets.showPetById",
	"shop.getInventory",  # the JSON import-openapi --format json wrote, one operation
	"skills.load",  # skills
	"ours.whoami",  # an MCP server, excludeTools honoured
	"ours.sleep",
	"ours.send",
}
PY_TOOLS = [
	"weather.forecast",
	"petstore.listPets",
	"httpRequest.request",
	"local.lookup",
	"local.Helper",
	"skills.load",
]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	shutil.copy(DOCS / "petstore.json", tmp_path / "petstore.json")
	(tmp_path / "skills" / "invoices").mkdir(parents=True)
	(tmp_path / "skills" / "invoices" / "SKILL.md").write_text(SKILL, encoding="utf-8")
	assert (
		openmolt_main(
			[
				*("import-openapi", str(tmp_path / "petstore.json"), "--id", "shop"),
				*("--operation", "getInventory", "--format", "json"),
				*("-o", str(tmp_path / "shop.json")),
			]
		)
		== 0
	)
	spec = {
		"name": "Everything",
		"model": "openai:gpt-5-mini",
		"integrations": ["httpRequest", {"integration": "pets", "scopes": "all"}],
		"openapi": {
			"petstore": "petstore.json",
			"pets": {"document": "petstore.json", "tags": ["pet"]},
			"shop": "shop.json",
		},
		"mcpServers": {
			"ours": {
				"command": sys.executable,
				"args": [str(HERE / "stdio_server.py")],
				"excludeTools": ["fail"],
			}
		},
		"skills": ["skills"],
	}
	(tmp_path / "agent.json").write_text(json.dumps(spec), encoding="utf-8")
	(tmp_path / "agent.py").write_text(PYTHON_FILE, encoding="utf-8")
	return tmp_path


def _json_out(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
	capsys.readouterr()
	assert openmolt_main(list(args)) == 0
	return json.loads(capsys.readouterr().out)


def test_a_dry_run_and_openmolt_tools_list_every_source_of_a_json_agent_file(
	folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Integrations, three OpenAPI forms, an MCP server and skills: the same list from both."""
	file = str(folder / "agent.json")
	dry = _json_out(capsys, file, "--dry-run", "--json")
	assert {t["tool"] for t in dry["tools"]} == JSON_TOOLS
	listed = _json_out(capsys, "tools", file, "--json")
	assert [t["tool"] for t in listed["tools"]] == [t["tool"] for t in dry["tools"]]
	whoami = next(t for t in listed["tools"] if t["tool"] == "ours.whoami")
	assert whoami["inputSchema"]["type"] == "object" and whoami["labels"]
	assert openmolt_main(["tools", file]) == 0
	table = capsys.readouterr().out
	assert "Everything (" in table and f"the tools a run gets ({len(JSON_TOOLS)})" in table
	assert "ours.sleep" in table and "seconds" in table  # its required input
	assert not children("stdio_server.py")  # the server was stopped again


def test_a_dry_run_and_openmolt_tools_list_every_source_of_a_python_agent_file(
	folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""HTTP tools, an OpenAPI import, a function, an agent as a tool, skills."""
	file = str(folder / "agent.py")
	dry = _json_out(capsys, file, "--dry-run", "--json")
	assert [t["tool"] for t in dry["tools"]] == PY_TOOLS
	listed = _json_out(capsys, "tools", file, "--json")
	assert [t["tool"] for t in listed["tools"]] == PY_TOOLS


def test_openmolt_tools_shows_one_tool_of_an_agent_file(
	folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""By its whole handle or the part after the dot; a wrong one gets the nearest."""
	file = str(folder / "agent.py")
	one = _json_out(capsys, "tools", file, "forecast", "--json")
	assert one["tool"] == "weather.forecast" and one["inputSchema"]["required"] == ["city"]
	assert openmolt_main(["tools", file, "local.lookup"]) == 0
	assert "Look an order up." in capsys.readouterr().out
	assert openmolt_main(["tools", file, "forecst"]) != 0
	assert "did you mean 'weather.forecast'?" in capsys.readouterr().err
	# a file that is not there is said as one, not looked up as the integration 'agent'
	assert openmolt_main(["tools", str(folder / "agnet.py")]) != 0
	said = capsys.readouterr().err
	assert "agnet.py: no such agent file; did you mean" in said and "integration" not in said


def test_the_openapi_key_takes_a_document_options_or_an_imported_integration(
	folder: Path,
) -> None:
	"""The agent uses each id; its keys are read as any integration's (OPENMOLT_<ID>_<KEY>)."""
	loaded = load(str(folder / "agent.json"), env_file=None, verbose=False)
	tools = loaded.agent.tools
	assert "pets.getInventory" not in tools  # tags: ["pet"]
	assert loaded.om.plugins.integration("shop").tools[0].handle == "getInventory"


@pytest.mark.parametrize(
	("entry", "said"),
	[
		("missing.json", "openapi.x: no such file 'missing.json'"),
		({"document": "shop.json", "tags": ["pet"]}, "holds an integration already imported"),
		({"document": "petstore.json", "tags": ["nope"]}, "openapi.x: no operation has tag"),
		({"document": "petstore.json", "baseUrl": "http://127.0.0.1:9"}, "openapi.x: "),
	],
)
def test_a_wrong_openapi_entry_names_the_file_and_the_key(
	folder: Path, entry: Any, said: str
) -> None:
	path = folder / "bad.json"
	spec = {"name": "B", "model": "openai:gpt-5-mini", "openapi": {"x": entry}}
	path.write_text(json.dumps(spec), encoding="utf-8")
	with pytest.raises(AgentFileError, match=None) as caught:
		load(str(path), env_file=None, verbose=False)
	assert str(caught.value).startswith(f"{path}: ") and said in str(caught.value)


def test_the_openapi_guide_s_agent_file_runs_as_written(folder: Path) -> None:
	"""docs/guides/openapi.md's agent file, with the sample and the JSON import-openapi writes."""
	import re

	guide = (DOCS / "openapi.md").read_text(encoding="utf-8")
	section = guide[guide.index("## From an agent file") :]
	block = re.search(r"```json\n(.*?)```", section, re.DOTALL)
	assert block is not None
	shutil.copy(folder / "shop.json", folder / "shop_tools.json")
	(folder / "guide.json").write_text(block.group(1), encoding="utf-8")
	loaded = load(str(folder / "guide.json"), env_file=None, verbose=False)
	assert set(loaded.agent.tools) == {
		"petstore.listPets",
		"petstore.createPet",
		"petstore.showPetById",
		"petstore.getInventory",
		"pets.listPets",
		"pets.createPet",
		"pets.showPetById",
		"shop.getInventory",
	}
	assert loaded.agent.labels["pets.listPets"] == {"untrusted", "private"}


def test_a_folder_of_agent_files_leaves_out_the_documents_they_use(folder: Path) -> None:
	"""`openmolt serve agents/` read petstore.json and shop.json beside agent.json as agents."""
	from openmolt_core.cli._agentfile import agent_files

	(folder / "broken.json").write_text("{not json", encoding="utf-8")  # still reported
	(folder / "list.json").write_text("[]", encoding="utf-8")
	names = [p.name for p in agent_files([str(folder)])]
	assert names == ["agent.json", "agent.py", "broken.json", "list.json"]
	# An agent file's own openapi key (an object) does not make it a document.
	spec = json.loads((folder / "agent.json").read_text(encoding="utf-8"))
	assert isinstance(spec["openapi"], dict)
