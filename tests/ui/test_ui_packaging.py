"""The core never imports the viewer's web stack or OpenTelemetry; their packages are complete."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

FOREIGN = ("starlette", "uvicorn", "openmolt_ui", "opentelemetry", "openmolt_otel")


def test_no_core_module_imports_the_viewer_or_opentelemetry() -> None:
	"""The CLI finds openmolt[ui] by entry point; no core source names these packages."""
	import openmolt_core

	for path in Path(openmolt_core.__file__).parent.rglob("*.py"):
		text = path.read_text(encoding="utf-8")
		for name in FOREIGN:
			assert f"import {name}" not in text and f"from {name}" not in text, (path, name)


def test_a_recorded_run_loads_neither_starlette_nor_opentelemetry(tmp_path: Path) -> None:
	"""A run with a run store, in a fresh interpreter, imports none of them."""
	code = f"""
import anyio, json, sys
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
om = OpenMolt(entry_points=False, run_store={str(tmp_path / "runs.db")!r})
agent = om.create_agent(name="A", model=ScriptedModel([finish(ok=1)]))
anyio.run(agent.run, "x")
print(json.dumps(sorted(sys.modules)))
"""
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	loaded = json.loads(out.stdout)
	assert [m for m in loaded if m.split(".")[0] in FOREIGN] == []


@pytest.mark.parametrize("name", ["openmolt_ui", "openmolt_otel", "openmolt_otel.conventions"])
def test_the_packages_export_a_sorted_documented_all(name: str) -> None:
	"""__all__ is sorted, names what the module defines, and every class and function has a docstring."""
	module = importlib.import_module(name)
	exported = list(module.__all__)
	assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))
	for item in exported:
		obj = getattr(module, item)
		if inspect.isclass(obj) or inspect.isfunction(obj):
			assert inspect.getdoc(obj), f"{name}.{item} has no docstring"


def test_the_page_ships_inside_the_package() -> None:
	"""index.html, app.js and app.css are package data (no build step, nothing fetched)."""
	static = resources.files("openmolt_ui").joinpath("static")
	for file in ("index.html", "app.js", "app.css"):
		assert static.joinpath(file).is_file(), file
	page = static.joinpath("index.html").read_text("utf-8")
	assert "{{TOKEN}}" in page and "http" not in page.replace("http-equiv", "")
