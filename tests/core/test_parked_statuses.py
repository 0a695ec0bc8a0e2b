"""The statuses of a parked run are listed once, in the core; every surface reads that list.

A parked run (it waits for an answer, a decision, an account) is told from an ended one in the
run store, the servers (A2A, AG-UI), the hooks' checks, the viewer and the CLI. Written out at
each of them, the list drifts the day a status is added: these tests fail if any source spells
two parked statuses together again, and check that each surface agrees with the core's list.
"""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path
from typing import get_args, get_type_hints

import pytest

from openmolt_core.result import PARKED_STATUSES, ParkedStatus, RunStatus

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(ROOT.glob("openmolt_*/src/**/*.py"))
SCRIPTS = sorted(ROOT.glob("openmolt_*/src/**/*.js"))
HOME = ROOT / "openmolt_core/src/openmolt_core/result.py"


def _strings(node: ast.AST) -> list[str]:
	return [
		e.value for e in ast.walk(node) if isinstance(e, ast.Constant) and isinstance(e.value, str)
	]


def _lists_in(path: Path) -> list[str]:
	"""Where a source spells out two or more parked statuses in one tuple, list, set or Literal."""
	found = []
	for node in ast.walk(ast.parse(path.read_text("utf-8"))):
		if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Subscript):
			named = PARKED_STATUSES.intersection(_strings(node))
			if len(named) >= 2:
				found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
	return sorted(set(found))


def test_the_sources_scanned_are_the_workspace() -> None:
	assert len(SOURCES) > 100 and HOME in SOURCES
	assert any(p.name == "app.js" for p in SCRIPTS)


def test_no_python_source_but_the_core_s_lists_the_parked_statuses() -> None:
	"""A status added to `ParkedStatus` reaches every site: none keeps a copy of the list."""
	copies = [where for path in SOURCES if path != HOME for where in _lists_in(path)]
	assert copies == [], f"read openmolt_core.result.PARKED_STATUSES instead: {copies}"


def test_the_scan_finds_a_copy() -> None:
	"""The scan above would see a copy written the ways the old sites wrote it."""
	for text in (
		'_PARKED = ("human_input_required", "approval_required", "authorization_required")',
		'x = status in ["approval_required", "authorization_required"]',
		'status: Literal["approval_required", "human_input_required"] = "approval_required"',
	):
		node = ast.parse(text)
		assert any(
			len(PARKED_STATUSES.intersection(_strings(n))) >= 2
			for n in ast.walk(node)
			if isinstance(n, ast.Tuple | ast.List | ast.Set | ast.Subscript)
		), text


def test_no_script_lists_the_parked_statuses() -> None:
	"""The viewer's script reads the list from its page, which the server writes."""
	pattern = "|".join(sorted(PARKED_STATUSES))
	for path in SCRIPTS:
		for literal in re.findall(r"\[[^\[\]]*\]", path.read_text("utf-8")):
			assert len(set(re.findall(pattern, literal))) < 2, f"{path.name}: {literal}"


def test_the_core_s_lists_agree() -> None:
	from openmolt_core import hooks

	assert set(get_args(ParkedStatus)) == PARKED_STATUSES
	assert PARKED_STATUSES < set(get_args(RunStatus))
	assert set(get_args(get_type_hints(hooks.Park)["status"])) == PARKED_STATUSES
	assert set(hooks._PARKS) == PARKED_STATUSES
	assert set(hooks._STOPS) == set(get_args(RunStatus)) - PARKED_STATUSES


def test_every_status_has_an_exit_code_and_parked_ones_their_own() -> None:
	from openmolt_core.cli._exit import _BY_STATUS, ExitCode

	assert set(_BY_STATUS) == set(get_args(RunStatus))
	codes = [_BY_STATUS[s] for s in PARKED_STATUSES]
	assert len(set(codes)) == len(codes) and ExitCode.FAILURE not in codes


def test_the_servers_and_the_viewer_read_the_core_s_list() -> None:
	from openmolt_serve import _agui_events, a2a
	from openmolt_ui import _waiting

	assert _agui_events.PARKED is PARKED_STATUSES
	assert a2a.PARKED_STATUSES is PARKED_STATUSES
	assert _waiting.PARKED is PARKED_STATUSES


def test_the_viewer_page_carries_the_core_s_list() -> None:
	from openmolt_ui.app import _page

	page = _page("t0ken")
	found = re.search(r'<meta name="openmolt-parked" content="([^"]*)">', page)
	assert found is not None
	assert set(found.group(1).split()) == PARKED_STATUSES
	script = (ROOT / "openmolt_ui/src/openmolt_ui/static/app.js").read_text("utf-8")
	assert 'meta[name="openmolt-parked"]' in script


@pytest.mark.anyio
@pytest.mark.parametrize("status", sorted(PARKED_STATUSES))
async def test_the_run_store_cancels_a_run_parked_on_each_status(
	tmp_path: Path, status: str
) -> None:
	from openmolt_core.runstore import RunStore

	store = RunStore(tmp_path / "runs.db")
	store._connect().close()  # the schema
	with sqlite3.connect(tmp_path / "runs.db") as conn:
		for run_id, value in (("parked", status), ("done", "success")):
			conn.execute(
				"INSERT INTO agent_runs (run_id, agent, model, status, started, updated)"
				" VALUES (?, 'a', 'm', ?, 't', 't')",
				(run_id, value),
			)
	assert await store.cancel_parked("parked", "gave up") is True
	assert await store.cancel_parked("done", "gave up") is False
	parked = await store.run("parked")
	assert parked is not None and parked.status == "cancelled"
