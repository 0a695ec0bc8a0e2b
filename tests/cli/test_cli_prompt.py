"""`openmolt -m MODEL "prompt"`: a run without an agent file, with stdin, integrations and tools."""

from __future__ import annotations

import json

import pytest


def _first_turn(server) -> dict:
	turns = server.requests[0]["body"]["input"]
	content = next(t for t in turns if t.get("role") == "user")["content"]
	text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
	return json.loads(text)


def _env(cli, server, **extra: str) -> dict[str, str]:
	return cli.clean_env(
		**{cli.KEY_VAR: "env-key", "OPENMOLT_OPENAI_BASE_URL": server.url}, **extra
	)


def test_a_prompt_runs_without_an_agent_file(tmp_path, server, cli) -> None:
	"""The prompt is the input; the result is printed as JSON when piped."""
	done = cli.openmolt("-m", "openai:greet", "Ada", cwd=tmp_path, env=_env(cli, server))
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Ada!"}
	first = _first_turn(server)
	assert first["input"] == "Ada"


def test_stdin_is_the_input_or_follows_the_prompt(tmp_path, server, cli) -> None:
	"""Piped text alone is the input; with a prompt, it comes after it."""
	done = cli.openmolt("-m", "openai:greet", cwd=tmp_path, env=_env(cli, server), stdin="Bob")
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Bob!"}
	both = cli.openmolt(
		"run", "-m", "openai:greet", "Say hi to", cwd=tmp_path, env=_env(cli, server), stdin="Cy"
	)
	assert both.returncode == 0, both.stderr
	assert json.loads(both.stdout)["output"] == {"greeting": "Hello, Say hi to\n\nCy!"}


def test_piped_text_loses_one_final_newline(tmp_path, server, cli) -> None:
	"""``echo Bob | openmolt -m ...`` sends ``Bob``, as `llm` does; only one newline goes."""
	done = cli.openmolt("-m", "openai:greet", cwd=tmp_path, env=_env(cli, server), stdin="Bob\n")
	assert done.returncode == 0, done.stderr
	assert _first_turn(server)["input"] == "Bob"
	two = cli.openmolt("-m", "openai:greet", cwd=tmp_path, env=_env(cli, server), stdin="Bo\n\n")
	assert two.returncode == 0, two.stderr
	assert json.loads(two.stdout)["output"] == {"greeting": "Hello, Bo\n!"}


def test_a_function_becomes_a_tool_and_bad_references_are_named(tmp_path, server, cli) -> None:
	"""--tool module:function is offered to the model; a wrong reference says what to write."""
	(tmp_path / "mytools.py").write_text(
		"def lookup_order(order_id: str) -> str:\n"
		'    """Look up an order by its id."""\n'
		"    return 'shipped'\n"
	)
	done = cli.openmolt(
		"-m",
		"openai:greet",
		"--tool",
		"mytools:lookup_order",
		"Ada",
		cwd=tmp_path,
		env=_env(cli, server),
	)
	assert done.returncode == 0, done.stderr
	first = _first_turn(server)
	assert "lookup_order" in json.dumps(first["tools"])
	bad = cli.openmolt(
		"-m", "openai:greet", "--tool", "mytools", "x", cwd=tmp_path, env=_env(cli, server)
	)
	assert bad.returncode == 2
	assert "give module:function" in bad.stderr
	none = cli.openmolt("-m", "openai:greet", cwd=tmp_path, env=_env(cli, server))
	assert none.returncode == 2 and "-m needs a prompt" in none.stderr
	orphan = cli.openmolt("--tool", "mytools:lookup_order", cwd=tmp_path, env=_env(cli, server))
	assert orphan.returncode == 2


def test_a_tool_file_is_given_by_its_path(tmp_path, server, cli) -> None:
	"""--tool ./tools.py:add (and tools.py:add, a path in a folder) loads the file, as llm's --functions."""
	folder = tmp_path / "lib"
	folder.mkdir()
	(folder / "tools.py").write_text(
		'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n    return a + b\n'
	)
	(tmp_path / "tools.py").write_text((folder / "tools.py").read_text())
	for reference in (
		"./tools.py:add",
		"tools.py:add",
		"lib/tools.py:add",
		f"{folder}/tools.py:add",
	):
		server.requests.clear()
		done = cli.openmolt(
			"-m", "openai:greet", "--tool", reference, "Ada", cwd=tmp_path, env=_env(cli, server)
		)
		assert done.returncode == 0, (reference, done.stderr)
		assert "local.add" in json.dumps(_first_turn(server)["tools"]), reference
	missing = cli.openmolt(
		"-m", "openai:greet", "--tool", "nope.py:add", "x", cwd=tmp_path, env=_env(cli, server)
	)
	assert missing.returncode == 2
	assert missing.stderr == "openmolt: --tool 'nope.py:add': no such file 'nope.py'\n"
	typo = cli.openmolt(
		"-m", "openai:greet", "--tool", "./tools.py:ad", "x", cwd=tmp_path, env=_env(cli, server)
	)
	assert typo.returncode == 2 and "did you mean ./tools.py:add?" in typo.stderr


def test_a_tool_module_that_fails_names_its_file_and_line(tmp_path, server, cli) -> None:
	"""A --tool module that raises or does not parse is the user's error (exit 2), with its line."""
	(tmp_path / "broken.py").write_text("def add(:\n")
	(tmp_path / "raises.py").write_text("import json\n\nundefined_name()\n")
	cases = {
		"broken:add": "broken.py:1: SyntaxError: ",
		"./broken.py:add": "broken.py:1: SyntaxError: ",
		"raises:add": "raises.py:3: NameError: name 'undefined_name' is not defined",
		"./raises.py:add": "raises.py:3: NameError: name 'undefined_name' is not defined",
	}
	for reference, said in cases.items():
		done = cli.openmolt(
			"-m", "openai:greet", "--tool", reference, "x", cwd=tmp_path, env=_env(cli, server)
		)
		assert done.returncode == 2, (reference, done.stderr)
		assert done.stderr.startswith(f"openmolt: --tool {reference!r}: "), done.stderr
		assert said in done.stderr, (reference, done.stderr)
		assert "unexpected error" not in done.stderr and "Traceback" not in done.stderr
	assert not server.requests


def test_what_a_prompt_lacks_is_said_for_the_command_line(tmp_path, cli) -> None:
	"""With -m there is no agent file to point at, and no Python code: the advice is variables."""
	env = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-test")
	slack = cli.openmolt(
		"-m", "openai:gpt-5-mini", "--integration", "slack", "hi", cwd=tmp_path, env=env
	)
	assert slack.returncode == 2
	assert "set OPENMOLT_SLACK_TOKEN" in slack.stderr
	assert "agent.json" not in slack.stderr and "{id: config}" not in slack.stderr
	local = cli.openmolt("-m", "mybox:llama3.2", "hi", cwd=tmp_path, env=env)
	assert local.returncode == 2
	assert "llm_providers=" not in local.stderr  # Python's spelling
	assert "OPENMOLT_OPENAI_BASE_URL" in local.stderr and '"llmProviders"' in local.stderr
	unknown = cli.openmolt(
		"-m", "openai:gpt-5-mini", "--integration", "nosuch", "hi", cwd=tmp_path, env=env
	)
	assert unknown.returncode == 2
	assert "in a Python agent file (agent.py) with om.register_integration" in unknown.stderr


def test_a_prompt_s_agent_is_named_for_its_model(tmp_path, server, cli) -> None:
	"""The agent of `-m openai:greet` is "openai:greet" in its prompt, the run store and logs."""
	env = _env(cli, server, OPENMOLT_RUN_STORE=str(tmp_path / "runs.db"))
	done = cli.openmolt("-m", "openai:greet", "Ada", cwd=tmp_path, env=env)
	assert done.returncode == 0, done.stderr
	assert "openmolt: openai:greet: starting\n" in done.stderr  # not "... with openai:greet"
	system = json.dumps(server.requests[0]["body"])
	assert "You are openai:greet" in system and "You are openmolt" not in system
	logs = cli.openmolt("logs", "--json", cwd=tmp_path, env=env)
	[run] = json.loads(logs.stdout)
	assert run["agent"] == "openai:greet"
	one = cli.openmolt("logs", run["run_id"], cwd=tmp_path, env=env)
	assert one.stdout.startswith(f"run {run['run_id']}: openai:greet, success")


def test_a_prompt_run_s_warning_does_not_point_to_an_agent_file_it_lacks(
	tmp_path, server, cli
) -> None:
	"""-m --integration slack warns of the trifecta; the advice says a -m run has no agent file."""
	env = _env(cli, server, OPENMOLT_SLACK_TOKEN="xoxb-env")
	done = cli.openmolt(
		"-m", "openai:greet", "--integration", "slack", "Ada", cwd=tmp_path, env=env
	)
	assert done.returncode == 0, done.stderr
	warning = next(line for line in done.stderr.splitlines() if "warning:" in line)
	assert "combines private data" in warning
	assert '"taintPolicy": {"warn": false} in an agent file silences this (a -m run has none' in (
		warning
	)


def test_a_python_agent_file_s_warning_keeps_python_advice(tmp_path, server, cli) -> None:
	"""An agent.py is told TaintPolicy(warn=False), not the JSON agent file's key it has none of."""
	(tmp_path / "agent.py").write_text(
		"from openmolt import OpenMolt\n"
		f"om = OpenMolt(llm_providers={{'openai': {{'base_url': {server.url!r}}}}})\n"
		"agent = om.create_agent(name='P', model='openai:greet', instructions='Greet.',"
		" integrations=['slack'])\n"
	)
	env = _env(cli, server, OPENMOLT_SLACK_TOKEN="xoxb-env")
	done = cli.openmolt("agent.py", "--input", "Ada", cwd=tmp_path, env=env)
	assert done.returncode == 0, done.stderr
	warning = next(line for line in done.stderr.splitlines() if "warning:" in line)
	assert "combines private data" in warning
	assert warning.endswith("TaintPolicy(warn=False) silences this"), warning
	assert "taintPolicy" not in warning


def test_a_missing_integration_key_names_the_keys_set_command_once(tmp_path, cli) -> None:
	"""Each missing key is said once, with the `openmolt keys set ID KEY` that stores it.

	Telegram's botToken was said twice (a warning for downloadFile, then the credential's line),
	and every line ended in a bare `openmolt keys set`, which then asked which key.
	"""
	env = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-test")
	expected = {
		"telegram": [
			"set OPENMOLT_TELEGRAM_BOT_TOKEN (in the environment, a .env file or "
			"`openmolt keys set telegram botToken`)"
		],
		"slack": ["`openmolt keys set slack token`"],
		"s3": ["`openmolt keys set s3 KEY`"],
		# accountSid is an alternative of the credential, and Twilio's tools need it whatever the
		# credential: its warning stays.
		"twilio": ["`openmolt keys set twilio accountSid`", "`openmolt keys set twilio KEY`"],
	}
	for iid, said in expected.items():
		done = cli.openmolt(
			"-m", "openai:gpt-5-mini", "--integration", iid, "hi", cwd=tmp_path, env=env
		)
		assert done.returncode == 2, done.stderr
		for text in said:
			assert text in done.stderr, (iid, done.stderr)
		assert "`openmolt keys set`" not in done.stderr
	telegram = cli.openmolt(
		"-m", "openai:gpt-5-mini", "--integration", "telegram", "hi", cwd=tmp_path, env=env
	)
	assert telegram.stderr.count("OPENMOLT_TELEGRAM_BOT_TOKEN") == 1, telegram.stderr


def test_empty_piped_text_is_said_to_be_empty(tmp_path, cli) -> None:
	"""`cat empty.txt | openmolt -m M`: the text came and was empty, not "pipe text in"."""
	env = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-test")
	for stdin in ("", "\n", "  \n\n"):
		done = cli.openmolt("-m", "openai:gpt-5-mini", cwd=tmp_path, env=env, stdin=stdin)
		assert done.returncode == 2
		assert done.stderr == (
			'openmolt: -m needs a prompt, and the text piped in was empty: openmolt -m MODEL "..."\n'
		)


def test_an_integration_s_tool_given_to_tool_points_to_integration() -> None:
	"""--tool slack.postMessage (an integration's tool, not a function) names --integration slack."""
	from openmolt_core.cli._run import _import_tool
	from openmolt_core.errors import ConfigurationError

	with pytest.raises(ConfigurationError) as refused:
		_import_tool("slack.postMessage")
	assert "give module:function" in str(refused.value)
	assert "`--integration slack` gives the agent slack's tools" in str(refused.value)
	with pytest.raises(ConfigurationError) as other:
		_import_tool("mytools.lookup")
	assert "--integration" not in str(other.value)


def test_a_mistyped_integration_is_named_as_the_option_that_gave_it(
	tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""`-m ... --integration notionn` says "--integration 'notionn': ... did you mean 'notion'?",
	not the agent file's "integrations:notionn", since no agent file was given."""
	from openmolt_core.cli._run import load_prompt
	from openmolt_core.errors import PluginError

	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	with pytest.raises(PluginError) as raised:
		load_prompt(
			"openai:gpt-5-mini",
			instructions=None,
			integrations=["notionn"],
			tools=[],
			env_file=None,
			verbose=False,
		)
	said = str(raised.value)
	assert said.startswith("--integration 'notionn': no such integration; did you mean 'notion'?")
	assert raised.value.plugin == "integrations:notionn"  # the plugin record still finds it
