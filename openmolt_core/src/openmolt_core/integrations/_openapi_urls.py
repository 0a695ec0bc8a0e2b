"""The URLs of an imported document, checked when it is imported (the guard checks them again).

A document's author chooses its ``servers`` (top level, per path and per operation, with their
variables) and its OAuth2 URLs. When imported, each URL an imported tool would use is built
(variables substituted with their defaults) and refused if it is not plain http(s), carries a
user name or password or Liquid markup, or names a host the SSRF guard refuses without asking
the DNS: an IP literal in any spelling (``127.1``, ``2130706433``, ``[::ffff:127.0.0.1]``), a
cloud metadata name, or ``localhost``. Names that only resolve to such addresses are refused
when a tool calls them: imported integrations set ``guard_every_request``, so every request goes
through `openmolt_core.integrations._ssrf.SsrfGuard`.

An operation's own servers (per path or per operation) must be on the base URL's origin (the
document's first server, or the ``base_url`` the user gave): its requests carry the
integration's credentials and its input, so another scheme, host or port is refused unless the
user allows that host (`other_hosts`, `check_same_origin`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from openmolt_core._support.masking import masked_excerpt, url_secrets
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations._iana import METADATA_NAMES
from openmolt_core.integrations._ssrf import InternalHosts, parse_ip, refusal
from openmolt_core.integrations._url import is_web_url

__all__ = [
	"check_same_origin",
	"check_url",
	"no_liquid",
	"other_hosts",
	"resolved",
	"server_url",
	"shown",
]

_LIQUID = ("{{", "}}", "{%", "%}")


def no_liquid(text: str, where: str) -> str:
	"""Refuse document text that would be read as Liquid in a tool's templates.

	Args:
		text: A path, URL or name from the document.
		where: Its place in the document, for the error.

	Raises:
		ConfigurationError: The text holds ``{{``, ``}}``, ``{%`` or ``%}``.
	"""
	if any(mark in text for mark in _LIQUID):
		raise ConfigurationError(
			f"{where}: {shown(text, 120)!r} holds Liquid markup ({{{{ or {{%), which the tool's "
			"templates would run; an OpenAPI path, URL or name never needs it"
		)
	return text


def server_url(server: Any, where: str) -> str:
	"""A server object's URL with its variables replaced by their defaults.

	Args:
		server: The server object (``{"url": ..., "variables": {...}}``).
		where: Its place in the document.

	Raises:
		ConfigurationError: The server is not an object, a variable has no usable default (or
			one its enum does not list), or the URL names a variable it does not define.
	"""
	if not isinstance(server, Mapping):
		raise ConfigurationError(f"{where}: a server must be an object with a url")
	url = server.get("url")
	if not isinstance(url, str):
		raise ConfigurationError(f"{where}/url: must be a string")
	variables = server.get("variables") or {}
	if not isinstance(variables, Mapping):
		raise ConfigurationError(f"{where}/variables: must be an object")
	no_liquid(url, f"{where}/url")  # before its braces are read as variables
	named = set(_VARIABLE.findall(url))
	for name, spec in variables.items():
		default = spec.get("default") if isinstance(spec, Mapping) else None
		if not isinstance(default, (str, int, float)) or isinstance(default, bool):
			raise ConfigurationError(
				f"{where}/variables/{name}: a server variable needs a default (a string)"
			)
		allowed = spec.get("enum")
		if isinstance(allowed, list) and allowed and str(default) not in map(str, allowed):
			raise ConfigurationError(
				f"{where}/variables/{name}/default: {str(default)[:60]!r} is not one of its enum "
				f"({', '.join(repr(str(a))[:40] for a in allowed[:10])})"
			)
		url = url.replace(f"{{{name}}}", str(default))
	missing = sorted(named - {str(n) for n in variables})
	if missing:
		raise ConfigurationError(
			f"{where}/url: {shown(url, 120)!r} names {{{missing[0][:40]}}}, and the server defines no "
			"variable of that name to fill it; pass base_url= (--base-url) with the value"
		)
	return url


_VARIABLE = re.compile(r"\{([^{}]*)\}")
"""A server URL's variable, ``{tenant}``."""


def _host_problem(host: str, internal: InternalHosts) -> str | None:
	name = host.lower().rstrip(".")
	if name in METADATA_NAMES and not internal.names_host(name):
		return "a cloud metadata service"
	if (name == "localhost" or name.endswith(".localhost")) and not internal.names_host(name):
		return "the local machine (localhost)"
	address = parse_ip(host)
	if address is None:
		return None
	why = refusal(address)
	if why is None or internal.allows(name, address):
		return None
	return f"a non-public address ({address}: {why})"


def check_url(url: str, where: str, internal: InternalHosts) -> str:
	"""Check a URL an imported tool would reach, and return it without its path's trailing slash.

	Args:
		url: The absolute URL.
		where: Its place in the document (or ``base_url``).
		internal: The internal hosts the user allowed when importing.

	Raises:
		ConfigurationError: The URL is not absolute http(s), carries user info or Liquid, or
			names a host the SSRF guard refuses; the message names the place and the way out.
	"""
	no_liquid(url, where)
	quoted = shown(url)
	try:
		parsed = httpx.URL(url)
	except (httpx.InvalidURL, ValueError) as exc:
		raise ConfigurationError(f"{where}: {quoted!r} is not a valid URL ({exc})") from None
	if parsed.scheme not in ("http", "https") or not parsed.host:
		raise ConfigurationError(
			f"{where}: {quoted!r} is not an absolute http(s) URL; pass base_url= (--base-url)"
		)
	if ("%" in parsed.host and ":" not in parsed.host) or parsed.fragment or "#" in url:
		raise ConfigurationError(
			f"{where}: {quoted!r} has a percent-encoded host or a fragment; write the host "
			"plainly and leave out the '#...'"
		)
	if parsed.userinfo:
		raise ConfigurationError(
			f"{where}: {quoted!r} carries a user name or password; credentials belong in the "
			"integration's config"
		)
	problem = _host_problem(parsed.host, internal)
	if problem is not None:
		raise ConfigurationError(
			f"{where}: {quoted!r} points to {problem}; imported tools never reach loopback, "
			"private, link-local or metadata addresses unless you allow the host: "
			f"from_openapi(..., allow_internal_hosts=[{parsed.host!r}]) or "
			f"--allow-internal-host {parsed.host}"
		)
	head, mark, query = url.partition("?")
	return f"{head.rstrip('/')}{mark}{query}"  # a slash ending a query value is the value's


def resolved(url: str, base: str, where: str) -> str:
	"""A URL of the document made absolute: a relative one is resolved against the base URL.

	OpenAPI resolves a relative URL (a server's ``/v2``, an OAuth2 ``tokenUrl`` of
	``/oauth/token``) against the Server Object's URL; the base URL stands for it. An absolute
	URL is returned as it is. `check_url` checks the result.

	Args:
		url: The URL as the document writes it.
		base: The integration's base URL.
		where: Its place in the document.

	Raises:
		ConfigurationError: It holds Liquid markup, or cannot be resolved.
	"""
	no_liquid(url, where)
	if is_web_url(url):
		return url
	# Joined under the base URL's path (``beta`` under ``/v1?k=1`` is ``/v1/beta``); as RFC 3986
	# (5.2.2) resolves a reference with a path, the base URL's query is not carried over.
	path = base.partition("?")[0].rstrip("/")
	try:
		return str(httpx.URL(path + "/").join(url))
	except (httpx.InvalidURL, ValueError) as exc:
		raise ConfigurationError(f"{where}: {shown(url)!r} is not a URL ({exc})") from None


def other_hosts(hosts: Sequence[str]) -> frozenset[str]:
	"""Check the ``allow_hosts`` option: the hosts other than the base URL's that tools may reach.

	Args:
		hosts: Host names or IP addresses, as written in a URL (``upload.example.com``).

	Raises:
		ConfigurationError: An entry is not a bare host (a URL, a path, empty text).
	"""
	out = set()
	for host in hosts:
		text = host.strip().lower().rstrip(".") if isinstance(host, str) else ""
		try:
			parsed = httpx.URL(f"https://{text}/")
		except (httpx.InvalidURL, ValueError):
			parsed = None
		if not text or parsed is None or parsed.host != text.strip("[]") or parsed.port:
			raise ConfigurationError(
				f"allow_hosts: {str(host)[:100]!r} is not a host name; give the host alone, "
				"like 'upload.example.com' (no scheme, port or path)"
			)
		out.add(parsed.host)
	return frozenset(out)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
	default = {"http": 80, "https": 443}.get(url.scheme)
	return url.scheme, url.host.lower(), url.port or default


def check_same_origin(url: str, base: str, where: str, allowed: frozenset[str]) -> None:
	"""Refuse an operation's server on another origin than the base URL, unless its host is allowed.

	Args:
		url: The operation's server URL (checked by `check_url`).
		base: The integration's base URL.
		where: The server's place in the document.
		allowed: The hosts the user allowed (`other_hosts`).

	Raises:
		ConfigurationError: Another scheme, host or port; the message names both and the fix.
	"""
	parsed = httpx.URL(url)
	if _origin(parsed) == _origin(httpx.URL(base)) or parsed.host.lower() in allowed:
		return
	host = parsed.host
	raise ConfigurationError(
		f"{where}: its servers send it to {shown(url)!r}, another host (or scheme or port) "
		f"than the API's base URL {shown(base)!r}; its requests would carry the integration's "
		"credentials and the tool's input there. If that host serves this API, allow it: "
		f"from_openapi(..., allow_hosts=[{host!r}]) or --allow-host {host}; else leave the "
		"operation out (operations=..., --operation)"
	)


_SHARED_SUFFIXES = frozenset(
	{
		"amazonaws.com",
		"appspot.com",
		"azure-api.net",
		"azurecontainerapps.io",
		"azureedge.net",
		"azurestaticapps.net",
		"azurewebsites.net",
		"blogspot.com",
		"cloudapp.net",
		"cloudfront.net",
		"cloudfunctions.net",
		"deno.dev",
		"digitaloceanspaces.com",
		"elasticbeanstalk.com",
		"firebaseapp.com",
		"firebaseio.com",
		"fly.dev",
		"github.io",
		"gitlab.io",
		"glitch.me",
		"googleusercontent.com",
		"herokuapp.com",
		"hf.space",
		"koyeb.app",
		"loca.lt",
		"modal.run",
		"myshopify.com",
		"netlify.app",
		"ngrok-free.app",
		"ngrok.app",
		"ngrok.dev",
		"ngrok.io",
		"now.sh",
		"on.aws",
		"ondigitalocean.app",
		"onrender.com",
		"pages.dev",
		"pythonanywhere.com",
		"r2.dev",
		"railway.app",
		"readthedocs.io",
		"repl.co",
		"replit.app",
		"replit.dev",
		"run.app",
		"supabase.co",
		"surge.sh",
		"trycloudflare.com",
		"vercel.app",
		"web.app",
		"windows.net",
		"workers.dev",
	}
)
"""Domains whose subdomains belong to different tenants (hosting services of the Public Suffix
List's private section): one of their names is no common site of two hosts. Some hold their
tenants deeper than one label (``bucket.s3.amazonaws.com``,
``id.execute-api.us-east-1.amazonaws.com``, ``svc-uc.a.run.app``), so a host under one of them
is a site of its own, shared with no other name."""


def _site(host: str) -> str | None:
	"""A host's registrable domain, as near as can be told without the Public Suffix List.

	The last two labels (``googleapis.com``), or three under a country's second level
	(``example.co.uk``: a two-letter top level under a label of at most three letters). A host
	under a shared hosting domain (``mine.github.io``, ``bucket.s3.amazonaws.com``) is its own
	site: the list's entries under those go deeper than a label, and a wrong guess would hand
	another tenant the client secret. None for an IP address or a bare name.
	"""
	labels = host.lower().rstrip(".").split(".")
	if len(labels) < 2 or all(part.isdigit() for part in labels) or ":" in host:
		return None
	name = ".".join(labels)
	if any(name.endswith(f".{suffix}") for suffix in _SHARED_SUFFIXES):
		return name
	keep = 2
	if len(labels[-1]) == 2 and len(labels[-2]) <= 3:
		keep = 3
	return ".".join(labels[-keep:]) if len(labels) >= keep else None


def check_token_host(url: str, base: str, where: str, allowed: frozenset[str]) -> None:
	"""Refuse a token URL the client secret should not go to: another site than the API's.

	The token URL gets the client id and secret (and refresh tokens). Accepted: the base URL's
	origin; a host the user allowed; or, over https, a host of the base URL's registrable
	domain (`_site`: Google's ``oauth2.googleapis.com`` for ``gmail.googleapis.com``).

	Args:
		url: The token URL (checked by `check_url`).
		base: The integration's base URL.
		where: Its place in the document.
		allowed: The hosts the user allowed (`other_hosts`).

	Raises:
		ConfigurationError: Another site, or plain http to another origin; the message names
			the key that allows it.
	"""
	parsed, home = httpx.URL(url), httpx.URL(base)
	host = parsed.host.lower()
	if _origin(parsed) == _origin(home) or host in allowed:
		return
	site = _site(host)
	if parsed.scheme == "https" and parsed.port in (None, 443) and site == _site(home.host):
		return
	raise ConfigurationError(
		f"{where}: the token URL {shown(url)!r} is on another site (or scheme or port) than the "
		f"API's base URL {shown(base)!r}, and it would receive the OAuth client secret. If "
		f"that host is the API's sign-in server, allow it: from_openapi(..., allow_hosts="
		f"[{host!r}]) or --allow-host {host} (an agent file's allow_hosts); else give the "
		"credential by hand"
	)


def shown(url: str, limit: int = 200) -> str:
	"""A URL (or a document's text) as an error shows it, masked, then cut to ``limit``.

	Its password and secret query values are masked, and every secret the instance knows. A
	scheme-relative URL (``//user:PASSWORD@host``, which a document may write) is read as the
	web URL it is.
	"""
	text = url.strip()
	return masked_excerpt(url, limit, url_secrets(f"https:{text}" if text[:2] == "//" else text))
