"""The gate in front of the A2A and AG-UI routes: a bearer token, a rate limit, a body cap.

Neither protocol signs its requests, so a caller proves itself with ``Authorization: Bearer
<token>``, compared in constant time. The order is the webhooks' (`openmolt_serve.webhooks`):
the body must fit the cap (``413``) and arrive in time (``408``) before the token is checked
(``401``, with ``WWW-Authenticate: Bearer``), a body nested too deep is ``422``, and only a
caller with the right token counts against the rate limit (``429`` with ``Retry-After``), so
strangers cannot use up the limit of the real one. On A2A (JSON-RPC) a body refused for what it
holds (``413``, ``422``) is a JSON-RPC error instead (`jsonrpc_refusal`). The token is one of the
instance's secrets (`openmolt_core.secrets`): masked in logs, runs and the viewer.

A trigger may name several callers (``"callers": {"crm": {"tokenEnv": "CRM_A2A_TOKEN"}}``), each
with a token of its own; a single ``token``/``tokenEnv`` is one caller named `DEFAULT_CALLER`.
The presented token is compared with every caller's (each comparison in constant time, all of
them made whichever matches, so the time says nothing of which one did); the caller found is
handed to the route (`caller_of`), and each caller has its own rate limit. The protocols bind
what a caller starts to it (`openmolt_serve.a2a`, `openmolt_serve.agui`).
"""

from __future__ import annotations

import hmac
import json
import logging
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openmolt_core.errors import ConfigurationError
from openmolt_core.secrets import MIN_KEY, register_key
from openmolt_core.triggers import DEFAULT_CALLER, A2ATrigger, AguiTrigger, secret_from
from openmolt_serve._agentenv import agent_env, agent_secret
from openmolt_serve._body import BODY_TIMEOUT, BadJson, SlowBody, TooLarge, parse_json, read_body
from openmolt_serve._limits import RateLimit

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = [
	"DEFAULT_CALLER",
	"MIN_TOKEN",
	"NOBODY",
	"TokenGuard",
	"caller_of",
	"jsonrpc_refusal",
	"token_env",
]

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


def caller_of(request: Request) -> str:
	"""The caller `TokenGuard` admitted the request for.

	A request the guard did not admit (one of its open paths: the agent card) is nobody's: a
	name no caller can have (`NOBODY`), which owns no task, context or thread of anyone's.
	Unknown at a security seam is unsafe: never the default caller's.

	Args:
		request: A request the guard admitted (the scope's ``state`` carries the name).
	"""
	name = request.scope.get("state", {}).get(_STATE_KEY)
	return name if isinstance(name, str) else NOBODY


NOBODY = "(nobody)"
"""The caller of a request no guard admitted: no configured caller's name (they are letters,
digits, ``-`` and ``_``)."""

MIN_TOKEN = MIN_KEY
"""The fewest characters a caller's bearer token may have: those of a secret the logs, the stores
and the model's requests mask (`openmolt_core.secrets.MIN_KEY`); a shorter one never would be."""


_STATE_KEY = "openmolt_caller"
"""Where in the request's ``state`` the guard writes the caller's name."""


@dataclass
class TokenGuard:
	"""One agent's gate for one protocol.

	Args:
		agent: The agent behind it.
		kind: ``a2a`` or ``agui`` (for messages).
		token: The token of the one caller `DEFAULT_CALLER` ("" when ``callers`` names them all).
		rate_limit: Requests a minute, for each caller.
		max_body: The largest body, in bytes.
		body_timeout: Seconds a body may take to arrive.
		callers: Each caller's token, by the caller's name (read from the environment by
			`create`).

	Raises:
		ConfigurationError: No token at all, an empty one, two callers with one token, or a
			``token`` besides a caller named `DEFAULT_CALLER`.
	"""

	agent: Agent
	kind: str
	token: str = field(default="", repr=False)
	rate_limit: int = 60
	max_body: int = 1_000_000
	body_timeout: float = BODY_TIMEOUT
	callers: Mapping[str, str] = field(default_factory=dict, repr=False)
	tokens: dict[str, str] = field(init=False, repr=False)
	"""Every caller's token, by name (the single ``token`` is `DEFAULT_CALLER`'s)."""
	limits: dict[str, RateLimit] = field(init=False, repr=False)
	"""Each caller's rate limit, by name."""

	def __post_init__(self) -> None:
		tokens = dict(self.callers)
		if self.token:
			if DEFAULT_CALLER in tokens:
				raise ConfigurationError(
					f"the {self.kind} token of {self.agent.name!r} is given twice, as token and "
					f"as callers.{DEFAULT_CALLER}: give one"
				)
			tokens[DEFAULT_CALLER] = self.token
		for token in tokens.values():  # registered first: no error below may show one
			if token:
				register_key(self.agent.om, token)  # for the instance's life, however made
		if not tokens:
			raise ConfigurationError(
				f"the {self.kind} token of {self.agent.name!r} is not set: give token/tokenEnv "
				"or callers"
			)
		owners: dict[str, str] = {}
		for name, token in tokens.items():
			if not token.strip():
				raise ConfigurationError(
					f"the {self.kind} token of caller {name!r} of {self.agent.name!r} is empty: "
					"set its variable to the token"
				)
			if len(token.strip()) < MIN_TOKEN:
				raise ConfigurationError(
					f"the {self.kind} token of caller {name!r} of {self.agent.name!r} has "
					f"{len(token.strip())} characters; give one of at least {MIN_TOKEN} (a shorter "
					"one is too short to be masked in logs and stores; a long random one resists "
					"guessing): "
					"python -c 'import secrets; print(secrets.token_urlsafe(32))'"
				)
			other = owners.setdefault(token, name)
			if other != name:
				raise ConfigurationError(
					f"the {self.kind} callers {other!r} and {name!r} of {self.agent.name!r} have "
					"the same token: give each caller a token of its own (the token names the "
					"caller)"
				)
		self.tokens = tokens
		self.limits = {name: RateLimit(self.rate_limit) for name in tokens}

	@classmethod
	def create(cls, agent: Agent, kind: str, config: A2ATrigger | AguiTrigger) -> TokenGuard:
		"""Read the tokens: each caller's, or the one (`DEFAULT_CALLER`'s).

		Each caller's is its ``token`` or ``tokenEnv`` (``callers``); the one token is ``token``,
		else ``tokenEnv``, else ``OPENMOLT_<AGENT>_<KIND>_TOKEN``.

		Raises:
			ConfigurationError: A token is not set (the message names the variable to
				export), empty, or two callers share one.
		"""
		if config.callers:
			tokens = {
				name: secret_from(
					given.token,
					given.token_env,
					what=f"the {kind} token of caller {name!r} of {agent.name!r} "
					f"(callers.{name}.tokenEnv)",
				)
				for name, given in config.callers.items()
			}
			return cls(agent, kind, "", config.rate_limit, config.max_body, callers=tokens)
		what = f"the {kind} token of {agent.name!r}"
		token = agent_secret(
			config.token, config.token_env, agent=agent.name, key=f"{kind}Token", what=what
		)
		return cls(agent, kind, token, config.rate_limit, config.max_body)

	def caller(self, request: Request) -> str | None:
		"""The caller whose token the request carries, or None.

		The token is compared with every caller's, each in constant time and all of them
		whichever matches: how long it takes says nothing of which caller's it is.
		"""
		scheme, _, given = request.headers.get("authorization", "").partition(" ")
		if scheme.lower() != "bearer" or not given.strip():
			return None
		presented = given.strip().encode()
		found: str | None = None
		for name, token in self.tokens.items():
			matched = hmac.compare_digest(presented, token.encode())
			found = name if matched else found
		return found

	def authorized(self, request: Request) -> bool:
		"""Whether the request carries a caller's token (compared in constant time)."""
		return self.caller(request) is not None

	async def admit(self, request: Request) -> tuple[bytes, Response | None]:
		"""Read the body and check the request: ``(body, None)`` to go on, else the refusal.

		A request admitted names its caller in its scope's ``state`` (`caller_of`).
		"""
		try:
			body = await read_body(request, self.max_body, within=self.body_timeout)
		except TooLarge:
			return b"", _error(413, f"the body is larger than {self.max_body} bytes", "too_large")
		except SlowBody:
			return b"", _error(408, "the body took too long to arrive", "slow")
		caller = self.caller(request)
		if caller is None:
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
			except BadJson as exc:
				return b"", _error(422, str(exc), exc.reason)
			except ValueError:
				pass  # not JSON: the protocol's own handler says what is wrong with it
		wait = self.limits[caller].take()
		if wait:
			refusal = _error(429, f"too many requests: at most {self.rate_limit} a minute", "rate")
			refusal.headers["Retry-After"] = str(math.ceil(wait))
			return b"", refusal
		request.scope.setdefault("state", {})[_STATE_KEY] = caller  # for the route: caller_of
		return body, None

	def wrap(
		self, app: ASGIApp, *, open_paths: Collection[str] = (), jsonrpc: bool = False
	) -> ASGIApp:
		"""An ASGI app that admits each request (`admit`) before ``app`` sees it.

		Args:
			app: The protocol's application.
			open_paths: Paths (under the mount) answered without a token: the A2A agent card.
			jsonrpc: ``app`` speaks JSON-RPC (A2A): a body refused for what it holds (too
				large, nested too deep, JSON a run cannot hold) is a JSON-RPC error
				(`jsonrpc_refusal`), which a client reads, not an HTTP status it cannot.
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
				if jsonrpc:
					refusal = jsonrpc_refusal(refusal)
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


_JSONRPC_CODES = {413: -32600, 422: -32700}
"""The JSON-RPC error of a body refused for what it holds: Invalid Request (too large, as the
a2a-sdk's own cap answers), or Parse error (JSON a run cannot hold)."""


def jsonrpc_refusal(refusal: Response) -> Response:
	"""A refusal of a request's body as a JSON-RPC error, as a JSON-RPC client reads one.

	A refusal for what the body holds (``413``, ``422``) becomes a JSON-RPC error response:
	HTTP 200, ``id`` null (the request's id was not read), the refusal's words as the message
	and its reason in ``data``, as the a2a-sdk answers a body past its own cap. The official
	client then raises an error with those words; an HTTP 413 or 422 it reports only by its
	status. A refusal of the caller (``401``, ``429``) or of a body that came too slowly (``408``)
	stays the transport's: A2A leaves authentication and rate limits to HTTP.

	Args:
		refusal: What `TokenGuard.admit` answered.
	"""
	code = _JSONRPC_CODES.get(refusal.status_code)
	if code is None:
		return refusal
	said = json.loads(bytes(refusal.body))
	if said.get("reason") == "too_deep":
		code = -32600  # JSON, but no request this server reads
	error = {"code": code, "message": said["error"], "data": {"reason": said["reason"]}}
	return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error})
