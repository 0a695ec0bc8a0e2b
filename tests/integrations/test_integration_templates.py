"""Every template of every installed integration parses (Liquid keywords as field names included)."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

import pytest

from openmolt_core.errors import ToolError
from openmolt_core.integrations import HttpTool, Integration
from openmolt_core.integrations.templating import parse_template

ENTRIES = sorted(
	(
		e
		for e in entry_points(group="openmolt.integrations")
		if e.dist is not None and e.dist.name in ("openmolt-core", "openmolt-integrations")
	),
	key=lambda e: e.name,
)  # first-party ones: the test plugin of tests/plugins has a deliberately empty one


def _registered(entry: Any) -> list[Integration]:
	module = importlib.import_module(entry.value)
	found: list[Integration] = []
	module.register_integrations(register=lambda integration, **_: found.append(integration))
	return found


def _strings(value: Any, where: str) -> list[tuple[str, str]]:
	if isinstance(value, str):
		return [(where, value)]
	if isinstance(value, dict):
		return [s for k, v in value.items() for s in _strings(v, f"{where}.{k}")]
	if isinstance(value, (list, tuple)):
		return [s for i, v in enumerate(value) for s in _strings(v, f"{where}[{i}]")]
	return []


def test_the_built_in_integrations_are_all_installed() -> None:
	"""The entry-point group lists the 29 built-in integrations and the core's httpRequest."""
	builtin = {e.name for e in ENTRIES if e.dist and e.dist.name == "openmolt-integrations"}
	assert {"googleDrive", "youtube", "dropbox", "s3", "notion", "tiktok"} <= builtin
	assert len(builtin) == 29
	assert "httpRequest" in {e.name for e in ENTRIES}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_every_template_parses(entry: Any) -> None:
	"""Each template string of each HTTP tool, API setup and credential parses with our Liquid."""
	integrations = _registered(entry)
	assert integrations, f"{entry.name} registers nothing"
	problems: list[str] = []
	for integration in integrations:
		strings = _strings(integration.api_setup.model_dump(), "api_setup")
		for cred in integration.credential_setup:
			strings += _strings(cred.model_dump(), f"credential {cred.type}")
		for tool in integration.tools:
			if not isinstance(tool, HttpTool):
				continue
			for field in (
				"base_url",
				"query_params",
				"headers",
				"body",
				"files",
			):
				strings += _strings(getattr(tool, field), f"{tool.handle}.{field}")
			try:
				parse_template(tool.endpoint, path=True, filters=integration.filters)
			except ToolError as exc:
				problems.append(f"{tool.handle}.endpoint: {exc}")
		for where, source in strings:
			try:
				parse_template(source, filters=integration.filters)
			except ToolError as exc:
				problems.append(f"{where}: {exc}")
	assert problems == []
