import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_key_is_one_line_naming_the_variable(tmp_path, cli) -> None:
	"""The README's first command without a key says which variable to set, in one line."""
	done = cli.openmolt(str(ROOT / "examples" / "hello.json"), cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 2
	assert done.stdout == ""
	assert done.stderr.splitlines() == [
		"openmolt: no API key for openai: set OPENMOLT_OPENAI_API_KEY (in the environment, a .env "
		"file or `openmolt keys set openai`)"
	]


def test_a_third_party_providers_missing_key_is_one_line_too(tmp_path, server, cli) -> None:
	"""A provider plugin that refuses to start without a key gives one line, exit 2."""
	path = cli.agent_file(
		tmp_path, server, model="fakeai:greet", llmProviders={"fakeai": {"baseUrl": server.url}}
	)
	done = cli.openmolt(str(path), cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 2
	assert done.stderr.splitlines() == [
		"openmolt: no API key for fakeai: set OPENMOLT_FAKEAI_API_KEY"
	]


BAD_FILE = """{
  "name": "Greeter",
  "modle": "openai:gpt-5-mini",
  "model": "openai:gpt-5-mini",
  "maxSteps": "ten",
  "schedules": [
    {"type": "daily", "hour": 9, "dayOfWek": [1]}
  ],
  "integrations": [{"integraton": "weather"}],
  "modelConfig": {"temprature": 0.2}
}
"""


def test_unknown_and_wrong_keys_name_the_key_the_file_and_the_line(tmp_path, cli) -> None:
	"""Each problem is one line: file:line, the key, and the closest right key."""
	(tmp_path / "bad.json").write_text(BAD_FILE)
	done = cli.openmolt("bad.json", cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.splitlines() == [
		"openmolt: bad.json:3: unknown key 'modle'; did you mean 'model'?",
		'openmolt: bad.json:5: maxSteps: Input should be a valid integer (got "ten")',
		"openmolt: bad.json:7: unknown key 'schedules[0].dayOfWek'; did you mean 'dayOfWeek'?",
		"openmolt: bad.json:9: unknown key 'integrations[0].integraton'; did you mean 'integration'?",
		"openmolt: bad.json:10: unknown key 'modelConfig.temprature'; did you mean 'temperature'?",
	]


@pytest.mark.parametrize(
	("name", "content", "expected"),
	[
		(
			"a.json",
			'{\n  "name": "x",\n  "model": "a:b",\n}\n',
			"a.json:4: invalid JSON: Expecting property name enclosed in double quotes (column 1)",
		),
		("a.json", "[1, 2]", "a.json:1: an agent file holds one JSON object, not list"),
		("a.json", '{\n  "model": "a:b"\n}', "a.json:1: missing required key 'name'"),
		(
			"a.json",
			'{\n  "name": "x",\n  "model": "a:b",\n  "schedules": [{"type": "daily", "hour": 30}]\n}',
			"a.json:4: schedules[0].hour: Input should be less than or equal to 23 (got 30)",
		),
		(
			"a.json",
			'{"name": "x", "model": "nosuch:model"}',
			"a.json: providers:nosuch: no such model provider (installed: ",
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5", "requiresApproval": ["refund"]}',
			"a.json: requiresApproval[0] 'refund': ",
		),
		(  # a key under config, as the file spells it, and the tool's handle
			"a.json",
			'{"name": "x", "model": "openai:gpt-5", "integrations": ["httpRequest"], '
			'"config": {"maxResultCharsPerTool": {"request": 5}}}',
			"a.json: config.maxResultCharsPerTool: 'request' selects none of this agent's "
			"tools; 'request' is a tool: did you mean 'httpRequest.request'?",
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5", "integrations": [{"integration": "slak"}]}',
			"a.json: integrations:slak: no such integration; did you mean 'slack'?",
		),
		(
			"a.json",
			'{"name": "x", "model": "no-colon"}',
			"a.json: model 'no-colon' must read 'provider:model'; e.g. 'openai:gpt-5-mini'",
		),
		(  # as `llm -m gpt-5-mini` takes it: the provider that lists the model is named
			"a.json",
			'{"name": "x", "model": "gpt-5-mini"}',
			"a.json: model 'gpt-5-mini' must read 'provider:model'; did you mean "
			"'openai:gpt-5-mini'?",
		),
		(  # LiteLLM's provider/model spelling: the colon it means
			"a.json",
			'{"name": "x", "model": "openai/gpt-5-mini"}',
			"a.json: model 'openai/gpt-5-mini' must read 'provider:model'; did you mean "
			"'openai:gpt-5-mini'?",
		),
		(  # also for a local server's model, whose provider lists none, and in any case
			"a.json",
			'{"name": "x", "model": "Ollama/llama3.2"}',
			"a.json: model 'Ollama/llama3.2' must read 'provider:model'; did you mean "
			"'ollama:llama3.2'?",
		),
		(  # a slash after no provider: a model id of a hub, not a provider
			"a.json",
			'{"name": "x", "model": "meta-llama/Llama-3.2"}',
			"a.json: model 'meta-llama/Llama-3.2' must read 'provider:model'; e.g. 'openai:gpt-5-mini'",
		),
		(  # a schedule without its kind, or of a kind that does not exist
			"a.json",
			'{"name": "x", "model": "a:b",\n "schedules": [{"cron": "0 9 * * *"}]}',
			"a.json:2: schedules[0]: missing key 'type', one of 'interval', 'daily', 'cron'",
		),
		(
			"a.json",
			'{"name": "x", "model": "a:b",\n "schedules": [{"type": "weekly"}]}',
			"a.json:2: schedules[0]: 'type' is 'weekly', not one of 'interval', 'daily', 'cron'",
		),
		("a.txt", "{}", "a.txt: an agent file ends in .json or .py"),
		(
			"a.py",
			"x = 1\n",
			"a.py: defines no 'agent'; add `agent = om.create_agent(...)` or `def agent(om): return om.create_agent(...)`",
		),
		("a.py", "x = 1\nraise RuntimeError('nope')\n", "a.py:2: RuntimeError: nope"),
		(
			"a.py",
			"def agent(om):\n\tx = 1\n\traise RuntimeError('in the factory')\n",
			"a.py:3: RuntimeError: in the factory",
		),
		(
			"a.py",
			"def agent(om):\n\treturn om.create_agent(name='x', model='openai:gpt-5', max_steps='ten')\n",
			"a.py:2: create_agent: max_steps must be a whole number >= 1, got 'ten'",
		),
		(  # an agent file's camelCase key given to create_agent: its Python name
			"a.py",
			"def agent(om):\n\treturn om.create_agent(name='x', model='openai:gpt-5', maxSteps=3)\n",
			"a.py:2: TypeError: OpenMolt.create_agent() got an unexpected keyword argument "
			"'maxSteps'; did you mean 'max_steps'?",
		),
		(  # a Python file's schedule: its place in the file's list
			"a.py",
			"schedules = [{'type': 'cron', 'expresion': '0 9 * * *'}]\n"
			"def agent(om):\n\treturn om.create_agent(name='x', model='openai:gpt-5')\n",
			"a.py: schedules[0]: missing key 'expression'; unknown key 'expresion'; did you mean "
			"'expression'?",
		),
		(  # a misspelled argument: the closest one
			"a.py",
			"from openmolt import OpenMolt\nom = OpenMolt(max_step=3)\n",
			"a.py:2: TypeError: OpenMolt.__init__() got an unexpected keyword argument "
			"'max_step'; did you mean 'max_steps'?",
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5",\n "outputSchema": {"type": "objekt", "properties": 5}}',
			"a.json:2: outputSchema: not a valid JSON Schema: type: must be one of",
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5", "integrations": "slack"}',
			'a.json:1: integrations: Input should be a valid dictionary or a valid list (got "slack")',
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5",\n "humanInput": "yes"}',
			'a.json:2: humanInput: Input should be a valid boolean (got "yes")',
		),
		(
			"a.json",
			'{"name": "x", "model": "broken:x"}',
			"providers:broken (openmolt-weather): the factory returned object, not a provider",
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5",\n "openapi": {"pets": ""}}',
			'a.json:2: openapi.pets: String should have at least 1 character (got "")',
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5",\n "openapi": {"pets": "https://api.example.com/openapi.json"}}',
			"a.json: openapi.pets: 'https://api.example.com/openapi.json' is a URL; the importer reads a file",
		),
		(
			"a.json",
			'{"name": "x", "model": "openai:gpt-5", "durability": "runs\\u0000.db"}',
			"a.json: durability must be a SQLite file's path or a postgresql:// URL with no NUL "
			"character",
		),
		(
			"a.py",
			"agent = 42\n",
			"a.py: 'agent' must be an Agent or a function of the OpenMolt instance returning one",
		),
	],
)
def test_every_file_error_is_clear(tmp_path, cli, name, content, expected) -> None:
	"""Broken files give one clear message naming the file and, when known, the line."""
	(tmp_path / name).write_text(content)
	done = cli.openmolt(name, cwd=tmp_path)
	assert done.returncode == 2, done.stderr
	assert done.stderr.splitlines()[0].startswith(f"openmolt: {expected}")
	assert "Traceback" not in done.stderr


def test_a_missing_file_is_named(tmp_path, cli) -> None:
	"""A file that does not exist is named."""
	done = cli.openmolt("nope.json", cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.startswith("openmolt: nope.json: cannot read the agent file: No such file")
	assert "did you mean" not in done.stderr


@pytest.mark.parametrize("typed", ["digest.jsn", "digst.json", "Digest.json"])
def test_a_mistyped_agent_file_name_gets_the_file_beside_it(tmp_path, cli, typed) -> None:
	"""`openmolt digest.jsn` (or digst.json) beside digest.json: "did you mean 'digest.json'?"."""
	(tmp_path / "digest.json").write_text("{}")
	done = cli.openmolt(typed, cwd=tmp_path)
	assert done.returncode == 2
	assert "did you mean 'digest.json'?" in done.stderr, done.stderr


def test_a_bad_env_file_line_is_named_by_number_not_content(tmp_path, server, cli) -> None:
	"""A .env line that is not KEY=value is reported by number, without echoing it."""
	path = cli.agent_file(tmp_path, server)
	(tmp_path / ".env").write_text("OK=1\nthis is secret-ish\n")
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.strip() == "openmolt: .env:2: not a KEY=value line"


def test_an_explicit_env_file_must_exist(tmp_path, server, cli) -> None:
	"""--env-file pointing nowhere is an error."""
	path = cli.agent_file(tmp_path, server)
	done = cli.openmolt(str(path), "--env-file", "missing.env", cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.strip() == "openmolt: missing.env: no such .env file"


def test_usage_errors_exit_2(tmp_path, cli) -> None:
	"""`openmolt run` without a file is a usage error: one line saying what to give."""
	done = cli.openmolt("run", cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr == (
		"openmolt run: give an agent file (agent.json or agent.py), or -m MODEL and a prompt "
		"(`openmolt run --help` lists the arguments)\n"
	)


def test_tools_of_an_unknown_integration_is_one_line(tmp_path, cli) -> None:
	"""`openmolt tools nosuch` says the integration is not installed."""
	done = cli.openmolt("tools", "nosuch", cwd=tmp_path)
	assert done.returncode == 2
	assert len(done.stderr.splitlines()) == 1
	assert done.stderr.startswith("openmolt: integrations:nosuch: no such integration")


def test_plugins_lists_providers_and_integrations_with_versions(tmp_path, cli) -> None:
	"""`openmolt plugins` shows each entry point with its distribution and version."""
	done = cli.openmolt("plugins", cwd=tmp_path)
	assert done.returncode == 0
	assert "providers:" in done.stdout and "integrations:" in done.stdout
	assert any(
		line.split() == ["fakeai", "openmolt-weather", "0.1.0"] for line in done.stdout.splitlines()
	)
	data = json.loads(cli.openmolt("plugins", "--json", cwd=tmp_path).stdout)
	assert {
		"group": "integrations",
		"name": "weather",
		"distribution": "openmolt-weather",
		"version": "0.1.0",
	} in data


def test_tools_lists_an_integrations_tools_scopes_and_schemas(tmp_path, cli) -> None:
	"""`openmolt tools weather` is a table of tools; `tools weather getForecast` has the schema."""
	done = cli.openmolt("tools", "weather", cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	row = next(line for line in done.stdout.splitlines() if "weather.getForecast" in line)
	assert row.split()[:3] == ["weather.getForecast", "read", "city"]
	assert "read: Read forecasts." in done.stdout
	one = cli.openmolt("tools", "weather", "getForecast", cwd=tmp_path)
	assert one.returncode == 0, one.stderr
	assert '"city"' in one.stdout
	data = json.loads(cli.openmolt("tools", "weather", "--json", cwd=tmp_path).stdout)
	assert data["tools"][0]["inputSchema"]["required"] == ["city"]


def test_schema_describes_the_agent_file_and_the_examples_match_it(tmp_path, cli) -> None:
	"""`openmolt schema` is a JSON Schema that the example files validate against."""
	from jsonschema import Draft202012Validator

	done = cli.openmolt("schema", cwd=tmp_path)
	schema = json.loads(done.stdout)
	Draft202012Validator.check_schema(schema)
	assert schema["additionalProperties"] is False
	assert {"name", "model", "outputSchema", "schedules", "llmProviders", "input"} <= set(
		schema["properties"]
	)
	validator = Draft202012Validator(schema)
	examples = [p for p in (ROOT / "examples").glob("*.json") if "schema" not in p.name]
	assert examples
	for example in examples:
		validator.validate(json.loads(example.read_text()))


def test_the_schema_accepts_both_spellings_and_completes_provider_settings(tmp_path, cli) -> None:
	"""snake_case keys validate as the loader accepts them; baseUrl and apiMode are described."""
	from jsonschema import Draft202012Validator

	schema = json.loads(cli.openmolt("schema", cwd=tmp_path).stdout)
	validator = Draft202012Validator(schema)
	snake = {
		"name": "A",
		"model": "ollama:llama3.2",
		"max_steps": 3,
		"output_schema": {"type": "object"},
		"model_config": {"max_output_tokens": 200},
		"llm_providers": {
			"ollama": {"provider": "openai", "base_url": "http://x/v1", "api_mode": "chat"}
		},
		"schedules": [{"type": "daily", "hour": 9, "time_zone": "UTC", "day_of_week": [1]}],
		"human_input": False,
	}
	validator.validate(snake)
	(tmp_path / "snake.json").write_text(json.dumps(snake))
	done = cli.openmolt("snake.json", "--dry-run", cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	settings = schema["properties"]["llmProviders"]["additionalProperties"]["properties"]
	assert {"baseUrl", "apiMode", "apiKey", "provider", "maxRetries"} <= set(settings)
	assert settings["apiMode"]["anyOf"][0]["enum"] == ["responses", "chat"]
	assert not validator.is_valid({**snake, "modle": "x"})


def test_the_examples_schema_is_what_openmolt_schema_prints(tmp_path, cli) -> None:
	"""examples/hello.json's $schema points at a file that exists and is current."""
	hello = json.loads((ROOT / "examples" / "hello.json").read_text())
	committed = ROOT / "examples" / hello["$schema"]
	env = cli.clean_env()
	env.pop("PYTHONPATH", None)
	done = cli.openmolt("schema", cwd=tmp_path, env=env)
	assert json.loads(committed.read_text()) == json.loads(done.stdout), (
		"regenerate it: uv run openmolt schema > examples/agent-file.schema.json"
	)


def test_integration_keys_are_checked_before_the_first_model_call(tmp_path, server, cli) -> None:
	"""A listed integration without its key stops the command, naming where the key comes from."""
	path = cli.agent_file(tmp_path, server, integrations=["weather"])
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.splitlines() == [
		"openmolt: weather needs config 'apiKey' for its custom credential: set "
		"OPENMOLT_WEATHER_API_KEY (in the environment, a .env file or `openmolt keys set weather apiKey`), or "
		f"integrations.weather.apiKey in {path} (the {{id: config}} form)"
	]
	assert server.requests == []
	env = cli.clean_env(**{cli.KEY_VAR: "k", "OPENMOLT_WEATHER_API_KEY": "w-key"})
	ran = cli.openmolt(str(path), cwd=tmp_path, env=env)
	assert ran.returncode == 0, ran.stderr


def test_a_misspelled_integration_key_is_refused(tmp_path, server, cli) -> None:
	"""{"weather": {"apikey": ...}} is not silently ignored."""
	path = cli.agent_file(tmp_path, server, integrations={"weather": {"apikey": "w-key"}})
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 2
	assert "config key 'apikey' is not read by weather: did you mean 'apiKey'?" in done.stderr


def test_a_dry_run_warns_about_missing_keys_but_runs(tmp_path, server, cli) -> None:
	"""--dry-run needs no key; it says which ones a real run would miss."""
	path = cli.agent_file(tmp_path, server, integrations=["weather"])
	done = cli.openmolt(str(path), "--dry-run", cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 0, done.stderr
	assert "warning: weather needs config 'apiKey'" in done.stderr


def test_what_create_agent_refuses_is_said_for_the_file_or_for_m(tmp_path, cli) -> None:
	"""No "create_agent:" (Python's) in the command: the agent file, or -m, is named instead."""
	(tmp_path / "a.json").write_text(
		'{"name": "x", "model": "openai:gpt-5-mini", "integrations": {"slack": {"tokne": "t"}}}'
	)
	env = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-x")
	done = cli.openmolt("a.json", cwd=tmp_path, env=env)
	assert done.returncode == 2
	assert done.stderr == (
		"openmolt: a.json: integrations[slack]: config key 'tokne' is not read by slack: did you "
		"mean 'token'?\n"
	)
	prompt = cli.openmolt("-m", "gpt-5-mini", "hi", cwd=tmp_path, env=env)
	assert prompt.returncode == 2
	assert prompt.stderr.startswith("openmolt: -m: model 'gpt-5-mini' must read 'provider:model'")


def test_a_python_agent_file_is_told_where_python_gives_an_integration_key(
	tmp_path, server, cli
) -> None:
	"""agent.py lacking a key: the variable, or create_agent's entry, never the JSON form."""
	path = tmp_path / "agent.py"
	path.write_text(
		"def agent(om):\n"
		f"    return om.create_agent(name='W', model='{cli.PROVIDER}:greet', "
		"instructions='x', integrations=['weather'])\n"
	)
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.splitlines() == [
		"openmolt: weather needs config 'apiKey' for its custom credential: set "
		"OPENMOLT_WEATHER_API_KEY (in the environment, a .env file or `openmolt keys set weather apiKey`), or "
		f"'apiKey' in {path}'s create_agent(integrations=[{{'integration': 'weather', "
		"'credential': {'config': {...}}}])"
	]


@pytest.mark.parametrize(
	("section", "said"),
	[
		(
			{"llmProviders": {"openai": {"apiKey": "${MY_OPENAI_KEY}"}}},
			"a.json:3: llmProviders.openai.apiKey: '${MY_OPENAI_KEY}' would be sent as it is "
			"written: only mcpServers reads ${VAR}; set OPENMOLT_OPENAI_API_KEY (in the "
			"environment or a .env file) and leave the key out",
		),
		(
			{"integrations": {"notion": {"apiKey": "${NOTION:-x}"}}},
			"a.json:3: integrations.notion.apiKey: '${NOTION:-x}' would be sent as it is "
			"written: only mcpServers reads ${VAR}; set OPENMOLT_NOTION_API_KEY",
		),
		(
			{
				"integrations": [
					{"integration": "slack", "credential": {"config": {"token": "$SLACK_TOKEN"}}}
				]
			},
			"a.json:3: integrations[0].credential.config.token: '$SLACK_TOKEN' would be sent as "
			"it is written: only mcpServers reads ${VAR}; set OPENMOLT_SLACK_TOKEN",
		),
	],
)
def test_a_variable_where_none_is_read_is_refused_with_the_one_that_is(
	tmp_path, cli, section, said
) -> None:
	"""`"apiKey": "${MY_KEY}"` was sent to the provider as the key: only mcpServers expands it."""
	path = tmp_path / "a.json"
	path.write_text(
		'{"name": "x", "model": "openai:gpt-5-mini",\n"instructions": "x",\n'
		+ json.dumps(section)[1:]
	)
	env = cli.clean_env(MY_OPENAI_KEY="sk-1", MY_NOTION="n", SLACK_TOKEN="t")
	if "llmProviders" not in section:
		env["OPENMOLT_OPENAI_API_KEY"] = "sk-2"
	done = cli.openmolt(str(path.name), cwd=tmp_path, env=env)
	assert done.returncode == 2, done.stderr
	assert done.stderr.startswith(f"openmolt: {said}"), done.stderr


def test_a_secret_that_starts_with_a_dollar_is_not_a_variable(tmp_path, server, cli) -> None:
	"""`$ecret-1` is a value, not a name: the file loads."""
	path = cli.agent_file(tmp_path, server, integrations={"weather": {"apiKey": "$ecret-1"}})
	done = cli.openmolt(str(path), "--dry-run", cwd=tmp_path)
	assert done.returncode == 0, done.stderr


def test_an_error_of_several_paragraphs_prints_no_empty_lines(tmp_path, cli) -> None:
	"""A message with blank lines (a library's paragraphs) printed a bare "openmolt: " line."""
	(tmp_path / "a.py").write_text(
		"from openmolt import ConfigurationError\n"
		"raise ConfigurationError('first part\\n\\nsecond part')\n"
	)
	done = cli.openmolt("a.py", cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr == "openmolt: a.py:2: first part\nopenmolt: second part\n"


def test_a_file_that_is_not_utf8_is_named_with_the_fix(tmp_path, server, cli) -> None:
	"""An agent file or .env saved as UTF-16 (PowerShell's ``>``) or with a stray byte: one line
	that names the file and says to save it as UTF-8 (was "unexpected error: UnicodeDecodeError")."""
	(tmp_path / "a.json").write_bytes('{"name": "a"}'.encode("utf-16"))
	done = cli.openmolt("a.json", cwd=tmp_path)
	assert done.returncode == 2 and "Traceback" not in done.stderr
	assert done.stderr.strip() == (
		"openmolt: a.json is not UTF-8 text: it is UTF-16 (as Windows PowerShell's > and "
		"Out-File write it); save it as UTF-8"
	)
	path = cli.agent_file(tmp_path, server)
	(tmp_path / ".env").write_bytes(b"OK=1\nNAME=caf\xe9\n")  # Latin-1
	done = cli.openmolt(str(path), cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.strip() == (
		"openmolt: .env is not UTF-8 text: the byte at offset 13 is not UTF-8; save it as UTF-8"
	)


def test_a_key_pasted_in_the_wrong_place_is_not_repeated(tmp_path, cli) -> None:
	"""``"llmProviders": {"openai": "sk-..."}`` (a key where its settings go): the error names
	the place and the text's length, never the key (it showed its first 57 characters)."""
	key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
	agent = {"name": "a", "model": "openai:gpt-5-mini", "llmProviders": {"openai": key}}
	(tmp_path / "a.json").write_text(json.dumps(agent))
	done = cli.openmolt("a.json", cwd=tmp_path)
	assert done.returncode == 2 and key[:12] not in done.stderr + done.stdout
	assert (
		"llmProviders.openai: Input should be a valid dictionary (got text of 38 characters)"
		in (done.stderr)
	)


def test_a_key_named_like_a_schedules_type_is_not_read_as_the_type(tmp_path, cli) -> None:
	"""``{"type": "cron", "cron": ...}``: the missing key is 'expression', and the known keys are cron's."""
	(tmp_path / "a.json").write_text(
		'{"name": "x", "model": "a:b",\n "schedules": [{"type": "cron", "cron": "0 9 * * *"}]}'
	)
	done = cli.openmolt("a.json", cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr.splitlines() == [
		"openmolt: a.json:2: missing required key 'expression' in 'schedules[0]'",
		"openmolt: a.json:2: unknown key 'schedules[0].cron'; known keys: id, input, "
		"missedRuns, paused, type, expression, timeZone",  # each once, as the docs spell it
	]


def test_a_dry_run_says_an_agent_py_s_bad_schedule(tmp_path, cli) -> None:
	"""--dry-run warns of the schedule a run (or serve, or the worker) would refuse."""
	(tmp_path / "a.py").write_text(
		"schedules = [{'type': 'interval', 'value': 60}, {'type': 'daily', 'hour': 25}]\n"
		"def agent(om):\n\treturn om.create_agent(name='x', model='openai:gpt-5')\n"
	)
	done = cli.openmolt(
		"a.py", "--dry-run", cwd=tmp_path, env={**cli.clean_env(), "OPENAI_API_KEY": "sk-x"}
	)
	assert done.returncode == 0, done.stderr
	assert "warning: a.py: schedules[1]: hour: " in done.stderr, done.stderr


@pytest.mark.parametrize(
	("line", "said"),
	[
		(
			'"temperature": 0.2',
			'a.json:3: \'temperature\' is a model setting: put it in "modelConfig": {"temperature": ...}',
		),
		(
			'"maxOutputTokens": 100',
			'a.json:3: \'maxOutputTokens\' is a model setting: put it in "modelConfig": {"maxOutputTokens": ...}',
		),
		(
			'"max_output_tokens": 100',
			'a.json:3: \'max_output_tokens\' is a model setting: put it in "modelConfig": {"maxOutputTokens": ...}',
		),
		(
			'"providerOptions": {}',
			'a.json:3: \'providerOptions\' is a model setting: put it in "modelConfig": {"providerOptions": ...}',
		),
		(
			'"maxReplyChars": 10',
			'a.json:3: \'maxReplyChars\' is an instance setting: put it in "config": {"maxReplyChars": ...}',
		),
	],
)
def test_a_setting_at_the_top_of_an_agent_file_names_the_key_it_goes_in(
	tmp_path: Path, line: str, said: str
) -> None:
	"""`"maxOutputTokens"` at the top is a model setting, not a typo of the run's token budget
	`maxTokens` (a different limit); `temperature` gets the same, not 40 known keys."""
	from openmolt_core.cli._agentfile import AgentFileError, load_json_file

	path = tmp_path / "a.json"
	path.write_text('{\n  "name": "x", "model": "openai:gpt-5-mini",\n  ' + line + "\n}\n")
	with pytest.raises(AgentFileError) as raised:
		load_json_file(path)
	assert str(raised.value).endswith(said), str(raised.value)
	assert "maxTokens" not in str(raised.value) and "known keys" not in str(raised.value)


def test_an_unknown_trigger_key_lists_the_keys_as_the_docs_spell_them(tmp_path: Path) -> None:
	"""The known keys of ``triggers`` read ``a2a`` once, not also as its generated alias ``a2A``."""
	from openmolt_core.cli._agentfile import AgentFileError, load_json_file

	path = tmp_path / "a.json"
	path.write_text('{"name": "x", "model": "openai:gpt-5-mini",\n "triggers": {"zzz": {}}}\n')
	with pytest.raises(AgentFileError) as raised:
		load_json_file(path)
	said = str(raised.value)
	assert "known keys: webhook, channels, a2a, agui" in said, said
	assert "a2A" not in said


@pytest.mark.parametrize("kind", ["telegram", "slack", "Telegram"])
def test_a_chat_channel_written_as_a_trigger_key_is_said_where_it_goes(
	tmp_path: Path, kind: str
) -> None:
	"""``"triggers": {"telegram": {...}}`` is said to be a channel: ``"channels": [{"type": ...}]``."""
	from openmolt_core.cli._agentfile import AgentFileError, load_json_file

	path = tmp_path / "a.json"
	path.write_text(
		'{"name": "x", "model": "openai:gpt-5-mini",\n "triggers": {"'
		+ kind
		+ '": {"allowEveryone": true}}}\n'
	)
	with pytest.raises(AgentFileError) as raised:
		load_json_file(path)
	said = str(raised.value)
	assert said.endswith(
		f"a.json:2: 'triggers.{kind}' is a chat channel: put it in "
		f'"channels": [{{"type": "{kind.lower()}", ...}}]'
	), said


def test_a_task_group_s_one_error_is_said_as_itself(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""An OpenMolt error raised in a task group (the viewer beside `openmolt serve`) is said as
	itself with exit 2, not "unexpected error: ExceptionGroup: unhandled errors in a TaskGroup";
	a group of two errors stays unexpected."""
	from openmolt_core import cli
	from openmolt_core.errors import ConfigurationError

	def one(args: list[str]) -> int:
		inner = ExceptionGroup("inner", [ConfigurationError("the run viewer cannot listen")])
		raise ExceptionGroup("unhandled errors in a TaskGroup", [inner])

	monkeypatch.setattr(cli, "_dispatch", one)
	assert cli.main(["serve", "agent.json"]) == 2
	assert capsys.readouterr().err == "openmolt: the run viewer cannot listen\n"

	def two(args: list[str]) -> int:
		raise ExceptionGroup("g", [ConfigurationError("a"), ConfigurationError("b")])

	monkeypatch.setattr(cli, "_dispatch", two)
	assert cli.main(["serve", "agent.json"]) == 70
	assert "unexpected error: ExceptionGroup" in capsys.readouterr().err
