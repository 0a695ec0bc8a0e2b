"""Every built-in tool is checked against an official machine-readable reference, or listed.

The table is tests/integrations/_references.py; the list of the exceptions, with their reasons,
is docs/reference/integrations.md.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from _references import MAX_UNREFERENCED, REFERENCES, UNREFERENCED

import openmolt_integrations

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[1] / "docs" / "reference" / "integrations.md"


def _modules() -> dict[str, object]:
	return {
		m.name: importlib.import_module(f"openmolt_integrations.{m.name}").INTEGRATION
		for m in pkgutil.iter_modules(openmolt_integrations.__path__)
		if not m.name.startswith("_")
	}


def test_every_integration_names_its_reference_and_tests() -> None:
	"""Each integration module has a row, and each test file named exists and reads it."""
	modules = _modules()
	assert set(REFERENCES) == set(modules)
	for module, (_, tests) in REFERENCES.items():
		for name in tests:
			text = (HERE / name).read_text()
			assert re.search(rf"\b{module}\b", text), f"{name} does not read {module}"


def test_the_unreferenced_tools_are_real_and_few() -> None:
	"""Every listed tool exists, and at most MAX_UNREFERENCED stay without a reference."""
	tools = {
		f"{module}.{t.handle}"
		for module, integration in _modules().items()
		for t in integration.tools  # type: ignore[attr-defined]
	}
	assert set(UNREFERENCED) <= tools, set(UNREFERENCED) - tools
	assert len(UNREFERENCED) <= MAX_UNREFERENCED, len(UNREFERENCED)
	assert all(reason.strip() for reason in UNREFERENCED.values())


def test_the_docs_list_each_unreferenced_tool_with_its_reason() -> None:
	"""docs/reference/integrations.md lists exactly the unreferenced tools, each with its reason."""
	text = DOCS.read_text()
	rows = dict(re.findall(r"^\| `(\w+\.\w+)` \| (.+?) \|$", text, re.M))
	assert set(rows) == set(UNREFERENCED)
	for key, reason in UNREFERENCED.items():
		assert rows[key] == reason, key
	assert f"{len(UNREFERENCED)} tools" in text
