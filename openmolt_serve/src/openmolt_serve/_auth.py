"""``GET /auth/callback``: where a service sends an end user back after they connect an account.

The consent URL of a run parked on ``authorization_required`` (`openmolt_core.accounts`) names
this route as its redirect (``OpenMolt(accounts={"redirect_uri": "https://<host>/auth/callback"})``).
The route hands the answer to ``om.accounts.complete``, which checks the signed ``state`` (it
names the agent, the integration, the user and the run), exchanges the code and stores the user's
tokens; then the chat of that agent whose run waits for them goes on
(`openmolt_serve.chats.Conversations.connected`). The served instances may share
``OPENMOLT_AUTH_KEY``: each refuses a state it did not make for one of its agents
(`openmolt_core.accounts.ForeignConsentError`, nothing used up), and the next one is asked.

A link sent in a chat is not stored here: whoever signs in on a link is connected as the user it
names, so a link forwarded to someone else would give their account to the chat user who asked.
Its tokens are held (`openmolt_core.accounts.Accounts.hold`) and the page shows a one-time code;
the chat user sends it to the bot, and the chat stores the tokens only if they are the user the
link was made for (`openmolt_serve.chats`). A link is a chat's when its state says so (``c``), or
when it names a user of a chat channel served here (``telegram:<id>``): a state made before the
flag existed, or by a run that had no chat around it (a durable run recovered after a restart),
is held too, never stored on trust.
Nothing of the answer (the code, the state) is logged or shown: a refusal's text is shown and
logged with them masked, and an unexpected failure is a ``502`` page naming only its kind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from starlette.responses import Response

from openmolt_core._support.webheaders import SECURITY_HEADERS
from openmolt_core.accounts import ForeignConsentError
from openmolt_core.errors import OpenMoltError
from openmolt_ui._consent import UNREACHABLE, looked_at, masked, page

if TYPE_CHECKING:
	from starlette.requests import Request

	from openmolt_core.openmolt import OpenMolt
	from openmolt_serve.chats import Conversations

__all__ = ["CALLBACK_ROUTE", "handle_callback"]

log: logging.Logger = logging.getLogger("openmolt")

CALLBACK_ROUTE = "/auth/callback"
"""The route (`openmolt_core.accounts.CALLBACK_PATH`)."""


_HEADERS = {name: value for name, value in SECURITY_HEADERS if name != "Cache-Control"}
"""What every answer of the route carries besides ``Cache-Control: no-store`` (every answer of
the server carries them too: `openmolt_ui._secured`; the viewer's pages the same)."""


async def handle_callback(
	request: Request, instances: Iterable[OpenMolt], conversations: Iterable[Conversations]
) -> Response:
	"""Complete a consent, store the user's tokens, and let the waiting chat go on.

	Every page it answers with carries `_HEADERS`: no page of another site may frame it, and
	no link or resource of it sends its address (the code, the state) on as a referrer.

	Args:
		request: The service's redirect.
		instances: The OpenMolt instances of the served agents (the one that signed the state
			completes it).
		conversations: The chat channels' conversations, told which run may go on.
	"""
	response = await _answer(request, instances, conversations)
	response.headers.update(_HEADERS)
	return response


async def _answer(
	request: Request, instances: Iterable[OpenMolt], conversations: Iterable[Conversations]
) -> Response:
	early = looked_at(request.method)
	if early is not None:
		return early
	query = request.url.query
	problem = "this sign-in link is not for this server"
	chats = list(conversations)
	channels = tuple({f"{chat.channel}:" for chat in chats})
	for om in instances:
		try:
			body = om.accounts.state_of(query)
			if body.get("c") or str(body.get("u", "")).startswith(channels):
				held = await om.accounts.hold(query)
				return _confirm_page(held.integration, held.user, held.code)
			connected = await om.accounts.complete(query)
		except ForeignConsentError as exc:  # another instance's state: the next one may own it
			problem = masked(str(exc), query)
			continue
		except OpenMoltError as exc:
			problem = masked(str(exc), query)
			log.info("auth callback refused: %s", problem)
			return page(400, f"The account was not connected: {problem}")
		except Exception as exc:
			log.warning("auth callback failed: %s", type(exc).__name__)
			return page(502, UNREACHABLE)
		# Only the chats of the agent the state names (of this instance) hold its run.
		ours = [
			chat
			for chat in chats
			if chat.agent.om is om and connected.agent in ("", chat.agent.name)
		]
		going = any([chat.connected(connected.run_id, connected.user) for chat in ours])
		said = f"Your {connected.integration} account is connected. You can close this window"
		# No chat here waits for it (a restart forgot it): the user's next message goes on.
		return page(200, f"{said}; the agent goes on." if going else f"{said} and ask again.")
	return page(400, f"The account was not connected: {problem}")


def _confirm_page(integration: str, user: str, code: str) -> Response:
	"""The page of a chat's link: who and what it connects; send the code only if you asked."""
	return page(
		200,
		f"One step is left: this connects the {integration} account you signed in with for "
		f"the chat user {user}. If that is you, send this code to the bot yourself, in the "
		"chat where you asked for the link:",
		code,
		"If you did not ask the bot for this link (someone sent it to you), do not send the "
		"code, to anyone: nothing is connected, and the sign-in is dropped when it expires.",
	)
