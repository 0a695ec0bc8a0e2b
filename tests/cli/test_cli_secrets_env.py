"""Every config key of every integration from the environment, a .env file or the key store."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.cli import _keystore, _run
from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._run import check_ready, load
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.connect import (
	credential_needs,
	env_var,
	environment_config,
	key_of_variable,
)
from openmolt_core.integrations.preflight import config_keys, missing_credentials
from openmolt_core.testing import ScriptedModel, call_tool, finish, mock_http


def _builtins() -> list[str]:
	om = OpenMolt()
	return [
		p.name
		for p in om.plugins.installed()
		if p.group == "integrations"
		and p.distribution in ("openmolt-integrations", "openmolt-core")
	]


@pytest.fixture(autouse=True)
def _no_openmolt_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "store" / "keys.json"))


def test_the_variable_names_follow_one_rule() -> None:
	"""OPENMOLT_<ID>_<KEY>, in upper snake case; the provider keys keep OPENMOLT_<NAME>_API_KEY."""
	assert env_var("slack", "token") == "OPENMOLT_SLACK_TOKEN"
	assert env_var("s3", "secretAccessKey") == "OPENMOLT_S3_SECRET_ACCESS_KEY"
	assert env_var("gmail", "refreshToken") == "OPENMOLT_GMAIL_REFRESH_TOKEN"
	assert env_var("googleDrive") == "OPENMOLT_GOOGLE_DRIVE_API_KEY"
	assert env_var("openai") == "OPENMOLT_OPENAI_API_KEY"
	assert key_of_variable("s3", "OPENMOLT_S3_SECRET_ACCESS_KEY") == "secretAccessKey"
	assert key_of_variable("s3", "OPENMOLT_SLACK_TOKEN") is None
	# a run of capitals is one word, as a person types it (a third-party key like userIDToken)
	assert env_var("x", "userIDToken") == "OPENMOLT_X_USER_ID_TOKEN"
	assert env_var("x", "HTTPSProxy") == "OPENMOLT_X_HTTPS_PROXY"
	assert env_var("x", "oauth2Token") == "OPENMOLT_X_OAUTH2_TOKEN"
	assert env_var("myAPI", "apiKey") == "OPENMOLT_MY_API_API_KEY"


@pytest.mark.parametrize("iid", _builtins())
def test_every_key_of_every_builtin_has_a_variable_that_maps_back(iid: str) -> None:
	"""Each camelCase key a built-in reads round-trips through its variable name."""
	spec = OpenMolt().plugins.integration(iid)
	for key in config_keys(spec):
		if "_" in key:
			continue  # the snake_case spelling of an OAuth2 key: same variable as its camelCase
		assert key_of_variable(iid, env_var(iid, key)) == key


@pytest.mark.parametrize("iid", _builtins())
def test_the_default_credential_of_every_builtin_can_come_from_the_environment(
	iid: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Setting each required key's variable satisfies the check before a run, in Python."""
	spec = OpenMolt().plugins.integration(iid)
	needs = credential_needs(spec, iid)
	if not needs:
		pytest.skip(f"{iid} needs no credential")
	om = OpenMolt()
	model = ScriptedModel([finish(result="x")])
	before = om.create_agent(name="a", model=model, integrations=[iid])
	missing = missing_credentials(before._tools.values())
	for problem in missing:
		for key in problem.keys or problem.alternatives[:1]:
			monkeypatch.setenv(env_var(iid, key), f"value-of-{key}")
	for key in needs[0].keys:  # the API setup's keys (a shop, a region) too
		if key.required:
			monkeypatch.setenv(env_var(iid, key.name), f"value-of-{key.name}")
	after = OpenMolt().create_agent(name="a", model=model, integrations=[iid])
	assert missing_credentials(after._tools.values()) == []


@pytest.mark.parametrize("iid", _builtins())
def test_every_builtin_that_needs_a_key_is_checked_before_the_run(iid: str) -> None:
	"""Without its keys, each built-in's credential is reported before a run, Python tools too.

	Fal and OpenAI Image have no HTTP tools: their key was first missed by the model's first
	tool call, after a paid model call.
	"""
	needs = credential_needs(OpenMolt().plugins.integration(iid), iid)
	if not needs:
		pytest.skip(f"{iid} needs no credential")
	model = ScriptedModel([finish(result="x")])
	agent = OpenMolt().create_agent(name="a", model=model, integrations=[iid])
	missing = missing_credentials(agent._tools.values())
	assert [m.integration for m in missing] == [iid]


def test_code_wins_over_the_environment_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
	"""A key given in code (either spelling) is not replaced by its variable."""
	spec = OpenMolt().plugins.integration("gmail")
	monkeypatch.setenv("OPENMOLT_GMAIL_REFRESH_TOKEN", "env-refresh")
	monkeypatch.setenv("OPENMOLT_GMAIL_CLIENT_ID", "env-client")
	found = environment_config(spec, "gmail", {"refresh_token": "code-refresh"})
	assert found == {"clientId": "env-client"}


@pytest.mark.anyio
@pytest.mark.parametrize("variable", ["OPENMOLT_SLACK_TOKEN", "OPENMOLT_SLACK_BOT_TOKEN"])
async def test_a_slack_agent_signs_with_the_token_from_the_environment(
	monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
	"""Either name of the bot token reaches the Authorization header, never the result.

	OPENMOLT_SLACK_BOT_TOKEN (the issue's own example, Slack's name for it, Discord's and
	Telegram's key) was called a typo of OPENMOLT_SLACK_TOKEN and the run refused.
	"""
	monkeypatch.setenv(variable, "xoxb-from-env")
	om = OpenMolt()
	before = om.create_agent(name="a", model=ScriptedModel([]), integrations=["slack"])
	assert missing_credentials(before._tools.values()) == []
	seen: list[str | None] = []

	def slack(request: httpx.Request) -> httpx.Response:
		seen.append(request.headers.get("Authorization"))
		return httpx.Response(200, json={"ok": True, "channel": "C1", "ts": "1.2"})

	om = OpenMolt(http_client=mock_http(slack))
	model = ScriptedModel(
		[call_tool("slack.postMessage", channel="C1", text="hi"), finish(result="sent")]
	)
	agent = om.create_agent(name="poster", model=model, integrations=["slack"])
	result = await agent.run("post")
	assert result.status == "success"
	assert seen == ["Bearer xoxb-from-env"], result.to_dict()
	assert "xoxb-from-env" not in json.dumps(result.to_dict())


def _slack_file(tmp_path: Path, **slack: str) -> Path:
	path = tmp_path / "agent.json"
	path.write_text(
		json.dumps(
			{
				"name": "Poster",
				"model": "openai:gpt-5-mini",
				"instructions": "Post.",
				"integrations": {"slack": slack} if slack else ["slack"],
				"llmProviders": {"openai": {"apiKey": "sk-file"}},
			}
		)
	)
	return path


def test_the_command_prefers_environment_then_dotenv_then_file_then_store(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Each layer wins over the ones after it, for a key that is not apiKey.

	The key store is the user's default, below the agent file (explicit config): it won over
	the file, so a token once stored replaced the one an agent file names.
	"""
	monkeypatch.chdir(tmp_path)
	_keystore.save("OPENMOLT_SLACK_TOKEN", "from-store")
	bare = _slack_file(tmp_path)
	assert load(str(bare), env_file=None, verbose=False).om.integration_configs["slack"] == {
		"token": "from-store"
	}
	path = _slack_file(tmp_path, token="from-file")
	loaded = load(str(path), env_file=None, verbose=False)
	assert loaded.om.integration_configs["slack"]["token"] == "from-file"
	(tmp_path / ".env").write_text("OPENMOLT_SLACK_TOKEN=from-dotenv\n")
	monkeypatch.delenv("OPENMOLT_SLACK_TOKEN", raising=False)  # undone after the test
	loaded = load(str(path), env_file=None, verbose=False)
	assert loaded.om.integration_configs["slack"]["token"] == "from-dotenv"
	monkeypatch.setenv("OPENMOLT_SLACK_TOKEN", "from-env")
	loaded = load(str(path), env_file=None, verbose=False)
	assert loaded.om.integration_configs["slack"]["token"] == "from-env"
	lines = [r.line() for r in loaded.keys]
	assert "key for integrations.slack.token: from environment variable OPENMOLT_SLACK_TOKEN" in (
		lines
	)
	assert not any("from-" in line for line in lines)  # a source, never a value


def test_the_key_store_is_below_the_file_for_provider_keys_too(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""llmProviders.openai.apiKey in the file wins over `openmolt keys set openai`."""
	monkeypatch.chdir(tmp_path)
	_keystore.save("OPENMOLT_OPENAI_API_KEY", "sk-store")
	path = _slack_file(tmp_path, token="t")  # its llmProviders.openai.apiKey is sk-file
	loaded = load(str(path), env_file=None, verbose=False)
	assert loaded.om.llm_providers["openai"]["api_key"] == "sk-file"
	data = json.loads(path.read_text())
	del data["llmProviders"]
	path.write_text(json.dumps(data))
	loaded = load(str(path), env_file=None, verbose=False)
	assert loaded.om.llm_providers["openai"]["api_key"] == "sk-store"


def test_the_environment_wins_over_an_entry_s_own_credential_config(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The list form's ``credential.config`` is the agent file too: env > .env > it > store.

	The entry's config won over every variable, while --verbose said the variable was used.
	"""
	monkeypatch.chdir(tmp_path)
	file_config = {"accessKeyId": "FILE-ID", "secretAccessKey": "file-secret", "region": "file"}
	entry = {"integration": "s3", "credential": {"type": "aws_sigv4", "config": file_config}}
	path = tmp_path / "agent.json"
	path.write_text(
		json.dumps(
			{
				"name": "a",
				"model": "openai:gpt-5-mini",
				"instructions": "x",
				"integrations": [entry],
				"llmProviders": {"openai": {"apiKey": "sk-file"}},
			}
		)
	)

	def config() -> dict[str, Any]:
		loaded = load(str(path), env_file=None, verbose=False)
		bound = [t for t in loaded.agent._tools.values() if t.integration is not None]
		return dict(bound[0].context.config)

	assert config() == file_config
	_keystore.save("OPENMOLT_S3_REGION", "store-region")
	(tmp_path / ".env").write_text("OPENMOLT_S3_ACCESS_KEY_ID=DOTENV-ID\n")
	monkeypatch.delenv("OPENMOLT_S3_ACCESS_KEY_ID", raising=False)  # undone after the test
	monkeypatch.setenv("OPENMOLT_S3_SECRET_ACCESS_KEY", "env-secret")
	assert config() == {
		"accessKeyId": "DOTENV-ID",
		"secretAccessKey": "env-secret",
		"region": "file",  # the key store fills only what the file does not give
	}


def test_every_missing_key_is_named_at_once_and_an_entry_is_told_to_keep_its_form(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Three integrations without keys: three lines in one go, not one per attempt.

	An entry that chooses its credential type is told to put the key in its own config: the
	{id: config} form it was sent to has no credential type, so X went back to OAuth2.
	"""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	path = tmp_path / "agent.json"
	entries = [{"integration": "x", "credential": {"type": "bearer"}}, "slack", "s3"]
	file = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x", "integrations": entries}
	path.write_text(json.dumps(file))
	assert openmolt_main([str(path), "--input", "x"]) == 2
	lines = capsys.readouterr().err.splitlines()
	assert [line.split()[1] for line in lines] == ["x", "slack", "s3"]
	assert '\'bearerToken\' in "credential": {"config": {...}} of its entry in' in lines[0]
	assert "{id: config}" not in lines[0]
	assert "integrations.slack.token (or integrations.slack.botToken) in" in lines[1]


def test_a_missing_key_names_its_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The check before a run says which variable to set."""
	monkeypatch.chdir(tmp_path)
	loaded = load(str(_slack_file(tmp_path)), env_file=None, verbose=False)
	with pytest.raises(ConfigurationError) as caught:
		check_ready(loaded, strict=True)
	assert "OPENMOLT_SLACK_TOKEN" in str(caught.value)


def test_a_variable_the_integration_does_not_read_is_not_silently_ignored(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""OPENMOLT_SLACK_API_KEY gets a warning that names the variable Slack reads."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_SLACK_API_KEY", "xoxb-wrong-place")
	load(str(_slack_file(tmp_path)), env_file=None, verbose=False)
	err = capsys.readouterr().err
	assert "OPENMOLT_SLACK_API_KEY is set, but slack reads no such key" in err
	assert "OPENMOLT_SLACK_TOKEN" in err
	assert "xoxb-wrong-place" not in err


def test_keys_set_list_remove_and_the_file_modes(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt keys` stores under the variable name, 0600 in a 0700 folder, never printing values."""
	assert openmolt_main(["keys", "set", "slack", "--value", "xoxb-1"]) == 0
	assert openmolt_main(["keys", "set", "s3", "secretAccessKey", "--value", "s3-secret"]) == 0
	assert openmolt_main(["keys", "set", "openai", "--value", "sk-1"]) == 0
	file = _keystore.path()
	assert json.loads(file.read_text()) == {
		"OPENMOLT_OPENAI_API_KEY": "sk-1",
		"OPENMOLT_S3_SECRET_ACCESS_KEY": "s3-secret",
		"OPENMOLT_SLACK_TOKEN": "xoxb-1",
	}
	assert stat.S_IMODE(file.stat().st_mode) == 0o600
	assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
	capsys.readouterr()
	assert openmolt_main(["keys", "list"]) == 0
	listed = capsys.readouterr().out
	assert "OPENMOLT_SLACK_TOKEN" in listed and "xoxb-1" not in listed
	assert openmolt_main(["keys", "path"]) == 0
	assert capsys.readouterr().out.strip() == str(file)
	assert openmolt_main(["keys", "remove", "slack"]) == 0
	assert "OPENMOLT_SLACK_TOKEN" not in json.loads(file.read_text())
	assert openmolt_main(["keys", "remove", "slack"]) == 1
	# The one required secret of the default credential, unless a key is named; a key the
	# integration does not read is refused with the list of those it does.
	assert openmolt_main(["keys", "set", "telegram", "--value", "1:abc"]) == 0
	assert "OPENMOLT_TELEGRAM_BOT_TOKEN" in json.loads(file.read_text())
	assert openmolt_main(["keys", "set", "slack", "apiKey", "--value", "x"]) == 2
	err = capsys.readouterr().err
	assert "slack reads no key 'apiKey'" in err and "token" in err
	# Twilio signs with an API key's secret or the account's auth token: which one is asked.
	assert openmolt_main(["keys", "set", "twilio", "--value", "x"]) == 2
	assert "twilio has several keys" in capsys.readouterr().err
	# An integration named by its extra's spelling is that integration.
	assert openmolt_main(["keys", "set", "google-drive", "refreshToken", "--value", "1//r"]) == 0
	assert openmolt_main(["keys", "set", "open-ai-image", "--value", "sk-x"]) == 2
	assert openmolt_main(["keys", "set", "openai-image", "--value", "sk-img"]) == 0
	stored = json.loads(file.read_text())
	assert stored["OPENMOLT_OPENAI_IMAGE_API_KEY"] == "sk-img"
	assert stored["OPENMOLT_GOOGLE_DRIVE_REFRESH_TOKEN"] == "1//r"


def test_keys_set_says_when_the_environment_or_dotenv_still_wins(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Storing a key that the environment or ./.env also sets: stored, and said that the other
	wins (a run would go on with it); never the value."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-env-123456")
	assert openmolt_main(["keys", "set", "openai", "--value", "sk-store-123456"]) == 0
	err = capsys.readouterr().err
	assert "OPENMOLT_OPENAI_API_KEY is also set in the environment, which wins" in err
	assert "sk-env-123456" not in err and "sk-store-123456" not in err
	monkeypatch.delenv("OPENMOLT_OPENAI_API_KEY")
	(tmp_path / ".env").write_text("OPENMOLT_OPENAI_API_KEY=sk-dotenv-123456\n")
	assert openmolt_main(["keys", "set", "openai", "--value", "sk-store-123456"]) == 0
	assert ".env, which wins over the key store" in capsys.readouterr().err
	(tmp_path / ".env").unlink()
	assert openmolt_main(["keys", "set", "openai", "--value", "sk-store-123456"]) == 0
	assert "wins over the key store" not in capsys.readouterr().err


def test_tools_says_a_dotenv_it_cannot_read(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A .env with a bad line (a run refuses it): `openmolt tools ID` says so, rather than
	showing its keys as unset without a word."""
	monkeypatch.chdir(tmp_path)
	(tmp_path / ".env").write_text("OPENMOLT_SLACK_TOKEN=xoxb-1\nthis is not a line\n")
	assert openmolt_main(["tools", "slack"]) == 0
	said = capsys.readouterr()
	assert "warning: .env:2: not a KEY=value line" in said.err
	assert "xoxb-1" not in said.out + said.err


def test_keys_set_slack_stores_its_token_under_one_name(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""Slack's botToken is another name for its token, not a second key to choose from."""
	assert openmolt_main(["keys", "set", "slack", "--value", "xoxb-1"]) == 0
	assert _keystore.load() == {"OPENMOLT_SLACK_TOKEN": "xoxb-1"}
	assert openmolt_main(["keys", "set", "slack", "botToken", "--value", "xoxb-2"]) == 0
	assert _keystore.load()["OPENMOLT_SLACK_BOT_TOKEN"] == "xoxb-2"
	assert openmolt_main(["keys", "set", "twilio", "--value", "x"]) == 2  # SID and secret pairs
	assert "twilio has several keys" in capsys.readouterr().err


def test_keys_remove_forgets_a_key_under_each_of_its_names(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""`keys remove slack` forgets Slack's token whichever name stored it; Twilio's two secrets
	(of two kinds of account) stay apart."""
	assert openmolt_main(["keys", "set", "OPENMOLT_SLACK_BOT_TOKEN", "--value", "xoxb-1"]) == 0
	assert openmolt_main(["keys", "remove", "slack"]) == 0
	assert "removed OPENMOLT_SLACK_BOT_TOKEN" in capsys.readouterr().out
	assert _keystore.load() == {}
	assert openmolt_main(["keys", "remove", "slack"]) == 1  # nothing left under either name
	assert "OPENMOLT_SLACK_TOKEN is not stored" in capsys.readouterr().err
	for key in ("authToken", "apiKeySecret"):
		assert openmolt_main(["keys", "set", "twilio", key, "--value", f"v-{key}"]) == 0
	assert openmolt_main(["keys", "remove", "twilio", "authToken"]) == 0
	assert _keystore.load() == {"OPENMOLT_TWILIO_API_KEY_SECRET": "v-apiKeySecret"}


def test_keys_set_at_a_prompt_ended_with_ctrl_d_stores_nothing(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Ctrl-D at the hidden prompt is "no value" (exit 2), not an unexpected EOFError (exit 70)."""
	import getpass
	import io

	class Terminal(io.StringIO):
		def isatty(self) -> bool:
			return True

	def eof(prompt: str) -> str:
		raise EOFError

	monkeypatch.setattr("sys.stdin", Terminal())
	monkeypatch.setattr(getpass, "getpass", eof)
	assert openmolt_main(["keys", "set", "slack"]) == 2
	assert "OPENMOLT_SLACK_TOKEN: no value was given; nothing stored" in capsys.readouterr().err
	assert _keystore.load() == {}
	monkeypatch.setattr(getpass, "getpass", lambda prompt: "  xoxb-pasted \n")
	assert openmolt_main(["keys", "set", "slack"]) == 0
	assert _keystore.load() == {"OPENMOLT_SLACK_TOKEN": "xoxb-pasted"}


def test_keys_set_says_what_else_the_credential_needs(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""S3's secret alone does not sign: the key id is asked for; httpRequest needs no key at all."""
	assert openmolt_main(["keys", "set", "s3", "--value", "s3-secret"]) == 0
	err = capsys.readouterr().err
	assert "s3 also needs accessKeyId: `openmolt keys set s3 accessKeyId`" in err
	assert openmolt_main(["keys", "set", "s3", "accessKeyId", "--value", "AKIA1"]) == 0
	assert "also needs" not in capsys.readouterr().err
	assert openmolt_main(["keys", "set", "shopify", "--value", "shpat_1"]) == 0
	assert "shopify also needs shop" in capsys.readouterr().err
	assert openmolt_main(["keys", "set", "httpRequest", "--value", "x"]) == 2
	assert "httpRequest needs no key: it has no credential" in capsys.readouterr().err


def test_tools_id_says_where_each_variable_is_set(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt tools s3` marks each key the command finds (environment, .env, store), no value."""
	monkeypatch.chdir(tmp_path)
	(tmp_path / ".env").write_text("OPENMOLT_S3_ACCESS_KEY_ID=AKIA-dotenv\n")
	monkeypatch.setenv("OPENMOLT_S3_SECRET_ACCESS_KEY", "secret-from-env")
	_keystore.save("OPENMOLT_S3_REGION", "eu-west-1")
	assert openmolt_main(["tools", "s3"]) == 0
	lines = {
		line.split()[0]: line
		for line in capsys.readouterr().out.splitlines()
		if "OPENMOLT_S3_" in line
	}
	assert "required, set in .env " in lines["accessKeyId"]
	assert "required, secret, set in the environment " in lines["secretAccessKey"]
	assert "optional, set in the key store " in lines["region"]
	assert "set in" not in lines["sessionToken"]
	assert not any("AKIA-dotenv" in x or "secret-from-env" in x for x in lines.values())
	# What `keys set` says is still needed counts them too.
	assert openmolt_main(["keys", "set", "s3", "sessionToken", "--value", "t"]) == 0
	assert "also needs" not in capsys.readouterr().err


def test_help_before_a_command_is_the_commands_help(
	capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""`openmolt help tools` is `openmolt tools --help`, not the overview."""
	monkeypatch.chdir(tmp_path)
	with pytest.raises(SystemExit) as exit:
		openmolt_main(["help", "tools"])
	assert exit.value.code == 0
	assert capsys.readouterr().out.startswith("usage: openmolt tools")


@pytest.mark.parametrize(
	("argv", "expected"),
	[
		(["tols"], "no such command 'tols'; did you mean 'tools'?"),
		(["modles"], "no such command 'modles'; did you mean 'models'?"),
		(["lgos"], "no such command 'lgos'; did you mean 'logs'?"),
		(["--versoin"], "no such option '--versoin'; did you mean '--version'?"),
		(["-v"], "-v is a run's --verbose and needs an agent file"),
		(["shedules"], "did you mean 'schedules'?"),
		(["digest"], "no such command or file 'digest'; did you mean 'digest.json'?"),
		(["version"], "no such command or file 'version'; did you mean '--version'?"),
	],
)
def test_a_mistyped_command_gets_a_suggestion(
	argv: list[str],
	expected: str,
	capsys: pytest.CaptureFixture[str],
	tmp_path: Path,
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A word that is neither a command nor a file is not run as a file."""
	monkeypatch.chdir(tmp_path)
	(tmp_path / "digest.json").write_text("{}")
	assert openmolt_main(argv) == 2
	assert expected in capsys.readouterr().err


def test_keys_that_are_all_needed_are_named_with_and(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""S3 needs its key id and its secret: "set A and B", not "set A or B"; an alternative is (or)."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	path = tmp_path / "agent.json"
	for iid, said in (
		(
			"s3",
			"set OPENMOLT_S3_ACCESS_KEY_ID and OPENMOLT_S3_SECRET_ACCESS_KEY (in the environment",
		),
		("gmail", "set OPENMOLT_GMAIL_ACCESS_TOKEN (or OPENMOLT_GMAIL_REFRESH_TOKEN) (in the"),
	):
		agent = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x"}
		path.write_text(json.dumps({**agent, "integrations": [iid], "taintPolicy": "allow"}))
		assert openmolt_main([str(path), "--input", "x"]) == 2
		err = capsys.readouterr().err
		assert said in err, err
		if iid == "s3":
			assert "integrations.s3.accessKeyId and integrations.s3.secretAccessKey in" in err


@pytest.mark.anyio
async def test_config_under_the_extras_spelling_reaches_the_integration() -> None:
	"""google-drive names googleDrive: its config given under that spelling is not dropped."""
	seen: list[str | None] = []

	def drive(request: httpx.Request) -> httpx.Response:
		seen.append(request.headers.get("Authorization"))
		return httpx.Response(200, json={"files": []})

	om = OpenMolt(
		integrations={"google-drive": {"accessToken": "ya29.code"}}, http_client=mock_http(drive)
	)
	model = ScriptedModel([call_tool("googleDrive.listFiles"), finish(result="x")])
	agent = om.create_agent(name="a", model=model, integrations=["google-drive"])
	assert missing_credentials(agent._tools.values()) == []
	assert (await agent.run("list")).status == "success"
	assert seen == ["Bearer ya29.code"]


def test_the_command_reads_keys_for_the_extras_spelling(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""An agent file naming google-drive gets googleDrive's keys from the key store."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	_keystore.save("OPENMOLT_GOOGLE_DRIVE_REFRESH_TOKEN", "1//stored")
	_keystore.save("OPENMOLT_GOOGLE_DRIVE_CLIENT_ID", "id.apps.googleusercontent.com")
	path = tmp_path / "agent.json"
	agent_file = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x"}
	path.write_text(json.dumps({**agent_file, "integrations": ["google-drive"]}))
	code = openmolt_main([str(path), "--dry-run"])
	err = capsys.readouterr().err
	assert code == 0, err
	assert "needs config" not in err


def test_a_variable_of_another_credential_type_alone_is_used(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""OPENMOLT_X_BEARER_TOKEN alone, X's first type is OAuth2: bearer is used, in Python and in an
	agent file that names no credential type (it used to be refused, pointing to the type)."""
	monkeypatch.setenv("OPENMOLT_X_BEARER_TOKEN", "AAAA-app-only")
	agent = OpenMolt().create_agent(name="a", model=ScriptedModel([]), integrations=["x"])
	assert missing_credentials(agent._tools.values()) == []
	chosen = [{"integration": "x", "credential": {"type": "bearer"}}]
	agent = OpenMolt().create_agent(name="a", model=ScriptedModel([]), integrations=chosen)
	assert missing_credentials(agent._tools.values()) == []
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	path = tmp_path / "agent.json"
	file = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x", "integrations": ["x"]}
	path.write_text(json.dumps(file))
	assert openmolt_main([str(path), "--dry-run"]) == 0
	err = capsys.readouterr().err
	assert "needs config" not in err and "a typo" not in err


def test_a_variable_of_another_credential_type_is_pointed_to_when_the_first_is_partly_given(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A client id for X's OAuth2 and a bearer token: which one was meant is the entry's to say
	(neither is guessed); the message points to the type that is ready."""
	monkeypatch.setenv("OPENMOLT_X_BEARER_TOKEN", "AAAA-app-only")
	monkeypatch.setenv("OPENMOLT_X_CLIENT_ID", "client-123456")
	agent = OpenMolt().create_agent(name="a", model=ScriptedModel([]), integrations=["x"])
	(problem,) = missing_credentials(agent._tools.values())
	assert problem.credential == "oauth2" and problem.ready == ("bearer",)
	assert "choose it with 'credential': {'type': 'bearer'}" in problem.describe()


@pytest.mark.parametrize(
	("typed", "meant"),
	[
		("OPENMOLT_SLAK_TOKEN", "OPENMOLT_SLACK_TOKEN"),
		("OPENMOLT_SLACK_TOKN", "OPENMOLT_SLACK_TOKEN"),
		("OPENMOLT_SLACK_BOTTOKEN", "OPENMOLT_SLACK_BOT_TOKEN"),
	],
)
def test_a_secret_set_under_a_near_name_is_pointed_out(
	tmp_path: Path, cli, typed: str, meant: str
) -> None:
	"""The missing token's message names the near variable that is set, and the one it is near."""
	path = tmp_path / "agent.json"
	path.write_text(
		json.dumps(
			{
				"name": "D",
				"model": "openai:gpt-5-mini",
				"instructions": "x",
				"integrations": ["slack"],
			}
		)
	)
	env = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-x", **{typed: "xoxb-1"})
	done = cli.openmolt(str(path), cwd=tmp_path, env=env)
	assert done.returncode == 2
	assert f"({typed} is set: a typo of {meant}?)" in done.stderr
	assert "xoxb-1" not in done.stderr


def test_a_provider_key_set_under_a_near_name_is_pointed_out(tmp_path: Path, cli) -> None:
	"""OPENMOLT_OPENAI_APIKEY (a file, early) and OPENMOLT_OPEANI_API_KEY (-m) are named."""
	path = tmp_path / "agent.json"
	path.write_text(json.dumps({"name": "D", "model": "openai:gpt-5-mini", "instructions": "x"}))
	early = cli.openmolt(str(path), cwd=tmp_path, env=cli.clean_env(OPENMOLT_OPENAI_APIKEY="sk-1"))
	assert early.returncode == 2
	assert early.stderr.endswith(
		"(OPENMOLT_OPENAI_APIKEY is set: a typo of OPENMOLT_OPENAI_API_KEY?)\n"
	)
	prompt = cli.openmolt(
		"-m",
		"openai:gpt-5-mini",
		"hi",
		cwd=tmp_path,
		env=cli.clean_env(OPENMOLT_OPEANI_API_KEY="k"),
	)
	assert prompt.returncode == 2
	assert "(OPENMOLT_OPEANI_API_KEY is set: a typo of OPENMOLT_OPENAI_API_KEY?)" in prompt.stderr


def test_another_integration_s_variable_is_not_called_a_typo(
	tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The openaiImage integration's key is not a typo of the openai provider's, early or not."""
	from openmolt_core.cli._early import near_variable

	path = tmp_path / "agent.json"
	path.write_text(json.dumps({"name": "D", "model": "openai:gpt-5-mini", "instructions": "x"}))
	env = cli.clean_env(OPENMOLT_OPENAI_IMAGE_API_KEY="sk-1")
	early = cli.openmolt(str(path), cwd=tmp_path, env=env)
	prompt = cli.openmolt("-m", "openai:gpt-5-mini", "hi", cwd=tmp_path, env=env)
	for done in (early, prompt):
		assert done.returncode == 2
		assert "no API key for openai: set OPENMOLT_OPENAI_API_KEY" in done.stderr
		assert "a typo" not in done.stderr
	# The other way round: the provider's key set, the integration's missing (an -m run).
	both = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-1")
	image = cli.openmolt(
		"-m", "openai:gpt-5-mini", "--integration", "openaiImage", "hi", cwd=tmp_path, env=both
	)
	assert image.returncode == 2
	assert "set OPENMOLT_OPENAI_IMAGE_API_KEY" in image.stderr
	assert "a typo" not in image.stderr
	assert (
		near_variable(["OPENMOLT_OPENAI_IMAGE_API_KEY"], owners=["openai", "openaiImage"]) is None
	)
	monkeypatch.setenv("OPENMOLT_OPENAI_IMAGE_API_KY", "x")  # a typo of openaiImage's own
	assert near_variable(["OPENMOLT_OPENAI_IMAGE_API_KEY"], owners=["openai", "openaiImage"]) == (
		"OPENMOLT_OPENAI_IMAGE_API_KY",
		"OPENMOLT_OPENAI_IMAGE_API_KEY",
	)
	monkeypatch.setenv("OPENMOLT_SLACK_ACCESS_TOKEN", "x")
	assert near_variable(["OPENMOLT_DISCORD_ACCESS_TOKEN"], owners=["discord", "slack"]) is None
	assert near_variable(["OPENMOLT_DISCORD_ACCESS_TOKEN"]) is None  # the installed ones
	monkeypatch.setenv("OPENMOLT_DISCORD_ACCES_TOKEN", "x")  # a typo of discord's own
	assert near_variable(["OPENMOLT_DISCORD_ACCESS_TOKEN"], owners=["discord", "slack"]) == (
		"OPENMOLT_DISCORD_ACCES_TOKEN",
		"OPENMOLT_DISCORD_ACCESS_TOKEN",
	)


def test_a_typo_is_taken_for_the_variable_it_is_closest_to(monkeypatch: pytest.MonkeyPatch) -> None:
	"""OPENMOLT_SLACK_BOT_TOKN is a typo of ..._BOT_TOKEN, not of ..._TOKEN listed before it."""
	from openmolt_core.cli._early import near_variable

	for variable in [v for v in os.environ if v.startswith("OPENMOLT_")]:
		monkeypatch.delenv(variable)
	monkeypatch.setenv("OPENMOLT_SLACK_BOT_TOKN", "xoxb-1")
	wanted = ["OPENMOLT_SLACK_TOKEN", "OPENMOLT_SLACK_BOT_TOKEN"]
	assert near_variable(wanted, owners=["slack"]) == (
		"OPENMOLT_SLACK_BOT_TOKN",
		"OPENMOLT_SLACK_BOT_TOKEN",
	)


def test_keys_set_for_an_installed_integration_that_cannot_load_says_why(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Not "neither a provider nor an installed integration": the plugin's own load error."""
	from openmolt_core.errors import PluginError
	from openmolt_core.plugins import Plugins

	def broken(self: Plugins, id: str) -> Any:
		raise PluginError(
			f"the integrations of openmolt-{id} could not be loaded: ImportError: x", plugin=id
		)

	monkeypatch.setattr(Plugins, "integration", broken)
	monkeypatch.setattr(Plugins, "integration_ids", lambda self: ["slack"])
	assert openmolt_main(["keys", "set", "slack"]) != 0
	err = capsys.readouterr().err
	assert "could not be loaded: ImportError" in err
	assert "nor an installed integration" not in err


def test_config_the_tools_read_is_shown_checked_and_named(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""WhatsApp's phoneNumberId (read by its tools' URLs, not its credential) is a field too.

	`openmolt tools whatsapp` did not list it, nothing said it was missing before the run, and
	the first send failed with "a value in the URL path is empty" after a paid model call.
	"""
	needs = credential_needs(OpenMolt().plugins.integration("whatsapp"), "whatsapp")
	keys = {k.name: k for k in needs[0].keys}
	assert keys["phoneNumberId"].env_var == "OPENMOLT_WHATSAPP_PHONE_NUMBER_ID"
	assert keys["wabaId"].required is False
	s3 = credential_needs(OpenMolt().plugins.integration("s3"), "s3")
	assert "forcePathStyle" in {k.name for k in s3[0].keys}
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	monkeypatch.setenv("OPENMOLT_WHATSAPP_ACCESS_TOKEN", "EAAG-test")
	path = tmp_path / "agent.json"
	file = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x"}
	path.write_text(json.dumps({**file, "integrations": ["whatsapp"]}))
	assert openmolt_main([str(path), "--dry-run"]) == 0
	err = capsys.readouterr().err
	assert (
		"need config 'phoneNumberId', which is not set: set OPENMOLT_WHATSAPP_PHONE_NUMBER_ID"
		in (err)
	)
	assert "EAAG-test" not in err


@pytest.mark.anyio
async def test_a_tool_whose_url_lacks_its_config_names_the_variable() -> None:
	"""The tool's error names the key and its variable, not an empty path segment."""
	sent: list[str] = []

	def whatsapp(request: httpx.Request) -> httpx.Response:
		sent.append(str(request.url))
		return httpx.Response(200, json={"messages": [{"id": "m1"}]})

	om = OpenMolt(
		http_client=mock_http(whatsapp), integrations={"whatsapp": {"accessToken": "EAAG-test"}}
	)
	model = ScriptedModel([call_tool("whatsapp.sendText", to="123", body="hi"), finish(result="x")])
	agent = om.create_agent(name="a", model=model, integrations=["whatsapp"])
	responses: list[Any] = []
	agent.on("tool:response", responses.append)
	await agent.run("go")
	assert sent == []
	message = responses[0].response["message"]
	assert "needs config 'phoneNumberId'" in message
	assert "OPENMOLT_WHATSAPP_PHONE_NUMBER_ID" in message


def test_config_a_python_tool_reads_comes_from_the_environment_too(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""OpenAI Image's organization, project and baseUrl (read by its Python tools) have variables.

	They were read nowhere but in code: OPENMOLT_OPENAI_IMAGE_ORGANIZATION was "reads no such
	key", and `openmolt tools openaiImage` listed only apiKey.
	"""
	monkeypatch.setenv("OPENMOLT_OPENAI_IMAGE_API_KEY", "sk-image")
	monkeypatch.setenv("OPENMOLT_OPENAI_IMAGE_ORGANIZATION", "org-1")
	monkeypatch.setenv("OPENMOLT_OPENAI_IMAGE_PROJECT", "proj-1")
	agent = OpenMolt().create_agent(name="a", model=ScriptedModel([]), integrations=["openaiImage"])
	(tool, *_) = [t for t in agent._tools.values() if t.integration is not None]
	assert tool.context.config["organization"] == "org-1"
	assert tool.context.config["project"] == "proj-1"
	needs = credential_needs(OpenMolt().plugins.integration("openaiImage"), "openaiImage")
	assert {"baseUrl", "organization", "project"} <= {k.name for k in needs[0].keys}


@pytest.mark.parametrize("key", ["secretAccessKey", "secret_access_key", "SECRET_ACCESS_KEY"])
def test_keys_set_takes_a_key_in_any_spelling(key: str) -> None:
	"""The variable's own spelling of the key (SECRET_ACCESS_KEY) names the same key."""
	assert openmolt_main(["keys", "set", "s3", key, "--value", "s"]) == 0
	assert _keystore.load() == {"OPENMOLT_S3_SECRET_ACCESS_KEY": "s"}


def test_a_python_agent_file_reads_the_key_store_too(tmp_path: Path, server, cli) -> None:
	"""agent.py binds its integrations as it runs: `openmolt keys set slack` reaches it.

	The message for a missing key says "`openmolt keys set`", but a Python file's agent never
	saw the store: only the environment and .env were read.
	"""
	(tmp_path / "agent.py").write_text(
		"from openmolt import OpenMolt\n"
		f"om = OpenMolt(llm_providers={{'openai': {{'base_url': {server.url!r}}}}})\n"
		"agent = om.create_agent(name='P', model='openai:greet', instructions='Greet.',"
		" integrations=['slack'])\n"
	)
	store = tmp_path / "keys.json"
	env = cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_KEYS_FILE": str(store)})
	assert (
		cli.openmolt(
			"keys", "set", "slack", "--value", "xoxb-stored", cwd=tmp_path, env=env
		).returncode
		== 0
	)
	done = cli.openmolt("agent.py", "--input", "Ada", cwd=tmp_path, env=env)
	assert done.returncode == 0, done.stderr
	assert "xoxb-stored" not in done.stderr + done.stdout


def test_a_refresh_token_without_its_client_id_is_said_before_the_run(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Gmail with only OPENMOLT_GMAIL_REFRESH_TOKEN: the refresh would go without a client id,
	which Google refuses; the check names OPENMOLT_GMAIL_CLIENT_ID instead of a failed run."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	monkeypatch.setenv("OPENMOLT_GMAIL_REFRESH_TOKEN", "1//refresh")
	path = tmp_path / "agent.json"
	agent_file = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x"}
	path.write_text(json.dumps({**agent_file, "integrations": ["gmail"]}))
	with pytest.raises(ConfigurationError) as caught:
		check_ready(load(str(path), env_file=None, verbose=False), strict=True)
	assert "OPENMOLT_GMAIL_CLIENT_ID" in str(caught.value)
	assert "1//refresh" not in str(caught.value)
	monkeypatch.setenv("OPENMOLT_GMAIL_CLIENT_ID", "id.apps.googleusercontent.com")
	assert check_ready(load(str(path), env_file=None, verbose=False), strict=True) == []


def test_config_every_tool_of_the_agent_needs_is_refused_before_the_run(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""WhatsApp scoped to send: each of its tools needs phoneNumberId, so none could work.

	Some tools lacking a key is a warning (the agent may call others); all of them is a missing
	credential, refused before a model call is paid for.
	"""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	monkeypatch.setenv("OPENMOLT_WHATSAPP_ACCESS_TOKEN", "EAAG-test")
	path = tmp_path / "agent.json"
	file = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x"}
	scoped = [{"integration": "whatsapp", "scopes": ["send"]}]
	path.write_text(json.dumps({**file, "integrations": scoped}))
	assert openmolt_main([str(path), "--input", "hi"]) == 2
	err = capsys.readouterr().err
	assert "every tool the agent has from whatsapp (whatsapp.sendText" in err
	assert "OPENMOLT_WHATSAPP_PHONE_NUMBER_ID" in err and "warning" not in err
	path.write_text(json.dumps({**file, "integrations": ["whatsapp"]}))  # every tool: some work
	loaded = load(str(path), env_file=None, verbose=False)
	assert check_ready(loaded, strict=True) == []
	assert "openmolt: warning: whatsapp's tools" in capsys.readouterr().err


def test_a_provider_instance_reads_the_variables_the_command_names(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A camelCase instance name: Python and the command agree on OPENMOLT_MY_LOCAL_* (the
	provider read OPENMOLT_MYLOCAL_API_KEY while the command named OPENMOLT_MY_LOCAL_API_KEY)."""
	monkeypatch.setenv("OPENMOLT_MY_LOCAL_API_KEY", "sk-local-123456")
	monkeypatch.setenv("OPENMOLT_MY_LOCAL_BASE_URL", "http://127.0.0.1:9/v1")
	provider = OpenMolt(llm_providers={"myLocal": {"provider": "openai"}}).provider("myLocal")
	assert provider.env_var == env_var("myLocal") == "OPENMOLT_MY_LOCAL_API_KEY"
	assert provider.base_url == "http://127.0.0.1:9/v1"
	assert provider.api_key() == "sk-local-123456"


def _rotating_x(tmp_path: Path) -> tuple[Any, Any, list[bytes]]:
	"""An X agent file loaded as the command loads it, its token endpoint a mock that rotates:
	the loaded file, its OAuth2 credential, the token requests' bodies."""
	path = tmp_path / "agent.json"
	file = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x"}
	path.write_text(json.dumps({**file, "integrations": ["x"]}))
	loaded = load(str(path), env_file=None, verbose=False)
	(auth,) = {id(t.context.auth): t.context.auth for t in loaded.agent._tools.values()}.values()

	sent: list[bytes] = []

	def token(request: httpx.Request) -> httpx.Response:  # each refresh rotates the token
		sent.append(request.content)
		reply = {
			"access_token": f"access-{len(sent)}",
			"refresh_token": f"refresh-{len(sent)}",
			"expires_in": 7200,
		}
		return httpx.Response(200, json=reply)

	auth.http = lambda: httpx.AsyncClient(transport=httpx.MockTransport(token))
	return loaded, auth, sent


def _x_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""What every X test runs in: its folder, a provider key and X's client id."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	monkeypatch.setenv("OPENMOLT_X_CLIENT_ID", "client")


def _watched_x(tmp_path: Path) -> tuple[Any, list[str], list[bytes]]:
	"""`_rotating_x` (loading watches it); what the watch says is kept in a list."""
	loaded, auth, sent = _rotating_x(tmp_path)
	said: list[str] = []
	loaded.say = said.append
	return auth, said, sent


@pytest.mark.anyio
async def test_a_rotated_refresh_token_is_kept_in_the_key_store_it_came_from(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""X's refresh tokens are single-use: the key store's is replaced by the new one, unsaid."""
	_x_run(tmp_path, monkeypatch)
	_keystore.save("OPENMOLT_X_REFRESH_TOKEN", "old-refresh")
	auth, said, sent = _watched_x(tmp_path)
	assert await auth.token() == "access-1"
	assert b"refresh_token=old-refresh" in sent[0]
	assert _keystore.load()["OPENMOLT_X_REFRESH_TOKEN"] == "refresh-1"
	assert await auth.token(stale="access-1") == "access-2"  # and again: the newest is kept
	assert b"refresh_token=refresh-1" in sent[1]
	assert _keystore.load()["OPENMOLT_X_REFRESH_TOKEN"] == "refresh-2"
	assert said == []


@pytest.mark.anyio
async def test_agents_of_one_process_that_read_one_key_share_its_rotated_token(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Two agent files (two instances, as ``openmolt serve`` loads them) read X's refresh token
	from the key store: once one refreshes, the other sends the new token, not the refused one."""
	_x_run(tmp_path, monkeypatch)
	_keystore.save("OPENMOLT_X_REFRESH_TOKEN", "old-refresh")
	(one := tmp_path / "one").mkdir()
	(two := tmp_path / "two").mkdir()
	_, first, sent_first = _rotating_x(one)
	_, second, sent_second = _rotating_x(two)
	assert await first.token() == "access-1"
	assert b"refresh_token=old-refresh" in sent_first[0]
	await second.token()
	assert b"refresh_token=refresh-1" in sent_second[0]  # the first's new token
	# each mock numbers its own replies: the second's first new token is refresh-1 too
	assert _keystore.load()["OPENMOLT_X_REFRESH_TOKEN"] == "refresh-1"


def _single_use_endpoint(spent: list[str]) -> Any:
	"""An X token endpoint that refuses a refresh token spent before (as X does) and takes its
	time, so two refreshes overlap; ``spent`` lists the tokens in the order they came."""
	import re

	async def token(request: httpx.Request) -> httpx.Response:
		given = re.search(r"refresh_token=([^&]+)", request.content.decode())
		assert given is not None
		if given[1] in spent:
			return httpx.Response(400, json={"error": "invalid_grant"})
		spent.append(given[1])
		await anyio.sleep(0.2)
		n = len(spent)
		reply = {"access_token": f"access-{n}", "refresh_token": f"refresh-{n}", "expires_in": 7200}
		return httpx.Response(200, json=reply)

	return lambda: httpx.AsyncClient(transport=httpx.MockTransport(token))


@pytest.mark.anyio
async def test_runs_sharing_the_key_store_never_spend_one_refresh_token_twice(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Two servers (two processes, or two instances of one) load X's refresh token from the key
	store and refresh at once: the second waited for the first's lock and spends the new token.

	Both sent the old one before (the second was refused: X's tokens are single-use), and a
	server that loaded the store before another process rotated the token sent the stale one.
	"""
	_x_run(tmp_path, monkeypatch)
	_keystore.save("OPENMOLT_X_REFRESH_TOKEN", "old-refresh")
	(one := tmp_path / "one").mkdir()
	(two := tmp_path / "two").mkdir()
	_, first, _ = _rotating_x(one)
	_, second, _ = _rotating_x(two)
	spent: list[str] = []
	first.http = second.http = _single_use_endpoint(spent)
	tokens: list[str] = []

	async def use(auth: Any) -> None:
		tokens.append(await auth.token())

	async with anyio.create_task_group() as tg:
		tg.start_soon(use, first)
		tg.start_soon(use, second)
	assert spent == ["old-refresh", "refresh-1"]
	assert sorted(tokens) == ["access-1", "access-2"]
	assert _keystore.load()["OPENMOLT_X_REFRESH_TOKEN"] == "refresh-2"
	# Another process rotates the token while this one is loaded: the stale one is never sent.
	_, third, _ = _rotating_x(tmp_path)
	third.http = _single_use_endpoint(spent)
	_keystore.save("OPENMOLT_X_REFRESH_TOKEN", "rotated-elsewhere")
	assert await third.token() == "access-3"
	assert spent[-1] == "rotated-elsewhere"
	assert _keystore.load()["OPENMOLT_X_REFRESH_TOKEN"] == "refresh-3"


def test_the_key_store_loses_no_value_written_at_once(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Each change is read, made and written under the store's lock: writers of different
	variables at once (a rotated token kept while `keys set` stores a key) keep both."""
	import threading

	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "keys.json"))
	names = [f"OPENMOLT_ACME_KEY_{i}" for i in range(40)]
	threads = [threading.Thread(target=_keystore.save, args=(n, f"v{n}")) for n in names]
	for thread in threads:
		thread.start()
	for thread in threads:
		thread.join()
	assert _keystore.load() == {n: f"v{n}" for n in names}
	assert repr(_keystore.RefreshTokens({"refreshToken": "OPENMOLT_X_REFRESH_TOKEN"})) == (
		"RefreshTokens(['OPENMOLT_X_REFRESH_TOKEN'])"
	)


@pytest.mark.anyio
async def test_a_rotated_refresh_token_from_the_environment_is_said_never_shown(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The environment's refresh token cannot be rewritten: the run says where it came from and
	how to let the command keep tokens, without a value; the key store is left alone."""
	_x_run(tmp_path, monkeypatch)
	monkeypatch.setenv("OPENMOLT_X_REFRESH_TOKEN", "old-refresh")
	auth, said, _ = _watched_x(tmp_path)
	assert await auth.token() == "access-1"
	(line,) = said
	assert "x sent a new refresh token" in line
	assert "environment variable OPENMOLT_X_REFRESH_TOKEN" in line
	assert "`openmolt auth x`" in line
	assert "refresh-1" not in line and "old-refresh" not in line
	assert "OPENMOLT_X_REFRESH_TOKEN" not in _keystore.load()
	await auth.token(stale="access-1")  # said once a run
	assert len(said) == 1


@pytest.mark.anyio
async def test_every_program_that_loads_an_agent_file_watches_the_refresh_tokens_it_gave(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Loading the file attaches the watch (``openmolt serve``, ``ui`` and ``worker`` load it
	through `openmolt_core.agentfile.load`): the key store's token is kept with no command
	around it, and what cannot be kept is a Python warning (the command prints it as a line)."""
	from openmolt_core import agentfile

	_x_run(tmp_path, monkeypatch)
	_keystore.save("OPENMOLT_X_REFRESH_TOKEN", "old-refresh")
	assert agentfile.load is load  # `_rotating_x` loads as the siblings do
	_, auth, _ = _rotating_x(tmp_path)
	await auth.token()
	assert _keystore.load()["OPENMOLT_X_REFRESH_TOKEN"] == "refresh-1"
	_keystore.remove("OPENMOLT_X_REFRESH_TOKEN")
	monkeypatch.setenv("OPENMOLT_X_REFRESH_TOKEN", "old-refresh")
	_, auth, _ = _rotating_x(tmp_path)
	with pytest.warns(UserWarning, match="new refresh token") as warned:
		await auth.token()
	(said,) = [str(w.message) for w in warned if "new refresh token" in str(w.message)]
	assert "OPENMOLT_X_REFRESH_TOKEN" in said and "refresh-1" not in said


@pytest.mark.anyio
async def test_the_command_s_runs_and_schedules_say_it_on_their_progress_line(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""`run_once` and `serve` (schedules) point the watch's words at the progress stream."""
	import io

	import anyio

	from openmolt_core.cli._progress import Progress

	_x_run(tmp_path, monkeypatch)
	monkeypatch.setenv("OPENMOLT_X_REFRESH_TOKEN", "old-refresh")
	loaded, auth, _ = _rotating_x(tmp_path)
	stream = io.StringIO()
	loaded.say = Progress("plain", stream).line
	await auth.token()
	assert "openmolt: warning: x sent a new refresh token" in stream.getvalue()
	# Each drive points it at its own progress: a run, and schedules served until stopped.
	agent = OpenMolt(entry_points=False).create_agent(name="A", model=ScriptedModel([finish("ok")]))
	once = _run.Loaded(agent, "scripted", None)
	progress = Progress("plain", io.StringIO())
	assert await _run.run_once(once, "hi", progress) == 0
	assert once.say == progress.line
	hourly = _run.Loaded(agent, "scripted", None, schedules=[{"type": "interval", "value": 3600}])
	progress = Progress("plain", io.StringIO())
	with anyio.move_on_after(0.3):
		await _run.serve(hourly, None, progress, on_stop="finish")
	assert hourly.say == progress.line


@pytest.mark.parametrize(
	("integration", "variable", "meant"),
	[
		("github", "OPENMOLT_GITHUB_TOKEN", "OPENMOLT_GITHUB_API_KEY"),
		("notion", "OPENMOLT_NOTION_TOKEN", "OPENMOLT_NOTION_API_KEY"),
		("slack", "OPENMOLT_SLACK_API_KEY", "OPENMOLT_SLACK_TOKEN"),
	],
)
def test_a_variable_not_read_names_the_one_meant_first(
	integration: str,
	variable: str,
	meant: str,
	tmp_path: Path,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""OPENMOLT_GITHUB_TOKEN (GitHub's own habit) was answered with all eight variables GitHub
	reads, OAuth's AUTH_URL and EXPIRY_DATE among them, the one meant somewhere in the middle:
	the warning names the variable of the default credential's secret, then where the others are
	listed, in one short line."""
	monkeypatch.chdir(tmp_path)
	for name in list(os.environ):
		if name.startswith(f"OPENMOLT_{integration.upper()}_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv(variable, "not-read-here")
	path = tmp_path / "agent.json"
	agent = {"name": "A", "model": "openai:gpt-5-mini", "integrations": [integration]}
	path.write_text(json.dumps(agent))
	load(str(path), env_file=None, verbose=False)
	warning = [line for line in capsys.readouterr().err.splitlines() if variable in line]
	assert len(warning) == 1, warning
	assert f"did you mean {meant}?" in warning[0], warning[0]
	assert f"`openmolt tools {integration}` lists every key it reads" in warning[0]
	assert "AUTH_URL" not in warning[0] and len(warning[0]) < 200, warning[0]
