"""Who chooses where an HTTP tool connects: the origin of its URL must not depend on ``input``.

The origin of a URL is its scheme, user info, host and port. In an HTTP tool it comes from a
template: the endpoint when the endpoint is written as an absolute URL (it starts with
``http://`` or ``https://``), else the base URL. `origin_part` cuts that template where the origin
ends: at the first ``/``, ``?`` or ``#`` written as plain text, outside any Liquid block, that is
not the ``//`` after the scheme. Before that point the template may use ``config`` values
(a shop domain, a region, a self-hosted base URL: whoever configures the integration chooses
them) and ``if``/``case`` tags over them, nothing else (`origin_problem`).

A tool whose host must come from the input (an upload URL the API returned, an S3 bucket in
virtual-hosted style) lists the origins it may reach in ``input_origins``: patterns over
``config`` such as ``https://files.slack.com`` or ``https://*.s3.{{ config.region }}.amazonaws.com``
(``*.`` stands for one or more DNS labels). Such a request is checked against the patterns, and
goes through the SSRF guard like any request whose host someone other than the application
chose.

At run time (`check_fixed_origin`) the engine renders the origin part again with ``config``
alone and checks that the URL it built has exactly that origin, so a template that reaches
``input`` some other way still cannot move the request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import httpx

from openmolt_core.errors import ToolError
from openmolt_core.integrations.templating import MISSING, render_string

__all__ = [
	"check_fixed_origin",
	"check_input_origin",
	"is_absolute",
	"origin_part",
	"origin_problem",
	"uses_input",
]

_MARKUP = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
_TAG = re.compile(r"\{%-?\s*(\w+)")
_OPEN = frozenset({"if", "unless", "for", "case", "capture", "raw", "comment", "tablerow"})
_ORIGIN_TAGS = frozenset(
	{"if", "elsif", "else", "endif", "unless", "endunless", "case", "when", "endcase"}
)
_STRINGS = re.compile(r"'[^']*'|\"[^\"]*\"")
_INPUT = re.compile(r"\binput\b")
_ABSOLUTE = re.compile(r"https?://", re.IGNORECASE)


def _pieces(source: str) -> list[tuple[bool, str]]:
	"""The template as (is_markup, text) pieces in order."""
	pieces: list[tuple[bool, str]] = []
	at = 0
	for match in _MARKUP.finditer(source):
		if match.start() > at:
			pieces.append((False, source[at : match.start()]))
		pieces.append((True, match.group()))
		at = match.end()
	if at < len(source):
		pieces.append((False, source[at:]))
	return pieces


@lru_cache(maxsize=1024)
def origin_part(source: str) -> str:
	"""The leading part of a URL template that decides the origin (the whole when it never ends).

	Args:
		source: A base URL or absolute endpoint template.
	"""
	depth = 0
	at = 0
	for markup, text in _pieces(source):
		if markup:
			tag = _TAG.match(text)
			if tag:
				name = tag.group(1)
				if name in _OPEN:
					depth += 1
				elif name.startswith("end") and name[3:] in _OPEN:
					depth = max(depth - 1, 0)
		elif depth == 0:
			i = 0
			while i < len(text):
				char = text[i]
				if char == "/" and text[i - 1 : i] == ":" and text[i + 1 : i + 2] == "/":
					i += 2  # the // after the scheme
					continue
				if char in "/?#":
					return source[: at + i]
				i += 1
		at += len(text)
	return source


@lru_cache(maxsize=1024)
def origin_problem(part: str) -> str | None:
	"""Why an origin part is not chosen by ``config`` alone, or None when it is.

	Args:
		part: The result of `origin_part`.
	"""
	for markup, text in _pieces(part):
		if not markup:
			continue
		plain = _STRINGS.sub("''", text)
		if _INPUT.search(plain):
			return "it uses input"
		tag = _TAG.match(text)
		if tag and tag.group(1) not in _ORIGIN_TAGS:
			return f"it uses the {tag.group(1)!r} tag (only if/case over config may shape it)"
		inner = plain.strip("{}%- \t\n")
		if re.match(r"(echo\s+)?\[", inner) or re.search(r"(?:^|[\s(,:])\[", inner):
			return "it looks a variable up by a computed name"
	return None


def uses_input(source: str) -> bool:
	"""Whether any Liquid markup of a template mentions ``input``."""
	return any(m and _INPUT.search(_STRINGS.sub("''", t)) for m, t in _pieces(source))


def is_absolute(endpoint: str) -> bool:
	"""Whether an endpoint template is written as an absolute URL (then it is the whole URL)."""
	return bool(_ABSOLUTE.match(endpoint))


def _origin_of(url: httpx.URL) -> tuple[str, str, int | None]:
	return url.scheme, url.host, url.port


def check_fixed_origin(url: str, part: str, config: Mapping[str, Any]) -> None:
	"""Check that a built URL has the origin its template's origin part gives with config alone.

	Args:
		url: The URL the engine built (before parsing).
		part: The origin part of the template (`origin_part`).
		config: The integration config.

	Raises:
		ToolError: The origin part names no host, or the URL's origin differs from it.
	"""
	rendered = render_string(part, {"config": config})
	expected_text = "" if rendered is MISSING or rendered is None else str(rendered)
	try:
		expected = httpx.URL(expected_text.strip())
		actual = httpx.URL(url)
	except (httpx.InvalidURL, ValueError, UnicodeError):
		raise ToolError("the tool's base URL is not a valid URL; check the configuration") from None
	if expected.scheme not in ("http", "https") or not expected.host:
		raise ToolError(
			"the tool's base URL does not name an http(s) host; set the integration's base URL "
			"(e.g. https://api.example.com)"
		)
	if _origin_of(actual) != _origin_of(expected) or actual.userinfo != expected.userinfo:
		raise ToolError(
			"the tool's URL would go to another host than its configured base URL; refused"
		)


def _pattern(text: str) -> tuple[str, str, bool, int | None] | None:
	value = text.strip()
	if not value:
		return None
	wildcard = "://*." in value
	try:
		url = httpx.URL(value.replace("://*.", "://wildcard.", 1))
	except (httpx.InvalidURL, ValueError, UnicodeError):
		return None
	if url.scheme not in ("http", "https") or not url.host or url.userinfo:
		return None
	host = url.host.removeprefix("wildcard.") if wildcard else url.host
	return url.scheme, host, wildcard, url.port


def check_input_origin(url: httpx.URL, patterns: Sequence[str], config: Mapping[str, Any]) -> None:
	"""Check that a URL whose host came from the input is on one of the tool's origins.

	Args:
		url: The URL the engine built.
		patterns: The tool's ``input_origins`` (templates over config; ``*.`` is one or more
			DNS labels).
		config: The integration config.

	Raises:
		ToolError: The URL carries user info or is on no listed origin.
	"""
	if url.userinfo:
		raise ToolError("a URL with a user name or password is not allowed here")
	host = url.host.lower().rstrip(".")
	for source in patterns:
		rendered = render_string(source, {"config": config})
		parsed = _pattern("" if rendered is MISSING or rendered is None else str(rendered))
		if parsed is None:
			continue
		scheme, base, wildcard, port = parsed
		if url.scheme != scheme or url.port != port:
			continue
		if host == base and not wildcard:
			return
		if wildcard and host.endswith(f".{base}") and len(host) > len(base) + 1:
			return
	raise ToolError(
		f"{url.scheme}://{url.host} is not one of the hosts this tool may reach; use a URL the "
		"service returned for this purpose"
	)
