"""Two plugins claiming one id: the first keeps it, a warning names both; the user may override."""

import os
import subprocess
import sys
import types
import warnings

import pytest

from openmolt import OpenMolt
from openmolt_core import hookimpl
from openmolt_core.plugins import PluginConflictWarning
from openmolt_core.testing import ScriptedModel


def _integration(name: str) -> dict:
	return {"name": name, "apiSetup": {"baseUrl": "https://x.example"}, "tools": []}


def _plugin(module_name: str, label: str) -> types.ModuleType:
	module = types.ModuleType(module_name)

	@hookimpl
	def register_integrations(register) -> None:
		register(_integration(label), id="dup")

	@hookimpl
	def register_providers(register) -> None:
		register(lambda settings, http: ScriptedModel([]), name="dupmodel")

	module.register_integrations = register_integrations
	module.register_providers = register_providers
	return module


def test_the_first_plugin_keeps_an_id_and_the_warning_names_both() -> None:
	"""The second registration of 'dup' is ignored, with a warning naming both plugins."""
	om = OpenMolt(plugins=[_plugin("plugin_a", "A"), _plugin("plugin_b", "B")], entry_points=False)
	with pytest.warns(PluginConflictWarning) as caught:
		spec = om.plugins.integration("dup")
	assert spec.name == "A"
	messages = [str(w.message) for w in caught]
	assert any(
		"integration 'dup' is registered by both plugin_a and plugin_b" in m for m in messages
	)
	assert any(
		"provider 'dupmodel' is registered by both plugin_a and plugin_b" in m for m in messages
	)


def test_a_users_own_registration_overrides_a_plugin_without_a_warning() -> None:
	"""om.register_integration replaces the weather plugin's integration on purpose."""
	om = OpenMolt()
	with warnings.catch_warnings():
		warnings.simplefilter("error")
		om.register_integration("weather", _integration("Mine"))
		assert om.plugins.integration("weather").name == "Mine"
		agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["weather"])
	assert agent.tools == []


def _distribution(root, name: str, module: str, label: str) -> None:
	info = root / f"{name.replace('-', '_')}-1.0.dist-info"
	info.mkdir()
	(info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
	(info / "entry_points.txt").write_text(f"[openmolt.integrations]\ndup = {module}\n")
	(root / f"{module}.py").write_text(
		"from openmolt_core import hookimpl\n\n"
		"@hookimpl\n"
		"def register_integrations(register):\n"
		f"\tregister({{'name': '{label}', 'apiSetup': {{'baseUrl': 'https://x.example'}}, 'tools': []}})\n"
	)


def test_two_distributions_with_the_same_entry_point_are_named(tmp_path) -> None:
	"""`openmolt tools dup` with dup installed by two distributions warns, naming both."""
	_distribution(tmp_path, "openmolt-dup-one", "dup_one", "One")
	_distribution(tmp_path, "openmolt-dup-two", "dup_two", "Two")
	env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMOLT_")}
	env["PYTHONPATH"] = f"{tmp_path}:{env.get('PYTHONPATH', '')}"
	done = subprocess.run(
		[sys.executable, "-m", "openmolt", "tools", "dup"],
		cwd=tmp_path,
		env=env,
		capture_output=True,
		text=True,
		timeout=60,
	)
	assert done.returncode == 0, done.stderr
	# The command says it as one line in its own voice (no class name, no source path).
	assert done.stderr.startswith("openmolt: warning: integration 'dup' is registered by both")
	names = sorted(["openmolt-dup-one", "openmolt-dup-two"])
	assert "integration 'dup' is registered by both" in done.stderr
	assert all(n in done.stderr for n in names)
	first = done.stderr.split("registered by both ")[1].split(" and ")[0]
	assert done.stdout.startswith(("One" if first == "openmolt-dup-one" else "Two") + " (dup)")
