"""Local and self-hosted models: base URLs from the environment, no key, Chat Completions only."""

import json

import pytest


def local_agent(directory, model: str, providers: dict, **extra) -> str:
	data = {
		"name": "Greeter",
		"model": model,
		"instructions": "Greet the person named in the input.",
		"input": "Ada",
		"outputSchema": {
			"type": "object",
			"properties": {"greeting": {"type": "string"}},
			"required": ["greeting"],
		},
		"llmProviders": providers,
		**extra,
	}
	path = directory / "agent.json"
	path.write_text(json.dumps(data))
	return str(path)


def test_a_named_instance_runs_on_a_chat_only_server_without_a_key(
	tmp_path, chat_server, cli
) -> None:
	"""`ollama:greet` with {"provider": "openai", "apiMode": "chat"} needs no key and no /responses."""
	path = local_agent(
		tmp_path,
		"ollama:greet",
		{"ollama": {"provider": "openai", "baseUrl": chat_server.url, "apiMode": "chat"}},
	)
	done = cli.openmolt(path, cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Ada!"}
	assert [r["path"] for r in chat_server.requests] == ["/v1/chat/completions"]
	assert chat_server.keys == [None]


def test_a_named_instance_uses_its_own_key_variable(tmp_path, chat_server, cli) -> None:
	"""OPENMOLT_OLLAMA_API_KEY goes to the ollama instance; OpenAI's key never does."""
	path = local_agent(
		tmp_path,
		"ollama:greet",
		{"ollama": {"provider": "openai", "baseUrl": chat_server.url, "apiMode": "chat"}},
	)
	env = cli.clean_env(OPENMOLT_OLLAMA_API_KEY="local-key", OPENMOLT_OPENAI_API_KEY="sk-real")
	done = cli.openmolt(path, cwd=tmp_path, env=env)
	assert done.returncode == 0, done.stderr
	assert chat_server.keys == ["Bearer local-key"]


@pytest.mark.parametrize("fixture", ["chat_server", "lmstudio_server"])
def test_the_base_url_variable_is_read_and_responses_falls_back_to_chat(
	tmp_path, cli, request, fixture
) -> None:
	"""OPENMOLT_OPENAI_BASE_URL points `openai:` at a local server; without /responses it uses chat."""
	server = request.getfixturevalue(fixture)
	path = local_agent(tmp_path, "openai:plan", {}, maxSteps=3)
	env = cli.clean_env(OPENMOLT_OPENAI_BASE_URL=server.url)
	done = cli.openmolt(path, "--verbose", cwd=tmp_path, env=env)
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Ada!"}
	paths = [r["path"] for r in server.requests]
	assert paths == ["/v1/responses", "/v1/chat/completions", "/v1/chat/completions"]
	assert server.keys == [None, None, None]


def test_an_explicit_responses_mode_on_a_chat_only_server_says_what_to_set(
	tmp_path, chat_server, cli
) -> None:
	"""api_mode 'responses' is taken at its word; the 404 explains the 'chat' setting, as the file spells it."""
	path = local_agent(
		tmp_path,
		"openai:greet",
		{"openai": {"baseUrl": chat_server.url, "apiMode": "responses", "maxRetries": 0}},
	)
	done = cli.openmolt(path, cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 5
	assert 'set llmProviders.openai.apiMode to "chat" in the agent file' in done.stderr
	assert "llm_providers" not in done.stderr
	assert [r["path"] for r in chat_server.requests] == ["/v1/responses"]


def test_the_vendors_api_still_needs_a_key(tmp_path, cli) -> None:
	"""Without a base URL, `openai:` still stops at once naming the key variable."""
	path = local_agent(tmp_path, "openai:gpt-5-mini", {})
	done = cli.openmolt(path, cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 2
	assert "no API key for openai: set OPENMOLT_OPENAI_API_KEY" in done.stderr


def test_a_python_agent_file_can_use_a_named_instance(tmp_path, chat_server, cli) -> None:
	"""A .py agent file's factory gets an instance whose llm_providers it may extend."""
	(tmp_path / "local.py").write_text(
		f"""
input = "Grace"


def agent(om):
	om.llm_providers["llama"] = {{"provider": "openai", "base_url": "{chat_server.url}", "api_mode": "chat"}}
	return om.create_agent(name="Greeter", model="llama:greet", instructions="Greet.")
"""
	)
	done = cli.openmolt("local.py", cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["output"] == {"greeting": "Hello, Grace!"}


@pytest.mark.parametrize("verbose", [False, True])
def test_a_server_that_does_not_stream_still_runs_on_a_terminal(
	tmp_path, chat_server, cli, verbose
) -> None:
	"""On a terminal the run streams; a server answering whole replies is taken at its word."""
	path = local_agent(
		tmp_path,
		"ollama:greet",
		{"ollama": {"provider": "openai", "baseUrl": chat_server.url, "apiMode": "chat"}},
	)
	args = [path, "--verbose"] if verbose else [path]
	done = cli.openmolt(*args, cwd=tmp_path, env=cli.clean_env(), tty=True)
	assert done.returncode == 0, done.stderr
	assert "Hello, Ada!" in done.stdout
	assert len(chat_server.requests) == 1  # the whole reply to the stream is the answer
	said = [line for line in done.stderr.splitlines() if "does not stream" in line]
	if verbose:
		assert said == [
			f"openmolt: warning: ollama:greet: {chat_server.url} does not stream; its replies "
			"are asked for whole"
		]
	else:
		assert said == []


def test_a_bare_model_no_provider_lists_is_shown_as_a_local_server_s() -> None:
	"""`-m llama3.2` (as Ollama's own CLI takes it) is told it reads 'ollama:llama3.2' for a
	local server; a model a provider lists still gets that provider's name alone."""
	from openmolt import OpenMolt
	from openmolt_core.errors import ConfigurationError

	om = OpenMolt()
	with pytest.raises(ConfigurationError) as raised:
		om.create_agent(name="A", model="llama3.2")
	assert str(raised.value).endswith(
		"; a local server's model is written with the server's name: 'ollama:llama3.2' "
		"(or lmstudio:, vllm:, llamacpp:)"
	)
	with pytest.raises(ConfigurationError) as raised:
		om.create_agent(name="A", model="gpt-5-mini")
	assert str(raised.value).endswith("did you mean 'openai:gpt-5-mini'?")
