"""Which source gives a key when several do: names of one secret, spellings, blank values."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.cli import _keystore
from openmolt_core.cli._run import check_ready, load
from openmolt_core.errors import ConfigurationError
from tests.cli._http import json_server


@pytest.fixture(autouse=True)
def _no_openmolt_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "store" / "keys.json"))
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-env-123456")
	monkeypatch.chdir(tmp_path)


def _agent(tmp_path: Path, integrations: Any) -> Path:
	path = tmp_path / "agent.json"
	path.write_text(
		json.dumps(
			{
				"name": "a",
				"model": "openai:gpt-5-mini",
				"instructions": "x",
				"integrations": integrations,
			}
		)
	)
	return path


def _config(path: Path, iid: str) -> dict[str, Any]:
	loaded = load(str(path), env_file=None, verbose=False)
	bound = [t for t in loaded.agent._tools.values() if t.context.integration == iid]
	return dict(bound[0].context.config)


def test_a_secret_s_other_name_in_a_higher_source_wins(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""OPENMOLT_SLACK_BOT_TOKEN in the environment beats a token in the key store or the file.

	Slack signs with ``token | default: botToken``: each name was resolved alone, so a stale
	stored token was sent while --verbose said the environment's bot token was used.
	"""
	_keystore.save("OPENMOLT_SLACK_TOKEN", "xoxb-stale-store")
	monkeypatch.setenv("OPENMOLT_SLACK_BOT_TOKEN", "xoxb-from-env")
	config = _config(_agent(tmp_path, ["slack"]), "slack")
	assert config.get("botToken") == "xoxb-from-env" and "token" not in config
	config = _config(_agent(tmp_path, {"slack": {"token": "xoxb-file"}}), "slack")
	assert config.get("botToken") == "xoxb-from-env" and "token" not in config
	entry = {"integration": "slack", "credential": {"config": {"token": "xoxb-file"}}}
	config = _config(_agent(tmp_path, [entry]), "slack")
	assert config.get("botToken") == "xoxb-from-env" and "token" not in config


def test_the_file_s_name_of_a_secret_beats_the_store_s_other_name(tmp_path: Path) -> None:
	"""The file's botToken wins over a stored token: the store is the last source."""
	_keystore.save("OPENMOLT_SLACK_TOKEN", "xoxb-store")
	config = _config(_agent(tmp_path, {"slack": {"botToken": "xoxb-file"}}), "slack")
	assert config.get("botToken") == "xoxb-file" and "token" not in config


def test_a_variable_replaces_the_file_s_key_in_its_other_spelling(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""OPENMOLT_GMAIL_REFRESH_TOKEN beats integrations.gmail.refresh_token, without a conflict.

	The variable's refreshToken was added beside the file's refresh_token, and the run stopped:
	'give refreshToken or refresh_token, not both'.
	"""
	path = _agent(tmp_path, {"gmail": {"refresh_token": "file-refresh", "client_id": "file-id"}})
	monkeypatch.setenv("OPENMOLT_GMAIL_REFRESH_TOKEN", "env-refresh")
	config = _config(path, "gmail")
	assert config["refreshToken"] == "env-refresh" and "refresh_token" not in config
	assert config.get("client_id") == "file-id"  # the file's spelling, where the file wins


def test_a_blank_variable_falls_through_to_the_next_source(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""An empty or spaces-only variable is no value: .env, the file or the store gives it."""
	path = _agent(tmp_path, ["slack"])
	monkeypatch.setenv("OPENMOLT_SLACK_TOKEN", "  ")
	(tmp_path / ".env").write_text("OPENMOLT_SLACK_TOKEN=xoxb-dotenv\n")
	assert _config(path, "slack")["token"] == "xoxb-dotenv"
	(tmp_path / ".env").write_text("OPENMOLT_SLACK_TOKEN=\n")
	_keystore.save("OPENMOLT_SLACK_TOKEN", "xoxb-store")
	assert _config(path, "slack")["token"] == "xoxb-store"


def test_a_blank_variable_is_said_before_the_run(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The command names the variable that is set but empty, and every either/or field at once."""
	monkeypatch.setenv("OPENMOLT_S3_ACCESS_KEY_ID", "AKIA123456")
	monkeypatch.setenv("OPENMOLT_S3_SECRET_ACCESS_KEY", " ")
	loaded = load(str(_agent(tmp_path, ["s3", "twilio"])), env_file=None, verbose=False)
	with pytest.raises(ConfigurationError) as caught:
		check_ready(loaded, strict=True)
	message = str(caught.value)
	assert "OPENMOLT_S3_SECRET_ACCESS_KEY is set but empty" in message
	assert (
		"set OPENMOLT_TWILIO_API_KEY_SID (or OPENMOLT_TWILIO_ACCOUNT_SID) and "
		"OPENMOLT_TWILIO_API_KEY_SECRET (or OPENMOLT_TWILIO_AUTH_TOKEN)"
	) in message


def test_an_empty_provider_key_is_said(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""OPENMOLT_OPENAI_API_KEY= is no key, and the message says it is set but empty."""
	from openmolt_core.cli import main

	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "")
	path = _agent(tmp_path, [])
	assert main([str(path), "--input", "hi"]) == 2
	assert "OPENMOLT_OPENAI_API_KEY is set but empty" in capsys.readouterr().err


def test_an_agent_s_entry_wins_over_the_instance_in_any_spelling_or_name() -> None:
	"""create_agent's config replaces the instance's key in its other spelling or name.

	The instance's refreshToken beside the entry's refresh_token was refused ('not both'), and
	the instance's token was sent instead of the entry's botToken.
	"""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel

	om = OpenMolt(
		integrations={
			"gmail": {"refreshToken": "instance-refresh", "clientId": "c"},
			"slack": {"token": "instance-token"},
		}
	)

	def config(iid: str, given: dict[str, str]) -> dict[str, Any]:
		entry = {"integration": iid, "credential": {"config": given}}
		agent = om.create_agent(name="a", model=ScriptedModel([]), integrations=[entry])
		return dict(next(iter(agent._tools.values())).context.config)

	assert config("gmail", {"refresh_token": "entry-refresh"}) == {
		"clientId": "c",
		"refresh_token": "entry-refresh",
	}
	assert config("slack", {"botToken": "entry-bot"}) == {"botToken": "entry-bot"}


def _agent_py(tmp_path: Path, code: str, *stored: str) -> Any:
	"""Load an agent.py as the command does; the ``stored`` variables it put into the
	environment (the key store's values join it for Python code) are taken out again."""
	path = tmp_path / "agent.py"
	path.write_text(code)
	try:
		return load(str(path), env_file=None, verbose=False)
	finally:
		for variable in stored:
			os.environ.pop(variable, None)


def test_an_agent_py_s_own_config_wins_over_the_key_store(tmp_path: Path) -> None:
	"""A Python agent file's botToken beats a stored token: the store is read last there too."""
	_keystore.save("OPENMOLT_SLACK_TOKEN", "xoxb-store")
	code = (
		"from openmolt_core.testing import ScriptedModel\n\n\n"
		"def agent(om):\n"
		"\tentry = {'integration': 'slack', 'credential': {'config': {'botToken': 'xoxb-code'}}}\n"
		"\treturn om.create_agent(name='a', model=ScriptedModel([]), integrations=[entry])\n"
	)
	loaded = _agent_py(tmp_path, code, "OPENMOLT_SLACK_TOKEN")
	config = dict(next(iter(loaded.agent._tools.values())).context.config)
	assert config == {"botToken": "xoxb-code"}


@pytest.mark.parametrize("store", [False, True], ids=["environment", "key-store"])
def test_an_agent_py_s_own_provider_key_wins_as_its_integration_keys_do(
	tmp_path: Path, store: bool
) -> None:
	"""The code's api_key beats OPENMOLT_OPENAI_API_KEY (and the key store), as `python agent.py`."""
	if store:
		os.environ.pop("OPENMOLT_OPENAI_API_KEY")
		_keystore.save("OPENMOLT_OPENAI_API_KEY", "sk-store-123456")
	code = (
		"from openmolt import OpenMolt\n\n"
		"om = OpenMolt(llm_providers={'openai': {'api_key': 'sk-code-123456'}})\n"
		"agent = om.create_agent(name='a', model='openai:gpt-5-mini', instructions='x')\n"
	)
	loaded = _agent_py(tmp_path, code, "OPENMOLT_OPENAI_API_KEY")
	assert loaded.om.llm_providers["openai"]["api_key"] == "sk-code-123456"
	report = next(r for r in loaded.keys if r.owner == "openai")
	assert report.source == f"{tmp_path / 'agent.py'} (llm_providers['openai']['api_key'])"


def test_an_agent_py_without_a_key_of_its_own_takes_the_environment_s(tmp_path: Path) -> None:
	code = (
		"from openmolt import OpenMolt\n\n"
		"om = OpenMolt()\n"
		"agent = om.create_agent(name='a', model='openai:gpt-5-mini', instructions='x')\n"
	)
	loaded = _agent_py(tmp_path, code)
	assert loaded.om.llm_providers["openai"]["api_key"] == "sk-env-123456"
	report = next(r for r in loaded.keys if r.owner == "openai")
	assert report.source == "environment variable OPENMOLT_OPENAI_API_KEY"


@pytest.mark.parametrize(
	("where", "said"),
	[
		("store", "the key sent came from the key store"),
		("dotenv", "the key sent came from .env (OPENMOLT_OPENAI_API_KEY)"),
		("environment", "the key sent came from environment variable OPENMOLT_OPENAI_API_KEY"),
	],
)
def test_a_rejected_key_is_said_with_the_source_that_gave_it(
	where: str, said: str, tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A 401 names the source of the key sent, and the key store's own command to replace it.

	The provider's message names the variable only ("set a valid key in
	OPENMOLT_OPENAI_API_KEY"): a key from the key store or a ``.env`` file read as if the
	environment had given it, and a new value set elsewhere would change nothing.
	"""
	rejected = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
	httpd = json_server(lambda path, headers, body: (401, rejected))
	threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True).start()
	try:
		path = tmp_path / "agent.json"
		path.write_text(
			json.dumps(
				{
					"name": "a",
					"model": "openai:gpt-5-mini",
					"instructions": "x",
					"llmProviders": {
						"openai": {
							"baseUrl": f"http://127.0.0.1:{httpd.server_address[1]}/v1",
							"maxRetries": 0,
						}
					},
				}
			)
		)
		env = cli.clean_env(OPENMOLT_KEYS_FILE=str(tmp_path / "store" / "keys.json"))
		if where == "store":
			monkeypatch.setenv("OPENMOLT_KEYS_FILE", env["OPENMOLT_KEYS_FILE"])
			_keystore.save("OPENMOLT_OPENAI_API_KEY", "sk-stored-123456")
		elif where == "dotenv":
			(tmp_path / ".env").write_text("OPENMOLT_OPENAI_API_KEY=sk-dotenv-123456\n")
		else:
			env["OPENMOLT_OPENAI_API_KEY"] = "sk-env-123456"
		done = cli.openmolt(str(path), "--input", "hi", cwd=tmp_path, env=env)
	finally:
		httpd.shutdown()
		httpd.server_close()
	error = json.loads(done.stdout)["error"]
	assert "the API key was rejected (401)" in error
	assert said in error
	if where == "store":
		assert f"{tmp_path / 'store' / 'keys.json'}" in error
		assert error.endswith("`openmolt keys set openai` replaces it")
	else:
		assert "keys set" not in error
	assert "123456" not in done.stdout + done.stderr
