"""Signing in to an integration: the OAuth2 authorization-code flow with PKCE, for ``openmolt auth``.

`authorize` runs the whole flow: it builds the consent URL (`consent_url`: the scopes the agent's
tools need, a fresh ``state`` and, when the service takes it, a PKCE S256 challenge), hands it to
the user (a browser, or printed), waits for the service to send the browser back to a loopback
redirect (``http://127.0.0.1:<port>/callback``, `LoopbackReceiver`) or for the user to paste the
address they were sent to (``--no-browser``), checks ``state`` (`code_from_redirect`), and
exchanges the code for tokens (`exchange_code`). The caller stores the tokens
(`openmolt_core.credstore`).

What each service needs (authorize and token URLs, PKCE, how scopes are joined, extra parameters
such as Google's ``access_type=offline``) is the integration's `OAuth2Credential`, not code here.
No token, secret, code or verifier is ever logged or put in an error message.
"""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from openmolt_core._envvars import env_var
from openmolt_core._support.masking import masked_excerpt
from openmolt_core._support.webheaders import SECURITY_HEADERS
from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.integrations.credentials import (
	_REASON_CHARS,
	_expires_at,
	_reason,
	_value,
	authorization_url,
	oauth2_config,
	oauth_guard,
	token_reply,
)

if TYPE_CHECKING:
	from openmolt_core.integrations._ssrf import SsrfGuard
	from openmolt_core.integrations.model import Integration, OAuth2Credential

__all__ = [
	"CALLBACK_PATH",
	"IDLE_SECONDS",
	"Consent",
	"LoopbackReceiver",
	"authorize",
	"code_from_redirect",
	"code_grant",
	"consent_url",
	"device_authorize",
	"exchange_code",
	"oauth2_credential",
	"pkce_pair",
	"refusal",
	"requested_scopes",
]

CALLBACK_PATH = "/callback"
"""The path of the loopback redirect (``http://127.0.0.1:<port>/callback``)."""


def pkce_pair() -> tuple[str, str]:
	"""A fresh PKCE verifier and its S256 challenge (RFC 7636 section 4.1 and 4.2).

	Returns:
		``(verifier, challenge)``: 64 unreserved characters, and the unpadded base64url
		SHA-256 of the verifier.
	"""
	verifier = secrets.token_urlsafe(48)  # 64 characters of [A-Za-z0-9_-]
	digest = hashlib.sha256(verifier.encode("ascii")).digest()
	return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def oauth2_credential(spec: Integration, integration: str) -> OAuth2Credential:
	"""The integration's oauth2 credential setup, which must name an authorization URL.

	Args:
		spec: The integration.
		integration: Its id, for the message.

	Raises:
		ConfigurationError: It has no oauth2 credential with an ``auth_url``.
	"""
	from openmolt_core.integrations.model import OAuth2Credential

	for credential in spec.credential_setup:
		if isinstance(credential, OAuth2Credential) and credential.auth_url:
			return credential
	types = ", ".join(c.type for c in spec.credential_setup) or "none"
	raise ConfigurationError(
		f"{integration}: it has no oauth2 credential with an authorization URL (its credential "
		f"types: {types}); give its key with `openmolt keys set {integration}` instead"
	)


def requested_scopes(
	spec: Integration, credential: OAuth2Credential, tool_scopes: Iterable[str] | None
) -> list[str]:
	"""The OAuth scopes to ask for: those the agent's tool scopes need, not all of them.

	With the credential's ``scope_map``, each tool scope asks for its OAuth scopes, and every
	entry of ``scopes`` no tool scope lists (``offline_access``) is always asked for; when that
	leaves nothing, the credential's ``minimum_scopes`` are (a service that refuses a consent
	asking for no scope). Without a map, or with ``tool_scopes`` None (every tool), all of
	``scopes`` are.

	Args:
		spec: The integration (the tool scopes it defines).
		credential: Its oauth2 credential.
		tool_scopes: The tool scopes the agent is given (``["read", "send"]``); None: all.

	Raises:
		ConfigurationError: A tool scope the integration does not define.
	"""
	if tool_scopes is None:
		wanted = list(spec.scopes) if credential.scope_map else []
	else:
		wanted = list(dict.fromkeys(tool_scopes))
		unknown = [s for s in wanted if s not in spec.scopes]
		if unknown:
			raise ConfigurationError(
				f"--scopes: unknown scope(s) {unknown}; the integration defines: "
				f"{', '.join(sorted(spec.scopes)) or '(none)'}"
			)
	if not credential.scope_map:
		return list(credential.scopes)
	mapped = {s for values in credential.scope_map.values() for s in values}
	out = [s for s in credential.scopes if s not in mapped]
	for scope in wanted:
		out.extend(credential.scope_map.get(scope, ()))
	# Tools that need no OAuth scope still need a consent the service accepts.
	return list(dict.fromkeys(out or credential.minimum_scopes))


@dataclass(frozen=True, slots=True, repr=False)  # its own __repr__: none to generate
class Consent:
	"""One authorization attempt: the URL to open and what checks its answer.

	Args:
		url: The consent URL.
		state: The ``state`` the answer must carry back.
		verifier: The PKCE verifier the exchange sends (None without PKCE); never shown.
		redirect_uri: The redirect the URL names (the exchange repeats it).
		scopes: The OAuth scopes asked for.
	"""

	url: str
	state: str
	verifier: str | None
	redirect_uri: str
	scopes: tuple[str, ...]

	def __repr__(self) -> str:
		return f"Consent(redirect_uri={self.redirect_uri!r}, scopes={self.scopes!r})"


def consent_url(
	credential: OAuth2Credential,
	config: Mapping[str, Any],
	redirect_uri: str,
	scopes: Iterable[str] | None = None,
) -> Consent:
	"""A consent URL with a fresh ``state`` and, unless the service takes none, a PKCE challenge.

	Args:
		credential: The oauth2 credential (URL, PKCE support, separator, extra parameters).
		config: The client id (``clientId``) and what the URL reads (a shop domain).
		redirect_uri: The redirect (loopback, or what the app registered).
		scopes: The OAuth scopes (`requested_scopes`); None: all of the credential's.

	Raises:
		ConfigurationError: The config lacks the client id the URL needs.
	"""
	config = oauth2_config(config)
	if not _value(credential.client_id, config, "clientId"):
		raise ConfigurationError(
			"clientId: the OAuth client id is not set; give it with --client-id, "
			"OPENMOLT_<ID>_CLIENT_ID or the integration's config"
		)
	state = secrets.token_urlsafe(32)
	verifier = challenge = None
	if credential.pkce != "unsupported":
		verifier, challenge = pkce_pair()
	wanted = tuple(credential.scopes if scopes is None else scopes)
	url = authorization_url(
		credential, config, redirect_uri, state, code_challenge=challenge, scopes=list(wanted)
	)
	return Consent(url, state, verifier, redirect_uri, wanted)


def code_from_redirect(answer: str, state: str) -> str:
	"""The authorization code from the address the service redirected to, after checking ``state``.

	Args:
		answer: The redirect URL (or its query string) as the browser received it.
		state: The state the consent URL carried.

	Raises:
		ConfigurationError: The service refused (``error``), ``state`` is missing or differs
			(a forged or stale answer), or there is no ``code``.
	"""
	text = answer.strip()
	if not text:
		raise ConfigurationError(
			"nothing pasted: paste the whole address the browser was sent to after you signed in "
			"(it holds ?code=...&state=...)"
		)
	query = urlsplit(text).query if "?" in text or "://" in text else text.lstrip("?")
	params = dict(parse_qsl(query, keep_blank_values=True))
	if params.get("error"):
		raise ConfigurationError(
			f"the service refused the authorization ({refusal(params)}); nothing was signed in"
		)
	got = params.get("state")
	if not got or not secrets.compare_digest(got.encode(), state.encode()):
		raise ConfigurationError(
			"state: the redirect's state does not match this sign-in (a stale or forged "
			"answer); run `openmolt auth` again and paste the newest address"
		)
	code = params.get("code")
	if not code:
		raise ConfigurationError(
			"code: the redirect has no authorization code; paste the whole address the browser "
			"was sent to"
		)
	return code


def refusal(params: Mapping[str, str]) -> str:
	"""An authorization error response's code and words, masked and cut (RFC 6749 4.1.2.1).

	``access_denied: The user denied access``; ``access_denied`` is also said plainly (the
	consent was declined), as the services word it differently or not at all.

	Args:
		params: The redirect's query (``error``, ``error_description``).
	"""
	code = params.get("error", "")
	words = params.get("error_description") or ""
	if not words and code == "access_denied":
		words = "the consent was declined or cancelled"
	said = f"{code}: {words}" if words and words != code else code
	return masked_excerpt(said, _REASON_CHARS)


def _token_fields(body: dict[str, Any], client_id: str, secret: str) -> dict[str, Any]:
	"""The tokens of a token answer, and the client that obtained them."""
	out: dict[str, Any] = {"accessToken": str(body["access_token"])}
	if body.get("refresh_token"):
		out["refreshToken"] = str(body["refresh_token"])
	expires = _expires_at(body.get("expires_in"))
	if expires is not None:
		out["expiryDate"] = expires
	if client_id:
		out["clientId"] = client_id
	if secret:
		out["clientSecret"] = secret
	return out


def _with_config(config: Mapping[str, Any], tokens: dict[str, Any]) -> dict[str, Any]:
	"""What the flow was given (client, a shop or tenant the URLs read) with the new tokens.

	A refresh needs it again. Old tokens are dropped, in both spellings.
	"""
	kept = {
		k: v for k, v in config.items() if _normal(k) not in _TOKEN_KEYS and v not in (None, "")
	}
	return {**kept, **tokens}


async def device_authorize(
	spec: Integration,
	integration: str,
	config: Mapping[str, Any],
	*,
	client: httpx.AsyncClient,
	tool_scopes: Iterable[str] | None = None,
	show: Callable[[str, str], None],
	sleep: Callable[[float], Awaitable[Any]] | None = None,
	granted: Callable[[tuple[str, ...], str | None], None] | None = None,
) -> dict[str, Any]:
	"""The device authorization grant (RFC 8628): show a code, poll until the user enters it.

	Args:
		spec: The integration (its oauth2 credential's ``device_url``).
		integration: Its id.
		config: The client id (and secret when the service wants one).
		client: The HTTP client.
		tool_scopes: The tool scopes the agent needs (`requested_scopes`); None: all.
		show: Given the verification URL and the user code, tells the user.
		sleep: Awaitable sleep between polls (default ``anyio.sleep``; tests pass a fast one).
		granted: Told the OAuth scopes asked for and the token reply's ``scope`` (None: the
			reply lists none), to record what was granted (``openmolt auth --user``).

	Returns:
		The config to store, as `authorize` returns it.

	Raises:
		ConfigurationError: No device flow, or no client id.
		ToolError: The user refused, the code expired, or the service failed.
	"""
	import anyio

	credential = oauth2_credential(spec, integration)
	if not credential.device_url:
		raise ConfigurationError(
			f"--device: {integration} has no device flow; sign in with the browser (drop "
			"--device), or use --no-browser on a remote machine"
		)
	cfg = oauth2_config(config)
	guard = oauth_guard(spec, cfg)  # a document's device and token URLs are checked
	client_id = _value(credential.client_id, cfg, "clientId")
	secret = _value(credential.client_secret, cfg, "clientSecret")
	if not client_id:
		raise ConfigurationError(
			"clientId: the OAuth client id is not set; give it with --client-id"
		)
	scopes = requested_scopes(spec, credential, tool_scopes)
	form = {"client_id": client_id}
	if scopes:
		form["scope"] = " ".join(scopes)
	headers = {"Accept": "application/json"}
	device_url = _value(credential.device_url, cfg, "deviceUrl")
	token_url = _value(credential.token_url, cfg, "tokenUrl")
	try:
		answer, start = await token_reply(
			client,
			client.build_request("POST", device_url, data=form, headers=headers),
			guard=guard,
		)
	except (httpx.HTTPError, ValueError) as exc:
		raise ToolError(
			f"{integration}: the device authorization request failed ({type(exc).__name__})"
		) from None
	if not answer.is_success or not isinstance(start, dict) or not start.get("device_code"):
		reason = (
			start.get("error_description") or start.get("error")
			if isinstance(start, dict)
			else None
		)
		raise ToolError(
			f"{integration}: the device authorization was refused ({answer.status_code}: "
			f"{_reason(reason or 'no device_code', secret)}); is the device flow enabled for "
			"the app?"
		)
	uri = str(start.get("verification_uri") or start.get("verification_url") or "")
	show(uri, str(start.get("user_code") or ""))
	try:  # RFC 8628 section 3.2: five seconds unless the service says otherwise
		interval = max(0.0, float(start["interval"])) if start.get("interval") is not None else 5.0
	except (TypeError, ValueError):
		interval = 5.0
	if not interval < 600:  # infinite or NaN: one poll would never come
		interval = 5.0
	try:  # section 3.2: the code's lifetime; unreadable, the usual 15 minutes
		lifetime = float(start.get("expires_in") or 900)
	except (TypeError, ValueError):
		lifetime = 900.0
	if not 0 < lifetime < 86400:  # NaN, negative or absurd: the usual too
		lifetime = 900.0
	deadline = anyio.current_time() + lifetime
	poll = {
		"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
		"device_code": str(start["device_code"]),
		"client_id": client_id,
	}
	if secret:
		poll["client_secret"] = secret
	wait = sleep or anyio.sleep
	while anyio.current_time() < deadline:
		await wait(interval)
		try:
			response, body = await token_reply(
				client,
				client.build_request("POST", token_url, data=poll, headers=headers),
				guard=guard,
			)
		except (httpx.HTTPError, ValueError) as exc:
			raise ToolError(
				f"{integration}: polling for the token failed ({type(exc).__name__})"
			) from None
		body = body if isinstance(body, dict) else {}
		if body.get("access_token"):
			if granted is not None:
				scope = body.get("scope")
				granted(tuple(scopes), scope if isinstance(scope, str) else None)
			return _with_config(config, _token_fields(body, client_id, secret))
		error = body.get("error")
		if error == "authorization_pending":
			continue
		if error == "slow_down":
			interval += 5  # RFC 8628 section 3.5
			continue
		reason = body.get("error_description") or error or f"HTTP {response.status_code}"
		shown = _reason(reason, secret, poll["device_code"])
		raise ToolError(f"{integration}: the device sign-in ended ({shown})")
	raise ToolError(
		f"{integration}: the device code expired; run `openmolt auth {integration} --device` again"
	)


async def exchange_code(
	credential: OAuth2Credential,
	config: Mapping[str, Any],
	code: str,
	consent: Consent,
	*,
	client: httpx.AsyncClient,
	integration: str,
	guard: SsrfGuard | None,
) -> dict[str, Any]:
	"""Exchange an authorization code for tokens at the credential's token URL.

	Args:
		credential: The oauth2 credential (token URL, client authentication, encoding).
		config: The client id and secret (and what the token URL reads).
		code: The code from `code_from_redirect`.
		consent: The attempt (its redirect and PKCE verifier).
		client: The HTTP client to send with.
		integration: The id, for messages.
		guard: The integration's SSRF guard of OAuth2 requests (`oauth_guard`); None: none.

	Returns:
		``accessToken``, ``refreshToken`` and ``expiryDate`` when given, plus the client id and
		secret used.

	Raises:
		ConfigurationError: The client secret is needed but missing.
		ToolError: The service refused or did not answer with an access token.
	"""
	tokens, _ = await code_grant(
		credential, config, code, consent, client=client, integration=integration, guard=guard
	)
	return tokens


async def code_grant(
	credential: OAuth2Credential,
	config: Mapping[str, Any],
	code: str,
	consent: Consent,
	*,
	client: httpx.AsyncClient,
	integration: str,
	guard: SsrfGuard | None,
) -> tuple[dict[str, Any], str | None]:
	"""`exchange_code`, and the scopes the service says it granted.

	Args:
		credential: The oauth2 credential (token URL, client authentication, encoding).
		config: The client id and secret (and what the token URL reads).
		code: The code from `code_from_redirect`.
		consent: The attempt (its redirect and PKCE verifier).
		client: The HTTP client to send with.
		integration: The id, for messages.
		guard: The integration's SSRF guard of OAuth2 requests (`oauth_guard`); None: none.

	Returns:
		The tokens, as `exchange_code` returns them, and the reply's ``scope`` (RFC 6749
		section 5.1: the granted scopes, as the service lists them; None when it gives none).

	Raises:
		ConfigurationError: The client secret is needed but missing.
		ToolError: The service refused or did not answer with an access token.
	"""
	cfg = oauth2_config(config)
	client_id = _value(credential.client_id, cfg, "clientId")
	secret = _value(credential.client_secret, cfg, "clientSecret")
	if credential.client_secret_required and not secret:
		raise ConfigurationError(
			f"clientSecret: {integration} needs the OAuth client secret to exchange the code; "
			f"set {env_var(integration, 'clientSecret')} (or `openmolt keys set`), or type it "
			"when `openmolt auth` asks"
		)
	form = {"grant_type": "authorization_code", "code": code, "redirect_uri": consent.redirect_uri}
	if consent.verifier:
		form["code_verifier"] = consent.verifier
	headers = {"Accept": "application/json"}
	if credential.token_auth == "basic" and secret:
		pair = base64.b64encode(f"{client_id}:{secret}".encode()).decode("ascii")
		headers["Authorization"] = f"Basic {pair}"
	else:
		form[credential.client_id_param] = client_id
		if secret:
			form["client_secret"] = secret
	token_url = _value(credential.token_url, cfg, "tokenUrl")
	try:
		if credential.token_format == "json":
			request = client.build_request("POST", token_url, json=form, headers=headers)
		else:
			request = client.build_request("POST", token_url, data=form, headers=headers)
		response, body = await token_reply(client, request, guard=guard)
	except (httpx.HTTPError, ValueError) as exc:
		raise ToolError(
			f"{integration}: the token exchange failed ({type(exc).__name__})", retryable=True
		) from None
	if isinstance(body, dict) and isinstance(body.get("data"), dict) and "access_token" not in body:
		body = body["data"]  # TikTok wraps some answers
	access = body.get("access_token") if isinstance(body, dict) else None
	if not response.is_success or not access:
		reason = (
			body.get("error_description") or body.get("error") if isinstance(body, dict) else None
		)
		# The service may echo what it was sent: the code and the verifier are hidden too.
		shown = _reason(reason or "no access_token", secret, code, consent.verifier or "")
		raise ToolError(
			f"{integration}: the token exchange was refused ({response.status_code}: {shown}); "
			f"run `openmolt auth {integration}` again",
			status_code=response.status_code,
		)
	scope = body.get("scope")
	return _token_fields(body, client_id, secret), scope if isinstance(scope, str) else None


_PAGE = (
	b"<!doctype html><meta charset=utf-8><title>OpenMolt</title>"
	b"<p>Signed in. You can close this window and return to the terminal."
)
_REFUSED = (
	b"<!doctype html><meta charset=utf-8><title>OpenMolt</title>"
	b"<p>You are not signed in: the service refused the authorization (%s). Return to the "
	b"terminal to try again."
)
_WRONG = (
	b"<!doctype html><meta charset=utf-8><title>OpenMolt</title>"
	b"<p>This answer is not for the sign-in in progress (its state differs). Use the newest "
	b"address the terminal shows."
)


_NOT_HERE = (
	b"<!doctype html><meta charset=utf-8><title>OpenMolt</title>"
	b"<p>Nothing here: the sign-in comes back to /callback."
)

IDLE_SECONDS = 10.0
"""Seconds the loopback listener waits on a connection that sends nothing before dropping it."""


class _Server(ThreadingHTTPServer):
	daemon_threads = True  # a connection still open never keeps the process alive
	block_on_close = False  # nor holds up `LoopbackReceiver.close`


class LoopbackReceiver:
	"""A one-shot HTTP listener on 127.0.0.1 that catches the service's redirect.

	Only ``GET /callback`` is taken (a browser's ``/favicon.ico`` gets 404); the listener binds
	the loopback address only, never every interface. Only an answer carrying the sign-in's
	``state`` (`expect`) is taken: one with another state (a stale tab, another local program),
	or any that comes before the state is known, is turned away with 400 and the listener keeps
	waiting for the real one. Each connection is served on its own thread and dropped after
	`IDLE_SECONDS` of silence, so one that sends nothing (a browser's preconnect, another local
	program) never holds up the answer.

	Args:
		port: The port (0: any free one; services that register an exact redirect need a fixed one).
	"""

	def __init__(self, port: int = 0) -> None:
		received: list[str] = []
		arrived = threading.Event()
		owner = self

		class _Handler(BaseHTTPRequestHandler):
			timeout = IDLE_SECONDS  # a silent connection's thread ends

			def do_GET(self) -> None:
				if urlsplit(self.path).path != CALLBACK_PATH:
					self._page(404, _NOT_HERE)
					return
				if not owner._expected_state(self.path):
					owner.refused += 1
					self._page(400, _WRONG)
					return
				received.append(self.path)
				arrived.set()
				query = dict(parse_qsl(urlsplit(self.path).query))
				if query.get("error"):  # declined, or the service failed: nothing signed in
					said = html.escape(refusal(query))
					self._page(400, _REFUSED % said.encode("utf-8", "replace"))
				else:
					self._page(200, _PAGE)

			def _page(self, status: int, body: bytes) -> None:
				self.send_response(status)
				self.send_header("Content-Type", "text/html; charset=utf-8")
				self.send_header("Content-Length", str(len(body)))
				# The page's address holds the code and the state: as every page of ours.
				for name, value in SECURITY_HEADERS:
					self.send_header(name, value)
				self.end_headers()
				self.wfile.write(body)

			def log_message(self, format: str, *args: Any) -> None:
				return  # the query holds the code: never printed

		if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
			raise ConfigurationError(f"--port: {port!r} is not a port; give 1-65535, or 0 for any")
		self.refused = 0
		"""Answers turned away because their state was not this sign-in's."""
		self._state: str | None = None
		try:
			self._server = _Server(("127.0.0.1", port), _Handler)
		except OSError as exc:
			raise ConfigurationError(
				f"--port: cannot listen on 127.0.0.1:{port} ({exc.strerror}); choose another port"
			) from None
		self._server.timeout = 0.2  # handle_request returns, so close() ends the thread
		self._received = received
		self._arrived = arrived
		self._thread = threading.Thread(target=self._serve, daemon=True)
		self._thread.start()

	def expect(self, state: str) -> None:
		"""Take only answers carrying this ``state``.

		Args:
			state: The state of the consent URL.
		"""
		self._state = state

	def _expected_state(self, path: str) -> bool:
		if self._state is None:  # not known yet: no answer can be this sign-in's
			return False
		got = dict(parse_qsl(urlsplit(path).query)).get("state", "")
		return secrets.compare_digest(got.encode(), self._state.encode())

	def _serve(self) -> None:
		while not self._arrived.is_set():
			self._server.handle_request()

	@property
	def redirect_uri(self) -> str:
		"""``http://127.0.0.1:<port>/callback``."""
		return f"http://127.0.0.1:{self._server.server_address[1]}{CALLBACK_PATH}"

	def wait(self, timeout: float) -> str:
		"""The redirect's path and query, once it arrives.

		Args:
			timeout: Seconds to wait.

		Raises:
			ConfigurationError: Nothing arrived in time.
		"""
		if not self._arrived.wait(timeout):
			raise ConfigurationError(
				f"no answer from the browser in {timeout:.0f} s; run again, or use --no-browser "
				"and paste the address"
			)
		return self._received[0]

	def close(self) -> None:
		"""Stop listening."""
		self._arrived.set()
		self._thread.join(timeout=2)
		self._server.server_close()


async def authorize(
	spec: Integration,
	integration: str,
	config: Mapping[str, Any],
	*,
	client: httpx.AsyncClient,
	tool_scopes: Iterable[str] | None = None,
	show: Callable[[str], None],
	paste: Callable[[], str] | None = None,
	redirect_uri: str | None = None,
	port: int = 0,
	wait_seconds: float = 300.0,
	granted: Callable[[tuple[str, ...], str | None], None] | None = None,
) -> dict[str, Any]:
	"""Run the authorization-code flow for one integration and return the tokens to store.

	Args:
		spec: The integration.
		integration: Its id.
		config: The client id and secret, and what the URLs read (a shop domain).
		client: The HTTP client for the token exchange.
		tool_scopes: The tool scopes the agent needs (`requested_scopes`); None: all.
		show: Given the consent URL: opens a browser, or prints it.
		paste: Reads the redirect address the user pastes (``--no-browser``); None: listen on
			the loopback redirect.
		redirect_uri: The redirect to name when pasting (default: the loopback form with
			``port``); ignored when listening.
		port: The loopback port (0: any free one).
		wait_seconds: Seconds to wait for the browser.
		granted: Told the OAuth scopes asked for and the token reply's ``scope`` (None: the
			reply lists none), to record what was granted (``openmolt auth --user``).

	Returns:
		The config to store: what ``config`` gave (client id and secret, a shop domain) with the
		new ``accessToken``, ``refreshToken`` and ``expiryDate``.

	Raises:
		ConfigurationError: A missing client id or secret, a refused or forged answer.
		ToolError: The token exchange failed.
	"""
	import anyio

	credential = oauth2_credential(spec, integration)
	scopes = requested_scopes(spec, credential, tool_scopes)
	if credential.https_redirect and (paste is None or not redirect_uri):
		raise ConfigurationError(
			f"--redirect-uri: {integration} accepts only https redirect URLs, so OpenMolt cannot "
			"listen for the answer; register one with the app (https://localhost:8765/callback) "
			"and run with --no-browser --redirect-uri <it>, then paste the address the browser "
			"shows"
		)
	if paste is not None:
		uri = redirect_uri or f"http://127.0.0.1:{port or 8765}{CALLBACK_PATH}"
		consent = consent_url(credential, config, uri, scopes)
		show(consent.url)
		answer = await anyio.to_thread.run_sync(paste)
	else:
		receiver = LoopbackReceiver(port)
		try:
			consent = consent_url(credential, config, receiver.redirect_uri, scopes)
			receiver.expect(consent.state)
			show(consent.url)
			answer = await anyio.to_thread.run_sync(receiver.wait, wait_seconds)
		finally:
			receiver.close()
	code = code_from_redirect(answer, consent.state)
	tokens, reported = await code_grant(
		credential,
		config,
		code,
		consent,
		client=client,
		integration=integration,
		guard=oauth_guard(spec, oauth2_config(config)),
	)
	if granted is not None:
		granted(consent.scopes, reported)
	return _with_config(config, tokens)


_TOKEN_KEYS = frozenset({"accesstoken", "refreshtoken", "expirydate"})


def _normal(key: str) -> str:
	return key.replace("_", "").lower()
