"""Skills from plugins (the openmolt.skills entry points) and from agent files."""

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import openmolt_weather.skills
from openmolt import ConfigurationError, OpenMolt, PluginError
from openmolt_core import hookimpl
from openmolt_core.cli import main
from openmolt_core.plugins import Plugins
from openmolt_core.skills import Skill
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


def first_turn(model: ScriptedModel) -> dict[str, Any]:
	return json.loads(model.requests[0].messages[0].content)


def results(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


async def test_an_installed_plugins_skills_are_found_by_its_entry_point_name() -> None:
	"""skills=["weather-skills"] loads the plugin, which registers both skills of its folder."""
	model = ScriptedModel(
		[
			call_tool("skills.load", name="forecasting", file="thresholds.md"),
			call_tool("skills.load", name="forecasting"),
			finish("done"),
		]
	)
	om = OpenMolt()
	agent = om.create_agent(name="A", model=model, skills=["weather-skills"])
	await agent.run("Umbrella?")
	assert [s["name"] for s in first_turn(model)["skills"]] == ["forecasting", "storm-warnings"]
	assert results(model, 1)[0]["result"]["content"] == "Rain counts above 0.5 mm per hour.\n"
	loaded = results(model, 2)[0]["result"]
	assert loaded["instructions"].startswith("Call weather.getForecast")
	# Loading it grants nothing: the agent has no weather integration.
	assert "weather.getForecast" in loaded["unavailable"]
	assert om.plugins.source("skills:weather-skills") == "openmolt-weather"


def test_a_skill_is_found_by_its_own_name_and_listed_once() -> None:
	"""A skill's own name finds it through its plugin; naming it twice lists it once."""
	om = OpenMolt()
	agent = om.create_agent(
		name="A", model=ScriptedModel([]), skills=["storm-warnings", "weather-skills"]
	)
	assert [s.name for s in agent.skills] == ["storm-warnings", "forecasting"]


def test_an_unknown_name_says_what_plugins_provide() -> None:
	"""A bare name no plugin provides (and no folder has) is refused with the close names."""
	with pytest.raises(ConfigurationError, match="no plugin provides a skill 'forecastin'") as err:
		OpenMolt().create_agent(name="A", model=ScriptedModel([]), skills=["forecastin"])
	assert "forecasting" in str(err.value)


def test_a_plugin_registering_a_bad_skill_is_a_plugin_error() -> None:
	"""A malformed skill from a plugin names the plugin and the field."""
	with pytest.raises(PluginError, match=r"broken-skill.*description must say"):
		OpenMolt().create_agent(name="A", model=ScriptedModel([]), skills=["broken-skill"])


def test_a_folder_and_a_plugin_skill_of_one_name_are_ambiguous(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A bare name that is both a folder here and a plugin's skill must be written ./name."""
	folder = tmp_path / "forecasting"
	folder.mkdir()
	(folder / "SKILL.md").write_text("---\nname: forecasting\ndescription: local copy\n---\nx")
	monkeypatch.chdir(tmp_path)
	with pytest.raises(ConfigurationError, match="both a plugin's skill and a folder"):
		OpenMolt().create_agent(name="A", model=ScriptedModel([]), skills=["forecasting"])
	agent = OpenMolt().create_agent(name="A", model=ScriptedModel([]), skills=["./forecasting"])
	assert agent.skills[0].description == "local copy"


def test_a_bare_folder_name_still_works_when_no_plugin_has_it(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""skills=["skills"] is the folder ./skills when no plugin provides a skill of that name."""
	(tmp_path / "skills" / "notes").mkdir(parents=True)
	(tmp_path / "skills" / "notes" / "SKILL.md").write_text(
		"---\nname: notes\ndescription: Notes.\n---\nx"
	)
	monkeypatch.chdir(tmp_path)
	agent = OpenMolt().create_agent(name="A", model=ScriptedModel([]), skills=["skills"])
	assert [s.name for s in agent.skills] == ["notes"]


class CodePlugin:
	"""A plugin object passed directly: registers a Skill and a dict."""

	OPENMOLT_ID = "house-style"

	@hookimpl
	def register_skills(self, register: Any) -> None:
		register(
			Skill(name="tone", description="Write in our house tone.", instructions="Be brief.")
		)
		register({"name": "headlines", "description": "Headline rules."})


def test_plugins_passed_directly_register_skills_too() -> None:
	"""OpenMolt(plugins=[...]) skills are found by name and by the plugin's OPENMOLT_ID."""
	om = OpenMolt(plugins=[CodePlugin()], entry_points=False)
	assert om.plugins.skill_names() == ["headlines", "house-style", "tone"]
	agent = om.create_agent(name="A", model=ScriptedModel([]), skills=["house-style"])
	assert [s.name for s in agent.skills] == ["tone", "headlines"]
	assert [s.name for s in om.plugins.skills("tone") or []] == ["tone"]
	assert om.plugins.skills("nothing") is None


def test_installed_lists_skill_plugins_and_the_plugins_command_shows_them(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""Skill entry points are listed without loading them."""
	infos = {(i.group, i.name) for i in Plugins().installed()}
	assert ("skills", "weather-skills") in infos
	assert main(["plugins"]) == 0
	out = capsys.readouterr().out
	assert "skills:\n" in out and "weather-skills  openmolt-weather" in out


def test_the_skill_plugin_module_is_loaded_only_when_named() -> None:
	"""Creating an agent without skills never imports a skill plugin."""
	sys.modules.pop("openmolt_weather.badskill", None)
	OpenMolt().create_agent(name="A", model=ScriptedModel([]))
	assert "openmolt_weather.badskill" not in sys.modules
	assert openmolt_weather.skills.register_skills is not None


def test_agent_files_name_skills_by_folder_and_by_plugin(tmp_path: Path) -> None:
	"""An agent file's "skills" takes folders relative to the file and plugin skill names."""
	from openmolt_core.cli._run import load

	(tmp_path / "mine" / "notes").mkdir(parents=True)
	(tmp_path / "mine" / "notes" / "SKILL.md").write_text(
		"---\nname: notes\ndescription: Notes.\n---\nx"
	)
	file = tmp_path / "agent.json"
	file.write_text(
		json.dumps(
			{
				"name": "A",
				"model": "echo:v1",
				"skills": ["mine", "storm-warnings"],
			}
		)
	)
	loaded = load(str(file), env_file=None, verbose=False)
	assert [s.name for s in loaded.agent.skills] == ["notes", "storm-warnings"]
	assert "skills.load" in loaded.agent.tools


def test_an_agent_files_skills_must_be_a_list_of_strings(tmp_path: Path) -> None:
	"""A wrong "skills" value is an error naming the line and the key."""
	from openmolt_core.cli._agentfile import AgentFileError, load_json_file

	file = tmp_path / "agent.json"
	file.write_text('{\n  "name": "A",\n  "model": "echo:v1",\n  "skills": "mine"\n}\n')
	with pytest.raises(AgentFileError, match=r"agent.json:4: skills"):
		load_json_file(file)
