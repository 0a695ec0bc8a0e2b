"""Webhook signatures: check that a request was signed by the sender, before anything runs.

Seven schemes, each exactly as its owner documents it (HMAC over the raw body bytes, or over what
the table says, compared in constant time):

| scheme | headers | signed text | replay window |
| --- | --- | --- | --- |
| ``hmac`` | ``X-Signature-256: sha256=<hex>`` (the header is configurable) | the body | none: `ReplayGuard` refuses a signature again for its whole life |
| ``standard`` | ``webhook-id``, ``webhook-timestamp``, ``webhook-signature: v1,<base64>`` | ``<id>.<timestamp>.<body>`` | ``tolerance`` seconds |
| ``github`` | ``X-Hub-Signature-256: sha256=<hex>`` | the body | none (GitHub signs no time); ``X-GitHub-Delivery`` names the delivery |
| ``stripe`` | ``Stripe-Signature: t=<unix>,v1=<hex>[,v1=...]`` | ``<t>.<body>`` | ``tolerance`` seconds (Stripe's libraries: 300) |
| ``slack`` | ``X-Slack-Request-Timestamp``, ``X-Slack-Signature: v0=<hex>`` | ``v0:<timestamp>:<body>`` | ``tolerance`` seconds (Slack: 5 minutes) |
| ``shopify`` | ``X-Shopify-Hmac-Sha256: <base64>`` | the body | none (Shopify signs no time); ``X-Shopify-Event-Id`` names the event |
| ``twilio`` | ``X-Twilio-Signature: <base64>`` (HMAC-SHA1, or SHA-256 when ``X-Twilio-Webhooks-Signature-Settings`` says so) | the URL Twilio called, then each form field's name and value sorted by name; a JSON body: the URL, whose ``bodySHA256`` is the body's SHA-256 | none; ``I-Twilio-Idempotency-Token`` names the delivery |

``standard`` is [Standard Webhooks](https://www.standardwebhooks.com/) (its secrets read
``whsec_<base64>``), the shared-secret scheme to choose when you control the sender: it signs an
id and a time, so a captured request cannot be replayed later. Sources: GitHub's "Validating
webhook deliveries", Stripe's "Check the webhook signatures" (manual verification), Slack's
"Verifying requests from Slack", Shopify's "Verify webhooks" (and "Ignore duplicate
webhooks": a retry carries the same ``X-Shopify-Event-Id``), Twilio's "Webhooks security" (the
URL is the one Twilio calls, the webhook's ``url`` setting with the request's query: a proxy in
front changes what the server sees, not what Twilio signed); the tests check each against its documented example.

A timestamp outside the window (either way: a clock ahead by more than ``tolerance`` too) is
refused as ``expired``. Within the window, `ReplayGuard` refuses a signature it has seen, keyed on
the verified signature itself (the expected MAC), never on the header's text: a copy with the hex
in upper case, other spaces, a base64 variant or extra signatures beside it is the same request.
Signatures without a time (``hmac``, ``github``) stay valid forever, so the guard keeps them for
its whole life (and in a durable `SeenStore` when one is given).

The checks are the standard library (``hmac``, ``hashlib``); the schemes and their defaults are
the agent file's settings (`openmolt_core.triggers`). The server (``openmolt serve``) and any ASGI
or WSGI application of your own can use this module (``pip install "openmolt[serve]"``; it moved
here from ``openmolt_serve.signatures``, which re-exports it). No error message contains the secret
or the expected signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, get_args
from urllib.parse import parse_qs, urlsplit

from openmolt_core.errors import OpenMoltError
from openmolt_core.triggers import DEFAULT_HMAC_HEADER, DEFAULT_TOLERANCE, Scheme

__all__ = [
	"DEFAULT_HMAC_HEADER",
	"DEFAULT_TOLERANCE",
	"DELIVERY_KEEP",
	"SCHEMES",
	"ReplayGuard",
	"Scheme",
	"SeenStore",
	"SignatureError",
	"Verified",
	"check_secret",
	"sign",
	"verify",
]

SCHEMES: tuple[str, ...] = get_args(Scheme)
"""The names of the schemes `verify` knows (`Scheme`, the agent file's setting), for messages."""

DELIVERY_KEEP: float = 3 * 86_400.0
"""Seconds a `ReplayGuard` keeps a delivery id at least: Stripe retries an event for three days."""


class SignatureError(OpenMoltError):
	"""A webhook request's signature is missing, wrong, too old, or seen before.

	Args:
		message: What is wrong and what the sender must do (never the secret).
		reason: ``unsigned``, ``malformed``, ``invalid``, ``expired`` or ``replayed``.
	"""

	def __init__(self, message: str, *, reason: str) -> None:
		super().__init__(message)
		self.reason = reason


@dataclass(frozen=True, slots=True)
class Verified:
	"""What a valid signature tells about the request.

	Args:
		scheme: The scheme that checked it.
		signature: The signature that matched, normalized: the hex of the expected MAC, the
			same however the sender spelled it (upper-case hex, base64 variants, spaces, the
			other signatures of the header), so that `ReplayGuard` cannot be fooled by a
			respelled copy.
		timestamp: The signed time (Unix seconds), when the scheme signs one.
		delivery: The sender's id of this delivery, when it sends one (``webhook-id``,
			``X-GitHub-Delivery``, ``X-Shopify-Event-Id``); a retry of one delivery carries the same id.
	"""

	scheme: str
	signature: str
	timestamp: int | None = None
	delivery: str | None = None


def _header(headers: Mapping[str, str], name: str) -> str | None:
	lowered = name.lower()
	for key, value in headers.items():
		if key.lower() == lowered:
			return value
	return None


def _need(headers: Mapping[str, str], name: str, scheme: str) -> str:
	value = _header(headers, name)
	if value is None or not value.strip():
		raise SignatureError(
			f"the request is not signed: the {scheme} scheme needs the {name} header",
			reason="unsigned",
		)
	return value.strip()


def _mac(key: bytes, message: bytes) -> bytes:
	return hmac.new(key, message, hashlib.sha256).digest()


def _timestamp(text: str, name: str, now: float, tolerance: float) -> int:
	try:
		stamp = int(text)
	except ValueError:
		raise SignatureError(f"{name} must be a Unix time in seconds", reason="malformed") from None
	try:
		away = abs(now - stamp)
	except OverflowError:  # more digits than a float holds: no time near now
		away = math.inf
	if away > tolerance:
		raise SignatureError(
			f"the signed time ({name}) is more than {tolerance:g} seconds away from now: an old "
			"request replayed, or a clock that is off; send a fresh request",
			reason="expired",
		)
	return stamp


def _hex_match(expected: bytes, given: str) -> bool:
	# Bytes, not str: compare_digest raises TypeError on a str with a non-ASCII character, and a
	# header may hold any Latin-1 character.
	return hmac.compare_digest(expected.hex().encode(), given.strip().lower().encode())


def _b64(text: str) -> bytes:
	"""Base64 in any of its spellings (standard or URL-safe, padded or not); b"" if not base64."""
	raw = text.strip().replace("-", "+").replace("_", "/")
	try:
		return base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
	except (binascii.Error, ValueError):
		return b""


STANDARD_KEY_BYTES = 16
"""The fewest bytes of a Standard Webhooks key accepted: 128 bits (its specification asks for 24
to 64 random bytes; fewer than 16 is a key one could guess)."""


def _standard_key(secret: str) -> bytes:
	raw = secret.removeprefix("whsec_")
	try:
		return base64.b64decode(raw, validate=True)
	except (binascii.Error, ValueError):
		raise SignatureError(
			"a Standard Webhooks secret reads whsec_<base64 of 24 to 64 random bytes>",
			reason="malformed",
		) from None


def check_secret(scheme: Scheme | str, secret: str) -> None:
	"""Refuse a secret no request of ``scheme`` could be checked with (before anything listens).

	A ``standard`` secret must be ``whsec_<base64>`` of at least 16 bytes: one that is no
	base64 would refuse every request as ``malformed``, and ``whsec_`` alone is an empty key,
	which anyone can sign with.

	Args:
		scheme: The scheme.
		secret: The secret.

	Raises:
		SignatureError: It is empty, or no key of the scheme (``reason`` ``malformed``); the
			message never holds it.
	"""
	if not secret.strip():
		raise SignatureError("the secret is empty", reason="malformed")
	if scheme == "standard" and len(_standard_key(secret)) < STANDARD_KEY_BYTES:
		raise SignatureError(
			"a Standard Webhooks secret reads whsec_<base64 of 24 to 64 random bytes>; this "
			f"one holds fewer than {STANDARD_KEY_BYTES} bytes",
			reason="malformed",
		)


_TWILIO_HASHES = {"HMAC_SHA1": hashlib.sha1, "HMAC_SHA256": hashlib.sha256}


def _twilio_signed(url: str, body: bytes) -> tuple[list[str], bool]:
	"""What Twilio signs before the key: the URL (with and without its port) and the fields.

	Returns the texts to try (Twilio's libraries accept the URL with or without the scheme's
	port) and whether the body is a JSON one (signed by the URL's ``bodySHA256``).
	"""
	parts = urlsplit(url)
	json_body = "bodySHA256" in parse_qs(parts.query)
	tail = ""
	if not json_body:
		fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
		tail = "".join(k + v for k in sorted(fields) for v in sorted(set(fields[k])))
	# As Twilio's libraries do: the host as written (its case kept), with and without the port.
	if parts.port:
		urls = [parts._replace(netloc=parts.netloc.rsplit(":", 1)[0]).geturl(), parts.geturl()]
	else:
		port = 443 if parts.scheme == "https" else 80
		urls = [parts.geturl(), parts._replace(netloc=f"{parts.netloc}:{port}").geturl()]
	return [u + tail for u in urls], json_body


def _twilio(secret: str, body: bytes, headers: Mapping[str, str], url: str | None) -> Verified:
	given = _need(headers, "X-Twilio-Signature", "twilio")
	if not url:
		raise SignatureError(
			"the twilio scheme signs the URL Twilio calls: give the webhook's url",
			reason="malformed",
		)
	settings = _header(headers, "X-Twilio-Webhooks-Signature-Settings") or ""
	algorithm = "HMAC_SHA1"
	for part in settings.split(","):
		name, eq, value = part.partition("=")
		if eq and name.strip() == "algorithm" and value.strip():
			algorithm = value.strip().upper()
	digest = _TWILIO_HASHES.get(algorithm)
	if digest is None:
		raise SignatureError(
			"X-Twilio-Webhooks-Signature-Settings names an algorithm other than HMAC_SHA1 or "
			"HMAC_SHA256",
			reason="malformed",
		)
	texts, json_body = _twilio_signed(url, body)
	if json_body:
		stated = parse_qs(urlsplit(url).query)["bodySHA256"][0].strip().lower()
		if not hmac.compare_digest(hashlib.sha256(body).hexdigest().encode(), stated.encode()):
			raise SignatureError(
				"the body's SHA-256 is not the URL's bodySHA256: a changed body",
				reason="invalid",
			)
	mac = _b64(given)
	for text in texts:
		expected = hmac.new(secret.encode(), text.encode(), digest).digest()
		if hmac.compare_digest(mac, expected):
			token = _header(headers, "I-Twilio-Idempotency-Token")
			return Verified("twilio", expected.hex(), None, token.strip() if token else None)
	raise SignatureError(
		"X-Twilio-Signature does not match: a wrong auth token, a changed body, or a url setting "
		"other than the URL Twilio calls",
		reason="invalid",
	)


def verify(
	scheme: Scheme | str,
	secret: str | Sequence[str],
	body: bytes,
	headers: Mapping[str, str],
	*,
	tolerance: float = DEFAULT_TOLERANCE,
	now: float | None = None,
	header: str = DEFAULT_HMAC_HEADER,
	url: str | None = None,
) -> Verified:
	"""Check a request's signature.

	Args:
		scheme: ``hmac``, ``standard``, ``github``, ``stripe``, ``slack``, ``shopify`` or
			``twilio``.
		secret: The shared secret (Stripe's ``whsec_...``, Slack's signing secret, ...), or
			several while one replaces another: the request verifies if it is signed with one
			of them (the first that matches gives `Verified.signature`, so keep the order).
		body: The raw request body, as received (never re-serialized JSON).
		headers: The request's headers (any case).
		tolerance: Seconds a signed timestamp may be away from ``now``.
		now: The current Unix time (default: the clock).
		header: The header of the ``hmac`` scheme.
		url: The URL the sender called, its query included (``twilio``, which signs it).

	Returns:
		What the signature tells (its time and delivery id).

	Raises:
		SignatureError: The request is unsigned, malformed, wrongly signed or too old.
	"""
	secrets = [secret] if isinstance(secret, str) else [s for s in secret if s]
	if not secrets or not secrets[0]:
		raise SignatureError("no secret is configured to check signatures with", reason="unsigned")
	clock = time.time() if now is None else now
	wrong: list[SignatureError] = []
	for one in secrets:
		try:
			if scheme == "twilio":
				return _twilio(one, body, headers, url)
			return _verify(scheme, one, body, headers, tolerance, clock, header)
		except SignatureError as exc:
			if exc.reason != "invalid":  # the same for every secret: unsigned, expired, ...
				raise
			wrong.append(exc)
	raise wrong[0]


def _verify(
	scheme: Scheme | str,
	secret: str,
	body: bytes,
	headers: Mapping[str, str],
	tolerance: float,
	clock: float,
	header: str,
) -> Verified:
	key = secret.encode()
	if scheme in ("hmac", "github"):
		name = "X-Hub-Signature-256" if scheme == "github" else header
		given = _need(headers, name, scheme)
		if not given.startswith("sha256="):
			raise SignatureError(f"{name} must read sha256=<hex digest>", reason="malformed")
		expected = _mac(key, body)
		if not _hex_match(expected, given.removeprefix("sha256=")):
			raise SignatureError(
				f"the {name} signature does not match the body: a wrong secret, or a changed body",
				reason="invalid",
			)
		delivery = _header(headers, "X-GitHub-Delivery") if scheme == "github" else None
		return Verified(scheme, expected.hex(), None, delivery.strip() if delivery else None)
	if scheme == "shopify":
		given = _need(headers, "X-Shopify-Hmac-Sha256", scheme)
		expected = _mac(key, body)
		if not hmac.compare_digest(_b64(given), expected):
			raise SignatureError(
				"X-Shopify-Hmac-Sha256 (the base64 of the body's HMAC-SHA256) does not match: a "
				"wrong client secret, or a changed body",
				reason="invalid",
			)
		event = _header(headers, "X-Shopify-Event-Id") or _header(headers, "X-Shopify-Webhook-Id")
		return Verified(scheme, expected.hex(), None, event.strip() if event else None)
	if scheme == "stripe":
		given = _need(headers, "Stripe-Signature", scheme)
		parts = [p.partition("=") for p in given.split(",")]
		stamps = [v.strip() for k, _, v in parts if k.strip() == "t"]
		signatures = [v.strip() for k, _, v in parts if k.strip() == "v1"]
		if len(stamps) != 1 or not signatures:
			raise SignatureError(
				"Stripe-Signature must read t=<unix time>,v1=<hex digest>", reason="malformed"
			)
		stamp = _timestamp(stamps[0], "Stripe-Signature t", clock, tolerance)
		expected = _mac(key, stamps[0].encode() + b"." + body)
		match = next((s for s in signatures if _hex_match(expected, s)), None)
		if match is None:
			raise SignatureError(
				"no v1 signature of Stripe-Signature matches: a wrong endpoint secret, or a "
				"changed body",
				reason="invalid",
			)
		return Verified(scheme, expected.hex(), stamp, None)
	if scheme == "slack":
		given = _need(headers, "X-Slack-Signature", scheme)
		stamp_text = _need(headers, "X-Slack-Request-Timestamp", scheme)
		stamp = _timestamp(stamp_text, "X-Slack-Request-Timestamp", clock, tolerance)
		if not given.startswith("v0="):
			raise SignatureError("X-Slack-Signature must read v0=<hex digest>", reason="malformed")
		expected = _mac(key, b"v0:" + stamp_text.encode() + b":" + body)
		if not _hex_match(expected, given.removeprefix("v0=")):
			raise SignatureError(
				"X-Slack-Signature does not match: a wrong signing secret, or a changed body",
				reason="invalid",
			)
		return Verified(scheme, expected.hex(), stamp, None)
	if scheme == "standard":
		wid = _need(headers, "webhook-id", scheme)
		stamp_text = _need(headers, "webhook-timestamp", scheme)
		given = _need(headers, "webhook-signature", scheme)
		stamp = _timestamp(stamp_text, "webhook-timestamp", clock, tolerance)
		mac = _mac(_standard_key(secret), f"{wid}.{stamp_text}.".encode() + body)
		for candidate in given.split():
			version, _, value = candidate.partition(",")
			if version == "v1" and hmac.compare_digest(_b64(value), mac):
				return Verified(scheme, mac.hex(), stamp, wid)
		raise SignatureError(
			"no v1 signature of webhook-signature matches: a wrong secret, or a changed body",
			reason="invalid",
		)
	raise SignatureError(
		f"unknown signature scheme {scheme!r}; use one of {', '.join(SCHEMES)}",
		reason="malformed",
	)


def sign(
	scheme: Scheme | str,
	secret: str,
	body: bytes,
	*,
	timestamp: int | None = None,
	delivery: str = "msg_openmolt",
	header: str = DEFAULT_HMAC_HEADER,
	url: str = "",
) -> dict[str, str]:
	"""The headers a sender of that scheme adds: for your own senders, and for tests.

	Args:
		scheme: The scheme.
		secret: The shared secret.
		body: The body to send.
		timestamp: The time to sign (default: now), for the schemes that sign one.
		delivery: The ``webhook-id`` of the ``standard`` scheme.
		header: The header of the ``hmac`` scheme.
		url: The URL called, its query included (``twilio``: a JSON body's URL holds its
			``bodySHA256``).

	Raises:
		SignatureError: The scheme is unknown, or a ``standard`` secret is not ``whsec_<base64>``.
	"""
	stamp = str(int(time.time()) if timestamp is None else timestamp)
	key = secret.encode()
	if scheme == "hmac":
		return {header: "sha256=" + _mac(key, body).hex()}
	if scheme == "github":
		return {"X-Hub-Signature-256": "sha256=" + _mac(key, body).hex()}
	if scheme == "shopify":
		return {"X-Shopify-Hmac-Sha256": base64.b64encode(_mac(key, body)).decode()}
	if scheme == "twilio":
		text = _twilio_signed(url, body)[0][0]
		mac = hmac.new(key, text.encode(), hashlib.sha1).digest()
		return {"X-Twilio-Signature": base64.b64encode(mac).decode()}
	if scheme == "stripe":
		return {"Stripe-Signature": f"t={stamp},v1={_mac(key, stamp.encode() + b'.' + body).hex()}"}
	if scheme == "slack":
		digest = _mac(key, b"v0:" + stamp.encode() + b":" + body).hex()
		return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}
	if scheme == "standard":
		mac = _mac(_standard_key(secret), f"{delivery}.{stamp}.".encode() + body)
		return {
			"webhook-id": delivery,
			"webhook-timestamp": stamp,
			"webhook-signature": "v1," + base64.b64encode(mac).decode(),
		}
	raise SignatureError(
		f"unknown signature scheme {scheme!r}; use one of {', '.join(SCHEMES)}",
		reason="malformed",
	)


class SeenStore(Protocol):
	"""Where a `ReplayGuard` also keeps what it has seen, so that a restart forgets nothing.

	``openmolt serve`` gives one (a table in the run store's SQLite file) when a run store is
	configured. Keys are the guard's (``sig:<hex>``, ``id:<delivery>``); an entry with ``until``
	None is kept for good, else until that Unix time.
	"""

	def seen(self, keys: Sequence[str], now: float) -> bool:
		"""Whether one of ``keys`` is kept and not expired at ``now``."""
		...

	def add(self, keys: Sequence[str], until: float | None) -> None:
		"""Keep ``keys`` until ``until`` (None: for good)."""
		...

	def discard(self, keys: Sequence[str]) -> None:
		"""Drop ``keys`` (their request's run could not start)."""
		...

	def take(self, entries: Mapping[str, float | None], now: float) -> str | None:
		"""Keep every key of ``entries`` (each until its time) unless one is kept already.

		One step, atomic across every process on the store (a unique key, one transaction): of
		two servers taking one delivery at once, one takes it. Expired entries do not count.

		Args:
			entries: The keys, each with its ``until`` (None: for good), in the order to report.
			now: The current Unix time.

		Returns:
			The first key of ``entries`` kept and not expired at ``now`` (nothing was kept),
			else None (all are kept now).
		"""
		...


class ReplayGuard:
	"""Refuses a signature (or a delivery id) seen before, for as long as it could be valid.

	Keys are the verified, normalized signature (`Verified.signature`: the expected MAC, so a
	respelled copy of a signature is the same key) and the delivery id. A timestamped signature
	is remembered until its signed time leaves the window (``timestamp + tolerance``, Unix
	time); the oldest of those go first past ``size`` entries. One without a time (``hmac``,
	``github``) is valid forever, so it is remembered for the guard's life (``keep`` None, the
	default) or ``keep`` seconds, and never pushed out by newer ones. With a ``store`` (a
	`SeenStore`) every entry is also kept there, so a restart forgets nothing, and memory keeps
	only the newest ``size`` of them; without one it lives in memory, and after a restart only
	the timestamp window still holds. A delivery id is kept at least ``deliveries`` seconds,
	past its signature's window: senders retry a delivery for hours or days, each time signed
	anew, and a retry must not start a second run.

	Args:
		tolerance: The window of the timestamped schemes, in seconds.
		keep: How long to remember signatures without a time (None: for the guard's life).
		size: The most timestamped entries kept in memory (and, with a store, of the others).
		store: A durable store of what was seen (None: memory only).
		deliveries: How long to remember a delivery id at least, in seconds (default three
			days, as long as Stripe retries).
	"""

	def __init__(
		self,
		*,
		tolerance: float = DEFAULT_TOLERANCE,
		keep: float | None = None,
		size: int = 100_000,
		store: SeenStore | None = None,
		deliveries: float = DELIVERY_KEEP,
	) -> None:
		self.tolerance = tolerance
		self.deliveries = deliveries
		self.keep = keep
		self.size = size
		if store is not None and not callable(getattr(store, "take", None)):
			from openmolt_core.errors import ConfigurationError

			raise ConfigurationError(
				f"store: {type(store).__name__} has no take(entries, now), the one-step claim "
				"of a SeenStore (keep the keys unless one is kept, in one transaction): without "
				"it two servers on the store could both run one delivery; add it"
			)
		self.store = store
		self._timed: OrderedDict[str, float] = OrderedDict()
		self._kept: dict[str, float] = {}

	def _keys(self, verified: Verified) -> list[str]:
		# A digest of the MAC, not the MAC: what a store keeps could not sign anything.
		keys = [f"sig:{hashlib.sha256(verified.signature.encode()).hexdigest()}"]
		if verified.delivery:
			keys.append(f"id:{verified.delivery}")
		return keys

	def _until(self, verified: Verified, clock: float) -> float | None:
		if verified.timestamp is not None:
			return verified.timestamp + self.tolerance + 1
		return None if self.keep is None else clock + self.keep

	def seen(self, verified: Verified, *, now: float | None = None, signature: bool = True) -> bool:
		"""Whether this signature (or delivery id) came before, without remembering it.

		Args:
			verified: The verified request.
			now: The current Unix time (default: the clock).
			signature: Look the signature up too (False: the delivery id only).
		"""
		clock = time.time() if now is None else now
		keys = self._keys(verified)[0 if signature else 1 :]
		if not keys:
			return False
		for k in keys:
			until = self._timed.get(k, self._kept.get(k))
			if until is not None and until >= clock:
				return True
		return self.store is not None and self.store.seen(keys, clock)

	def delivered(self, delivery: str, *, now: float | None = None) -> bool:
		"""Whether a request with this delivery id was accepted (a retry of it is no new run).

		Args:
			delivery: The sender's id of the delivery.
			now: The current Unix time (default: the clock).
		"""
		return self.seen(Verified("", "", None, delivery), now=now, signature=False)

	def _entries(self, verified: Verified, clock: float) -> dict[str, float | None]:
		"""The keys a request is kept under, each with its ``until``: the delivery id first."""
		until = self._until(verified, clock)
		keys = self._keys(verified)
		kept: dict[str, float | None] = dict.fromkeys(keys[::-1], until)
		if verified.delivery and until is not None:  # retried past the signature's window
			kept[keys[-1]] = max(until, clock + self.deliveries)
		return kept

	def claim(self, verified: Verified, *, now: float | None = None) -> str | None:
		"""Take a request if neither its delivery id nor its signature was taken: one step.

		What a server does with each verified request, instead of `seen` then `remember`: two
		requests (or two servers on one `SeenStore`) with the same delivery can both find it
		unseen before either remembers it, and both would run it. Here the store keeps the keys
		only if none is kept (`SeenStore.take`, one transaction), so exactly one claim wins.
		A claim whose run then fails to start is given back with `forget`.

		Args:
			verified: The verified request.
			now: The current Unix time (default: the clock).

		Returns:
			None when this call took it; ``"delivery"`` when its delivery id was taken before
			(a retry), ``"signature"`` when its signature was (a replay).
		"""
		clock = time.time() if now is None else now
		entries = self._entries(verified, clock)
		for key in entries:
			until = self._timed.get(key, self._kept.get(key))
			if until is not None and until >= clock:
				return _taken(key)
		if self.store is not None:
			held = self.store.take(entries, clock)
			if held is not None:
				return _taken(held)
		self._keep(verified, entries, clock)
		return None

	def remember(self, verified: Verified, *, now: float | None = None) -> None:
		"""Remember a request that was accepted (whether or not it was seen: see `claim`).

		Args:
			verified: The verified request.
			now: The current Unix time (default: the clock).
		"""
		clock = time.time() if now is None else now
		entries = self._entries(verified, clock)
		self._keep(verified, entries, clock)
		if self.store is not None:
			for key, until in entries.items():
				self.store.add([key], until)

	def _keep(self, verified: Verified, kept: dict[str, float | None], clock: float) -> None:
		"""Keep the entries in memory (the store, if any, has them already)."""
		for k, u in kept.items():
			if verified.timestamp is None:
				self._kept[k] = math.inf if u is None else u
			else:
				self._timed[k] = u if u is not None else math.inf
				self._timed.move_to_end(k)
		if len(self._timed) > self.size:
			for k in [k for k, u in self._timed.items() if u < clock]:
				del self._timed[k]
			while len(self._timed) > self.size:
				self._timed.popitem(last=False)
		if self.keep is not None and len(self._kept) > self.size:
			for k in [k for k, u in self._kept.items() if u < clock]:
				del self._kept[k]
		if self.store is not None:
			while len(self._kept) > self.size:  # the store keeps them all: memory is a cache
				del self._kept[next(iter(self._kept))]

	def forget(self, verified: Verified) -> None:
		"""Forget a request (its run could not start: the sender may send it again)."""
		keys = self._keys(verified)
		for k in keys:
			self._timed.pop(k, None)
			self._kept.pop(k, None)
		if self.store is not None:
			self.store.discard(keys)

	def check(self, verified: Verified, *, now: float | None = None) -> None:
		"""Take a verified request (`claim`, one step); raise if it was seen already.

		Args:
			verified: The verified request.
			now: The current Unix time (default: the clock).

		Raises:
			SignatureError: The same signature (or delivery id) came before (``replayed``).
		"""
		if self.claim(verified, now=now) is not None:
			raise SignatureError(
				"this signed request was received before: a replay (or a retry of a delivery "
				"that was already accepted)",
				reason="replayed",
			)


def _taken(key: str) -> str:
	"""What a kept key says of a request: its delivery was taken, or its signature."""
	return "delivery" if key.startswith("id:") else "signature"
