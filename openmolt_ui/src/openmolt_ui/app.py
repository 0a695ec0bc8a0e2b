"""The viewer's web application: a Starlette app with a JSON API, server-sent events and the page.

| route | what |
| --- | --- |
| ``GET /?token=...`` | the page (the token in a ``meta`` tag, for its script) |
| ``GET /static/...`` | its script and style sheet (shipped in the wheel, no build step) |
| ``GET /api/state`` | runs, questions and approvals waiting |
| ``GET /api/stream`` | the same, pushed as server-sent events (``state``) whenever it changes |
| ``GET /api/runs?agent=&status=&trigger=&user=&search=&since=&before=&limit=`` | runs, filtered, paged |
| ``GET /api/runs/{id}`` | one run and its events |
| ``GET /api/runs/{id}/export`` | one run as a JSON file (row, events, sub-agents' rows) |
| ``GET /api/overview?days=N`` | runs, tokens and cost per day and per agent |
| ``GET /api/runs/{id}/stream?after=N`` | its new events as they happen (``event``, ``run``, ``reset``) |
| ``POST /api/questions/{id}`` | answer a question: ``{"answer": "..."}`` |
| ``POST /api/approvals/{id}`` | decide a call: ``{"action": "approve" / "deny" / "edit", "reason", "input"}`` |
| ``GET /auth/start?run=&index=`` | start a parked run's sign-in in this browser: who and what, then the service |
| ``GET /auth/callback`` | an end user connected an account (`openmolt_core.accounts`): store it, resume the run |

Every request must carry the viewer's token: in the ``X-OpenMolt-Token`` header (the page's
``fetch`` calls, and every ``POST``), or in the URL's ``?token=`` for a ``GET`` (the page itself,
its script and style sheet, and the ``EventSource`` streams, which cannot send headers). No cookie
carries it: a browser sends a cookie set by ``127.0.0.1`` to every port of ``127.0.0.1``, so
another local server would receive it. A ``POST`` needs the header, so another site cannot make a
browser post to the viewer. Without the token the answer is ``403``, except at
``GET /auth/callback``, where a service sends a user's browser back: it carries no token, and the
signed ``state`` of the consent it completes is its check, with the cookie ``/auth/start`` set:
the viewer has no sessions, so a sign-in finishes only in the browser that started it here
(``HttpOnly``, ``SameSite=Lax``, for ``/auth/callback`` only, one per link, for 10 minutes). A
run's own consent link, a chat's, or one another browser started, is refused. When bound to a loopback
address, requests must also name a loopback host (against DNS rebinding).

Server-sent events rather than websockets: the page only listens, and sends its rare answers as
plain ``POST`` requests; ``EventSource`` reconnects by itself and needs nothing on the server but a
streaming response.
"""

from __future__ import annotations

import html
import json
import logging
import secrets
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from openmolt_core._support.jsonsafe import UnsafeJson, loads
from openmolt_core.accounts import CALLBACK_PATH
from openmolt_ui._choices import ORIGINS, STATUSES, options
from openmolt_ui._live import ApprovalDecision
from openmolt_ui._secured import SecuredResponses
from openmolt_ui._shown import shown
from openmolt_ui._waiting import PARKED

if TYPE_CHECKING:
	from openmolt_ui.viewer import Viewer

__all__ = ["HEADER", "TokenGuard", "create_app", "sse"]

log: logging.Logger = logging.getLogger("openmolt")

CALLBACK_START = "/auth/start"
"""Where the page starts a sign-in for a parked run, bound to the browser (`Viewer.sign_in`)."""

HEADER = "x-openmolt-token"
"""The header that carries the token (required on ``POST``)."""

_HEARTBEAT = 15.0  # seconds between comments on an idle stream, so proxies keep it open

_VIEWER_POLICY = (
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
"""The viewer's content security policy: its own script, style and API, nothing else."""


class TokenGuard:
	"""ASGI middleware that refuses every request without the viewer's token (``403``).

	Args:
		app: The application it guards.
		token: The token.
	"""

	def __init__(self, app: ASGIApp, token: str) -> None:
		self.app = app
		self.token = token
		# Every answer, the 403 of a request without the token included, with its headers.
		self._secured = SecuredResponses(self._guarded, policy=_VIEWER_POLICY)

	def _ok(self, given: str | None) -> bool:
		return given is not None and secrets.compare_digest(given.encode(), self.token.encode())

	async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
		"""Check the token, then pass the request on; every answer gets the security headers."""
		await self._secured(scope, receive, send)

	async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
		if scope["type"] != "http":
			await self.app(scope, receive, send)
			return
		request = Request(scope)
		header = request.headers.get(HEADER)
		query = request.query_params.get("token")
		if request.method == "GET" and request.url.path == CALLBACK_PATH:
			allowed = True  # a service's redirect: the consent's signed state is checked
		elif request.method in ("GET", "HEAD"):
			allowed = self._ok(header) or self._ok(query)
		else:
			allowed = self._ok(header)  # a header: a page of another site cannot set it
		if not allowed:
			response = Response(
				"forbidden: this viewer needs its token (open the URL `openmolt ui` printed)\n",
				status_code=403,
				media_type="text/plain",
				headers={"cache-control": "no-store"},
			)
			await response(scope, receive, send)
			return
		await self.app(scope, receive, send)


class MaskedJSONResponse(JSONResponse):
	"""A JSON response whose content is masked (`shown`) when it is rendered."""

	def render(self, content: Any) -> bytes:
		"""The content, masked, as JSON."""
		return super().render(shown(content))


def sse(event: str, data: Any, *, id: int | None = None) -> str:
	"""One server-sent event: its name, an optional id, and the data (masked) as one line of JSON."""
	head = f"id: {id}\n" if id is not None else ""
	text = json.dumps(shown(data), ensure_ascii=False, default=str)
	return f"{head}event: {event}\ndata: {text}\n\n"


def _page(token: str) -> str:
	template = resources.files("openmolt_ui").joinpath("static/index.html").read_text("utf-8")
	in_url = html.escape(quote(token, safe=""), quote=True)
	return (
		template.replace("{{TOKEN_URL}}", in_url)
		.replace("{{TOKEN}}", html.escape(token))
		.replace("{{STATUS_OPTIONS}}", options(STATUSES, "any status"))
		.replace("{{ORIGIN_OPTIONS}}", options(ORIGINS, "any origin"))
		.replace("{{PARKED}}", html.escape(" ".join(sorted(PARKED))))
	)


def create_app(viewer: Viewer) -> ASGIApp:
	"""The viewer's ASGI application, guarded by its token.

	Args:
		viewer: The viewer whose runs, questions and approvals it serves.
	"""

	async def index(request: Request) -> Response:
		return HTMLResponse(_page(viewer.token))

	async def state(request: Request) -> Response:
		return MaskedJSONResponse(await viewer.snapshot())

	async def stream(request: Request) -> Response:
		async def events() -> AsyncIterator[str]:
			last: str | None = None
			while not viewer.closing:
				changed = viewer.live.changed
				snapshot = await viewer.snapshot()
				text = json.dumps(snapshot, sort_keys=True, default=str)
				if text != last:
					last = text
					yield sse("state", snapshot)
				with anyio.move_on_after(viewer.poll) as scope:
					await changed.wait()
				if scope.cancelled_caught and viewer.store is None:
					yield ": idle\n\n"
			yield sse("end", {})

		return _streaming(events())

	async def run_list(request: Request) -> Response:
		asked = _filters(request.query_params)
		if isinstance(asked, str):
			return MaskedJSONResponse({"error": asked}, status_code=400)
		limit, filters = asked
		rows = await viewer.runs(limit + 1, **filters)
		return MaskedJSONResponse({"runs": rows[:limit], "more": len(rows) > limit})

	async def export(request: Request) -> Response:
		run_id = request.path_params["run_id"]
		found = await viewer.export(run_id)
		if found is None:
			return MaskedJSONResponse({"error": f"no run with id {run_id!r}"}, status_code=404)
		# ASCII only: a header is Latin-1 (another letter was a 500), and no bidi override.
		name = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in run_id)
		return MaskedJSONResponse(
			found, headers={"content-disposition": f'attachment; filename="run-{name}.json"'}
		)

	async def overview(request: Request) -> Response:
		text = request.query_params.get("days", "14")
		if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 366:
			return MaskedJSONResponse(
				{"error": f"days must be a whole number from 1 to 366, not {text!r}"},
				status_code=400,
			)
		return MaskedJSONResponse(await viewer.overview(int(text)))

	async def run(request: Request) -> Response:
		run_id = request.path_params["run_id"]
		found = await viewer.run_view(run_id)
		if found is None:
			return MaskedJSONResponse({"error": f"no run with id {run_id!r}"}, status_code=404)
		return MaskedJSONResponse(found)

	async def run_stream(request: Request) -> Response:
		run_id = request.path_params["run_id"]
		try:
			after = int(request.query_params.get("after", "0"))
		except ValueError:
			return MaskedJSONResponse({"error": "after must be a whole number"}, status_code=400)

		async def events() -> AsyncIterator[str]:
			cursor, source, last = after, None, None
			idle = 0.0
			while not viewer.closing:
				changed = viewer.live.changed
				view = await viewer.run_events(run_id, after=cursor)
				if view is None:
					yield sse("gone", {"run_id": run_id})
					return
				if source is not None and view["source"] != source:
					cursor = 0  # the run moved (resumed here): start its events again
					yield sse("reset", {"run_id": run_id})
					view = await viewer.run_events(run_id, after=0)
					if view is None:
						return
				source = view["source"]
				if view["events"]:  # a page of events at once: one write, not one per event
					cursor = view["events"][-1]["id"]
					yield "".join(sse("event", e, id=e["id"]) for e in view["events"])
				summary = json.dumps(view["run"], sort_keys=True, default=str)
				if summary != last:
					last = summary
					yield sse("run", view["run"])
				if source == "store" and len(view["events"]) >= viewer.page:
					continue  # a page full: more are stored already, read them at once
				with anyio.move_on_after(viewer.poll if source == "store" else _HEARTBEAT) as scope:
					await changed.wait()
				idle = idle + viewer.poll if scope.cancelled_caught else 0.0
				if scope.cancelled_caught and source == "live":
					yield ": idle\n\n"
			yield sse("end", {})

		return _streaming(events())

	async def answer(request: Request) -> Response:
		try:
			body = await _json(request, viewer.body_timeout)
		except _BodyError as exc:
			return MaskedJSONResponse({"error": str(exc)}, status_code=exc.status)
		if body is None or not isinstance(body.get("answer"), str):
			return MaskedJSONResponse(
				{"error": 'send {"answer": "..."} as JSON (the answer is a string)'},
				status_code=400,
			)
		if not body["answer"].strip():
			return MaskedJSONResponse(
				{"error": "answer is empty: type an answer (an empty one tells the agent nothing)"},
				status_code=400,
			)
		outcome = await viewer.answer(request.path_params["question_id"], body["answer"])
		codes = {"answered": 200, "resuming": 202, "unknown": 404, "cannot": 409}
		return MaskedJSONResponse(outcome, status_code=codes[outcome["status"]])

	async def decide(request: Request) -> Response:
		try:
			body = await _json(request, viewer.body_timeout)
		except _BodyError as exc:
			return MaskedJSONResponse({"error": str(exc)}, status_code=exc.status)
		decision = _decision(body)
		if isinstance(decision, str):
			return MaskedJSONResponse({"error": decision}, status_code=400)
		outcome = await viewer.decide(request.path_params["approval_id"], decision)
		codes = {"answered": 200, "resuming": 202, "unknown": 404, "cannot": 409}
		return MaskedJSONResponse(outcome, status_code=codes[outcome["status"]])

	async def callback(request: Request) -> Response:
		from openmolt_ui._consent import UNREACHABLE, looked_at, page

		early = looked_at(request.method)
		if early is not None:
			return early
		try:
			connected, text, cookie = await viewer.connect(request.url.query, request.cookies)
		except Exception as exc:  # the code exchange failed unexpectedly: nothing of it shown
			log.warning("auth callback failed: %s", type(exc).__name__)
			return page(502, UNREACHABLE)
		response = page(200 if connected else 400, text)
		if cookie:  # used: the browser forgets it
			response.delete_cookie(cookie, path=CALLBACK_PATH, httponly=True, samesite="lax")
		return response

	async def sign_in(request: Request) -> Response:
		from openmolt_ui._consent import confirm_page, page
		from openmolt_ui.viewer import SignIn

		run_id = request.query_params.get("run", "")
		index = request.query_params.get("index", "")
		made = await viewer.sign_in(run_id, index)
		if not isinstance(made, SignIn):
			return page(404, f"No sign-in to start: {made}.")
		if request.query_params.get("go") != "1" or request.method != "GET":
			# First the page that says who is connected, for which agent: the one who opens the
			# link signs in with the account the agent will use for that user.
			go = f"{CALLBACK_START}?run={quote(run_id, safe='')}&index={quote(index, safe='')}&go=1"
			return confirm_page(made, f"{go}&token={quote(viewer.token)}")
		response = Response(status_code=303, headers={"location": made.url})
		response.set_cookie(
			made.cookie,
			made.secret,
			max_age=int(made.ttl),
			path=CALLBACK_PATH,
			secure=request.url.scheme == "https",
			httponly=True,
			samesite="lax",  # sent on the service's top-level redirect back, not on a subrequest
		)
		return response

	routes = [
		Route(CALLBACK_PATH, callback),
		Route(CALLBACK_START, sign_in),
		Route("/", index),
		Route("/api/state", state),
		Route("/api/stream", stream),
		Route("/api/runs", run_list),
		Route("/api/overview", overview),
		Route("/api/runs/{run_id}/export", export),
		Route("/api/runs/{run_id}", run),
		Route("/api/runs/{run_id}/stream", run_stream),
		Route("/api/questions/{question_id}", answer, methods=["POST"]),
		Route("/api/approvals/{approval_id}", decide, methods=["POST"]),
		Mount("/static", StaticFiles(packages=[("openmolt_ui", "static")]), name="static"),
	]
	middleware = []
	if viewer.loopback:
		hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
		middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=hosts))
	app = Starlette(routes=routes, middleware=middleware)
	return TokenGuard(app, viewer.token)


def _streaming(body: AsyncIterator[str]) -> Response:
	return StreamingResponse(
		body,
		media_type="text/event-stream",
		headers={"cache-control": "no-store", "x-accel-buffering": "no"},
	)


_MAX_BODY = 1_000_000  # bytes: an answer or a decision is small


class _BodyError(Exception):
	def __init__(self, status: int, message: str) -> None:
		super().__init__(message)
		self.status = status


async def _json(request: Request, deadline: float) -> dict[str, Any] | None:
	"""The request's JSON object (None if it is not one), read within ``deadline`` seconds.

	Decoded as a model's reply is (`openmolt_core._support.jsonsafe.loads`): ``NaN``, an
	infinity, a lone surrogate (a state cannot hold them) and a key twice (which one was meant
	is a guess) are refused, not acted on.

	Raises:
		_BodyError: The body took too long (408), is too large (413), or is JSON a state cannot
			hold or with a key twice (400).
	"""
	chunks: list[bytes] = []
	size = 0
	with anyio.move_on_after(deadline) as scope:
		async for chunk in request.stream():
			size += len(chunk)
			if size > _MAX_BODY:
				raise _BodyError(413, f"the body is larger than {_MAX_BODY} bytes")
			chunks.append(chunk)
	if scope.cancelled_caught:
		raise _BodyError(408, f"the body did not arrive within {deadline:g} s")
	raw = b"".join(chunks) or b"null"
	try:  # as json.loads reads bytes: a surrogate's raw bytes decode to it, then are refused
		body = loads(raw.decode(json.detect_encoding(raw), "surrogatepass"))
	except UnsafeJson as exc:
		raise _BodyError(400, f"the body was not acted on: {exc}") from None
	except (ValueError, RecursionError):  # not JSON, or nested past what the parser can follow
		return None
	return body if isinstance(body, dict) else None


def _filters(query: Mapping[str, str]) -> tuple[int, dict[str, str | None]] | str:
	"""The list's filters from the query string, or what is wrong with them."""
	filters: dict[str, str | None] = {
		key: (query.get(key) or "").strip() or None
		for key in ("agent", "status", "trigger", "search", "since", "before", "user")
	}
	if filters["status"] is not None and filters["status"] not in STATUSES:
		return f"status must be one of {', '.join(STATUSES)}, not {filters['status']!r}"
	for key in ("since", "before"):
		value = filters[key]
		if value is None:
			continue
		try:
			moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
		except ValueError:
			return f"{key} must be an ISO 8601 time such as 2026-05-01T00:00:00Z, not {value!r}"
		if moment.tzinfo is None:
			moment = moment.replace(tzinfo=UTC)
		filters[key] = moment.astimezone(UTC).isoformat()
	text = query.get("limit", "50")
	if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 500:
		return f"limit must be a whole number from 1 to 500, not {text!r}"
	return int(text), filters


def _decision(body: dict[str, Any] | None) -> ApprovalDecision | str:
	if body is None:
		return (
			'send {"action": "approve" | "deny" | "edit", "reason": "...", "input": {...}} as JSON'
		)
	action = body.get("action")
	reason = body.get("reason", "")
	if action not in ("approve", "deny", "edit"):
		return "action must be 'approve', 'deny' or 'edit' (approve with the edited input)"
	if not isinstance(reason, str):
		return "reason must be a string"
	if action == "edit":
		edited = body.get("input")
		if not isinstance(edited, dict):
			return "action 'edit' needs the edited input as a JSON object in 'input'"
		return ApprovalDecision("edit", reason, edited)
	if action == "deny" and not reason.strip():
		return "a denial needs a reason: the agent reads it"
	return ApprovalDecision(action, reason)
