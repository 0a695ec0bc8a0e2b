"""OPENMOLT_RUN_STORE naming something that cannot hold the run store: said once, never claimed.

A run store that fails is an observer that fails, which the run skips and logs where the command
shows nothing: the run went unrecorded while its summary said "recorded in ...", and `openmolt
logs` then crashed with an unexpected DatabaseError (exit 70).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _targets(tmp_path: Path) -> dict[str, Path]:
	other = tmp_path / "notes.json"
	other.write_text('{"mine": true}\n')
	folder = tmp_path / "folder"
	folder.mkdir()
	blocker = tmp_path / "blocker"
	blocker.write_text("a file where a folder should be\n")
	return {"another file": other, "a folder": folder, "no folder": blocker / "runs.db"}


@pytest.mark.parametrize("kind", ["another file", "a folder", "no folder"])
def test_a_run_says_its_store_cannot_record_and_claims_no_record(
	tmp_path: Path, server, cli, kind: str
) -> None:
	"""The run goes on, one warning names the path and the fix, and the summary claims no record."""
	target = _targets(tmp_path)[kind]
	agent = cli.agent_file(tmp_path, server)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_RUN_STORE": str(target)})
	done = cli.openmolt(str(agent), cwd=tmp_path, env=env, tty=True)
	assert done.returncode == 0, done.stderr
	warned = [line for line in done.stderr.splitlines() if "runs are not recorded" in line]
	assert len(warned) == 1, done.stderr
	assert warned[0].startswith("openmolt: warning: runs are not recorded: ")
	assert "set OPENMOLT_RUN_STORE to another file, or to off" in warned[0]
	assert "Traceback" not in done.stderr
	assert "recorded in" not in done.stdout
	assert "Hello, Ada!" in done.stdout
	if kind == "another file":
		assert json.loads(target.read_text()) == {"mine": True}  # left as it was


@pytest.mark.parametrize("kind", ["another file", "a folder"])
def test_logs_names_a_store_that_is_no_run_store(tmp_path: Path, cli, kind: str) -> None:
	"""`openmolt logs` says in one line that the path holds no run store: exit 2, not 70."""
	target = _targets(tmp_path)[kind]
	env = cli.clean_env(OPENMOLT_RUN_STORE=str(target))
	done = cli.openmolt("logs", cwd=tmp_path, env=env)
	assert done.returncode == 2, done.stderr
	assert done.stderr == f"openmolt: {target} cannot hold a run store: " + (
		"file is not a database\n" if kind == "another file" else "it is a folder\n"
	)


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["help", "run"]])
def test_the_help_says_runs_are_recorded_and_how_to_stop_it(
	tmp_path: Path, cli, args: list[str]
) -> None:
	"""`openmolt --help` and `openmolt run --help` both say where runs go and how to turn it off."""
	done = cli.openmolt(*args, cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 0, done.stderr
	text = " ".join(done.stdout.split())
	assert "~/.local/state/openmolt/runs.db, readable by you only" in text
	assert "OPENMOLT_RUN_STORE=off (or a path) turns recording off" in text
	assert "`openmolt logs` lists them" in text


def test_a_url_in_the_run_store_variable_is_said_once_and_makes_no_folder(
	tmp_path: Path, server, cli
) -> None:
	"""``OPENMOLT_RUN_STORE=postgresql://...`` is no path (it made a ``postgresql:`` folder and
	`openmolt logs` read it as an empty store): a run goes on unrecorded, saying so once, and
	`openmolt logs` refuses in one line; the URL's password is never printed."""
	url = "postgresql://ada:pw-9f3a2c@127.0.0.1:5432/runs"
	agent = cli.agent_file(tmp_path, server)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_RUN_STORE": url})
	done = cli.openmolt(str(agent), cwd=tmp_path, env=env, tty=True)
	assert done.returncode == 0, done.stderr
	warned = [line for line in done.stderr.splitlines() if "runs are not recorded" in line]
	assert len(warned) == 1 and "not a URL (postgresql://...)" in warned[0], done.stderr
	assert "Hello, Ada!" in done.stdout and "recorded in" not in done.stdout
	logs = cli.openmolt("logs", cwd=tmp_path, env=cli.clean_env(OPENMOLT_RUN_STORE=url))
	assert logs.returncode == 2
	assert logs.stderr == (
		"openmolt: OPENMOLT_RUN_STORE: give a file's path (or off), not a URL (postgresql://...): "
		"this store is a local file, runs.db by default\n"
	)
	assert "pw-9f3a2c" not in done.stderr + logs.stderr
	assert not any(p.name.startswith("postgresql") for p in tmp_path.rglob("*"))
