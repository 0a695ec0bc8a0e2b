"""Architecture.md's table of capabilities holds every capability class of OpenMolt's packages.

Each `Capability` subclass defined in an ``openmolt_*`` package has a row that names it (its class
in backticks, in the first column) and lists, in its hooks column, every hook the class
overrides: a hook added to a capability without its row fails here.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from openmolt_core.hooks import Capability, _overridden

ROOT = Path(__file__).resolve().parents[2]


def _capability_classes() -> list[tuple[str, str]]:
	"""(module, class) of each class of the packages' sources whose base is `Capability`."""
	found = []
	for path in sorted(ROOT.glob("openmolt_*/src/openmolt_*/**/*.py")):
		text = path.read_text(encoding="utf-8")
		# Only a source that names Capability can define a subclass of it: the others (nine
		# in ten) are not parsed, at each worker's collection.
		if "Capability" not in text:
			continue
		tree = ast.parse(text)
		for node in tree.body:
			if isinstance(node, ast.ClassDef) and any(
				(isinstance(b, ast.Name) and b.id == "Capability")
				or (isinstance(b, ast.Attribute) and b.attr == "Capability")
				for b in node.bases
			):
				parts = path.relative_to(ROOT).with_suffix("").parts
				module = ".".join(p for p in parts[parts.index("src") + 1 :] if p != "__init__")
				found.append((module, node.name))
	return found


def _rows() -> list[list[str]]:
	text = (ROOT / "Architecture.md").read_text(encoding="utf-8")
	section = text.split("## Capabilities", 1)[1].split("\n## ", 1)[0]
	rows = [line for line in section.splitlines() if line.startswith("| ")]
	assert rows[0].startswith("| feature | status | hooks | state | events | step keys |")
	return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]


CLASSES = _capability_classes()


def test_the_classes_are_found() -> None:
	names = {name for _, name in CLASSES}
	assert {"Safety", "TaintedStart", "ApprovalGate", "Observers", "CredentialCheck"} <= names


@pytest.mark.parametrize(("module", "name"), CLASSES)
def test_each_capability_has_a_row_listing_the_hooks_it_overrides(module: str, name: str) -> None:
	cls = getattr(importlib.import_module(module), name)
	assert issubclass(cls, Capability)
	rows = [row for row in _rows() if f"`{name}`" in row[0]]
	assert rows, f"Architecture.md's table of capabilities has no row naming `{name}`"
	[row] = rows
	missing = [h for h in _overridden(cls) if h != "active_hooks" and f"`{h}" not in row[2]]
	assert missing == [], f"the row of `{name}` does not list its hooks {missing}"
	if cls.parks:
		assert f'`parks = "{cls.parks}"`' in row[2]
	if cls.takes:
		assert f"`{cls.takes}`" in row[1] and "`wrap_call`" in row[2]
