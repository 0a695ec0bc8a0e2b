"""`openmolt run FILE --session ID` and `-c`: a conversation that goes on across commands."""

import json
import os
import stat
from pathlib import Path

import pytest


def first_turn(request: dict) -> dict:
	content = request["body"]["input"][0]["content"]
	text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
	return json.loads(text)


def env_with(cli, sessions: Path) -> dict[str, str]:
	return cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_SESSIONS": str(sessions)})


def test_session_continues_across_commands(tmp_path, server, cli) -> None:
	"""The second command's model sees the first command's turn; another id sees nothing."""
	path = cli.agent_file(tmp_path, server)
	sessions = tmp_path / "state" / "sessions.db"
	env = env_with(cli, sessions)
	one = cli.openmolt(str(path), "--input", "Ada", "--session", "me", cwd=tmp_path, env=env)
	assert one.returncode == 0, one.stderr
	assert "session: me" in one.stderr
	two = cli.openmolt(str(path), "--input", "Bob", "--session", "me", cwd=tmp_path, env=env)
	assert two.returncode == 0, two.stderr
	earlier = first_turn(server.requests[1])["earlier"]
	assert earlier[0] == {"role": "user", "content": "Ada"}
	assert earlier[1]["content"] == {"greeting": "Hello, Ada!"}
	other = cli.openmolt(str(path), "--input", "Cy", "--session", "you", cwd=tmp_path, env=env)
	assert other.returncode == 0, other.stderr
	assert "earlier" not in first_turn(server.requests[2])
	assert stat.S_IMODE(os.stat(sessions).st_mode) == 0o600


def test_c_continues_the_agents_last_conversation(tmp_path, server, cli) -> None:
	"""-c picks the last session of this agent, or starts one (and says its id)."""
	path = cli.agent_file(tmp_path, server)
	env = env_with(cli, tmp_path / "sessions.db")
	one = cli.openmolt(str(path), "--input", "Ada", "-c", cwd=tmp_path, env=env)
	assert one.returncode == 0, one.stderr
	line = next(x for x in one.stderr.splitlines() if "session: " in x)
	line = line[line.index("session: ") :].strip()
	assert len(line) > len("session: ")
	two = cli.openmolt(str(path), "--input", "Bob", "-c", cwd=tmp_path, env=env)
	assert two.returncode == 0, two.stderr
	assert line in two.stderr
	assert first_turn(server.requests[1])["earlier"][0]["content"] == "Ada"
	# --session moves the last one; -c follows it
	cli.openmolt(str(path), "--input", "Cy", "--session", "other", cwd=tmp_path, env=env)
	cli.openmolt(str(path), "--input", "Di", "-c", cwd=tmp_path, env=env)
	assert first_turn(server.requests[3])["earlier"][0]["content"] == "Cy"


def test_session_and_c_together_are_refused(tmp_path, server, cli) -> None:
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), "--session", "a", "-c", cwd=tmp_path)
	assert done.returncode == 2
	assert "not both" in done.stderr


def test_a_missing_key_is_said_first_with_session_too(tmp_path, server, cli) -> None:
	"""--session and -c do not skip the early key check: nothing is stored, nothing runs."""
	path = tmp_path / "agent.json"
	path.write_text(json.dumps({"name": "G", "model": "openai:gpt-5-mini", "instructions": "Hi."}))
	sessions = tmp_path / "sessions.db"
	env = cli.clean_env(OPENMOLT_SESSIONS=str(sessions), OPENMOLT_KEYS_FILE=str(tmp_path / "k"))
	for flags in (["--session", "me"], ["-c"]):
		done = cli.openmolt(str(path), *flags, cwd=tmp_path, env=env)
		assert done.returncode == 2, done.stderr
		assert "no API key for" in done.stderr
	assert not sessions.exists() and server.requests == []


def test_an_empty_session_id_is_refused(tmp_path, server, cli) -> None:
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), "--session", "  ", cwd=tmp_path)
	assert done.returncode == 2 and "--session: give a conversation id" in done.stderr


def test_the_keyless_path_with_a_session_imports_no_engine(tmp_path, cli) -> None:
	"""The early key check still comes first: the engine is never imported."""
	import subprocess
	import sys

	path = tmp_path / "agent.json"
	path.write_text(json.dumps({"name": "G", "model": "openai:gpt-5-mini", "instructions": "Hi."}))
	code = (
		"import sys\n"
		"from openmolt_core.cli import main\n"
		f"code = main([{str(path)!r}, '--session', 'me'])\n"
		"print(code, 'openmolt_core.agent' in sys.modules, 'openmolt_core.sessions' in sys.modules)\n"
	)
	env = cli.clean_env(OPENMOLT_KEYS_FILE=str(tmp_path / "keys.json"))
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	assert done.stdout.strip() == "2 False False", done.stderr


def test_a_sessions_file_that_cannot_hold_them_is_a_clear_error(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""OPENMOLT_SESSIONS naming a folder or another program's file was "unexpected error:
	DatabaseError" (or FileRefused); --session and -c now say the path and the variable."""
	import anyio

	from openmolt_core.cli._run import cli_session
	from openmolt_core.errors import ConfigurationError

	other = tmp_path / "agent.json"
	other.write_text('{"name": "A"}')
	for path, why in ((other, "file is not a database"), (tmp_path, "it is a folder")):
		monkeypatch.setenv("OPENMOLT_SESSIONS", str(path))
		for session_id in ("ada", None):  # --session ada, -c
			with pytest.raises(ConfigurationError) as raised:
				anyio.run(cli_session, "A", session_id)
			said = str(raised.value)
			assert said.startswith(f"{path} cannot hold the conversations (--session, -c): {why}")
			assert said.endswith("set OPENMOLT_SESSIONS to a file in a folder you can write")
	assert other.read_text() == '{"name": "A"}'
