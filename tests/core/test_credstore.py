"""The credential store: encrypted at rest, keyed by (integration, user), read by agents, shared refresh."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from cryptography.fernet import Fernet

from openmolt_core.credstore import (
	KEY_VARIABLE,
	CredentialStore,
	EncryptedFileStore,
	default_path,
	default_store,
)
from openmolt_core.errors import ConfigurationError, ToolError

from .integrations._fake_oauth import FakeAuthServer

KEY = Fernet.generate_key().decode()
SECRETS = {
	"accessToken": "at-stored-4c1d9e",
	"refreshToken": "rt-stored-77aa01",
	"clientId": "cid-123",
	"clientSecret": "cs-stored-9f9f9f",
}


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EncryptedFileStore:
	monkeypatch.setenv(KEY_VARIABLE, KEY)
	monkeypatch.setitem(sys.modules, "keyring", None)  # no keyring: the variable's key
	return EncryptedFileStore(tmp_path / "creds" / "credentials.enc")


def test_round_trip_keyed_by_integration_and_user(store: EncryptedFileStore) -> None:
	"""One config per (integration, user); None is the operator; delete forgets one."""
	store.save("gmail", SECRETS)
	store.save("gmail", {"accessToken": "alice-token-1"}, user="alice")
	store.save("slack", {"accessToken": "slack-token-1"})
	assert store.load("gmail") == SECRETS
	assert store.load("gmail", "alice") == {"accessToken": "alice-token-1"}
	assert store.load("gmail", "bob") is None and store.load("github") is None
	assert store.entries() == [("gmail", None), ("gmail", "alice"), ("slack", None)]
	assert store.delete("gmail", "alice") and not store.delete("gmail", "alice")
	assert store.entries() == [("gmail", None), ("slack", None)]
	assert isinstance(store, CredentialStore)
	with pytest.raises(ConfigurationError, match="user"):
		store.save("gmail", {}, user="  ")


def test_the_file_is_encrypted_and_0600(store: EncryptedFileStore) -> None:
	"""No secret in any spelling in the file; the file is 0600, its folder 0700."""
	store.save("gmail", SECRETS)
	raw = store.path.read_bytes()
	for value in SECRETS.values():
		for spelling in (value, base64.b64encode(value.encode()).decode()):
			assert spelling.encode() not in raw
	assert b"gmail" not in raw  # not even which services are connected
	assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
	assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
	assert KEY not in repr(store) and "gmail" not in repr(store)
	assert not list(store.path.parent.glob("*.tmp"))


def test_a_store_in_a_folder_of_yours_leaves_the_folder_s_mode(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""credential_store="credentials.enc" in a project folder: the file is 0600, the folder kept.

	The folder was narrowed to 0700 (the project, or the working directory, of whoever ran it),
	as only OpenMolt's own folder (``$XDG_CONFIG_HOME/openmolt``) is.
	"""
	monkeypatch.setenv(KEY_VARIABLE, KEY)
	monkeypatch.setitem(sys.modules, "keyring", None)
	monkeypatch.delenv("OPENMOLT_CREDENTIALS_FILE", raising=False)
	monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
	project = tmp_path / "project"
	project.mkdir()
	project.chmod(0o755)
	monkeypatch.chdir(project)
	EncryptedFileStore("credentials.enc").save("mail", SECRETS, user="alice")
	assert stat.S_IMODE(project.stat().st_mode) == 0o755
	assert stat.S_IMODE((project / "credentials.enc").stat().st_mode) == 0o600
	own = default_path().parent
	own.mkdir(parents=True)
	own.chmod(0o755)
	EncryptedFileStore().save("mail", SECRETS)
	assert stat.S_IMODE(own.stat().st_mode) == 0o700  # OpenMolt's own folder: narrowed


def test_no_key_refuses_to_store_in_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""Without a keyring or OPENMOLT_CREDENTIALS_KEY nothing is written, and the fix is named."""
	monkeypatch.delenv(KEY_VARIABLE, raising=False)
	monkeypatch.setitem(sys.modules, "keyring", None)
	store = EncryptedFileStore(tmp_path / "c.enc")
	with pytest.raises(ConfigurationError, match=f"{KEY_VARIABLE}.*generate_key") as info:
		store.save("gmail", SECRETS)
	assert "in clear" in str(info.value)
	assert not (tmp_path / "c.enc").exists()


@pytest.mark.parametrize("bad", ["short", "x" * 44, "not base64 at all!!"])
def test_a_malformed_key_is_named(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
	"""A key that is not a Fernet key: the variable is named, with how to make one."""
	monkeypatch.setenv(KEY_VARIABLE, bad)
	monkeypatch.setitem(sys.modules, "keyring", None)
	with pytest.raises(ConfigurationError, match=f"{KEY_VARIABLE}: not a Fernet key") as info:
		EncryptedFileStore(tmp_path / "c.enc").save("gmail", SECRETS)
	assert bad not in str(info.value)


def test_the_advice_makes_a_key_the_store_takes(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The shell command the error gives makes a Fernet key (no Python environment needed)."""
	import re
	import shutil
	import subprocess

	if shutil.which("openssl") is None:
		pytest.skip("no openssl here")
	monkeypatch.setenv(KEY_VARIABLE, "not-a-key")
	monkeypatch.setitem(sys.modules, "keyring", None)
	with pytest.raises(ConfigurationError) as info:
		EncryptedFileStore(tmp_path / "c.enc").save("gmail", SECRETS)
	command = re.search(r"made with: (openssl .*?) \(or", str(info.value))
	assert command is not None, str(info.value)
	made = subprocess.run(command[1], shell=True, capture_output=True, text=True, check=True)
	monkeypatch.setenv(KEY_VARIABLE, made.stdout.strip())
	EncryptedFileStore(tmp_path / "d.enc").save("gmail", SECRETS)  # taken


def test_a_wrong_key_cannot_read_and_says_what_to_do(
	store: EncryptedFileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Another key: a clear error, and the file is left as it was."""
	store.save("gmail", SECRETS)
	before = store.path.read_bytes()
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	other = EncryptedFileStore(store.path)
	with pytest.raises(ConfigurationError, match="cannot decrypt"):
		other.load("gmail")
	with pytest.raises(ConfigurationError, match="cannot decrypt"):
		other.save("slack", {"accessToken": "zzzzzzzz"})
	assert store.path.read_bytes() == before


def test_a_damaged_file_is_refused(store: EncryptedFileStore) -> None:
	"""Garbage in the file: cannot decrypt, never a crash."""
	store.path.parent.mkdir(parents=True, exist_ok=True)
	store.path.write_bytes(b"garbage")
	with pytest.raises(ConfigurationError, match="cannot decrypt"):
		store.load("gmail")


def test_the_keyring_key_is_used_when_a_backend_is_available(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A usable keyring gives (and keeps) the key; OPENMOLT_CREDENTIALS_KEY is then not needed."""
	kept: dict[tuple[str, str], str] = {}
	fake = types.ModuleType("keyring")
	fake.get_keyring = lambda: types.SimpleNamespace(priority=5)  # type: ignore[attr-defined]
	fake.get_password = lambda service, name: kept.get((service, name))  # type: ignore[attr-defined]
	fake.set_password = lambda service, name, value: kept.__setitem__((service, name), value)  # type: ignore[attr-defined]
	monkeypatch.setitem(sys.modules, "keyring", fake)
	monkeypatch.delenv(KEY_VARIABLE, raising=False)
	EncryptedFileStore(tmp_path / "c.enc").save("gmail", SECRETS)
	assert list(kept) == [("openmolt", "credentials-key")]
	assert EncryptedFileStore(tmp_path / "c.enc").load("gmail") == SECRETS
	monkeypatch.setenv(KEY_VARIABLE, KEY)  # the keyring still wins: same key, same file
	assert EncryptedFileStore(tmp_path / "c.enc").load("gmail") == SECRETS


def test_a_keyring_without_a_backend_falls_back_to_the_variable(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""keyring's fail backend (priority 0): the variable's key."""
	fake = types.ModuleType("keyring")
	fake.get_keyring = lambda: types.SimpleNamespace(priority=0)  # type: ignore[attr-defined]
	monkeypatch.setitem(sys.modules, "keyring", fake)
	monkeypatch.setenv(KEY_VARIABLE, KEY)
	EncryptedFileStore(tmp_path / "c.enc").save("gmail", SECRETS)
	token = (tmp_path / "c.enc").read_bytes().strip()
	assert json.loads(Fernet(KEY.encode()).decrypt(token))["entries"][0]["config"] == SECRETS


def test_default_path_and_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""$OPENMOLT_CREDENTIALS_FILE wins; the default store exists only once the file does."""
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(tmp_path / "mine.enc"))
	assert default_path() == tmp_path / "mine.enc"
	assert default_store() is None
	(tmp_path / "mine.enc").write_bytes(b"")
	made = default_store()
	assert made is not None and made.path == tmp_path / "mine.enc"


# --- agents read the store -------------------------------------------------------------------


def _mail(server_url: str) -> Any:
	from openmolt_core.integrations import ApiSetup, HttpTool, Integration, OAuth2Credential

	return Integration(
		id="mail",
		name="Mail",
		api_setup=ApiSetup(base_url="https://api.mail.example"),
		credential_setup=[
			OAuth2Credential(
				type="oauth2",
				auth_url=f"{server_url}/authorize",
				token_url=f"{server_url}/token",
				client_id="{{ config.clientId }}",
				client_secret="{{ config.clientSecret }}",
				refresh_token="{{ config.refreshToken }}",
			)
		],
		tools=[HttpTool(handle="me", description="who am I", endpoint="/me")],
	)


def _om(store: Any, handler: Any, server_url: str = "https://auth.example", **kw: Any) -> Any:
	from openmolt_core import OpenMolt

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(entry_points=False, http_client=client, credential_store=store, **kw)
	om.register_integration("mail", _mail(server_url))
	return om


def _future(hours: float = 1) -> str:
	when = dt.datetime.now(dt.UTC) + dt.timedelta(hours=hours)
	return when.isoformat().replace("+00:00", "Z")


async def _call_me(om: Any) -> Any:
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	model = ScriptedModel([call_tool("mail.me"), finish(result="ok")])
	agent = om.create_agent(name="a", model=model, integrations=["mail"])
	result = await agent.run("go")
	await om.aclose()
	return result


@pytest.mark.anyio
async def test_an_agent_uses_the_stored_token_and_masks_it(store: EncryptedFileStore) -> None:
	"""The stored config fills the credential; every stored secret joins om.secrets."""
	store.save("mail", {**SECRETS, "expiryDate": _future()})
	seen: list[str] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request.headers.get("authorization", ""))
		return httpx.Response(200, json={"ok": True})

	om = _om(store, handler)
	await _call_me(om)
	assert seen == [f"Bearer {SECRETS['accessToken']}"]
	text = " ".join(SECRETS.values())
	masked = om.secrets.mask(text)
	for key in ("accessToken", "refreshToken", "clientSecret"):
		assert SECRETS[key] not in masked


@pytest.mark.anyio
async def test_config_and_environment_win_over_the_store(
	store: EncryptedFileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Explicit config first, then OPENMOLT_<ID>_<KEY>, then the store."""
	store.save("mail", {**SECRETS, "expiryDate": _future()})
	seen: list[str] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request.headers.get("authorization", ""))
		return httpx.Response(200, json={"ok": True})

	monkeypatch.setenv("OPENMOLT_MAIL_ACCESS_TOKEN", "at-from-env-1234")
	await _call_me(_om(store, handler))
	await _call_me(_om(store, handler, integrations={"mail": {"access_token": "at-explicit-99"}}))
	assert seen == ["Bearer at-from-env-1234", "Bearer at-explicit-99"]


@pytest.mark.anyio
async def test_a_store_that_cannot_be_read_stops_the_agent_with_the_fix(
	store: EncryptedFileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A store written with another key: creating the agent fails with a clear error."""
	from openmolt_core.testing import ScriptedModel

	store.save("mail", SECRETS)
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	om = _om(EncryptedFileStore(store.path), lambda r: httpx.Response(200))
	with pytest.raises(ConfigurationError, match="cannot decrypt"):
		om.create_agent(name="a", model=ScriptedModel([]), integrations=["mail"])


def test_credential_store_argument_is_checked(tmp_path: Path) -> None:
	"""A path makes a file store, False none; anything else is refused by name."""
	from openmolt_core import OpenMolt

	assert isinstance(
		OpenMolt(entry_points=False, credential_store=tmp_path / "c.enc").credential_store,
		EncryptedFileStore,
	)
	assert OpenMolt(entry_points=False, credential_store=False).credential_store is None
	with pytest.raises(ConfigurationError, match="credential_store"):
		OpenMolt(entry_points=False, credential_store=42)  # type: ignore[arg-type]


def test_the_default_store_is_looked_up_at_first_use(
	store: EncryptedFileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Creating an instance touches no file; the default store is found when first used."""
	from openmolt_core import OpenMolt, credstore

	looked_up: list[int] = []
	real = credstore.default_store

	def counted() -> EncryptedFileStore | None:
		looked_up.append(1)
		return real()

	monkeypatch.setattr(credstore, "default_store", counted)
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(store.path))
	om = OpenMolt(entry_points=False)
	assert looked_up == []
	store.save("slack", {"accessToken": "xoxe-made-after-the-instance-1"})  # `openmolt auth`
	found = om.credential_store
	assert isinstance(found, EncryptedFileStore) and found.path == store.path
	assert om.credential_store is found and looked_up == [1]
	assert "xoxe-made-after-the-instance-1" in om.secrets
	om.credential_store = None  # set by hand: no lookup, no store
	assert om.credential_store is None and looked_up == [1]


@pytest.fixture
def auth_server() -> Iterator[FakeAuthServer]:
	srv = FakeAuthServer(refresh_delay=0.3)
	yield srv
	srv.close()


@pytest.mark.anyio
async def test_a_refresh_is_saved_back_to_the_store(
	store: EncryptedFileStore, auth_server: FakeAuthServer
) -> None:
	"""An expired stored token is refreshed; the new tokens (rotated) are stored, encrypted."""
	store.save(
		"mail",
		{
			**SECRETS,
			"clientSecret": "csecret-abcdef",
			"refreshToken": "rt-initial-000",
			"expiryDate": "2000-01-01T00:00:00Z",
		},
	)
	real = httpx.AsyncClient(trust_env=False)
	seen: list[str] = []

	async def handler(request: httpx.Request) -> httpx.Response:
		if request.url.host == "127.0.0.1":
			answer = await real.send(request)
			return httpx.Response(answer.status_code, content=await answer.aread())
		seen.append(request.headers.get("authorization", ""))
		return httpx.Response(200, json={"ok": True})

	from openmolt_core import OpenMolt

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(entry_points=False, http_client=client, credential_store=store)
	om.register_integration("mail", _mail(auth_server.url))
	await _call_me(om)
	await real.aclose()
	saved = store.load("mail")
	assert saved is not None
	assert saved["accessToken"].startswith("at-") and saved["accessToken"] != SECRETS["accessToken"]
	assert saved["refreshToken"] != "rt-initial-000" and saved["clientId"] == "cid-123"
	assert seen == [f"Bearer {saved['accessToken']}"]
	assert auth_server.refreshes == 1
	assert saved["accessToken"] not in om.secrets.mask(saved["accessToken"])


_CHILD = textwrap.dedent(
	"""
	import os, sys, time
	from pathlib import Path
	import anyio, httpx
	from openmolt_core.credstore import EncryptedFileStore
	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import OAuth2Auth

	path, token_url, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
	store = EncryptedFileStore(path)
	config = store.load("mail")
	credential = OAuth2Credential(
		type="oauth2", token_url=token_url, client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}", refresh_token="{{ config.refreshToken }}",
	)

	async def main() -> None:
		async with httpx.AsyncClient(trust_env=False) as client:
			auth = OAuth2Auth(credential, config, "mail", on_token_refresh=None, http=lambda: client)
			if os.environ.get("SHARED") == "1":
				auth.use_store(store, "mail", keys=frozenset(config))
			while not go.exists():
				time.sleep(0.01)
			try:
				print(await auth.token())
			except Exception as exc:
				print("ERROR", type(exc).__name__)

	anyio.run(main)
	"""
)


def _race(store: EncryptedFileStore, server: FakeAuthServer, tmp: Path, shared: bool) -> list[str]:
	store.save(
		"mail",
		{
			"accessToken": "at-expired-0000",
			"refreshToken": "rt-initial-000",
			"expiryDate": "2000-01-01T00:00:00Z",
			"clientId": "cid-123",
			"clientSecret": "csecret-abcdef",
		},
	)
	go = tmp / f"go-{shared}"
	env = {**os.environ, "SHARED": "1" if shared else "0"}
	children = [
		subprocess.Popen(
			[sys.executable, "-c", _CHILD, str(store.path), f"{server.url}/token", str(go)],
			stdout=subprocess.PIPE,
			stderr=subprocess.PIPE,
			env=env,
			text=True,
		)
		for _ in range(3)
	]
	time.sleep(2.0)  # let each import and wait at the barrier
	go.touch()
	out = []
	for child in children:
		stdout, stderr = child.communicate(timeout=60)
		assert child.returncode == 0, stderr
		out.append(stdout.strip())
	return out


def test_refresh_is_single_flight_across_processes(
	store: EncryptedFileStore, auth_server: FakeAuthServer, tmp_path: Path
) -> None:
	"""Three processes sharing a store find the token expired: one refreshes, all use its token.

	The server rotates refresh tokens and refuses a spent one; without the shared lock the
	other processes would spend the old refresh token and fail (checked as the control).
	"""
	tokens = _race(store, auth_server, tmp_path, shared=True)
	assert auth_server.refreshes == 1
	assert len(set(tokens)) == 1 and tokens[0].startswith("at-"), tokens
	saved = store.load("mail")
	assert saved is not None and saved["accessToken"] == tokens[0]
	assert saved["refreshToken"] in auth_server.live_refresh

	control = FakeAuthServer(refresh_delay=0.3)
	try:
		unshared = _race(store, control, tmp_path, shared=False)
	finally:
		control.close()
	assert "ERROR ToolError" in unshared  # the rotation race the lock prevents


class _BrokenStore:
	"""A store whose reads fail (another key), or whose lock cannot be taken."""

	def __init__(self, *, lock_fails: bool = False) -> None:
		self.lock_fails = lock_fails

	def load(self, integration: str, user: str | None = None) -> dict[str, Any] | None:
		raise ConfigurationError("cannot decrypt")

	def save(self, integration: str, config: Any, user: str | None = None) -> None:
		raise AssertionError("never saved")

	def delete(self, integration: str, user: str | None = None) -> bool:
		return False

	def entries(self) -> list[tuple[str, str | None]]:
		return []

	def locked(self, integration: str, user: str | None = None) -> Any:
		import contextlib

		if self.lock_fails:

			@contextlib.contextmanager
			def broken() -> Iterator[None]:
				raise OSError("no locks here")
				yield

			return broken()
		return contextlib.nullcontext()


@pytest.mark.anyio
@pytest.mark.parametrize("lock_fails", [False, True])
async def test_a_failing_store_at_refresh_is_a_tool_error_or_a_local_refresh(
	auth_server: FakeAuthServer, lock_fails: bool
) -> None:
	"""An unreadable store: a ToolError naming the fix, no secret; no lock: refresh anyway."""
	from openmolt_core.errors import ToolError
	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import OAuth2Auth

	credential = OAuth2Credential(
		type="oauth2",
		token_url=f"{auth_server.url}/token",
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
	)
	config = {
		"accessToken": "at-expired-0000",
		"refreshToken": "rt-initial-000",
		"expiryDate": "2000-01-01T00:00:00Z",
		"clientId": "cid-123",
		"clientSecret": "csecret-abcdef",
	}
	async with httpx.AsyncClient(trust_env=False) as client:
		auth = OAuth2Auth(credential, config, "mail", on_token_refresh=None, http=lambda: client)
		auth.use_store(_BrokenStore(lock_fails=lock_fails), "mail", keys=frozenset(config))  # type: ignore[arg-type]
		if lock_fails:
			assert (await auth.token()).startswith("at-")
			assert auth_server.refreshes == 1
			return
		with pytest.raises(ToolError, match="credential store could not be read") as info:
			await auth.token()
	assert "rt-initial-000" not in str(info.value) and "csecret" not in str(info.value)
	assert auth_server.refreshes == 0


@pytest.mark.anyio
async def test_a_token_another_holder_saved_is_adopted_and_announced(
	store: EncryptedFileStore, auth_server: FakeAuthServer
) -> None:
	"""The second auth finds the first's new token in the store: no refresh, on_token_refresh told."""
	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import OAuth2Auth

	config = {
		"access_token": "at-expired-0000",
		"refresh_token": "rt-initial-000",
		"expiry_date": "2000-01-01T00:00:00Z",
		"clientId": "cid-123",
		"clientSecret": "csecret-abcdef",
	}
	store.save("mail", config)
	credential = OAuth2Credential(
		type="oauth2",
		token_url=f"{auth_server.url}/token",
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
	)
	told: list[dict[str, Any]] = []
	async with httpx.AsyncClient(trust_env=False) as client:
		auths = [
			OAuth2Auth(
				credential, config, "mail", on_token_refresh=told.append, http=lambda: client
			)
			for _ in range(2)
		]
		for auth in auths:
			auth.use_store(
				store, "mail", keys=frozenset({"accessToken", "refreshToken", "expiryDate"})
			)
		first = await auths[0].token()
		second = await auths[1].token()
	assert first == second and auth_server.refreshes == 1
	assert [t["accessToken"] for t in told] == [first, first]
	assert told[1]["access_token"] == first  # the snake_case spelling given is kept current
	assert first in auths[1].secrets()
	saved = store.load("mail")
	assert saved is not None and saved["accessToken"] == first


@pytest.mark.anyio
async def test_a_run_cancelled_while_the_token_comes_back_still_saves_the_rotated_one(
	store: EncryptedFileStore,
) -> None:
	"""The service spent the refresh token: the new one is saved even though the run was cancelled.

	Cancelled between the answer and the save, the store kept the spent token, and every later
	refresh was refused (invalid_grant): the user had to sign in again.
	"""
	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import OAuth2Auth

	store.save(
		"svc",
		{"accessToken": "at-old-0000", "refreshToken": "rt-1111111", "expiryDate": "2000-01-01"},
	)
	scope = anyio.CancelScope()
	live = {"rt-1111111"}

	async def service(request: httpx.Request) -> httpx.Response:
		spent = dict(httpx.QueryParams(request.content.decode()))["refresh_token"]
		if spent not in live:
			return httpx.Response(400, json={"error": "invalid_grant"})
		live.clear()
		live.add("rt-2222222")
		scope.cancel()  # the run is cancelled while the answer comes back
		body = {"access_token": "at-new-2222", "refresh_token": "rt-2222222", "expires_in": 3600}
		return httpx.Response(200, json=body)

	credential = OAuth2Credential(type="oauth2", token_url="https://auth.example.com/token")
	config = store.load("svc") or {}
	async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as client:
		auth = OAuth2Auth(credential, config, "svc", on_token_refresh=None, http=lambda: client)
		auth.use_store(store, "svc", keys=frozenset(config))
		with scope:
			await auth.token()
	saved = store.load("svc") or {}
	assert saved["refreshToken"] == "rt-2222222" and saved["accessToken"] == "at-new-2222"
	assert auth.config["refreshToken"] == "rt-2222222"


def _stored_auth(store: Any, server: FakeAuthServer, user: str | None = None) -> Any:
	"""An OAuth2Auth over the expired sign-in stored for ``user``, refreshing through the store."""
	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import OAuth2Auth

	credential = OAuth2Credential(
		type="oauth2",
		token_url=f"{server.url}/token",
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
	)
	config = store.load("mail", user) or {}
	client = httpx.AsyncClient(trust_env=False)
	auth = OAuth2Auth(credential, config, "mail", on_token_refresh=None, http=lambda: client)
	auth.use_store(store, "mail", user, keys=frozenset(config))
	return auth, client


@pytest.mark.anyio
@pytest.mark.parametrize("user", [None, "alice"])
async def test_a_refresh_never_brings_back_a_sign_in_deleted_meanwhile(
	store: EncryptedFileStore, auth_server: FakeAuthServer, user: str | None
) -> None:
	"""A sign-in forgotten (`openmolt auth revoke`) while a run held it is not refreshed back.

	The refresh read the store under its lock, found nothing, spent the refresh token it still
	held and saved the new tokens: the account the user had disconnected was connected again.
	"""
	store.save(
		"mail",
		{
			"accessToken": "at-expired-0000",
			"refreshToken": "rt-initial-000",
			"expiryDate": "2000-01-01T00:00:00Z",
			"clientId": "cid-123",
			"clientSecret": "csecret-abcdef",
		},
		user=user,
	)
	auth, client = _stored_auth(store, auth_server, user)
	assert store.delete("mail", user)  # disconnected while the run still holds its config
	with pytest.raises(ToolError, match="openmolt auth mail") as info:
		await auth.token()
	await client.aclose()
	assert "no longer" in info.value.message
	assert store.load("mail", user) is None and store.entries() == []
	assert auth_server.refreshes == 0 and "rt-initial-000" in auth_server.live_refresh


@pytest.mark.anyio
@pytest.mark.parametrize(
	("user", "says"),
	[
		(None, "reconnect with `openmolt auth mail`"),
		("alice", "reconnect with `openmolt auth mail --user alice`"),
	],
)
async def test_a_revoked_grant_names_the_command_that_reconnects(
	store: EncryptedFileStore, auth_server: FakeAuthServer, user: str | None, says: str
) -> None:
	"""invalid_grant at refresh (revoked, or a rotated token spent elsewhere): the fix is named."""
	store.save(
		"mail",
		{
			"accessToken": "at-expired-0000",
			"refreshToken": "rt-revoked-000",
			"expiryDate": "2000-01-01T00:00:00Z",
			"clientId": "cid-123",
			"clientSecret": "csecret-abcdef",
		},
		user=user,
	)
	auth, client = _stored_auth(store, auth_server, user)
	with pytest.raises(ToolError) as info:
		await auth.token()
	await client.aclose()
	assert says in info.value.message, info.value.message
	assert "invalid_grant" in info.value.message and "rt-revoked-000" not in info.value.message


def test_a_config_that_is_not_json_is_refused_and_nothing_changes(
	store: EncryptedFileStore,
) -> None:
	"""A value JSON cannot hold: an error naming config; what was stored stays."""
	store.save("gmail", SECRETS)
	before = store.path.read_bytes()
	for bad in ({"accessToken": object()}, {"expiryDate": float("nan")}):
		with pytest.raises(ConfigurationError, match="config: a credential config must hold JSON"):
			store.save("slack", bad)
	assert store.path.read_bytes() == before and store.entries() == [("gmail", None)]


def test_an_integration_without_credentials_never_reads_the_store(
	store: EncryptedFileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""httpRequest needs no credential: an unreadable store does not stop its agent."""
	from openmolt_core import OpenMolt
	from openmolt_core.testing import ScriptedModel

	store.save("mail", SECRETS)
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())  # now unreadable
	om = OpenMolt(credential_store=EncryptedFileStore(store.path))
	agent = om.create_agent(name="a", model=ScriptedModel([]), integrations=["httpRequest"])
	assert agent is not None


def test_every_stored_secret_is_masked_even_unbound(store: EncryptedFileStore) -> None:
	"""om.secrets knows every stored token, whether or not an agent uses that integration."""
	from openmolt_core import OpenMolt

	store.save("gmail", SECRETS)
	store.save("slack", {"accessToken": "xoxe-stored-slack-77"}, user="alice")
	om = OpenMolt(entry_points=False, credential_store=store)
	masked = om.secrets.mask(f"{SECRETS['refreshToken']} xoxe-stored-slack-77 cid-123")
	assert SECRETS["refreshToken"] not in masked and "xoxe-stored-slack-77" not in masked
	assert "cid-123" in masked  # a client id is not a secret


def test_a_store_set_on_the_instance_later_has_its_secrets_masked(
	store: EncryptedFileStore,
) -> None:
	"""``om.credential_store = store`` after the set was first read: its tokens join it too.

	The store's secrets were read once, at the set's first use: a store set later (after its
	agents were made, or a run) lent its tokens to the integrations bound next and was never
	masked.
	"""
	from openmolt_core import OpenMolt

	store.save("gmail", SECRETS)
	om = OpenMolt(entry_points=False, credential_store=False)
	assert SECRETS["refreshToken"] not in om.secrets  # the set is read now
	om.credential_store = store
	masked = om.secrets.mask(f"token {SECRETS['refreshToken']}")
	assert SECRETS["refreshToken"] not in masked


def test_the_default_file_secrets_are_masked_before_the_store_is_used(
	store: EncryptedFileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The default file's tokens join om.secrets at its first use; without the file, none."""
	from openmolt_core import OpenMolt

	store.save("gmail", SECRETS)
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(store.path))
	assert SECRETS["refreshToken"] in OpenMolt(entry_points=False).secrets
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(store.path.with_name("none.enc")))
	om = OpenMolt(entry_points=False)
	assert SECRETS["refreshToken"] not in om.secrets and om.credential_store is None


def test_a_default_file_made_after_the_secrets_were_read_is_not_used_unmasked(
	store: EncryptedFileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""No file when the instance read its secrets: no store for it, even once a file appears."""
	from openmolt_core import OpenMolt

	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(store.path))
	om = OpenMolt(entry_points=False)
	assert SECRETS["refreshToken"] not in om.secrets  # reads the (absent) file's secrets
	store.save("gmail", SECRETS)  # made later, by another process
	assert om.credential_store is None


def test_stored_secrets_reads_every_entry_and_nothing_from_an_unreadable_store() -> None:
	"""`stored_secrets` gathers the secret values of every entry; a store it cannot read gives none."""
	from openmolt_core.credstore import stored_secrets

	class Store:
		def __init__(self, broken: bool) -> None:
			self.broken = broken

		def entries(self) -> list[tuple[str, str | None]]:
			if self.broken:
				raise RuntimeError("no key")
			return [("slack", None), ("github", "ada")]

		def load(self, integration: str, user: str | None) -> dict[str, str]:
			return {"accessToken": f"{integration}-token-123456", "team": "T1"}

	found = stored_secrets(Store(broken=False))  # type: ignore[arg-type]
	assert {"slack-token-123456", "github-token-123456"} <= found and "T1" not in found
	assert stored_secrets(Store(broken=True)) == set()  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_refresh_without_expires_in_leaves_no_expired_expiry_in_the_store(
	store: EncryptedFileStore,
) -> None:
	"""A refresh reply without expires_in (nor a new refresh token) saved the new token beside the
	old, passed expiryDate: every later run read it as expired and refreshed again. Now the
	stored sign-in holds no expiry, and other runs use the token without a refresh."""
	store.save(
		"svc",
		{
			"accessToken": "at-expired-0000",
			"refreshToken": "rt-kept-000000",
			"expiry_date": "2000-01-01T00:00:00Z",
		},
	)
	refreshes = 0

	async def service(request: httpx.Request) -> httpx.Response:
		nonlocal refreshes
		refreshes += 1
		return httpx.Response(200, json={"access_token": f"at-new-{refreshes:06d}"})

	from openmolt_core.integrations import OAuth2Credential
	from openmolt_core.integrations.credentials import OAuth2Auth

	credential = OAuth2Credential(type="oauth2", token_url="https://auth.example.com/token")
	async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as client:

		def run() -> OAuth2Auth:
			config = store.load("svc") or {}
			auth = OAuth2Auth(credential, config, "svc", on_token_refresh=None, http=lambda: client)
			auth.use_store(store, "svc", keys=frozenset(config))
			return auth

		# A run that read the sign-in before the refresh adopts the new token (it had kept its
		# own expired expiry beside it, and refreshed again); a later run just uses it.
		first, beside = run(), run()
		assert await first.token() == "at-new-000001"
		assert await beside.token() == "at-new-000001"
		assert await run().token() == "at-new-000001"
	saved = store.load("svc") or {}
	assert refreshes == 1
	assert saved["refreshToken"] == "rt-kept-000000" and saved["accessToken"] == "at-new-000001"
	assert "expiryDate" not in saved and "expiry_date" not in saved
