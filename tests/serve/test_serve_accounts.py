"""A chat user connects an account when the agent needs it: the link in the chat, the callback
route, and the code that proves the person who signed in is the one the link was for."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server, restart
from cryptography.fernet import Fernet

from openmolt import OpenMolt
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core" / "integrations"))
from _fake_oauth import FakeAuthServer, mail_integration

pytestmark = pytest.mark.anyio


@dataclass
class _Served:
	"""A served Telegram bot whose agent binds ``mail`` per chat user, and what it touched."""

	fake: FakeTelegram
	url: str
	store: EncryptedFileStore
	om: OpenMolt
	auth: FakeAuthServer
	seen: list[str] = field(default_factory=list)
	"""The Authorization header of each call of the mail API."""
	agents: dict[str, Any] = field(default_factory=dict)
	"""The instance's agents by name: ``Helper`` (served) and the others."""

	async def sign_in(self, link: str) -> str:
		"""What a browser does: the service's consent, then its redirect to the callback."""
		async with httpx.AsyncClient(trust_env=False) as browser:
			location = (await browser.get(link)).headers["location"]
			query = urlsplit(location).query
			page = await browser.get(f"{self.url}/auth/callback?{query}")
		assert page.status_code == 200, page.text
		return page.text

	def texts(self, chat: int) -> list[str]:
		return [str(m["text"]) for m in self.fake.sent if int(m["chat_id"]) == chat]


@asynccontextmanager
async def _served(
	tmp_path: Path,
	monkeypatch: pytest.MonkeyPatch,
	model: ScriptedModel,
	users: list[int],
	durability: str | None = None,
	key: str | None = None,
	others: dict[str, ScriptedModel] | None = None,
	fake: FakeTelegram | None = None,
	run_store: Path | None = None,
) -> AsyncIterator[_Served]:
	"""``key``: the credential store's, and ``fake``: the Telegram (the same ones in a restarted
	"process": its update ids go on); ``others``: more agents binding ``mail`` per user, by
	name, not served (`_Served.agents`); ``run_store``: the instance's run store file."""
	monkeypatch.setenv(KEY_VARIABLE, key or Fernet.generate_key().decode())
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

	if fake is None:
		fake = FakeTelegram()
	fake.reset()
	try:
		async with local_server(fake.app()) as base:
			om = OpenMolt(
				entry_points=False,
				http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
				credential_store=store,
				integrations={"mail": {"clientId": "cid-123", "clientSecret": "csecret-abcdef"}},
				accounts={"redirect_uri": "http://127.0.0.1:9/auth/callback", "key": "k" * 32},
				durability=durability,
				run_store=run_store,
			)
			om.register_integration("mail", mail_integration(auth.url))
			agents = {
				name: om.create_agent(
					name=name,
					model=scripted,
					integrations=[{"integration": "mail", "account": "user"}],
				)
				for name, scripted in {"Helper": model, **(others or {})}.items()
			}
			agent = agents["Helper"]
			channel = {"type": "telegram", "token": TOKEN, "baseUrl": base, "allowedUsers": users}
			triggers = Triggers.model_validate({"channels": [{**channel, "pollTimeout": 1}]})
			async with TriggerServer([(agent, triggers)], port=0) as server:
				yield _Served(fake, server.url, store, om, auth, seen, agents=agents)
			await om.aclose()
	finally:
		await real.aclose()
		auth.close()


def _code(page: str) -> str:
	[code] = re.findall(r"<p>([2-9A-Z]{4}-[2-9A-Z]{4}-[2-9A-Z]{4})</p>", page)
	return code


async def test_the_chat_gets_the_link_and_the_sender_finishes_it_with_the_code(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The run parks for the sender's account; the callback holds the tokens and shows a code;
	the sender sends it to the bot, the account is stored and the chat gets the answer."""
	model = ScriptedModel(
		[call_tool("mail.me"), call_tool("mail.me"), finish("ok", human_message="You are ada.")]
	)
	async with _served(tmp_path, monkeypatch, model, [42]) as served:
		fake = served.fake
		fake.message("who am I?", chat=-100)  # in a group: no link where others see it
		await eventually(lambda: len(fake.sent) == 1)
		assert "private chat" in fake.sent[0]["text"]
		assert "http" not in fake.sent[0]["text"]
		fake.message("who am I?")  # in the private chat with the bot
		await eventually(lambda: len(fake.sent) == 2)
		text = fake.sent[1]["text"]
		assert "Connect it here" in text and not served.seen
		link = text.split("mail: ", 1)[1].strip()
		async with httpx.AsyncClient(trust_env=False) as browser:
			location = (await browser.get(link)).headers["location"]
			query = urlsplit(location).query
			bad = await browser.get(f"{served.url}/auth/callback?code=x&state=forged.sig")
			assert bad.status_code == 400 and "not connected" in bad.text
			looked = await browser.head(f"{served.url}/auth/callback?{query}")
			assert looked.status_code == 200  # a link checker's HEAD uses nothing up
			page = await browser.get(f"{served.url}/auth/callback?{query}")
			replay = await browser.get(f"{served.url}/auth/callback?{query}")
		assert page.status_code == 200 and "send this code to the bot" in page.text
		assert "mail account you signed in with for the chat user telegram:42" in page.text
		assert replay.status_code == 400 and "used already" in replay.text
		for answer in (bad, looked, page, replay):  # its address holds the code and the state
			assert answer.headers["referrer-policy"] == "no-referrer"
			assert answer.headers["x-frame-options"] == "DENY"
			assert answer.headers["x-content-type-options"] == "nosniff"
			assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
		assert served.store.load("mail", user="telegram:42") is None  # held until the code
		fake.message(f" {_code(page.text).lower()} ")
		await eventually(lambda: len(fake.sent) == 4)
		assert fake.sent[2]["text"] == "Your mail account is connected; I go on."
		assert fake.sent[3]["text"] == "You are ada."
	stored = served.store.load("mail", user="telegram:42")
	assert stored is not None
	assert served.seen == [f"Bearer {stored['accessToken']}"]
	assert len([r for r in model.requests if len(r.messages) == 1]) == 2  # group's, private's
	assert "code=" not in json.dumps(fake.sent)  # nothing of the answer reaches the chat


async def test_a_forwarded_chat_link_connects_nothing(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""Mallory (666) forwards the link the bot sent her; the victim (42) signs in and sends the
	code from their own chat: nothing is stored for anyone, the victim is told, a warning is
	logged; no token or code is in a log, a reply or the page's refusal."""
	caplog.set_level("INFO", logger="openmolt")
	model = ScriptedModel([call_tool("mail.me")])
	async with _served(tmp_path, monkeypatch, model, [42, 666]) as served:
		fake = served.fake
		fake.message("read my mail", user=666, chat=666, username="mallory")
		await eventually(lambda: len(fake.sent) == 1)
		link = fake.sent[0]["text"].split("mail: ", 1)[1].strip()
		page = await served.sign_in(link)  # the victim's browser, the victim's account
		code = _code(page)
		assert served.store.load("mail", user="telegram:666") is None
		fake.message(code)  # the victim sends it to the bot: it was not theirs
		await eventually(lambda: len(served.texts(42)) == 1)
		assert "started by someone else" in served.texts(42)[0]
		fake.message(code, user=666, chat=666, username="mallory")  # dropped: too late
		await eventually(lambda: len(served.texts(666)) == 2)
		assert "no sign-in waits for this code" in served.texts(666)[1].lower()
	assert served.store.load("mail", user="telegram:666") is None
	assert served.store.load("mail", user="telegram:42") is None
	assert not served.seen and len(model.requests) == 1  # mallory's run never went on
	warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
	assert any("telegram:666" in w and "telegram:42" in w for w in warned)
	secrets = [code, *(s for s in served.om.secrets.values() if s.startswith(("at-", "rt-")))]
	assert len(secrets) == 3  # the code, and the access and refresh tokens the exchange gave
	replies = json.dumps(fake.sent)
	assert not any(s in caplog.text or s in replies for s in secrets)
	assert not any(s in page for s in secrets[1:])  # the page shows the code, no token


async def test_a_code_sent_in_a_group_is_left_for_its_user_to_send_privately(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A member who posts someone's code in a group first neither drops nor spends it."""
	model = ScriptedModel([call_tool("mail.me"), finish("ok", human_message="You are ada.")])
	async with _served(tmp_path, monkeypatch, model, [42, 7]) as served:
		fake = served.fake
		fake.message("who am I?")
		await eventually(lambda: len(fake.sent) == 1)
		code = _code(await served.sign_in(fake.sent[0]["text"].split("mail: ", 1)[1].strip()))
		fake.message(code, user=7, chat=-100)  # someone else, in a group
		fake.message(code, chat=-100)  # its user, in a group
		await eventually(lambda: len(fake.sent) == 3)
		assert all("private chat" in m["text"] for m in fake.sent[1:])
		assert served.store.load("mail", user="telegram:42") is None
		fake.message(code)  # privately: still good
		await eventually(lambda: len(fake.sent) == 5)
		assert fake.sent[3]["text"] == "Your mail account is connected; I go on."
	assert served.store.load("mail", user="telegram:42") is not None


async def test_wrong_codes_get_a_clear_reply_and_a_few_tries(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A code nobody was given is answered (no run starts); after five, the tries wait."""
	model = ScriptedModel([])
	async with _served(tmp_path, monkeypatch, model, [42]) as served:
		for n in range(6):
			served.fake.message(f"ABCD-EFGH-JK{n + 2}M")
			await eventually(lambda n=n: len(served.fake.sent) == n + 1)
		said = [m["text"] for m in served.fake.sent]
		assert all(t.startswith("No sign-in waits for this code") for t in said[:5]), said
		assert said[5].startswith("Too many wrong codes; try again in 15 minutes")
	assert not model.requests


async def test_a_chat_users_link_without_the_chat_flag_is_held_too(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A state made before links carried ``c`` (or by a run with no chat around it), naming a
	user of a chat channel served here, is held for the code, never stored on trust."""
	async with _served(tmp_path, monkeypatch, ScriptedModel([]), [42]) as served:
		spec = served.om.plugins.integration("mail")
		link = served.om.accounts.consent(spec, "mail", "telegram:42", ["mail.read"])
		assert "c" not in served.om.accounts.read_state(parse_qs(urlsplit(link).query)["state"][0])
		page = await served.sign_in(link)
		assert served.store.load("mail", user="telegram:42") is None
		served.fake.message(_code(page))
		await eventually(lambda: len(served.fake.sent) == 1)
		assert served.fake.sent[0]["text"] == "Your mail account is connected; ask me again."
		assert served.store.load("mail", user="telegram:42") is not None
		other = served.om.accounts.consent(spec, "mail", "hook:a:bob", ["mail.read"])
		done = await served.sign_in(other)  # a webhook's user: not a chat's, completed here
		assert "account is connected" in done
		assert served.store.load("mail", user="hook:a:bob") is not None


class _Refusing:
	"""An instance whose consent completion fails as given."""

	def __init__(self, error: Exception) -> None:
		self.accounts = self
		self.error = error

	def state_of(self, query: str) -> dict[str, Any]:
		return {"u": "someone"}  # no chat's user: completed

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


async def test_a_code_naming_a_run_held_here_for_another_user_resumes_nothing(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A sign-in made for the sender whose state names a run this server holds parked for
	someone else connects the sender's account; that run stays parked (its user is not told
	anything, the model is not asked again)."""
	model = ScriptedModel([call_tool("mail.me")])
	async with _served(tmp_path, monkeypatch, model, [42, 7]) as served:
		fake = served.fake
		fake.message("read my mail", user=7, chat=7, username="bob")
		await eventually(lambda: len(fake.sent) == 1)
		state = parse_qs(urlsplit(_link(fake.sent[0]["text"])).query)["state"][0]
		run_id = served.om.accounts.read_state(state)["r"]
		assert run_id
		spec = served.om.plugins.integration("mail")
		link = served.om.accounts.consent(
			spec, "mail", "telegram:42", ["mail.read"], run_id=run_id, in_chat=True
		)
		fake.message(_code(await served.sign_in(link)))
		await eventually(lambda: len(served.texts(42)) == 1)
		assert served.texts(42) == ["Your mail account is connected; ask me again."]
		assert served.store.load("mail", user="telegram:42") is not None
	assert served.texts(7) == [fake.sent[0]["text"]] and len(model.requests) == 1


@pytest.mark.xdist_group("dbos-shared")
async def test_a_durable_chat_run_goes_on_once_the_code_is_sent(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""On a durable store, the chat's run parked for the account goes on at the code."""
	model = ScriptedModel(
		[call_tool("mail.me"), call_tool("mail.me"), finish("ok", human_message="You are ada.")]
	)
	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	try:
		async with _served(tmp_path, monkeypatch, model, [42], store) as served:
			fake = served.fake
			fake.message("who am I?")
			await eventually(lambda: len(fake.sent) == 1, seconds=30)
			link = fake.sent[0]["text"].split("mail: ", 1)[1].strip()
			fake.message(_code(await served.sign_in(link)))
			await eventually(lambda: len(fake.sent) == 3, seconds=30)
			assert [m["text"] for m in fake.sent[1:]] == [
				"Your mail account is connected; I go on.",
				"You are ada.",
			]
	finally:
		await restart()


def _link(text: str) -> str:
	return text.split("mail: ", 1)[1].strip()


@pytest.mark.xdist_group("dbos-shared")
@pytest.mark.timeout(120)
def test_a_code_sent_after_a_restart_resumes_the_durable_run_from_the_store(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The process that sent the link is gone when the code comes (a restart, or another server
	on the store): the run parked for the account is read from the store and goes on, and the
	chat gets its answer.

	Each "process" is an event loop of its own (DBOS binds its executor to the loop it starts in).
	"""
	import anyio

	model = ScriptedModel([call_tool("mail.me"), finish("ok", human_message="You are ada.")])
	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	key = Fernet.generate_key().decode()
	code = ""
	fake = FakeTelegram()

	async def before() -> None:
		nonlocal code
		try:
			async with _served(tmp_path, monkeypatch, model, [42], store, key, fake=fake) as served:
				served.fake.message("who am I?")
				await eventually(lambda: len(served.fake.sent) == 1, seconds=30)
				code = _code(await served.sign_in(_link(served.fake.sent[0]["text"])))
		finally:
			await restart()

	async def after() -> None:
		try:
			async with _served(tmp_path, monkeypatch, model, [42], store, key, fake=fake) as served:
				served.fake.message(code)
				await eventually(lambda: len(served.fake.sent) == 3, seconds=30)
				assert len(served.seen) == 1  # the parked call, once
		finally:
			await restart()

	anyio.run(before)
	anyio.run(after)
	assert [m["text"] for m in fake.sent[1:]] == [
		"Your mail account is connected; I go on.",
		"You are ada.",
	]
	assert all(int(m["chat_id"]) == 42 for m in fake.sent)
	assert len(model.requests) == 2


async def test_a_code_sent_after_a_restart_resumes_the_run_from_the_run_store(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""On a run store (no durable store), the server that sent the link is gone when the code
	comes (a restart, or another server on the store): the run parked for the account is read
	from the store (its chat's row names it) and goes on once; the chat gets its answer."""
	model = ScriptedModel([call_tool("mail.me"), finish("ok", human_message="You are ada.")])
	key = Fernet.generate_key().decode()
	fake = FakeTelegram()
	runs = tmp_path / "runs.db"
	async with _served(
		tmp_path, monkeypatch, model, [42], key=key, fake=fake, run_store=runs
	) as served:
		served.fake.message("who am I?")
		await eventually(lambda: len(fake.sent) == 1)
		code = _code(await served.sign_in(_link(fake.sent[0]["text"])))
	async with _served(
		tmp_path, monkeypatch, model, [42], key=key, fake=fake, run_store=runs
	) as served:
		served.fake.message(code)
		await eventually(lambda: len(fake.sent) == 3)
		assert len(served.seen) == 1  # the parked call, once
		store = served.om.run_store
		assert store is not None
		assert [r.status for r in await store.runs()] == ["success"]
	assert [m["text"] for m in fake.sent[1:]] == [
		"Your mail account is connected; I go on.",
		"You are ada.",
	]
	assert len(model.requests) == 2


@pytest.mark.xdist_group("dbos-shared")
@pytest.mark.timeout(120)
async def test_a_code_naming_a_stored_run_of_another_user_or_agent_resumes_nothing(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A sign-in whose state names a durable run parked for another end user, or one of another
	agent, connects the sender's account but resumes neither run: both still wait."""
	from openmolt_core.result import RunState
	from openmolt_serve._launch import run_id_for

	model = ScriptedModel([call_tool("mail.me")])
	other = ScriptedModel([call_tool("mail.me")])
	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	try:
		async with _served(
			tmp_path, monkeypatch, model, [42], store, others={"Other": other}
		) as served:
			helper, elsewhere = served.agents["Helper"], served.agents["Other"]
			said = {"message": "who am I?", "from": "ada", "chat": "42"}
			parked = {
				# This agent's run in this chat, acting for someone else (telegram:7).
				"user": await helper.run(
					said,
					user="telegram:7",
					history=RunState(run_id=run_id_for("telegram", "Helper", "1", scope="42")),
				),
				# Another agent's run for this very user in this chat.
				"agent": await elsewhere.run(
					said,
					user="telegram:42",
					history=RunState(run_id=run_id_for("telegram", "Other", "2", scope="42")),
				),
			}
			assert {r.status for r in parked.values()} == {"authorization_required"}
			spec = served.om.plugins.integration("mail")
			for n, result in enumerate(parked.values()):
				link = served.om.accounts.consent(
					spec, "mail", "telegram:42", ["mail.read"], run_id=result.state.run_id
				)
				served.fake.message(_code(await served.sign_in(link)))
				await eventually(lambda n=n: len(served.fake.sent) == n + 1, seconds=30)
			for result in parked.values():
				now = await served.om.result(result.state.run_id, wait=False)
				assert now is not None and now.status == "authorization_required"
				assert now.state.steps == result.state.steps
	finally:
		await restart()
	assert [m["text"] for m in served.fake.sent] == [
		"Your mail account is connected; ask me again.",
	] * 2
	assert len(model.requests) == 1 and len(other.requests) == 1 and not served.seen


@pytest.mark.xdist_group("dbos-shared")
@pytest.mark.timeout(120)
async def test_a_run_resumed_elsewhere_is_not_resumed_again_by_the_server_holding_it(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The code reached another server on the store, which resumed the run: the server that
	still holds it parked takes the user's next message as a new run, not as that run's turn
	(the durable backend would not run it twice, but the message would get its old reply)."""
	model = ScriptedModel(
		[
			call_tool("mail.me"),
			finish("ok", human_message="You are ada."),
			finish("hi", human_message="Hi again."),
		]
	)
	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	try:
		async with _served(tmp_path, monkeypatch, model, [42], store) as served:
			fake, om = served.fake, served.om
			fake.message("who am I?")
			await eventually(lambda: len(fake.sent) == 1, seconds=30)
			code = _code(await served.sign_in(_link(fake.sent[0]["text"])))
			# The other server: it confirms the code and resumes the run from the store.
			connected = await om.accounts.confirm(code, "telegram:42")
			stored = await om.result(connected.run_id, wait=False)
			assert stored is not None and stored.status == "authorization_required"
			resumed = await served.agents["Helper"].resume(stored.state)
			assert resumed.human_message == "You are ada."
			fake.message("and now?")
			await eventually(lambda: len(fake.sent) == 2, seconds=30)
	finally:
		await restart()
	assert fake.sent[1]["text"] == "Hi again."
	assert len(model.requests) == 3 and "and now?" in model.requests[2].messages[-1].content
	assert len(served.seen) == 1  # the parked call ran once


async def test_the_callback_completes_a_state_on_the_instance_of_its_agent(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Two served instances share OPENMOLT_AUTH_KEY: the link of the second one's agent is
	completed there (its store, its client), never by the first, which it reaches first."""
	from starlette.applications import Starlette
	from starlette.routing import Route

	from openmolt_core.accounts import authorization_requests
	from openmolt_serve._auth import CALLBACK_ROUTE, handle_callback

	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	auth = FakeAuthServer(client_id="cid-B")  # the second instance's client
	real = httpx.AsyncClient(trust_env=False)

	async def api(request: httpx.Request) -> httpx.Response:
		answer = await real.send(request)  # only the token server is reached
		return httpx.Response(answer.status_code, content=await answer.aread())

	def instance(name: str) -> tuple[OpenMolt, Any, EncryptedFileStore]:
		store = EncryptedFileStore(tmp_path / f"{name}.enc")
		om = OpenMolt(
			entry_points=False,
			http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
			credential_store=store,
			integrations={"mail": {"clientId": f"cid-{name}", "clientSecret": "csecret-abcdef"}},
			accounts={"redirect_uri": "http://127.0.0.1:9/auth/callback", "key": "k" * 32},
		)
		om.register_integration("mail", mail_integration(auth.url))
		agent = om.create_agent(
			name=name,
			model=ScriptedModel([call_tool("mail.me")]),
			integrations=[{"integration": "mail", "account": "user"}],
		)
		return om, agent, store

	(first, _, first_store), (second, agent, second_store) = instance("A"), instance("B")

	async def route(request: Any) -> Any:
		return await handle_callback(request, [first, second], [])

	app = Starlette(routes=[Route(CALLBACK_ROUTE, route)])
	try:
		parked = await agent.run("who am I?", user="hook:b:carol")
		[request] = authorization_requests(parked.state)
		async with httpx.AsyncClient(trust_env=False) as browser:
			location = (await browser.get(request["url"])).headers["location"]
		transport = httpx.ASGITransport(app=app)
		async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
			page = await http.get(f"{CALLBACK_ROUTE}?{urlsplit(location).query}")
		assert page.status_code == 200 and "account is connected" in page.text, page.text
		assert first_store.entries() == []
		assert second_store.load("mail", user="hook:b:carol") is not None
		[exchange] = [r for r in auth.token_requests if r.get("grant_type") == "authorization_code"]
		assert exchange["client_id"] == "cid-B"
	finally:
		await first.aclose()
		await second.aclose()
		await real.aclose()
		auth.close()


@pytest.mark.xdist_group("dbos-shared")
@pytest.mark.timeout(120)
async def test_a_code_naming_a_stored_run_of_an_agent_whose_name_slugs_alike_resumes_nothing(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Agents ``Helper`` and ``helper`` begin their run ids alike: a code sent to ``Helper``'s
	chat whose state names ``helper``'s parked run connects the account and resumes nothing;
	one whose state names ``helper`` itself is left for that agent's chat."""
	from openmolt_core.result import RunState
	from openmolt_serve._launch import run_id_for, scope_prefix

	assert scope_prefix("telegram", "Helper") == scope_prefix("telegram", "helper")
	model = ScriptedModel([])
	twin = ScriptedModel([call_tool("mail.me")])
	store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
	try:
		async with _served(
			tmp_path, monkeypatch, model, [42], store, others={"helper": twin}
		) as served:
			said = {"message": "who am I?", "from": "ada", "chat": "42"}
			parked = await served.agents["helper"].run(
				said,
				user="telegram:42",
				history=RunState(run_id=run_id_for("telegram", "helper", "3", scope="42")),
			)
			assert parked.status == "authorization_required"
			spec = served.om.plugins.integration("mail")
			run_id = parked.state.run_id
			link = served.om.accounts.consent(
				spec, "mail", "telegram:42", ["mail.read"], run_id=run_id
			)
			served.fake.message(_code(await served.sign_in(link)))
			await eventually(lambda: len(served.fake.sent) == 1, seconds=30)
			named = served.om.accounts.consent(
				spec, "mail", "telegram:42", ["mail.read"], run_id=run_id, agent="helper"
			)
			served.fake.message(_code(await served.sign_in(named)))
			await eventually(lambda: len(served.fake.sent) == 2, seconds=30)
			now = await served.om.result(run_id, wait=False)
			assert now is not None and now.status == "authorization_required"
			assert now.state.steps == parked.state.steps
	finally:
		await restart()
	said = [m["text"] for m in served.fake.sent]
	assert said[0] == "Your mail account is connected; ask me again."
	assert said[1].startswith("This sign-in was started by another agent"), said
	assert len(twin.requests) == 1 and not model.requests and not served.seen
