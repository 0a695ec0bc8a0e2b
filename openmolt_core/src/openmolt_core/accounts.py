"""End users' accounts: credentials per user, and runs that park until a user connects one.

An agent names the integrations that act for each run's end user
(``integrations=[{"integration": "gmail", "account": "user"}]``, the same key in an agent
file); the others use the operator's one account. ``agent.run(input, user="alice")`` then reads
alice's credential from the credential store (`openmolt_core.credstore`, keyed by
(integration, user)) for each call, never caching it on the agent, so runs of two users can
interleave on one agent. Alice's values join ``om.secrets`` and are masked like every secret.

When alice has not connected gmail, has not granted a scope a tool needs, or gmail revoked her
refresh token (``invalid_grant``), the call does not fail: the run parks with status
``authorization_required`` and an authorization request (`authorization_requests`) carrying the
consent URL. The application (or ``openmolt serve``'s chat channel) shows it to her; the
service sends her browser back to the redirect URI, where ``await om.accounts.complete(url)``
(served as ``/auth/callback`` by ``openmolt serve``) checks the ``state``, exchanges the code and
stores her tokens; ``agent.resume(state)`` goes on, in any process, durable runs too.

The ``state`` is signed (HMAC-SHA256 with the instance's key, compared in constant time) and
names the agent, the integration, the user, the scopes and the run, and expires: an answer
cannot be replayed for another user, and no server-side record is needed between the park and
the callback. Instances (and processes) that share the key accept each other's signatures, so
the agent is checked too: an instance completes a state only if one of its agents of that name
binds that integration per user (`for_binding`); another instance's state is refused with
`ForeignConsentError` before anything is used up, and a server holding several instances hands
it to the next one. A state made outside a run (``consent`` called without ``agent``) names no
agent and is completed by any instance whose key signed it. It is single-use: a state that connected an account is refused again (remembered in
this process until it expires, and in the user's stored record, `CONSENT`, until it expires, so
another process or a restart refuses it too, whichever consent came after), even with a fresh code the service would give for it. The PKCE verifier is
derived from the state with the same key, so it never leaves the server. Processes that share
runs share the key: ``OpenMolt(accounts={"key": ...})`` or ``OPENMOLT_AUTH_KEY``.

The state says whom the account is for, not who signs in: whoever finishes the link is connected
as the user it names, so a link forwarded to someone else would give their account to the user
who asked. The one who finishes it is checked. An application that knows who is signed in in the
browser (its own session) passes it: ``complete(url, user=...)`` refuses another user before the
code is exchanged, and spends the link. A link sent in a chat (the run of a chat trigger:
``"c"`` in the state) is confirmed in that chat: `hold` exchanges the code but keeps the tokens
aside until the state expires, and the callback's page shows a one-time code; the user sends
it to the chat, and `confirm` stores the tokens only when the chat user who sent it is the user
the link was made for (anyone else's drops them). `complete` refuses such a link.

A callback with no sessions at all (``openmolt ui``'s viewer) binds each link to the browser
that started it instead: ``consent(..., browser=secret)`` puts the secret's keyed digest in the
state, the browser keeps the secret in a cookie (`Accounts.browser_cookie` names it), and
``complete(url, browser=cookie)`` refuses the link in any other browser, and refuses a link
bound to none (a run's own, a recovered durable run's), before anything is used up. A bound
link reaching a callback that binds none is refused too (`hold` included).

The tokens held aside wait in the credential store, where users' tokens live, so the process
whose chat gets the code need not be the one the browser came back to, and a restart keeps
them: one record per sign-in under the reserved integration `HELD` (its user is a keyed digest
of the code, never the code), and a chat user's wrong codes under `TRIES`, so a guesser's tries
count in every process. Both are read and changed under one lock of the store
(`CredentialStore.locked`): a code is taken once, even sent twice at once to two processes.
Expired ones are dropped when touched (a new sign-in sweeps them).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import hmac
import json
import logging
import os
import re
import secrets as random_bytes  # `secrets` names the instance's secret set below
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import anyio

from openmolt_core._binding import secret_values
from openmolt_core._park import CAPABILITY
from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.events import Event
from openmolt_core.secrets import register_key

if TYPE_CHECKING:
	import httpx

	from openmolt_core._binding import BoundTool
	from openmolt_core.credstore import CredentialStore
	from openmolt_core.integrations.model import Credential, Integration, OAuth2Credential
	from openmolt_core.result import RunState
	from openmolt_core.secrets import SecretSet
	from openmolt_core.tools import ToolContext

__all__ = [
	"CALLBACK_PATH",
	"CAPABILITY_NAME",
	"HELD",
	"KEY_VARIABLE",
	"OPTIONS",
	"REDIRECT_VARIABLE",
	"SPENT",
	"TRIES",
	"Accounts",
	"AuthorizationRequestEvent",
	"Connected",
	"ForeignConsentError",
	"Held",
	"UserAccounts",
	"authorization_requests",
	"check_options",
	"forget_sign_in",
	"instance_accounts",
	"is_code",
	"save_sign_in",
]

log = logging.getLogger("openmolt")

CAPABILITY_NAME = "accounts"
"""The name of the capability that parks calls for end users' accounts
(`openmolt_core.capabilities.accounts`): ``by`` of its calls in ``state.pending``."""

CALLBACK_PATH = "/auth/callback"
"""Where ``openmolt serve`` takes the services' redirects."""

KEY_VARIABLE = "OPENMOLT_AUTH_KEY"
"""The environment variable with the key that signs consent states (shared by processes)."""

REDIRECT_VARIABLE = "OPENMOLT_AUTH_REDIRECT_URI"
"""The environment variable with the redirect URI registered with the services."""

OPTIONS = ("redirect_uri", "key", "ttl")
"""The keys of ``OpenMolt(accounts={...})`` (camelCase ``redirectUri`` works too)."""

GRANTED = "grantedScopes"
"""The stored key listing the OAuth scopes a user granted."""

CONSENT = "consentNonce"
"""The stored key holding the consents (their states' nonces, with when each state expires) that
stored a user's tokens and have not expired yet (a record of before held one nonce, as text)."""


def _consents(stored: Mapping[str, Any] | None) -> dict[str, float]:
	"""The used, unexpired nonces a user's stored record holds (`CONSENT`)."""
	value = (stored or {}).get(CONSENT)
	if isinstance(value, str):  # one nonce, as records stored it before
		return {value: float("inf")}
	if not isinstance(value, Mapping):
		return {}
	now = time.time()
	out: dict[str, float] = {}
	for nonce, expires in value.items():
		try:
			when = float(expires)
		except (TypeError, ValueError):
			when = float("inf")  # unreadable: kept, so the nonce stays refused
		if when >= now:
			out[str(nonce)] = when
	return out


_BOOKKEEPING = (GRANTED, CONSENT)

HELD = "openmolt.held"
"""The credential store's reserved integration id of the sign-ins that wait for their code
(`Accounts.hold`): one record each, whose user is the code's keyed digest. No integration id
holds a '.', so no account's ``load`` returns one (`openmolt_core.credstore.is_reserved`)."""

TRIES = "openmolt.tries"
"""The credential store's reserved integration id of the chat users' wrong codes (`Accounts.confirm`),
one record per chat user: when each wrong code came, in the last `_TRY_WINDOW` seconds."""

SPENT = "openmolt.spent"
"""The credential store's reserved integration id of the consents a forgotten sign-in had used
(`forget_sign_in`): one record per end user, each integration's nonces with when their states
expire. The user's record that remembered them (`CONSENT`) goes with the tokens; kept here, a
spent link stays refused (`Accounts._use`) instead of connecting the account again."""

_MAX_SPENT_SECONDS = 30 * 86400.0
"""How long a nonce of unknown expiry (a record of before) is kept under `SPENT`."""


def _spent(store: CredentialStore, integration: str, user: str) -> dict[str, float]:
	"""The unexpired nonces a forgotten sign-in of ``user`` had used (`SPENT`)."""
	record = store.load(SPENT, user) or {}
	return _consents({CONSENT: record.get(integration)})


def _keep_spent(
	store: CredentialStore, integration: str, user: str, used: Mapping[str, float]
) -> None:
	"""Add a forgotten sign-in's used nonces to ``user``'s `SPENT` record (expired ones dropped)."""
	with store.locked(SPENT, user):
		_add_spent(store, integration, user, used)


def _add_spent(
	store: CredentialStore, integration: str, user: str, used: Mapping[str, float]
) -> None:
	"""`_keep_spent` with the record's lock held already."""
	now = time.time()
	record = store.load(SPENT, user) or {}
	kept = {
		name: nonces
		for name, nonces in ((n, _consents({CONSENT: v})) for n, v in record.items())
		if nonces
	}
	cap = now + _MAX_SPENT_SECONDS  # no infinity in JSON
	kept[integration] = {
		**kept.get(integration, {}),
		**{nonce: min(when, cap) for nonce, when in used.items()},
	}
	store.save(SPENT, kept, user=user)


def _take_shared(shared: Any, key: str, expires: float) -> bool:
	"""Take ``key`` in a store servers share (a `SeenStore`): whether this call took it."""
	return shared.take({key: expires}, time.time()) is None


def _take_spent(
	store: CredentialStore, integration: str, user: str, nonce: str, expires: float
) -> bool:
	"""Add a state's nonce to ``user``'s `SPENT` record unless it is there: whether it was added.

	Under the record's lock, so of two processes taking one nonce at once, one gets it.
	"""
	with store.locked(SPENT, user):
		if nonce in _spent(store, integration, user):
			return False
		_add_spent(store, integration, user, {nonce: expires})
	return True


_CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # no 0/O, no 1/I: read off a page, typed
_CODE = re.compile(r"[2-9A-HJ-NP-Z]{4}(?:-[2-9A-HJ-NP-Z]{4}){2}", re.IGNORECASE)
_TRIES = 5
"""The wrong codes one chat user may send in `_TRY_WINDOW` seconds before their tries wait."""
_TRY_WINDOW = 900.0

_NO_SIGN_IN = (
	"code: no sign-in waits for this code (it is mistyped, was used, or expired); ask me again "
	"for a fresh link"
)

_OTHER_AGENT = (
	"code: this sign-in was started by another agent, not me: send the code in the chat "
	"where you asked for the link"
)

_CHAT_LINK = (
	"state: this consent link was sent in a chat, and the person it was sent to finishes it "
	f"there: the server that sent it (openmolt serve, at {CALLBACK_PATH}) shows them a code "
	"to send to the chat"
)


_NOT_STARTED_HERE = (
	"state: this sign-in was not started in this browser, so it connects nothing (a link is "
	"finished only in the browser that started it from this page); start it again from the "
	"page that lists the run"
)

_BOUND_ELSEWHERE = (
	"state: this sign-in was started in a browser, from the page that listed its run, and is "
	"finished only there (its redirect must be that page's /auth/callback)"
)


class ForeignConsentError(ConfigurationError):
	"""A consent's ``state`` is not this instance's to complete.

	Another key signed it, or it names an agent (and integration) this instance does not
	serve: an instance sharing ``OPENMOLT_AUTH_KEY`` made it. Nothing was used up; a server
	that holds several instances (``openmolt serve``) hands the answer to the next one.
	"""


_TOKEN_KEYS = frozenset({"accesstoken", "refreshtoken", "expirydate"})
_DAY = 24 * 3600


def _b64(data: bytes) -> str:
	return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
	return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _normal(key: str) -> str:
	return key.replace("_", "").lower()


def _without_tokens(config: Mapping[str, Any]) -> dict[str, Any]:
	"""The operator's client config without any token: a user's tokens never mix with another's."""
	return {k: v for k, v in config.items() if _normal(k) not in _TOKEN_KEYS}


def _new_code() -> str:
	"""A one-time code: 12 characters of 32 (60 bits), digits and letters both, in groups of 4."""
	while True:
		raw = "".join(random_bytes.choice(_CODE_ALPHABET) for _ in range(12))
		if _mixed(raw):
			return "-".join(raw[i : i + 4] for i in (0, 4, 8))


def _mixed(text: str) -> bool:
	"""Whether a code's text holds a digit and a letter (a code does, and a chat's words do not).

	Words like "that-very-text" are no code, nor are numbers like "4567-8923-4567" (an order's
	or a phone's: the answer to a question).
	"""
	return any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def is_code(text: str) -> bool:
	"""Whether a chat message is exactly a sign-in's code (`Held.code`), as `confirm` takes it.

	Args:
		text: The message.
	"""
	found = text.strip()
	return bool(_CODE.fullmatch(found)) and _mixed(found)


@dataclass(frozen=True, slots=True)
class Connected:
	"""What a completed consent connected.

	Args:
		integration: The integration id.
		user: The end user whose tokens were stored.
		scopes: The OAuth scopes granted: those asked for, less any the service's reply says
			the user declined.
		run_id: The run that asked (empty when none did).
		agent: The agent whose run asked (empty when the consent named none).
	"""

	integration: str
	user: str
	scopes: tuple[str, ...]
	run_id: str
	agent: str = ""


@dataclass(frozen=True, slots=True)
class Held:
	"""A consent whose tokens wait for its user to confirm in their chat (`Accounts.hold`).

	Args:
		integration: The integration id.
		user: The end user the link was made for: only they finish it.
		run_id: The run that asked (empty when none did).
		expires: When the tokens are dropped (the state's expiry, seconds since the epoch).
		code: The one-time code the user sends to the chat (`Accounts.confirm`); shown on the
			callback's page only, never in a log or the repr.
		agent: The agent whose run asked (empty when the consent named none): the code is
			taken in that agent's chat only.
	"""

	integration: str
	user: str
	run_id: str
	expires: float
	code: str = field(repr=False)
	agent: str = ""


@dataclass(slots=True)
class _Exchanged:
	"""A checked consent and the tokens its code gave, not stored yet (never in a repr)."""

	integration: str
	user: str
	scopes: tuple[str, ...]
	run_id: str
	nonce: str
	expires: float
	store: CredentialStore = field(repr=False)
	tokens: dict[str, Any] = field(repr=False)
	agent: str = ""


def _held_record(done: _Exchanged) -> dict[str, Any]:
	"""The record `Accounts.hold` stores under `HELD`: the sign-in and its tokens.

	Its keys end in ``Id`` and the rest are no text, so the secret set (which takes any other
	long text of a stored record, `openmolt_core.credstore.stored_secrets`) takes the tokens
	only, never the user, the integration or the run.
	"""
	return {
		"integrationId": done.integration,
		"userId": done.user,
		"runId": done.run_id,
		"agentId": done.agent,
		"consentId": done.nonce,
		"scopes": list(done.scopes),
		"expires": done.expires,
		"tokens": dict(done.tokens),
	}


def _held_expires(record: Mapping[str, Any]) -> float:
	try:
		return float(record.get("expires", 0))
	except (TypeError, ValueError):
		return 0.0  # unreadable: expired


def _exchanged(record: Mapping[str, Any], store: CredentialStore) -> _Exchanged | None:
	"""A held sign-in as `_save` takes it (None: a damaged record, dropped like an expired one)."""
	tokens = record.get("tokens")
	scopes = record.get("scopes")
	if not isinstance(tokens, Mapping) or not isinstance(scopes, list):
		return None
	return _Exchanged(
		integration=str(record.get("integrationId") or ""),
		user=str(record.get("userId") or ""),
		scopes=tuple(str(s) for s in scopes),
		run_id=str(record.get("runId") or ""),
		nonce=str(record.get("consentId") or ""),
		expires=_held_expires(record),
		store=store,
		tokens=dict(tokens),
		agent=str(record.get("agentId") or ""),
	)


def _recent(record: Mapping[str, Any] | None, now: float) -> list[float]:
	"""When a chat user's wrong codes came (their `TRIES` record), in the last window."""
	times = (record or {}).get("times")
	if not isinstance(times, list):
		return []
	return [float(t) for t in times if isinstance(t, (int, float)) and t > now - _TRY_WINDOW]


def _sweep(store: CredentialStore, now: float) -> None:
	"""Drop what expired: held sign-ins, try counts, spent consents (under `HELD`'s lock).

	A `SPENT` record goes once none of its states is live.
	"""
	for integration, user in store.entries():
		if user is None or integration not in (HELD, TRIES, SPENT):
			continue
		record = store.load(integration, user)
		if record is None:
			continue
		if integration == SPENT:
			with store.locked(SPENT, user):  # a sign-in forgotten meanwhile adds to it
				again = store.load(SPENT, user) or {}
				if not any(_consents({CONSENT: v}) for v in again.values()):
					store.delete(SPENT, user)
			continue
		if (_held_expires(record) < now) if integration == HELD else not _recent(record, now):
			store.delete(integration, user)


def _granted(
	asked: tuple[str, ...], reported: str | None, credential: OAuth2Credential
) -> tuple[str, ...]:
	"""The scopes asked that the user granted, as the token reply's ``scope`` lists them.

	A consent page may let the user untick a scope (Google's does): the reply then lists fewer
	(RFC 6749 section 5.1), and a tool needing one left out must park for it, not be sent with
	a token the service will refuse. Only the scopes tools ask for (the credential's
	``scope_map``) are checked: one asked always (``offline_access``) a service may leave out of
	the list without refusing it. A reply with no list, or an empty one (a GitHub App's), grants
	what was asked; a name matches whatever its case, or as the end of a URL the service lists
	(Microsoft's ``https://graph.microsoft.com/mail.read``), in a list split on spaces or commas.
	A listed scope also grants the ones the credential's ``implied_scopes`` says it includes.

	Args:
		asked: The scopes the consent asked for.
		reported: The reply's ``scope`` (None: none).
		credential: The integration's oauth2 credential (its ``scope_map``).
	"""
	listed = [s for s in re.split(r"[\s,]+", reported or "") if s]
	if not listed:
		return asked
	# A scope the reply lists grants those it includes (Shopify's write_X includes read_X).
	listed += [i for s in listed for i in credential.implied_scopes.get(s, ())]
	names = {s.lower() for s in listed} | {s.lower().rstrip("/").rsplit("/", 1)[-1] for s in listed}
	mapped = {s for values in credential.scope_map.values() for s in values}
	return tuple(
		s
		for s in asked
		if s not in mapped
		or s.lower() in names
		or s.lower().rstrip("/").rsplit("/", 1)[-1] in names
	)


def authorization_requests(state: RunState | Mapping[str, Any]) -> list[dict[str, Any]]:
	"""The authorization requests a parked run (``authorization_required``) waits for.

	Args:
		state: The run's state, or its dict.

	Returns:
		One request per parked call: ``integration``, ``user``, ``scopes`` (OAuth), ``url``
		(the consent URL to show the user), ``tool``, ``reason`` (``not_connected``,
		``scopes`` or ``revoked``), ``index`` (the call's place in its step); empty when the
		run waits for nothing of the kind. They are the requests of the calls
		``state.pending`` (kind ``capability``) holds with ``"by": "accounts"``.
	"""
	pending = state.get("pending") if isinstance(state, Mapping) else state.pending
	if not isinstance(pending, Mapping) or pending.get("kind") != CAPABILITY:
		return []
	return [
		{**c["request"], "index": c["index"]}
		for c in pending.get("calls") or ()
		if isinstance(c, Mapping)
		and c.get("by") == CAPABILITY_NAME
		and isinstance(c.get("request"), Mapping)
	]


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
	"""``OpenMolt(accounts={...})`` as `Accounts` keyword arguments.

	Args:
		options: ``redirect_uri``, ``key`` and ``ttl`` (camelCase accepted).

	Raises:
		ConfigurationError: An unknown key (the message names it and the known ones).
	"""
	out: dict[str, Any] = {}
	for name, value in options.items():
		key = "".join(f"_{c.lower()}" if c.isupper() else c for c in str(name))
		if key not in OPTIONS:
			raise ConfigurationError(f"accounts.{name}: unknown setting; give {', '.join(OPTIONS)}")
		out[key] = value
	return out


class Accounts:
	"""The instance's end-user accounts: consent URLs, and the callback that completes them.

	``om.accounts`` is made on first use from ``OpenMolt(accounts={...})``.

	Args:
		spec_of: Returns the integration of an id (``om.plugins.integration``).
		configs: The instance's integration configs (the OAuth client id and secret).
		store: Returns the credential store (None: there is none).
		http: Returns the shared HTTP client (the code exchange, refreshes).
		secrets: The instance's secret set: users' tokens join it.
		redirect_uri: The redirect registered with the services, served by ``openmolt serve``
			at `CALLBACK_PATH` (default: ``$OPENMOLT_AUTH_REDIRECT_URI``).
		key: Signs consent states (default: ``$OPENMOLT_AUTH_KEY``, else a random key for this
			process only).
		ttl: Seconds a consent URL stays valid.
		claims: Returns where every server sharing the durable store takes a state's nonce
			once (a ``SeenStore``, whose ``take`` keeps a key unless it is held: the PostgreSQL
			durable store's table), or None: the credential store's spent nonces (`SPENT`) keep
			it.
	"""

	def __init__(
		self,
		*,
		spec_of: Callable[[str], Integration],
		configs: Mapping[str, Mapping[str, Any]],
		store: Callable[[], CredentialStore | None],
		http: Callable[[], httpx.AsyncClient],
		secrets: SecretSet,
		redirect_uri: str | None = None,
		key: str | bytes | None = None,
		ttl: float = _DAY,
		claims: Callable[[], Any] | None = None,
	) -> None:
		self._spec_of = spec_of
		self._claims = claims
		self._configs = configs
		self.store = store
		self.http = http
		self.secrets = secrets
		self.redirect_uri: str | None = redirect_uri or os.environ.get(REDIRECT_VARIABLE) or None
		raw = key if key is not None else os.environ.get(KEY_VARIABLE) or None
		if raw is not None and len(raw) < 16:
			raise ConfigurationError(
				f"accounts.key: give at least 16 characters ({KEY_VARIABLE}); make one with: "
				'python -c "import secrets; print(secrets.token_urlsafe(32))"'
			)
		self._key = (raw.encode() if isinstance(raw, str) else raw) or random_bytes.token_bytes(32)
		register_key(self, raw)  # the key that signs consent states: masked everywhere
		if ttl <= 0:
			raise ConfigurationError(f"accounts.ttl: give a positive number of seconds, got {ttl}")
		self.ttl: float = float(ttl)
		self._used: dict[str, float] = {}  # the nonces of states completed here, until expiry
		self._bound: dict[str, set[str]] = {}  # by agent: the integrations it binds per user

	def __repr__(self) -> str:
		return f"Accounts(redirect_uri={self.redirect_uri!r})"

	# the operator's client -------------------------------------------------------------------

	def client_config(self, spec: Integration, integration: str) -> dict[str, Any]:
		"""The OAuth client config (id, secret, a shop or tenant): instance, environment, store.

		Tokens are left out: they belong to one account.

		Args:
			spec: The integration.
			integration: Its id.
		"""
		from openmolt_core._envvars import blank
		from openmolt_core.integrations.connect import with_environment

		given = dict(self._configs.get(integration, {}))
		config = with_environment(spec, integration, given)
		store = self.store()
		stored = (store.load(integration) or {}) if store is not None else {}
		have = {_normal(k) for k, v in config.items() if not blank(v)}
		stored = {k: v for k, v in stored.items() if _normal(k) not in have}
		filled = {_normal(k) for k in stored}  # a blank key of the config is filled, not kept
		config = {**stored, **{k: v for k, v in config.items() if _normal(k) not in filled}}
		return _without_tokens(config)

	# consent ---------------------------------------------------------------------------------

	def _sign(self, payload: bytes) -> str:
		return _b64(hmac.new(self._key, payload, hashlib.sha256).digest())

	def _verifier(self, state: str) -> str:
		# RFC 7636: 43 unreserved characters; derived, so nothing is kept between the two halves.
		return _b64(hmac.new(self._key, b"pkce\0" + state.encode(), hashlib.sha256).digest())

	def _browser(self, secret: str) -> str:
		"""The keyed digest of a browser's secret a state holds (never the secret itself)."""
		return self._sign(b"browser\0" + secret.encode())

	def state(
		self,
		integration: str,
		user: str,
		scopes: Iterable[str],
		run_id: str = "",
		*,
		in_chat: bool = False,
		agent: str = "",
		browser: str | None = None,
		ttl: float | None = None,
	) -> str:
		"""A signed, expiring ``state`` naming who connects what, and for which agent.

		Args:
			integration: The integration id.
			user: The end user.
			scopes: The OAuth scopes asked for.
			run_id: The run that waits (empty: none).
			in_chat: The link is sent in a chat: the user confirms there (`hold`).
			agent: The agent whose run asks (empty: none); only an instance where an agent of
				that name binds the integration per user completes it (`state_of`).
			browser: The secret of the browser that starts the link (a cookie the callback
				reads back, `browser_cookie` names it): the state holds its keyed digest, and `complete`
				then finishes it only with that secret (None: the link is bound to no browser).
			ttl: Seconds the state stays valid (None: the instance's ``ttl``; never longer).
		"""
		lasts = self.ttl if ttl is None else min(float(ttl), self.ttl)
		body: dict[str, Any] = {
			"i": integration,
			"u": user,
			"s": list(scopes),
			"r": run_id,
			"e": int(time.time() + lasts),
			"n": _b64(random_bytes.token_bytes(9)),
		}
		if in_chat:
			body["c"] = 1
		if browser is not None:
			body["b"] = self._browser(browser)
		if agent:
			body["a"] = agent
		payload = json.dumps(body, separators=(",", ":")).encode()
		return f"{_b64(payload)}.{self._sign(payload)}"

	def read_state(self, state: str) -> dict[str, Any]:
		"""The contents of a state this instance signed.

		Args:
			state: The ``state`` the service sent back.

		Raises:
			ForeignConsentError: Another key signed it (or it is forged or damaged).
			ConfigurationError: It expired.
		"""
		head, _, signature = state.partition(".")
		try:
			payload = _unb64(head)
			body = json.loads(payload)
		except ValueError:
			body = None
		if not isinstance(body, dict) or not hmac.compare_digest(
			signature.encode(), self._sign(payload).encode()
		):
			raise ForeignConsentError(
				"state: this answer was not started here (its signature does not match); "
				f"processes that share runs must share {KEY_VARIABLE}"
			)
		if float(body.get("e", 0)) < time.time():
			raise ConfigurationError(
				"state: this consent link expired; resume the run to get a fresh one"
			)
		return body

	async def _use(
		self, nonce: str, expires: float, store: CredentialStore, integration: str, user: str
	) -> None:
		"""Mark a state's nonce used, refusing one used before (here, or in the user's record).

		Marked before the code exchange: two answers with one state cannot both go on.

		Raises:
			ConfigurationError: The state was used already.
		"""
		now = time.time()
		self._used = {n: e for n, e in self._used.items() if e >= now}
		stored = await anyio.to_thread.run_sync(store.load, integration, user)
		spent = await anyio.to_thread.run_sync(_spent, store, integration, user)
		used = nonce in self._used or nonce in _consents(stored) or nonce in spent
		if not used:
			# Taken where every server sees it, in one step: a link held (`hold`) is in no
			# user's record until its code comes, so another server, or this one restarted,
			# would hold it again with a fresh code.
			shared = self._claims() if self._claims is not None else None
			if shared is not None:  # a `SeenStore`: its take gives back a key held already
				taken = functools.partial(
					_take_shared, shared, f"{integration}\0{user}\0{nonce}", expires
				)
			else:
				taken = functools.partial(_take_spent, store, integration, user, nonce, expires)
			used = not await anyio.to_thread.run_sync(taken)
		if used:
			raise ConfigurationError(
				"state: this consent link was used already; resume the run (or ask again) to get "
				"a fresh one"
			)
		self._used[nonce] = expires

	def consent(
		self,
		spec: Integration,
		integration: str,
		user: str,
		scopes: Iterable[str],
		*,
		config: Mapping[str, Any] | None = None,
		run_id: str = "",
		in_chat: bool = False,
		agent: str = "",
		browser: str | None = None,
		ttl: float | None = None,
	) -> str:
		"""The consent URL that connects ``user``'s account with these OAuth scopes.

		Args:
			spec: The integration.
			integration: Its id.
			user: The end user.
			scopes: The OAuth scopes to ask for.
			config: The client config (default: `client_config`).
			run_id: The run that waits.
			in_chat: The URL is sent in a chat (a chat trigger's run): its callback holds the
				tokens until the user confirms in that chat (`hold`), and `complete` refuses it.
			agent: The agent whose run asks (empty: none, e.g. a settings page): the state names
				it, and only an instance serving that agent completes it.
			browser: The secret of the browser that starts the link (`state`): only a callback
				that reads it back from that browser finishes it (``complete(url, browser=...)``).
			ttl: Seconds the link stays valid (None: the instance's ``ttl``).

		Raises:
			ConfigurationError: No redirect URI, no client id, or no oauth2 credential.
		"""
		from openmolt_core.integrations.credentials import authorization_url
		from openmolt_core.integrations.oauth import oauth2_credential

		if not self.redirect_uri:
			raise ConfigurationError(
				"accounts.redirect_uri: end users connect through a redirect this application "
				"serves; give OpenMolt(accounts={'redirect_uri': 'https://your.app/auth/callback'})"
				f" or {REDIRECT_VARIABLE} (openmolt serve answers at {CALLBACK_PATH})"
			)
		credential = oauth2_credential(spec, integration)
		wanted = list(dict.fromkeys(scopes))
		state = self.state(
			integration,
			user,
			wanted,
			run_id,
			in_chat=in_chat,
			agent=agent,
			browser=browser,
			ttl=ttl,
		)
		challenge = None
		if credential.pkce != "unsupported":
			digest = hashlib.sha256(self._verifier(state).encode("ascii")).digest()
			challenge = _b64(digest)
		client = self.client_config(spec, integration) if config is None else config
		from openmolt_core.integrations.credentials import _value, oauth2_config

		if not _value(credential.client_id, oauth2_config(client), "clientId"):
			from openmolt_core.integrations.connect import env_var

			raise ConfigurationError(
				f"{integration}: the OAuth client id is not set; give it in OpenMolt(integrations="
				f"{{{integration!r}: {{'clientId': ...}}}}) or {env_var(integration, 'clientId')}"
			)
		return authorization_url(
			credential,
			client,
			self.redirect_uri,
			state,
			code_challenge=challenge,
			scopes=wanted,
		)

	def state_of(self, answer: str) -> dict[str, Any]:
		"""The contents of the state a redirect carries, checked (`read_state`).

		What a callback reads to choose how to finish it: ``u`` names the user the link was
		made for, ``a`` the agent whose run asked, ``c`` says it was sent in a chat (finish it
		with `hold`).

		Args:
			answer: The URL the service redirected to (or its query string).

		Raises:
			ForeignConsentError: Another key signed it, or it names an agent that does not bind
				its integration per user here (another instance's state).
			ConfigurationError: No state, or a damaged or expired one.
		"""
		state = dict(parse_qsl(self._query(answer))).get("state", "")
		if not state:
			raise ConfigurationError(
				"state: the redirect carries no state, so it answers no consent link of this "
				"application (the service's words, if any, are not shown without one)"
			)
		# The state first: until it is known to be ours, nothing of the query is shown (a
		# crafted link would otherwise put its error_description on this application's page).
		body = self.read_state(state)
		agent, integration = str(body.get("a") or ""), str(body.get("i") or "")
		if agent and integration not in self._bound.get(agent, ()):
			raise ForeignConsentError(
				f"state: this consent link was made for the agent {agent!r}'s {integration} "
				"account, and no agent of that name binds it per end user in this instance "
				f"(another instance sharing {KEY_VARIABLE} made it: that one finishes it)"
			)
		return body

	@staticmethod
	def _query(answer: str) -> str:
		text = answer.strip()
		return urlsplit(text).query if "?" in text or "://" in text else text.lstrip("?")

	async def complete(
		self, answer: str, *, user: str | None = None, browser: str | None = None
	) -> Connected:
		"""Finish a consent: check the state, exchange the code, store the user's tokens.

		The state names the user the link was made for, not who signs in on it: a link forwarded
		to someone else connects their account as that user. An application that knows who is
		signed in in the browser (its own session) passes ``user``, and its callback route must:
		another user is refused before the code is exchanged, nothing is stored, and the link is
		spent (here: this process refuses it again until it expires).

		Args:
			answer: The URL the service redirected to (or its query string).
			user: The user signed in in the browser that came back, by the application's own
				session (None: not known, the link's user is taken on trust).
			browser: The secret the browser that came back holds (the cookie `browser_cookie`
				names), from a callback that binds its links to the browser that started them
				(``openmolt ui``): a state bound to no browser, or to another, is refused before
				anything is used up. None: this callback binds none, and refuses a state that
				is bound (it cannot check it).

		Returns:
			What was connected; resume the runs that wait for it.

		Raises:
			ForeignConsentError: Another instance's state (another key, or an agent this
				instance does not serve): nothing was used up.
			ConfigurationError: The service refused; the state is damaged, stale or missing; the
				link was sent in a chat (finished there: `hold`); it was started in another
				browser, or in none while this callback binds browsers; or ``user`` is not the
				user the link was made for.
			ToolError: The code exchange failed.
		"""
		body = self.state_of(answer)
		if body.get("c"):
			raise ConfigurationError(_CHAT_LINK)
		self._check_browser(body, browser)
		done = await self._exchange(answer, body, user)
		await self._save(done)
		return Connected(done.integration, done.user, done.scopes, done.run_id, done.agent)

	async def hold(self, answer: str) -> Held:
		"""Check a consent and exchange its code, but keep the tokens until the user confirms.

		For a link sent in a chat: the page the browser lands on shows `Held.code`, the user
		sends it to the chat, and `confirm` stores the tokens if they are the user the link was
		made for. The tokens wait in the credential store under `HELD` until the state expires,
		so any process sharing the store confirms them, after a restart too; they join the
		instance's secrets (and those of the process that confirms), so they are masked
		everywhere, and are never logged. The code itself is never stored, only its keyed digest.

		Args:
			answer: The URL the service redirected to (or its query string).

		Raises:
			ForeignConsentError: Another instance's state: nothing was used up.
			ConfigurationError: The service refused, or the state is damaged, stale or missing.
			ToolError: The code exchange failed.
		"""
		body = self.state_of(answer)
		if body.get("b"):  # started in a browser (the viewer's page): finished there only
			raise ConfigurationError(_BOUND_ELSEWHERE)
		done = await self._exchange(answer, body, None)
		code = _new_code()
		digest = self._digest(code)
		record = _held_record(done)
		store = done.store

		def keep() -> None:
			with store.locked(HELD):
				_sweep(store, time.time())
				store.save(HELD, record, user=digest)

		await anyio.to_thread.run_sync(keep)
		log.info("%s: %s's sign-in waits for its code in their chat", done.integration, done.user)
		return Held(done.integration, done.user, done.run_id, done.expires, code, done.agent)

	async def confirm(self, code: str, user: str, *, agent: str | None = None) -> Connected:
		"""Finish a consent `hold` kept: store its tokens if ``user`` is the one it was made for.

		The code is single-use, in every process sharing the credential store: it is taken out
		of the store under its lock, so sent twice at once it connects once. From another user
		it drops the tokens (a link forwarded to someone else connects nothing) and a warning is
		logged, without the code. A user's wrong codes are counted in the store, whichever
		process they reach: past 5 in 15 minutes, their next tries wait.

		Args:
			code: What the user sent (`Held.code`; case and surrounding spaces do not matter).
			user: The end user who sent it (a chat's ``<channel>:<user id>``).
			agent: The agent whose chat it was sent to (None: any). A sign-in another agent's
				run asked for is refused and kept for that agent's chat (counted as a wrong
				try: the code is no proof here).

		Returns:
			What was connected; resume the run that waits for it.

		Raises:
			ConfigurationError: No consent waits for this code (wrong, used or expired), it
				was not ``user``'s, another agent asked for it, or ``user`` sent too many wrong
				codes. The message is meant for the user.
		"""
		store = self.store()
		if store is None:  # nothing could be held (`hold` needs the store): no code is right
			raise ConfigurationError(_NO_SIGN_IN)
		digest = self._digest(code.strip().upper())
		now = time.time()

		def take() -> dict[str, Any] | None:
			with store.locked(HELD):
				counted = store.load(TRIES, user)
				tried = _recent(counted, now)
				if len(tried) >= _TRIES:
					wait = max(1, -int((now - tried[0] - _TRY_WINDOW) // 60))  # minutes, up
					raise ConfigurationError(
						f"code: too many wrong codes; try again in {wait} minutes"
					)
				found = store.load(HELD, digest)
				asked_by = str((found or {}).get("agentId") or "")
				if found is not None and agent is not None and asked_by not in ("", agent):
					# Another agent's sign-in: left for its chat, this try counted.
					if _held_expires(found) >= now:
						store.save(TRIES, {"times": [*tried, now]}, user=user)
						raise ConfigurationError(_OTHER_AGENT)
				if found is not None:  # taken: single-use, whoever sent it
					store.delete(HELD, digest)
				if found is not None and _held_expires(found) < now:
					found = None
				if found is None or found.get("userId") != user:
					store.save(TRIES, {"times": [*tried, now]}, user=user)
				elif counted is not None:  # the right code: the count starts again
					store.delete(TRIES, user)
				return found

		found = await anyio.to_thread.run_sync(take)
		done = _exchanged(found, store) if found is not None else None
		if done is None:
			raise ConfigurationError(_NO_SIGN_IN)
		# Held by another process: its tokens are masked here too.
		self.secrets.add(*secret_values(done.tokens))
		if done.user != user:
			log.warning(
				"%s: a sign-in made for %s was confirmed by %s: its tokens are dropped (a "
				"forwarded consent link)",
				done.integration,
				done.user,
				user,
			)
			raise ConfigurationError(
				"code: this sign-in was started by someone else, not you, so it is dropped and "
				"nothing is connected; never sign in on a link someone sent you"
			)
		await self._save(done)
		return Connected(done.integration, done.user, done.scopes, done.run_id, done.agent)

	def _check_browser(self, body: Mapping[str, Any], browser: str | None) -> None:
		"""Refuse a state whose browser binding (``b``) the browser that came back does not hold.

		Nothing is used up: the browser that started the link may still finish it.
		"""
		bound = str(body.get("b") or "")
		if browser is None:
			if bound:
				raise ConfigurationError(_BOUND_ELSEWHERE)
			return
		if not bound or not browser:
			log.warning(
				"%s: a consent link made for %s that no browser started here was refused",
				body.get("i"),
				body.get("u"),
			)
			raise ConfigurationError(_NOT_STARTED_HERE)
		if not hmac.compare_digest(bound.encode(), self._browser(browser).encode()):
			log.warning(
				"%s: a consent link made for %s came back in another browser than the one that "
				"started it: refused",
				body.get("i"),
				body.get("u"),
			)
			raise ConfigurationError(_NOT_STARTED_HERE)

	@staticmethod
	def browser_cookie(body: Mapping[str, Any]) -> str:
		"""The name of the cookie that holds the secret a state's browser binding is made with.

		One per link (its state's nonce names it), so two links started at once in one browser
		do not undo each other.

		Args:
			body: The state's contents (`state_of`).
		"""
		nonce = re.sub(r"[^A-Za-z0-9_-]", "", str(body.get("n") or ""))
		return f"openmolt_auth_{nonce}"

	def _digest(self, code: str) -> str:
		return self._sign(b"code\0" + code.encode())

	async def _exchange(self, answer: str, body: Mapping[str, Any], user: str | None) -> _Exchanged:
		"""Check a consent's answer (whose state ``body`` is), spend it, exchange its code."""
		from openmolt_core.integrations.credentials import oauth_guard
		from openmolt_core.integrations.oauth import (
			Consent,
			code_from_redirect,
			code_grant,
			oauth2_credential,
		)

		text = answer.strip()
		state = dict(parse_qsl(self._query(text))).get("state", "")
		code = code_from_redirect(text, state)
		integration, owner = str(body["i"]), str(body["u"])
		scopes = tuple(str(s) for s in body.get("s") or ())
		store = self.store()
		if store is None:
			raise ConfigurationError(
				"credential_store: end users' tokens are kept in the credential store; give "
				"OpenMolt(credential_store=...)"
			)
		if not self.redirect_uri:
			raise ConfigurationError(
				f"accounts.redirect_uri: the code exchange repeats the redirect the consent URL "
				f"named; give this process the same {REDIRECT_VARIABLE}"
			)
		spec = self._spec_of(integration)
		credential: OAuth2Credential = oauth2_credential(spec, integration)
		config = await anyio.to_thread.run_sync(self.client_config, spec, integration)
		# Used only now: a process set up wrongly (above) refuses and leaves the link usable
		# where it is set up right.
		nonce = str(body.get("n") or "")
		expires = float(body.get("e", 0))
		await self._use(nonce, expires, store, integration, owner)
		if user is not None and user != owner:
			# Spent (above) and refused before the exchange: the code is never sent.
			log.warning(
				"%s: a consent link made for %s was finished by %s: refused",
				integration,
				owner,
				user,
			)
			raise ConfigurationError(
				f"user: this consent link was made for another user than {user}, so it connects "
				"nothing and is used up; the user it was made for asks for a fresh one"
			)
		consent = Consent("", state, self._verifier(state), self.redirect_uri, scopes)
		if credential.pkce == "unsupported":
			consent = dataclasses.replace(consent, verifier=None)
		tokens, reported = await code_grant(
			credential,
			config,
			code,
			consent,
			client=self.http(),
			integration=integration,
			guard=oauth_guard(spec, config),
		)
		tokens = {k: v for k, v in tokens.items() if k not in ("clientId", "clientSecret")}
		self.secrets.add(*secret_values(tokens))
		run_id = str(body.get("r") or "")
		granted = _granted(scopes, reported, credential)
		if granted != scopes:
			declined = [s for s in scopes if s not in granted]
			log.info("%s: %s did not grant %s", integration, owner, ", ".join(declined))
		agent = str(body.get("a") or "")
		return _Exchanged(integration, owner, granted, run_id, nonce, expires, store, tokens, agent)

	async def _save(self, done: _Exchanged) -> None:
		"""Store an exchanged consent's tokens under its user."""
		store, integration, user = done.store, done.integration, done.user

		save = functools.partial(
			save_sign_in,
			store,
			integration,
			done.tokens,
			user,
			scopes=done.scopes,
			consent=(done.nonce, done.expires),
		)
		await anyio.to_thread.run_sync(save)
		log.info("%s: connected for user %s", integration, user)

	def for_binding(
		self,
		spec: Integration,
		integration: str,
		credential_type: str | None,
		scopes: Iterable[str] | None,
		*,
		agent: str = "",
	) -> UserAccounts:
		"""The `UserAccounts` of one agent's binding.

		The instance then completes the consents this agent's runs ask for (`state_of`).

		Args:
			spec: The integration.
			integration: Its id.
			credential_type: The credential type the agent chose (None: the first).
			scopes: The tool scopes the agent is granted (None: all).
			agent: The agent's name: its consent states name it.

		Raises:
			ConfigurationError: There is no credential store, or the id is reserved.
		"""
		from openmolt_core.credstore import RESERVED_PREFIX, is_reserved

		if is_reserved(integration):  # its records are OpenMolt's own (`HELD`), not accounts
			raise ConfigurationError(
				f"integrations[{integration}]: ids that start with {RESERVED_PREFIX!r} are "
				"reserved for OpenMolt's own records in the credential store; choose another id"
			)
		if self.store() is None:
			raise ConfigurationError(
				f"integrations[{integration}].account: 'user' reads each user's credential from "
				"the credential store; give OpenMolt(credential_store='credentials.enc') (and "
				"OPENMOLT_CREDENTIALS_KEY)"
			)
		self._bound.setdefault(agent, set()).add(integration)
		return UserAccounts(self, spec, integration, credential_type, scopes, agent=agent)


def save_sign_in(
	store: CredentialStore,
	integration: str,
	tokens: Mapping[str, Any],
	user: str | None = None,
	*,
	scopes: Iterable[str] | None = None,
	consent: tuple[str, float] | None = None,
) -> None:
	"""Store a new sign-in's tokens in place of the old ones, under the credential's lock.

	Every writer of a sign-in goes through here (a consent, ``openmolt auth``), holding the
	credential as a refresh does (`openmolt_core.integrations.credentials.holding`): a refresh going
	on saves first, then this; one that starts later reads this (a save that did not wait was
	overwritten by the refresh's save of the grant it had read before). The consents that stored
	the user's earlier tokens stay recorded (`CONSENT`) until they expire, so their links stay
	refused in every process.

	Args:
		store: The credential store.
		integration: The integration id.
		tokens: The config to store (tokens, and the client for the operator's).
		user: The end user; None: the operator.
		scopes: The OAuth scopes granted (`GRANTED`; None: not known, no scope is checked).
		consent: The nonce of the consent that made it, and when its state expires.
	"""
	from openmolt_core.integrations.credentials import holding

	with holding(store, integration, user):
		used = _consents(store.load(integration, user))
		if consent is not None:
			used[consent[0]] = consent[1]
		record = {k: v for k, v in tokens.items() if k not in _BOOKKEEPING}
		if scopes is not None:
			record[GRANTED] = list(scopes)
		if used:
			record[CONSENT] = used
		store.save(integration, record, user=user)


def forget_sign_in(store: CredentialStore, integration: str, user: str | None = None) -> bool:
	"""Delete a sign-in under the credential's lock; True when there was one.

	A refresh going on ends first (else it saved the tokens back after the delete); one that
	starts later finds the sign-in gone and refuses, naming the command that reconnects. The
	consent links that connected it stay spent (`SPENT`): one replayed with a fresh code is
	refused, not connecting the account again.

	Args:
		store: The credential store.
		integration: The integration id.
		user: The end user; None: the operator.
	"""
	from openmolt_core.integrations.credentials import holding

	with holding(store, integration, user):
		used = _consents(store.load(integration, user)) if user is not None else {}
		if used and user is not None:  # before the delete: a failure leaves the sign-in as it was
			_keep_spent(store, integration, user, used)
		return store.delete(integration, user)


def instance_accounts(
	om: Any, options: Mapping[str, Any], store_option: Callable[[], object]
) -> Accounts:
	"""An instance's end-user accounts (``om.accounts``, made on first use).

	Args:
		om: The `OpenMolt` instance: its plugins, integration configs, credential store, HTTP
			client and secrets.
		options: What ``OpenMolt(accounts=...)`` was given.
		store_option: What ``OpenMolt(credential_store=...)`` was given, or a store set by
			hand since (``om.credential_store = ...``, None there meaning none: False), asked
			at each use: None, the default, lets the first end user who connects make the
			default encrypted file.

	Raises:
		ConfigurationError: An unknown option.
	"""

	def users_store() -> CredentialStore | None:
		# End users connect at run time: the default file is made then, unless turned off.
		if om.credential_store is None and store_option() is None:
			from openmolt_core.credstore import EncryptedFileStore

			om.credential_store = EncryptedFileStore()
		store: CredentialStore | None = om.credential_store
		return store

	return Accounts(
		spec_of=om.plugins.integration,
		configs=om.integration_configs,
		store=users_store,
		http=om.http,
		secrets=om.secrets,
		claims=lambda: _durable_claims(om),
		**check_options(options),
	)


def _durable_claims(om: Any) -> Any:
	"""The durable store's table of taken keys that servers on several machines share, or None."""
	shared = getattr(om.durability, "seen_store", None)
	return shared("accounts:consents") if shared is not None else None


class UserAccounts:
	"""One agent's binding of an integration per end user (`openmolt_core._binding.UserAccount`).

	It keeps no user's credential: each call reads it from the store.

	Args:
		accounts: The instance's `Accounts`.
		spec: The integration.
		integration: Its id.
		credential_type: The credential type (None: the integration's first).
		scopes: The tool scopes the agent is granted (None: all): a user who connects is asked
			for all of them at once.
		agent: The agent's name (its consent states name it; empty: none).
	"""

	def __init__(
		self,
		accounts: Accounts,
		spec: Integration,
		integration: str,
		credential_type: str | None,
		scopes: Iterable[str] | None,
		*,
		agent: str = "",
	) -> None:
		self.accounts = accounts
		self.agent = agent
		self.spec = spec
		self.integration = integration
		self.credential: Credential | None = spec.credential(credential_type)
		self.scopes: list[str] | None = None if scopes is None else list(scopes)

	def __repr__(self) -> str:
		return f"UserAccounts({self.integration!r})"

	@functools.cached_property
	def _roles(self) -> tuple[frozenset[str], frozenset[str]]:
		"""The keys its addresses read and those its credential signs with (`_key_roles`)."""
		return _key_roles(self.spec, self.credential)

	def _oauth(self) -> OAuth2Credential | None:
		from openmolt_core.integrations.model import OAuth2Credential

		cred = self.credential
		return cred if isinstance(cred, OAuth2Credential) and cred.auth_url else None

	async def _load(self, user: str) -> dict[str, Any] | None:
		store = self.accounts.store()
		if store is None:
			return None
		found = await anyio.to_thread.run_sync(store.load, self.integration, user)
		if found:
			self.accounts.secrets.add(*secret_values(found))
		return found

	def _config(self, base: Mapping[str, Any], stored: Mapping[str, Any]) -> dict[str, Any]:
		from openmolt_core.integrations.config import ENGINE_KEYS

		# A user's record gives their credential and setup keys, never the engine's own
		# (allowInternalHosts would open internal addresses to their calls).
		mine = {k: v for k, v in stored.items() if k not in _BOOKKEEPING and k not in ENGINE_KEYS}
		if self._oauth() is not None:  # the operator's OAuth client, the user's tokens
			return {**_without_tokens(base), **mine}
		# Another credential (an API key per user): nothing secret of the operator's is kept,
		# nor anything the credential signs with (a short key, a PIN of digits, an account id:
		# none looks secret), so a user whose stored config lacks a key never signs with the
		# operator's. What an address reads stays (the operator's region, as a default).
		hidden = secret_values(base)
		read, signed = self._roles
		public = {
			k: v
			for k, v in base.items()
			if not (isinstance(v, str) and v in hidden)
			and not (
				(k in signed or _camel(k) in signed) and k not in read and _camel(k) not in read
			)
		}
		return {**_without_tokens(public), **mine}

	def _auth(self, base: ToolContext, user: str, stored: Mapping[str, Any]) -> httpx.Auth | None:
		from openmolt_core.integrations.credentials import OAuth2Auth, make_auth

		if self.credential is None:
			return None
		known = self.accounts.secrets

		def learned(config: dict[str, Any]) -> None:
			known.add(*secret_values(config))

		config = self._config(base.config, stored)
		http = base.http or self.accounts.http
		auth = make_auth(self.spec, self.credential, config, on_token_refresh=learned, http=http)
		if isinstance(auth, OAuth2Auth):
			if auth.guard is None and _reads(
				auth.credential.token_url, _setup_keys(stored, self._roles)
			):
				# A token URL read from the user's record is theirs: its address is checked.
				from openmolt_core.integrations.http import guard_for

				auth.guard = guard_for(
					dataclasses.replace(base, config=config), self.spec.api_setup
				)
			store = self.accounts.store()
			if store is not None:
				auth.use_store(store, self.integration, user, keys=frozenset(stored))
		return auth

	async def authorize(
		self, user: str | None, tool: BoundTool, run_id: str
	) -> dict[str, Any] | None:
		"""Whether ``user`` can make this call now (the accounts capability asks before each call).

		Args:
			user: The run's end user (None: the run has none).
			tool: The tool about to be called.
			run_id: The run's id (the consent's callback names it).

		Returns:
			None when the user's account is connected with the scopes the tool needs; else
			plain JSON (no secret): ``{"error": reason}`` (the call does not run; the model
			reads the reason) or ``{"authorize": request}`` (the run parks until the user
			connects: integration, user, scopes, consent URL).
		"""
		iid = self.integration
		if user is None:
			return {
				"error": f"{iid} acts for the run's end user and this run has none; "
				"the application runs the agent with user=..."
			}
		stored = await self._load(user)
		oauth = self._oauth()
		if oauth is None:
			if stored:
				return None
			return {
				"error": f"{user} has no {iid} credential; the application stores one "
				f"with credential_store.save({iid!r}, {{...}}, user={user!r})"
			}
		from openmolt_core.integrations.oauth import requested_scopes

		needed = requested_scopes(self.spec, oauth, getattr(tool.tool, "scopes", None) or [])
		granted = stored.get(GRANTED) if stored else None
		reason = None
		if not stored:
			reason = "not_connected"
		elif isinstance(granted, list) and any(s not in granted for s in needed):
			reason = "scopes"
		else:
			from openmolt_core.integrations.credentials import OAuth2Auth, revoked

			auth = self._auth(tool.context, user, stored)
			try:  # a token that must be refreshed is refreshed now: a revoked grant shows here
				if isinstance(auth, OAuth2Auth):
					await auth.token()
			except ToolError as exc:
				if not revoked(exc):
					return None  # another failure: the call reports it
				reason = "revoked"
		if reason is None:
			return None
		wanted = [*(granted or []), *requested_scopes(self.spec, oauth, self.scopes), *needed]
		scopes = list(dict.fromkeys(wanted))
		from openmolt_core.observe import current_trigger

		# A chat's run sends the link in the chat: its user confirms there who signed in.
		in_chat = (current_trigger() or {}).get("kind") == "chat"
		consent = functools.partial(
			self.accounts.consent, run_id=run_id, in_chat=in_chat, agent=self.agent
		)
		try:  # the client config may come from the store: a file read, off the event loop
			url = await anyio.to_thread.run_sync(consent, self.spec, iid, user, scopes)
		except ConfigurationError as exc:
			log.warning("%s: cannot ask %s to connect: %s", iid, user, exc)
			return {"error": f"{user} must connect {iid}, and {exc}"}
		request = {
			"integration": iid,
			"user": user,
			"scopes": scopes,
			"url": url,
			"tool": tool.handle,
			"reason": reason,
		}
		return {"authorize": request}

	async def context(self, base: ToolContext, user: str | None) -> ToolContext:
		"""The context of one call: the user's config and auth over the binding's client config.

		Args:
			base: The binding's context.
			user: The run's end user.

		Raises:
			ToolError: The user's credential is gone.
		"""
		stored = await self._load(user) if user is not None else None
		if not stored or user is None:
			raise ToolError(
				f"{self.integration}: {user or 'this run'} has no connected account; the user "
				"must connect it first"
			)
		config = self._config(base.config, stored)
		auth = self._auth(base, user, stored) if base.auth is not None else None
		redact = base.redact | frozenset(secret_values(config))
		# A setup key of the user's record (their shop, their server) may name the host the
		# calls go to: the engine checks the first request's address too.
		chosen = bool(_setup_keys(stored, self._roles))
		return dataclasses.replace(
			base, config=config, auth=auth, redact=redact, config_from_user=chosen
		)


def _setup_keys(
	stored: Mapping[str, Any], roles: tuple[frozenset[str], frozenset[str]]
) -> set[str]:
	"""The keys of a user's record that may choose where requests go: setup keys.

	A key an address reads is one, whatever else reads it (S3's region also signs); so is any
	key the credential does not sign with (a shop, a host). Not: the bookkeeping, the engine's
	keys (dropped), or a key only the credential signs with (`_key_roles`).

	Args:
		stored: The user's record.
		roles: The keys the integration's addresses read, and those its credential signs with.
	"""
	from openmolt_core.integrations.config import ENGINE_KEYS

	read, signed = roles
	return {
		k
		for k in stored
		if k not in _BOOKKEEPING
		and k not in ENGINE_KEYS
		and (k in read or _camel(k) in read or k not in signed)
	}


def _key_roles(
	spec: Integration, credential: Credential | None
) -> tuple[frozenset[str], frozenset[str]]:
	"""The config keys an integration's addresses read, and those its credential signs with.

	Addresses: the API's base URL, each tool's endpoint and base URL, an OAuth2 token,
	authorization or device URL. Signed: the OAuth2 tokens and client credentials, and every
	key the credential's other fields read (a header, a query parameter, a password).

	Args:
		spec: The integration.
		credential: The credential the binding signs with (None: none).
	"""
	from openmolt_core.integrations.credentials import _CONFIG_REF, OAUTH2_CONFIG_KEYS

	urls = ("token_url", "auth_url", "device_url")
	addresses = [spec.api_setup.base_url]
	for tool in spec.tools:
		addresses += [
			str(getattr(tool, "endpoint", "") or ""),
			str(getattr(tool, "base_url", "") or ""),
		]
	signed = {
		spelled
		for camel, snake in OAUTH2_CONFIG_KEYS.items()
		if camel not in ("tokenUrl", "authUrl")
		for spelled in (camel, snake)
	}
	if credential is not None:
		addresses += [str(getattr(credential, field, "") or "") for field in urls]
		fields = credential.model_dump(exclude=set(urls))
		signed |= set(_CONFIG_REF.findall(json.dumps(fields, default=str)))
	return frozenset(_CONFIG_REF.findall(" ".join(addresses))), frozenset(signed)


def _camel(key: str) -> str:
	"""``token_url`` as a template reads it: ``tokenUrl``."""
	head, *rest = key.split("_")
	return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _reads(template: str | None, keys: set[str]) -> bool:
	"""Whether a credential template (a token URL) reads one of ``keys`` (in either spelling)."""
	from openmolt_core.integrations.credentials import _CONFIG_REF

	read = set(_CONFIG_REF.findall(str(template or "")))
	return any(k in read or _camel(k) in read for k in keys)


# events ---------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class AuthorizationRequestEvent(Event):
	"""A tool call waits for its end user to connect an account (`openmolt_core.accounts`).

	``request`` holds ``integration``, ``user``, ``scopes``, ``url`` (the consent URL to show
	them), ``tool``, ``reason`` (``not_connected``, ``scopes`` or ``revoked``) and ``index``
	(the call's place in its step); no secret. The accounts capability
	(`openmolt_core.capabilities.accounts`) emits one per parked call as the run ends parked.
	"""

	request: dict[str, Any]
	name: str = "authorization:request"
