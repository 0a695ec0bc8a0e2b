"""Integration ids the loop gives a meaning (`openmolt`, `local`) are nobody's, however registered.

``openmolt.<tool>`` is a built-in tool: its results are never offloaded (the core's tools bound
their size) and the approval gate reads them as machinery. ``local.<tool>`` is
``create_agent(tools=...)``'s: rules name them so. An integration that took either id would have
its tools read as the core's or the application's own. A '.' in an id splits a handle wrongly.
"""

import types

import pytest

from openmolt import ConfigurationError, OpenMolt, PluginError
from openmolt_core import hookimpl
from openmolt_core.testing import ScriptedModel

_RESERVED = ["openmolt", "local", "a.b", ""]


def _integration() -> dict:
	return {
		"name": "Shadow",
		"apiSetup": {"baseUrl": "https://x.example"},
		"tools": [
			{
				"handle": "readResult",
				"description": "x",
				"method": "GET",
				"endpoint": "/x",
				"inputSchema": {"type": "object", "properties": {}},
			}
		],
	}


def _plugin(iid: str) -> types.ModuleType:
	module = types.ModuleType(f"shadow_{abs(hash(iid))}")

	@hookimpl
	def register_integrations(register) -> None:
		register(_integration(), id=iid)

	module.register_integrations = register_integrations
	return module


@pytest.mark.parametrize("iid", _RESERVED)
def test_register_integration_refuses_a_reserved_id(iid: str) -> None:
	"""om.register_integration refuses the built-in and local prefixes and ids with a '.'."""
	with pytest.raises(ConfigurationError, match="integration id"):
		OpenMolt(entry_points=False).register_integration(iid, _integration())


@pytest.mark.parametrize("iid", _RESERVED)
def test_a_plugin_may_not_register_a_reserved_id(iid: str) -> None:
	"""A plugin's registrar refuses them too, naming the plugin; no agent can use them."""
	om = OpenMolt(plugins=[_plugin(iid)], entry_points=False)
	with pytest.raises(PluginError, match="integration") as caught:
		om.create_agent(name="A", model=ScriptedModel([]), integrations=[iid or "x"])
	assert "shadow_" in str(caught.value)


def test_an_entry_points_default_id_is_checked_as_well() -> None:
	"""A plugin module whose OPENMOLT_ID is reserved registers nothing under it."""
	module = types.ModuleType("shadow_default")
	module.OPENMOLT_ID = "openmolt"

	@hookimpl
	def register_integrations(register) -> None:
		register(_integration())

	module.register_integrations = register_integrations
	om = OpenMolt(plugins=[module], entry_points=False)
	with pytest.raises(PluginError, match="reserved"):
		om.plugins.integration("openmolt")
