"""`TriggerServer`: one ASGI application for every agent's webhook and chat channels, on one port.

| route | what |
| --- | --- |
| ``POST /hooks/{agent}`` | a signed webhook starts a run (`openmolt_serve.webhooks`) |
| ``POST /channels/telegram/{agent}`` | a Telegram update, in webhook mode (`openmolt_serve.telegram`) |
| ``POST /channels/slack/{agent}`` | a Slack Events API request (`openmolt_serve.slack`) |
| ``POST /agui/{agent}`` | an AG-UI run, its events streamed back (`openmolt_serve.agui`) |
| ``/a2a/{agent}/`` | an A2A 1.0 server: the agent card and JSON-RPC (`openmolt_serve.a2a`) |
| ``GET /auth/callback`` | an end user connected an account: the consent completes, the run goes on (`openmolt_serve._auth`) |
| ``GET /health`` | ``{"ok": true, "agents": [...]}`` |

```python
async with TriggerServer([(agent, triggers)], port=8787) as server:
    print(server.url)             # http://127.0.0.1:8787
    await anyio.sleep_forever()   # Telegram bots in polling mode poll meanwhile
```

It binds 127.0.0.1 by default: put a reverse proxy (or a tunnel) in front to receive webhooks
from the internet, and bind another address only on purpose. Slow clients cannot hold it: a
request's headers must arrive within ``header_timeout`` seconds and its body within
``body_timeout`` (else ``408``, closed), at most ``max_connections`` connections are open at
once (a new one past it is ``503``, closed), and an idle kept-alive connection closes after 5
seconds (`openmolt_serve._conn`). Runs start in the server's task
group and stop with it. The server serves in the caller's event loop (asyncio: uvicorn needs it).

On a durable store (``OpenMolt(durability=...)``) a trigger is answered once its run's workflow
is recorded, and starting the server starts the engine, which resumes the runs a crash cut short;
the chats get the results of theirs, and a question a run parked on before the restart is
answered by the chat's next message.
"""

from __future__ import annotations

import importlib
import logging
import socket
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, cast

import anyio
import uvicorn
from anyio.abc import TaskGroup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp

from openmolt_core._durable import DurabilityBackend
from openmolt_core.errors import ConfigurationError
from openmolt_core.openmolt import OpenMolt
from openmolt_core.triggers import SlackChannel, TelegramChannel, Triggers
from openmolt_serve._agentenv import check_distinct
from openmolt_serve._auth import CALLBACK_ROUTE, handle_callback
from openmolt_serve._body import BODY_TIMEOUT
from openmolt_serve._conn import DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, guarded_protocol
from openmolt_serve._launch import Launcher, Sessions
from openmolt_serve._seen import SqliteSeen
from openmolt_serve._token import TokenGuard
from openmolt_serve.slack import SlackApp
from openmolt_serve.telegram import TelegramBot
from openmolt_serve.webhooks import Webhook, handle_webhook
from openmolt_ui._listen import EmbeddedServer, listen
from openmolt_ui._secured import SecuredResponses
from openmolt_ui._shown import MaskedResponses

if TYPE_CHECKING:
	import httpx

	from openmolt_core.agent import Agent
	from openmolt_serve.a2a import A2AServer
	from openmolt_serve.agui import AguiEndpoint

__all__ = ["DEFAULT_PORT", "TriggerServer"]

log: logging.Logger = logging.getLogger("openmolt")

DEFAULT_PORT = 8787
"""The port ``openmolt serve`` listens on unless told otherwise."""


class TriggerServer:
	"""Serves the webhooks and chat channels of several agents.

	Args:
		agents: Each agent with its triggers (agents without triggers are skipped).
		host: The address to bind (default 127.0.0.1).
		port: The port (0: any free one; see `url`).
		http: The HTTP client for the chat APIs (default: each agent's instance's).
		start_timeout: Seconds a trigger waits for its run to start before answering anyway.
		header_timeout: Seconds a request's headers may take to arrive (else ``408``, closed).
		body_timeout: Seconds a request's body may take to arrive (else ``408``).
		max_connections: The most connections open at once (past it: ``503``, closed).
		sessions: Where chats keep their conversations, by session id (`openmolt_core.sessions`;
			``lambda sid: SQLiteSession(sid, path)``); default: in this process only.

	Raises:
		ConfigurationError: Two agents share a name, a name cannot be part of a route (a
			``/``, a brace), a secret or token is not set, or a limit is not positive.
	"""

	def __init__(
		self,
		agents: Sequence[tuple[Agent, Triggers | None]],
		*,
		host: str = "127.0.0.1",
		port: int = DEFAULT_PORT,
		http: httpx.AsyncClient | None = None,
		start_timeout: float = 30.0,
		header_timeout: float = DEFAULT_HEADER_TIMEOUT,
		body_timeout: float = BODY_TIMEOUT,
		max_connections: int = DEFAULT_MAX_CONNECTIONS,
		sessions: Sessions | None = None,
	) -> None:
		for name, value in (
			("header_timeout", header_timeout),
			("body_timeout", body_timeout),
			("max_connections", max_connections),
		):
			if not value > 0:
				raise ConfigurationError(f"{name} must be more than 0 (got {value!r})")
		self.host = host
		self.port = port
		self.start_timeout = start_timeout
		self.header_timeout = header_timeout
		self.body_timeout = body_timeout
		self.max_connections = max_connections
		self._http = http
		self.sessions = sessions
		self.agents: dict[str, tuple[Agent, Triggers]] = {}
		for agent, triggers in agents:
			if triggers is None:
				continue
			_routable(agent.name)
			if agent.name in self.agents:
				raise ConfigurationError(
					f"two agents are named {agent.name!r}: their triggers would share "
					"/hooks/<agent>; give each its own name"
				)
			self.agents[agent.name] = (agent, triggers)
		self.webhooks: dict[str, Webhook] = {}
		self.guards: dict[tuple[str, str], TokenGuard] = {}
		self.agui: dict[str, AguiEndpoint] = {}
		self.a2a: dict[str, A2AServer] = {}
		self.telegram: dict[str, TelegramBot] = {}
		self.slack: dict[str, SlackApp] = {}
		self.launcher: Launcher | None = None
		self._tg: TaskGroup | None = None
		self._server: EmbeddedServer | None = None
		self._stopped: anyio.Event | None = None
		# Secrets and tokens are read now: a missing one fails before anything listens.
		check_distinct((name, triggers) for name, (_, triggers) in self.agents.items())
		for name, (agent, triggers) in self.agents.items():
			if triggers.webhook is not None:
				self.webhooks[name] = Webhook.create(agent, triggers.webhook)
			for kind, config in (("a2a", triggers.a2a), ("agui", triggers.agui)):
				if config is not None:
					_needs(kind)
					guard = TokenGuard.create(agent, kind, config)
					guard.body_timeout = body_timeout
					self.guards[(kind, name)] = guard

	@property
	def url(self) -> str:
		"""The server's address (known once serving: the port may be picked)."""
		host = f"[{self.host}]" if ":" in self.host else self.host
		return f"http://{host}:{self.port}"

	def routes(self) -> list[str]:
		"""The paths served, for the start-up message."""
		out = [f"POST /hooks/{name}" for name in self.webhooks]
		out += [
			f"POST /channels/telegram/{name}"
			for name, bot in self.telegram.items()
			if bot.settings.mode == "webhook"
		]
		out += [f"POST /channels/slack/{name}" for name in self.slack]
		out += [f"POST /agui/{name}" for kind, name in self.guards if kind == "agui"]
		out += [f"A2A /a2a/{name}/" for kind, name in self.guards if kind == "a2a"]
		return out

	def app(self) -> ASGIApp:
		"""The ASGI application (needs the server running: runs start in its task group)."""

		async def hook(request: Request) -> Response:
			assert self.launcher is not None
			return await handle_webhook(
				request,
				self.webhooks.get(request.path_params["agent"]),
				self.launcher,
				body_timeout=self.body_timeout,
			)

		async def telegram(request: Request) -> Response:
			bot = self.telegram.get(request.path_params["agent"])
			if bot is None or bot.settings.mode != "webhook":
				return JSONResponse({"error": "no Telegram webhook here"}, status_code=404)
			return await bot.handle(request)

		async def slack(request: Request) -> Response:
			app = self.slack.get(request.path_params["agent"])
			if app is None:
				return JSONResponse({"error": "no Slack app here"}, status_code=404)
			return await app.handle(request)

		async def agui(request: Request) -> Response:
			endpoint = self.agui.get(request.path_params["agent"])
			if endpoint is None:
				return JSONResponse({"error": "no AG-UI endpoint here"}, status_code=404)
			return await endpoint.handle(request)

		async def health(request: Request) -> Response:
			return JSONResponse({"ok": True, "agents": sorted(self.agents)})

		async def callback(request: Request) -> Response:
			instances = {id(a.om): OpenMolt.of(a) for a, _ in self.agents.values()}.values()
			chats = [b.conversations for b in self.telegram.values()]
			chats += [a.conversations for a in self.slack.values()]
			return await handle_callback(request, instances, chats)

		routes: list[BaseRoute] = [
			Route("/hooks/{agent}", hook, methods=["POST"]),
			Route("/channels/telegram/{agent}", telegram, methods=["POST"]),
			Route("/channels/slack/{agent}", slack, methods=["POST"]),
			Route("/agui/{agent}", agui, methods=["POST"]),
			Route(CALLBACK_ROUTE, callback),
			Route("/health", health),
		]
		routes += self._a2a_mounts()
		# Every response masked with the secrets known now, as the viewer's (openmolt_ui._shown),
		# and with the security headers every answer of ours carries (openmolt_ui._secured),
		# outside Starlette's own error handler: a refusal, a 404 of no route, a 500, an A2A or
		# AG-UI answer as well as the callback's pages.
		app = Starlette(routes=routes, middleware=[Middleware(MaskedResponses)])
		return SecuredResponses(app)

	def _a2a_mounts(self) -> list[BaseRoute]:
		from urllib.parse import quote

		mounts: list[BaseRoute] = []
		for (kind, name), guard in self.guards.items():
			config = self.agents[name][1].a2a
			if kind != "a2a" or config is None:
				continue
			from openmolt_serve.a2a import a2a_server

			assert self.launcher is not None
			path = f"/a2a/{quote(name, safe='')}"
			server = a2a_server(guard.agent, config, guard, self.launcher.sessions, self.url + path)
			self.a2a[name] = server
			mounts.append(Mount(f"/a2a/{name}", app=server.app))
		return mounts

	def _socket(self) -> socket.socket:
		sock = listen(self.host, self.port, who="openmolt serve")
		self.port = sock.getsockname()[1]
		return sock

	async def __aenter__(self) -> TriggerServer:
		"""Start listening and polling; the routes answer on return."""
		if self._tg is not None:
			raise RuntimeError("this server is already serving")
		tg = anyio.create_task_group()
		await tg.__aenter__()
		self._tg = tg
		try:
			self.launcher = Launcher(tg, start_timeout=self.start_timeout, sessions=self.sessions)
			for (kind, name), guard in self.guards.items():
				settings = self.agents[name][1].agui
				if kind == "agui" and settings is not None:
					from openmolt_serve.agui import AguiEndpoint

					self.agui[name] = AguiEndpoint(guard.agent, settings, self.launcher, guard)
			for name, (agent, triggers) in self.agents.items():
				for channel in triggers.channels:
					if isinstance(channel, TelegramChannel):
						bot = TelegramBot(agent, channel, self.launcher, self._http)
						bot.body_timeout = self.body_timeout
						self.telegram[name] = bot
					elif isinstance(channel, SlackChannel):
						app = SlackApp(agent, channel, self.launcher, self._http)
						app.body_timeout = self.body_timeout
						self.slack[name] = app
			sock = self._socket()
			config = uvicorn.Config(
				self.app(),
				http=guarded_protocol(
					header_timeout=self.header_timeout, max_connections=self.max_connections
				),
				timeout_keep_alive=5,
				ws="none",  # no route speaks WebSocket: an upgrade must not leave the limits
				lifespan="off",
				log_level="warning",
				access_log=False,
				timeout_graceful_shutdown=2,
			)
			self._server = EmbeddedServer(config)
			self._server.ready = anyio.Event()
			self._stopped = anyio.Event()
			tg.start_soon(self._serve, sock, name="openmolt serve")
			await self._server.ready.wait()
			await self._recover()
			for bot in self.telegram.values():
				if bot.settings.mode == "polling":
					tg.start_soon(bot.poll, name=f"openmolt telegram {bot.agent.name}")
		except BaseException:
			self._tg = None
			tg.cancel_scope.cancel()
			await tg.__aexit__(None, None, None)
			raise
		return self

	async def _recover(self) -> None:
		"""On a durable store: start the engine, and follow the chats' interrupted runs.

		The engine resumes the runs a crash cut short; each chat gets the result of its own.
		"""
		started: set[int] = set()
		for agent, _ in self.agents.values():
			backend = cast("DurabilityBackend | None", agent.om.durability)  # the whole backend
			if backend is not None and id(agent.om) not in started:
				started.add(id(agent.om))
				await backend.start()
		channels: list[TelegramBot | SlackApp] = [*self.telegram.values(), *self.slack.values()]
		for channel in channels:
			if channel.agent.om.durability is not None:
				count = await channel.conversations.recover()
				if count:
					log.warning(
						"%s of %s: following %d runs a restart interrupted",
						channel.settings.type,
						channel.agent.name,
						count,
					)

	async def _serve(self, sock: socket.socket) -> None:
		assert self._server is not None
		try:
			await self._server.serve(sockets=[sock])
		finally:
			sock.close()
			if self._stopped is not None:
				self._stopped.set()

	async def __aexit__(
		self,
		exc_type: type[BaseException] | None,
		exc: BaseException | None,
		tb: TracebackType | None,
	) -> bool | None:
		"""Stop listening and polling; runs still going are cancelled (durable ones recover)."""
		tg, self._tg = self._tg, None
		if self.launcher is not None:  # the streams it cuts leave their durable runs to recover
			self.launcher.stopping()
		for a2a in self.a2a.values():  # their waiting subscriptions end before the server waits
			a2a.stopping()
		if self._server is not None:
			self._server.should_exit = True
		if tg is None:
			return None
		with anyio.move_on_after(5, shield=True):
			if self._stopped is not None:
				await self._stopped.wait()
		with anyio.move_on_after(5, shield=True):
			for a2a in self.a2a.values():  # their tasks run in the SDK's handler, not in tg
				await a2a.aclose()
		tg.cancel_scope.cancel()
		try:
			return await tg.__aexit__(exc_type, exc, tb)
		finally:
			guards = [h.guard for h in self.webhooks.values()]
			guards += [a.guard for a in self.slack.values()]
			stores = [guard.store for guard in guards]
			stores += [b.conversations.seen_store for b in self.telegram.values()]
			stores += [a.conversations.seen_store for a in self.slack.values()]
			for store in stores:
				if isinstance(store, SqliteSeen):
					store.close()
			for endpoint in self.agui.values():
				endpoint.close()
			chats = [b.conversations for b in self.telegram.values()]
			chats += [a.conversations for a in self.slack.values()]
			for conversations in chats:  # their parked runs' rows
				conversations.close()


def _routable(name: str) -> None:
	"""Refuse an agent name its routes cannot hold (``/hooks/<agent>``, ``/a2a/<agent>/``).

	A ``/`` splits the path (no route reaches the agent), braces are a route's parameter (the
	agent's A2A mount would take other agents' addresses), and ``.`` or ``..`` are what clients
	remove from a path.
	"""
	if name in (".", "..") or any(c in name for c in "/{}"):
		raise ConfigurationError(
			f"the agent {name!r} cannot be served: its routes (/hooks/<agent>, /a2a/<agent>/) "
			"take no '/', '{' or '}', and no name '.' or '..'; rename the agent"
		)


_EXTRAS = {"a2a": ("a2a", "openmolt[a2a]"), "agui": ("ag_ui", "openmolt[agui]")}


def _needs(kind: str) -> None:
	"""Fail now, with the command that fixes it, when a protocol's SDK is not installed."""
	module, extra = _EXTRAS[kind]
	try:
		importlib.import_module(module)
	except ImportError:
		from openmolt_core._hints import install_command

		raise ConfigurationError(
			f"the {kind} trigger needs the protocol's SDK: {install_command(extra)}"
		) from None
