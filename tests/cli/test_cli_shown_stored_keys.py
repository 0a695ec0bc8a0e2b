"""What ``openmolt logs`` and ``openmolt sessions show`` print is masked with the keys the command
knows, wherever they are kept: the environment, and also the key store (``openmolt keys set``)
and the ``.env`` file, which the command reads as it reads the environment. A record written by a
process that did not know a key yet (a key stored later, another program's run) holds it as it
was; only the environment's keys were masked again."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from openmolt import SQLiteSession
from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._keystore import _KEPT
from openmolt_core.runstore import RunStore
from tests._leaks import leaks

KEY = "sk-stored-0123456789abcdefQ"
T = "2026-01-01T00:00:00+00:00"


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
	"""A run and a session that hold the key, as a process that did not know it stored them."""
	runs, sessions = tmp_path / "runs.db", tmp_path / "sessions.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(runs))
	monkeypatch.setenv("OPENMOLT_SESSIONS", str(sessions))
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "keys.json"))
	monkeypatch.delenv("OPENMOLT_OPENAI_API_KEY", raising=False)
	monkeypatch.chdir(tmp_path)
	anyio.run(RunStore(runs).runs)
	with sqlite3.connect(runs) as conn:
		conn.execute(
			"INSERT INTO agent_runs (run_id, agent, model, status, started, updated, ended, input,"
			" output, steps, usage) VALUES ('run1', 'Keeper', 'scripted', 'success', ?, ?, ?, ?, ?,"
			" 1, '{}')",
			(T, T, T, json.dumps(f"my key is {KEY}"), json.dumps({"said": KEY})),
		)
		conn.execute(
			"INSERT INTO run_events (run_id, seq, name, step, time, data) VALUES ('run1', 1,"
			" 'tool_result', 1, ?, ?)",
			(T, json.dumps({"tool": "local.echo", "result": KEY})),
		)
	conn.close()
	anyio.run(SQLiteSession("ada", sessions).add_items, [{"role": "user", "content": KEY}])
	yield tmp_path
	_KEPT.clear()  # the keys made known die with their owner: no other test sees them masked


def _shown(capsys: pytest.CaptureFixture[str]) -> str:
	for args in (["logs"], ["logs", "run1"], ["logs", "--json"], ["sessions", "show", "ada"]):
		assert openmolt_main(args) == 0, args
	assert openmolt_main(["sessions", "show", "ada", "--json"]) == 0
	out = capsys.readouterr()
	return out.out + out.err


def test_the_records_show_the_key_while_no_source_holds_it(
	recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""The check below can fail: without a source the key is shown, as it was stored."""
	assert KEY in _shown(capsys)


def test_a_key_in_the_key_store_is_masked_in_what_logs_and_sessions_print(
	recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	(recorded / "keys.json").write_text(json.dumps({"OPENMOLT_OPENAI_API_KEY": KEY}))
	(recorded / "keys.json").chmod(0o600)
	out = _shown(capsys)
	assert "Keeper" in out and not leaks(out, KEY), out


def test_a_key_in_the_env_file_is_masked_in_what_logs_and_sessions_print(
	recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	(recorded / ".env").write_text(f"OPENMOLT_OPENAI_API_KEY={KEY}\n")
	out = _shown(capsys)
	assert "Keeper" in out and not leaks(out, KEY), out
