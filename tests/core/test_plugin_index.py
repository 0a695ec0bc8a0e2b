"""The entry-point index is read once per process and shared by every OpenMolt instance."""

import sys
import types
from importlib import metadata
from typing import Any

import pytest

from openmolt import OpenMolt, PluginError
from openmolt_core import hookimpl, plugins
from openmolt_core.testing import ScriptedModel


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
	"""Count OpenMolt's passes over the installed distributions, starting from an empty index.

	Only the plugin index's own calls count: pydantic reads the entry points too, once per
	process as it builds its first model (its plugin loader), through the same function.
	"""
	calls: list[int] = []
	real = metadata.entry_points

	def counting(**kwargs: Any) -> Any:
		if sys._getframe(1).f_globals.get("__name__") == plugins.__name__:
			calls.append(1)
		return real(**kwargs)

	monkeypatch.setattr(plugins, "_index", None)
	monkeypatch.setattr(plugins.metadata, "entry_points", counting)
	return calls


def test_many_instances_read_the_installed_plugins_once(scans: list[int]) -> None:
	"""Ten instances that each load a provider and an integration scan the metadata once."""
	for _ in range(10):
		om = OpenMolt()
		om.create_agent(name="A", model="echo:any", integrations=["weather"])
		assert om.plugins.source("providers:echo") == "openmolt-weather"
	assert len(scans) == 1


def test_an_instance_without_entry_points_never_scans(scans: list[int]) -> None:
	"""entry_points=False looks nothing up, and says the provider is missing."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(PluginError, match="providers:echo"):
		om.create_agent(name="A", model="echo:any")
	assert scans == []


def test_refresh_finds_a_plugin_installed_after_the_first_lookup(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A plugin installed while the program runs is found after plugins.refresh()."""
	module = types.ModuleType("late_plugin")

	@hookimpl
	def register_providers(register: Any) -> None:
		register(lambda settings, http: ScriptedModel([]), name="late")

	module.register_providers = register_providers  # type: ignore[attr-defined]
	monkeypatch.setitem(sys.modules, "late_plugin", module)
	monkeypatch.setattr(plugins, "_index", None)
	om = OpenMolt()
	om.create_agent(name="A", model="echo:any")  # the index is read now, without "late"
	with pytest.raises(PluginError, match="providers:late"):
		om.create_agent(name="A", model="late:model")

	real = metadata.entry_points
	late = metadata.EntryPoint(name="late", value="late_plugin", group="openmolt.providers")

	def with_late() -> Any:
		found = real()
		groups = ("openmolt.providers", "openmolt.integrations")
		return metadata.EntryPoints([*(ep for g in groups for ep in found.select(group=g)), late])

	monkeypatch.setattr(plugins.metadata, "entry_points", with_late)
	other = OpenMolt()
	with pytest.raises(PluginError, match="providers:late"):
		other.create_agent(name="A", model="late:model")  # still the process's first index
	other.plugins.refresh()
	assert other.create_agent(name="A", model="late:model").model == "model"
	assert ("providers", "late") in {(i.group, i.name) for i in OpenMolt().plugins.installed()}


def test_each_instance_still_calls_a_module_plugin_once() -> None:
	"""A module's hooks are found once per process but called once for every instance."""
	module = types.ModuleType("counted_plugin")
	calls: list[object] = []

	@hookimpl
	def register_integrations(register: Any) -> None:
		calls.append(register)
		register(
			{
				"name": "Counted",
				"tools": [{"handle": "ping", "description": "Ping.", "execute": lambda i, c: 1}],
			},
			id="counted",
		)

	module.register_integrations = register_integrations  # type: ignore[attr-defined]
	for _ in range(3):
		om = OpenMolt(plugins=[module], entry_points=False)
		agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["counted"])
		assert agent.tools == ["counted.ping"]
	assert len(calls) == 3
	assert len({id(r) for r in calls}) == 3  # each instance hands its own registrar


def test_a_misspelled_hook_in_a_module_is_still_reported() -> None:
	"""Remembering a module's markers keeps pluggy's check for hooks that are not in the spec."""
	import pluggy

	module = types.ModuleType("misspelled_plugin")

	@hookimpl
	def register_provider(register: Any) -> None:  # missing 's'
		pass

	module.register_provider = register_provider  # type: ignore[attr-defined]
	for _ in range(2):
		om = OpenMolt(plugins=[module], entry_points=False)
		with pytest.raises((pluggy.PluginValidationError, PluginError)):
			om.create_agent(name="A", model=ScriptedModel([]), integrations=["x"])


def test_an_invalid_installed_plugin_is_reported_by_every_instance(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A misspelled hook in an entry-point plugin fails in each instance, not only the first."""
	module = types.ModuleType("bad_installed_plugin")

	@hookimpl
	def register_provider(register: Any) -> None:  # missing 's'
		pass

	module.register_provider = register_provider  # type: ignore[attr-defined]
	monkeypatch.setitem(sys.modules, "bad_installed_plugin", module)
	bad = metadata.EntryPoint(name="bad", value="bad_installed_plugin", group="openmolt.providers")
	real = metadata.entry_points

	def with_bad() -> Any:
		found = real()
		groups = ("openmolt.providers", "openmolt.integrations")
		return metadata.EntryPoints([*(ep for g in groups for ep in found.select(group=g)), bad])

	monkeypatch.setattr(plugins, "_index", None)
	monkeypatch.setattr(plugins.metadata, "entry_points", with_bad)
	for _ in range(2):
		with pytest.raises(PluginError, match="invalid hook"):
			OpenMolt().create_agent(name="A", model="bad:model")
	agent = OpenMolt().create_agent(name="A", model="echo:any")  # the others still load
	assert agent.model == "any"


def test_the_listing_class_is_built_only_when_plugins_are_listed() -> None:
	"""A run looks plugins up and never lists them: `PluginInfo` (a dataclass) waits for a listing.

	Building a frozen dataclass compiles its generated methods, about 4 M instructions of a
	one-shot run; the old name keeps working and is the class `Plugins.installed` returns.
	"""
	import subprocess
	import textwrap

	code = textwrap.dedent(
		"""
		import sys
		from openmolt_core import plugins
		print("PluginInfo" in vars(plugins), "openmolt_core._plugininfo" in sys.modules)
		infos = plugins.Plugins().installed()
		print(all(type(i) is plugins.PluginInfo for i in infos), bool(infos))
		print(plugins.PluginInfo.__name__, sorted(plugins.PluginInfo.__dataclass_fields__))
		"""
	)
	out = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
	)
	assert out.stdout.split("\n")[:3] == [
		"False False",
		"True True",
		"PluginInfo ['distribution', 'group', 'name', 'value', 'version']",
	]
