"""``POST /hooks/<agent>``: a signed request starts a run with its payload as the input.

In order, before anything runs:

1. the agent must exist and have a webhook (else ``404``);
2. the body must fit ``maxBody`` (else ``413``, read no further) and arrive within
   `BODY_TIMEOUT <openmolt_serve._body.BODY_TIMEOUT>` seconds (else ``408``);
3. the signature must verify (`openmolt_serve.signatures`; else ``401`` with the reason);
4. a JSON body (or a form's ``payload`` field) nested deeper than the cap on model replies is
   ``422``;
5. a delivery id accepted before is a retry: ``200 {"status": "duplicate"}`` with its run id,
   and nothing new starts (senders such as Stripe retry until they see a 2xx);
6. a signature seen before is a replay: ``409``. The guard keys on the verified signature
   (the expected MAC), so a respelled copy (upper-case hex, spaces, a base64 variant, other
   signatures beside it) is the same request; signatures without a time (``hmac``,
   ``github``) are refused again for the server's life, and across restarts when a run store
   or a durable store is configured (`openmolt_serve._seen`);
7. the agent's rate limit must allow it (else ``429`` with ``Retry-After``; the request is not
   remembered, so the sender may retry it). Only verified requests count, so unsigned floods
   cannot use up the limit of the real sender;
8. the request is claimed (`ReplayGuard.claim <openmolt_serve.signatures.ReplayGuard.claim>`):
   its delivery id and signature are kept only if neither is, in one step (a unique key in the
   store's one transaction), so of two copies that passed the checks above at once, here or on
   another server on the same store, one runs and the other is answered as in 5 or 6.

Then the run starts, and the answer is ``202 {"run_id": ...}`` once it has (on a durable backend:
once its workflow is recorded), or after `ACK_WITHIN` seconds at most: senders count a slow
answer as a failed delivery (Slack waits three seconds, GitHub ten) and retry it, and a run of a
``session`` waits for the session's running turn to end before it starts. Such a queued run that
then fails to start (the sender was told ``202``) is recorded in the run store as a failed run
with the reason, masked (`openmolt_serve._launch.record_unstarted`), and its claim is given back:
the sender's retry runs. A run that could not start before the answer is a ``500``, its claim
given back too; a run that started keeps its claim (a retry is a duplicate). A delivery id the sender gives (``webhook-id``,
``X-GitHub-Delivery``, ``X-Shopify-Event-Id``, ``I-Twilio-Idempotency-Token``, the ``id`` of a Stripe event, the ``event_id`` of a Slack event) fixes the
run id, so the same delivery never starts two runs; without one, the verified signature fixes it
(the same signed request, retried to another server on the same durable store whose replay guard
never saw it, attaches to the run the first one started). A Slack ``url_verification`` request gets
its challenge back. The payload was written outside the operator's hands: the run starts tainted
(`openmolt_core.triggers.starting_taint`), unless the operator vouched for every payload this
webhook accepts (``trustPayload: true``, ``WebhookTrigger(trust_payload=True)``: their own CI or
back office, never a sender that relays a stranger's words). On the ``slack`` scheme, the verification token Slack
still puts in what it signs (an event's, a slash command's or an interactive payload's ``token``:
a credential of the app) joins the instance's secrets, so the run, the model and the stores see
it masked.

With ``session`` (a dotted path into the payload, ``issue.number``), the runs whose payloads
hold the same value continue one session (`openmolt_core.sessions`, id
``hook:<agent>:<value>``): the agent sees what the earlier deliveries of that issue, customer
or thread asked and what it answered. Its turns are tainted like the payloads, so every run of
such a session starts tainted. A payload without the field (or with a value that is not text or
a number) runs alone.

With ``user`` (a dotted path too, ``sender.login``), the run acts for that end user
(``hook:<agent>:<value>``): integrations the agent binds per user use their account
(`openmolt_core.accounts`). The value is the payload's word, so only a signed payload names it,
and it means something only to the sender that signed it: each agent's webhook has its own
secret, and so its own users (`webhook_user`); the GitHub login ``alice`` one agent's webhook
names is not the ``alice`` a form service's payload names to another agent.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from openmolt_core._support.userids import user_id_problem
from openmolt_core.errors import ConfigurationError, OpenMoltError
from openmolt_core.secrets import Redactor, register_key, url_secrets
from openmolt_core.triggers import WebhookTrigger, secret_from
from openmolt_serve._agentenv import agent_env, agent_secret
from openmolt_serve._body import (
	BODY_TIMEOUT,
	BadJson,
	SlowBody,
	TooLarge,
	payload,
	read_body,
	too_slow,
)
from openmolt_serve._launch import Launcher, key_refused, run_id_for, session_id
from openmolt_serve._limits import RateLimit
from openmolt_serve._seen import seen_store
from openmolt_serve.signatures import (
	ReplayGuard,
	SeenStore,
	SignatureError,
	check_secret,
	verify,
)

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["ACK_WITHIN", "Webhook", "handle_webhook", "session_key", "webhook_env", "webhook_user"]

log: logging.Logger = logging.getLogger("openmolt")

ACK_WITHIN = 2.0
"""The most seconds a webhook's answer waits for its run to start (Slack wants one in three)."""


def webhook_env(agent: str) -> str:
	"""The default environment variable of an agent's webhook secret (`openmolt_serve._agentenv`)."""
	return agent_env(agent, "webhookSecret")


@dataclass
class Webhook:
	"""One agent's webhook: its settings, secret, rate limit and replay guard.

	Args:
		agent: The agent it starts.
		config: Its settings.
		secret: The shared secret (read from the environment by `create`).
		store: Where the replay guard also keeps what it has seen (None: memory only).
		previous: The secret ``secret`` replaces, accepted too while senders switch (None:
			none).
	"""

	agent: Agent
	config: WebhookTrigger
	secret: str = field(repr=False)
	store: SeenStore | None = None
	previous: str | None = field(default=None, repr=False)
	limit: RateLimit = field(init=False)
	guard: ReplayGuard = field(init=False)
	redact: Redactor = field(init=False, repr=False)

	def __post_init__(self) -> None:
		# For the instance's life: the secrets, and those of the public URL Twilio signs (a
		# password or a token in it: `url_secrets`).
		register_key(self.agent.om, self.secret, self.previous, *url_secrets(self.config.url or ""))
		self.limit = RateLimit(self.config.rate_limit)
		self.guard = ReplayGuard(tolerance=self.config.tolerance, store=self.store)
		self.redact = Redactor(known=self.agent.om.secrets)  # for what an answer says
		for what, secret in (("secret", self.secret), ("previous secret", self.previous)):
			try:
				if secret is not None:
					check_secret(self.config.scheme, secret)
			except SignatureError as exc:
				raise ConfigurationError(
					f"the webhook {what} of {self.agent.name!r} (scheme {self.config.scheme}): "
					f"{exc}"
				) from None

	@classmethod
	def create(cls, agent: Agent, config: WebhookTrigger) -> Webhook:
		"""Read the secret (``secret``, else ``secretEnv``, else ``OPENMOLT_<AGENT>_WEBHOOK_SECRET``).

		While it is replaced, the one it replaces (``previousSecret``, ``previousSecretEnv``) is
		read too: a request signed with either is taken.

		With a run store or a durable store the replay guard keeps what it has seen there too
		(`seen_store`), so a restart forgets no signature.

		Raises:
			ConfigurationError: The secret is not set, or is no key of the scheme (a
				``standard`` secret that is not ``whsec_<base64>`` of 16 bytes or more).
		"""
		what = f"the webhook secret of {agent.name!r}"
		secret = agent_secret(
			config.secret, config.secret_env, agent=agent.name, key="webhookSecret", what=what
		)
		previous = None
		if config.previous_secret or config.previous_secret_env:
			previous = secret_from(
				config.previous_secret,
				config.previous_secret_env,
				what=f"the previous webhook secret of {agent.name!r} (previousSecretEnv)",
			)
		return cls(agent, config, secret, seen_store(agent, "hook"), previous)

	@property
	def secrets(self) -> tuple[str, ...]:
		"""The secrets a request may be signed with: the secret, then the one it replaces."""
		return (self.secret,) if self.previous is None else (self.secret, self.previous)


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
	return JSONResponse({"error": message, **extra}, status_code=status)


def _replayed() -> JSONResponse:
	return _error(
		409,
		"this signed request was received before: a replay; send a new, freshly signed one",
		reason="replayed",
	)


def _signed(signature: str) -> str:
	"""A run's delivery key from a verified signature: a digest (it could sign nothing)."""
	import hashlib

	return "sig:" + hashlib.sha256(signature.encode()).hexdigest()


def _delivery(config: WebhookTrigger, verified_delivery: str | None, data: Any) -> str | None:
	if verified_delivery:
		return verified_delivery
	if isinstance(data, dict):
		if config.scheme == "stripe" and isinstance(data.get("id"), str):
			return str(data["id"])  # evt_...: Stripe retries an event with the same id
		if config.scheme == "slack" and isinstance(data.get("event_id"), str):
			return str(data["event_id"])
	return None


def _called(url: str | None, query: str) -> str | None:
	"""The URL the sender called: the webhook's public ``url`` and the request's query (raw).

	Twilio signs it (a JSON body's ``bodySHA256`` rides in the query); the server behind a proxy
	sees another host, so the address is the setting's, and only the query is the request's.
	"""
	if not url:
		return None
	base = url.split("?", 1)[0]
	return f"{base}?{query}" if query else base


def _handshake(config: WebhookTrigger, data: Any) -> bool:
	"""Whether a payload is Slack's ``url_verification`` (answered with its challenge, no run).

	Slack's only: another sender's signed payload that reads alike (a form service's, its text
	a stranger's) is a payload like any other, and runs.
	"""
	return (
		config.scheme == "slack"
		and isinstance(data, dict)
		and data.get("type") == "url_verification"
		and "challenge" in data
	)


def _slack_tokens(data: Any) -> list[str]:
	"""The verification tokens a Slack request carries (a credential of the app, deprecated).

	Slack still puts one in every request it signs: an event's ``token``, a slash command's form
	field, the ``token`` of an interactive ``payload`` field's JSON. A body read as text (a form
	under another content type: none, ``text/plain``) is read as a form too: unknown is unsafe.
	"""
	if isinstance(data, str):
		from urllib.parse import parse_qs

		fields = parse_qs(data, keep_blank_values=True)
		nested = [t for one in fields.get("payload", []) for t in _slack_tokens({"payload": one})]
		return [*fields.get("token", []), *nested]
	if not isinstance(data, dict):
		return []
	found = [data.get("token")]
	inner = data.get("payload")
	if isinstance(inner, str) and inner.lstrip()[:1] == "{":
		try:
			parsed = json.loads(inner)
		except ValueError:
			parsed = None
		if isinstance(parsed, dict):
			found.append(parsed.get("token"))
	return [token for token in found if isinstance(token, str)]


KEY_CHARS = 200
"""The longest session key or user value a payload gives, as used (a longer one is digested)."""


def session_key(data: Any, path: str | None) -> str | None:
	"""The value at a dotted path of the payload, as a session key (None: not there).

	Args:
		data: The payload.
		path: The webhook's ``session`` (``issue.number``); list items by index (``items.0.id``).
	"""
	if not path:
		return None
	value = data
	for part in path.split("."):
		if isinstance(value, dict) and part in value:
			value = value[part]
		elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
			value = value[int(part)]
		else:
			return None
	if isinstance(value, bool) or not isinstance(value, (str, int)):
		return None
	text = str(value).strip()
	if len(text) <= KEY_CHARS:
		return text or None
	# Longer: a prefix and a digest of the whole, so that two values never share a key (a
	# session, an end user's accounts) because they begin alike.
	import hashlib

	digest = hashlib.sha256(text.encode()).hexdigest()[:32]
	return f"{text[: KEY_CHARS - 33]}#{digest}"


def webhook_user(agent: str, value: str) -> str:
	"""The end user a webhook's run acts for: ``hook:<agent>:<value>``.

	The agent's name is part of it: a value is the word of the sender that signed the payload,
	and each agent's webhook has its own secret, so one webhook's users are never another's.
	Both parts are written as in a session id (`openmolt_serve._launch.session_id`: a ``:`` in
	either is ``%3A``), so agent ``a`` and user ``b:c`` are not agent ``a:b`` and user ``c``.

	Args:
		agent: The agent's name.
		value: The value the webhook's ``user`` path found in the signed payload.
	"""
	return session_id("hook", agent, value)


async def handle_webhook(
	request: Request,
	hook: Webhook | None,
	launcher: Launcher,
	*,
	body_timeout: float = BODY_TIMEOUT,
) -> Response:
	"""Answer one ``POST /hooks/<agent>`` (see the module's docstring for the order of checks).

	Args:
		request: The request.
		hook: The agent's webhook (None: no such agent, or it has none).
		launcher: Starts the run.
		body_timeout: Seconds the body may take to arrive.
	"""
	if hook is None:
		name = request.path_params.get("agent", "")
		return _error(404, f"no agent {name!r} takes webhooks here")
	config = hook.config
	try:
		body = await read_body(request, config.max_body, within=body_timeout)
	except TooLarge:
		return _error(413, f"the body is larger than {config.max_body} bytes")
	except SlowBody:
		return too_slow()
	try:
		verified = verify(
			config.scheme,
			hook.secrets,
			body,
			request.headers,
			tolerance=config.tolerance,
			header=config.header,
			url=_called(config.url, request.url.query),
		)
	except SignatureError as exc:
		log.info("webhook of %s refused (%s): %s", hook.agent.name, exc.reason, exc)
		return _error(401, str(exc), reason=exc.reason)
	try:
		data = payload(body, request.headers.get("content-type", ""))
	except BadJson as exc:
		return _error(422, str(exc), reason=exc.reason)
	if config.scheme == "slack":
		register_key(hook.agent.om, *_slack_tokens(data))  # masked in the run, for the model too
	delivery = _delivery(config, verified.delivery, data)
	verified = dataclasses.replace(verified, delivery=delivery)
	# Without a delivery id, the same signed request is the same delivery: its run id comes
	# from the signature (a digest), so a server whose replay guard never saw it (another
	# machine on the same durable store) attaches to the run instead of starting another.
	run_id = run_id_for("hook", hook.agent.name, delivery or _signed(verified.signature))
	if delivery is not None and hook.guard.delivered(delivery):
		# A retry of a delivery that was accepted (its answer may have been lost): the same
		# run (its id comes from the delivery id), nothing new starts, and a 2xx tells the
		# sender to stop retrying.
		return JSONResponse({"run_id": run_id, "status": "duplicate"})
	if hook.guard.seen(verified):
		return _replayed()
	who = session_key(data, config.user)
	user = webhook_user(hook.agent.name, who) if who else None
	if user is not None and (problem := user_id_problem(user)):
		# The sender's payload names a user id that could pass for another's: no retry of it
		# would start, so a 400 (a 5xx is retried), and nothing is remembered.
		return _error(400, hook.redact(f"the payload's user ({config.user}) is refused: {problem}"))
	key = session_key(data, config.session)
	if key and (problem := key_refused("hook", hook.agent.name, key)):
		# The same for its conversation, whose session the key names (`session_id`).
		said = f"the payload's conversation ({config.session}) is refused: {problem}"
		return _error(400, hook.redact(said))
	wait = hook.limit.take()
	if wait:  # not remembered: the sender may retry this request later
		return JSONResponse(
			{"error": f"too many requests: at most {config.rate_limit} a minute", "reason": "rate"},
			status_code=429,
			headers={"Retry-After": str(math.ceil(wait))},
		)
	# Taken in one step (the store's unique key): of two copies of a delivery checked above at
	# once, here or on another server on the same store, exactly one goes on.
	taken = hook.guard.claim(verified)
	if taken == "delivery":
		return JSONResponse({"run_id": run_id, "status": "duplicate"})
	if taken is not None:
		return _replayed()
	if _handshake(config, data):
		return JSONResponse({"challenge": data["challenge"]})  # Slack's Events API handshake
	failed: list[BaseException] = []

	def unstarted(exc: BaseException) -> None:
		# Nothing ran, also when it fails after the answer (queued behind its session's turn):
		# the claim is given back, so the sender's retry runs.
		hook.guard.forget(verified)
		failed.append(exc)

	try:
		# The payload is outside content, like a fetched page: the run starts tainted, unless
		# the operator vouched for this sender's payloads (trustPayload).
		session = launcher.sessions(session_id("hook", hook.agent.name, key)) if key else None
		await launcher.start(
			hook.agent,
			data,
			run_id=run_id,
			trigger="webhook",
			where=hook.agent.name,
			session=session,
			user=user,
			within=ACK_WITHIN,
			unstarted=unstarted,
			vouched=config.trust_payload,
		)
	except OpenMoltError as exc:
		log.warning("webhook of %s: the run could not start: %s", hook.agent.name, exc)
		return _error(500, hook.redact(f"the run could not start: {exc}"))
	if failed:
		# It ended (a RunError: its run's own failure) before it started, before this answer: a
		# 202 would tell the sender to stop retrying a delivery nothing ran. A 5xx is what
		# senders retry on, and the claim is given back, so the retry runs.
		log.warning(
			"webhook of %s: the run could not start: %s",
			hook.agent.name,
			hook.redact(str(failed[0])),
		)
		return _error(500, hook.redact(f"the run could not start: {failed[0]}"))
	return Response(
		json.dumps({"run_id": run_id, "status": "accepted"}),
		status_code=202,
		media_type="application/json",
	)
