"""What starts an agent's runs besides code and clocks: webhooks and chat channels (settings only).

An agent file names its triggers, and ``openmolt serve`` (``openmolt[serve]``) hosts them:

```json
{
  "name": "Triage",
  "model": "openai:gpt-5-mini",
  "instructions": "Label new issues.",
  "triggers": {
    "webhook": {"scheme": "github", "secretEnv": "GITHUB_WEBHOOK_SECRET"},
    "channels": [
      {"type": "telegram", "tokenEnv": "TELEGRAM_BOT_TOKEN", "allowedUsers": [123456789]},
      {"type": "slack", "allowedChannels": ["C0123456789"]}
    ]
  }
}
```

These models are the one source of the settings: the agent file's schema, its line-accurate
errors and the server all read them. The server itself (Starlette, uvicorn) lives in
``openmolt-serve``; the core never imports it. Secrets come from the environment (or a ``.env``
file) by name: a literal ``secret`` in a file that is checked in is a leak waiting to happen,
but it is accepted for local tests.

Whether a run a trigger starts begins *tainted* (`openmolt_core.taint`: its input was written by
someone other than the operator, so the taint policy applies to outbound tools from the first
step) is decided in one place, `starting_taint`, for every kind in `TRIGGER_KINDS`: webhook
payloads, MCP calls, A2A messages, AG-UI requests and chat messages are tainted, except chat
messages from a user id the operator listed in ``allowedUsers`` (the person chatting is then the
operator's principal: themselves, or someone they vouch for by id); schedules and the operator's
own code or CLI are not. A kind it does not know is tainted (fail closed).

The operator may vouch for a trigger's input, explicitly, where someone they trust writes all of
it (`VOUCHABLE`): a webhook's ``trustPayload`` (their own CI or back office posting, never
GitHub issues or a form anyone fills in) and an AG-UI endpoint's ``trustInput`` (their own
signed-in front end, used by the people the agent acts for). Its runs then start clean
(``starting_taint(..., vouched=True)``), unless an earlier turn of their session was tainted. An
A2A message cannot be vouched for: the calling agent's run may have read anything, and its taint
does not travel with the message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Annotated, Literal, get_args
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from openmolt_core._support.masking import MIN_KEY
from openmolt_core.errors import ConfigurationError
from openmolt_core.options import Options, options_config

__all__ = [
	"DEFAULT_CALLER",
	"DEFAULT_HMAC_HEADER",
	"DEFAULT_TOLERANCE",
	"TRIGGER_KINDS",
	"TRIGGER_TRUST",
	"VOUCHABLE",
	"A2ATrigger",
	"AguiTrigger",
	"CallerToken",
	"Channel",
	"Scheme",
	"SlackChannel",
	"TelegramChannel",
	"TriggerKind",
	"Triggers",
	"WebhookTrigger",
	"secret_from",
	"starting_taint",
	"strong_enough",
]

TriggerKind = Literal["operator", "schedule", "webhook", "chat", "mcp", "a2a", "agui"]
"""What starts a run: the operator's code or CLI, a schedule, a webhook, a chat message, a call
of an agent served over MCP (``openmolt_mcp.server``), an A2A message or an AG-UI run request
(``openmolt_serve.a2a``, ``openmolt_serve.agui``)."""

TRIGGER_KINDS: tuple[str, ...] = get_args(TriggerKind)
"""Every kind of trigger; `TRIGGER_TRUST` decides each (a test checks that it does)."""

TRIGGER_TRUST: dict[str, Literal["operator", "sender", "outside"]] = {
	"operator": "operator",  # the operator's own code, CLI or API call
	"schedule": "operator",  # a clock the operator set
	"webhook": "outside",  # a payload someone else wrote (signed is not trusted: GitHub issues)
	"chat": "sender",  # trusted only from a user id the operator listed
	"mcp": "outside",  # another program's model wrote the input
	"a2a": "outside",  # another agent wrote the message (a token proves the caller, not the words)
	"agui": "outside",  # a front end's user typed it
}
"""Whose words start each kind of run: ``operator`` (clean), ``outside`` (tainted), ``sender``
(tainted unless the sender is a trusted user id)."""


VOUCHABLE: frozenset[str] = frozenset({"webhook", "agui"})
"""The kinds whose input the operator may vouch for in their settings (a webhook's
``trustPayload``, an AG-UI endpoint's ``trustInput``); `starting_taint` ignores ``vouched`` for
any other (an A2A caller's words, a chat stranger's, an MCP client's)."""


def starting_taint(
	kind: str,
	*,
	where: str = "",
	sender: str | int | None = None,
	trusted: Iterable[str | int] = (),
	vouched: bool = False,
) -> str | None:
	"""Whether a run that a trigger starts begins tainted: the one decision for every trigger.

	Args:
		kind: The trigger's kind (one of `TRIGGER_KINDS`; any other is tainted).
		where: Which one (the agent's name, ``telegram:Support``), for the taint record.
		sender: Who wrote the input (a chat user's id), when known.
		trusted: The user ids the operator trusts (a chat's ``allowedUsers``; @usernames in it
			let a user in but never trust them: a name can change hands, an id cannot).
		vouched: The operator vouches for this trigger's input in its settings (a webhook's
			``trustPayload``, an AG-UI endpoint's ``trustInput``): a kind in `VOUCHABLE` starts
			clean then; any other kind ignores it.

	Returns:
		None for a clean start, else the source to record (``untrusted_input(source)``):
		``webhook:Triage``, ``chat:telegram:Support:12345``.
	"""
	trust = TRIGGER_TRUST.get(kind, "outside")
	if trust == "operator" or (vouched and kind in VOUCHABLE):
		return None
	if trust == "sender" and sender is not None and str(sender):
		if str(sender) in {str(t) for t in trusted if not str(t).startswith("@")}:
			return None
	source = f"{kind}:{where}" if where else kind
	return f"{source}:{sender}" if sender is not None and str(sender) else source


class _Model(Options):
	# The option models' one mechanism: camelCase aliases generated, snake_case names accepted,
	# secrets masked in a repr.
	model_config = options_config()


def strong_enough(secret: str, *, what: str) -> str:
	"""A secret a server checks requests with (a token, a signing secret), if long enough.

	Under `openmolt_core.secrets.MIN_KEY` characters it is refused: no log, store or answer
	masks so short a secret (`openmolt_core.secrets.register_key` leaves it out), and it is too short to resist guessing (a webhook's secret
	guessed is a payload anyone can sign). One rule for every such secret: a webhook's, a chat
	channel's, an A2A or AG-UI token, the run viewer's token. (`openmolt_core.secrets`
	re-exports it, its old home.)

	Args:
		secret: The secret.
		what: What it is, for the message (``the webhook secret of 'Triage'``); the message
			says its length, never the secret.

	Returns:
		The secret, as given.

	Raises:
		ConfigurationError: It is shorter than `openmolt_core.secrets.MIN_KEY` characters
			(surrounding spaces aside).
	"""
	size = len(secret.strip())
	if size < MIN_KEY:
		if not size:
			raise ConfigurationError(f"{what} is empty (only spaces): set it to the secret")
		raise ConfigurationError(
			f"{what} has {size} characters; give one of at least {MIN_KEY} (a shorter one is "
			"too short to be masked in logs and stores; a long random one resists guessing): "
			"python -c 'import secrets; print(secrets.token_urlsafe(32))'"
		)
	return secret


def secret_from(value: str | None, env: str | None, *, what: str) -> str:
	"""A secret given as is, or read from the named environment variable.

	Args:
		value: The secret itself (None: read ``env``).
		env: The environment variable that holds it.
		what: What it is, for the error (``the webhook secret of Triage``).

	Raises:
		ConfigurationError: Neither is set, the variable is empty, or the secret is too short
			to be masked or to resist guessing (`strong_enough`).
	"""
	if value:
		return strong_enough(value, what=what)
	found = os.environ.get(env or "", "")
	if not found:
		raise ConfigurationError(
			f"{what} is not set: export {env} (in the environment or a .env file)"
			if env
			else f"{what} is not set"
		)
	return strong_enough(found, what=f"{what} ({env})")


Scheme = Literal["hmac", "standard", "github", "stripe", "slack", "shopify", "twilio"]
"""How a webhook's requests are signed; ``openmolt_serve.signatures`` checks each scheme."""

DEFAULT_TOLERANCE = 300.0
"""Seconds a signed timestamp may be away from now (Stripe's and Slack's own default)."""

DEFAULT_HMAC_HEADER = "X-Signature-256"
"""The header of the plain ``hmac`` scheme, unless configured."""

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
"""An HTTP header's name (RFC 9110's token): what a request can carry."""


class WebhookTrigger(_Model):
	"""``POST /hooks/<agent>``: a signed request starts a run with its payload as the input.

	The signature is checked first (`openmolt_serve.signatures`); then the per-agent rate limit;
	then the run starts and the answer is ``202`` with its run id.
	"""

	scheme: Scheme = Field(
		default="standard",
		description="How requests are signed: standard (Standard Webhooks), hmac, github, "
		"stripe, slack, shopify or twilio.",
	)
	secret: str | None = Field(
		default=None, description="The shared secret (prefer secretEnv: never check it in)."
	)
	secret_env: str | None = Field(
		default=None,
		description="The environment variable holding the secret (default: "
		"OPENMOLT_<AGENT>_WEBHOOK_SECRET).",
	)
	previous_secret: str | None = Field(
		default=None,
		description="While the secret is replaced: the one it replaces, accepted too until every "
		"sender signs with the new one; then remove it (prefer previousSecretEnv).",
	)
	previous_secret_env: str | None = Field(
		default=None,
		description="The environment variable holding the secret being replaced (previousSecret).",
	)
	header: str = Field(
		default=DEFAULT_HMAC_HEADER, description="The signature header of the hmac scheme."
	)

	@field_validator("header")
	@classmethod
	def _a_header_name(cls, value: str) -> str:
		if not _HEADER_NAME.match(value):
			raise ValueError(
				"header: give the name of the signature header alone (X-Signature-256): letters, "
				"digits and '-', no spaces, no ':' and no value"
			)
		return value

	tolerance: float = Field(
		default=DEFAULT_TOLERANCE,
		gt=0,
		le=3600,
		description="Seconds a signed timestamp may be away from now (stripe, slack, standard).",
	)
	rate_limit: int = Field(
		default=60,
		ge=1,
		description="Runs this webhook may start per minute (bursts up to as many).",
	)
	max_body: int = Field(
		default=1_000_000,
		ge=1,
		le=50_000_000,
		description="The largest body accepted, in bytes (larger: 413).",
	)
	session: str | None = Field(
		default=None,
		pattern=r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$",
		description="Continue a session per value of this payload field, a dotted path "
		"(issue.number, data.object.customer): the runs of one value share a conversation "
		"(openmolt_core.sessions). A payload without it runs alone.",
	)
	user: str | None = Field(
		default=None,
		pattern=r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$",
		description="The end user the run acts for: this payload field, a dotted path "
		"(sender.login); integrations bound per user use their account (openmolt_core.accounts). "
		"A payload without it runs for the operator.",
	)
	trust_payload: bool = Field(
		default=False,
		description="Vouch for every payload this webhook accepts: its runs start clean, not "
		"tainted (openmolt_core.taint). Only for a sender whose payloads you or people you "
		"trust write in full (your own CI, your back office); never for GitHub issues, Stripe "
		"metadata, form posts or anything a stranger can put words into.",
	)
	url: str | None = Field(
		default=None,
		description="The twilio scheme: this webhook's public URL as Twilio calls it "
		"(https://agents.example.com/hooks/Triage); Twilio signs it, and a proxy in front "
		"changes what the server sees. The request's query is added to it.",
	)

	@model_validator(mode="after")
	def _twilio_url(self) -> WebhookTrigger:
		if self.url is not None and not re.match(r"^https?://[^/\s]+", self.url):
			raise ValueError(
				"url: give the whole address Twilio calls, with its scheme "
				"(https://agents.example.com/hooks/<agent>)"
			)
		if self.scheme == "twilio" and not self.url:
			raise ValueError(
				"url: the twilio scheme signs the URL Twilio calls; give it "
				"(https://agents.example.com/hooks/<agent>)"
			)
		return self


DEFAULT_CALLER = "default"
"""The name of the caller of a single ``token``/``tokenEnv`` (and of a ``callers`` entry so
named): its A2A tasks, contexts and AG-UI threads keep the ids they had before callers existed."""

_CALLER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class CallerToken(_Model):
	"""One caller of an A2A server or an AG-UI endpoint (a front end, a partner agent).

	It has a token of its own, and sees only its own A2A tasks and contexts and AG-UI threads.
	"""

	token: str | None = Field(
		default=None,
		description="The caller's bearer token (prefer tokenEnv: never check it in).",
	)
	token_env: str | None = Field(
		default=None,
		description="The environment variable holding the caller's bearer token.",
	)

	@model_validator(mode="after")
	def _one_token(self) -> CallerToken:
		if self.token is not None and self.token_env:
			raise ValueError("give the caller's token or its tokenEnv, not both")
		if self.token is not None and not self.token.strip():
			raise ValueError("token: the caller's token is empty; give it (or its tokenEnv)")
		if self.token is None and not self.token_env:
			raise ValueError(
				"give the caller's tokenEnv (the environment variable holding its token)"
			)
		return self


class _TokenTrigger(_Model):
	# What A2A and AG-UI share: their callers send a bearer token (neither protocol signs
	# requests), checked before anything runs, then a rate limit and a body cap, as webhooks.
	token: str | None = Field(
		default=None,
		description="The bearer token callers send (prefer tokenEnv: never check it in).",
	)
	callers: dict[str, CallerToken] | None = Field(
		default=None,
		description="Callers with a token each, by name (letters, digits, - and _): each sees "
		"only its own tasks, contexts and threads. Instead of token/tokenEnv; a caller named "
		"default keeps the ids of the single token's.",
	)
	rate_limit: int = Field(
		default=60, ge=1, description="Runs it may start per minute (bursts up to as many)."
	)
	max_body: int = Field(
		default=1_000_000,
		ge=1,
		le=50_000_000,
		description="The largest request body accepted, in bytes (larger: 413).",
	)

	@model_validator(mode="after")
	def _callers_or_token(self) -> _TokenTrigger:
		if self.callers is None:
			return self
		if self.token is not None or getattr(self, "token_env", None):
			raise ValueError(
				"give either token/tokenEnv (one caller) or callers (a token each), not both: "
				f"to keep the token you have, make it the caller {DEFAULT_CALLER!r} "
				f"(callers.{DEFAULT_CALLER}.tokenEnv), whose tasks and threads stay as they were"
			)
		if not self.callers:
			raise ValueError("callers: name at least one caller and its tokenEnv")
		for name in self.callers:
			if not _CALLER_NAME.match(name):
				raise ValueError(
					f"callers: {name!r} is not a caller name; use 1 to 64 letters, digits, "
					"'-' and '_'"
				)
		return self


class A2ATrigger(_TokenTrigger):
	"""The agent as an A2A server: its agent card and JSON-RPC endpoint at ``/a2a/<agent>``.

	Callers send ``Authorization: Bearer <token>`` (the card, which says so, is public).
	"""

	token_env: str | None = Field(
		default=None,
		description="The environment variable holding the token (default: "
		"OPENMOLT_<AGENT>_A2A_TOKEN).",
	)
	description: str | None = Field(
		default=None,
		description="What the agent does, for the agent card (default: its name; the "
		"instructions are never published).",
	)
	public_url: str | None = Field(
		default=None,
		pattern=r"^https?://",
		description="The address callers reach the server at, for the card (behind a proxy); "
		"default: the server's own. No user, password, query or fragment: the card is public.",
	)

	@field_validator("public_url")
	@classmethod
	def _published(cls, url: str | None) -> str | None:
		# The public card repeats it to anyone: what it holds besides the address (a password,
		# a token in its query) would be published, and the path appended to it breaks a query.
		if url is None:
			return None
		parts = urlsplit(url)
		kept = [
			name
			for name, held in (
				("a user or password", "@" in parts.netloc),
				("a query", bool(parts.query) or "?" in url),
				("a fragment", bool(parts.fragment) or "#" in url),
			)
			if held
		]
		if kept:
			raise ValueError(
				f"publicUrl holds {' and '.join(kept)}, which the public agent card would "
				"publish; give the scheme, host, port and path only"
			)
		return url


class AguiTrigger(_TokenTrigger):
	"""The agent as an AG-UI endpoint: ``POST /agui/<agent>`` streams a run's events.

	Callers send ``Authorization: Bearer <token>``.
	"""

	token_env: str | None = Field(
		default=None,
		description="The environment variable holding the token (default: "
		"OPENMOLT_<AGENT>_AGUI_TOKEN).",
	)
	trust_input: bool = Field(
		default=False,
		description="Vouch for what the front end's users type: their runs start clean, not "
		"tainted (openmolt_core.taint). Only for your own signed-in front end whose users are "
		"the people the agent acts for; a public page's visitors are strangers.",
	)
	decide_approvals: bool = Field(
		default=False,
		description="Let the front end decide the approvals a run waits for (its user is the "
		"approver); otherwise they are decided in the run viewer and the front end is told so.",
	)


class _ChatChannel(_Model):
	allowed_users: list[str | int] = Field(
		default_factory=list,
		description="Users who may talk to the agent (ids; for Telegram also @usernames).",
	)
	allowed_chats: list[str | int] = Field(
		default_factory=list,
		description="Chats (Telegram chat ids, Slack channel ids) where anyone may talk to it.",
	)
	allow_everyone: bool = Field(
		default=False,
		description="Let anyone who can reach the bot talk to the agent (think twice).",
	)
	stream: bool = Field(
		default=False,
		description="Show the reply while the model writes it: one message, edited as it "
		"grows (at most once a second).",
	)
	history: int = Field(
		default=20,
		ge=0,
		le=200,
		description="0: each message is a run of its own; more: the chat is a session whose "
		"earlier turns (summarised when long) each run reads (openmolt_core.sessions).",
	)
	base_url: str | None = Field(
		default=None, description="The API's address (a local server, tests)."
	)

	@field_validator("base_url")
	@classmethod
	def _an_address(cls, value: str | None) -> str | None:
		if value is not None and not re.match(r"^https?://[^/?#\s]", value):
			raise ValueError(
				"baseUrl: give the API's whole address, with its scheme (https://api.example, "
				"http://localhost:8081 for a local server)"
			)
		return value

	@model_validator(mode="after")
	def _someone_may_talk(self) -> _ChatChannel:
		if not (self.allowed_users or self.allowed_chats or self.allow_everyone):
			raise ValueError(
				"name who may talk to the agent: allowedUsers, allowedChats (or allowEveryone: "
				"true, to let anyone who finds the bot run it)"
			)
		return self


class TelegramChannel(_ChatChannel):
	"""A Telegram bot: messages to it start or continue runs; its replies go to the same chat.

	``mode`` ``polling`` asks ``getUpdates`` (nothing to expose to the internet); ``webhook``
	answers ``POST /channels/telegram/<agent>``, checking Telegram's secret token header.
	"""

	type: Literal["telegram"]
	token: str | None = Field(default=None, description="The bot token (prefer tokenEnv).")
	token_env: str = Field(
		default="TELEGRAM_BOT_TOKEN",
		description="The environment variable holding the bot token.",
	)
	mode: Literal["polling", "webhook"] = Field(
		default="polling", description="polling (getUpdates) or webhook."
	)
	secret_token: str | None = Field(
		default=None,
		description="webhook mode: the secret_token given to setWebhook (prefer secretTokenEnv).",
	)
	secret_token_env: str = Field(
		default="TELEGRAM_WEBHOOK_SECRET",
		description="webhook mode: the environment variable holding that secret token.",
	)
	previous_secret_token_env: str | None = Field(
		default=None,
		description="webhook mode, while the secret token is replaced (setWebhook called again "
		"with a new one): the variable holding the one it replaces, accepted too until Telegram "
		"sends the new one; then remove it.",
	)
	poll_timeout: int = Field(
		default=30,
		ge=0,
		le=50,
		description="Seconds each getUpdates call waits for a message (long polling).",
	)


class SlackChannel(_ChatChannel):
	"""A Slack app on the Events API: ``POST /channels/slack/<agent>`` receives its events.

	Messages to the app (direct messages, or mentions in channels it is in) start or continue a
	run; replies go to the same channel (and thread). Requests are checked with the app's
	signing secret.
	"""

	type: Literal["slack"]
	bot_token: str | None = Field(
		default=None, description="The bot token xoxb-... (prefer botTokenEnv)."
	)
	bot_token_env: str = Field(
		default="SLACK_BOT_TOKEN",
		description="The environment variable holding the bot token.",
	)
	signing_secret: str | None = Field(
		default=None,
		description="The app's signing secret (prefer signingSecretEnv).",
	)
	signing_secret_env: str = Field(
		default="SLACK_SIGNING_SECRET",
		description="The environment variable holding the signing secret.",
	)
	previous_signing_secret_env: str | None = Field(
		default=None,
		description="While the signing secret is regenerated: the variable holding the one it "
		"replaces, accepted too until the new one is in place everywhere; then remove it.",
	)


Channel = Annotated[TelegramChannel | SlackChannel, Field(discriminator="type")]
"""One chat channel, by its ``type``."""


class Triggers(_Model):
	"""An agent's triggers: a webhook, chat channels, an A2A server, an AG-UI endpoint.

	Its errors leave out their input (which may hold a secret given as is: a token, the
	settings of an A2A server's callers); each message names the key and the fix.
	"""

	webhook: WebhookTrigger | None = None
	channels: list[Channel] = Field(default_factory=list)
	a2a: A2ATrigger | None = None
	agui: AguiTrigger | None = None

	@model_validator(mode="after")
	def _one_channel_per_type(self) -> Triggers:
		types = [c.type for c in self.channels]
		if len(set(types)) != len(types):
			raise ValueError("give each channel type once: one bot per agent per chat service")
		return self
