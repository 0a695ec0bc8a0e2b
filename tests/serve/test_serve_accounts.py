"""A chat user connects an account when the agent needs it: the link in the chat, the callback route."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server
from cryptography.fernet import Fernet

from openmolt import OpenMolt
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core" / "integrations"))
from _fake_oauth import FakeAuthServer, mail_integration

pytestmark = pytest.mark.anyio


async def test_the_chat_gets_the_link_and_the_callback_lets_the_run_go_on(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The run parks for the sender's account; the callback stores it; the chat gets the answer."""
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	store = EncryptedFileStore(tmp_path / "credentials.enc")
	auth = FakeAuthServer()
	real = httpx.AsyncClient(trust_env=False)
	seen: list[str] = []

	async def api(request: httpx.Request) -> httpx.Response:
		if request.url.host == "127.0.0.1":
			answer = await real.send(request)
			return httpx.Response(answer.status_code, content=await answer.aread())
		seen.append(request.headers.get("authorization", ""))
		return httpx.Response(200, json={"me": "ada"})

	fake = FakeTelegram()
	model = ScriptedModel(
		[call_tool("mail.me"), call_tool("mail.me"), finish("ok", human_message="You are ada.")]
	)
	try:
		async with local_server(fake.app()) as base:
			om = OpenMolt(
				entry_points=False,
				http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
				credential_store=store,
				integrations={"mail": {"clientId": "cid-123", "clientSecret": "csecret-abcdef"}},
				accounts={"redirect_uri": "http://127.0.0.1:9/auth/callback", "key": "k" * 32},
			)
			om.register_integration("mail", mail_integration(auth.url))
			agent = om.create_agent(
				name="Helper",
				model=model,
				integrations=[{"integration": "mail", "account": "user"}],
			)
			channel = {"type": "telegram", "token": TOKEN, "baseUrl": base, "allowedUsers": [42]}
			triggers = Triggers.model_validate({"channels": [{**channel, "pollTimeout": 1}]})
			async with TriggerServer([(agent, triggers)], port=0) as server:
				fake.message("who am I?", chat=-100)  # in a group: no link where others see it
				await eventually(lambda: len(fake.sent) == 1)
				assert "private chat" in fake.sent[0]["text"]
				assert "http" not in fake.sent[0]["text"]
				fake.message("who am I?")  # in the private chat with the bot
				await eventually(lambda: len(fake.sent) == 2)
				text = fake.sent[1]["text"]
				assert "Connect it here" in text and not seen
				link = text.split("mail: ", 1)[1].strip()
				async with httpx.AsyncClient(trust_env=False) as browser:
					location = (await browser.get(link)).headers["location"]
					query = urlsplit(location).query
					bad = await browser.get(f"{server.url}/auth/callback?code=x&state=forged.sig")
					assert bad.status_code == 400 and "not connected" in bad.text
					looked = await browser.head(f"{server.url}/auth/callback?{query}")
					assert looked.status_code == 200  # a link checker's HEAD uses nothing up
					page = await browser.get(f"{server.url}/auth/callback?{query}")
					replay = await browser.get(f"{server.url}/auth/callback?{query}")
				assert page.status_code == 200 and "the agent goes on" in page.text
				assert replay.status_code == 400 and "used already" in replay.text
				await eventually(lambda: len(fake.sent) == 3)
				assert fake.sent[2]["text"] == "You are ada."
			await om.aclose()
	finally:
		await real.aclose()
		auth.close()
	stored = store.load("mail", user="telegram:42")
	assert stored is not None
	assert seen == [f"Bearer {stored['accessToken']}"]
	assert len([r for r in model.requests if len(r.messages) == 1]) == 2  # group's, private's
	assert "code=" not in json.dumps(fake.sent)  # nothing of the answer reaches the chat


class _Refusing:
	"""An instance whose consent completion fails as given."""

	def __init__(self, error: Exception) -> None:
		self.accounts = self
		self.error = error

	async def complete(self, query: str) -> Any:
		raise self.error


async def _callback(error: Exception, query: str) -> Any:
	from starlette.applications import Starlette
	from starlette.routing import Route

	from openmolt_serve._auth import CALLBACK_ROUTE, handle_callback

	async def route(request: Any) -> Any:
		return await handle_callback(request, [_Refusing(error)], [])  # type: ignore[list-item]

	app = Starlette(routes=[Route(CALLBACK_ROUTE, route)])
	transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
	async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
		return await http.get(f"{CALLBACK_ROUTE}?{query}")


async def test_the_callback_never_shows_or_logs_the_code_and_never_fails_with_a_500(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A refusal that echoes the code is shown without it; an unexpected error is a clean 502."""
	from openmolt_core.errors import ToolError

	code = "sekrit-code-0123456789"
	query = f"code={code}&state=abc.def"
	echoed = ToolError(f"mail: the token exchange was refused (400: bad code {code})")
	page = await _callback(echoed, query)
	assert page.status_code == 400 and "not connected" in page.text
	assert code not in page.text
	broken = await _callback(RuntimeError(f"boom {code}"), query)
	assert broken.status_code == 502
	assert "Traceback" not in broken.text and code not in broken.text
	assert code not in caplog.text
	markup = await _callback(ToolError("<script>alert(1)</script>"), "code=x&state=y")
	assert "<script>" not in markup.text


async def test_the_callback_page_is_masked_with_the_secrets_known_now() -> None:
	"""A refusal's text (the service's error_description, a state that echoes one) shows no
	secret any live instance knows, in any spelling, as every other served text."""
	from urllib.parse import quote

	from openmolt_core.errors import ToolError

	secret = "csecret/0123456789+abcdef"
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)
	said = f"invalid_client: the client secret {secret} (or {quote(secret, safe='')}) is wrong"
	page = await _callback(ToolError(said), "code=abc&state=abc.def")
	assert page.status_code == 400 and page.text.count("[redacted]") == 2, page.text
	assert secret not in page.text and quote(secret, safe="") not in page.text
	await om.aclose()
