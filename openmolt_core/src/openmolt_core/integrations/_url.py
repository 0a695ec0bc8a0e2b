"""How an HTTP tool's URL is built from its rendered parts: a base URL, an endpoint, a query.

The base URL is a prefix (as in httpx's ``base_url``, and as OpenAPI appends a path to its server
URL): the endpoint is joined into the base URL's *path* with one slash, whether either side has
one. A query the base URL holds (an OpenAPI server URL ``https://api.example.com/v1?api_key=K``,
a user's setting) stays the query (`split_base`): it comes first, then the endpoint's own query,
then the tool's ``query_params``, and a parameter the tool sends (in its endpoint or its
parameters, the API setup's included) replaces the base URL's of the same name (`with_base_query`),
as requests does with ``params`` and as a client library's per-request parameters override its
defaults. httpx's own ``base_url`` joins after the query (``/v1?api_key=K/pets``: encode/httpx
issue 3614), so the engine joins the text itself.

What cannot be sent as written is refused, naming the part (`ToolError`), never sent elsewhere:

- a fragment (``#...``) in a base URL an endpoint is joined to, or in an endpoint: RFC 3986
  (3.5) never sends it, and joined after one the endpoint would vanish with it;
- a ``.`` or ``..`` segment in the path (`check_dot_segments`): httpx removes them (RFC 3986,
  5.2.4), so ``/v1/../admin`` would reach ``/admin``. Input values never make one (each is an
  encoded segment, ``..`` refused: `openmolt_core.integrations.templating.render_endpoint`);
  the template's text or a config value can;
- an empty segment that Liquid markup left inside the path (`check_empty_segments`): a tag
  whose input is missing, a config value that is empty.

An absolute endpoint (``https://...``, any case) is the whole URL, and a base URL with nothing
joined to it is taken as it is (a URL the service returned, its fragment dropped by httpx).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

import httpx

from openmolt_core.errors import ToolError

__all__ = [
	"check_dot_segments",
	"check_empty_segments",
	"fragment_written",
	"is_web_url",
	"split_base",
	"with_base_query",
]

_WEB = re.compile(r"https?://", re.IGNORECASE)
# What RFC 3986 (3.4) lets a query hold as it is; anything else is percent-encoded first.
_UNSAFE_QUERY = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]")
_MARKUP = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
_EXACT_SEGMENTS = re.compile(r"path_segments\s*:[^|}]*\btrue\b")


def fragment_written(template: str) -> bool:
	"""Whether a URL template's own text (outside Liquid markup) writes a fragment (``#``).

	Checked when an integration is defined (`openmolt_core.integrations.model`), so a ``#`` in
	an endpoint or base URL is said at import, not at the first call: it is never sent.
	"""
	return "#" in _MARKUP.sub("", template)


def is_web_url(text: str) -> bool:
	"""Whether text starts like an absolute http(s) URL (the scheme in any case, RFC 3986 3.1)."""
	return bool(_WEB.match(text))


def _shown(text: str) -> str:
	"""A URL cut before its query and fragment, for an error (a key may sit in the query)."""
	return re.split(r"[?#]", text, maxsplit=1)[0][:120]


def split_base(base: str, endpoint: str, *, absolute: bool = False) -> tuple[str, str | None]:
	"""Join an endpoint into a base URL's path; return the URL and the base URL's query apart.

	Args:
		base: The rendered base URL.
		endpoint: The rendered endpoint (a path, maybe with its own query), or empty.
		absolute: The endpoint's template is an absolute URL: it is the whole URL, and the
			base URL is not used. (Decided from the template, never from what it rendered: a
			relative endpoint that renders ``http://...`` stays a path.)

	Returns:
		The base URL's scheme, host and path with the endpoint joined (and the endpoint's own
		query), and the base URL's query (None when it has none) to put back first with
		`with_base_query`.

	Raises:
		ToolError: The base URL has a fragment and an endpoint is joined to it, or the endpoint
			has a fragment.
	"""
	if absolute:
		_no_fragment(endpoint)
		return endpoint, None  # an absolute endpoint is the whole URL
	if not endpoint:
		head, mark, query = base.partition("?")
		if "#" in head:
			return base, None  # a whole URL: httpx drops its fragment, nothing is lost
		return head, (query.partition("#")[0] if mark else None)
	_no_fragment(endpoint)
	head, hash_mark, _ = base.partition("#")
	if hash_mark:
		raise ToolError(
			f"the base URL {_shown(base)!r} has a fragment ('#...'): the endpoint joined after "
			"it would never be sent (RFC 3986, 3.5); set the base URL without it"
		)
	head, mark, query = head.partition("?")
	# One joining slash: a slash the endpoint's value starts with is its own (an S3 key "/a"
	# is "//a" after the bucket, not "a").
	return f"{head.rstrip('/')}/{endpoint.removeprefix('/')}", (query if mark else None)


def _no_fragment(endpoint: str) -> None:
	if "#" in endpoint:
		raise ToolError(
			f"the endpoint {_shown(endpoint)!r} has a fragment ('#...'), which is never sent to "
			"the server (RFC 3986, 3.5); write the endpoint without it"
		)


def _name(part: str) -> str:
	return unquote_plus(part.partition("=")[0])


def with_base_query(url: httpx.URL, base_query: str | None) -> httpx.URL:
	"""Put a base URL's query before the tool's, without the parameters the tool sends itself.

	The base URL's parameters keep their text (a bare ``delete``, repeated names); one whose
	name the tool's query also has is dropped, so the tool's value is the one sent.

	Args:
		url: The joined URL with the tool's query (the endpoint's and its parameters).
		base_query: The base URL's query (`split_base`), or None.
	"""
	if base_query is None:
		return url
	own = url.query.decode("ascii")
	given = base_query
	if _UNSAFE_QUERY.search(given):
		# As httpx would send it (a space or a non-ASCII letter percent-encoded).
		given = httpx.URL(f"?{base_query}").query.decode("ascii")
	names = {_name(part) for part in own.split("&") if part}
	kept = [part for part in given.split("&") if part and _name(part) not in names]
	query = "&".join([*kept, *([own] if own else [])])
	return url.copy_with(query=query.encode("ascii")) if query else url


def check_dot_segments(url: str, where: str) -> None:
	"""Refuse a URL whose path has a ``.`` or ``..`` segment, which httpx would resolve away.

	Args:
		url: The joined URL, before httpx parses it.
		where: What it was built from, for the error (``the tool's URL``).

	Raises:
		ToolError: A segment is ``.`` or ``..``.
	"""
	rest = url.split("://", 1)[-1]
	path = re.split(r"[?#]", rest, maxsplit=1)[0].partition("/")[2]
	for segment in path.split("/"):
		if segment in (".", ".."):
			raise ToolError(
				f"{where} {_shown(url)!r} has a {segment!r} segment in its path, which HTTP "
				"clients resolve away (RFC 3986, 5.2.4), so the request would reach another "
				"path; write the base URL and endpoint without it"
			)


def check_empty_segments(template: str, rendered: str, where: str) -> None:
	"""Refuse a rendered URL with an empty path segment that its markup left, not its text.

	``/pets/{% if input.id %}{{ input.id }}{% endif %}/photos`` without an id renders
	``/pets//photos``, and a base URL ``https://host/{{ config.prefix }}/v1`` with an empty
	prefix ``https://host//v1``: another resource than the template names. An empty segment
	the template's text writes (``/a//b``), or an exact ``path_segments: true`` value (an S3
	key), is the author's. A trailing slash markup leaves is sent (GitHub lists a repository's
	root at ``/contents/``).

	Args:
		template: The template (an endpoint's path part, or a base URL).
		rendered: What it rendered (the query and fragment need not be cut off: the text's own
			``//`` count the same there).
		where: What it is, for the error (``the endpoint``, ``the base URL``).

	Raises:
		ToolError: The rendered text has more ``//`` than the template's text writes.
	"""
	found = rendered.count("//")
	if found == 0 or (found == 1 and "://" in rendered) or _EXACT_SEGMENTS.search(template):
		return
	text = _MARKUP.sub("\x00", template)
	if found > text.count("//"):
		raise ToolError(
			f"{where} {_shown(template)!r} rendered {_shown(rendered)!r}, with an empty path "
			"segment its markup left (an input it tests is missing, or a config value it reads "
			"is empty); put the slash inside the tag (`{% if input.id %}/{{ input.id }}"
			"{% endif %}`), make the input required, or set the config value"
		)
