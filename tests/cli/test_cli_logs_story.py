"""`openmolt logs RUN` tells a run's whole story: every event kind, every event, read in pages.

It read at most 100,000 events into memory at once and printed them, dropping the rest without
a word: a long run's end (its ``finish``) was missing from ``openmolt logs`` and its ``--json``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt_core.cli import main as openmolt_main
from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS
from openmolt_core.runstore import RunStore

T = "2026-01-01T00:00:00+00:00"


def _seed(path: Path, run_id: str, events: list[tuple[str, dict[str, Any]]]) -> None:
	anyio.run(RunStore(path).runs)  # the file and its tables
	with sqlite3.connect(path) as conn:
		conn.execute(
			"INSERT INTO agent_runs (run_id, agent, model, status, started, updated, ended, input,"
			" steps, usage) VALUES (?, 'Story', 'scripted', 'success', ?, ?, ?, '\"go\"', 1, '{}')",
			(run_id, T, T, T),
		)
		conn.executemany(
			"INSERT INTO run_events (run_id, seq, name, step, time, data) VALUES (?, ?, ?, 1, ?, ?)",
			[(run_id, n, name, T, json.dumps(data)) for n, (name, data) in enumerate(events, 1)],
		)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))
	return path


def test_every_registered_event_kind_is_a_line_of_its_run(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Each stored name of the registry (and a capability's own) shows, with what it says."""
	names = [*sorted(EVENT_NAMES - STREAM_EVENTS), "acme:audited"]
	_seed(store, "every", [(name, {"about": f"{name} said"}) for name in names])
	assert openmolt_main(["logs", "every"]) == 0
	lines = capsys.readouterr().out.split("events:\n")[1].splitlines()
	assert [line.split()[1] for line in lines] == names
	assert all(f"{name} said" in line for name, line in zip(names, lines, strict=True))


def test_a_run_of_more_events_than_a_page_is_shown_whole_in_pages(
	store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""100,003 events: all shown, as text and as JSON, and never more than a page read at once."""
	count = 100_003
	_seed(store, "long", [("tool:call", {"tool": "t", "input": {"i": i}}) for i in range(count)])
	limits: list[int] = []
	events = RunStore.events

	async def paged(self: RunStore, run_id: str, *, after: int = 0, limit: int = 1000) -> Any:
		limits.append(limit)
		return await events(self, run_id, after=after, limit=limit)

	monkeypatch.setattr(RunStore, "events", paged)
	assert openmolt_main(["logs", "long"]) == 0
	lines = capsys.readouterr().out.split("events:\n")[1].splitlines()
	assert len(lines) == count and f'"i": {count - 1}' in lines[-1]
	assert openmolt_main(["logs", "long", "--json"]) == 0
	data = json.loads(capsys.readouterr().out)
	assert data["run_id"] == "long" and len(data["events"]) == count
	assert data["events"][-1]["data"]["input"] == {"i": count - 1}
	assert limits and max(limits) <= 5000


def test_the_json_of_a_run_is_what_it_was(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
	"""A short run's --json: the run's row and its events, as one indented document."""
	_seed(store, "short", [("tool:call", {"tool": "t", "input": {}}), ("finish", {"result": {}})])
	assert openmolt_main(["logs", "short", "--json"]) == 0
	out = capsys.readouterr().out
	data = json.loads(out)
	assert [e["name"] for e in data["events"]] == ["tool:call", "finish"]
	assert out == json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_a_huge_multi_line_error_is_shown_bounded_readable_masked_and_escaped(
	store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A run's error of 5,000 lines (a service's page, an escape sequence, a key): `logs RUN`
	shows its first lines, each bounded, masked and escaped, and says how to see it whole;
	--json holds all of it (masked)."""
	key = "sk-live-InTheError-00042"
	monkeypatch.setenv("SOME_SERVICE_API_KEY", key)
	lines = [f"line {n}: " + "x" * 50 for n in range(5000)]
	error = (
		f"ToolError: the service said\r\n\x1b]0;owned\x07{key}\n" + "\n".join(lines) + "y" * 9000
	)
	_seed(store, "failed", [("finish", {"result": {}})])
	with sqlite3.connect(store) as conn:
		conn.execute(
			"UPDATE agent_runs SET status = 'error', error = ? WHERE run_id = 'failed'", (error,)
		)
	assert openmolt_main(["logs", "failed"]) == 0
	head = capsys.readouterr().out.split("events:\n")[0]
	shown = head[head.index("error: ") :].rstrip("\n").splitlines()
	assert shown[0] == "error: ToolError: the service said"
	assert shown[1] == r"  \u001b]0;owned\u0007[redacted]"
	assert shown[2] == f"  {lines[0]}"
	assert 5 <= len(shown) <= 25 and max(len(line) for line in shown) <= 320, shown
	assert "more lines" in shown[-1] and "--json" in shown[-1]
	assert key not in head and "\x1b" not in head and "\r" not in head
	assert openmolt_main(["logs", "failed", "--json"]) == 0
	whole = json.loads(capsys.readouterr().out)["error"]
	assert whole == error.replace(key, "[redacted]")
