"""The gate in front of the A2A and AG-UI routes: a bearer token, a rate limit, a body cap.

Neither protocol signs its requests, so a caller proves itself with ``Authorization: Bearer
<token>``, compared in constant time. The order is the webhooks' (`openmolt_serve.webhooks`):
the body must fit the cap (``413``) and arrive in time (``408``) before the token is checked
(``401``, with ``WWW-Authenticate: Bearer``), a body nested too deep is ``422``, and only a
caller with the right token counts against the rate limit (``429`` with ``Retry-After``), so
strangers cannot use up the limit of the real one. The token is one of the instance's secrets
(`openmolt_core.secrets`): masked in logs, runs and the viewer.
"""

from __future__ import annotations

import hmac
import logging
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openmolt_core.secrets import register_key
from openmolt_core.triggers import A2ATrigger, AguiTrigger
from openmolt_serve._agentenv import agent_env, agent_secret
from openmolt_serve._body import BODY_TIMEOUT, SlowBody, TooDeep, TooLarge, parse_json, read_body
from openmolt_serve._limits import RateLimit

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["TokenGuard", "token_env"]

log: logging.Logger = logging.getLogger("openmolt")


def token_env(agent: str, kind: str) -> str:
	"""The default environment variable of an agent's token (``OPENMOLT_<AGENT>_<KIND>_TOKEN``).

	The agent's name is written by the command's rule for variables (`openmolt_serve._agentenv`:
	``supportBot`` → ``SUPPORT_BOT``).

	Args:
		agent: The agent's name.
		kind: ``a2a`` or ``agui``.
	"""
	return agent_env(agent, f"{kind}Token")


@dataclass
class TokenGuard:
	"""One agent's gate for one protocol.

	Args:
		agent: The agent behind it.
		kind: ``a2a`` or ``agui`` (for messages).
		token: The token callers must send (read from the environment by `create`).
		rate_limit: Requests a minute.
		max_body: The largest body, in bytes.
		body_timeout: Seconds a body may take to arrive.
	"""

	agent: Agent
	kind: str
	token: str = field(repr=False)
	rate_limit: int = 60
	max_body: int = 1_000_000
	body_timeout: float = BODY_TIMEOUT
	limit: RateLimit = field(init=False, repr=False)

	def __post_init__(self) -> None:
		register_key(self.agent.om, self.token)  # for the instance's life, however it was made
		self.limit = RateLimit(self.rate_limit)

	@classmethod
	def create(cls, agent: Agent, kind: str, config: A2ATrigger | AguiTrigger) -> TokenGuard:
		"""Read the token (``token``, else ``tokenEnv``, else ``OPENMOLT_<AGENT>_<KIND>_TOKEN``).

		Raises:
			ConfigurationError: The token is not set.
		"""
		what = f"the {kind} token of {agent.name!r}"
		token = agent_secret(
			config.token, config.token_env, agent=agent.name, key=f"{kind}Token", what=what
		)
		return cls(agent, kind, token, config.rate_limit, config.max_body)

	def authorized(self, request: Request) -> bool:
		"""Whether the request carries the token (compared in constant time)."""
		scheme, _, given = request.headers.get("authorization", "").partition(" ")
		if scheme.lower() != "bearer" or not given.strip():
			return False
		return hmac.compare_digest(given.strip().encode(), self.token.encode())

	async def admit(self, request: Request) -> tuple[bytes, Response | None]:
		"""Read the body and check the request: ``(body, None)`` to go on, else the refusal."""
		try:
			body = await read_body(request, self.max_body, within=self.body_timeout)
		except TooLarge:
			return b"", _error(413, f"the body is larger than {self.max_body} bytes", "too_large")
		except SlowBody:
			return b"", _error(408, "the body took too long to arrive", "slow")
		if not self.authorized(request):
			log.info("%s request for %s refused: no valid bearer token", self.kind, self.agent.name)
			refusal = _error(
				401,
				f"send the {self.kind} token of this agent as 'Authorization: Bearer <token>'",
				"unauthorized",
			)
			refusal.headers["WWW-Authenticate"] = "Bearer"
			return b"", refusal
		if body:
			try:
				parse_json(body)
			except TooDeep as exc:
				return b"", _error(422, str(exc), "too_deep")
			except ValueError:
				pass  # not JSON: the protocol's own handler says what is wrong with it
		wait = self.limit.take()
		if wait:
			refusal = _error(429, f"too many requests: at most {self.rate_limit} a minute", "rate")
			refusal.headers["Retry-After"] = str(math.ceil(wait))
			return b"", refusal
		return body, None

	def wrap(self, app: ASGIApp, *, open_paths: Collection[str] = ()) -> ASGIApp:
		"""An ASGI app that admits each request (`admit`) before ``app`` sees it.

		Args:
			app: The protocol's application.
			open_paths: Paths (under the mount) answered without a token: the A2A agent card.
		"""

		async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
			if scope["type"] != "http":  # pragma: no cover - the server speaks no WebSocket
				return
			request = Request(scope, receive)
			path = scope.get("path", "")[len(scope.get("root_path", "")) :] or "/"
			if request.method == "GET" and path in open_paths:
				await app(scope, receive, send)
				return
			body, refusal = await self.admit(request)
			if refusal is not None:
				await refusal(scope, receive, send)
				return
			sent = False

			async def replay() -> Message:
				nonlocal sent
				if not sent:
					sent = True
					return {"type": "http.request", "body": body, "more_body": False}
				return await receive()  # the disconnect, when it comes

			await app(scope, replay, send)

		return guarded


def _error(status: int, message: str, reason: str) -> JSONResponse:
	return JSONResponse({"error": message, "reason": reason}, status_code=status)
