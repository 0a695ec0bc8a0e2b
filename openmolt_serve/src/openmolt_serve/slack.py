"""Slack: an app on the Events API whose messages start or continue an agent's runs.

Slack posts events to ``POST /channels/slack/<agent>`` (the app's Request URL). Each request is
checked with the app's signing secret (`openmolt_serve.signatures`, scheme ``slack``: five
minutes of tolerance) before it is read, and a signed request seen before (a replay, however its
signature is spelled) is answered ``200`` and does nothing; the ``url_verification`` handshake gets its challenge
back; an ``event_callback`` is answered ``200`` at once (Slack wants an answer within three
seconds, and retries otherwise: a retry's ``event_id`` is seen before, and ignored), and its
event handled in the background:

- ``message`` events in a direct message (``channel_type`` ``im``), and ``app_mention`` events in
  channels (the app's mention is taken out of the text, other people's stay), from people:
  messages of bots, the app's own, and edits or deletions (a ``subtype``) are skipped; a mention
  in a direct message, which Slack sends as both events, is answered once (as the message);
- a thread is a conversation of its own (``thread_ts``); a mention outside a thread is answered
  in a new thread under it.

Replies use ``chat.postMessage`` (https://api.slack.com/methods/chat.postMessage) with the bot
token, ``channel``, ``text`` (Slack truncates it past 40,000 characters: a longer reply is split)
and ``thread_ts``, and no unfurl (`NO_UNFURL`); the text is shown as the run wrote it, never as
Slack's markup (`shown_as_text`: no ``<!channel>`` or disguised link from a prompt injection).
Slack answers ``200`` with ``ok: false`` on
failure, which is checked. With ``stream: true`` the reply is posted as soon as the model starts
writing it and grows by ``chat.update`` (`openmolt_serve._live`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from openmolt_core.errors import OpenMoltError
from openmolt_core.openmolt import OpenMolt
from openmolt_core.secrets import register_key
from openmolt_core.triggers import SlackChannel, secret_from
from openmolt_serve._body import (
	BODY_TIMEOUT,
	BadJson,
	SlowBody,
	TooLarge,
	parse_json,
	read_body,
	too_slow,
)
from openmolt_serve._launch import Launcher
from openmolt_serve._live import LiveReplies
from openmolt_serve._seen import seen_store
from openmolt_serve.chats import Conversations, Incoming
from openmolt_serve.signatures import ReplayGuard, SignatureError, verify

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = [
	"MAX_TEXT",
	"NO_UNFURL",
	"SLACK_API",
	"SlackApp",
	"SlackError",
	"incoming",
	"shown_as_text",
	"text_pieces",
]

log: logging.Logger = logging.getLogger("openmolt")

SLACK_API = "https://slack.com/api"
"""The Web API's address (a fake in tests may replace it)."""

MAX_TEXT = 40_000
"""The most characters of a message's ``text`` (chat.postMessage and chat.update truncate it)."""

NO_UNFURL: dict[str, Any] = {"unfurl_links": False, "unfurl_media": False}
"""What every ``chat.postMessage`` asks: no unfurl. Slack's servers fetch a link of a message to
show its preview, before anyone clicks: a reply a prompt injection wrote could send what the run
read to any address in a link's query. A link stays a link the user may open."""

_LEADING_MENTION = re.compile(r"^\s*<@[A-Z0-9]+(?:\|[^>]*)?>\s*")


def shown_as_text(text: str) -> str:
	"""A run's words as Slack shows them: as written, never as Slack's markup.

	Slack reads ``<...>`` in a message's text as markup: ``<!channel>`` notifies everyone in the
	channel, ``<https://a|b>`` shows one address and opens another, ``<@U1>`` mentions a person.
	A run's reply is the model's, which a prompt injection may steer, so its three control
	characters are escaped as Slack asks (``&amp;``, ``&lt;``, ``&gt;``): the text reads the
	same, links are still linked where they are written in full, and nothing else is markup.

	Args:
		text: What the run said.
	"""
	return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, most: int) -> int:
	"""Where to cut escaped text to at most ``most`` characters, never inside an entity."""
	if len(text) <= most:
		return len(text)
	start = text.rfind("&", max(most - 4, 0), most)  # an entity is at most 5 characters
	return start if start > 0 and ";" not in text[start:most] else most


def text_pieces(text: str, most: int = MAX_TEXT) -> list[str]:
	"""A run's words shown as text (`shown_as_text`), cut into messages of at most ``most``.

	Args:
		text: What the run said.
		most: The most characters of one message.
	"""
	escaped = shown_as_text(text)
	out: list[str] = []
	while len(escaped) > most:
		at = _cut(escaped, most)
		out.append(escaped[:at])
		escaped = escaped[at:]
	return [*out, escaped]


def _without_mention(text: str, bot_user: str | None) -> str:
	"""The text of a mention without the app's mention; other people's mentions stay."""
	if bot_user:
		return re.sub(rf"<@{re.escape(bot_user)}(?:\|[^>]*)?>\s*", "", text).strip()
	return _LEADING_MENTION.sub("", text).strip()  # the app unknown: the mention that addresses it


class SlackError(OpenMoltError):
	"""A Web API call failed (the message never holds the token)."""


def incoming(
	event: dict[str, Any], event_id: str, bot_user: str | None = None, *, team: str | None = None
) -> Incoming | None:
	"""A person's message or mention as an `Incoming` (None for anything to skip).

	Args:
		event: The event.
		event_id: The envelope's ``event_id``.
		bot_user: The app's own user id (its mention is cut, its messages skipped).
		team: The envelope's ``team_id``: the sender's team when the event names none. A user
			of another workspace (Slack Connect) is named by their own (``user_team``).
	"""
	kind = event.get("type")
	if kind not in ("message", "app_mention"):
		return None
	if event.get("subtype") or event.get("bot_id") or not isinstance(event.get("text"), str):
		return None
	user = event.get("user")
	channel = event.get("channel")
	if not isinstance(user, str) or not isinstance(channel, str) or user == bot_user:
		return None
	if kind == "message" and event.get("channel_type") != "im":
		return None  # in channels the app answers mentions (app_mention), not every message
	if kind == "app_mention" and (event.get("channel_type") == "im" or channel.startswith("D")):
		return None  # a mention in a direct message comes as its message event too: answered once
	text = event["text"]
	thread = event.get("thread_ts")
	if kind == "app_mention":
		text = _without_mention(text, bot_user)
		thread = thread or event.get("ts")
	teams = (event.get("user_team"), event.get("team"), team)
	sender_team = next((t for t in teams if isinstance(t, str) and t), None)
	return Incoming(
		channel="slack",
		chat=channel,
		user=user,
		text=text,
		id=event_id or str(event.get("client_msg_id") or event.get("ts", "")),
		thread=thread if isinstance(thread, str) else None,
		team=sender_team,
	)


class SlackApp:
	"""One agent's Slack app.

	Args:
		agent: The agent it talks for.
		settings: The channel's settings.
		launcher: Starts the runs.
		http: The HTTP client (the agent's instance's, by default).
	"""

	def __init__(
		self,
		agent: Agent,
		settings: SlackChannel,
		launcher: Launcher,
		http: httpx.AsyncClient | None = None,
	) -> None:
		self.agent = agent
		self.settings = settings
		self.token = secret_from(
			settings.bot_token,
			settings.bot_token_env,
			what=f"the Slack bot token of {agent.name!r}",
		)
		self.signing_secret = secret_from(
			settings.signing_secret,
			settings.signing_secret_env,
			what=f"the Slack signing secret of {agent.name!r}",
		)
		self.previous_signing_secret: str | None = None
		"""The signing secret being replaced, taken too (``previousSigningSecretEnv``)."""
		if settings.previous_signing_secret_env:
			self.previous_signing_secret = secret_from(
				None,
				settings.previous_signing_secret_env,
				what=f"the previous Slack signing secret of {agent.name!r}",
			)
		register_key(  # masked in logs, runs and the viewer
			agent.om, self.token, self.signing_secret, self.previous_signing_secret
		)
		self.base_url = (settings.base_url or SLACK_API).rstrip("/")
		self._http = http
		live = (
			LiveReplies(self.post, self.edit, limit=MAX_TEXT, size=_shown_size)
			if settings.stream
			else None
		)
		self.conversations = Conversations(agent, settings, self.reply, launcher, live)
		self.bot_user: str | None = None
		self.guard = ReplayGuard(store=seen_store(agent, "slack"))

	body_timeout: float = BODY_TIMEOUT
	"""Seconds a request's body may take to arrive (else ``408``)."""

	def __repr__(self) -> str:
		return f"SlackApp(agent={self.agent.name!r})"

	@property
	def http(self) -> httpx.AsyncClient:
		"""The HTTP client."""
		return self._http or OpenMolt.of(self.agent).http()

	async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
		"""Call a Web API method with the bot token (JSON body).

		Raises:
			SlackError: The call failed, or Slack said ``ok: false``.
		"""
		try:
			response = await self.http.post(
				f"{self.base_url}/{method}",
				json=params,
				headers={"Authorization": f"Bearer {self.token}"},
			)
		except httpx.HTTPError as exc:
			raise SlackError(f"Slack {method}: {type(exc).__name__}") from None
		try:
			data = parse_json(response.content, what=f"Slack's answer to {method}")
		except ValueError:  # not JSON, or JSON a run cannot take (BadJson)
			data = {}
		if not isinstance(data, dict):
			data = {}
		if response.status_code != 200 or not data.get("ok"):
			raise SlackError(
				f"Slack {method}: {response.status_code} {data.get('error') or response.reason_phrase}"
			)
		return dict(data)

	async def reply(self, message: Incoming, text: str) -> None:
		"""Post a text to the message's channel (and thread), split at 40,000 characters."""
		for piece in text_pieces(text):
			params: dict[str, Any] = {"channel": message.chat, "text": piece, **NO_UNFURL}
			if message.thread:
				params["thread_ts"] = message.thread
			await self.call("chat.postMessage", params)

	async def post(self, message: Incoming, text: str) -> str:
		"""Post a text to the message's channel (and thread); returns the message's ``ts``."""
		params: dict[str, Any] = {
			"channel": message.chat,
			"text": text_pieces(text)[0],
			**NO_UNFURL,
		}
		if message.thread:
			params["thread_ts"] = message.thread
		data = await self.call("chat.postMessage", params)
		return str(data.get("ts", ""))

	async def edit(self, message: Incoming, sent: str, text: str) -> None:
		"""Replace the text of a message the app posted (``chat.update``)."""
		shown = text_pieces(text)[0]  # a live message keeps its start (`openmolt_serve._live`)
		await self.call("chat.update", {"channel": message.chat, "ts": sent, "text": shown})

	async def handle(self, request: Request) -> Response:
		"""``POST /channels/slack/<agent>``: one Events API request."""
		try:
			body = await read_body(request, 1_000_000, within=self.body_timeout)
		except TooLarge:
			return JSONResponse({"error": "the request is too large"}, status_code=413)
		except SlowBody:
			return too_slow()
		try:
			secrets = [self.signing_secret, self.previous_signing_secret or ""]
			verified = verify("slack", secrets, body, request.headers)
		except SignatureError as exc:
			log.info("Slack events of %s refused (%s): %s", self.agent.name, exc.reason, exc)
			return JSONResponse({"error": str(exc), "reason": exc.reason}, status_code=401)
		try:
			data = parse_json(body, what="the event")
		except BadJson as exc:
			return JSONResponse({"error": str(exc), "reason": exc.reason}, status_code=422)
		except ValueError:
			return JSONResponse({"error": "the request is not JSON"}, status_code=400)
		if not isinstance(data, dict):
			return JSONResponse({"error": "the request is not a JSON object"}, status_code=400)
		event_id = data.get("event_id")
		if isinstance(event_id, str) and event_id:
			# Slack's retry (X-Slack-Retry-Num) is signed anew but names the same event: the
			# guard (kept in the run store's file) knows it after a restart too.
			verified = replace(verified, delivery=event_id)
		if self.guard.claim(verified) is not None:
			# A replay, however its signature is spelled, or Slack's retry of an event taken
			# (here or by another server on the store: the claim is one step): nothing runs,
			# and the 200 tells Slack to stop.
			return Response(status_code=200)
		if data.get("type") == "url_verification":
			return JSONResponse({"challenge": data.get("challenge", "")})
		if data.get("type") == "event_callback" and isinstance(data.get("event"), dict):
			authorizations = data.get("authorizations")
			first = authorizations[0] if isinstance(authorizations, list) and authorizations else {}
			given = first.get("user_id") if isinstance(first, dict) else None
			bot_user = self.bot_user or (given if isinstance(given, str) else None)
			team = data.get("team_id")
			message = incoming(
				data["event"],
				str(data.get("event_id", "")),
				bot_user,
				team=team if isinstance(team, str) else None,
			)
			if message is not None:
				await self.conversations.receive(message)
		return Response(status_code=200)


def _shown_size(text: str) -> int:
	"""How many characters a text takes once shown as text (`shown_as_text`)."""
	return len(text) + 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))
