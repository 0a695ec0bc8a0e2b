"""`openmolt sessions prune`: the turns summaries cover and the idle sessions go (or are counted)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import SQLiteSession
from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._sessions import _shown


def summarised(turns: int) -> list[dict[str, Any]]:
	items: list[dict[str, Any]] = []
	for n in range(turns):
		items.append({"role": "user", "content": f"q{n}", "run_id": f"r{n}"})
		items.append({"role": "agent", "content": f"a{n}", "status": "success", "run_id": f"r{n}"})
	items.append(
		{"role": "summary", "content": "s", "through": len(items) - 4, "notes": [{"content": "n"}]}
	)
	return items


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
	path = tmp_path / "sessions.db"
	monkeypatch.setenv("OPENMOLT_SESSIONS", str(path))

	async def fill() -> None:
		for name in ("old", "new"):
			await SQLiteSession(name, path).add_items(summarised(10))

	anyio.run(fill)
	with sqlite3.connect(path) as conn:
		then = time.time() - 40 * 86400
		conn.execute("UPDATE session_items SET created = ? WHERE session_id = 'old'", (then,))
	return path


def held(path: Path) -> dict[str, int]:
	with sqlite3.connect(path) as conn:
		rows = conn.execute("SELECT session_id, COUNT(*) FROM session_items GROUP BY session_id")
		return dict(rows.fetchall())


def test_a_dry_run_counts_and_removes_nothing(
	sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""--dry-run says what would go (covered turns, idle sessions) and leaves the file as it was."""
	assert openmolt_main(["sessions", "prune", "--idle", "30d", "--dry-run"]) == 0
	out = capsys.readouterr().out
	assert "would remove 16 items that summaries cover, from 2 sessions" in out
	assert "would delete 1 session idle longer than 30 days\n  old\n" in out
	assert held(sessions) == {"old": 21, "new": 21}


def test_prune_removes_covered_turns_and_idle_sessions(
	sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Without --idle only covered turns go; with it the idle session goes too (--json)."""
	assert openmolt_main(["sessions", "prune"]) == 0
	assert "removed 32 items" in capsys.readouterr().out
	assert held(sessions) == {"old": 5, "new": 5}
	assert openmolt_main(["sessions", "prune", "--idle", "30", "--json"]) == 0
	report = json.loads(capsys.readouterr().out)
	assert report == {"sessions": 2, "items": 0, "deleted": ["old"], "busy": [], "dryRun": False}
	assert held(sessions) == {"new": 5}


def test_a_negative_idle_is_refused(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
	"""--idle -1 is a usage error naming the option."""
	with pytest.raises(SystemExit) as stop:
		openmolt_main(["sessions", "prune", "--idle", "-1"])
	assert stop.value.code == 2
	assert "--idle" in capsys.readouterr().err


@pytest.mark.parametrize(
	("store", "said"),
	[
		("folder", "folder: it is a folder, not a file"),
		("text.db", "file is not a database"),
		(
			"postgresql://ada:hunter2secret@127.0.0.1:1/x",
			"cannot open the store postgresql://ada@127.0.0.1:1/x: ",
		),
		("mysql://db.example/x", "give a SQLite file or a postgresql:// URL"),
	],
)
@pytest.mark.parametrize("action", [["prune"], ["list"], ["show", "ada"]], ids=lambda a: a[0])
def test_a_store_that_cannot_be_read_is_a_usage_error_naming_it(
	tmp_path: Path, store: str, said: str, action: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
	"""A folder, a file that is no database, an unreachable or unknown database: exit 2, one line
	naming the store (its password masked), not an 'unexpected error' (70) nor a file 'mysql:'."""
	(tmp_path / "folder").mkdir()
	(tmp_path / "text.db").write_text("hello")
	where = store if "://" in store else str(tmp_path / store)
	assert openmolt_main(["sessions", *action, "--store", where]) == 2
	err = capsys.readouterr().err
	assert err.startswith(f"openmolt sessions {action[0]}: --store: "), err
	assert said in err and "hunter2" not in err and "unexpected" not in err, err
	assert len(err.strip().splitlines()) == 1 and err.count(_shown(where)) == 1, err
	assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "text.db"]
