"""The page an end user sees back from a service's consent screen, in the viewer and the server.

Both the viewer's callback (`openmolt_ui.viewer.Viewer.connect`) and the trigger server's
(`openmolt_serve._auth`) hand the redirect's query to ``om.accounts.complete``. What they show
or log of a refusal has the answer's code and state masked (a service's refusal may echo them),
the page is masked with the secrets known now and escaped, and an unexpected failure is a ``502``
page naming nothing of it.
"""

from __future__ import annotations

import html
from urllib.parse import parse_qsl

from starlette.responses import HTMLResponse

from openmolt_ui._shown import shown_text

__all__ = ["UNREACHABLE", "looked_at", "masked", "page"]

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
