"""Local servers for the trigger tests: fake Telegram and Slack APIs on 127.0.0.1, never the internet.

The fakes answer the few Bot API and Web API methods the channels call, in the shapes the
services document (https://core.telegram.org/bots/api, https://api.slack.com/methods), and
record every call, so a test can assert the path, the token and the body that were sent.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from openmolt import OpenMolt
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome
from openmolt_core.testing import ScriptedModel
from openmolt_core.tools import tool

TOKEN = "123456:TEST-telegram-token"
SLACK_TOKEN = "xoxb-test-slack-token"
SLACK_SECRET = "slack-signing-secret-for-tests"


class _Quiet(uvicorn.Server):
	@contextlib.contextmanager
	def capture_signals(self):  # type: ignore[no-untyped-def]
		yield


@contextlib.asynccontextmanager
async def local_server(app: ASGIApp) -> AsyncIterator[str]:
	"""Serve an ASGI app on 127.0.0.1 (a free port) in this loop; yields its base URL."""
	sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY
	sock.bind(("127.0.0.1", 0))
	port = sock.getsockname()[1]
	server = _Quiet(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
	stopped = anyio.Event()

	async def run() -> None:
		try:
			await server.serve(sockets=[sock])
		finally:
			stopped.set()

	async with anyio.create_task_group() as tg:
		tg.start_soon(run)
		with anyio.fail_after(10):
			while not server.started:  # noqa: ASYNC110  # uvicorn offers no event to wait on
				await anyio.sleep(0.01)
		try:
			yield f"http://127.0.0.1:{port}"
		finally:
			server.should_exit = True
			with anyio.move_on_after(10, shield=True):
				await stopped.wait()
			tg.cancel_scope.cancel()
	sock.close()


def _too_long(params: dict[str, Any]) -> bool:
	"""Telegram counts a text's 4096 characters in UTF-16 code units (an emoji takes two)."""
	return len(str(params.get("text", "")).encode("utf-16-le")) // 2 > 4096


_TOO_LONG = JSONResponse(
	{"ok": False, "error_code": 400, "description": "Bad Request: message is too long"},
	status_code=400,
)


@dataclass
class FakeTelegram:
	"""The Bot API's getUpdates (long polling, offsets confirm) and sendMessage."""

	updates: list[dict[str, Any]] = field(default_factory=list)
	sent: list[dict[str, Any]] = field(default_factory=list)
	edits: list[dict[str, Any]] = field(default_factory=list)
	polls: list[dict[str, Any]] = field(default_factory=list)
	paths: list[str] = field(default_factory=list)
	flood: list[int] = field(default_factory=list)
	"""Which sendMessage calls (1 the first) are refused with 429 and ``retry_after`` 1."""
	_new: anyio.Event = field(default_factory=anyio.Event)
	_sends: int = 0
	_next_id: int = 1000

	def message(self, text: str, *, user: int = 42, chat: int = 42, username: str = "ada") -> int:
		"""Queue a text message from a user, as Telegram would deliver it; returns its update_id."""
		self._next_id += 1
		self.updates.append(
			{
				"update_id": self._next_id,
				"message": {
					"message_id": self._next_id * 10,
					"date": 1700000000,
					"from": {
						"id": user,
						"is_bot": False,
						"first_name": "Ada",
						"username": username,
					},
					"chat": {"id": chat, "type": "private"},
					"text": text,
				},
			}
		)
		self._new.set()
		self._new = anyio.Event()
		return self._next_id

	def reset(self) -> None:
		"""Use the fake in a new event loop (a test's next "process")."""
		self._new = anyio.Event()

	def app(self) -> ASGIApp:
		async def method(request: Request) -> Response:
			self.paths.append(request.url.path)
			if request.path_params["token"] != TOKEN:
				return JSONResponse(
					{"ok": False, "error_code": 401, "description": "Unauthorized"}, status_code=401
				)
			params = await request.json()
			name = request.path_params["method"]
			if name == "getUpdates":
				self.polls.append(params)
				offset = params.get("offset")
				if offset is not None:  # confirms every update before it
					self.updates = [u for u in self.updates if u["update_id"] >= offset]
				if not self.updates:
					with anyio.move_on_after(min(params.get("timeout", 0), 2)):
						await self._new.wait()
				return JSONResponse({"ok": True, "result": list(self.updates)})
			if name == "sendMessage":
				self._sends += 1
				if self._sends in self.flood:
					return JSONResponse(
						{
							"ok": False,
							"error_code": 429,
							"description": "Too Many Requests: retry after 1",
							"parameters": {"retry_after": 1},
						},
						status_code=429,
					)
				if "chat_id" not in params or not params.get("text"):
					return JSONResponse(
						{
							"ok": False,
							"error_code": 400,
							"description": "Bad Request: text is empty",
						},
						status_code=400,
					)
				if _too_long(params):
					return _TOO_LONG
				self.sent.append(params)
				return JSONResponse(
					{
						"ok": True,
						"result": {
							"message_id": len(self.sent),
							"chat": {"id": int(params["chat_id"]), "type": "private"},
							"date": 1700000001,
							"text": params["text"],
						},
					}
				)
			if name == "editMessageText":
				if _too_long(params):
					return _TOO_LONG
				self.edits.append(params)
				return JSONResponse({"ok": True, "result": {"message_id": params["message_id"]}})
			return JSONResponse(
				{"ok": False, "error_code": 404, "description": "Not Found"}, status_code=404
			)

		return Starlette(routes=[Route("/bot{token}/{method}", method, methods=["POST"])])


@dataclass
class FakeSlack:
	"""The Web API's chat.postMessage, with bot-token auth."""

	posted: list[dict[str, Any]] = field(default_factory=list)
	updated: list[dict[str, Any]] = field(default_factory=list)
	auth: list[str] = field(default_factory=list)
	unfurls: list[dict[str, Any]] = field(default_factory=list)
	"""Each chat.postMessage's unfurl parameters (taken out of what `posted` records)."""

	def app(self) -> ASGIApp:
		async def post_message(request: Request) -> Response:
			self.auth.append(request.headers.get("authorization", ""))
			if request.headers.get("authorization") != f"Bearer {SLACK_TOKEN}":
				return JSONResponse({"ok": False, "error": "invalid_auth"})
			body = await request.json()
			if not body.get("channel") or not body.get("text"):
				return JSONResponse({"ok": False, "error": "no_text"})
			self.unfurls.append(
				{k: body.pop(k) for k in ("unfurl_links", "unfurl_media") if k in body}
			)
			self.posted.append(body)
			return JSONResponse(
				{"ok": True, "channel": body["channel"], "ts": f"17000000{len(self.posted)}.0001"}
			)

		async def update(request: Request) -> Response:
			if request.headers.get("authorization") != f"Bearer {SLACK_TOKEN}":
				return JSONResponse({"ok": False, "error": "invalid_auth"})
			body = await request.json()
			self.updated.append(body)
			return JSONResponse({"ok": True, "channel": body["channel"], "ts": body["ts"]})

		return Starlette(
			routes=[
				Route("/chat.postMessage", post_message, methods=["POST"]),
				Route("/chat.update", update, methods=["POST"]),
			]
		)


@contextlib.asynccontextmanager
async def on_telegram(
	agent: Any, fake: FakeTelegram, users: list[int] | None = None
) -> AsyncIterator[None]:
	"""Serve ``agent`` on a Telegram channel of ``fake`` (on 127.0.0.1); close its instance after.

	Its allowed users are ``users`` (default: 42, the sender of `FakeTelegram.message`).
	"""
	from openmolt_core.triggers import Triggers
	from openmolt_serve import TriggerServer

	async with local_server(fake.app()) as base:
		channel: dict[str, Any] = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedUsers": users or [42],
		}
		triggers = Triggers.model_validate({"channels": [channel]})
		async with TriggerServer([(agent, triggers)], port=0):
			yield
		await agent.om.aclose()


async def restart() -> None:
	"""What a crash and a new process do to this process's durable engine (the store stays)."""
	from dbos import DBOS

	from openmolt_dbos import _engine

	engine = _engine._ENGINE
	if engine is not None and engine.launched:
		await engine.shutdown()
	DBOS.destroy()
	_engine.reset_engine()


async def eventually(check: Callable[[], bool], *, seconds: float = 10.0) -> None:
	"""Wait until ``check()`` holds (``seconds`` without it fails the test)."""
	with anyio.fail_after(seconds):
		while not check():  # noqa: ASYNC110  # a condition on another server's records
			await anyio.sleep(0.02)


async def post_json(
	client: httpx.AsyncClient, url: str, data: Any, headers: dict[str, str]
) -> httpx.Response:
	return await client.post(
		url,
		content=json.dumps(data).encode(),
		headers={"content-type": "application/json", **headers},
	)


class Ends(RunObserver):
	"""Records each run's final state and status, and what started it, as its observers see them."""

	def __init__(self) -> None:
		self.runs: list[tuple[Any, str]] = []
		self.triggers: list[Any] = []

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		self.triggers.append(run.trigger)
		self.runs.append((run.state, outcome.status))


def private_and_outbound(
	model: ScriptedModel, ends: Ends, name: str
) -> tuple[OpenMolt, Any, list[str]]:
	"""An agent holding private data (``local.vault``) and an outbound tool (``local.forward``,
	whose sends are listed): the taint policy's default case. Returns the instance, the agent
	and the texts sent."""
	sent: list[str] = []

	@tool(labels=["private"])
	def vault() -> str:
		"""Read the vault."""
		return "the vault key"

	@tool(labels=["outbound"])
	def forward(text: str) -> str:
		"""Send the text out.

		Args:
			text: What to send.
		"""
		sent.append(text)
		return "sent"

	om = OpenMolt(entry_points=False, observers=[ends])
	agent = om.create_agent(name=name, model=model, tools=[vault, forward])
	return om, agent, sent
