"""The viewer and end users' accounts: a parked run listed with its link, and the callback route."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from cryptography.fernet import Fernet

from openmolt import OpenMolt
from openmolt_core.accounts import authorization_requests
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_ui import Viewer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core" / "integrations"))
from _fake_oauth import FakeAuthServer, mail_integration

pytestmark = pytest.mark.anyio


@pytest.fixture
def auth() -> Iterator[FakeAuthServer]:
	srv = FakeAuthServer()
	yield srv
	srv.close()


def instance(tmp_path: Path, auth_url: str, handler: Any) -> OpenMolt:
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
		run_store=tmp_path / "r.db",
		credential_store=EncryptedFileStore(tmp_path / "c.enc"),
		integrations={"mail": {"clientId": "cid-123", "clientSecret": "csecret-abcdef"}},
		accounts={"redirect_uri": "http://127.0.0.1:9/auth/callback", "key": "k" * 32},
	)
	om.register_integration("mail", mail_integration(auth_url, refresh=False))
	return om


async def state_until(viewer: Viewer, http: httpx.AsyncClient, check: Any) -> dict[str, Any]:
	with anyio.fail_after(15):
		while True:
			state: dict[str, Any] = (
				await http.get(
					f"http://127.0.0.1:{viewer.port}/api/state",
					headers={"x-openmolt-token": viewer.token},
				)
			).json()
			if check(state):
				return state
			await anyio.sleep(0.05)


async def started(
	viewer: Viewer, http: httpx.AsyncClient, connect: str, auth: FakeAuthServer
) -> str:
	"""Start a sign-in from the page in ``http``'s browser; the query the service sends back."""
	start = f"http://127.0.0.1:{viewer.port}{connect}&token={viewer.token}"
	confirm = await http.get(start)
	assert confirm.status_code == 200 and "Continue to sign in" in confirm.text
	go = await http.get(start + "&go=1")
	assert go.status_code == 303
	location = (await http.get(go.headers["location"])).headers["location"]
	return location.split("?", 1)[1]


async def test_a_run_waiting_for_an_account_is_listed_and_goes_on_after_the_callback(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auth: FakeAuthServer
) -> None:
	"""The page shows who must connect what (no answer box); the callback stores it and resumes."""
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	real = httpx.AsyncClient(trust_env=False)
	seen: list[str] = []

	async def api(request: httpx.Request) -> httpx.Response:
		if request.url.host == "127.0.0.1":
			answer = await real.send(request)
			return httpx.Response(answer.status_code, content=await answer.aread())
		seen.append(request.headers.get("authorization", ""))
		return httpx.Response(200, json={"me": "alice"})

	om = instance(tmp_path, auth.url, api)
	agent = om.create_agent(
		name="Mailer",
		model=ScriptedModel([call_tool("mail.me"), finish(result="alice")]),
		integrations=[{"integration": "mail", "account": "user"}],
	)
	parked = await agent.run("who am I?", user="alice")
	assert parked.status == "authorization_required"
	run_id = parked.state.run_id
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient(trust_env=False) as http:
		state = await state_until(viewer, http, lambda s: s["questions"])
		(shown,) = state["questions"]
		assert shown["run_id"] == run_id and shown["can_answer"] is False
		assert "alice to connect mail" in shown["message"]
		query = await started(viewer, http, shown["connect"], auth)
		base = f"http://127.0.0.1:{viewer.port}/auth/callback"
		forged = await http.get(f"{base}?code=x&state=forged.sig")  # no token: the state decides
		assert forged.status_code == 400 and "not connected" in forged.text
		looked = await http.head(f"{base}?{query}", headers={"x-openmolt-token": viewer.token})
		assert looked.status_code == 200  # a HEAD, even the operator's, uses nothing up
		page = await http.get(f"{base}?{query}")
		assert page.status_code == 200 and "the agent goes on" in page.text
		await state_until(
			viewer,
			http,
			lambda s: any(r["run_id"] == run_id and r["status"] == "success" for r in s["runs"]),
		)
	stored = EncryptedFileStore(tmp_path / "c.enc").load("mail", user="alice")
	assert stored is not None and seen == [f"Bearer {stored['accessToken']}"]
	await real.aclose()
	await om.aclose()


async def test_the_viewer_s_callback_masks_the_code_and_never_fails_with_a_500(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""As the server's: a refusal that echoes the code is shown without it; a failure is a 502."""
	from openmolt_core.errors import ToolError

	code = "sekrit-code-0123456789"
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([finish(result="x")]))
	failures: list[Exception] = [ToolError(f"mail: the exchange was refused (bad code {code})")]

	async def complete(query: str, **_: Any) -> Any:
		raise failures[0]

	monkeypatch.setattr(om.accounts, "complete", complete)
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient(trust_env=False) as http:
		url = f"http://127.0.0.1:{viewer.port}/auth/callback?code={code}&state=abc.def"
		page = await http.get(url)
		assert page.status_code == 400 and "not connected" in page.text
		assert code not in page.text and "[code]" in page.text
		failures[0] = RuntimeError(f"boom {code}")
		broken = await http.get(url)
		assert broken.status_code == 502
		assert code not in broken.text and "could not be reached" in broken.text
	await om.aclose()


async def test_the_viewer_s_callback_page_is_masked_with_the_secrets_known_now(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""As every other thing the viewer serves: a refusal that echoes a secret (the service's
	error_description) shows it masked."""
	from openmolt_core.errors import ToolError

	secret = "csecret-0123456789abcdef"
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)
	agent = om.create_agent(name="A", model=ScriptedModel([finish(result="x")]))

	async def complete(query: str, **_: Any) -> Any:
		raise ToolError(f"mail: invalid_client: the client secret {secret} is wrong")

	monkeypatch.setattr(om.accounts, "complete", complete)
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient(trust_env=False) as http:
		page = await http.get(f"http://127.0.0.1:{viewer.port}/auth/callback?code=c0de&state=s")
		assert page.status_code == 400 and "[redacted]" in page.text
		assert secret not in page.text
	await om.aclose()


def parked_mailer(tmp_path: Path, auth: FakeAuthServer) -> tuple[OpenMolt, Any]:
	async def api(request: httpx.Request) -> httpx.Response:
		if request.url.host == "127.0.0.1":  # the fake service's token endpoint
			async with httpx.AsyncClient(trust_env=False) as real:
				answer = await real.send(request)
				return httpx.Response(answer.status_code, content=await answer.aread())
		return httpx.Response(200, json={"me": "x"})

	om = instance(tmp_path, auth.url, api)
	agent = om.create_agent(
		name="Mailer",
		model=ScriptedModel([call_tool("mail.me"), finish(result="x")]),
		integrations=[{"integration": "mail", "account": "user"}],
	)
	return om, agent


async def answered(http: httpx.AsyncClient, url: str) -> str:
	"""The query the service sends back for a consent URL (whoever signs in on it)."""
	return (await http.get(url)).headers["location"].split("?", 1)[1]


async def test_the_viewer_finishes_a_sign_in_only_in_the_browser_that_started_it(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auth: FakeAuthServer
) -> None:
	"""The run's own link, or one another browser started, connects nothing (account injection
	and login CSRF); the starting browser's cookie is HttpOnly, SameSite, for the callback only."""
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	om, agent = parked_mailer(tmp_path, auth)
	parked = await agent.run("who am I?", user="alice")
	[request] = authorization_requests(parked.state)
	store = EncryptedFileStore(tmp_path / "c.enc")
	async with (
		Viewer(om, agents=[agent]) as viewer,
		httpx.AsyncClient(trust_env=False) as operator,
		httpx.AsyncClient(trust_env=False) as attacker,
	):
		base = f"http://127.0.0.1:{viewer.port}/auth/callback"
		# The attacker obtained the run's link, signed in with their own account: refused.
		injected = await attacker.get(f"{base}?{await answered(attacker, request['url'])}")
		assert injected.status_code == 400 and "not started in this browser" in injected.text
		# The operator's browser is sent to an answer the attacker made: refused too.
		csrf = await operator.get(f"{base}?{await answered(attacker, request['url'])}")
		assert csrf.status_code == 400 and store.load("mail", user="alice") is None
		assert not [t for t in auth.token_requests if t.get("grant_type") == "authorization_code"]
		state = await state_until(viewer, operator, lambda s: s["questions"])
		connect = state["questions"][0]["connect"]
		start = f"http://127.0.0.1:{viewer.port}{connect}&token={viewer.token}"
		confirm = await operator.get(start)
		assert "for the user alice" in confirm.text and "mail account" in confirm.text
		assert (await attacker.get(start.replace(viewer.token, "x"))).status_code == 403
		go = await operator.get(start + "&go=1")
		cookie = go.headers["set-cookie"].lower()
		assert "httponly" in cookie and "samesite=lax" in cookie and "path=/auth/callback" in cookie
		# The operator's link, finished in the attacker's browser: refused, not used up.
		query = await answered(attacker, go.headers["location"])
		stolen = await attacker.get(f"{base}?{query}")
		assert stolen.status_code == 400 and store.load("mail", user="alice") is None
		done = await operator.get(f"{base}?{query}")
		assert done.status_code == 200 and "is connected" in done.text, done.text
		assert store.load("mail", user="alice") is not None
		assert (await operator.get(f"{base}?{query}")).status_code == 400  # single-use
	await om.aclose()


@pytest.mark.parametrize("in_chat", [True, False], ids=["live-chat-run", "recovered-run"])
async def test_a_chat_user_s_link_is_refused_at_the_viewer_s_callback(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auth: FakeAuthServer, in_chat: bool
) -> None:
	"""A chat user's link (a live chat run's, flagged, or a recovered durable run's, not) is never
	completed at the viewer: nothing exchanged, nothing stored."""
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	om, agent = parked_mailer(tmp_path, auth)
	spec = om.plugins.integration("mail")
	url = om.accounts.consent(
		spec, "mail", "telegram:42", ["mail.read"], run_id="r1", in_chat=in_chat, agent="Mailer"
	)
	async with (
		Viewer(om, agents=[agent]) as viewer,
		httpx.AsyncClient(trust_env=False) as http,
	):
		page = await http.get(
			f"http://127.0.0.1:{viewer.port}/auth/callback?{await answered(http, url)}"
		)
	assert page.status_code == 400 and "not connected" in page.text
	assert EncryptedFileStore(tmp_path / "c.enc").load("mail", user="telegram:42") is None
	assert not [t for t in auth.token_requests if t.get("grant_type") == "authorization_code"]
	await om.aclose()
