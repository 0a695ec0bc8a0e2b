"""Helpers for the ecosystem tests: real servers only (in-process SDK servers, stdio, Streamable HTTP).

The published npm servers are installed into ``.cache/node/`` by ``uv run nox -s tests``; by hand:
``npm install --prefix .cache/node --no-save @modelcontextprotocol/server-everything@2026.8.18
@stoplight/prism-cli@5.16.0`` from the repository root (the list lives in noxfile.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = Path(os.environ.get("OPENMOLT_NODE_DIR", ROOT / ".cache" / "node"))


def node_bin(name: str) -> str:
	"""The path of an npm tool's executable, or a test failure naming the command to run."""
	path = NODE / "node_modules" / ".bin" / name
	if not path.exists():
		pytest.fail(
			f"{name} is not installed in {NODE}; run `uv run nox -s tests` (which installs the npm "
			"test tools) or the npm command in tests/ecosystem/_ecosystem.py",
			pytrace=False,
		)
	return str(path)


def children(marker: str) -> list[int]:
	"""Pids of live processes whose parent is this process and whose command line has marker."""
	mine = os.getpid()
	found = []
	for entry in Path("/proc").iterdir():
		if not entry.name.isdigit():
			continue
		try:
			stat = (entry / "stat").read_text()
			cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
		except OSError:
			continue
		fields = stat.rsplit(")", 1)[1].split()
		state, ppid = fields[0], int(fields[1])
		if ppid == mine and marker in cmdline and state != "Z":
			found.append(int(entry.name))
	return found


def zombies() -> list[int]:
	"""Pids of this process's children that exited but were never reaped."""
	mine = os.getpid()
	found = []
	for entry in Path("/proc").iterdir():
		if entry.name.isdigit():
			try:
				fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
			except OSError:
				continue
			if fields[0] == "Z" and int(fields[1]) == mine:
				found.append(int(entry.name))
	return found
