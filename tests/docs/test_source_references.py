"""A name a docstring, a comment or a page gives in full
(``openmolt_core.capabilities.ObservedOutside``) is one that exists: a class moved or renamed
leaves no stale name behind in the sources or the docs."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_REF = re.compile(r"`(openmolt_[a-z]+(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def _resolves(ref: str) -> bool:
	"""Whether the dotted name is a module, or an attribute of the longest module it starts with."""
	parts = ref.split(".")
	for i in range(len(parts), 0, -1):
		try:
			obj: object = importlib.import_module(".".join(parts[:i]))
		except ModuleNotFoundError:
			continue
		for name in parts[i:]:
			if not hasattr(obj, name):
				return False
			obj = getattr(obj, name)
		return True
	return False


def test_every_full_name_in_the_sources_exists() -> None:
	stale = sorted(
		f"{path.relative_to(ROOT)}: {ref}"
		for path in [
			*ROOT.glob("openmolt_*/src/**/*.py"),
			*ROOT.glob("docs/**/*.md"),
			ROOT / "Architecture.md",
			ROOT / "README.md",
		]
		for ref in set(_REF.findall(path.read_text("utf-8")))
		if not _resolves(ref)
	)
	assert not stale, "names that no longer exist:\n" + "\n".join(stale)
