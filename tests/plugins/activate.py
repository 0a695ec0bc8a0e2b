"""Make the test-only plugin distribution `openmolt-weather` visible to the tests, and only to them.

The distribution (tests/plugins/openmolt_weather) is never installed: a user's `openmolt plugins`
must not list its `weather`, `echo` and `fakeai` entry points. Instead the test session writes its
``.dist-info`` (METADATA and entry_points.txt, read from its pyproject.toml, the one source of its
entry points) into a temporary directory and puts that directory and the package's ``src/`` on
``sys.path`` and ``PYTHONPATH``, so `importlib.metadata` finds the entry points in the test process
and in every ``openmolt`` subprocess the tests start.
"""

from __future__ import annotations

import os
import sys
import tempfile
import tomllib
from pathlib import Path

__all__ = ["PLUGIN", "activate", "deactivate"]

PLUGIN = Path(__file__).parent / "openmolt_weather"


def _dist_info(root: Path) -> Path:
	project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
	name, version = project["name"], project["version"]
	info = root / f"{name.replace('-', '_')}-{version}.dist-info"
	info.mkdir(parents=True)
	(info / "METADATA").write_text(
		f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
		f"Summary: {project.get('description', '')}\n",
		encoding="utf-8",
	)
	lines: list[str] = []
	for group, entries in project.get("entry-points", {}).items():
		lines.append(f"[{group}]")
		lines += [f"{key} = {value}" for key, value in entries.items()]
		lines.append("")
	(info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
	return info


def activate() -> Path:
	"""Write the dist-info and put it and the package on ``sys.path`` and ``PYTHONPATH``.

	Returns:
		The temporary directory, for `deactivate`.
	"""
	root = Path(tempfile.mkdtemp(prefix="openmolt-test-plugins-"))
	_dist_info(root)
	paths = [str(root), str(PLUGIN / "src")]
	sys.path[:0] = paths
	os.environ["PYTHONPATH"] = os.pathsep.join(
		[*paths, *filter(None, [os.environ.get("PYTHONPATH")])]
	)
	return root


def deactivate(root: Path) -> None:
	"""Remove what `activate` added."""
	import shutil

	shutil.rmtree(root, ignore_errors=True)
