"""``openmolt auth``: sign in through the browser, list and revoke, never printing a token."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet

from openmolt_core.cli import main
from openmolt_core.cli._exit import ExitCode
from openmolt_core.credstore import EncryptedFileStore
from openmolt_core.integrations import ApiSetup, HttpTool, Integration, OAuth2Credential


def _load_fake_server() -> Any:
	# The authorization server the core's flow tests use (tests/core/integrations/_fake_oauth.py).
	path = Path(__file__).parents[1] / "core" / "integrations" / "_fake_oauth.py"
	spec = importlib.util.spec_from_file_location("openmolt_test_fake_oauth", path)
	assert spec is not None and spec.loader is not None
	module = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(module)
	return module.FakeAuthServer


FakeAuthServer = _load_fake_server()


@pytest.fixture
def auth_server() -> Iterator[Any]:
	srv = FakeAuthServer()
	yield srv
	srv.close()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auth_server: Any) -> Path:
	"""A credential file and key of the test's own, and a ``mail`` integration at the fake server."""
	path = tmp_path / "credentials.enc"
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(path))
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_KEY", Fernet.generate_key().decode())
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "keys.json"))
	monkeypatch.setitem(sys.modules, "keyring", None)
	spec = Integration(
		id="mail",
		name="Mail",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=[
			OAuth2Credential(
				type="oauth2",
				auth_url=f"{auth_server.url}/authorize",
				token_url=f"{auth_server.url}/token",
				client_id="{{ config.clientId }}",
				client_secret="{{ config.clientSecret }}",
				refresh_token="{{ config.refreshToken }}",
				scopes=["offline", "mail.read", "mail.send"],
				scope_map={"read": ["mail.read"], "send": ["mail.send"]},
				pkce="required",
				device_url=f"{auth_server.url}/device",
			)
		],
		scopes={"read": "read", "send": "send"},
		tools=[HttpTool(handle="me", description="d", endpoint="/me", scopes=["read"])],
	)
	from openmolt_core.plugins import Plugins

	real = Plugins.integration

	def integration(self: Any, id: str) -> Integration:
		return spec if id == "mail" else real(self, id)

	monkeypatch.setattr(Plugins, "integration", integration)
	return path


def _browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
	opened: list[str] = []

	def open_url(url: str) -> bool:
		opened.append(url)
		with httpx.Client(trust_env=False, follow_redirects=True) as client:
			assert client.get(url).status_code == 200
		return True

	import webbrowser

	monkeypatch.setattr(webbrowser, "open", open_url)
	return opened


def test_sign_in_stores_encrypted_tokens_and_prints_none(
	env: Path,
	auth_server: Any,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""The browser flow ends with the tokens in the store; nothing printed holds a token."""
	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_SECRET", "csecret-abcdef")
	opened = _browser(monkeypatch)
	code = main(["auth", "mail", "--client-id", "cid-123", "--scopes", "send"])
	out, err = capsys.readouterr()
	assert code == ExitCode.SUCCESS, err
	assert len(opened) == 1 and auth_server.authorize_requests[0]["scope"] == "offline mail.send"
	stored = EncryptedFileStore(env).load("mail")
	assert stored is not None
	assert stored["clientId"] == "cid-123" and stored["clientSecret"] == "csecret-abcdef"
	for secret in (stored["accessToken"], stored["refreshToken"], "csecret-abcdef"):
		assert secret not in out + err
		assert secret.encode() not in env.read_bytes()
	assert "Signed in to mail (with a refresh token)" in err

	assert main(["auth", "list", "--json"]) == ExitCode.SUCCESS
	listed_text = capsys.readouterr().out
	(row,) = json.loads(listed_text)
	assert row["integration"] == "mail" and row["user"] is None and row["refreshToken"] is True
	assert stored["accessToken"] not in listed_text and stored["refreshToken"] not in listed_text

	assert main(["auth", "revoke", "mail"]) == ExitCode.SUCCESS
	assert EncryptedFileStore(env).load("mail") is None
	assert main(["auth", "revoke", "mail"]) == ExitCode.USAGE
	assert "no stored sign-in" in capsys.readouterr().err


def test_an_agent_file_gives_the_scopes(
	env: Path,
	auth_server: Any,
	tmp_path: Path,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""--agent: the agent file's scopes for the integration choose the OAuth scopes."""
	agent = tmp_path / "agent.json"
	agent.write_text(
		json.dumps(
			{
				"name": "a",
				"model": "openai:gpt-5-mini",
				"integrations": [{"integration": "mail", "scopes": ["read"]}],
			}
		)
	)
	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_ID", "cid-123")
	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_SECRET", "csecret-abcdef")
	_browser(monkeypatch)
	assert main(["auth", "mail", "--agent", str(agent)]) == ExitCode.SUCCESS, capsys.readouterr()
	assert auth_server.authorize_requests[0]["scope"] == "offline mail.read"


def test_bad_input_is_named(
	env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""An unknown tool scope, a bad --set, an integration without OAuth: errors naming the fix."""
	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_ID", "cid-123")
	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_SECRET", "csecret-abcdef")
	assert main(["auth", "mail", "--scopes", "delete"]) == ExitCode.USAGE
	assert "unknown scope(s) ['delete']" in capsys.readouterr().err
	assert main(["auth", "mail", "--set", "novalue"]) == ExitCode.USAGE
	assert "--set 'novalue'" in capsys.readouterr().err
	assert main(["auth", "mail", "--set", "clientSecret=cs-on-the-line"]) == ExitCode.USAGE
	err = capsys.readouterr().err
	assert "OPENMOLT_MAIL_CLIENT_SECRET" in err and "cs-on-the-line" not in err
	for named in ("keyPassphrase", "githubPat", "sentryDsn"):  # the one rule: `secret_name`
		assert main(["auth", "mail", "--set", f"{named}=on-the-line-1"]) == ExitCode.USAGE
		assert "never taken on the command line" in capsys.readouterr().err
	assert main(["auth", "httpRequest"]) == ExitCode.USAGE
	assert "no oauth2 credential" in capsys.readouterr().err


def test_nothing_given_at_a_prompt_names_where_else_it_can_come_from(
	env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""An empty client id or secret at the prompt names the option or variable that gives it;
	an empty paste of the redirect is "nothing pasted", not a forged state."""
	import io

	from openmolt_core.errors import ConfigurationError
	from openmolt_core.integrations.oauth import code_from_redirect

	monkeypatch.delenv("OPENMOLT_MAIL_CLIENT_ID", raising=False)
	monkeypatch.delenv("OPENMOLT_MAIL_CLIENT_SECRET", raising=False)
	monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
	assert main(["auth", "mail", "--no-browser"]) == ExitCode.USAGE
	err = capsys.readouterr().err
	assert "client id: nothing given; give it with --client-id or OPENMOLT_MAIL_CLIENT_ID" in err
	monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
	assert main(["auth", "mail", "--no-browser", "--client-id", "cid-1"]) == ExitCode.USAGE
	assert "give it with OPENMOLT_MAIL_CLIENT_SECRET" in capsys.readouterr().err
	with pytest.raises(ConfigurationError, match="nothing pasted"):
		code_from_redirect("  \n", "state-1")


def test_no_key_stops_before_the_browser_opens(
	env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Without a key nothing is asked of the user and nothing is stored in clear."""
	monkeypatch.delenv("OPENMOLT_CREDENTIALS_KEY")
	opened = _browser(monkeypatch)
	assert main(["auth", "mail", "--client-id", "cid-123"]) == ExitCode.USAGE
	assert "OPENMOLT_CREDENTIALS_KEY" in capsys.readouterr().err
	assert opened == [] and not env.exists()


def test_list_when_empty(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
	"""No sign-ins yet: says how to make one."""
	assert main(["auth", "list"]) == ExitCode.SUCCESS
	assert "openmolt auth ID" in capsys.readouterr().out


def test_list_and_revoke_skip_openmolt_s_own_records(
	env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A chat sign-in waiting for its code is kept in the store, but it is no account to list."""
	from openmolt_core.credstore import RESERVED_PREFIX, EncryptedFileStore

	store = EncryptedFileStore()
	store.save(f"{RESERVED_PREFIX}held", {"accessToken": "held-token"}, user="digest")
	store.save(f"{RESERVED_PREFIX}tries", {"timesId": [1.0]}, user="telegram:42")
	assert main(["auth", "list"]) == ExitCode.SUCCESS
	out = capsys.readouterr().out
	assert "no sign-ins in" in out and RESERVED_PREFIX not in out
	assert main(["auth", "list", "--json"]) == ExitCode.SUCCESS
	assert json.loads(capsys.readouterr().out) == []
	assert main(["auth", "revoke", f"{RESERVED_PREFIX}held", "--user", "digest"]) == ExitCode.USAGE
	assert "no stored sign-in" in capsys.readouterr().err
	assert store.load(f"{RESERVED_PREFIX}held", "digest") == {"accessToken": "held-token"}


def test_a_run_uses_stored_tokens_and_names_openmolt_auth_when_none(
	tmp_path: Path, server: Any, cli: Any
) -> None:
	"""`openmolt run` reads the store; without a sign-in it says `openmolt auth gmail`."""
	import datetime as dt

	path = cli.agent_file(tmp_path, server, integrations=["gmail"])
	key = Fernet.generate_key().decode()
	store_file = tmp_path / "creds.enc"
	env = cli.clean_env(
		**{
			cli.KEY_VAR: "k",
			"OPENMOLT_CREDENTIALS_FILE": str(store_file),
			"OPENMOLT_CREDENTIALS_KEY": key,
		}
	)
	done = cli.openmolt(str(path), cwd=tmp_path, env=env)
	assert done.returncode == 2
	assert "or sign in with `openmolt auth gmail`" in done.stderr
	later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()
	tokens = {
		"accessToken": "ya29.stored-access-1",
		"refreshToken": "1//stored-refresh-1",
		"expiryDate": later,
		"clientId": "cid.apps.googleusercontent.com",
		"clientSecret": "GOCSPX-stored-secret",
	}
	EncryptedFileStore(store_file, key=key).save("gmail", tokens)
	ran = cli.openmolt(str(path), cwd=tmp_path, env=env)
	assert ran.returncode == 0, ran.stderr
	for secret in ("ya29.stored-access-1", "1//stored-refresh-1", "GOCSPX-stored-secret"):
		assert secret not in ran.stdout + ran.stderr


def test_device_flow_from_the_command(
	env: Path, auth_server: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""--device shows the code, needs no client secret, and stores the tokens."""
	auth_server.device_interval = 0
	auth_server.device_answers = ["ok"]
	opened = _browser(monkeypatch)
	assert main(["auth", "mail", "--device", "--client-id", "cid-123"]) == ExitCode.SUCCESS
	err = capsys.readouterr().err
	assert f"open {auth_server.url}/activate and enter the code WDJB-MJHT" in err
	stored = EncryptedFileStore(env).load("mail")
	assert stored is not None and stored["accessToken"] not in err and opened == []


@pytest.mark.parametrize(
	("args", "message"),
	[(["--port", "70000"], "--port: 70000"), (["--timeout", "0"], "--timeout: 0.0")],
)
def test_bad_numbers_are_named(
	env: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
	"""A port or timeout out of range: exit 2 with the option named."""
	assert main(["auth", "mail", "--client-id", "c", *args]) == ExitCode.USAGE
	assert message in capsys.readouterr().err


def test_sign_in_for_an_end_user_keeps_their_tokens_apart(
	env: Path,
	auth_server: Any,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""--user stores the tokens under that user (not the operator's client); revoke --user forgets."""
	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_SECRET", "csecret-abcdef")
	_browser(monkeypatch)
	code = main(["auth", "mail", "--client-id", "cid-123", "--scopes", "read", "--user", "alice"])
	assert code == ExitCode.SUCCESS, capsys.readouterr().err
	store = EncryptedFileStore(env)
	assert store.entries() == [("mail", "alice")] and store.load("mail") is None
	stored = store.load("mail", user="alice")
	assert stored is not None and stored["accessToken"].startswith("at-")
	assert "clientSecret" not in stored
	assert main(["auth", "revoke", "mail"]) == ExitCode.USAGE  # the operator has none
	assert main(["auth", "revoke", "mail", "--user", "alice"]) == ExitCode.SUCCESS
	assert store.entries() == []


def test_a_run_for_an_end_user_who_has_not_connected_exits_8_with_the_link(
	tmp_path: Path, server: Any, cli: Any
) -> None:
	"""--user with a per-user integration not connected: status authorization_required, exit 8."""
	path = cli.agent_file(
		tmp_path,
		server,
		behaviour="call:gmail.listMessages",
		integrations=[{"integration": "gmail", "account": "user"}],
	)
	env = cli.clean_env(
		**{
			cli.KEY_VAR: "sk-test-0123456789abcdef",  # a real key's length: "k" masks every k
			"OPENMOLT_CREDENTIALS_FILE": str(tmp_path / "creds.enc"),
			"OPENMOLT_CREDENTIALS_KEY": Fernet.generate_key().decode(),
			"OPENMOLT_GMAIL_CLIENT_ID": "cid.apps.googleusercontent.com",
			"OPENMOLT_AUTH_REDIRECT_URI": "https://app.example/auth/callback",
		}
	)
	done = cli.openmolt(str(path), "--user", "alice", "--json", cwd=tmp_path, env=env)
	assert done.returncode == ExitCode.AUTHORIZATION_REQUIRED, done.stderr
	result = json.loads(done.stdout)
	assert result["status"] == "authorization_required"
	assert "alice to connect gmail: https://accounts.google.com/" in result["error"]
	assert "redirect_uri=https%3A%2F%2Fapp.example%2Fauth%2Fcallback" in result["error"]
	# Said for a person: what the command's user does next, not agent.resume(state).
	plain = cli.openmolt(str(path), "--user", "alice", cwd=tmp_path, env=env)
	said = plain.stderr.splitlines()[-1]
	assert said.startswith("openmolt: the run ended with status authorization_required:")
	assert "(`openmolt auth gmail --user alice` connects on this machine), run the command" in said
	assert "agent.resume" not in said and "authorization_requests" not in said


@pytest.mark.parametrize(("typed", "meant"), [("lst", "list"), ("revok", "revoke")])
def test_a_mistyped_auth_action_is_not_called_a_missing_integration(
	typed: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt auth lst` suggests list, not the 30 integration ids."""
	assert main(["auth", typed]) == ExitCode.USAGE
	err = capsys.readouterr().err
	assert f"no such action or integration {typed!r}; did you mean {meant!r}?" in err
	assert "available:" not in err


@pytest.mark.parametrize(
	("args", "said"),
	[
		(["login", "slack"], "auth: no action 'login'; `openmolt auth slack` does that"),
		(["sign-in", "gmail"], "auth: no action 'sign-in'; `openmolt auth gmail` does that"),
		(["login"], "auth: no action 'login'; `openmolt auth ID` does that"),
		(["logout", "gmail"], "auth: no action 'logout'; `openmolt auth revoke gmail` does that"),
		(["ls"], "auth: no action 'ls'; `openmolt auth list` does that"),
		(["logn", "slack"], "auth: no action 'logn'; `openmolt auth slack` signs in to slack"),
	],
)
def test_another_tool_s_auth_words_get_this_command(
	args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt auth login slack` (as gh writes it) names `openmolt auth slack`.

	It was "unexpected 'slack': put words that go together in quotes", or "no such integration
	'login'" with the 30 integration ids.
	"""
	assert main(["auth", *args]) == ExitCode.USAGE
	err = capsys.readouterr().err
	assert err.startswith(f"openmolt: {said}"), err
	assert "available:" not in err and "quotes" not in err


def test_sign_in_and_revoke_wait_for_a_refresh_holding_the_credential(
	env: Path, auth_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A refresh in another process holds the credential's lock: the sign-in saves after it.

	Saved at once, the new sign-in was overwritten by the refresh's save of the old grant (it
	had read the store before); a revoke was likewise undone by it.
	"""
	import threading
	import time

	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_SECRET", "csecret-abcdef")
	_browser(monkeypatch)
	store = EncryptedFileStore(env)
	seen: list[Any] = []
	holding, go = threading.Event(), threading.Event()

	def refresher() -> None:  # what OAuth2Auth._refresh_shared does in another process
		with store.locked("mail", None):
			holding.set()
			go.wait(10)
			time.sleep(0.3)  # the command would have saved by now
			seen.append(store.load("mail"))

	thread = threading.Thread(target=refresher)
	thread.start()
	holding.wait(10)
	monkeypatch.setattr(
		auth_server, "authorize", _after(auth_server.authorize, go.set), raising=False
	)
	assert main(["auth", "mail", "--client-id", "cid-123", "--scopes", "read"]) == 0
	thread.join(10)
	assert seen == [None]  # nothing saved while the refresh held the credential
	assert store.load("mail") is not None

	seen.clear()
	holding.clear()
	go.clear()
	thread = threading.Thread(target=refresher)
	thread.start()
	holding.wait(10)
	go.set()
	assert main(["auth", "revoke", "mail"]) == 0
	thread.join(10)
	assert seen[0] is not None  # forgotten only once the refresh let go
	assert store.load("mail") is None


def _after(method: Any, then: Any) -> Any:
	def wrapped(*args: Any) -> Any:
		try:
			return method(*args)
		finally:
			then()

	return wrapped


def test_signing_in_an_end_user_again_keeps_their_used_consent_links_refused(
	env: Path, auth_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""`openmolt auth ID --user U` replaces U's tokens but keeps the consents that stored them.

	The record it wrote had none: a consent link U had used, not yet expired, was taken again by
	another process.
	"""
	import time

	from openmolt_core.accounts import CONSENT

	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_SECRET", "csecret-abcdef")
	_browser(monkeypatch)
	store = EncryptedFileStore(env)
	used = {"nonce-used-1": time.time() + 3600}
	store.save("mail", {"accessToken": "at-old-1", CONSENT: used}, user="alice")
	assert main(["auth", "mail", "--client-id", "cid-123", "--user", "alice"]) == 0
	stored = store.load("mail", user="alice") or {}
	assert stored["accessToken"] != "at-old-1" and stored[CONSENT] == used


@pytest.mark.parametrize("device", [False, True], ids=["browser", "device"])
def test_sign_in_for_an_end_user_records_the_scopes_granted(
	env: Path,
	auth_server: Any,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
	device: bool,
) -> None:
	"""--user records the OAuth scopes granted (less those the user unticked), as a consent does,
	so a tool needing one left out parks for it instead of being sent with the token."""
	from openmolt_core.accounts import GRANTED

	monkeypatch.setenv("OPENMOLT_MAIL_CLIENT_SECRET", "csecret-abcdef")
	_browser(monkeypatch)
	auth_server.declined = {"mail.send"}
	auth_server.device_interval = 0
	auth_server.device_answers = ["ok"]
	flow = ["--device"] if device else []
	args = ["auth", "mail", "--client-id", "cid-123", "--scopes", "read,send", *flow]
	assert main([*args, "--user", "alice"]) == ExitCode.SUCCESS, capsys.readouterr().err
	stored = EncryptedFileStore(env).load("mail", user="alice")
	assert stored is not None
	if device:  # the fake's device reply lists what was asked for: all granted
		assert stored[GRANTED] == ["offline", "mail.read", "mail.send"]
	else:
		assert stored[GRANTED] == ["offline", "mail.read"]
