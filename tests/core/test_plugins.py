import json
import subprocess
import sys
from typing import Any

import pytest

from openmolt import OpenMolt, PluginError
from openmolt_core import hookimpl
from openmolt_core.plugins import Plugins, extra_for
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


def _run(code: str) -> Any:
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	return json.loads(out.stdout)


def test_importing_openmolt_loads_no_plugin_and_no_heavy_module() -> None:
	"""`import openmolt` in a fresh interpreter imports no plugin, no HTTP client and no template engine."""
	mods = _run("import sys, json, openmolt; print(json.dumps(sorted(sys.modules)))")
	plugin_mods = [
		m
		for m in mods
		if m.startswith(("openmolt_providers", "openmolt_integrations", "openmolt_weather"))
	]
	assert plugin_mods == []
	for heavy in ("httpx", "liquid", "tenacity", "croniter", "openmolt_core.integrations.http"):
		assert heavy not in mods


def test_the_core_never_imports_a_provider_or_an_integration_module() -> None:
	"""No module of openmolt_core imports openmolt_providers or openmolt_integrations."""
	from pathlib import Path

	import openmolt_core

	root = Path(openmolt_core.__file__).parent
	for path in root.rglob("*.py"):
		text = path.read_text()
		assert "import openmolt_providers" not in text and "from openmolt_providers" not in text, (
			path
		)
		assert (
			"import openmolt_integrations" not in text and "from openmolt_integrations" not in text
		), path


def test_creating_an_agent_loads_only_the_plugins_it_uses() -> None:
	"""An agent on the echo provider loads providers:echo, not the weather integration."""
	code = """
import sys, json
from openmolt import OpenMolt
om = OpenMolt()
agent = om.create_agent(name="A", model="echo:any")
print(json.dumps(sorted(m for m in sys.modules if m.startswith("openmolt_weather"))))
"""
	assert _run(code) == ["openmolt_weather", "openmolt_weather.echo"]


async def test_a_third_party_provider_is_found_through_its_entry_point() -> None:
	"""The echo provider of the openmolt-weather distribution works like a built-in one."""
	om = OpenMolt()
	agent = om.create_agent(name="A", model="echo:v1")
	result = await agent.run({"city": "Oslo"})
	assert result.output == {"echo": {"city": "Oslo"}}


def test_a_third_party_integration_is_found_through_its_entry_point() -> None:
	"""The weather integration of openmolt-weather registers under its entry-point name."""
	om = OpenMolt()
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["weather"])
	assert agent.tools == ["weather.getForecast"]
	assert om.plugins.source("integrations:weather") == "openmolt-weather"


def test_installed_lists_entry_points_with_versions_without_loading() -> None:
	"""plugins.installed() lists both groups with distribution and version."""
	infos = {(i.group, i.name): i for i in Plugins().installed()}
	assert infos[("integrations", "weather")].distribution == "openmolt-weather"
	assert infos[("providers", "echo")].version == "0.1.0"
	assert ("integrations", "httpRequest") in infos


def test_a_missing_integration_says_how_to_install_it() -> None:
	"""Asking for an integration nobody provides names the extra to install."""
	from openmolt_core._hints import install_command

	om = OpenMolt(entry_points=False)
	with pytest.raises(PluginError) as caught:
		om.create_agent(name="A", model=ScriptedModel([]), integrations=["googleDrive"])
	assert f"not installed; run: {install_command('openmolt[google-drive]')}" in str(caught.value)


def test_a_missing_file_system_integration_says_how_to_register_it() -> None:
	"""fileSystem is never available by default; the error shows how to register it."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(PluginError, match="FileSystemIntegration"):
		om.create_agent(name="A", model=ScriptedModel([]), integrations=["fileSystem"])


def test_a_missing_provider_is_a_plugin_error() -> None:
	"""An unknown model prefix raises a PluginError naming it."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(PluginError, match="providers:nope"):
		om.create_agent(name="A", model="nope:model")


def test_a_malformed_model_id_names_the_format() -> None:
	"""A model id without a provider prefix explains the expected form."""
	from openmolt import ConfigurationError

	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match="'provider:model'"):
		om.create_agent(name="A", model="gpt-5")


class InlinePlugin:
	OPENMOLT_ID = "inline"

	@hookimpl
	def register_integrations(self, register: Any) -> None:
		register(
			{
				"name": "Inline",
				"scopes": {"r": "read"},
				"tools": [
					{
						"handle": "ping",
						"description": "Ping.",
						"scopes": ["r"],
						"execute": lambda i, c: "pong",
					}
				],
			}
		)


async def test_plugins_passed_directly_register_under_their_id() -> None:
	"""An object passed as plugins=[...] registers its integration, and its execute tool runs."""
	model = ScriptedModel(
		[{"type": "callTool", "tool": "inline.ping", "input": {}}, finish(ok=True)]
	)
	om = OpenMolt(plugins=[InlinePlugin()], entry_points=False)
	agent = om.create_agent(name="A", model=model, integrations=["inline"])
	result = await agent.run()
	assert json.loads(model.requests[1].messages[-1].content)["results"][0]["result"] == "pong"
	assert result.output == {"ok": True}


class MisspelledHook:
	@hookimpl
	def register_integration(self, register: Any) -> None:  # missing 's'
		pass


def test_a_misspelled_hook_is_reported() -> None:
	"""A hook name that is not in the spec is caught by check_pending."""
	import pluggy

	om = OpenMolt(plugins=[MisspelledHook()], entry_points=False)
	with pytest.raises((pluggy.PluginValidationError, PluginError)):
		om.create_agent(name="A", model=ScriptedModel([]), integrations=["x"])


def test_extra_names_follow_the_integration_ids() -> None:
	"""Integration ids map to the kebab-case extras of the openmolt distribution."""
	assert extra_for("googleDrive") == "google-drive"
	assert extra_for("notion") == "notion"
	assert extra_for("browserUse") == "browser-use"


def test_creating_an_agent_touches_no_network_and_builds_no_client() -> None:
	"""create_agent with a real provider id and integrations sends nothing and creates no HTTP client."""
	om = OpenMolt()
	om.create_agent(name="A", model="echo:any", integrations=["weather"])
	assert om._http is None  # the client (and its CA bundle) is made on the first request only
