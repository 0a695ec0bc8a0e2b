"""An option given an empty or blank value is told what to give, before anything starts.

`--user ""` was refused by the engine after "starting", in Python's words ("or None for the
operator"); `-m ""` said "<command line>: String should have at least 1 character";
`--integration ""` asked to register an integration named ''; `--env-file ""` named the file ".".
"""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
	("args", "said"),
	[
		(["--user", ""], "openmolt: --user: give the id of the end user the run acts for"),
		(["--user", "  "], "openmolt: --user: give the id of the end user the run acts for"),
		(["--session", ""], "openmolt: --session: give a conversation id (a name of your choice)"),
		(["--env-file", ""], "openmolt: --env-file: give the path of a .env file"),
		(["--env-file", "."], "openmolt: --env-file .: a folder; give the .env file in it"),
	],
)
def test_an_agent_file_run_refuses_empty_values(tmp_path, server, cli, args, said) -> None:
	"""One line naming the option and what it takes; no model request, no "starting"."""
	agent = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(agent), *args, cwd=tmp_path)
	assert done.returncode == 2, done.stderr
	assert done.stderr.startswith(said), done.stderr
	assert len(done.stderr.splitlines()) == 1
	assert server.requests == []


@pytest.mark.parametrize(
	("args", "said"),
	[
		(["-m", "", "hi"], "openmolt: -m: give a model, e.g. -m openai:gpt-5-mini"),
		(["--model=", "hi"], "openmolt: -m: give a model, e.g. -m openai:gpt-5-mini"),
		(
			["-m", "openai:greet", "--integration", "", "hi"],
			"openmolt: --integration: give an integration id, e.g. --integration github",
		),
		(
			["-m", "openai:greet", "--tool", " ", "hi"],
			"openmolt: --tool: give module:function or file.py:function",
		),
	],
)
def test_a_prompt_run_refuses_empty_values(tmp_path, cli, args, said) -> None:
	"""The -m options too: an empty model, integration or tool is named as such."""
	done = cli.openmolt(*args, cwd=tmp_path, env=cli.clean_env(OPENMOLT_OPENAI_API_KEY="k"))
	assert done.returncode == 2, done.stderr
	assert done.stderr.startswith(said), done.stderr


@pytest.mark.parametrize("command", ["schedules", "mcp"])
def test_other_commands_refuse_an_empty_env_file(tmp_path, server, cli, command) -> None:
	"""Every command that reads --env-file says the same."""
	agent = cli.agent_file(tmp_path, server)
	done = cli.openmolt(command, str(agent), "--env-file", "", cwd=tmp_path)
	assert done.returncode == 2, done.stderr
	assert done.stderr == "openmolt: --env-file: give the path of a .env file\n"
