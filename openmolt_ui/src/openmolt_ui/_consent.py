"""The page an end user sees back from a service's consent screen, in the viewer and the server.

Both the viewer's callback (`openmolt_ui.viewer.Viewer.connect`) and the trigger server's
(`openmolt_serve._auth`) hand the redirect's query to ``om.accounts.complete``. What they show
or log of a refusal has the answer's code and state masked (a service's refusal may echo them),
the page is masked with the secrets known now and escaped, and an unexpected failure is a ``502``
page naming nothing of it.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from starlette.responses import HTMLResponse

if TYPE_CHECKING:
	from openmolt_ui.viewer import SignIn

from openmolt_ui._shown import shown_text

__all__ = ["UNREACHABLE", "confirm_page", "looked_at", "masked", "page"]

UNREACHABLE = "The account was not connected: the service could not be reached."
"""What the ``502`` page says when the consent could not be completed for an unexpected reason."""


def page(status: int, text: str, *more: str) -> HTMLResponse:
	"""A page saying ``text`` (masked, escaped), never cached.

	The text is masked with the secrets known now (`openmolt_ui._shown.shown_text`), as
	everything else the viewer and the server serve: a service's refusal may echo a client
	secret or a token this process knows.

	Args:
		status: The HTTP status.
		text: What to tell the end user.
		*more: Further paragraphs (a code to copy stands alone in one).
	"""
	shown = "".join(f"<p>{html.escape(shown_text(t))}</p>" for t in (text, *more))
	body = f"<!doctype html><meta charset=utf-8><title>OpenMolt</title>{shown}"
	return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def looked_at(method: str) -> HTMLResponse | None:
	"""The page for a request that must not complete the consent, or None for a ``GET``.

	Only the browser's ``GET`` uses the single-use state: a ``HEAD`` (a link checker, a mail
	scanner, a prefetch) gets the page's headers and leaves the link as it was.

	Args:
		method: The request's HTTP method.
	"""
	if method == "GET":
		return None
	return page(200, "Open this link in a browser to connect the account.")


def masked(text: str, query: str) -> str:
	"""``text`` without the values of the answer's code and state (a refusal may echo them).

	Args:
		text: What a refusal says.
		query: The redirect's query string.
	"""
	for name, value in parse_qsl(query):
		if name in ("code", "state") and len(value) >= 4:
			text = text.replace(value, f"[{name}]")
	return text


def confirm_page(sign_in: SignIn, go: str) -> HTMLResponse:
	"""The page before a sign-in the viewer starts: who is connected, what, for which agent.

	Whoever signs in on the next page gives that account to the user it names: the page says so
	before the browser leaves for the service.

	Args:
		sign_in: The sign-in (its user, integration and agent are shown, masked and escaped).
		go: The viewer's address that sets the browser's cookie and goes to the service.
	"""
	what = (
		f"Connect a {sign_in.integration} account for the user {sign_in.user}: the agent "
		f"{sign_in.agent} will act with it for {sign_in.user}."
	)
	warn = (
		f"Sign in only with {sign_in.user}'s own {sign_in.integration} account. The sign-in "
		"finishes in this browser only, within "
		f"{int(sign_in.ttl // 60)} minutes."
	)
	shown = "".join(f"<p>{html.escape(shown_text(t))}</p>" for t in (what, warn))
	link = f'<p><a href="{html.escape(go, quote=True)}">Continue to sign in</a></p>'
	body = f"<!doctype html><meta charset=utf-8><title>OpenMolt</title>{shown}{link}"
	return HTMLResponse(body, headers={"Cache-Control": "no-store"})
