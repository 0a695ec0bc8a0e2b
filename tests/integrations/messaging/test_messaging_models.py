"""Model-level checks of the messaging integrations: valid, scoped, described, discoverable."""

from __future__ import annotations

import ast
import importlib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.integrations import FunctionTool, HttpTool, Integration

MODULES = {
	"discord": "openmolt_integrations.discord",
	"instagram": "openmolt_integrations.instagram",
	"outlook": "openmolt_integrations.outlook",
	"slack": "openmolt_integrations.slack",
	"telegram": "openmolt_integrations.telegram",
	"tiktok": "openmolt_integrations.tiktok",
	"twilio": "openmolt_integrations.twilio",
	"whatsapp": "openmolt_integrations.whatsapp",
	"x": "openmolt_integrations.x",
}
ROOT = Path(__file__).parents[3]


def integration(name: str) -> Integration:
	return importlib.import_module(MODULES[name]).INTEGRATION  # type: ignore[no-any-return]


def walk_properties(schema: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
	"""Every property of a schema, nested objects and array items included."""
	out: list[tuple[str, dict[str, Any]]] = []
	for name, prop in schema.get("properties", {}).items():
		out.append((f"{path}{name}", prop))
		out += walk_properties(prop, f"{path}{name}.")
		if isinstance(prop.get("items"), dict):
			out += walk_properties(prop["items"], f"{path}{name}[].")
	return out


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_defines_a_valid_integration(name: str) -> None:
	"""The module's INTEGRATION revalidates from its own dump and has an API version, docs and 5-40 tools."""
	spec = integration(name)
	tools = [t.model_dump(by_alias=True) if isinstance(t, HttpTool) else t for t in spec.tools]
	again = Integration.model_validate({**spec.model_dump(by_alias=True), "tools": tools})
	assert [t.handle for t in again.tools] == [t.handle for t in spec.tools]
	assert spec.api_version and spec.description and spec.credential_setup
	# Telegram's Bot API coverage (messages, media, pins, members, webhook) is the largest
	assert 5 <= len(spec.tools) <= 40
	assert "## Get a token" in spec.docs
	# Besides HTTP tools, only the core's fileInfo tool (chunked uploads) is allowed.
	assert all(
		isinstance(t, HttpTool) or (isinstance(t, FunctionTool) and t.handle == "fileInfo")
		for t in spec.tools
	)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_tool_has_known_scopes(name: str) -> None:
	"""Each tool needs at least one scope, and each defined scope is used by some tool."""
	spec = integration(name)
	used: set[str] = set()
	for tool in spec.tools:
		assert tool.scopes, f"{name}.{tool.handle} has no scopes"
		assert set(tool.scopes) <= set(spec.scopes)
		used |= set(tool.scopes)
	assert used == set(spec.scopes)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_input_property_is_described(name: str) -> None:
	"""Every input property, nested ones included, carries a description for the model."""
	spec = integration(name)
	for tool in spec.tools:
		assert tool.input_schema["type"] == "object"
		assert len(tool.description) > 20
		for path, prop in walk_properties(tool.input_schema):
			assert prop.get("description"), f"{name}.{tool.handle}: {path} has no description"
		required = set(tool.input_schema.get("required", []))
		assert required <= set(tool.input_schema["properties"]), f"{name}.{tool.handle}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_templates_only_refer_to_declared_inputs(name: str) -> None:
	"""Every ``input.x`` a template names is a property of the tool's input schema."""
	import re

	spec = integration(name)
	for tool in spec.tools:
		if not isinstance(tool, HttpTool):
			continue
		text = repr(
			(tool.endpoint, tool.query_params, tool.body, tool.headers, tool.base_url, tool.files)
		)
		names = set(re.findall(r"input\.(\w+)", text))
		assert names <= set(tool.input_schema["properties"]), f"{name}.{tool.handle}: {names}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_entry_point_resolves_to_the_module(name: str) -> None:
	"""The openmolt.integrations entry point loads the module, and OpenMolt finds the integration by id."""
	eps = {ep.name: ep for ep in metadata.entry_points(group="openmolt.integrations")}
	assert eps[name].value == MODULES[name]
	module = eps[name].load()
	assert module.INTEGRATION is integration(name)
	spec = OpenMolt().plugins.integration(name)
	assert spec.id == name and spec.name == module.INTEGRATION.name


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_all_is_sorted_and_complete(name: str) -> None:
	"""``__all__`` is sorted and lists exactly the module's public names."""
	module = importlib.import_module(MODULES[name])
	tree = ast.parse(Path(module.__file__).read_text())  # type: ignore[arg-type]
	public = set()
	for node in tree.body:
		if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
			public.add(node.name)
		if isinstance(node, ast.Assign):
			public |= {
				t.id for t in node.targets if isinstance(t, ast.Name) and not t.id.startswith("_")
			}
	public.discard("__all__")
	assert module.__all__ == sorted(module.__all__)
	assert set(module.__all__) == public


def test_root_extras_exist_for_every_messaging_integration() -> None:
	"""The umbrella package has an extra per messaging integration id."""
	import tomllib

	extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
		"optional-dependencies"
	]
	assert set(MODULES) <= set(extras)


def test_secrets_are_only_in_credential_config() -> None:
	"""Tokens reach requests only through config templates, never as literal values in tools."""
	for name in MODULES:
		for tool in integration(name).tools:
			text = repr(tool.model_dump() if isinstance(tool, HttpTool) else tool.input_schema)
			for marker in ("xoxb-", "Bearer ey", "EAAG"):
				assert marker not in text, f"{name}.{tool.handle}"
