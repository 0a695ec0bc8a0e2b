"""A durable run parked on an end user's authorization, resumed from another process."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from accounts_agent import build
from cryptography.fernet import Fernet
from test_inprocess import _steps

from openmolt_core.accounts import authorization_requests
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.testing import ScriptedModel, call_tool

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "core" / "integrations"))
from _fake_oauth import FakeAuthServer  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def auth_server() -> Iterator[FakeAuthServer]:
	srv = FakeAuthServer()
	yield srv
	srv.close()


async def test_a_parked_durable_run_resumes_in_another_process_once_connected(
	url: str, tmp_path: Path, auth_server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Park here (no account), connect through the callback, resume in a new process."""
	key = Fernet.generate_key().decode()
	monkeypatch.setenv(KEY_VARIABLE, key)
	monkeypatch.setitem(sys.modules, "keyring", None)
	credentials = tmp_path / "credentials.enc"
	seen: list[str] = []
	om, agent = build(
		url, str(credentials), auth_server.url, ScriptedModel([call_tool("mail.me")]), seen
	)
	async with om:
		parked = await agent.run("who am I?", user="alice")
		# Its workflow returned the park: listed as the run's park, not as a success.
		[row] = await om.durability.runs()  # type: ignore[union-attr]
	assert parked.status == "authorization_required" and not seen
	assert (row["status"], row["parked_on"]) == ("parked", "authorization_required")
	assert "mail.me (held by accounts)" in row["waiting_for"]
	[request] = authorization_requests(parked.state)
	assert request["user"] == "alice" and request["integration"] == "mail"
	state_file = tmp_path / "state.json"
	state_file.write_text(json.dumps(parked.state.to_dict()))
	# The user follows the link; the service sends the browser to the callback, here.
	async with httpx.AsyncClient(trust_env=False) as browser:
		location = (await browser.get(request["url"])).headers["location"]
	connected = await om.accounts.complete(location)
	assert connected.run_id == parked.state.run_id
	stored = EncryptedFileStore(credentials).load("mail", user="alice")
	assert stored is not None
	await om.aclose()
	from dbos import DBOS

	from openmolt_dbos import _engine

	engine = _engine._ENGINE
	if engine is not None and engine.launched:
		await engine.shutdown()  # this process lets go of the run
	DBOS.destroy()
	_engine.reset_engine()
	env: dict[str, Any] = {**os.environ, KEY_VARIABLE: key}
	args = [sys.executable, "accounts_agent.py", url, str(credentials), auth_server.url]
	with anyio.fail_after(120):
		done = await anyio.run_process([*args, str(state_file)], cwd=HERE, env=env, check=False)
	assert done.returncode == 0, done.stderr.decode()[-4000:]
	line = next(x for x in done.stdout.decode().splitlines() if x.startswith("result "))
	assert line.split() == ["result", "success", "alice", "Bearer", stored["accessToken"]]
	run_id = parked.state.run_id
	first = [name for _, name in _steps(url, run_id)]
	assert "hook:1:0:mail.me" in first and "tool:1:0:mail.me" not in first
	resumed = [name for _, name in _steps(url, f"{run_id}+1")]  # the other process's segment
	assert resumed[:2] == ["hook:1:0:mail.me", "tool:1:0:mail.me"] and "model:2" in resumed


def test_a_chat_run_recovered_elsewhere_still_sends_a_chat_link(
	tmp_path: Path, auth_server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A durable run a chat started, recovered by a process with no chat around it, asks for the
	account with a link marked for the chat (confirmed there), and is recorded as the chat's."""
	from _durable import stop_process
	from _harness import make_store

	from openmolt_core.observe import started_by

	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	stores = make_store("sqlite", tmp_path)
	store = {"url": next(stores), "worker_id": "chat-worker", "heartbeat": 0.2, "lapse": 1.0}
	credentials = str(tmp_path / "credentials.enc")
	run_id = "telegram-chat-run"

	async def first() -> None:
		hung = anyio.Event()

		async def hang(request: Any) -> Any:
			hung.set()
			await anyio.sleep_forever()

		_, agent = build(store, credentials, auth_server.url, ScriptedModel([hang]), [])
		try:
			with started_by("chat", where="telegram:Mailer", sender="42"):
				await agent.start("who am I?", user="telegram:42", run_id=run_id)
			with anyio.fail_after(30):
				await hung.wait()
		finally:
			await stop_process()  # as a server that dies: another process recovers the run

	async def second() -> Any:
		model = ScriptedModel([call_tool("mail.me")])
		om, _ = build(store, credentials, auth_server.url, model, [])
		try:
			await om.durability.start()  # type: ignore[union-attr]  # recovers the run
			with anyio.fail_after(60):
				result = await om.result(run_id)
			[request] = authorization_requests(result.state)
			return result, om.accounts.state_of(request["url"])
		finally:
			await stop_process()

	anyio.run(first)
	result, link = anyio.run(second)
	assert result.status == "authorization_required"
	assert link.get("c") == 1, link  # the callback holds it for the chat's confirmation
	assert result.state.trigger is not None and result.state.trigger["kind"] == "chat"
