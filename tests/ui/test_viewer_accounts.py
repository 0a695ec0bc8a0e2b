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
		assert f"alice to connect mail: {auth.url}/authorize?" in shown["message"]
		link = shown["message"].split("connect mail: ", 1)[1]
		location = (await http.get(link)).headers["location"]
		query = location.split("?", 1)[1]
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

	async def complete(query: str) -> Any:
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

	async def complete(query: str) -> Any:
		raise ToolError(f"mail: invalid_client: the client secret {secret} is wrong")

	monkeypatch.setattr(om.accounts, "complete", complete)
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient(trust_env=False) as http:
		page = await http.get(f"http://127.0.0.1:{viewer.port}/auth/callback?code=c0de&state=s")
		assert page.status_code == 400 and "[redacted]" in page.text
		assert secret not in page.text
	await om.aclose()
