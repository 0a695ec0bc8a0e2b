"""`openmolt sessions list` and `show`: the conversations, read without writing, safe to print."""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import SQLiteSession
from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._sessions import ago

POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
SECRET = "sk-test-9f8e7d6c5b4a3210"
ODD = "chat:\u202eevil\x9b31m"  # a bidi override and a C1 control: a terminal must not obey them


def turn(n: int, said: str = "") -> list[dict[str, Any]]:
	return [
		{"role": "user", "content": f"q{n}", "run_id": f"r{n}"},
		{"role": "agent", "content": said or f"a{n}", "status": "success", "run_id": f"r{n}"},
	]


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
	"""A sessions file of three conversations: `ada` the latest active, `old` 40 days idle."""
	path = tmp_path / "sessions.db"
	monkeypatch.setenv("OPENMOLT_SESSIONS", str(path))

	async def fill() -> None:
		await SQLiteSession("old", path).add_items(turn(0))
		await SQLiteSession(ODD, path).add_items(turn(1, "\x1b]0;owned\x07 hello"))
		ada = SQLiteSession("ada", path)
		await ada.add_items(
			[
				{
					"role": "user",
					"content": "my key?",
					"run_id": "r2",
					"attachments": [{"mediaType": "application/pdf", "name": "a.pdf"}],
				},
				{
					"role": "agent",
					"content": f"it is {SECRET}",  # stored before the key was a known secret
					"status": "success",
					"run_id": "r2",
					"output": {"key": SECRET},
					"user": "ada",
				},
				{"role": "memory", "content": "likes tea", "run_id": "r2", "user": "ada"},
				{"role": "summary", "content": "asked for a key", "through": 2, "notes": []},
				{"role": "pending", "run_id": "r3", "asked": "later", "new": True},
			]
		)

	anyio.run(fill)
	with sqlite3.connect(path) as conn:
		then = time.time() - 40 * 86400
		conn.execute("UPDATE session_items SET created = ? WHERE session_id = 'old'", (then,))
	conn.close()
	return path


def test_list_shows_the_latest_active_first_with_counts_and_ages(
	sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A table, newest activity first: local time and age, items kept and pruned, the id with
	its control characters escaped; -n keeps the first and says how to see more."""
	assert openmolt_main(["sessions", "list"]) == 0
	out = capsys.readouterr().out
	lines = out.splitlines()
	assert lines[0].split() == ["LAST", "ACTIVE", "ITEMS", "PRUNED", "SESSION"]
	assert [line.split()[-1] for line in lines[1:]] == [
		"ada",
		"chat:\\u202eevil\\u009b31m",
		"old",
	]
	assert "(just now)" in lines[1] and lines[1].split()[-3:-1] == ["5", "0"]
	assert "(5 weeks ago)" in lines[3], lines[3]
	assert "\u202e" not in out and "\x9b" not in out
	assert openmolt_main(["sessions", "list", "-n", "1"]) == 0
	out = capsys.readouterr().out
	assert [line.split()[-1] for line in out.splitlines()[1:2]] == ["ada"]
	assert out.endswith("(the 1 latest; -n 2 shows more)\n")


def test_list_json_is_every_field_and_escapes_what_a_terminal_obeys(
	sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""--json: id, items, pruned, last activity (ISO 8601, UTC); it parses to the true id."""
	assert openmolt_main(["sessions", "list", "--json", "--store", str(sessions)]) == 0
	out = capsys.readouterr().out
	assert "\u202e" not in out and "\x9b" not in out
	rows = json.loads(out)
	assert [r["sessionId"] for r in rows] == ["ada", ODD, "old"]
	assert (rows[0]["items"], rows[0]["pruned"]) == (5, 0)
	assert rows[2]["lastActive"].endswith("+00:00")


def test_show_prints_a_masked_printable_transcript(
	sessions: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Each item under a heading (who, run, status, user), its words indented; a secret known
	now is masked though it was stored before; escapes are printed, not obeyed."""
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", SECRET)
	assert openmolt_main(["sessions", "show", "ada"]) == 0
	out = capsys.readouterr().out
	assert out.startswith("session ada: 5 items, last active ")
	assert SECRET not in out and "it is [" in out
	for said in (
		"#1 user (run r2):\n    my key?\n    [attached: a.pdf, application/pdf]\n",
		"#2 agent (run r2, success, for ada):\n",
		"    output:\n        {\n",
		"#3 notes (run r2, for ada):\n    likes tea\n",
		"#4 summary of items 1-2:\n    asked for a key\n",
		"#5 a durable run's turn, under way (run r3)\n",
	):
		assert said in out, out
	assert openmolt_main(["sessions", "show", ODD]) == 0
	out = capsys.readouterr().out
	assert out.startswith("session chat:\\u202eevil\\u009b31m: 2 items")
	assert "\\u001b]0;owned\\u0007 hello" in out and "\x1b" not in out


def test_show_json_is_the_items_as_stored_masked(
	sessions: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""--json: the session's items as stored, with its counts; masked, and still JSON."""
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", SECRET)
	assert openmolt_main(["sessions", "show", ODD, "--json"]) == 0
	out = capsys.readouterr().out
	assert "\x1b" not in out and "\u202e" not in out
	found = json.loads(out)
	assert (found["sessionId"], found["pruned"]) == (ODD, 0)
	assert found["items"][1]["content"] == "\x1b]0;owned\x07 hello"
	assert openmolt_main(["sessions", "show", "ada", "--json"]) == 0
	out = capsys.readouterr().out
	assert SECRET not in out
	assert [i["role"] for i in json.loads(out)["items"]][:2] == ["user", "agent"]


def test_show_of_an_unknown_id_suggests_the_close_ones(
	sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A mistyped id: exit 2, one line with the ids it may mean, and where they are listed."""
	assert openmolt_main(["sessions", "show", "adx"]) == 2
	err = capsys.readouterr().err
	assert err.startswith("openmolt: no session 'adx' in "), err
	assert "did you mean 'ada'?" in err and "`openmolt sessions list` lists them" in err
	assert "\u202e" not in err and "\x9b" not in err
	assert len(err.strip().splitlines()) == 1


def test_list_and_show_of_a_missing_store_make_nothing(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""No sessions file yet: list says so on stderr (stdout empty, [] with --json), show says
	there are none; neither makes the file."""
	missing = str(tmp_path / "none.db")
	assert openmolt_main(["sessions", "list", "--store", missing]) == 0
	said = capsys.readouterr()
	assert said.out == "" and f"openmolt: no sessions in {missing}" in said.err
	assert openmolt_main(["sessions", "list", "--store", missing, "--json"]) == 0
	assert capsys.readouterr().out == "[]\n"
	assert openmolt_main(["sessions", "show", "ada", "--store", missing]) == 2
	assert f"no session 'ada': no sessions in {missing}" in capsys.readouterr().err
	assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
	"args",
	[["list"], ["show", "ada"], ["prune", "--dry-run"]],
	ids=["list", "show", "prune-dry-run"],
)
def test_a_folder_is_no_empty_store(
	tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
	"""A folder given as the store is refused in one line (a dry run said "0 sessions")."""
	assert openmolt_main(["sessions", *args, "--store", str(tmp_path)]) == 2
	err = capsys.readouterr().err
	assert err.startswith(f"openmolt sessions {args[0]}: --store: cannot open the store "), err
	assert "it is a folder, not a file" in err


def test_an_age_is_said_as_people_say_it() -> None:
	"""Seconds to words: just now, minutes, hours, days, then weeks, months, years from two on."""
	now = 1_000_000_000.0
	said = {
		seconds: ago(now - seconds, now)
		for seconds in (
			-30,
			59,
			60,
			7200,
			86400 * 3,
			86400 * 13,
			86400 * 15,
			86400 * 75,
			86400 * 800,
		)
	}
	assert list(said.values()) == [
		"just now",
		"just now",
		"1 minute ago",
		"2 hours ago",
		"3 days ago",
		"13 days ago",
		"2 weeks ago",
		"2 months ago",
		"2 years ago",
	]


@pytest.fixture
def own_database() -> Iterator[str]:
	"""A PostgreSQL database of this test's own (the listing reads every session in it)."""
	if not POSTGRES_URL:
		pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
	psycopg = pytest.importorskip("psycopg")
	name = f"om_cli_list_{uuid.uuid4().hex[:12]}"
	with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
		conn.execute(f'CREATE DATABASE "{name}"')
	try:
		yield f"{POSTGRES_URL.rpartition('/')[0]}/{name}"
	finally:
		with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
			conn.execute(
				"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
			)
			conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def test_list_and_show_read_a_postgresql_store(
	own_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""--store postgresql://...: the same listing and transcript, from the database."""
	from openmolt_core.sessions import SQLAlchemySession

	async def fill() -> None:
		await SQLAlchemySession("bob", own_database).add_items(turn(0))
		await SQLAlchemySession("ada", own_database).add_items(turn(1) + turn(2))

	anyio.run(fill)
	assert openmolt_main(["sessions", "list", "--store", own_database, "--json"]) == 0
	rows = json.loads(capsys.readouterr().out)
	assert [(r["sessionId"], r["items"], r["pruned"]) for r in rows] == [
		("ada", 4, 0),
		("bob", 2, 0),
	]
	assert openmolt_main(["sessions", "show", "ada", "--store", own_database]) == 0
	out = capsys.readouterr().out
	assert "#3 user (run r2):\n    q2\n" in out and "#4 agent (run r2, success):\n    a2\n" in out
	assert openmolt_main(["sessions", "show", "bbo", "--store", own_database]) == 2
	assert "did you mean 'bob'?" in capsys.readouterr().err
