"""Header checks for every path that sets a header, and what a redirect hop may carry along.

A header name must be an RFC 9110 token; a value is refused when it holds any control character
(the C0 range, CR, LF and NUL included, and DEL) or non-ASCII text, and loses surrounding
whitespace (RFC 9110 section 5.5: it is not part of the value). The messages name the header,
never its value, which may be a secret. The HTTP engine checks the headers it renders, the
headers of each hop just before it is sent, and, through `CheckedAuth`, the headers every
credential adds, OAuth2 tokens included; so a value the transport would crash on, or log raw,
never reaches it.

A header a tool sends (`check_tool_header`) may not be one of `CLIENT_HEADERS`, which only the
client sets (Host, Content-Length, Transfer-Encoding, Connection and the other hop-by-hop ones).

On a redirect to another origin, or from https to http, only `SAFE_HEADERS` are kept.

A tool's cookies (``HttpTool.cookies``) are written by `cookie_pairs`, and a credential's cookie
joins them (`merge_cookies`, which `CheckedAuth` applies) rather than replacing them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Generator, Iterable, Mapping
from typing import Any

import httpx

from openmolt_core.errors import ToolError
from openmolt_core.integrations._form import percent, scalar_text

__all__ = [
	"CLIENT_HEADERS",
	"SAFE_HEADERS",
	"CheckedAuth",
	"check_header",
	"check_headers",
	"check_tool_header",
	"cookie_pairs",
	"is_token",
	"merge_cookies",
]

SAFE_HEADERS = frozenset({
	"accept",
	"accept-encoding",
	"accept-language",
	"cache-control",
	"pragma",
	"user-agent",
})  # fmt: skip
"""Headers kept on a cross-origin or downgrading redirect; every other header is dropped."""

CLIENT_HEADERS = frozenset({
	"connection",
	"content-length",
	"host",
	"keep-alive",
	"proxy-connection",
	"te",
	"trailer",
	"transfer-encoding",
	"upgrade",
})  # fmt: skip
"""Headers only the HTTP client sets: where the request goes, how its body is framed, the
connection. A tool's headers (the model's in ``httpRequest``) never name one: a
``Transfer-Encoding: chunked`` the model adds is sent beside the client's ``Content-Length``
(the framing a front end and the server behind it can disagree on: request smuggling), a
``Content-Length`` of its own cuts the body, and a ``Host`` sends the call to another site on
the same address."""

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 section 5.6.2
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def is_token(name: str) -> bool:
	"""Whether a text is a valid header field name (an RFC 9110 token)."""
	return bool(_TOKEN.fullmatch(name))


def _plain(value: Any) -> str:
	if isinstance(value, bool):
		return "true" if value else "false"
	return str(value)


def check_header(name: str, value: Any) -> str:
	"""Check one header, returning its value as text.

	Args:
		name: The header name.
		value: The value (booleans become ``true``/``false``, a list of plain values one
			comma-separated value, as HTTP writes a list; other values their text).

	Returns:
		The value without surrounding whitespace.

	Raises:
		ToolError: The name is not a token, the value is an object (or a list holding one),
			or it holds a control character or non-ASCII text. The message names the header,
			never the value.
	"""
	shown = repr(name[:60]) if isinstance(name, str) and name.isprintable() else "a header"
	if not isinstance(name, str) or not is_token(name):
		raise ToolError(
			f"{shown} is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)"
		)
	if isinstance(value, str):
		text = value
	elif isinstance(value, (list, tuple)) and not any(
		isinstance(v, (Mapping, list, tuple)) for v in value
	):
		text = ",".join(_plain(v) for v in value if v is not None)
	elif isinstance(value, (Mapping, list, tuple)):
		raise ToolError(
			f"header {shown} would be an object's text, which no service reads; write it with "
			"the json filter or param_style"
		)
	else:
		text = _plain(value)
	text = text.strip(" \t")
	if _CONTROL.search(text):
		raise ToolError(
			f"header {shown} would contain a control character (a line break, tab, NUL, escape "
			"or the like); refused"
		)
	if not text.isascii():
		raise ToolError(
			f"header {shown} would contain non-ASCII text, which HTTP headers cannot carry; "
			"use ASCII (or percent-encode the value)"
		)
	return text


def check_tool_header(name: str, value: Any) -> str:
	"""Check a header a tool sends (rendered from its definition, or the model's), returning it.

	Like `check_header`, and a name in `CLIENT_HEADERS` is refused.

	Raises:
		ToolError: The header is one the HTTP client sets, or `check_header` refuses it. The
			message names the header, never the value.
	"""
	if isinstance(name, str) and name.lower() in CLIENT_HEADERS:
		raise ToolError(
			f"header {name[:60]!r} is set by the HTTP client (it says where the request goes, "
			"how its body is framed, or how the connection is used); leave it out"
		)
	return check_header(name, value)


def check_headers(headers: httpx.Headers | Iterable[tuple[str, str]]) -> None:
	"""Check every header of a request about to be sent (see `check_header`).

	Raises:
		ToolError: A header is malformed.
	"""
	items = headers.multi_items() if isinstance(headers, httpx.Headers) else headers
	for name, value in items:
		if check_header(name, value) != value:
			raise ToolError(f"header {name[:60]!r} has surrounding whitespace; refused")


def cookie_pairs(name: str, value: Any, explode: bool = True) -> list[str]:
	"""A tool cookie's ``name=value`` pairs, written in OpenAPI's ``form`` style.

	Each value is percent-encoded but for letters, digits and ``-._~`` (RFC 6570's form-style
	expansion), so it holds only RFC 6265 cookie octets: no space, quote, comma, semicolon or
	backslash can end the cookie or add one. An array is ``ids=1,2``, or exploded one pair per
	item (``ids=1; ids=2``); an object exploded is a pair per property (``lang=nb``; a key that
	is no cookie name is percent-encoded), unexploded ``prefs=lang,nb``. Booleans are
	``true``/``false``; None items are left out.

	Args:
		name: The cookie's name (a token).
		value: Its value; None, ``""`` or an empty array or object gives no pair.
		explode: Whether an array or object gives a pair per item.

	Raises:
		ToolError: A value is not valid Unicode text.
	"""
	if value is None or (isinstance(value, (str, Mapping, list, tuple)) and not value):
		return []
	if isinstance(value, Mapping):
		items = [(str(k), percent(scalar_text(v))) for k, v in value.items() if v is not None]
		if explode:
			return [f"{k if is_token(k) else percent(k)}={v}" for k, v in items]
		return [f"{name}={','.join(f'{percent(k)},{v}' for k, v in items)}"] if items else []
	if isinstance(value, (list, tuple)):
		values = [percent(scalar_text(v)) for v in value if v is not None]
		if explode:
			return [f"{name}={v}" for v in values]
		return [f"{name}={','.join(values)}"] if values else []
	return [f"{name}={percent(scalar_text(value))}"]


def _crumbs(header: str) -> list[str]:
	"""The ``name=value`` pairs of a Cookie header, in order."""
	return [part.strip() for part in header.split(";") if part.strip()]


def _cookie_name(pair: str) -> str:
	return pair.partition("=")[0].strip()


def merge_cookies(sent: str, now: str) -> str:
	"""The Cookie header once a credential has set its cookie on a request that had one.

	The credential's pairs (those in ``now`` that ``sent`` lacked) come first; the request's own
	follow, but for one named like a credential's cookie (the credential's value is sent, never
	one the model chose). Merging again gives the same header, so a retried request, whose
	credential sets its cookie once more, is sent unchanged.

	Args:
		sent: The request's Cookie header before the credential ran (a tool's cookies).
		now: The header after it: the credential's cookie alone, or added to ``sent``.
	"""
	own = _crumbs(sent)
	added = [pair for pair in _crumbs(now) if pair not in own]
	names = {_cookie_name(pair) for pair in added}
	return "; ".join([*added, *(pair for pair in own if _cookie_name(pair) not in names)])


def _cookie_header(headers: httpx.Headers) -> str:
	return "; ".join(headers.get_list("cookie"))


def _keep_cookies(request: httpx.Request, sent: str) -> None:
	"""Put back the cookies a credential replaced (`merge_cookies`)."""
	now = _cookie_header(request.headers)
	if sent and now != sent:
		request.headers["Cookie"] = merge_cookies(sent, now)


class CheckedAuth(httpx.Auth):
	"""Wraps a credential's ``httpx.Auth`` so every header it sets is checked before sending.

	A credential that sets a ``Cookie`` header (an API key sent as a cookie) joins the cookies
	the request already holds (`merge_cookies`) instead of replacing them.

	Args:
		inner: The credential's auth.
	"""

	def __init__(self, inner: httpx.Auth) -> None:
		self.inner = inner
		self.requires_request_body = inner.requires_request_body
		self.requires_response_body = inner.requires_response_body

	def sync_auth_flow(
		self, request: httpx.Request
	) -> Generator[httpx.Request, httpx.Response, None]:
		"""Not supported: OpenMolt sends with an async client."""
		raise RuntimeError("CheckedAuth needs an httpx.AsyncClient")
		yield request  # pragma: no cover  # makes this a generator

	async def async_auth_flow(
		self, request: httpx.Request
	) -> AsyncGenerator[httpx.Request, httpx.Response]:
		"""Run the inner flow, checking the headers of each request it yields."""
		sent = _cookie_header(request.headers)
		flow = self.inner.async_auth_flow(request)
		try:
			outgoing = await flow.__anext__()
			while True:
				_keep_cookies(outgoing, sent)
				check_headers(outgoing.headers)
				response = yield outgoing
				try:
					outgoing = await flow.asend(response)
				except StopAsyncIteration:
					return
		finally:
			await flow.aclose()

	def __repr__(self) -> str:
		return f"CheckedAuth({type(self.inner).__name__})"
