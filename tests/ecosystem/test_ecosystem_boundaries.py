"""The core never imports the MCP plugin; importing the plugin loads the SDK only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _modules(code: str) -> list[str]:
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	return list(json.loads(out.stdout))


def test_the_core_never_imports_openmolt_mcp_or_the_sdk() -> None:
	"""No module of openmolt_core imports openmolt_mcp or mcp (the CLI finds it by entry point)."""
	import openmolt_core

	for path in Path(openmolt_core.__file__).parent.rglob("*.py"):
		text = path.read_text(encoding="utf-8")
		for name in ("openmolt_mcp", "mcp"):
			assert f"import {name}\n" not in text and f"from {name} " not in text, (path, name)
			assert f"from {name}." not in text, (path, name)


def test_importing_openmolt_loads_neither_mcp_nor_the_openapi_importer() -> None:
	"""`import openmolt` stays light: no MCP module, no importer."""
	mods = _modules("import sys, json, openmolt; print(json.dumps(sorted(sys.modules)))")
	assert [m for m in mods if m.startswith(("openmolt_mcp", "mcp"))] == []
	assert "openmolt_core.integrations.openapi" not in mods and "openmolt_core.openapi" not in mods
	assert "openmolt_core.capabilities.sources" not in mods


def test_defining_an_mcp_integration_does_not_load_the_sdk() -> None:
	"""MCP.stdio(...) is plain data until an agent runs: the SDK is imported on first use."""
	code = (
		"import sys, json\n"
		"from openmolt_mcp import MCP\n"
		"MCP.stdio('uvx', ['mcp-server-time'])\n"
		"print(json.dumps(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.'))))"
	)
	assert _modules(code) == []
