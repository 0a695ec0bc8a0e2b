"""The headers every answer of OpenMolt's own web servers carries: one list, for every surface.

The run viewer (``openmolt ui``), the trigger server (``openmolt serve``: webhooks, chats, AG-UI,
A2A, the accounts' callback) and the loopback listener of ``openmolt auth`` answer browsers and
programs with pages, JSON and event streams built from runs, refusals and what a caller sent.
Each answer, whatever route made it (a refusal, a 404 of no route, a page), carries
`SECURITY_HEADERS`:

- ``Cache-Control: no-store``: an answer may hold a run's data, a one-time code or a token in
  its address; no cache keeps it;
- ``Referrer-Policy: no-referrer``: a page's address may hold a token, an OAuth code or a
  signed state, which a link or a resource would send on;
- ``X-Content-Type-Options: nosniff``: an answer that echoes what a caller sent (a name, an id)
  is read as the type it says (JSON, plain text), never sniffed as a page;
- ``X-Frame-Options: DENY`` and the policy's ``frame-ancestors 'none'``: no other site frames a
  page to make its visitor click in it;
- ``Content-Security-Policy``: `PAGE_POLICY` loads nothing, runs no script and submits no form
  (the viewer's page, which loads its own script and style, gives its own policy).

`secured` adds what an answer lacks, keeping a header a route set itself (an event stream's
``Cache-Control``, the viewer's policy). A new server or route needs nothing more than to pass
its answers through it.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["PAGE_POLICY", "SECURITY_HEADERS", "secured"]

PAGE_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
"""The content security policy of an answer that needs nothing loaded: it loads and runs
nothing, submits no form and is framed by no page."""

SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
	("Cache-Control", "no-store"),
	("Referrer-Policy", "no-referrer"),
	("X-Content-Type-Options", "nosniff"),
	("X-Frame-Options", "DENY"),
	("Content-Security-Policy", PAGE_POLICY),
)
"""Every answer's security headers (the module's docstring says why each)."""


def secured(
	headers: Iterable[tuple[bytes, bytes]], *, policy: str = PAGE_POLICY
) -> list[tuple[bytes, bytes]]:
	"""An answer's raw headers (ASGI's), with each of `SECURITY_HEADERS` it lacks added.

	A header the answer sets already is kept as it is: a route that knows better (an event
	stream's ``Cache-Control: no-cache``) says so itself.

	Args:
		headers: The answer's headers, as ASGI's ``http.response.start`` holds them.
		policy: The content security policy to add when the answer has none.

	Returns:
		The headers, the missing ones appended.
	"""
	out = list(headers)
	present = {name.lower() for name, _ in out}
	for name, value in SECURITY_HEADERS:
		key = name.lower().encode("latin-1")
		if key not in present:
			text = policy if key == b"content-security-policy" else value
			out.append((key, text.encode("latin-1")))
	return out
