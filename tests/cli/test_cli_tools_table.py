"""`openmolt tools ID`: a table that fits the terminal, one row per tool."""

from __future__ import annotations

import io

import pytest

from openmolt import OpenMolt
from openmolt_core.cli._info import list_tools


class _Terminal(io.StringIO):
	def isatty(self) -> bool:
		return True


def _table(text: str) -> list[str]:
	lines = text.split("\ntools (")[1].split("\n\n")[0].splitlines()
	return lines[1:]  # the header row and one row per tool


@pytest.mark.parametrize("columns", [100, 140])
def test_on_a_terminal_each_tool_is_one_row_as_wide_as_the_terminal(
	columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Slack's 26 tools on a 100-column terminal: no row wraps, each description is cut to fit."""
	monkeypatch.setenv("COLUMNS", str(columns))
	out = _Terminal()
	list_tools(OpenMolt(), "slack", out, as_json=False)
	rows = _table(out.getvalue())
	assert len(rows) == 27
	assert max(len(r) for r in rows) <= columns, max(rows, key=len)


def test_off_a_terminal_the_table_keeps_its_width() -> None:
	"""Piped, the descriptions keep 60 characters whatever the terminal."""
	out = io.StringIO()
	list_tools(OpenMolt(), "slack", out, as_json=False)
	rows = _table(out.getvalue())
	assert any(r.endswith("…") and len(r.split("  ")[-1].strip()) == 60 for r in rows)


def test_a_narrow_terminal_still_gets_a_useful_description(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Too narrow for the columns: the description keeps 24 characters rather than none."""
	monkeypatch.setenv("COLUMNS", "60")
	out = _Terminal()
	list_tools(OpenMolt(), "slack", out, as_json=False)
	cut = [r.split("  ")[-1].strip() for r in _table(out.getvalue()) if r.endswith("…")]
	assert cut and all(20 <= len(d) <= 24 for d in cut), cut
