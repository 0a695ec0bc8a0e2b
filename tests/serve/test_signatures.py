"""Webhook signatures, checked against the examples the vendors document and their own SDKs."""

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
import stripe
from slack_sdk.signature import SignatureVerifier

from openmolt_serve.signatures import ReplayGuard, SignatureError, sign, verify

# GitHub, "Validating webhook deliveries" > "Testing the webhook payload validation":
# https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"

# Slack, "Verifying requests from Slack" (the worked example of the signing steps):
# https://api.slack.com/authentication/verifying-requests-from-slack
SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SLACK_TIMESTAMP = 1531420618
SLACK_BODY = (
	b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
	b"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
	b"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmib"
	b"IGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)
SLACK_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"

# Standard Webhooks, the test vector of its reference libraries (the "sign function works" test of
# each library in https://github.com/standard-webhooks/standard-webhooks/tree/main/libraries).
STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
STANDARD_HEADERS = {
	"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
	"webhook-timestamp": "1614265330",
	"webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}
STANDARD_BODY = b'{"test": 2432232314}'

STRIPE_SECRET = "whsec_test_secret"
STRIPE_BODY = b'{"id": "evt_test_webhook", "object": "event"}'


def test_githubs_documented_example_verifies() -> None:
	"""GitHub's test values: the secret, "Hello, World!" and its published signature."""
	headers = {"x-hub-signature-256": GITHUB_SIGNATURE, "X-GitHub-Delivery": "72d3162e"}
	verified = verify("github", GITHUB_SECRET, GITHUB_BODY, headers)
	assert verified.delivery == "72d3162e" and verified.timestamp is None
	assert sign("github", GITHUB_SECRET, GITHUB_BODY) == {"X-Hub-Signature-256": GITHUB_SIGNATURE}
	with pytest.raises(SignatureError, match="does not match") as err:
		verify("github", GITHUB_SECRET, GITHUB_BODY + b" ", headers)
	assert err.value.reason == "invalid"
	with pytest.raises(SignatureError, match="does not match"):
		verify("github", "another secret", GITHUB_BODY, headers)


def test_slacks_documented_example_verifies_at_its_time_and_expires_after() -> None:
	"""Slack's worked example verifies at its timestamp; five minutes later it is refused."""
	headers = {
		"X-Slack-Request-Timestamp": str(SLACK_TIMESTAMP),
		"X-Slack-Signature": SLACK_SIGNATURE,
	}
	verified = verify("slack", SLACK_SECRET, SLACK_BODY, headers, now=SLACK_TIMESTAMP + 10)
	assert verified.timestamp == SLACK_TIMESTAMP
	assert sign("slack", SLACK_SECRET, SLACK_BODY, timestamp=SLACK_TIMESTAMP) == headers
	with pytest.raises(SignatureError, match="more than 300 seconds") as err:
		verify("slack", SLACK_SECRET, SLACK_BODY, headers, now=SLACK_TIMESTAMP + 301)
	assert err.value.reason == "expired"
	with pytest.raises(SignatureError, match="more than 300 seconds"):  # a clock far ahead too
		verify("slack", SLACK_SECRET, SLACK_BODY, headers, now=SLACK_TIMESTAMP - 301)


def test_our_slack_signatures_are_what_slacks_sdk_verifies() -> None:
	"""slack_sdk's SignatureVerifier accepts what sign() makes, and we accept what it accepts."""
	now = int(time.time())
	headers = sign("slack", SLACK_SECRET, b'{"type":"event_callback"}', timestamp=now)
	sdk = SignatureVerifier(SLACK_SECRET)
	assert sdk.is_valid(
		b'{"type":"event_callback"}',
		headers["X-Slack-Request-Timestamp"],
		headers["X-Slack-Signature"],
	)
	sdk_signature = sdk.generate_signature(timestamp=str(now), body=b"a=b")
	verify(
		"slack",
		SLACK_SECRET,
		b"a=b",
		{"X-Slack-Request-Timestamp": str(now), "X-Slack-Signature": sdk_signature or ""},
	)


def test_stripe_signatures_agree_with_stripes_library_both_ways() -> None:
	"""stripe-python verifies our header; we verify its header, with several v1 values and a tolerance."""
	now = int(time.time())
	ours = sign("stripe", STRIPE_SECRET, STRIPE_BODY, timestamp=now)["Stripe-Signature"]
	assert stripe.WebhookSignature.verify_header(STRIPE_BODY.decode(), ours, STRIPE_SECRET, 300)
	theirs = stripe.WebhookSignature.generate_signature_header(
		STRIPE_BODY.decode(), STRIPE_SECRET, timestamp=now
	)
	# Stripe sends one v1 per active secret while a secret is rolled: any may match.
	rolled = f"{theirs},v1={'0' * 64},v0=ignored"
	verified = verify("stripe", STRIPE_SECRET, STRIPE_BODY, {"Stripe-Signature": rolled})
	assert verified.timestamp == now
	old = stripe.WebhookSignature.generate_signature_header(
		STRIPE_BODY.decode(), STRIPE_SECRET, timestamp=now - 301
	)
	with pytest.raises(SignatureError, match="more than 300 seconds"):
		verify("stripe", STRIPE_SECRET, STRIPE_BODY, {"Stripe-Signature": old})
	# The same old header passes with the tolerance raised, as Stripe's own check does.
	verify("stripe", STRIPE_SECRET, STRIPE_BODY, {"Stripe-Signature": old}, tolerance=600)
	with pytest.raises(stripe.SignatureVerificationError):
		stripe.WebhookSignature.verify_header(STRIPE_BODY.decode(), old, STRIPE_SECRET, 300)
	with pytest.raises(SignatureError, match="no v1 signature") as err:
		verify("stripe", "whsec_other", STRIPE_BODY, {"Stripe-Signature": theirs})
	assert err.value.reason == "invalid"


def test_the_standard_webhooks_example_verifies() -> None:
	"""The Standard Webhooks reference libraries' vector: secret, id, time, body and signature."""
	verified = verify(
		"standard", STANDARD_SECRET, STANDARD_BODY, STANDARD_HEADERS, now=1614265330 + 5
	)
	assert verified.delivery == "msg_p5jXN8AQM9LWM0D4loKWxJek"
	made = sign(
		"standard",
		STANDARD_SECRET,
		STANDARD_BODY,
		timestamp=1614265330,
		delivery="msg_p5jXN8AQM9LWM0D4loKWxJek",
	)
	assert made == STANDARD_HEADERS
	# Several signatures separated by spaces (a rolled secret): any v1 may match.
	rolled = {
		**STANDARD_HEADERS,
		"webhook-signature": "v1,bm9wZQ== " + STANDARD_HEADERS["webhook-signature"],
	}
	verify("standard", STANDARD_SECRET, STANDARD_BODY, rolled, now=1614265330)
	with pytest.raises(SignatureError, match="more than 300 seconds"):
		verify("standard", STANDARD_SECRET, STANDARD_BODY, STANDARD_HEADERS)


def test_the_plain_hmac_scheme_and_its_configurable_header() -> None:
	"""hmac signs the body in X-Signature-256 (or the configured header)."""
	headers = sign("hmac", "s3cret", b"{}", header="X-Acme-Signature")
	assert list(headers) == ["X-Acme-Signature"]
	verify("hmac", "s3cret", b"{}", headers, header="X-Acme-Signature")
	with pytest.raises(SignatureError, match="needs the X-Signature-256 header") as err:
		verify("hmac", "s3cret", b"{}", headers)
	assert err.value.reason == "unsigned"


@pytest.mark.parametrize(
	("scheme", "headers", "reason", "message"),
	[
		("github", {}, "unsigned", "needs the X-Hub-Signature-256 header"),
		("github", {"X-Hub-Signature-256": "sha1=abc"}, "malformed", "must read sha256="),
		("stripe", {}, "unsigned", "needs the Stripe-Signature header"),
		("stripe", {"Stripe-Signature": "v1=abc"}, "malformed", "must read t=<unix time>"),
		("stripe", {"Stripe-Signature": "t=soon,v1=abc"}, "malformed", "Unix time"),
		("slack", {"X-Slack-Signature": "v0=ab"}, "unsigned", "X-Slack-Request-Timestamp"),
		("standard", {"webhook-id": "x"}, "unsigned", "webhook-timestamp"),
		("nope", {}, "malformed", "unknown signature scheme 'nope'"),
	],
)
def test_unsigned_and_malformed_requests_are_refused_with_the_reason(
	scheme: str, headers: dict[str, str], reason: str, message: str
) -> None:
	"""Each missing or malformed header is refused, naming the header and the expected form."""
	with pytest.raises(SignatureError, match=message) as err:
		verify(scheme, "whsec_c2VjcmV0", b"{}", headers)
	assert err.value.reason == reason


def test_no_message_contains_the_secret_or_the_expected_signature() -> None:
	"""A wrong signature's error shows neither the secret nor what the signature should be."""
	secret = "sup3r-s3cret-value"
	expected = sign("github", secret, b"body")["X-Hub-Signature-256"]
	with pytest.raises(SignatureError) as err:
		verify("github", secret, b"body", {"X-Hub-Signature-256": "sha256=" + "0" * 64})
	assert secret not in str(err.value) and expected[7:] not in str(err.value)


def test_a_replay_guard_refuses_a_signature_or_delivery_seen_before() -> None:
	"""A second request with the same signature, or the same delivery id, is a replay."""
	guard = ReplayGuard(tolerance=300, keep=60)
	first = verify("github", GITHUB_SECRET, GITHUB_BODY, {"X-Hub-Signature-256": GITHUB_SIGNATURE})
	guard.check(first, now=0)
	with pytest.raises(SignatureError, match="received before") as err:
		guard.check(first, now=30)
	assert err.value.reason == "replayed"
	guard.check(first, now=61)  # forgotten after `keep` (a signature without a time)
	delivered = verify("standard", STANDARD_SECRET, STANDARD_BODY, STANDARD_HEADERS, now=1614265330)
	guard.check(delivered, now=100)
	again = type(delivered)("standard", "v1,other", delivered.timestamp, delivered.delivery)
	with pytest.raises(SignatureError, match="received before"):
		guard.check(again, now=101)


def test_a_replay_guard_keeps_at_most_size_timestamped_entries() -> None:
	"""The oldest timestamped entries go first when the guard is full."""
	guard = ReplayGuard(size=2)
	made = [
		verify(
			"stripe", "k", str(i).encode(), sign("stripe", "k", str(i).encode(), timestamp=0), now=0
		)
		for i in range(3)
	]
	for one in made:
		guard.check(one, now=0)
	guard.check(made[0], now=1)  # pushed out by the third
	with pytest.raises(SignatureError):
		guard.check(made[2], now=1)


def test_signatures_without_a_time_are_refused_for_the_guards_life() -> None:
	"""hmac and GitHub signatures never expire, so the guard never forgets them (nor evicts them)."""
	guard = ReplayGuard(size=2)
	first = verify("github", GITHUB_SECRET, GITHUB_BODY, {"X-Hub-Signature-256": GITHUB_SIGNATURE})
	guard.check(first, now=0)
	for i in range(10):  # many newer ones, timed and untimed, push nothing out
		body = str(i).encode()
		guard.check(verify("hmac", "k", body, sign("hmac", "k", body)), now=i)
		timed = verify("stripe", "k", body, sign("stripe", "k", body, timestamp=i), now=i)
		guard.check(timed, now=i)
	for later in (3601, 86_400 * 365):
		with pytest.raises(SignatureError, match="received before") as err:
			guard.check(first, now=later)
		assert err.value.reason == "replayed"


def _respelled(scheme: str, headers: dict[str, str]) -> list[dict[str, str]]:
	"""Other spellings of the same valid signature (case, spaces, variants, extra signatures)."""
	out: list[dict[str, str]] = []
	name, value = next((k, v) for k, v in headers.items() if "ignature" in k or "Hmac" in k)
	if scheme in ("hmac", "github"):
		digest = value.removeprefix("sha256=")
		out += [{name: "sha256=" + digest.upper()}, {name: f"  sha256={digest}  "}]
		out += [{name: "sha256= " + digest.upper() + " "}]
	elif scheme == "slack":
		digest = value.removeprefix("v0=")
		out += [{**headers, name: "v0=" + digest.upper()}, {**headers, name: f" v0={digest}\t"}]
	elif scheme == "stripe":
		t, _, v1 = value.partition(",")
		digest = v1.removeprefix("v1=")
		out += [
			{name: f"{t},v1={digest.upper()}"},
			{name: f" {t} , v1= {digest} "},
			{name: f"{t},v1={'0' * 64},v1={digest},v0=abc"},
			{name: f"{t},v1={digest},v1={digest.upper()}"},
		]
	elif scheme == "shopify":
		url = value.replace("+", "-").replace("/", "_")
		out += [{name: value.rstrip("=")}, {name: f" {url} "}, {name: url.rstrip("=")}]
	elif scheme == "standard":
		b64 = value.removeprefix("v1,")
		url = b64.replace("+", "-").replace("/", "_")
		out += [
			{**headers, name: f"v1,{b64.rstrip('=')}"},
			{**headers, name: f"v1,{url}"},
			{**headers, name: f"v1,{url.rstrip('=')}"},
			{**headers, name: f"v1a,xyz v1,{'A' * 44} v1,{b64}"},
			{**headers, name: f"  v1,{b64}   v1,{b64}  "},
		]
	return out


@pytest.mark.parametrize("scheme", ["hmac", "github", "slack", "stripe", "standard", "shopify"])
def test_a_respelled_signature_is_the_same_request_for_the_replay_guard(scheme: str) -> None:
	"""Upper-case hex, spaces, base64 variants or extra signatures do not make a new request."""
	secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=" if scheme == "standard" else "s3cret"
	body = b'{"action": "opened"}'
	now = int(time.time())
	headers = sign(scheme, secret, body, timestamp=now)
	guard = ReplayGuard()
	first = verify(scheme, secret, body, headers, now=now)
	guard.check(first, now=now)
	variants = _respelled(scheme, headers)
	assert variants
	for other in variants:
		again = verify(scheme, secret, body, other, now=now)
		assert again.signature == first.signature
		with pytest.raises(SignatureError, match="received before") as err:
			guard.check(again, now=now + 1)
		assert err.value.reason == "replayed"


def test_a_replay_guard_with_a_store_remembers_across_restarts() -> None:
	"""Entries go to the store too: a new guard over the same store refuses what the old saw."""

	class Seen:
		def __init__(self) -> None:
			self.kept: dict[str, float | None] = {}

		def seen(self, keys: Sequence[str], now: float) -> bool:
			return any(
				k in self.kept and (self.kept[k] is None or self.kept[k] >= now)
				for k in keys  # type: ignore[operator]
			)

		def add(self, keys: Sequence[str], until: float | None) -> None:
			self.kept.update(dict.fromkeys(keys, until))

		def discard(self, keys: Sequence[str]) -> None:
			for k in keys:
				self.kept.pop(k, None)

		def take(self, entries: Mapping[str, float | None], now: float) -> str | None:
			held = next((k for k in entries if self.seen([k], now)), None)
			if held is None:
				self.kept.update(entries)
			return held

	store = Seen()
	first = verify("github", GITHUB_SECRET, GITHUB_BODY, {"X-Hub-Signature-256": GITHUB_SIGNATURE})
	ReplayGuard(store=store).check(first, now=0)
	with pytest.raises(SignatureError, match="received before"):
		ReplayGuard(store=store).check(first, now=10**9)
	timed = verify("stripe", "k", b"{}", sign("stripe", "k", b"{}", timestamp=100), now=100)
	ReplayGuard(store=store).check(timed, now=100)
	with pytest.raises(SignatureError):
		ReplayGuard(store=store).check(timed, now=300)
	ReplayGuard(store=store).forget(timed)
	ReplayGuard(store=store).check(timed, now=300)  # forgotten: its run could not start


def test_a_store_without_an_atomic_take_is_refused_with_the_fix() -> None:
	"""A SeenStore of the older protocol (seen, add, discard) could let two servers run one delivery."""
	from openmolt_core.errors import ConfigurationError

	class Old:
		def seen(self, keys: Sequence[str], now: float) -> bool:
			return False

		def add(self, keys: Sequence[str], until: float | None) -> None: ...

		def discard(self, keys: Sequence[str]) -> None: ...

	with pytest.raises(ConfigurationError, match=r"store: .*take\(entries, now\)"):
		ReplayGuard(store=Old())  # type: ignore[arg-type]


def test_with_a_store_signatures_without_a_time_are_kept_in_memory_up_to_size(
	tmp_path: Path,
) -> None:
	"""The store keeps them all (a replay of the first is still refused); memory holds `size`."""
	from openmolt_serve._seen import SqliteSeen

	store = SqliteSeen(tmp_path / "seen.sqlite", "hook:Triage")
	guard = ReplayGuard(size=2, store=store)
	made = [
		verify("hmac", "k", str(i).encode(), sign("hmac", "k", str(i).encode())) for i in range(5)
	]
	for one in made:
		guard.check(one)
	assert len(guard._kept) <= 2
	with pytest.raises(SignatureError, match="received before"):
		guard.check(made[0])
	store.close()


@pytest.mark.parametrize(
	("scheme", "headers"),
	[
		("hmac", {"X-Signature-256": "sha256=\xe9"}),
		("github", {"X-Hub-Signature-256": "sha256=caf\xe9"}),
		("stripe", {"Stripe-Signature": "t={now},v1=\xe9\xe9"}),
		("slack", {"X-Slack-Signature": "v0=\xe9", "X-Slack-Request-Timestamp": "{now}"}),
		(
			"standard",
			{"webhook-id": "x", "webhook-timestamp": "{now}", "webhook-signature": "v1,\xe9"},
		),
	],
)
def test_a_signature_with_a_non_ascii_character_is_invalid_not_a_crash(
	scheme: str, headers: dict[str, str]
) -> None:
	"""A header decodes as Latin-1: a non-ASCII signature is refused, never a TypeError (a 500)."""
	now = str(int(time.time()))
	filled = {k: v.replace("{now}", now) for k, v in headers.items()}
	secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=" if scheme == "standard" else "s3cret"
	with pytest.raises(SignatureError) as err:
		verify(scheme, secret, b"{}", filled)
	assert err.value.reason == "invalid"


@pytest.mark.parametrize(
	("scheme", "headers"),
	[
		("stripe", {"Stripe-Signature": "t={huge},v1=ab"}),
		("slack", {"X-Slack-Signature": "v0=ab", "X-Slack-Request-Timestamp": "{huge}"}),
		(
			"standard",
			{"webhook-id": "x", "webhook-timestamp": "{huge}", "webhook-signature": "v1,ab"},
		),
	],
)
@pytest.mark.parametrize("huge", ["9" * 400, "-" + "9" * 400])
def test_a_timestamp_too_large_for_a_float_is_expired_not_a_crash(
	scheme: str, headers: dict[str, str], huge: str
) -> None:
	"""A signed time of hundreds of digits is far from now (never an OverflowError: a 500)."""
	filled = {k: v.replace("{huge}", huge) for k, v in headers.items()}
	with pytest.raises(SignatureError) as err:
		verify(scheme, "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=", b"{}", filled)
	assert err.value.reason == "expired"


def test_a_claim_on_a_shared_file_is_won_once_and_drops_the_expired_entries(tmp_path: Path) -> None:
	"""Two processes' stores on one file: one claim of a key wins, an expired key may be claimed
	again, and a claim drops the scope's entries that expired long enough ago for every
	server's clock (a chat's ids do not pile up; one just expired here may not be on another)."""
	from openmolt_serve._seen import CLOCKS_APART, SqliteSeen

	path = tmp_path / "seen.sqlite"
	one, two = SqliteSeen(path, "chat:slack:Helper"), SqliteSeen(path, "chat:slack:Helper")
	now = time.time()
	assert one.claim("msg:1", now + 60)
	assert not two.claim("msg:1", now + 60)
	assert one.claim("msg:stale", now - 1)
	assert one.claim("msg:old", now - CLOCKS_APART - 1)
	assert one.seen(["msg:stale"], 0) and one.seen(["msg:old"], 0)  # kept, though expired
	assert two.claim("msg:2", now + 60)
	assert not one.seen(["msg:old"], 0)  # dropped by the next claim
	assert one.seen(["msg:stale"], 0)  # kept: another server's clock may be behind
	assert two.claim("msg:stale", now + 60)  # expired: a new message may take the id
	one.close()
	two.close()


@pytest.mark.parametrize("scheme", ["hmac", "github", "stripe", "slack", "standard"])
def test_while_a_secret_rotates_either_one_verifies(scheme: str) -> None:
	"""Given the new secret and the one it replaces, a request signed with either verifies.

	A sender switches to a new secret when its owner says so (GitHub, a form service: one
	secret at a time); the receiver must take both meanwhile, else deliveries fail in between.
	"""
	old, new = (
		(
			"whsec_" + "b2xkLXNlY3JldC1vZi10aGUtc2VuZGVy",
			"whsec_" + "bmV3LXNlY3JldC1vZi10aGUtc2VuZGVy",
		)
		if scheme == "standard"
		else ("old-secret", "new-secret")
	)
	body = b'{"n": 1}'
	for used in (old, new):
		headers = sign(scheme, used, body)
		got = verify(scheme, [new, old], body, headers)
		assert got.signature == verify(scheme, used, body, headers).signature
	with pytest.raises(SignatureError) as refused:
		verify(
			scheme,
			[new, old],
			body,
			sign(
				scheme,
				"another-one"
				if scheme != "standard"
				else "whsec_" + "YW5vdGhlci1vbmUtb2YtdGhlLXNlbmRlcg==",
				body,
			),
		)
	assert refused.value.reason == "invalid"
	assert "secret" not in str(refused.value).replace("a wrong secret", "").replace(
		"endpoint secret", ""
	).replace("signing secret", "")


def test_shopify_signs_the_raw_body_in_base64_and_names_its_event() -> None:
	"""Shopify: X-Shopify-Hmac-Sha256 is base64 of HMAC-SHA256 over the raw body (not hex).

	As Shopify's "Verify webhooks" computes it: ``base64(hmac_sha256(client secret, raw body))``;
	a retry carries the same X-Shopify-Event-Id, the id the guard keeps.
	"""
	import base64
	import hashlib
	import hmac

	secret, body = "shpss_client_secret", b'{"id": 820982911946154508, "email": "jon@example.com"}'
	theirs = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
	headers = {"X-Shopify-Hmac-Sha256": theirs, "X-Shopify-Event-Id": "98880550-7158-44d4-b7cd"}
	got = verify("shopify", secret, body, headers)
	assert got.delivery == "98880550-7158-44d4-b7cd" and got.timestamp is None
	assert sign("shopify", secret, body) == {"X-Shopify-Hmac-Sha256": theirs}
	with pytest.raises(SignatureError) as changed:
		verify("shopify", secret, body + b" ", headers)
	assert changed.value.reason == "invalid"
	hexed = {"X-Shopify-Hmac-Sha256": hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}
	with pytest.raises(SignatureError):
		verify("shopify", secret, body, hexed)
	with pytest.raises(SignatureError) as unsigned:
		verify("shopify", secret, body, {})
	assert unsigned.value.reason == "unsigned"


# Twilio, "Webhooks security" (its worked example, and the twilio-java test vector):
# https://www.twilio.com/docs/usage/webhooks/webhooks-security
TWILIO_TOKEN = "12345"
TWILIO_URL = "https://mycompany.com/myapp.php?foo=1&bar=2"
TWILIO_FORM = b"CallSid=CA1234567890ABCDE&Caller=%2B14158675309&Digits=1234&From=%2B14158675309&To=%2B18005551212"
TWILIO_SIGNATURE = "RSOYDt4T1cUTdK1PDd93/VVr8B8="


def test_twilios_documented_example_verifies_and_agrees_with_its_sdk() -> None:
	"""URL + the POST fields sorted by name, HMAC-SHA1 in base64; a JSON body by bodySHA256."""
	from urllib.parse import parse_qs

	from twilio.request_validator import RequestValidator

	headers = {"X-Twilio-Signature": TWILIO_SIGNATURE, "I-Twilio-Idempotency-Token": "idem-1"}
	got = verify("twilio", TWILIO_TOKEN, TWILIO_FORM, headers, url=TWILIO_URL)
	assert got.delivery == "idem-1" and got.timestamp is None
	# The port Twilio may or may not have signed, as its SDK accepts both.
	ported = "https://mycompany.com:443/myapp.php?foo=1&bar=2"
	assert verify("twilio", TWILIO_TOKEN, TWILIO_FORM, headers, url=ported).signature
	for wrong_url in (
		"https://mycompany.com/myapp.php?foo=1&bar=3",
		"https://evil.example/myapp.php?foo=1&bar=2",
	):
		with pytest.raises(SignatureError) as refused:
			verify("twilio", TWILIO_TOKEN, TWILIO_FORM, headers, url=wrong_url)
		assert refused.value.reason == "invalid"
	# Ours as Twilio's SDK computes them, for a form (a field given twice: both values signed)
	# and a JSON body (bodySHA256 in the URL).
	validator = RequestValidator(TWILIO_TOKEN)

	class Fields(dict[str, list[str]]):
		def getall(self, name: str) -> list[str]:
			return self[name]

	form = b"Body=hello+there&From=%2B15550100&To=%2B15550199&MediaUrl0=b&MediaUrl0=a"
	url = "https://Example.com/hooks/Triage"
	fields = Fields(parse_qs(form.decode(), keep_blank_values=True))
	mine = sign("twilio", TWILIO_TOKEN, form, url=url)["X-Twilio-Signature"]
	assert mine == validator.compute_signature(url, fields)
	assert validator.validate(url, fields, mine)
	assert verify("twilio", TWILIO_TOKEN, form, {"X-Twilio-Signature": mine}, url=url)
	body = b'{"event": "message.added", "text": "hi"}'
	json_url = f"{url}?bodySHA256={__import__('hashlib').sha256(body).hexdigest()}"
	theirs = validator.compute_signature(json_url, {})
	assert verify("twilio", TWILIO_TOKEN, body, {"X-Twilio-Signature": theirs}, url=json_url)
	assert sign("twilio", TWILIO_TOKEN, body, url=json_url) == {"X-Twilio-Signature": theirs}
	assert validator.validate(json_url, body.decode(), theirs)
	with pytest.raises(SignatureError) as changed:
		verify("twilio", TWILIO_TOKEN, body + b" ", {"X-Twilio-Signature": theirs}, url=json_url)
	assert changed.value.reason == "invalid"
	with pytest.raises(SignatureError) as nourl:
		verify("twilio", TWILIO_TOKEN, TWILIO_FORM, headers)
	assert nourl.value.reason == "malformed"
