"""A local OAuth2 authorization server for tests: enforces PKCE (S256), ``state``, redirects and rotation.

``GET /authorize`` checks the request and redirects to ``redirect_uri`` with a one-time code and
the ``state`` it was given; ``POST /token`` exchanges a code (checking the PKCE verifier against
the challenge, the redirect and the client secret) or a refresh token. Refresh tokens rotate: a
spent one is refused, as services that rotate them do, so two processes refreshing with the same
token is caught.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit


class FakeAuthServer:
	"""The server, on 127.0.0.1 and a free port.

	Args:
		client_id: The registered client id.
		client_secret: Its secret; None: a public client.
		require_pkce: Refuse an authorization request without an S256 challenge.
		refresh_delay: Seconds a refresh takes (to make concurrent refreshes overlap).
	"""

	def __init__(
		self,
		*,
		client_id: str = "cid-123",
		client_secret: str | None = "csecret-abcdef",
		require_pkce: bool = True,
		refresh_delay: float = 0.0,
	) -> None:
		self.client_id = client_id
		self.client_secret = client_secret
		self.require_pkce = require_pkce
		self.refresh_delay = refresh_delay
		self.codes: dict[str, dict[str, Any]] = {}
		self.live_refresh: set[str] = {"rt-initial-000"}
		self.token_requests: list[dict[str, str]] = []
		self.authorize_requests: list[dict[str, str]] = []
		self.refreshes = 0
		self.device_answers: list[str] = ["authorization_pending", "slow_down", "ok"]
		self.devices: dict[str, str] = {}
		self.device_interval = 5
		self.declined: set[str] = set()  # scopes the user unticks on the consent page
		self.scope_separator = " "  # how the token reply lists the granted scopes
		self._lock = threading.Lock()
		owner = self

		class Handler(BaseHTTPRequestHandler):
			def do_GET(self) -> None:
				parts = urlsplit(self.path)
				if parts.path != "/authorize":
					self.send_error(404)
					return
				status, headers, body = owner.authorize(dict(parse_qsl(parts.query)))
				self._answer(status, headers, body)

			def do_POST(self) -> None:
				length = int(self.headers.get("Content-Length") or 0)
				form = dict(parse_qsl(self.rfile.read(length).decode()))
				if urlsplit(self.path).path == "/device":
					status, body = owner.device(form)
				else:
					status, body = owner.token(form, self.headers.get("Authorization"))
				self._answer(status, {"Content-Type": "application/json"}, json.dumps(body))

			def _answer(self, status: int, headers: dict[str, str], body: str) -> None:
				data = body.encode()
				self.send_response(status)
				for name, value in headers.items():
					self.send_header(name, value)
				self.send_header("Content-Length", str(len(data)))
				self.end_headers()
				self.wfile.write(data)

			def log_message(self, *args: Any) -> None:
				return

		self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
		self._thread = threading.Thread(
			target=self._server.serve_forever, args=(0.02,), daemon=True
		)
		self._thread.start()

	@property
	def url(self) -> str:
		"""``http://127.0.0.1:<port>``."""
		return f"http://127.0.0.1:{self._server.server_address[1]}"

	def close(self) -> None:
		"""Stop serving."""
		self._server.shutdown()
		self._server.server_close()

	def authorize(self, q: dict[str, str]) -> tuple[int, dict[str, str], str]:
		"""Check an authorization request and redirect with a code (or answer 400)."""
		self.authorize_requests.append(q)
		problems = []
		if q.get("response_type") != "code":
			problems.append("response_type")
		if q.get("client_id") != self.client_id:
			problems.append("client_id")
		if not q.get("state"):
			problems.append("state")
		if not q.get("redirect_uri", "").startswith("http://127.0.0.1:"):
			problems.append("redirect_uri")
		if self.require_pkce and (
			q.get("code_challenge_method") != "S256" or len(q.get("code_challenge", "")) != 43
		):
			problems.append("pkce")
		if problems:
			return 400, {}, "bad request: " + ",".join(problems)
		code = "code-" + secrets.token_urlsafe(12)
		self.codes[code] = {
			"challenge": q.get("code_challenge"),
			"redirect_uri": q["redirect_uri"],
			"scope": q.get("scope", ""),
		}
		location = f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state']})}"
		return 302, {"Location": location}, ""

	def device(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
		"""Start a device authorization (RFC 8628 section 3.2)."""
		if form.get("client_id") != self.client_id:
			return 400, {"error": "invalid_client"}
		code = "dev-" + secrets.token_urlsafe(12)
		self.devices[code] = form.get("scope", "")
		return 200, {
			"device_code": code,
			"user_code": "WDJB-MJHT",
			"verification_uri": f"{self.url}/activate",
			"interval": self.device_interval,
			"expires_in": 900,
		}

	def _client_ok(self, form: dict[str, str], basic: str | None) -> bool:
		if basic:
			pair = base64.b64decode(basic.removeprefix("Basic ")).decode()
			cid, _, secret = pair.partition(":")
		else:
			cid, secret = form.get("client_id", ""), form.get("client_secret", "")
		if cid != self.client_id:
			return False
		return self.client_secret is None or secret == self.client_secret

	def token(self, form: dict[str, str], basic: str | None) -> tuple[int, dict[str, Any]]:
		"""Exchange a code or a refresh token."""
		self.token_requests.append(form)
		if form.get("grant_type") == "urn:ietf:params:oauth:grant-type:device_code":
			# A public client (GitHub, Microsoft): the client id, no secret.
			if (
				form.get("client_id") != self.client_id
				or form.get("device_code") not in self.devices
			):
				return 400, {"error": "invalid_grant"}
			answer = self.device_answers.pop(0) if self.device_answers else "expired_token"
			if answer != "ok":
				return 400, {"error": answer}
			return 200, self._tokens(self.devices.pop(form["device_code"]))
		if not self._client_ok(form, basic):
			return 401, {"error": "invalid_client"}
		if form.get("grant_type") == "authorization_code":
			grant = self.codes.pop(form.get("code", ""), None)
			if grant is None:
				return 400, {"error": "invalid_grant", "error_description": "unknown code"}
			if form.get("redirect_uri") != grant["redirect_uri"]:
				return 400, {"error": "invalid_grant", "error_description": "redirect mismatch"}
			if grant["challenge"]:
				verifier = form.get("code_verifier", "")
				digest = hashlib.sha256(verifier.encode()).digest()
				made = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
				if made != grant["challenge"]:
					return 400, {"error": "invalid_grant", "error_description": "PKCE failed"}
			granted = [s for s in grant["scope"].split() if s not in self.declined]
			return 200, self._tokens(self.scope_separator.join(granted))
		if form.get("grant_type") == "refresh_token":
			time.sleep(self.refresh_delay)
			with self._lock:
				token = form.get("refresh_token", "")
				if token not in self.live_refresh:
					return 400, {"error": "invalid_grant", "error_description": "spent"}
				self.live_refresh.discard(token)
				self.refreshes += 1
				return 200, self._tokens("")
		return 400, {"error": "unsupported_grant_type"}

	def _tokens(self, scope: str) -> dict[str, Any]:
		refresh = "rt-" + secrets.token_urlsafe(12)
		self.live_refresh.add(refresh)
		return {
			"access_token": "at-" + secrets.token_urlsafe(12),
			"refresh_token": refresh,
			"expires_in": 3600,
			"token_type": "Bearer",
			"scope": scope,
		}


def mail_integration(
	server_url: str,
	*,
	scopes: list[str] | None = None,
	scope_map: dict[str, list[str]] | None = None,
	tools: list[Any] | None = None,
	refresh: bool = True,
	implied_scopes: dict[str, list[str]] | None = None,
) -> Any:
	"""The OAuth2 "mail" integration the accounts tests connect on this server (PKCE required).

	Args:
		server_url: The fake server's URL (its ``/authorize`` and ``/token``).
		scopes: The OAuth scopes (default: ``mail.read``).
		scope_map: Tool scopes to OAuth scopes, as Gmail's integration declares them.
		tools: Its tools (default: ``me``, a GET of ``/me``).
		refresh: Whether the credential reads a refresh token from the config.
		implied_scopes: Scopes a granted one includes, as Shopify's write scopes do.
	"""
	from openmolt_core.integrations import ApiSetup, HttpTool, Integration, OAuth2Credential

	credential: dict[str, Any] = {
		"type": "oauth2",
		"auth_url": f"{server_url}/authorize",
		"token_url": f"{server_url}/token",
		"client_id": "{{ config.clientId }}",
		"client_secret": "{{ config.clientSecret }}",
		"pkce": "required",
	}
	if refresh:
		credential["refresh_token"] = "{{ config.refreshToken }}"
	if scopes is not None or refresh:
		credential["scopes"] = scopes if scopes is not None else ["mail.read"]
	if scope_map is not None:
		credential["scope_map"] = scope_map
	if implied_scopes is not None:
		credential["implied_scopes"] = implied_scopes
	extra: dict[str, Any] = {}
	if scope_map is not None:
		extra["scopes"] = {name: f"{name.capitalize()} mail." for name in scope_map}
	return Integration(
		id="mail",
		name="Mail",
		api_setup=ApiSetup(base_url="https://api.mail.example"),
		credential_setup=[OAuth2Credential(**credential)],
		tools=tools or [HttpTool(handle="me", description="who am I", endpoint="/me")],
		**extra,
	)
