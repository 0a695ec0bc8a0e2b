"""``POST /hooks/<agent>``: a signed request starts a run with its payload as the input.

In order, before anything runs:

1. the agent must exist and have a webhook (else ``404``);
2. the body must fit ``maxBody`` (else ``413``, read no further);
3. the signature must verify (`openmolt_core.signatures`; else ``401`` with the reason);
4. a delivery id accepted before is a retry: ``200 {"status": "duplicate"}`` with its run id,
   and nothing new starts (senders such as Stripe retry until they see a 2xx);
5. a signature seen before is a replay: ``409``;
6. the agent's rate limit must allow it (else ``429`` with ``Retry-After``; the request is not
   remembered, so the sender may retry it). Only verified requests count, so unsigned floods
   cannot use up the limit of the real sender.

Then the run starts, and the answer is ``202 {"run_id": ...}`` once it has (on a durable backend:
once its workflow is recorded). A delivery id the sender gives (``webhook-id``,
``X-GitHub-Delivery``, the ``id`` of a Stripe event, the ``event_id`` of a Slack event) fixes the
run id, so the same delivery never starts two runs. A Slack ``url_verification`` request gets
its challenge back.
"""

from __future__ import annotations

import json
import logging
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from openmolt_core.errors import OpenMoltError
from openmolt_core.signatures import ReplayGuard, SignatureError, verify
from openmolt_core.triggers import WebhookTrigger, secret_from
from openmolt_serve._body import TooLarge, payload, read_body
from openmolt_serve._launch import Launcher, run_id_for
from openmolt_serve._limits import RateLimit

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["Webhook", "handle_webhook", "webhook_env"]

log: logging.Logger = logging.getLogger("openmolt")


def webhook_env(agent: str) -> str:
	"""The default environment variable of an agent's webhook secret."""
	slug = "".join(c if c.isalnum() else "_" for c in agent).upper()
	return f"OPENMOLT_{slug}_WEBHOOK_SECRET"


@dataclass
class Webhook:
	"""One agent's webhook: its settings, secret, rate limit and replay guard.

	Args:
		agent: The agent it starts.
		config: Its settings.
		secret: The shared secret (read from the environment by `create`).
	"""

	agent: Agent
	config: WebhookTrigger
	secret: str = field(repr=False)
	limit: RateLimit = field(init=False)
	guard: ReplayGuard = field(init=False)
	accepted: OrderedDict[str, str] = field(init=False)

	def __post_init__(self) -> None:
		self.limit = RateLimit(self.config.rate_limit)
		self.guard = ReplayGuard(tolerance=self.config.tolerance)
		self.accepted = OrderedDict()

	def remember(self, delivery: str, run_id: str) -> None:
		"""Remember an accepted delivery's run (the last 10,000)."""
		self.accepted[delivery] = run_id
		while len(self.accepted) > 10_000:
			self.accepted.popitem(last=False)

	@classmethod
	def create(cls, agent: Agent, config: WebhookTrigger) -> Webhook:
		"""Read the secret (``secret``, else ``secretEnv``, else ``OPENMOLT_<AGENT>_WEBHOOK_SECRET``).

		Raises:
			ConfigurationError: The secret is not set.
		"""
		env = config.secret_env or webhook_env(agent.name)
		secret = secret_from(config.secret, env, what=f"the webhook secret of {agent.name!r}")
		agent.om.secrets.add(secret)  # masked in logs, runs and the viewer
		return cls(agent, config, secret)


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
	return JSONResponse({"error": message, **extra}, status_code=status)


def _delivery(config: WebhookTrigger, verified_delivery: str | None, data: Any) -> str | None:
	if verified_delivery:
		return verified_delivery
	if isinstance(data, dict):
		if config.scheme == "stripe" and isinstance(data.get("id"), str):
			return str(data["id"])  # evt_...: Stripe retries an event with the same id
		if config.scheme == "slack" and isinstance(data.get("event_id"), str):
			return str(data["event_id"])
	return None


async def handle_webhook(request: Request, hook: Webhook | None, launcher: Launcher) -> Response:
	"""Answer one ``POST /hooks/<agent>`` (see the module's docstring for the order of checks).

	Args:
		request: The request.
		hook: The agent's webhook (None: no such agent, or it has none).
		launcher: Starts the run.
	"""
	if hook is None:
		name = request.path_params.get("agent", "")
		return _error(404, f"no agent {name!r} takes webhooks here")
	config = hook.config
	try:
		body = await read_body(request, config.max_body)
	except TooLarge:
		return _error(413, f"the body is larger than {config.max_body} bytes")
	try:
		verified = verify(
			config.scheme,
			hook.secret,
			body,
			request.headers,
			tolerance=config.tolerance,
			header=config.header,
		)
	except SignatureError as exc:
		log.info("webhook of %s refused (%s): %s", hook.agent.name, exc.reason, exc)
		return _error(401, str(exc), reason=exc.reason)
	data = payload(body, request.headers.get("content-type", ""))
	delivery = _delivery(config, verified.delivery, data)
	if delivery is not None and delivery in hook.accepted:
		# A retry of a delivery that was accepted (its answer may have been lost): the same
		# run, nothing new starts, and a 2xx tells the sender to stop retrying.
		return JSONResponse({"run_id": hook.accepted[delivery], "status": "duplicate"})
	if hook.guard.seen(verified):
		return _error(
			409,
			"this signed request was received before: a replay; send a new, freshly signed one",
			reason="replayed",
		)
	wait = hook.limit.take()
	if wait:  # not remembered: the sender may retry this request later
		return JSONResponse(
			{"error": f"too many requests: at most {config.rate_limit} a minute", "reason": "rate"},
			status_code=429,
			headers={"Retry-After": str(math.ceil(wait))},
		)
	hook.guard.remember(verified)
	if isinstance(data, dict) and data.get("type") == "url_verification" and "challenge" in data:
		return JSONResponse({"challenge": data["challenge"]})  # Slack's Events API handshake
	run_id = run_id_for("hook", hook.agent.name, delivery)
	if delivery is not None:
		hook.remember(delivery, run_id)
	try:
		# The payload is outside content, like a fetched page: the run starts tainted.
		await launcher.start(
			hook.agent, data, run_id=run_id, untrusted=f"webhook:{hook.agent.name}"
		)
	except OpenMoltError as exc:
		log.warning("webhook of %s: the run could not start: %s", hook.agent.name, exc)
		hook.guard.forget(verified)  # nothing ran: the sender's retry is welcome
		if delivery is not None:
			hook.accepted.pop(delivery, None)
		return _error(500, f"the run could not start: {exc}")
	return Response(
		json.dumps({"run_id": run_id, "status": "accepted"}),
		status_code=202,
		media_type="application/json",
	)
