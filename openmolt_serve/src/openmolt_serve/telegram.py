"""Telegram: a bot whose messages start or continue an agent's runs (Bot API, called over httpx).

Two ways in, as the Bot API offers (https://core.telegram.org/bots/api#getting-updates):

- ``polling`` (the default): `TelegramChannel.poll` calls ``getUpdates`` with a long-poll
  ``timeout`` and the ``offset`` after the last update taken, which confirms the earlier ones
  to Telegram. Nothing is exposed to the internet. (Telegram refuses ``getUpdates`` while a
  webhook is set: call ``deleteWebhook`` first.)
- ``webhook``: Telegram posts each update to ``POST /channels/telegram/<agent>``; the request
  must carry the ``X-Telegram-Bot-Api-Secret-Token`` given to ``setWebhook`` as
  ``secret_token``, else ``401``. While it is replaced (``setWebhook`` called again with a new
  one), ``previousSecretTokenEnv`` names the variable of the old one, taken too, as the other
  schemes take a previous secret; remove it once the new one is in place.

Replies use ``sendMessage`` (``chat_id``, ``text`` of at most 4096 characters, longer ones are
split; ``reply_parameters`` points at the message answered; ``link_preview_options`` asks no
link preview, `NO_PREVIEW`). With ``stream: true`` the reply is
sent as soon as the model starts writing it and grows by ``editMessageText`` (`openmolt_serve._live`). Only ``message`` updates with text
are read; in a forum, each topic (``message_thread_id``) is a conversation of its own, answered
in that topic. The bot token is part of every Bot API address, so no address is ever logged or put in
an error.
"""

from __future__ import annotations

import hmac
import logging
from typing import TYPE_CHECKING, Any

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from openmolt_core.errors import ConfigurationError, OpenMoltError
from openmolt_core.openmolt import OpenMolt
from openmolt_core.secrets import register_key
from openmolt_core.triggers import TelegramChannel, secret_from
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
from openmolt_serve.chats import Conversations, Incoming, pieces

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = [
	"MAX_TEXT",
	"MAX_WAIT",
	"NO_PREVIEW",
	"TELEGRAM_API",
	"TelegramBot",
	"TelegramError",
	"incoming",
]

log: logging.Logger = logging.getLogger("openmolt")

TELEGRAM_API = "https://api.telegram.org"
"""The Bot API's address (a local Bot API server, or a fake in tests, may replace it)."""

MAX_TEXT = 4096
"""The most characters ``sendMessage`` takes in one message, in UTF-16 code units (`units`)."""


def units(text: str) -> int:
	"""How much of `MAX_TEXT` a text takes: Telegram counts UTF-16 code units (an emoji, two)."""
	if text.isascii():
		return len(text)
	return len(text.encode("utf-16-le", "surrogatepass")) // 2


NO_PREVIEW: dict[str, Any] = {"link_preview_options": {"is_disabled": True}}
"""What every message and edit the bot sends asks: no link preview. Telegram's servers fetch a
link of a message to preview it, before anyone clicks: a reply a prompt injection wrote could send
what the run read to any address in a link's query. A link stays a link the user may open."""

MAX_WAIT = 30.0
"""The most seconds a call waits when Telegram says to (``429``, ``retry_after``) before its retry."""


class TelegramError(OpenMoltError):
	"""A Bot API call failed (the message never holds the token).

	Args:
		message: What failed.
		status_code: The HTTP status, if there was a response.
		retry_after: The seconds Telegram asked to wait before trying again (a ``429``), if any.
	"""

	def __init__(
		self, message: str, *, status_code: int | None = None, retry_after: float | None = None
	) -> None:
		super().__init__(message)
		self.status_code = status_code
		self.retry_after: float | None = retry_after
		"""The seconds Telegram asked to wait before trying again (a ``429``), if any."""


def incoming(update: dict[str, Any]) -> Incoming | None:
	"""A text message of an update as an `Incoming` (None for anything else)."""
	message = update.get("message")
	if not isinstance(message, dict) or not isinstance(message.get("text"), str):
		return None
	sender = message.get("from")
	chat = message.get("chat")
	if not isinstance(sender, dict) or not isinstance(chat, dict):
		return None
	if sender.get("is_bot") or "id" not in chat or "id" not in sender:
		return None
	topic = message.get("message_thread_id") if message.get("is_topic_message") else None
	answered = message.get("message_id")
	return Incoming(
		channel="telegram",
		chat=str(chat["id"]),
		user=str(sender.get("id", "")),
		username=name if isinstance(name := sender.get("username"), str) else None,
		text=message["text"],
		id=str(update.get("update_id", message.get("message_id", ""))),
		reply_to=str(answered) if _an_id(answered) else None,
		forwarded="forward_origin" in message or "forward_date" in message,
		thread=str(topic) if _an_id(topic) else None,  # a forum topic: its own conversation
	)


def _an_id(value: Any) -> bool:
	"""Whether an update's id is one the Bot API takes back (an integer; a bool is not one)."""
	return isinstance(value, int) and not isinstance(value, bool)


def _topic(message: Incoming) -> dict[str, Any]:
	"""``sendMessage``'s ``message_thread_id``: a reply stays in the forum topic it answers."""
	return {"message_thread_id": int(message.thread)} if message.thread else {}


class TelegramBot:
	"""One agent's Telegram bot.

	Args:
		agent: The agent it talks for.
		settings: The channel's settings.
		launcher: Starts the runs.
		http: The HTTP client (the agent's instance's, by default).
	"""

	def __init__(
		self,
		agent: Agent,
		settings: TelegramChannel,
		launcher: Launcher,
		http: httpx.AsyncClient | None = None,
	) -> None:
		self.agent = agent
		self.settings = settings
		self.token = secret_from(
			settings.token, settings.token_env, what=f"the Telegram bot token of {agent.name!r}"
		)
		self.secret_token: str | None = None
		if settings.mode == "webhook":
			self.secret_token = secret_from(
				settings.secret_token,
				settings.secret_token_env,
				what=f"the Telegram webhook secret token of {agent.name!r} (setWebhook's secret_token)",
			)
		self.previous_secret_token: str | None = None
		"""The secret token being replaced, taken too (``previousSecretTokenEnv``)."""
		if settings.mode == "webhook" and settings.previous_secret_token_env:
			self.previous_secret_token = secret_from(
				None,
				settings.previous_secret_token_env,
				what=f"the previous Telegram webhook secret token of {agent.name!r}",
			)
		register_key(  # masked in logs, runs and the viewer
			agent.om, self.token, self.secret_token, self.previous_secret_token
		)
		self.base_url = (settings.base_url or TELEGRAM_API).rstrip("/")
		self._http = http
		live = (
			LiveReplies(self.post, self.edit, limit=MAX_TEXT, size=units)
			if settings.stream
			else None
		)
		self.conversations = Conversations(agent, settings, self.reply, launcher, live)
		self.offset: int | None = None

	body_timeout: float = BODY_TIMEOUT
	"""Seconds a request's body may take to arrive (else ``408``)."""

	def __repr__(self) -> str:
		return f"TelegramBot(agent={self.agent.name!r}, mode={self.settings.mode!r})"

	@property
	def http(self) -> httpx.AsyncClient:
		"""The HTTP client."""
		return self._http or OpenMolt.of(self.agent).http()

	async def call(self, method: str, params: dict[str, Any], *, read: float = 30.0) -> Any:
		"""Call a Bot API method; return its ``result``.

		Told to wait (``429``, ``retry_after`` of at most 30 seconds), it waits and tries once
		more, so a reply in several messages is not cut short by the flood limit.

		Raises:
			TelegramError: The call failed or Telegram said ``ok: false``.
		"""
		try:
			return await self._call(method, params, read=read)
		except TelegramError as exc:
			if exc.retry_after is None or exc.retry_after > MAX_WAIT:
				raise
			await anyio.sleep(exc.retry_after)
		return await self._call(method, params, read=read)

	async def _call(self, method: str, params: dict[str, Any], *, read: float) -> Any:
		url = f"{self.base_url}/bot{self.token}/{method}"
		try:
			response = await self.http.post(url, json=params, timeout=read)
		except httpx.HTTPError as exc:
			raise TelegramError(f"Telegram {method}: {type(exc).__name__}") from None
		try:
			data = parse_json(response.content, what=f"Telegram's answer to {method}")
		except ValueError:  # not JSON, or JSON a run cannot take (BadJson)
			data = {}
		if not isinstance(data, dict):
			data = {}
		if response.status_code != 200 or not data.get("ok"):
			description = data.get("description") or response.reason_phrase
			extra = data.get("parameters")
			wait = extra.get("retry_after") if isinstance(extra, dict) else None
			raise TelegramError(
				f"Telegram {method}: {response.status_code} {description}",
				status_code=response.status_code,
				retry_after=float(wait) if isinstance(wait, int | float) and wait >= 0 else None,
			)
		return data.get("result")

	async def reply(self, message: Incoming, text: str) -> None:
		"""Send a text to the message's chat (split at 4096 characters)."""
		for n, chunk in enumerate(pieces(text, MAX_TEXT, units)):
			params: dict[str, Any] = {
				"chat_id": message.chat,
				"text": chunk,
				**_topic(message),
				**NO_PREVIEW,
			}
			if n == 0 and message.reply_to:
				params["reply_parameters"] = {
					"message_id": int(message.reply_to),
					"allow_sending_without_reply": True,
				}
			await self.call("sendMessage", params)

	async def post(self, message: Incoming, text: str) -> str:
		"""Send one text (what a message holds of it) to the message's chat; returns its id."""
		params: dict[str, Any] = {
			"chat_id": message.chat,
			"text": pieces(text, MAX_TEXT, units)[0],
			**_topic(message),
			**NO_PREVIEW,
		}
		if message.reply_to:
			params["reply_parameters"] = {
				"message_id": int(message.reply_to),
				"allow_sending_without_reply": True,
			}
		sent = await self.call("sendMessage", params)
		return str((sent or {}).get("message_id", ""))

	async def edit(self, message: Incoming, sent: str, text: str) -> None:
		"""Replace the text of a message the bot sent (``editMessageText``)."""
		params = {
			"chat_id": message.chat,
			"message_id": int(sent),
			"text": pieces(text, MAX_TEXT, units)[0],
			**NO_PREVIEW,
		}
		await self.call("editMessageText", params)

	async def poll_once(self) -> int:
		"""One ``getUpdates`` call; hands its messages over. Returns how many updates came."""
		params: dict[str, Any] = {
			"timeout": self.settings.poll_timeout,
			"allowed_updates": ["message"],
		}
		if self.offset is not None:
			params["offset"] = self.offset
		updates = await self.call("getUpdates", params, read=self.settings.poll_timeout + 10.0)
		updates = updates if isinstance(updates, list) else []
		for update in updates:
			if not isinstance(update, dict):
				continue
			update_id = update.get("update_id")
			if isinstance(update_id, int):
				self.offset = max(self.offset or 0, update_id + 1)
			message = incoming(update)
			if message is not None:
				await self.conversations.receive(message)
		return len(updates)

	async def poll(self) -> None:
		"""Long-poll until cancelled; failures are logged and retried with a growing pause."""
		pause = 1.0
		while True:
			try:
				await self.poll_once()
				pause = 1.0
			except TelegramError as exc:
				if exc.status_code in (401, 404):
					raise ConfigurationError(
						f"Telegram refused the bot token of {self.agent.name!r} ({exc}); check "
						f"{self.settings.token_env}"
					) from None
				hint = (
					" (a webhook is set: call deleteWebhook to poll)"
					if exc.status_code == 409
					else ""
				)
				log.warning("%s%s; trying again in %.0f s", exc, hint, pause)
				await anyio.sleep(pause)
				pause = min(pause * 2, 30.0)

	async def handle(self, request: Request) -> Response:
		"""``POST /channels/telegram/<agent>``: one update, in webhook mode."""
		given = request.headers.get("x-telegram-bot-api-secret-token", "").encode()
		taken = [t for t in (self.secret_token, self.previous_secret_token) if t]
		# Each compared in constant time, and each one always: no early exit tells which.
		matches = [hmac.compare_digest(given, t.encode()) for t in taken]
		if not given or not any(matches):
			return JSONResponse(
				{"error": "missing or wrong X-Telegram-Bot-Api-Secret-Token"}, status_code=401
			)
		try:
			body = await read_body(request, 1_000_000, within=self.body_timeout)
		except TooLarge:
			return JSONResponse({"error": "the update is too large"}, status_code=413)
		except SlowBody:
			return too_slow("the update")
		try:
			update = parse_json(body, what="the update")
		except BadJson as exc:
			return JSONResponse({"error": str(exc), "reason": exc.reason}, status_code=422)
		except ValueError:
			return JSONResponse({"error": "the update is not JSON"}, status_code=400)
		message = incoming(update) if isinstance(update, dict) else None
		if message is not None:
			await self.conversations.receive(message)
		return JSONResponse({"ok": True})
