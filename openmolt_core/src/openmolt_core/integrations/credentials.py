"""Credentials as ``httpx.Auth``: bearer, custom, oauth2 and basic, and the types integrations add.

`make_auth` turns an agent's credential (the integration's `Credential` setup rendered over the
agent's config) into an ``httpx.Auth`` that the HTTP engine passes to every request. A type one
vendor needs (AWS Signature V4) is the vendor integration's own, registered in its ``auths``. Values are
rendered on each request from the current config, so an OAuth2 refresh takes effect at once.

OAuth2 refreshes when the access token is missing or expires within `EXPIRY_SKEW` seconds, and
once when a request is answered 401. Its config keys (`OAuth2Config`) work in camelCase and in
snake_case. A public client (no client secret: PKCE, as Airtable allows) refreshes with its
``client_id`` in the body and no ``Authorization`` header, as RFC 6749 section 2.3 and the services'
examples do; a confidential client authenticates as its credential's ``token_auth`` says. One refresh runs at a time per credential (an ``anyio.Lock``):
concurrent tool calls wait for it and use its token. The new config (token, expiry, and a rotated
refresh token) goes to ``on_token_refresh`` and to every callback added with
``add_refresh_listener`` (OpenMolt shares one auth between agents with the same credential).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import logging
import re
import threading
import weakref
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote, urlencode

import anyio
import httpx
from pydantic import ConfigDict, Field, ValidationError

from openmolt_core._support.sync import call as call_app
from openmolt_core.errors import ConfigurationError, IntegrationError, ToolError
from openmolt_core.integrations._body import ACCEPT_ENCODING, read_body
from openmolt_core.integrations._encode import set_query
from openmolt_core.integrations._headers import check_header
from openmolt_core.integrations._ssrf import SsrfGuard, internal_hosts
from openmolt_core.integrations.config import EngineConfig
from openmolt_core.integrations.templating import MISSING, render_string
from openmolt_core.options import Options, options_config

if TYPE_CHECKING:
	from collections.abc import AsyncGenerator

	from openmolt_core.credstore import CredentialStore
	from openmolt_core.integrations.model import (
		BasicCredential,
		BearerCredential,
		Credential,
		CustomCredential,
		Integration,
		OAuth2Credential,
	)

__all__ = [
	"EXPIRY_SKEW",
	"MAX_TOKEN_REPLY_BYTES",
	"OAUTH2_CONFIG_KEYS",
	"OAuth2Auth",
	"OAuth2Config",
	"authorization_url",
	"carries_token",
	"either_keys",
	"holding",
	"make_auth",
	"oauth2_config",
	"oauth_guard",
	"render_value",
	"revoked",
	"token_reply",
]

log = logging.getLogger("openmolt")

_TOKEN_KEYS = frozenset({"accessToken", "refreshToken", "expiryDate"})
_EXPIRY_KEYS = ("expiryDate", "expiry_date")

EXPIRY_SKEW = 60.0
"""Seconds before its expiry at which an OAuth2 token is refreshed."""

MAX_TOKEN_REPLY_BYTES = 1024 * 1024
"""The largest token-endpoint reply read (decoded); a larger or endless one fails the refresh."""


class OAuth2Config(Options):
	"""The config keys an oauth2 credential reads, each in camelCase or snake_case.

	Other keys of the config (a shop domain, an API key sent next to the token) are kept as they
	are. A key given in both spellings with different values is refused.

	Attributes:
		access_token: The current access token (``accessToken``).
		refresh_token: The refresh token (``refreshToken``).
		expiry_date: When the access token expires: ISO 8601, epoch seconds or milliseconds
			(``expiryDate``).
		client_id: The OAuth client id (``clientId``).
		client_secret: The client secret (``clientSecret``); none for a public client.
		token_url: The token URL, when the credential's setup reads it from the config.
		auth_url: The authorization URL, likewise.
	"""

	model_config: ClassVar[ConfigDict] = options_config(extra="allow")

	access_token: str | None = Field(default=None, repr=False)
	refresh_token: str | None = Field(default=None, repr=False)
	expiry_date: str | int | float | None = None
	client_id: str | None = None
	client_secret: str | None = Field(default=None, repr=False)
	token_url: str | None = None
	auth_url: str | None = None


OAUTH2_CONFIG_KEYS: Mapping[str, str] = {
	str(field.alias): name for name, field in OAuth2Config.model_fields.items()
}
"""Every OAuth2 credential config key: its camelCase name (the one templates read) to snake_case
(from `OAuth2Config`'s alias generator)."""

_CONFIG_REF = re.compile(r"config\.([A-Za-z_$][\w$]*)")


def _value(template: str | None, config: Mapping[str, Any], key: str) -> str:
	"""Render a credential field over ``config``; without a template, read ``config[key]``.

	Surrounding whitespace is dropped: a key pasted with a trailing space or newline is the key.
	"""
	if template is None:
		raw = config.get(key)
		return "" if raw is None else str(raw).strip()
	stripped = {k: v.strip() if isinstance(v, str) else v for k, v in config.items()}
	rendered = render_string(template, {"config": stripped, "input": {}})
	return "" if rendered is MISSING or rendered is None else str(rendered).strip()


def _quiet(template: str | None, config: Mapping[str, Any], key: str) -> str:
	"""`_value` for redaction: never raises (a broken template has no secret to hide)."""
	try:
		return _value(template, config, key)
	except Exception:
		return ""


_EITHER = re.compile(r"config\.[\w$]+\s*\|\s*default\s*:\s*config\.")


def either_keys(template: str | None) -> list[str]:
	"""The keys of a ``{{ config.a | default: config.b }}`` template, any one of which will do.

	Empty for any other template (whose keys are all needed). Slack's bearer header reads
	``token``, else ``botToken``: either ``OPENMOLT_SLACK_TOKEN`` or ``OPENMOLT_SLACK_BOT_TOKEN``.

	Args:
		template: A credential field's template.
	"""
	if not template or not _EITHER.search(template):
		return []
	return list(dict.fromkeys(_CONFIG_REF.findall(template)))


def render_value(template: str, config: Mapping[str, Any], *, quiet: bool = False) -> str:
	"""A credential value: a Liquid template over ``config``, rendered and stripped.

	For the auths integrations register (`openmolt_core.integrations.extensions.AuthFactory`).

	Args:
		template: The template (``{{ config.accessKeyId }}``).
		config: The agent's credential config.
		quiet: Return ``""`` instead of raising (for redaction: a broken template hides nothing).

	Raises:
		ToolError: The template does not render (unless ``quiet``).
	"""
	return _quiet(template, config, "") if quiet else _value(template, config, "")


def _require(template: str | None, config: Mapping[str, Any], iid: str, what: str) -> None:
	from openmolt_core._envvars import blank

	missing = [k for k in _CONFIG_REF.findall(template or "") if blank(config.get(k))]
	either = either_keys(template)
	if either and len(missing) < len(either):
		return  # ``a | default: b``: one of them is set (Slack's token or botToken)
	if missing:
		raise ToolError(
			f"{iid}: the credential's {what} needs config {sorted(set(missing))}, which is not "
			"set; the user must configure the integration"
		)


def _headers(
	credential: BearerCredential | CustomCredential | OAuth2Credential,
	config: Mapping[str, Any],
	iid: str,
) -> dict[str, str]:
	out = {}
	for name, template in credential.headers.items():
		_require(template, config, iid, f"header {name!r}")
		value = _value(template, config, name)
		if not value:
			continue
		try:
			out[name] = check_header(name, value)
		except ToolError as exc:
			raise ToolError(f"{iid}: the credential's {exc.message}") from None
	return out


class _StaticAuth(httpx.Auth):
	"""bearer and custom: headers and query parameters rendered from the config."""

	def __init__(
		self, credential: BearerCredential | CustomCredential, config: Mapping[str, Any], iid: str
	) -> None:
		self.credential = credential
		self.config = dict(config)
		self.iid = iid

	def _queries(self) -> dict[str, str]:
		return getattr(self.credential, "query_params", {})

	def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
		request.headers.update(_headers(self.credential, self.config, self.iid))
		params = {}
		for name, template in self._queries().items():
			_require(template, self.config, self.iid, f"query parameter {name!r}")
			params[name] = _value(template, self.config, name)
		if params:
			request.url = set_query(request.url, [(k, v) for k, v in params.items() if v])
		yield request

	def secrets(self) -> set[str]:
		"""The rendered secret values, for redaction."""
		fields = [*self.credential.headers.items(), *self._queries().items()]
		out: set[str] = set()
		for name, template in fields:
			value = _quiet(template, self.config, name).strip()
			if value == _quiet(template, {}, name).strip():
				continue  # nothing from the config in it (``Bearer `` with no key)
			_, _, rest = value.rpartition(" ")
			if len(rest) >= 6:
				out |= {value, rest}
		return out


class _BasicAuth(httpx.Auth):
	def __init__(self, credential: BasicCredential, config: Mapping[str, Any], iid: str) -> None:
		self.credential = credential
		self.config = dict(config)
		self.iid = iid

	def _pair(self) -> tuple[str, str]:
		user = _value(self.credential.username, self.config, "username")
		password = _value(self.credential.password, self.config, "password")
		if not user:
			raise ToolError(f"{self.iid}: the basic-auth username is empty; set the config")
		return user, password

	def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
		user, password = self._pair()
		token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
		request.headers["Authorization"] = f"Basic {token}"
		yield request

	def secrets(self) -> set[str]:
		"""The rendered secret values, for redaction; never raises (the check is in auth_flow)."""
		user = _quiet(self.credential.username, self.config, "username")
		password = _quiet(self.credential.password, self.config, "password")
		token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
		out = {token} if len(token) >= 6 else set()
		if password.strip():  # a short one too: masked where it stands alone
			out.add(password)
		return out


def oauth2_config(config: Mapping[str, Any]) -> dict[str, Any]:
	"""``config`` with each `OAuth2Config` key also under its camelCase name.

	A key given only in snake_case (``refresh_token``) is copied to its camelCase name
	(``refreshToken``), which the credential templates and the engine read; the user's own
	spelling stays too. Other keys are left as they are.

	Args:
		config: The agent's credential config.

	Raises:
		ConfigurationError: A key is given in both spellings with different values, or has a
			value of the wrong type.
	"""
	try:
		parsed = OAuth2Config.model_validate(config)
	except ValidationError as exc:
		problems = "; ".join(
			f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors()
		)
		raise ConfigurationError(f"the oauth2 credential config: {problems}") from None
	known = {
		camel: getattr(parsed, name)
		for camel, name in OAUTH2_CONFIG_KEYS.items()
		if getattr(parsed, name) not in (None, "")
	}
	return {**config, **known}


def _expiry(value: Any) -> float | None:
	"""An expiry as a Unix timestamp: ISO 8601 text, epoch seconds, or epoch milliseconds."""
	if value is None or value == "":
		return None
	if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
		number = float(value)
		return number / 1000 if number > 1e11 else number
	try:
		when = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
	except ValueError:
		return None
	if when.tzinfo is None:
		when = when.replace(tzinfo=dt.UTC)
	return when.timestamp()


def _expires_at(seconds: Any) -> str | None:
	"""When a token that lives ``seconds`` (a token reply's ``expires_in``) expires, ISO 8601.

	None when ``seconds`` is no usable number (text that is none, a boolean, NaN, or so large
	it overflows): the token is then taken as not expiring until a 401 says otherwise, and the
	reply's tokens are kept (a refresh token it rotated is never lost to a bad field).
	"""
	if isinstance(seconds, bool) or not isinstance(seconds, (int, float, str)):
		return None
	try:
		when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=float(seconds))
	except (ValueError, OverflowError):
		return None
	return when.isoformat().replace("+00:00", "Z")


_REASON_CHARS = 200
"""The most characters of a token endpoint's reason an error quotes (masked before it is cut)."""


def _reason(reason: object, *secrets: str) -> str:
	"""A token endpoint's reason for a refusal as an error quotes it: masked, then cut."""
	from openmolt_core._support.masking import masked_excerpt

	return masked_excerpt(str(reason), _REASON_CHARS, secrets, more="...")


def carries_token(credential: OAuth2Credential) -> bool:
	"""Whether an oauth2 credential's own ``headers`` send the access token.

	A header whose template reads ``config.accessToken`` (Shopify's
	``X-Shopify-Access-Token: {{ config.accessToken }}``) carries the token, so `OAuth2Auth` adds
	no ``Authorization: Bearer`` header; otherwise it does.
	"""
	return any(
		ref in ("accessToken", OAUTH2_CONFIG_KEYS["accessToken"])
		for template in credential.headers.values()
		for ref in _CONFIG_REF.findall(template)
	)


class OAuth2Auth(httpx.Auth):
	"""OAuth2 access tokens with refresh, one refresh at a time.

	The token goes in ``Authorization: Bearer <token>``, unless the credential's ``headers``
	carry it themselves (`carries_token`). Token requests send ``Accept: application/json`` (GitHub
	answers form-encoded without it).

	Args:
		credential: The oauth2 credential setup.
		config: The agent's config (``accessToken``, ``expiryDate``, ``refreshToken``...; each
			key of `OAUTH2_CONFIG_KEYS` also in snake_case).
		iid: The integration id, for messages.
		on_token_refresh: Called (sync or async) with the full new config after a refresh.
		http: Getter for the shared client used to call the token URL.
		client_id_param: The token request's name for the client id: TikTok registers an
			``oauth2`` auth with ``client_key`` (``functools.partial(OAuth2Auth,
			client_id_param="client_key")`` in its ``auths``).
		guard: The SSRF guard the token request goes through (integrations whose API setup
			sets ``guard_every_request``, whose token URL a document chose); None: not guarded.
	"""

	def __init__(
		self,
		credential: OAuth2Credential,
		config: Mapping[str, Any],
		iid: str,
		*,
		on_token_refresh: Callable[[dict[str, Any]], Any] | None,
		http: Callable[[], httpx.AsyncClient],
		client_id_param: str = "client_id",
		guard: SsrfGuard | None = None,
	) -> None:
		self.client_id_param = client_id_param
		self.guard = guard
		self.credential = credential
		self.config = oauth2_config(config)
		self.iid = iid
		self.on_token_refresh = on_token_refresh
		self._listeners: list[Callable[[dict[str, Any]], Any]] = []
		self.http = http
		self.refreshes = 0
		self._lock = anyio.Lock()
		self._seen: set[str] = set()
		self._store: tuple[CredentialStore, str, str | None, frozenset[str]] | None = None

	def use_store(
		self,
		store: CredentialStore,
		integration: str,
		user: str | None = None,
		*,
		keys: frozenset[str] = frozenset(_TOKEN_KEYS),
	) -> None:
		"""Refresh through a credential store: one refresh at a time across processes.

		Before refreshing, the auth takes the store's lock for this credential and reads it
		again: a token another process saved meanwhile is used instead of refreshing (and a
		rotated refresh token is not spent twice). A new token is saved back under the lock.

		Args:
			store: The store the config came from (`openmolt_core.credstore`).
			integration: The id it is stored under.
			user: The end user; None: the operator.
			keys: The token keys (camelCase) that came from the store, which it may replace;
				a key the application gave explicitly is kept.
		"""
		camel = {snake: camel for camel, snake in OAUTH2_CONFIG_KEYS.items()}
		wanted = frozenset(camel.get(k, k) for k in keys) & _TOKEN_KEYS
		self._store = (store, integration, user, wanted)

	@property
	def stored(self) -> bool:
		"""Whether a credential store keeps this credential's tokens (`use_store`)."""
		return self._store is not None

	def add_refresh_listener(self, callback: Callable[[dict[str, Any]], Any] | None) -> None:
		"""Also call ``callback`` after each refresh (another agent sharing this credential).

		Args:
			callback: Called (sync or async) with the full new config; None or one already
				registered is ignored.
		"""
		if callback is None or callback is self.on_token_refresh:
			return
		if all(callback is not known for known in self._listeners):
			self._listeners.append(callback)

	def _token_now(self) -> str:
		return str(self.config.get("accessToken") or "")

	def _fresh(self, token: str, stale: str | None) -> bool:
		if not token or token == stale:
			return False
		expiry = _expiry(self.config.get("expiryDate"))
		return expiry is None or expiry - EXPIRY_SKEW > dt.datetime.now(dt.UTC).timestamp()

	async def token(self, stale: str | None = None) -> str:
		"""A valid access token, refreshing first when needed.

		Args:
			stale: A token the service just refused (401): refresh unless it was replaced.

		Raises:
			ToolError: The refresh failed; the message says what to do.
		"""
		token = self._token_now()
		if self._fresh(token, stale):
			return token
		async with self._lock:
			token = self._token_now()
			if self._fresh(token, stale):
				return token
			if self._store is None:
				await self._refresh()
				return self._token_now()
			return await self._refresh_shared(stale)

	async def _refresh_shared(self, stale: str | None) -> str:
		"""`_refresh` under the store's cross-process lock, adopting what another process saved.

		The process's own lock of the credential (`_gate`) is taken first: each call of a user's
		run makes its own auth, so two runs of one user in this process are kept apart there,
		whatever the store's lock does within one process (a dict's store has none).
		"""
		assert self._store is not None
		store, integration, user, _ = self._store
		gate = _gate(store, integration, user)
		# Polled, not waited on in a worker thread: a burst of calls waiting here holds no
		# thread the holder needs (to take the store's lock, read and save), and a call
		# cancelled while waiting has taken nothing.
		delay = 0.005
		while not gate.lock.acquire(blocking=False):
			await anyio.sleep(delay)
			delay = min(delay * 2, 0.05)
		try:
			return await self._refresh_stored(stale)
		finally:
			gate.lock.release()

	async def _refresh_stored(self, stale: str | None) -> str:
		"""`_refresh_shared` once this process's lock of the credential is held."""
		assert self._store is not None
		store, integration, user, keys = self._store
		lock = store.locked(integration, user)
		try:
			with anyio.CancelScope(shield=True):  # a lock taken is always released below
				await anyio.to_thread.run_sync(lock.__enter__)
		except Exception as exc:  # a store that cannot lock: refresh in this process alone
			log.warning("%s: the credential store's lock failed (%s)", self.iid, type(exc).__name__)
			await self._refresh()
			return self._token_now()
		try:
			try:
				found = await anyio.to_thread.run_sync(store.load, integration, user)
			except ConfigurationError as exc:  # the store's own words (the key store's file)
				raise ToolError(
					f"{self.iid}: the credential store could not be read to refresh the token: "
					f"{exc}"
				) from None
			except Exception as exc:
				raise ToolError(
					f"{self.iid}: the credential store could not be read to refresh the token "
					f"({type(exc).__name__}); check the store's key, or run `openmolt auth "
					f"{integration}` again"
				) from None
			if found is None and keys:
				# The sign-in these tokens came from was forgotten meanwhile (`openmolt auth
				# revoke`, an application disconnecting its user): refreshing would spend the
				# grant and save it back, connecting the account again.
				raise ToolError(
					f"{self.iid}: the stored sign-in is no longer there (it was disconnected); "
					f"reconnect with {self._reconnect_command()}",
					details={"error": "disconnected"},
				)
			stored = found or {}
			adopted = {}
			for key in keys:  # camelCase, or the snake_case spelling a store may hold
				value = stored.get(key) or stored.get(OAUTH2_CONFIG_KEYS[key])
				if value not in (None, ""):
					adopted[key] = str(value)
			if adopted and any(self.config.get(k) != v for k, v in adopted.items()):
				self.config = {**self.config, **adopted}
				if "expiryDate" in keys and "expiryDate" not in adopted:
					for key in _EXPIRY_KEYS:  # the stored token has none: ours is the old one's
						self.config.pop(key, None)
				for camel, value in adopted.items():  # the user's spelling too
					if OAUTH2_CONFIG_KEYS[camel] in self.config:
						self.config[OAUTH2_CONFIG_KEYS[camel]] = value
				self._seen |= {v for k, v in adopted.items() if k != "expiryDate"}
				token = self._token_now()
				if self._fresh(token, stale):
					# Another process refreshed while this one waited: its token, and the news.
					await self._notify(dict(self.config))
					return token
			# The service may rotate the refresh token as soon as it has the request: a run
			# cancelled meanwhile still saves what came back, or the next refresh is refused.
			with anyio.CancelScope(shield=True):
				try:
					await self._exchange()
				except ToolError as exc:
					if "refreshToken" in keys and revoked(exc):
						await self._forget_access_token(stored)
					raise
				saved = {
					k: self.config[k] for k in _TOKEN_KEYS if self.config.get(k) not in (None, "")
				}
				kept = dict(stored)
				if "expiryDate" not in saved:  # the new token has none: the old one's goes
					for key in _EXPIRY_KEYS:
						kept.pop(key, None)
				try:
					await anyio.to_thread.run_sync(store.save, integration, {**kept, **saved}, user)
				except Exception as exc:  # the token works; only the next process refreshes again
					log.warning(
						"%s: the new token could not be saved to the credential store (%s)",
						self.iid,
						type(exc).__name__,
					)
			await self._notify(dict(self.config))
			return self._token_now()
		finally:
			with anyio.CancelScope(shield=True):
				await anyio.to_thread.run_sync(lock.__exit__, None, None, None)

	async def _forget_access_token(self, stored: Mapping[str, Any]) -> None:
		"""Drop the stored access token of a revoked grant: the next call refreshes, and is told.

		Kept, it would read as fresh until it expires: every call would send it and be refused.
		"""
		assert self._store is not None
		store, integration, user, _ = self._store
		dead = ("accessToken", OAUTH2_CONFIG_KEYS["accessToken"])
		if not any(key in stored for key in dead):
			return
		kept = {k: v for k, v in stored.items() if k not in dead}
		try:
			await anyio.to_thread.run_sync(store.save, integration, kept, user)
		except Exception as exc:
			log.warning(
				"%s: the revoked token could not be dropped from the credential store (%s)",
				self.iid,
				type(exc).__name__,
			)

	async def _refresh(self) -> None:
		await self._exchange()
		await self._notify(dict(self.config))

	async def _exchange(self) -> None:
		"""Spend the refresh token for a new access token (``self.config``), telling nobody yet."""
		cfg = self.config
		refresh = _value(self.credential.refresh_token, cfg, "refreshToken")
		token_url = _value(self.credential.token_url, cfg, "tokenUrl")
		if not refresh or not token_url:
			raise ToolError(
				f"{self.iid}: the OAuth2 access token is missing or expired and no refresh token "
				f"(or token URL) is configured; {self._authorize_again()}"
			)
		client_id = _value(self.credential.client_id, cfg, "clientId")
		secret = _value(self.credential.client_secret, cfg, "clientSecret")
		self._seen |= {v for v in (refresh, secret) if v}
		form = {"grant_type": "refresh_token", "refresh_token": refresh}
		headers = {"Accept": "application/json"}
		if self.credential.token_auth == "basic" and secret:
			pair = base64.b64encode(f"{client_id}:{secret}".encode()).decode("ascii")
			headers["Authorization"] = f"Basic {pair}"
		else:
			# A public client (no secret) identifies itself in the body, whatever token_auth says.
			if client_id:
				form[self.client_id_param] = client_id
			if secret:
				form["client_secret"] = secret
		try:
			client = self.http()
			if self.credential.token_format == "json":
				request = client.build_request("POST", token_url, json=form, headers=headers)
			else:
				request = client.build_request("POST", token_url, data=form, headers=headers)
			response, body = await token_reply(client, request, guard=self.guard)
		except (httpx.HTTPError, ValueError) as exc:
			raise ToolError(
				f"{self.iid}: the OAuth2 token refresh failed ({type(exc).__name__})",
				retryable=True,
			) from None
		except ToolError as exc:  # the reply is over the cap, or does not decompress
			raise ToolError(f"{self.iid}: the OAuth2 token refresh failed: {exc.message}") from None
		access = body.get("access_token") if isinstance(body, dict) else None
		if not response.is_success or not access:
			reason = (
				body.get("error_description") or body.get("error")
				if isinstance(body, dict)
				else None
			)
			code = body.get("error") if isinstance(body, dict) else None
			if isinstance(code, str) and reason not in (None, code):
				reason = f"{code}: {reason}"  # the code says what to do, the words why
			if code == "invalid_grant":  # revoked, expired, or a rotated token spent elsewhere
				fix = f"the grant is revoked or expired: {self._authorize_again()}"
			else:
				fix = "the user must authorize again"
			raise ToolError(
				f"{self.iid}: the OAuth2 token refresh was refused ({response.status_code}: "
				f"{_reason(reason or 'no access_token', refresh, secret)}); {fix}",
				status_code=response.status_code,
				# The OAuth error code (RFC 6749 section 5.2): invalid_grant is a revoked grant.
				details={"error": code} if isinstance(code, str) else None,
			)
		self.refreshes += 1
		updates = {"accessToken": str(access)}
		self._seen.add(str(access))
		expires = _expires_at(body.get("expires_in"))
		if expires is not None:
			updates["expiryDate"] = expires
		if body.get("refresh_token"):
			updates["refreshToken"] = str(body["refresh_token"])
			self._seen.add(updates["refreshToken"])
		new = {**cfg, **updates}
		for camel, value in updates.items():
			if OAUTH2_CONFIG_KEYS[camel] in new:  # keep the user's spelling current as well
				new[OAUTH2_CONFIG_KEYS[camel]] = value
		if expires is None:
			# The old token's expiry is not the new one's: kept, the new token read as expired
			# and every call refreshed again. Valid until a 401 says otherwise.
			for key in _EXPIRY_KEYS:
				new.pop(key, None)
		self.config = new

	def _reconnect_command(self) -> str:
		"""The command that signs this credential in again (``openmolt auth gmail --user alice``)."""
		import shlex

		integration, user = (self._store[1], self._store[2]) if self._store else (self.iid, None)
		who = f" --user {shlex.quote(user)}" if user is not None else ""
		return f"`openmolt auth {shlex.quote(integration)}{who}`"

	def _authorize_again(self) -> str:
		"""What to do when the grant is gone: the user signs in again, and how."""
		if self._store is not None:  # its tokens come from the store: a new sign-in replaces them
			return f"the user must authorize again: reconnect with {self._reconnect_command()}"
		return (
			f"the user must authorize again (`openmolt auth {self.iid}` signs in) and the config "
			"be given the new refresh token, or none"
		)

	async def _notify(self, new: dict[str, Any]) -> None:
		"""Give the new config to ``on_token_refresh`` and every listener."""
		callbacks = [self.on_token_refresh, *self._listeners]
		for callback in (c for c in callbacks if c is not None):
			try:
				await call_app(callback, dict(new))  # sync: in a worker thread
			except Exception:
				log.warning("%s: on_token_refresh failed; the new token is used anyway", self.iid)

	def _apply(self, request: httpx.Request, token: str) -> None:
		request.headers.update(_headers(self.credential, self.config, self.iid))
		if not carries_token(self.credential):
			request.headers["Authorization"] = f"Bearer {token}"

	def sync_auth_flow(
		self, request: httpx.Request
	) -> Generator[httpx.Request, httpx.Response, None]:
		"""Not supported: OpenMolt sends with an async client."""
		raise RuntimeError("OAuth2Auth needs an httpx.AsyncClient")
		yield request  # pragma: no cover  # makes this a generator

	async def async_auth_flow(
		self, request: httpx.Request
	) -> AsyncGenerator[httpx.Request, httpx.Response]:
		"""Send with the current token; on a 401, refresh once and send again."""
		token = await self.token()
		self._apply(request, token)
		response = yield request
		if response.status_code == 401:
			token = await self.token(stale=token)
			self._apply(request, token)
			yield request

	def secrets(self) -> set[str]:
		"""Every token and secret this credential has held, for redaction."""
		return {s for s in {*self._seen, self._token_now()} if len(s) >= 6}


class _Gate:
	"""This process's lock of one stored credential (`OAuth2Auth._refresh_shared`)."""

	__slots__ = ("__weakref__", "lock")

	def __init__(self) -> None:
		self.lock = threading.Lock()


_GATES: weakref.WeakValueDictionary[tuple[int, str, str | None], _Gate] = (
	weakref.WeakValueDictionary()
)
_GATES_LOCK = threading.Lock()


def _gate(store: object, integration: str, user: str | None) -> _Gate:
	"""The process's lock of (store, integration, user): kept while an auth holds or waits on it.

	A threading lock, so the runs of every event loop of the process (``run_sync`` in threads)
	share it.
	"""
	key = (id(store), integration, user)
	with _GATES_LOCK:
		found = _GATES.get(key)
		if found is None:
			found = _GATES[key] = _Gate()
		return found


@contextlib.contextmanager
def holding(store: CredentialStore, integration: str, user: str | None = None) -> Iterator[None]:
	"""Hold a stored credential as a refresh does: this process's lock of it, then the store's.

	For code that replaces or forgets a sign-in (`openmolt_core.accounts.save_sign_in`): a
	refresh going on ends first, and one that starts later reads what was written. Blocking:
	call it from a worker thread in async code.

	Args:
		store: The credential store.
		integration: The integration id.
		user: The end user; None: the operator.
	"""
	gate = _gate(store, integration, user)  # kept while held: the registry holds it weakly
	with gate.lock, store.locked(integration, user):
		yield


def revoked(error: ToolError) -> bool:
	"""Whether a refused refresh says the grant is gone (``invalid_grant``, RFC 6749 5.2).

	Args:
		error: The refresh's error (its ``details`` hold the token endpoint's answer).
	"""
	return isinstance(error.details, dict) and error.details.get("error") == "invalid_grant"


def oauth_guard(integration: Integration, config: Mapping[str, Any]) -> SsrfGuard | None:
	"""The SSRF guard of an integration's OAuth2 requests (code exchange, device flow, refresh).

	An integration whose API setup sets ``guard_every_request`` (an OpenAPI import: a document
	chose its URLs, its token and device URLs among them) has every OAuth2 request checked as
	its calls are, allowing the internal hosts its setup and its config allow
	(``allowInternalHosts``); a built-in integration's token URL is its author's (None).

	Args:
		integration: The integration.
		config: Its config (the operator's or the agent's).
	"""
	setup = integration.api_setup
	if not setup.guard_every_request:
		return None
	allowed = internal_hosts(EngineConfig.of(config).allow_internal_hosts)
	return SsrfGuard(internal=internal_hosts(setup.allow_internal_hosts) + allowed)


async def token_reply(
	client: httpx.AsyncClient, request: httpx.Request, *, guard: SsrfGuard | None
) -> tuple[httpx.Response, Any]:
	"""Send a request to an OAuth2 endpoint and read its JSON reply, at most `MAX_TOKEN_REPLY_BYTES`.

	Every OAuth2 request goes through here, so none can skip the guard: the caller names it
	(`oauth_guard`), or says None.

	Args:
		client: The shared client.
		request: The token (or device authorization) request.
		guard: The SSRF guard the request goes through first (`oauth_guard`); None: none.

	Returns:
		The response (closed) and its decoded JSON body.

	Raises:
		ToolError: The reply is larger than `MAX_TOKEN_REPLY_BYTES` or does not decompress.
		httpx.HTTPError: The request failed.
		ValueError: The reply is not JSON.
	"""
	if guard is not None:
		request = await guard(request)
	request.headers["Accept-Encoding"] = ACCEPT_ENCODING
	response = await client.send(request, stream=True)
	return response, json.loads(await read_body(response, MAX_TOKEN_REPLY_BYTES))


def make_auth(
	integration: Integration,
	credential: Credential,
	config: Mapping[str, Any],
	*,
	on_token_refresh: Callable[[dict[str, Any]], Any] | None,
	http: Callable[[], httpx.AsyncClient],
) -> httpx.Auth | None:
	"""Build the ``httpx.Auth`` for an agent's credential.

	The integration's own ``auths`` come first: a type it registers (``aws_sigv4`` in S3), or a
	built-in type it builds its own way (TikTok's ``oauth2``). Then the built-in types.

	Args:
		integration: The integration (its id names errors; its ``auths``).
		credential: The credential setup the agent chose.
		config: The merged config (instance config, then the agent's).
		on_token_refresh: OAuth2 only: called with the new config after each refresh.
		http: Getter for the shared client (token refreshes).

	Raises:
		IntegrationError: The type is neither built in nor registered, or the auth needs a
			library that is not installed.
		ConfigurationError: The config does not fit the credential (an oauth2 key given in both
			spellings with different values).
	"""
	from openmolt_core.integrations.model import (
		BasicCredential,
		BearerCredential,
		CustomCredential,
		OAuth2Credential,
	)

	iid = integration.id or integration.name
	factory = integration.auths.get(credential.type)
	if factory is not None:
		if isinstance(credential, OAuth2Credential):
			config = oauth2_config(config)
		auth: httpx.Auth = factory(
			credential, config, iid, on_token_refresh=on_token_refresh, http=http
		)
		return auth
	if isinstance(credential, (BearerCredential, CustomCredential)):
		return _StaticAuth(credential, config, iid)
	if isinstance(credential, BasicCredential):
		return _BasicAuth(credential, config, iid)
	if isinstance(credential, OAuth2Credential):
		guard = oauth_guard(integration, config)
		return OAuth2Auth(
			credential, config, iid, on_token_refresh=on_token_refresh, http=http, guard=guard
		)
	raise IntegrationError(
		f"unknown credential type {credential.type!r}; register it in the integration's auths",
		integration=iid,
	)


_UNSEEN = r"\s\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_WEB_URL = re.compile(rf"https?://[^{_UNSEEN}/?#@]+(?:[/?#][^{_UNSEEN}]*)?", re.IGNORECASE)
"""An absolute http(s) URL with a host, and no user info, space, control character or
bidirectional override (a browser opens it; a terminal prints it)."""


def authorization_url(
	credential: OAuth2Credential,
	config: Mapping[str, Any],
	redirect_uri: str,
	state: str,
	*,
	scope_separator: str | None = None,
	code_challenge: str | None = None,
	client_id_param: str | None = None,
	scopes: Sequence[str] | None = None,
) -> str:
	"""The URL where a user authorizes the app, for docs and the CLI (authorization-code flow).

	Args:
		credential: An oauth2 credential setup (``auth_url``, ``client_id``, ``scopes``...).
		config: Config the URL and client id are rendered over (``clientId``, a shop domain...;
			the `OAUTH2_CONFIG_KEYS` also in snake_case).
		redirect_uri: Where the service sends the user back with ``code``.
		state: An unguessable value to check on return.
		scope_separator: How scopes are joined; None uses the credential's ``scope_separator``
			(``" "`` unless the integration sets ``,``, as Slack and TikTok do).
		code_challenge: A PKCE S256 challenge (`openmolt_core.integrations.oauth.pkce_pair`).
		client_id_param: The parameter that carries the client id; None: the credential's
			``client_id_param`` (``client_key`` for TikTok).
		scopes: The OAuth scopes to ask for; None: all of the credential's ``scopes``.

	Raises:
		IntegrationError: The credential is not oauth2 or has no ``auth_url``.
		ConfigurationError: The ``auth_url`` is not an absolute http(s) URL, holds a space or
			a control character, or has a fragment.
	"""
	if credential.type != "oauth2" or not credential.auth_url:
		raise IntegrationError("needs an oauth2 credential with auth_url", integration="oauth2")
	config = oauth2_config(config)
	# The integration's extra parameters first: none of them may replace the flow's own, and
	# one given as None drops a parameter the flow would send (Shopify takes no response_type).
	extra = credential.auth_params
	params: dict[str, str | None] = {k: v for k, v in extra.items() if v is not None}
	params.update(
		{
			"response_type": "code",
			client_id_param or credential.client_id_param: _value(
				credential.client_id, config, "clientId"
			),
			"redirect_uri": redirect_uri,
			"state": state,
		}
	)
	for key in [k for k, v in extra.items() if v is None]:
		params.pop(key, None)
	wanted = list(credential.scopes if scopes is None else scopes)
	if wanted:
		separator = credential.scope_separator if scope_separator is None else scope_separator
		params["scope"] = separator.join(wanted)
	if code_challenge:
		params["code_challenge"] = code_challenge
		params["code_challenge_method"] = "S256"
	else:
		params.pop("code_challenge_method", None)
	sent = {k: v for k, v in params.items() if v is not None}
	base = _value(credential.auth_url, config, "authUrl")
	if not _WEB_URL.fullmatch(base):
		# A browser is sent there: a file:, javascript: or custom scheme would open something
		# else, and a control character would be obeyed by the terminal that prints it.
		raise ConfigurationError(
			f"the OAuth2 authorization URL {base[:120]!r} is not an absolute http(s) URL "
			"without spaces or control characters; set the credential's auth_url (or the "
			"config's authUrl) to the service's https://... address"
		)
	if "#" in base:
		raise ConfigurationError(
			f"the OAuth2 authorization URL {base.partition('?')[0][:120]!r} has a fragment "
			"('#...'), which the flow's parameters would be written into; an authorization "
			"endpoint has none (RFC 6749, 3.1): remove it from the credential's auth_url (or "
			"the config's authUrl)"
		)
	# RFC 6749 3.1: the endpoint's own query is retained, the flow's parameters added after it.
	head, _, query = base.partition("?")
	joined = "&".join(part for part in (query, urlencode(sent, quote_via=quote)) if part)
	return f"{head}?{joined}"
