"""`openmolt --help` and every command's help fit the terminal they are read on.

The overview printed lines of up to 125 characters (the ``tools`` line, the usage's ``or:``
lines, the run store's paragraph) and ``openmolt auth --help`` an 89-character usage: on an
80-column terminal each was cut into two ragged lines, the second starting at column 0 among the
command names. Every line now fits the width argparse wraps at (``COLUMNS``), but for a word that
cannot be cut (an address) alone on its line.
"""

from __future__ import annotations

import contextlib

import pytest

from openmolt_core import cli
from openmolt_core.cli._commands import PLUGIN_COMMANDS

HELPS = [
	[],
	*([name, "--help"] for name in sorted({*cli._SUMMARY, *PLUGIN_COMMANDS})),
	["keys", "set", "--help"],
	["auth", "revoke", "--help"],
	["sessions", "prune", "--help"],
]


def _help(args: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capsys) -> str:
	monkeypatch.setenv("COLUMNS", str(columns))
	with contextlib.suppress(SystemExit):
		cli.main([*args] or ["--help"])
	return capsys.readouterr().out


@pytest.mark.parametrize("args", HELPS, ids=lambda a: " ".join(a) or "openmolt")
@pytest.mark.parametrize("columns", [80, 60])
def test_every_help_line_fits_the_terminal(
	args: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
	"""No line is wider than the terminal, unless it is one word that cannot be cut."""
	text = _help(args, columns, monkeypatch, capsys)
	assert text.strip()
	wide = [line for line in text.splitlines() if len(line) > columns and " " in line.strip()]
	assert not wide, wide


def test_the_overview_keeps_every_command_and_its_whole_description(
	monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
	"""Wrapped at 60 columns, each command still starts a line and its description is whole
	(a continuation line is indented under the description, not under the names)."""
	text = _help([], 60, monkeypatch, capsys)
	joined = " ".join(line.strip() for line in text.splitlines())
	for name, description in cli._SUMMARY.items():
		assert any(line.startswith(f"  {name} ") for line in text.splitlines()), name
		assert description in joined, name
	assert "OPENMOLT_RUN_STORE=off" in joined
	assert "  8  status authorization_required" in text
