"""Credentials per end user, and runs that park until the user connects an account (issue 36)."""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio
import httpx
import pytest
from cryptography.fernet import Fernet

from openmolt_core.accounts import CALLBACK_PATH, SPENT, authorization_requests
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.errors import ConfigurationError
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish

from .integrations._fake_oauth import FakeAuthServer, mail_integration

pytestmark = pytest.mark.anyio

REDIRECT = "http://127.0.0.1:9/auth/callback"  # the application's; the browser never gets there
AUTH_KEY = "test-accounts-key-0123456789"


def _future(hours: float = 1) -> str:
	when = dt.datetime.now(dt.UTC) + dt.timedelta(hours=hours)
	return when.isoformat().replace("+00:00", "Z")


def mail(server_url: str) -> Any:
	"""An OAuth2 integration whose tool scopes map to OAuth scopes, like Gmail's."""
	from openmolt_core.integrations import HttpTool

	return mail_integration(
		server_url,
		scopes=["mail.read", "mail.send", "offline"],
		scope_map={"read": ["mail.read"], "send": ["mail.send"]},
		tools=[
			HttpTool(handle="me", description="who am I", endpoint="/me", scopes=["read"]),
			HttpTool(
				handle="send", description="send", method="POST", endpoint="/send", scopes=["send"]
			),
		],
	)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EncryptedFileStore:
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	return EncryptedFileStore(tmp_path / "credentials.enc")


@pytest.fixture
def server() -> Iterator[FakeAuthServer]:
	srv = FakeAuthServer()
	yield srv
	srv.close()


class Api:
	"""The mail API behind a mock transport; the token server is reached for real."""

	def __init__(self) -> None:
		self.calls: list[tuple[str, str]] = []  # (path, Authorization)
		self.real = httpx.AsyncClient(trust_env=False)
		self.hold: dict[str, anyio.Event] = {}
		self.refused: set[str] = set()
		self.arrived = anyio.Event()

	async def __call__(self, request: httpx.Request) -> httpx.Response:
		if request.url.host == "127.0.0.1":
			answer = await self.real.send(request)
			return httpx.Response(answer.status_code, content=await answer.aread())
		self.calls.append((request.url.path, request.headers.get("authorization", "")))
		self.arrived.set()
		token = request.headers.get("authorization", "").removeprefix("Bearer ")
		if token in self.refused:  # revoked at the service before it expired
			return httpx.Response(401, json={"error": "invalid_token"})
		gate = self.hold.get(token)
		if gate is not None:
			await gate.wait()
		return httpx.Response(200, json={"me": token[-4:]})


@pytest.fixture
async def api() -> AsyncIterator[Api]:
	found = Api()
	yield found
	await found.real.aclose()


def make_om(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, key: str = AUTH_KEY, **kw: Any
) -> Any:
	from openmolt_core import OpenMolt

	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(
		entry_points=False,
		http_client=client,
		credential_store=store,
		integrations={"mail": {"clientId": "cid-123", "clientSecret": "csecret-abcdef"}},
		accounts={"redirect_uri": REDIRECT, "key": key},
		**kw,
	)
	om.register_integration("mail", mail(server.url))
	return om


def per_user(om: Any, model: ScriptedModel, name: str = "assistant") -> Any:
	return om.create_agent(
		name=name, model=model, integrations=[{"integration": "mail", "account": "user"}]
	)


def tokens(access: str, refresh: str = "rt-none", **more: Any) -> dict[str, Any]:
	return {"accessToken": access, "refreshToken": refresh, "expiryDate": _future(), **more}


async def consent(url: str) -> str:
	"""What a browser does: the service's consent page redirects to the application."""
	async with httpx.AsyncClient(trust_env=False) as browser:
		answer = await browser.get(url)
	assert answer.status_code == 302, answer.text
	return answer.headers["location"]


def test_a_plain_state_is_unchanged_and_the_user_round_trips() -> None:
	"""No user: no key in to_dict (saved states and goldens stay); a user survives JSON."""
	plain = RunState(run_id="r").to_dict()
	assert "user" not in plain
	assert RunState.from_dict(plain).user is None
	alice = RunState(run_id="r", user="alice").to_dict()
	assert alice["user"] == "alice"
	assert RunState.from_dict(json.loads(json.dumps(alice))).user == "alice"


async def test_two_users_interleaved_on_one_agent_each_see_their_own_token(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""Alice's call is in flight while Bob's runs: each run sends only its own user's token."""
	store.save("mail", tokens("at-alice-aaaa"), user="alice")
	store.save("mail", tokens("at-bob-bbbbbb"), user="bob")
	store.save("mail", tokens("at-operator-00"))  # the operator's: never used per user
	om = make_om(store, api, server)
	model = ScriptedModel(
		[call_tool("mail.me"), call_tool("mail.me"), finish(result="b"), finish(result="a")]
	)
	agent = per_user(om, model)
	api.hold["at-alice-aaaa"] = release = anyio.Event()
	results: dict[str, Any] = {}

	async def run(user: str) -> None:
		results[user] = await agent.run("who am I?", user=user)

	async with anyio.create_task_group() as tg:
		tg.start_soon(run, "alice")
		with anyio.fail_after(5):
			await api.arrived.wait()  # alice's call is in flight, held
		with anyio.fail_after(5):
			await run("bob")  # bob's whole run goes while alice's call waits
		release.set()
	assert api.calls == [("/me", "Bearer at-alice-aaaa"), ("/me", "Bearer at-bob-bbbbbb")]
	assert results["alice"].ok and results["bob"].ok
	assert results["alice"].state.user == "alice" and results["bob"].state.user == "bob"
	for user in ("alice", "bob"):
		sent = json.dumps(results[user].state.to_dict())
		assert "at-alice" not in sent and "at-bob" not in sent
	assert "at-bob-bbbbbb" not in om.secrets.mask("at-bob-bbbbbb")
	await om.aclose()


async def test_a_user_who_has_not_connected_parks_the_run_and_it_resumes(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""No credential: the run parks with the consent URL; the callback stores it; resume goes on."""
	om = make_om(store, api, server)
	model = ScriptedModel([call_tool("mail.me"), finish(result="done")])
	agent = per_user(om, model)
	events: list[Any] = []
	agent.on("authorization:request", events.append)
	parked = await agent.run("who am I?", user="carol")
	assert parked.status == "authorization_required"
	assert not api.calls
	[request] = authorization_requests(parked.state)
	[event] = events
	assert event.request["url"] == request["url"] and event.run_id == parked.state.run_id
	assert request["integration"] == "mail" and request["user"] == "carol"
	assert request["reason"] == "not_connected" and request["tool"] == "mail.me"
	assert request["scopes"] == ["offline", "mail.read", "mail.send"]  # all the agent's, at once
	assert request["url"] in (parked.error or "")
	saved = json.loads(json.dumps(parked.state.to_dict()))  # another process could resume it
	location = await consent(request["url"])
	assert location.startswith(REDIRECT + "?")
	assert server.authorize_requests[-1]["scope"] == "offline mail.read mail.send"
	connected = await om.accounts.complete(location)
	assert (connected.integration, connected.user) == ("mail", "carol")
	assert connected.run_id == parked.state.run_id
	stored = store.load("mail", user="carol")
	assert stored is not None and stored["accessToken"].startswith("at-")
	assert stored["grantedScopes"] == ["offline", "mail.read", "mail.send"]
	assert "clientSecret" not in stored  # the operator's client stays the operator's
	assert store.load("mail") is None  # nothing written for the operator
	done = await agent.resume(saved)
	assert done.ok and done.state.user == "carol"
	assert api.calls == [("/me", f"Bearer {stored['accessToken']}")]
	assert stored["accessToken"] not in json.dumps(done.state.to_dict())
	model.assert_consumed()
	await om.aclose()


async def test_the_state_is_signed_and_bound_to_the_user(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A state edited to name another user, or signed by another key, stores nothing."""
	om = make_om(store, api, server)
	url = om.accounts.consent(om.plugins.integration("mail"), "mail", "carol", ["mail.read"])
	location = await consent(url)
	query = dict(parse_qsl(urlsplit(location).query))
	head, _, signature = query["state"].partition(".")
	body = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
	body["u"] = "mallory"
	forged = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
	with pytest.raises(ConfigurationError, match="state"):
		await om.accounts.complete("?" + urlencode({**query, "state": f"{forged}.{signature}"}))
	other = make_om(store, api, server, key="another-key-entirely-000")
	with pytest.raises(ConfigurationError, match="state"):
		await other.accounts.complete(location)
	crafted = "?error=access_denied&error_description=Call+0800+FAKE+support&state=x"
	with pytest.raises(ConfigurationError, match="state") as shown:
		await om.accounts.complete(crafted)
	assert "FAKE" not in str(shown.value)  # a crafted link puts no words on the page
	with pytest.raises(ConfigurationError, match="no state") as shown:
		await om.accounts.complete("?error=access_denied&error_description=Call+FAKE")
	assert "FAKE" not in str(shown.value)
	refusal = {
		"error": "access_denied",
		"error_description": "The user said no",
		"state": query["state"],
	}
	with pytest.raises(
		ConfigurationError, match=r"refused the authorization \(access_denied: The user said no\)"
	):
		await om.accounts.complete("?" + urlencode(refusal))  # the service's, with our state
	assert store.entries() == []
	assert (await om.accounts.complete(location)).user == "carol"
	assert store.entries() == [("mail", "carol"), (SPENT, "carol")]  # its state spent
	await om.aclose()
	await other.aclose()


async def test_a_revoked_refresh_token_parks_for_consent_again(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""invalid_grant on refresh: the run parks (reason revoked) instead of failing the call."""
	store.save(
		"mail",
		{"accessToken": "at-dave-old", "refreshToken": "rt-revoked", "expiryDate": _future(-1)},
		user="dave",
	)
	om = make_om(store, api, server)
	model = ScriptedModel([call_tool("mail.me"), finish(result="done")])
	agent = per_user(om, model)
	parked = await agent.run("who am I?", user="dave")
	assert parked.status == "authorization_required"
	[request] = authorization_requests(parked.state)
	assert request["reason"] == "revoked"
	assert not api.calls
	await om.accounts.complete(await consent(request["url"]))
	done = await agent.resume(parked.state)
	assert done.ok
	stored = store.load("mail", user="dave")
	assert stored is not None
	assert api.calls == [("/me", f"Bearer {stored['accessToken']}")]
	await om.aclose()


async def test_a_grant_revoked_before_its_token_expired_parks_the_next_call(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A live token the service refuses (401), and a refused refresh: the next call parks.

	The store kept the dead token as fresh, so every call sent it, was refused, spent a refresh
	request and failed; the run never asked the user to connect again.
	"""
	store.save("mail", tokens("at-ivan-dead", "rt-ivan-revoked"), user="ivan")
	api.refused.add("at-ivan-dead")
	om = make_om(store, api, server)
	model = ScriptedModel([call_tool("mail.me"), call_tool("mail.me"), finish(result="done")])
	agent = per_user(om, model)
	parked = await agent.run("who am I?", user="ivan")
	assert parked.status == "authorization_required"
	[request] = authorization_requests(parked.state)
	assert request["reason"] == "revoked" and request["user"] == "ivan"
	assert api.calls == [("/me", "Bearer at-ivan-dead")]  # once, by the first call
	stored = store.load("mail", user="ivan") or {}
	assert stored["refreshToken"] == "rt-ivan-revoked" and "accessToken" not in stored
	await om.aclose()


async def test_an_expired_token_is_refreshed_for_that_user_and_saved_back(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A live refresh token: the user's token is refreshed with the operator's client, saved."""
	store.save(
		"mail",
		{"accessToken": "at-erin-old", "refreshToken": "rt-initial-000", "expiryDate": _future(-1)},
		user="erin",
	)
	om = make_om(store, api, server)
	agent = per_user(om, ScriptedModel([call_tool("mail.me"), finish(result="done")]))
	result = await agent.run("who am I?", user="erin")
	assert result.ok
	stored = store.load("mail", user="erin")
	assert stored is not None and stored["accessToken"] != "at-erin-old"
	assert server.refreshes == 1
	assert api.calls == [("/me", f"Bearer {stored['accessToken']}")]
	assert stored["accessToken"] not in om.secrets.mask(stored["accessToken"])
	await om.aclose()


async def test_a_scope_not_granted_asks_for_it_with_the_granted_ones(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A user who granted read only: the send call parks asking for read and send."""
	store.save("mail", tokens("at-frank-read", grantedScopes=["offline", "mail.read"]), user="f")
	om = make_om(store, api, server)
	model = ScriptedModel([call_tool("mail.me"), call_tool("mail.send"), finish(result="x")])
	agent = om.create_agent(
		name="a",
		model=model,
		integrations=[{"integration": "mail", "account": "user", "scopes": ["read", "send"]}],
	)
	parked = await agent.run("go", user="f")
	assert parked.status == "authorization_required"
	[request] = authorization_requests(parked.state)
	assert request["reason"] == "scopes" and request["tool"] == "mail.send"
	assert request["scopes"] == ["offline", "mail.read", "mail.send"]
	assert api.calls == [("/me", "Bearer at-frank-read")]  # the first call ran
	await om.aclose()


async def test_a_run_without_a_user_is_told_and_does_not_park(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A per-user tool in a run with no user: the model reads why; nothing is sent."""
	store.save("mail", tokens("at-operator-00"))
	om = make_om(store, api, server)
	model = ScriptedModel([call_tool("mail.me"), finish(result="x")])
	result = await per_user(om, model).run("go")
	assert result.ok and not api.calls
	assert "user=" in model.requests[1].messages[-1].content
	await om.aclose()


async def test_resume_refuses_an_answer_and_a_run_keeps_its_user(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A run waiting for an account takes no answer; its saved state cannot change user."""
	om = make_om(store, api, server)
	agent = per_user(om, ScriptedModel([call_tool("mail.me")]))
	parked = await agent.run("go", user="gina")
	with pytest.raises(ConfigurationError, match="capability 'accounts'"):
		await agent.resume(parked.state, answer="yes")
	with pytest.raises(ConfigurationError, match="keeps its user"):
		await agent.run(history=parked.state, user="henry")
	with pytest.raises(ConfigurationError, match="user"):
		await agent.run("go", user=" ")
	await om.aclose()


def test_per_user_needs_a_store_and_a_redirect(tmp_path: Path) -> None:
	"""Without a credential store the binding is refused; without a redirect, the URL is."""
	from openmolt_core import OpenMolt

	om = OpenMolt(entry_points=False, credential_store=False)
	om.register_integration("mail", mail("http://127.0.0.1:1"))
	with pytest.raises(ConfigurationError, match="credential store"):
		per_user(om, ScriptedModel([]))
	om = OpenMolt(entry_points=False, integrations={"mail": {"clientId": "c"}})
	with pytest.raises(ConfigurationError, match="redirect_uri"):
		om.accounts.consent(mail("http://x"), "mail", "u", ["mail.read"])
	assert CALLBACK_PATH == "/auth/callback"


def crm_integration() -> Any:
	"""A bearer integration whose key each user may keep in the store (``config.apiKey``)."""
	from openmolt_core.integrations import ApiSetup, BearerCredential, HttpTool, Integration

	return Integration(
		id="crm",
		name="CRM",
		api_setup=ApiSetup(base_url="https://api.crm.example"),
		credential_setup=[
			BearerCredential(headers={"Authorization": "Bearer {{ config.apiKey }}"})
		],
		tools=[HttpTool(handle="me", description="who am I", endpoint="/me")],
	)


async def test_an_api_key_per_user_never_falls_back_to_the_operators(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A bearer integration per user: each user's key; a user without one never gets the operator's."""
	from openmolt_core import OpenMolt

	keyed = crm_integration()
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		credential_store=store,
		integrations={"crm": {"apiKey": "sk-operator-000000"}},
	)
	om.register_integration("crm", keyed)
	store.save("crm", {"apiKey": "sk-ivy-1111111"}, user="ivy")
	store.save("crm", {"region": "eu"}, user="jack")  # connected, but no key
	model = ScriptedModel(
		[call_tool("crm.me"), finish(result="a"), call_tool("crm.me"), finish(result="b")]
	)
	agent = om.create_agent(
		name="a", model=model, integrations=[{"integration": "crm", "account": "user"}]
	)
	assert (await agent.run("go", user="ivy")).ok
	assert (await agent.run("go", user="jack")).ok
	assert api.calls == [("/me", "Bearer sk-ivy-1111111")]  # jack's call failed, unsigned
	assert "sk-operator" not in json.dumps([r.messages[-1].content for r in model.requests])
	await om.aclose()


@pytest.mark.parametrize("approval_first", [True, False])
async def test_a_step_with_an_approval_and_an_authorization_parks_on_the_approval(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, approval_first: bool
) -> None:
	"""One kind of park per step, whichever parks first: the call needing an account fails.

	The approval's park wins, and the model reads that the call waits behind it (the kernel's
	rule for a gate's park, with the text naming the gate's kind).
	"""
	from openmolt_core.tools import tool

	@tool
	def refund(amount: int) -> str:
		"""Refund.

		Args:
			amount: Cents.
		"""
		return "refunded"

	om = make_om(store, api, server)
	model = ScriptedModel([[call_tool("mail.me"), call_tool("local.refund", amount=5)]])
	agent = om.create_agent(
		name="a",
		model=model,
		tools=[refund],
		integrations=[{"integration": "mail", "account": "user"}],
		requires_approval=["local.refund"],
	)
	if not approval_first:  # the approval's gate waits: the authorization parks first

		async def slow(event: Any) -> None:
			await anyio.sleep(0.3)

		agent.on("approval:request", slow)
	parked = await agent.run("go", user="kim")
	assert parked.status == "approval_required"
	pending = parked.state.pending
	assert pending is not None and [c["tool"] for c in pending["calls"]] == ["local.refund"]
	waits = "another call of this step waits for approval; call it again once that is decided"
	assert pending["results"][0] == {"tool": "mail.me", "ok": False, "error": f"not run: {waits}"}
	assert not api.calls
	await om.aclose()


async def test_a_consent_link_expires(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A state older than the ttl is refused: resuming the run gives a fresh link."""
	import time

	om = make_om(store, api, server)
	location = await consent(
		om.accounts.consent(om.plugins.integration("mail"), "mail", "lee", ["mail.read"])
	)
	later = time.time() + om.accounts.ttl + 1
	monkeypatch.setattr(time, "time", lambda: later)
	with pytest.raises(ConfigurationError, match="expired"):
		await om.accounts.complete(location)
	assert store.entries() == []
	await om.aclose()


def test_accounts_settings_are_checked_by_name() -> None:
	"""An unknown key is named with the known ones; camelCase works; a short key is refused."""
	from openmolt_core import OpenMolt

	with pytest.raises(ConfigurationError, match=r"accounts\.redirect: unknown setting"):
		_ = OpenMolt(entry_points=False, accounts={"redirect": "https://x"}).accounts
	om = OpenMolt(entry_points=False, accounts={"redirectUri": "https://x/auth/callback"})
	assert om.accounts.redirect_uri == "https://x/auth/callback"
	with pytest.raises(ConfigurationError, match="at least 16 characters"):
		_ = OpenMolt(entry_points=False, accounts={"key": "short"}).accounts


async def test_the_accounts_capability_comes_with_a_per_user_binding_only(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""create_agent adds it for account 'user'; the fingerprint says so (its hook: steps)."""
	om = make_om(store, api, server)
	user_bound = per_user(om, ScriptedModel([]))
	operator = om.create_agent(name="assistant", model=ScriptedModel([]), integrations=["mail"])
	assert "accounts" in user_bound._hooks.by_name
	assert "accounts" not in operator._hooks.by_name
	assert user_bound.fingerprint() != operator.fingerprint()
	await om.aclose()


async def test_a_sub_agent_acts_for_its_callers_user(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""The caller's user reaches the sub-agent: its per-user tool signs with that user's token."""
	store.save("mail", tokens("at-lena-00000"), user="lena")
	om = make_om(store, api, server)
	child = per_user(om, ScriptedModel([call_tool("mail.me"), finish(result="it is lena")]), "me")
	parent_model = ScriptedModel([call_tool("local.me", task="who?"), finish(result="done")])
	parent = om.create_agent(name="boss", model=parent_model, tools=[child])
	result = await parent.run("go", user="lena")
	assert result.ok, result.error
	assert api.calls == [("/me", "Bearer at-lena-00000")]
	await om.aclose()


async def test_a_parked_run_takes_no_decision_and_its_event_comes_before_finish(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""The event is numbered after the step's own, before the finish; decision= is refused."""
	om = make_om(store, api, server)
	agent = per_user(om, ScriptedModel([call_tool("mail.me")]))
	seen: list[Any] = []
	for name in ("llmOutput", "authorization:request", "finish"):
		agent.on(name, seen.append)
	parked = await agent.run("go", user="mia")
	assert [e.name for e in seen] == ["llmOutput", "authorization:request", "finish"]
	assert [e.seq for e in seen] == sorted(e.seq for e in seen)
	assert seen[1].step == 1 and seen[1].request == authorization_requests(parked.state)[0]
	pending = parked.state.pending
	assert pending is not None and pending["kind"] == "capability"
	assert [(c["by"], c["status"]) for c in pending["calls"]] == [
		("accounts", "authorization_required")
	]
	with pytest.raises(ConfigurationError, match="not an answer or a decision"):
		await agent.resume(parked.state, decision={"call": "x", "action": "approve"})
	await om.aclose()


async def test_a_streamed_run_acts_for_its_user(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""agent.stream(input, user=...) signs with that user's token, as agent.run does."""
	store.save("mail", tokens("at-nora-00000"), user="nora")
	om = make_om(store, api, server)
	agent = per_user(om, ScriptedModel([call_tool("mail.me"), finish(result="nora")]))
	async with agent.stream("who am I?", user="nora") as run:
		names = [event.name async for event in run]
		result = await run.result()
	assert result.ok and result.state.user == "nora" and "tool:response" in names
	assert api.calls == [("/me", "Bearer at-nora-00000")]
	await om.aclose()


def test_end_users_get_the_default_store_unless_it_is_turned_off(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""No store given and no file yet: the first end user to connect makes the default file."""
	from openmolt_core import OpenMolt

	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(tmp_path / "credentials.enc"))
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	om = OpenMolt(entry_points=False)
	assert om.credential_store is None  # no file yet: the operator has none
	made = om.accounts.store()
	assert isinstance(made, EncryptedFileStore)
	assert om.credential_store is made and om.accounts.store() is made
	assert OpenMolt(entry_points=False, credential_store=False).accounts.store() is None


async def test_a_consent_state_is_single_use_even_after_a_restart(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A state that connected once is refused again, with a fresh code too: nothing is stored."""
	om = make_om(store, api, server)
	url = om.accounts.consent(om.plugins.integration("mail"), "mail", "carol", ["mail.read"])
	first, second, third = [await consent(url) for _ in range(3)]  # one state, three codes
	assert (await om.accounts.complete(first)).user == "carol"
	kept = store.load("mail", user="carol")
	with pytest.raises(ConfigurationError, match="used already"):
		await om.accounts.complete(second)
	restarted = make_om(store, api, server)  # another process with the same key and store
	with pytest.raises(ConfigurationError, match="used already"):
		await restarted.accounts.complete(third)
	assert store.load("mail", user="carol") == kept
	assert (
		len([r for r in server.token_requests if r.get("grant_type") == "authorization_code"]) == 1
	)
	await om.aclose()
	await restarted.aclose()


async def test_a_spent_link_does_not_reconnect_a_sign_in_forgotten_since(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A link that connected carol, then her sign-in forgotten (`openmolt auth revoke`): the
	spent link, with a fresh code, connected her again in another process (the record that
	remembered it was deleted with the tokens). Refused now, and forgetting leaves no record
	that reads as connected."""
	from openmolt_core.accounts import forget_sign_in

	om = make_om(store, api, server)
	url = om.accounts.consent(om.plugins.integration("mail"), "mail", "carol", ["mail.read"])
	first, again = await consent(url), await consent(url)
	assert (await om.accounts.complete(first)).user == "carol"
	assert forget_sign_in(store, "mail", "carol")
	assert not forget_sign_in(store, "mail", "carol")  # nothing left to forget
	assert store.load("mail", user="carol") is None
	assert ("mail", "carol") not in store.entries()
	restarted = make_om(store, api, server)  # another process with the same key and store
	with pytest.raises(ConfigurationError, match="used already"):
		await restarted.accounts.complete(again)
	assert store.load("mail", user="carol") is None
	# A new link still connects her, and forgetting again keeps both links spent.
	fresh = om.accounts.consent(om.plugins.integration("mail"), "mail", "carol", ["mail.read"])
	fresh_again = await consent(fresh)
	assert (await restarted.accounts.complete(await consent(fresh))).user == "carol"
	assert forget_sign_in(store, "mail", "carol")
	third = make_om(store, api, server)
	for link in (again, fresh_again):
		with pytest.raises(ConfigurationError, match="used already"):
			await third.accounts.complete(link)
	await third.aclose()
	await om.aclose()
	await restarted.aclose()


def test_spent_consents_are_swept_once_every_state_expired(store: EncryptedFileStore) -> None:
	"""The record of a forgotten sign-in's links goes once none of their states is live."""
	import time

	from openmolt_core.accounts import SPENT, _keep_spent, _sweep

	_keep_spent(store, "mail", "hank", {"old": time.time() + 60})
	_sweep(store, time.time())
	assert store.load(SPENT, "hank") is not None
	store.save(SPENT, {"mail": {"old": time.time() - 1}}, user="hank")
	_sweep(store, time.time())
	assert store.load(SPENT, "hank") is None


async def test_a_callback_refused_for_its_set_up_leaves_the_consent_link_usable(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A callback the process cannot complete (no redirect URI yet) does not use up the state."""
	om = make_om(store, api, server)
	url = om.accounts.consent(om.plugins.integration("mail"), "mail", "dora", ["mail.read"])
	answer = await consent(url)
	om.accounts.redirect_uri = ""  # the setting went missing (a reload without it)
	with pytest.raises(ConfigurationError, match="redirect_uri"):
		await om.accounts.complete(answer)
	om.accounts.redirect_uri = REDIRECT  # set again: the same link completes
	assert (await om.accounts.complete(answer)).user == "dora"
	await om.aclose()


async def test_every_unexpired_consent_stays_used_after_a_restart(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""Two links used one after the other: after a restart the first is refused too."""
	om = make_om(store, api, server)
	mail_spec = om.plugins.integration("mail")
	first_url = om.accounts.consent(mail_spec, "mail", "erin", ["mail.read"])
	second_url = om.accounts.consent(mail_spec, "mail", "erin", ["mail.read"])
	first, first_again = await consent(first_url), await consent(first_url)
	await om.accounts.complete(first)
	await om.accounts.complete(await consent(second_url))
	kept = store.load("mail", user="erin")
	restarted = make_om(store, api, server)
	with pytest.raises(ConfigurationError, match="used already"):
		await restarted.accounts.complete(first_again)
	assert store.load("mail", user="erin") == kept
	await om.aclose()
	await restarted.aclose()


@pytest.mark.parametrize("lockless", [False, True])
async def test_a_consent_completed_while_a_refresh_goes_keeps_its_scopes_and_nonce(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, lockless: bool
) -> None:
	"""A run refreshes gina's token while she consents to one more scope: her consent stays.

	The refresh saved what it had read before the consent over it: the new scope and the used
	consent were gone, so the run parked again and the link worked once more after a restart.
	A store whose lock does not exclude the process's own tasks (lockless) keeps it too: the
	consent waits on the process's lock of the credential, as the refresh does.
	"""
	from openmolt_core.accounts import CONSENT, GRANTED

	if lockless:
		store = _MemoryStore()  # type: ignore[assignment]
	server.refresh_delay = 0.5
	store.save(
		"mail",
		{
			"accessToken": "at-gina-old",
			"refreshToken": "rt-initial-000",
			"expiryDate": _future(-1),
			GRANTED: ["offline", "mail.read"],
		},
		user="gina",
	)
	om = make_om(store, api, server)
	agent = per_user(om, ScriptedModel([call_tool("mail.me"), finish(result="done")]))
	spec = om.plugins.integration("mail")
	url = om.accounts.consent(spec, "mail", "gina", ["offline", "mail.read", "mail.send"])
	answer = await consent(url)
	async with anyio.create_task_group() as tg:
		tg.start_soon(functools.partial(agent.run, "who am I?", user="gina"))
		for _ in range(500):  # the server is a thread: poll until the refresh is on its way
			if any(r.get("grant_type") == "refresh_token" for r in server.token_requests):
				break
			await anyio.sleep(0.01)
		with anyio.fail_after(10):
			await om.accounts.complete(answer)
	stored = store.load("mail", user="gina") or {}
	assert stored[GRANTED] == ["offline", "mail.read", "mail.send"]
	assert len(stored[CONSENT]) == 1
	restarted = make_om(store, api, server)
	with pytest.raises(ConfigurationError, match="used already"):
		await restarted.accounts.complete(answer)
	await om.aclose()
	await restarted.aclose()


def test_a_record_of_before_keeps_its_one_nonce_refused() -> None:
	"""A user's record stored with one nonce as text (before) still refuses that nonce."""
	from openmolt_core.accounts import CONSENT, _consents

	assert _consents({CONSENT: "abc"}) == {"abc": float("inf")}
	assert _consents({CONSENT: {"old": 1.0, "new": 9e18}}) == {"new": 9e18}
	assert _consents({}) == {} and _consents(None) == {}


async def test_a_users_record_never_sets_the_engines_own_keys(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A user's stored record gives their key, never ``allowInternalHosts`` (an end user could
	open internal addresses to their calls); the operator's own setting stays."""
	from openmolt_core import OpenMolt

	keyed = crm_integration()
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		credential_store=store,
		integrations={"crm": {"apiKey": "sk-operator-000000", "allowInternalHosts": ["10.1.1.1"]}},
	)
	om.register_integration("crm", keyed)
	record = {"apiKey": "sk-ivy-1111111", "allowInternalHosts": ["169.254.169.254"]}
	store.save("crm", {**record, "allow_private": True}, user="ivy")
	agent = om.create_agent(
		name="a", model=ScriptedModel([]), integrations=[{"integration": "crm", "account": "user"}]
	)
	bound = agent._tools["crm.me"]
	assert bound.account is not None
	context = await bound.account.context(bound.context, "ivy")
	assert context.config["apiKey"] == "sk-ivy-1111111"
	assert context.config.get("allowInternalHosts") == ["10.1.1.1"]  # the operator's
	assert "allow_private" not in context.config
	await om.aclose()


@pytest.fixture
def inside_names(monkeypatch: pytest.MonkeyPatch) -> None:
	"""Names under ``.inside.example`` resolve to loopback (an attacker's DNS); others are public."""
	from openmolt_core.integrations import _ssrf

	async def resolve(host: str, port: int) -> list[str]:
		return ["127.0.0.1"] if host.endswith(".inside.example") else ["93.184.215.14"]

	monkeypatch.setattr(_ssrf, "resolve_host", resolve)


def _recording(reached: list[str], what: Any) -> Any:
	"""A mock API that adds ``what(request)`` of each request to ``reached`` and answers a token."""

	def api(request: httpx.Request) -> httpx.Response:
		reached.append(what(request))
		return httpx.Response(200, json={"access_token": "at-1", "me": "x"})

	return api


@pytest.mark.usefixtures("inside_names")
async def test_a_host_a_users_record_names_is_checked_from_the_first_request(
	store: EncryptedFileStore,
) -> None:
	"""A user's record gives a setup key the URL reads (their shop, their self-hosted server):
	that host is the user's, not the application's, so the first request's address is checked
	too (it was sent unchecked: an end user reached the operator's internal network), and a
	token URL the record names is checked as well."""
	from openmolt_core import OpenMolt
	from openmolt_core.integrations import (
		ApiSetup,
		BearerCredential,
		HttpTool,
		Integration,
		OAuth2Credential,
	)

	reached: list[str] = []
	api = _recording(reached, lambda request: str(request.url))

	hosted = Integration(
		id="hosted",
		name="Hosted",
		api_setup=ApiSetup(base_url="https://{{ config.host }}"),
		credential_setup=[
			BearerCredential(headers={"Authorization": "Bearer {{ config.apiKey }}"})
		],
		tools=[HttpTool(handle="me", description="who am I", endpoint="/me")],
	)
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		credential_store=store,
		integrations={"hosted": {"host": "api.public.example"}},
	)
	om.register_integration("hosted", hosted)
	store.save("hosted", {"apiKey": "sk-mal-1111111", "host": "admin.inside.example"}, user="mal")
	store.save("hosted", {"apiKey": "sk-ivy-1111111", "host": "ivy.public.example"}, user="ivy")
	model = ScriptedModel(
		[call_tool("hosted.me"), finish(result="a"), call_tool("hosted.me"), finish(result="b")]
	)
	agent = om.create_agent(
		name="a", model=model, integrations=[{"integration": "hosted", "account": "user"}]
	)
	assert (await agent.run("go", user="mal")).ok
	error = json.loads(model.requests[1].messages[-1].content)["results"][0]["error"]
	assert "non-public address" in error
	assert (await agent.run("go", user="ivy")).ok
	assert len(reached) == 1 and "93.184.215.14" in reached[0]  # ivy's, pinned to its address
	# An OAuth2 token URL read from the user's record is checked too.
	oauth = Integration(
		id="hosted2",
		name="Hosted2",
		api_setup=ApiSetup(base_url="https://api.public.example"),
		credential_setup=[
			OAuth2Credential(
				type="oauth2",
				token_url="https://{{ config.host }}/token",
				refresh_token="{{ config.refreshToken }}",
			)
		],
		tools=[HttpTool(handle="me", description="who am I", endpoint="/me")],
	)
	om.register_integration("hosted2", oauth)
	store.save(
		"hosted2", {"refreshToken": "rt-mal-1234567", "host": "sso.inside.example"}, user="mal"
	)
	agent2 = om.create_agent(
		name="b",
		model=ScriptedModel([call_tool("hosted2.me"), finish(result="a")]),
		integrations=[{"integration": "hosted2", "account": "user"}],
	)
	before = len(reached)
	await agent2.run("go", user="mal")
	assert len(reached) == before  # the refresh never left
	await om.aclose()


@pytest.mark.parametrize(
	("credential", "base", "record"),
	[
		(
			{"type": "oauth2", "token_url": "{{ config.tokenUrl }}"},
			"https://api.public.example",
			{"refreshToken": "rt-mal-1234567", "tokenUrl": "https://sso.inside.example/token"},
		),
		(
			{"type": "oauth2", "token_url": "{{ config.tokenUrl }}"},
			"https://api.public.example",
			{"refresh_token": "rt-mal-1234567", "token_url": "https://sso.inside.example/token"},
		),
		(
			{
				"type": "bearer",
				"headers": {
					"Authorization": "Bearer {{ config.apiKey }}",
					"X-Tenant": "{{ config.tenant }}",
				},
			},
			"https://{{ config.tenant }}",
			{"apiKey": "sk-mal-1111111", "tenant": "admin.inside.example"},
		),
	],
	ids=["tokenUrl", "token_url", "a key the address and a header read"],
)
async def test_every_key_of_a_users_record_an_address_reads_is_checked(
	credential: dict[str, Any],
	base: str,
	record: dict[str, Any],
	store: EncryptedFileStore,
	inside_names: None,
) -> None:
	"""The token URL key in either spelling, and a key both the base URL and a header read (S3's
	region signs too), were counted as the credential's: the address went unchecked."""
	from openmolt_core import OpenMolt
	from openmolt_core.integrations import (
		ApiSetup,
		BearerCredential,
		HttpTool,
		Integration,
		OAuth2Credential,
	)

	reached: list[str] = []
	api = _recording(reached, lambda request: request.headers.get("host", ""))

	made = (
		OAuth2Credential(**credential, refresh_token="{{ config.refreshToken }}")
		if credential["type"] == "oauth2"
		else BearerCredential(headers=credential["headers"])
	)
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		credential_store=store,
	)
	om.register_integration(
		"hosted",
		Integration(
			id="hosted",
			name="Hosted",
			api_setup=ApiSetup(base_url=base),
			credential_setup=[made],
			tools=[HttpTool(handle="me", description="me", endpoint="/me")],
		),
	)
	store.save("hosted", record, user="mal")
	agent = om.create_agent(
		name="a",
		model=ScriptedModel([call_tool("hosted.me"), finish(result="a")]),
		integrations=[{"integration": "hosted", "account": "user"}],
	)
	await agent.run("go", user="mal")
	assert not [host for host in reached if "inside" in host]
	await om.aclose()


# who finishes a consent link: the user it was made for (a forwarded link connects nothing) -----


def _issued(server: FakeAuthServer) -> list[dict[str, Any]]:
	"""The tokens the fake service gives from now on (to look for them where none may be)."""
	issued: list[dict[str, Any]] = []
	give = server._tokens

	def recording(scope: str) -> dict[str, Any]:
		issued.append(give(scope))
		return issued[-1]

	server._tokens = recording  # type: ignore[method-assign]
	return issued


def _exchanges(server: FakeAuthServer) -> int:
	return len([r for r in server.token_requests if r.get("grant_type") == "authorization_code"])


async def test_complete_with_the_browsers_user_refuses_a_forwarded_link_and_spends_it(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, caplog: pytest.LogCaptureFixture
) -> None:
	"""A link made for mallory finished in bob's session: refused before the code exchange,
	nothing stored, and the link is used up (mallory's own session cannot use it after)."""
	om = make_om(store, api, server)
	url = om.accounts.consent(om.plugins.integration("mail"), "mail", "mallory", ["mail.read"])
	answer = await consent(url)
	with pytest.raises(ConfigurationError, match="made for another user than bob") as refused:
		await om.accounts.complete(answer, user="bob")
	assert _exchanges(server) == 0  # refused before the code was sent
	assert store.load("mail", user="mallory") is None and store.load("mail", user="bob") is None
	code = dict(parse_qsl(urlsplit(answer).query))["code"]
	assert code not in str(refused.value) and code not in caplog.text
	assert "mallory" in caplog.text and "bob" in caplog.text  # the warning says who, not what
	with pytest.raises(ConfigurationError, match="used already"):
		await om.accounts.complete(await consent(url), user="mallory")
	assert _exchanges(server) == 0
	# The user the link was made for, in their own session, completes a fresh one.
	fresh = om.accounts.consent(om.plugins.integration("mail"), "mail", "mallory", ["mail.read"])
	assert (await om.accounts.complete(await consent(fresh), user="mallory")).user == "mallory"
	assert store.load("mail", user="mallory") is not None
	await om.aclose()


async def test_a_chat_link_is_held_until_its_user_sends_the_code(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, caplog: pytest.LogCaptureFixture
) -> None:
	"""A link sent in a chat: `complete` refuses it (and leaves it usable), `hold` keeps the
	tokens, the right user's `confirm` stores them; no token or code in a log or a repr."""
	from openmolt_core.accounts import is_code

	caplog.set_level("INFO", logger="openmolt")
	issued = _issued(server)
	om = make_om(store, api, server)
	spec = om.plugins.integration("mail")
	url = om.accounts.consent(spec, "mail", "telegram:42", ["mail.read"], run_id="r1", in_chat=True)
	answer = await consent(url)
	assert om.accounts.state_of(answer)["c"] == 1
	with pytest.raises(ConfigurationError, match="sent in a chat"):
		await om.accounts.complete(answer)
	held = await om.accounts.hold(answer)  # the refusal above used nothing up
	assert (held.integration, held.user, held.run_id) == ("mail", "telegram:42", "r1")
	assert is_code(held.code) and is_code(f"  {held.code.lower()}\n")
	assert store.load("mail", user="telegram:42") is None  # held, not stored
	[tokens] = issued
	secrets = [held.code, tokens["access_token"], tokens["refresh_token"]]
	for text in (repr(held), repr(om.accounts), caplog.text):
		assert not any(s in text for s in secrets), text
	connected = await om.accounts.confirm(f" {held.code.lower()} ", "telegram:42")
	assert (connected.user, connected.run_id) == ("telegram:42", "r1")
	assert (store.load("mail", user="telegram:42") or {})["accessToken"] == tokens["access_token"]
	with pytest.raises(ConfigurationError, match="no sign-in waits for this code"):
		await om.accounts.confirm(held.code, "telegram:42")  # single-use
	with pytest.raises(ConfigurationError, match="used already"):
		await om.accounts.hold(await consent(url))
	assert not any(s in caplog.text for s in secrets)
	await om.aclose()


async def test_a_code_sent_by_another_user_drops_the_held_tokens(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, caplog: pytest.LogCaptureFixture
) -> None:
	"""The forwarded-link attack: mallory's link, the victim signs in and sends the code from
	their own chat: nothing is stored for anyone, and mallory cannot use the code after."""
	issued = _issued(server)
	om = make_om(store, api, server)
	spec = om.plugins.integration("mail")
	url = om.accounts.consent(spec, "mail", "telegram:666", ["mail.read"], in_chat=True)
	held = await om.accounts.hold(await consent(url))
	with pytest.raises(ConfigurationError, match="started by someone else") as refused:
		await om.accounts.confirm(held.code, "telegram:42")
	with pytest.raises(ConfigurationError, match="no sign-in waits"):
		await om.accounts.confirm(held.code, "telegram:666")  # dropped: the owner cannot either
	assert store.load("mail", user="telegram:666") is None
	assert store.load("mail", user="telegram:42") is None
	[tokens] = issued
	warned = [r for r in caplog.records if r.levelname == "WARNING"]
	assert any("telegram:666" in r.getMessage() and "telegram:42" in r.getMessage() for r in warned)
	for text in (caplog.text, str(refused.value)):
		assert held.code not in text and tokens["access_token"] not in text
	await om.aclose()


async def test_wrong_codes_are_counted_per_user_and_held_tokens_expire(
	store: EncryptedFileStore,
	api: Api,
	server: FakeAuthServer,
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Five wrong codes make the sixth try wait (the right code too), for that user only; after
	the window it works; held tokens are gone once the consent expires."""
	import time
	from types import SimpleNamespace

	from openmolt_core import accounts

	now = [time.time()]
	monkeypatch.setattr(accounts, "time", SimpleNamespace(time=lambda: now[0]))
	om = make_om(store, api, server)
	spec = om.plugins.integration("mail")
	url = om.accounts.consent(spec, "mail", "telegram:7", ["mail.read"], in_chat=True)
	held = await om.accounts.hold(await consent(url))
	for _ in range(5):
		with pytest.raises(ConfigurationError, match="no sign-in waits"):
			await om.accounts.confirm("AAAA-BBBB-CCC2", "telegram:7")
	with pytest.raises(ConfigurationError, match="too many wrong codes; try again in 15 minutes"):
		await om.accounts.confirm(held.code, "telegram:7")
	with pytest.raises(ConfigurationError, match="no sign-in waits"):
		await om.accounts.confirm("AAAA-BBBB-CCC3", "telegram:8")  # another user still tries
	now[0] += 901
	assert (await om.accounts.confirm(held.code, "telegram:7")).user == "telegram:7"
	late = om.accounts.consent(spec, "mail", "telegram:9", ["mail.read"], in_chat=True)
	kept = await om.accounts.hold(await consent(late))
	now[0] = kept.expires + 1  # the consent expired: its tokens are dropped
	with pytest.raises(ConfigurationError, match="no sign-in waits"):
		await om.accounts.confirm(kept.code, "telegram:9")
	assert store.load("mail", user="telegram:9") is None
	await om.aclose()


def test_codes_are_long_random_and_only_exact_codes_are_taken_as_codes() -> None:
	"""60 bits from `secrets`, one digit at least; chat words shaped alike are no code."""
	from openmolt_core.accounts import _new_code, is_code

	codes = {_new_code() for _ in range(200)}
	assert len(codes) == 200 and all(is_code(c) and len(c) == 14 for c in codes)
	for text in ("that-very-text", "ABCD-EFGH-JKL2 please", "ABCD-EFGH", "hello", "ABCD-EFGH-JK0M"):
		assert not is_code(text), text


async def test_only_a_chat_triggers_run_marks_its_consent_link_as_a_chats(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""The run a chat started parks with a link whose state says so; a run of the API does not."""
	from openmolt_core.observe import started_by

	om = make_om(store, api, server)
	agent = per_user(om, ScriptedModel([call_tool("mail.me"), call_tool("mail.me")]))
	with started_by("chat", where="telegram:assistant", sender="42"):
		in_chat = await agent.run("who am I?", user="telegram:42")
	plain = await agent.run("who am I?", user="alice")
	states = []
	for parked in (in_chat, plain):
		[request] = authorization_requests(parked.state)
		states.append(om.accounts.state_of(urlsplit(request["url"]).query))
	assert states[0].get("c") == 1 and "c" not in states[1]
	await om.aclose()


# held sign-ins shared by the processes of one credential store ---------------------------------


def _processes(store: EncryptedFileStore, api: Api, server: FakeAuthServer) -> tuple[Any, Any]:
	"""Two instances on one credential file, each with its own store object, like two processes
	of ``openmolt serve`` (the file's locks are ``flock``s: they exclude each other here too)."""
	return make_om(store, api, server), make_om(EncryptedFileStore(store.path), api, server)


async def test_a_sign_in_held_by_one_process_is_confirmed_by_another_after_a_restart(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, caplog: pytest.LogCaptureFixture
) -> None:
	"""The callback reaches one process, the code another that started after it: the tokens wait
	in the store (never the code, never as an account) and are masked where they are read."""
	from openmolt_core.accounts import HELD
	from openmolt_core.credstore import is_reserved, stored_secrets

	issued = _issued(server)
	first, second = _processes(store, api, server)
	assert "csecret-abcdef" in second.secrets.values()  # read as it starts: nothing held then
	spec = first.plugins.integration("mail")
	url = first.accounts.consent(
		spec, "mail", "telegram:42", ["mail.read"], run_id="r7", in_chat=True
	)
	held = await first.accounts.hold(await consent(url))
	await first.aclose()  # the process that held it is gone
	[tokens] = issued
	[(integration, digest)] = [e for e in store.entries() if e[0] != SPENT]
	assert integration == HELD and is_reserved(integration) and digest
	assert held.code not in digest and held.code.replace("-", "") not in digest
	assert store.load("mail", user="telegram:42") is None and store.load("mail") is None
	found = stored_secrets(store)  # what a starting process masks: the tokens, no name
	assert {tokens["access_token"], tokens["refresh_token"]} <= found
	assert not found & {"telegram:42", "mail", "r7", digest}
	later = make_om(EncryptedFileStore(store.path), api, server)
	assert later.secrets.mask(tokens["access_token"]) != tokens["access_token"]
	assert second.secrets.mask(tokens["access_token"]) == tokens["access_token"]  # not read yet
	connected = await second.accounts.confirm(held.code, "telegram:42")
	assert (connected.integration, connected.user, connected.run_id) == (
		"mail",
		"telegram:42",
		"r7",
	)
	assert second.secrets.mask(tokens["access_token"]) != tokens["access_token"]
	saved = store.load("mail", user="telegram:42") or {}
	assert saved["accessToken"] == tokens["access_token"] and saved["grantedScopes"] == [
		"mail.read"
	]
	assert store.entries() == [
		("mail", "telegram:42"),
		(SPENT, "telegram:42"),
	]  # taken out of the store
	with pytest.raises(ConfigurationError, match="used already"):  # the state stays spent
		await second.accounts.hold(await consent(url))
	assert not any(s in caplog.text for s in (held.code, *tokens.values()) if isinstance(s, str))
	await second.aclose()
	await later.aclose()


async def test_a_held_link_replayed_with_a_fresh_code_elsewhere_or_after_a_restart_is_refused(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""Before its code comes, a held chat link replayed (a fresh code from the service) to
	another process on the store, or to this one restarted, is refused: it is held once."""
	first, second = _processes(store, api, server)
	spec = first.plugins.integration("mail")
	url = first.accounts.consent(spec, "mail", "telegram:42", ["mail.read"], in_chat=True)
	held = await first.accounts.hold(await consent(url))
	with pytest.raises(ConfigurationError, match="used already"):
		await second.accounts.hold(await consent(url))
	await first.aclose()
	later = make_om(EncryptedFileStore(store.path), api, server)
	with pytest.raises(ConfigurationError, match="used already"):
		await later.accounts.hold(await consent(url))
	connected = await later.accounts.confirm(held.code, "telegram:42")  # the one held still is
	assert connected.user == "telegram:42"
	await second.aclose()
	await later.aclose()


async def test_machines_sharing_only_a_durable_store_take_a_held_link_once(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, tmp_path: Path
) -> None:
	"""On a store machines share (the PostgreSQL durable store's table, `StoreSeen`; here on a
	SQLite engine), a held chat link replayed with a fresh code to the other machine, whose
	credential file is its own, is refused there: the nonce is taken in the shared table."""
	import sqlalchemy as sa

	from openmolt_dbos._seen import StoreSeen

	shared = StoreSeen(sa.create_engine(f"sqlite:///{tmp_path / 'seen.db'}"), "accounts:consents")
	first = make_om(store, api, server)
	second = make_om(EncryptedFileStore(tmp_path / "other-machine.json"), api, server)
	for om in (first, second):
		om.accounts._claims = lambda: shared
	spec = first.plugins.integration("mail")
	url = first.accounts.consent(spec, "mail", "telegram:42", ["mail.read"], in_chat=True)
	held = await first.accounts.hold(await consent(url))
	with pytest.raises(ConfigurationError, match="used already"):
		await second.accounts.hold(await consent(url))
	connected = await first.accounts.confirm(held.code, "telegram:42")
	assert connected.user == "telegram:42"
	await first.aclose()
	await second.aclose()


async def test_a_code_sent_to_two_processes_at_once_connects_once(
	store: EncryptedFileStore,
	api: Api,
	server: FakeAuthServer,
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Both processes read the held sign-in slowly at the same moment: one takes it and stores
	the tokens, the other finds nothing; the account is saved once."""
	import time

	from openmolt_core.accounts import HELD

	first, second = _processes(store, api, server)
	spec = first.plugins.integration("mail")
	url = first.accounts.consent(spec, "mail", "telegram:42", ["mail.read"], in_chat=True)
	held = await first.accounts.hold(await consent(url))
	load, save = EncryptedFileStore.load, EncryptedFileStore.save
	saved: list[str | None] = []

	def slow_load(self: EncryptedFileStore, integration: str, user: str | None = None) -> Any:
		found = load(self, integration, user)
		if integration == HELD:
			time.sleep(0.3)  # both would read it before either takes it, without the lock
		return found

	def counted_save(
		self: EncryptedFileStore, integration: str, config: Any, user: Any = None
	) -> None:
		if integration == "mail":
			saved.append(user)
		save(self, integration, config, user)

	monkeypatch.setattr(EncryptedFileStore, "load", slow_load)
	monkeypatch.setattr(EncryptedFileStore, "save", counted_save)
	outcomes: list[object] = []

	async def confirm(om: Any) -> None:
		try:
			outcomes.append(await om.accounts.confirm(held.code, "telegram:42"))
		except ConfigurationError as exc:
			outcomes.append(str(exc))

	async with anyio.create_task_group() as tg:
		tg.start_soon(confirm, first)
		tg.start_soon(confirm, second)
	assert saved == ["telegram:42"]
	assert len([o for o in outcomes if isinstance(o, str) and "no sign-in waits" in o]) == 1
	await first.aclose()
	await second.aclose()


async def test_wrong_codes_count_in_every_process_sharing_the_store(
	store: EncryptedFileStore,
	api: Api,
	server: FakeAuthServer,
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A guesser who spreads their tries over two processes waits after five all the same, and
	after the window they may try again; nobody else's tries are touched."""
	import time
	from types import SimpleNamespace

	from openmolt_core import accounts

	now = [time.time()]
	monkeypatch.setattr(accounts, "time", SimpleNamespace(time=lambda: now[0]))
	first, second = _processes(store, api, server)
	spec = first.plugins.integration("mail")
	url = first.accounts.consent(spec, "mail", "telegram:7", ["mail.read"], in_chat=True)
	held = await first.accounts.hold(await consent(url))
	for n, om in enumerate([first, second, first, second, second]):
		with pytest.raises(ConfigurationError, match="no sign-in waits"):
			await om.accounts.confirm(f"AAAA-BBBB-CC{n + 2}D", "telegram:7")
	for om in (first, second):
		with pytest.raises(ConfigurationError, match="too many wrong codes; try again in 15"):
			await om.accounts.confirm(held.code, "telegram:7")
	with pytest.raises(ConfigurationError, match="no sign-in waits"):
		await second.accounts.confirm("AAAA-BBBB-CCC9", "telegram:8")  # another user still tries
	now[0] += 901
	assert (await second.accounts.confirm(held.code, "telegram:7")).user == "telegram:7"
	assert ("openmolt.tries", "telegram:7") not in store.entries()  # a success clears them
	await first.aclose()
	await second.aclose()


async def test_expired_sign_ins_and_tries_are_dropped_from_the_store(
	store: EncryptedFileStore,
	api: Api,
	server: FakeAuthServer,
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""An expired sign-in confirmed is refused and dropped; one nobody confirmed, and tries past
	their window, are swept when the next sign-in is held: no stale tokens stay in the store."""
	import time
	from types import SimpleNamespace

	from openmolt_core import accounts
	from openmolt_core.accounts import HELD, TRIES

	now = [time.time()]
	monkeypatch.setattr(accounts, "time", SimpleNamespace(time=lambda: now[0]))
	first, second = _processes(store, api, server)
	spec = first.plugins.integration("mail")

	async def hold(user: str) -> Any:
		url = first.accounts.consent(spec, "mail", user, ["mail.read"], in_chat=True)
		return await first.accounts.hold(await consent(url))

	confirmed, forgotten = await hold("telegram:1"), await hold("telegram:2")
	with pytest.raises(ConfigurationError, match="no sign-in waits"):
		await second.accounts.confirm("AAAA-BBBB-CCC2", "telegram:3")
	assert sorted(i for i, _ in store.entries() if i != SPENT) == [HELD, HELD, TRIES]
	now[0] = confirmed.expires + 1
	with pytest.raises(ConfigurationError, match="no sign-in waits"):
		await second.accounts.confirm(confirmed.code, "telegram:1")
	assert store.load("mail", user="telegram:1") is None
	assert len([e for e in store.entries() if e[0] == HELD]) == 1  # the one confirmed is gone
	now[0] += 901  # the tries (telegram:3's, and telegram:1's late code) are past their window
	fresh = await hold("telegram:4")  # sweeps the forgotten one and every stale try count
	kept = [e for e in store.entries() if e[0] in (HELD, TRIES)]
	assert kept == [(HELD, kept[0][1])] and forgotten.code != fresh.code
	assert (await second.accounts.confirm(fresh.code, "telegram:4")).user == "telegram:4"
	await first.aclose()
	await second.aclose()


async def test_a_reserved_integration_id_is_never_an_end_users_account(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""An agent cannot bind the store's reserved records as a user's account."""
	from openmolt_core.accounts import HELD, TRIES

	om = make_om(store, api, server)
	spec = om.plugins.integration("mail")
	for reserved in (HELD, TRIES, "openmolt.other"):
		with pytest.raises(ConfigurationError, match="reserved for OpenMolt's own records"):
			om.accounts.for_binding(spec, reserved, None, None)
	await om.aclose()


@pytest.mark.parametrize("separator", [" ", ","])
async def test_a_scope_the_user_declined_is_not_recorded_as_granted(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, separator: str
) -> None:
	"""A user who unticks send on the consent page: the send call parks again, asking for it."""
	server.declined = {"mail.send"}
	server.scope_separator = separator  # Google lists them with spaces, GitHub with commas
	om = make_om(store, api, server)
	url = om.accounts.consent(
		om.plugins.integration("mail"), "mail", "gail", ["offline", "mail.read", "mail.send"]
	)
	await om.accounts.complete(await consent(url))
	stored = store.load("mail", user="gail")
	assert stored is not None and stored["grantedScopes"] == ["offline", "mail.read"]
	model = ScriptedModel([call_tool("mail.me"), call_tool("mail.send"), finish(result="x")])
	agent = om.create_agent(
		name="a",
		model=model,
		integrations=[{"integration": "mail", "account": "user", "scopes": ["read", "send"]}],
	)
	parked = await agent.run("go", user="gail")
	[request] = authorization_requests(parked.state)
	assert request["reason"] == "scopes" and request["tool"] == "mail.send"
	assert api.calls == [("/me", f"Bearer {stored['accessToken']}")]  # read ran, send did not
	await om.aclose()


@pytest.mark.parametrize(
	"reported",
	[None, "", "https://mail.example.com/MAIL.READ https://mail.example.com/mail.send"],
)
async def test_a_grant_reported_otherwise_keeps_the_scopes_asked(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, reported: str | None
) -> None:
	"""No scope in the reply, an empty one (GitHub Apps), or Microsoft's URL form: all asked kept."""
	original = server._tokens

	def tokens_as_reported(scope: str) -> dict[str, Any]:
		body = original(scope)
		if reported is None:
			body.pop("scope")
		else:
			body["scope"] = reported
		return body

	server._tokens = tokens_as_reported  # type: ignore[method-assign]
	om = make_om(store, api, server)
	asked = ["offline", "mail.read", "mail.send"]
	url = om.accounts.consent(om.plugins.integration("mail"), "mail", "hal", asked)
	await om.accounts.complete(await consent(url))
	stored = store.load("mail", user="hal")
	assert stored is not None and stored["grantedScopes"] == asked
	await om.aclose()


async def test_a_scope_the_reply_leaves_out_as_implied_stays_granted(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A service that lists only the write scope when read and write were both asked (Shopify's
	write_orders includes read_orders): the read scope the credential declares implied is
	granted, so the read tools do not park for it after every consent."""
	from openmolt_core.integrations import HttpTool

	original = server._tokens

	def compressed(scope: str) -> dict[str, Any]:
		return {**original(scope), "scope": "mail.write offline"}

	server._tokens = compressed  # type: ignore[method-assign]
	om = make_om(store, api, server)
	om.register_integration(
		"mail",
		mail_integration(
			server.url,
			scopes=["mail.read", "mail.write", "offline"],
			scope_map={"read": ["mail.read"], "write": ["mail.write"]},
			implied_scopes={"mail.write": ["mail.read"]},
			tools=[HttpTool(handle="me", description="who am I", endpoint="/me", scopes=["read"])],
		),
	)
	asked = ["offline", "mail.read", "mail.write"]
	url = om.accounts.consent(om.plugins.integration("mail"), "mail", "ivy", asked)
	await om.accounts.complete(await consent(url))
	stored = store.load("mail", user="ivy")
	assert stored is not None and stored["grantedScopes"] == asked
	await om.aclose()


async def test_a_state_names_its_agent_and_an_instance_sharing_the_key_refuses_it(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer, tmp_path: Path
) -> None:
	"""Two instances on one OPENMOLT_AUTH_KEY: a link made for one's agent is refused by the
	other (nothing stored there, the link still usable) and completed by its own instance."""
	from openmolt_core.accounts import ForeignConsentError

	mine = make_om(store, api, server)
	theirs = make_om(EncryptedFileStore(tmp_path / "theirs.enc"), api, server)
	per_user(theirs, ScriptedModel([]), "beta")
	alpha = per_user(mine, ScriptedModel([call_tool("mail.me")]), "alpha")
	parked = await alpha.run("who am I?", user="carol")
	[request] = authorization_requests(parked.state)
	answer = await consent(request["url"])
	assert mine.accounts.state_of(answer)["a"] == "alpha"
	with pytest.raises(ForeignConsentError, match="'alpha'") as refused:
		await theirs.accounts.complete(answer)
	assert isinstance(refused.value, ConfigurationError) and _exchanges(server) == 0
	assert theirs.credential_store is not None and theirs.credential_store.entries() == []
	connected = await mine.accounts.complete(answer)
	assert (connected.agent, connected.user, connected.integration) == ("alpha", "carol", "mail")
	assert store.load("mail", user="carol") is not None
	await mine.aclose()
	await theirs.aclose()


async def test_a_state_is_accepted_only_for_the_integration_its_agent_binds_per_user(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""A link naming an agent that does not bind its integration per user connects nothing."""
	from openmolt_core.accounts import ForeignConsentError

	om = make_om(store, api, server)
	om.register_integration("inbox", mail(server.url))
	per_user(om, ScriptedModel([]), "alpha")  # binds mail per user, not inbox
	om.create_agent(name="beta", model=ScriptedModel([]), integrations=["inbox"])  # operator's
	inbox = om.plugins.integration("inbox")
	for agent in ("alpha", "beta", "gamma"):
		client = {"clientId": "cid-123"}
		url = om.accounts.consent(
			inbox, "inbox", "carol", ["mail.read"], agent=agent, config=client
		)
		with pytest.raises(ForeignConsentError, match=f"'{agent}'.*inbox"):
			await om.accounts.complete(await consent(url))
	assert _exchanges(server) == 0 and store.entries() == []
	await om.aclose()


async def test_a_held_sign_in_is_confirmed_only_in_its_agents_chat(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""The code of agent alpha's sign-in sent to another agent's chat is refused and kept;
	sent to alpha's, it connects, and says which agent asked."""
	om = make_om(store, api, server)
	per_user(om, ScriptedModel([]), "alpha")
	spec = om.plugins.integration("mail")
	url = om.accounts.consent(
		spec, "mail", "telegram:42", ["mail.read"], run_id="r1", in_chat=True, agent="alpha"
	)
	held = await om.accounts.hold(await consent(url))
	assert held.agent == "alpha"
	with pytest.raises(ConfigurationError, match="another agent"):
		await om.accounts.confirm(held.code, "telegram:42", agent="beta")
	assert store.load("mail", user="telegram:42") is None
	connected = await om.accounts.confirm(held.code, "telegram:42", agent="alpha")
	assert (connected.agent, connected.run_id) == ("alpha", "r1")
	assert store.load("mail", user="telegram:42") is not None
	await om.aclose()


class _MemoryStore:
	"""An application's own store for one process: a dict, and no lock of its own."""

	def __init__(self) -> None:
		self.records: dict[tuple[str, str | None], dict[str, Any]] = {}

	def load(self, integration: str, user: str | None = None) -> dict[str, Any] | None:
		found = self.records.get((integration, user))
		return None if found is None else dict(found)

	def save(self, integration: str, config: Any, user: str | None = None) -> None:
		self.records[integration, user] = dict(config)

	def delete(self, integration: str, user: str | None = None) -> bool:
		return self.records.pop((integration, user), None) is not None

	def entries(self) -> list[tuple[str, str | None]]:
		return sorted(self.records, key=lambda e: (e[0], e[1] or ""))

	def locked(self, integration: str, user: str | None = None) -> Any:
		import contextlib

		return contextlib.nullcontext()


async def test_two_runs_of_one_user_refresh_once_whatever_the_store_s_lock(
	api: Api, server: FakeAuthServer
) -> None:
	"""Two runs of a user at once find the token expired: one refresh, both use its token.

	Each call makes its own auth, so only the store's lock kept them apart: with a store whose
	lock does not exclude the process's own tasks, both spent the rotating refresh token, the
	second was refused (invalid_grant) and saved the spent token over the new one, and the user
	had to connect again.
	"""
	server.refresh_delay = 0.3
	store = _MemoryStore()
	store.save(
		"mail",
		{"accessToken": "at-old", "refreshToken": "rt-initial-000", "expiryDate": _future(-1)},
		user="erin",
	)
	om = make_om(store, api, server)  # type: ignore[arg-type]
	agents = [
		per_user(om, ScriptedModel([call_tool("mail.me"), finish(result="done")]), name=n)
		for n in ("a", "b")
	]
	results: list[Any] = []

	async def run(agent: Any) -> None:
		results.append(await agent.run("who am I?", user="erin"))

	async with anyio.create_task_group() as tg:
		for agent in agents:
			tg.start_soon(run, agent)
	assert [r.status for r in results] == ["success", "success"]
	assert server.refreshes == 1
	stored = store.load("mail", user="erin") or {}
	assert stored["refreshToken"] in server.live_refresh
	assert api.calls == [("/me", f"Bearer {stored['accessToken']}")] * 2
	await om.aclose()


async def test_a_burst_of_calls_of_one_user_with_an_expired_token_refreshes_once(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""More calls at once than worker threads: one refresh, every call uses its token.

	Each waiting call held a worker thread (waiting on the credential's lock); with all of them
	taken, the refresh holding the lock could not read or save the store, and the run hung.
	"""
	server.refresh_delay = 0.2
	store.save(
		"mail",
		{"accessToken": "at-old", "refreshToken": "rt-initial-000", "expiryDate": _future(-1)},
		user="erin",
	)
	om = make_om(store, api, server)
	limiter = anyio.to_thread.current_default_thread_limiter()
	calls = int(limiter.total_tokens) + 10
	agents = [
		per_user(om, ScriptedModel([call_tool("mail.me"), finish(result="done")]), name=f"a{i}")
		for i in range(calls)
	]
	results: list[Any] = []

	async def run(one: Any) -> None:
		results.append(await one.run("who am I?", user="erin"))

	with anyio.fail_after(60):
		async with anyio.create_task_group() as tg:
			for one in agents:
				tg.start_soon(run, one)
	assert all(r.ok for r in results) and len(results) == calls
	assert server.refreshes == 1
	await om.aclose()


async def test_a_link_bound_to_a_browser_is_finished_only_with_that_browser_s_secret(
	store: EncryptedFileStore, api: Api, server: FakeAuthServer
) -> None:
	"""Bound: another secret, none, a callback that binds none, or a chat's `hold` refuse it
	and use nothing up; unbound, a binding callback refuses it; the state's life is capped."""
	import time

	om = make_om(store, api, server)
	spec = om.plugins.integration("mail")
	url = om.accounts.consent(spec, "mail", "carol", ["mail.read"], browser="s3cret", ttl=60)
	location = await consent(url)
	body = om.accounts.state_of(location)
	assert body["e"] <= time.time() + 61 and "s3cret" not in json.dumps(body)
	assert om.accounts.browser_cookie(body).startswith("openmolt_auth_")
	for browser in ("another", "", None):
		with pytest.raises(ConfigurationError, match="browser"):
			await om.accounts.complete(location, browser=browser)
	with pytest.raises(ConfigurationError, match="browser"):
		await om.accounts.hold(location)
	unbound = await consent(om.accounts.consent(spec, "mail", "carol", ["mail.read"]))
	with pytest.raises(ConfigurationError, match="not started in this browser"):
		await om.accounts.complete(unbound, browser="s3cret")
	assert store.entries() == [] and not server.token_requests
	assert (await om.accounts.complete(location, browser="s3cret")).user == "carol"
	await om.aclose()


@pytest.mark.parametrize("accounts_first", [False, True])
def test_a_store_set_to_none_by_hand_is_none_for_end_users_too(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, accounts_first: bool
) -> None:
	"""``om.credential_store = None`` means no store, as ``credential_store=False`` does: the
	integrations read none and the accounts make no default file to keep end users' tokens in
	(whether ``om.accounts`` was made before or after)."""
	from openmolt_core import OpenMolt

	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(tmp_path / "credentials.enc"))
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	om = OpenMolt(entry_points=False)
	if accounts_first:
		assert om.accounts is not None
	om.credential_store = None
	assert om.accounts.store() is None
	assert om.credential_store is None
	assert not (tmp_path / "credentials.enc").exists()
	given = EncryptedFileStore(tmp_path / "given.enc")
	om.credential_store = given  # a store set by hand is the end users' too
	assert om.accounts.store() is given
