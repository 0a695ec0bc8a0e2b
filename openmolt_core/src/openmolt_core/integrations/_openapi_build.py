"""The OpenAPI importer's work: an OpenAPI 3 document mapped onto `HttpTool`s and an integration.

`openmolt_core.integrations.openapi` is the public side (its page says what the importer does);
`Integration.from_openapi` calls `build` here with its own class, so this module never imports the
integration model that calls it (no import cycle).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations._credential import (
	BasicCredential,
	BearerCredential,
	Credential,
	CustomCredential,
	OAuth2Credential,
)
from openmolt_core.integrations._form import FieldEncoding
from openmolt_core.integrations._headers import CLIENT_HEADERS, is_token
from openmolt_core.integrations._httptool import ApiSetup, HttpTool
from openmolt_core.integrations._openapi_load import load_document, pointer
from openmolt_core.integrations._openapi_names import field_names, is_plain, request_body_name
from openmolt_core.integrations._openapi_schemas import (
	MAX_DESCRIPTION_CHARS,
	Schemas,
	as_list,
	segment,
	short,
)
from openmolt_core.integrations._openapi_urls import (
	check_same_origin,
	check_token_host,
	check_url,
	no_liquid,
	other_hosts,
	resolved,
	server_url,
	shown,
)
from openmolt_core.integrations._ssrf import InternalHosts, internal_hosts
from openmolt_core.integrations._url import is_web_url
from openmolt_core.policy import is_read_method, is_read_scope
from openmolt_core.tools import Label, check_labels

__all__ = ["MAX_OPERATIONS", "build", "default_labels"]

_I = TypeVar("_I")

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# TRACE is not imported: its reply echoes the request, credentials included.
_JSON = re.compile(r"^application/(.+\+)?json\b|^\*/\*$", re.IGNORECASE)
_LIQUID_WORDS = {
	"and", "or", "not", "contains", "in", "empty", "blank", "nil", "null", "true", "false",
	"limit", "offset", "reversed", "with", "as", "for", "if", "else", "endif", "cols",
}  # fmt: skip
# Set by the credential, the body's format or the HTTP client (`CLIENT_HEADERS`: where the request
# goes, how its body is framed), never by the model.
_SKIP_HEADERS = {"authorization", "content-type", "accept", *CLIENT_HEADERS}


# reading ------------------------------------------------------------------------------------


# text ---------------------------------------------------------------------------------------


def _camel(text: str) -> str:
	words = [w for w in re.split(r"[^A-Za-z0-9]+", text) if w]
	if not words:
		return "operation"
	head, *rest = words
	out = head[0].lower() + head[1:] + "".join(w[0].upper() + w[1:] for w in rest)
	return out if out[0].isalpha() else f"op{out}"


MAX_HANDLE_CHARS = 64
"""The longest tool handle an operation gets (as input names: what every provider accepts)."""


def _handle(op_id: str, taken: set[str], tries: dict[str, int]) -> str:
	"""The tool handle of an operationId: camelCase, at most `MAX_HANDLE_CHARS`, one of its own.

	A handle ``taken`` by an operation earlier in the document gets a suffix: ``_``, ``__``,
	``___``, then ``_4``, ``_5``... (a camelCase handle holds no ``_``, so only another suffix
	can look like one). ``tries`` keeps, by handle, the last suffix given, so many operations
	making one handle take linear time, not quadratic.
	"""
	base = _camel(op_id)[:MAX_HANDLE_CHARS]
	extra = tries.get(base, 0)
	handle = _suffixed(base, extra)
	while handle in taken:
		extra += 1
		handle = _suffixed(base, extra)
	tries[base] = extra
	return handle


def _suffixed(base: str, extra: int) -> str:
	"""``base`` with the ``extra``-th suffix, cut to keep it within `MAX_HANDLE_CHARS`."""
	if not extra:
		return base
	suffix = "_" * extra if extra <= 3 else f"_{extra}"
	return base[: MAX_HANDLE_CHARS - len(suffix)] + suffix


def _words(text: str) -> str:
	"""Text compared by its words only (a description that restates its summary)."""
	return " ".join(re.findall(r"\w+", short(text, MAX_DESCRIPTION_CHARS).lower()))


def _summary_and_detail(summary: str, detail: str) -> str:
	"""An operation's description: its summary then its detail, each said once.

	A detail that restates the summary (anywhere: "Retrieve a list of calls made to ..." after
	"Retrieve a list of calls") stands alone; a summary that already says all the detail says
	(a detail of "Create a call" under "Create a call and dial it") stands alone.
	"""
	if not summary or not detail:
		return detail or summary
	said, told = f" {_words(summary)} ", f" {_words(detail)} "
	if said in told or not said.strip():
		return detail
	if told in said or not told.strip():
		return summary
	return _then(summary, detail)


def _then(text: str, more: str) -> str:
	"""``text`` then ``more``, as two sentences: a period after ``text`` unless it ends one.

	A sentence's end may be inside a closing quote or bracket (``Say "hi."``, ``(Deprecated.)``);
	a comma, colon or semicolon ``text`` ends with gives way to the period (``Values:``).
	"""
	text = text.rstrip()
	if text.rstrip("\"')]\u201d\u2019").endswith((".", "!", "?")):
		return f"{text} {more}"
	text = text.rstrip(",:;").rstrip()
	return f"{text}. {more}" if text else more


def _sent_as(description: str, key: str, name: str, where: str) -> str:
	"""A renamed input's description ends with the name the request sends it under."""
	if key == name:
		return description
	place = "field" if where == "body" else f"{where} parameter"
	said = f"Sent as the {place} {name!r}."
	return _then(description, said) if description.strip() else said


def _ref(key: str, then: str = "") -> str:
	"""The template reading input field ``key`` (and passing it through the filter ``then``).

	A key that is a Liquid word (``limit``, ``in``...) is read by subscript: ``input.limit``
	followed by a filter does not parse.
	"""
	field = f'input["{key}"]' if key in _LIQUID_WORDS else f"input.{key}"
	return f"{{{{ {field}{f' | {then}' if then else ''} }}}}"


_STYLES = {
	"path": ("simple", "label", "matrix"),
	"query": ("form", "spaceDelimited", "pipeDelimited", "deepObject"),
	"header": ("simple",),
	"cookie": ("form",),
}
"""The styles OpenAPI allows in each place a parameter is sent; the first is the default."""


def _styled(
	key: str, style: str, explode: bool, name: str | None = None, reserved: bool = False
) -> str:
	"""The template serialising input field ``key`` in an OpenAPI style (``param_style``)."""
	field = f'input["{key}"]' if key in _LIQUID_WORDS else f"input.{key}"
	args = f'"{style}", {"true" if explode else "false"}' + (f', "{name}"' if name else "")
	if reserved:
		args += ", reserved: true"
	return f"{{{{ {field} | param_style: {args} }}}}"


def _style_of(param: Mapping[str, Any], where: str, place: str) -> tuple[str, bool]:
	"""A parameter's style and explode, checked against what its place allows.

	Raises:
		ConfigurationError: A style the place does not take, or an explode that is no boolean.
	"""
	allowed = _STYLES[where]
	style = param.get("style", allowed[0])
	if style not in allowed:
		raise ConfigurationError(
			f"{place}/style: {str(style)[:40]!r} is not a style of a {where} parameter; use "
			f"{', '.join(allowed)}"
		)
	explode = param.get("explode", style == "form")
	if not isinstance(explode, bool):
		raise ConfigurationError(f"{place}/explode: true or false, not {str(explode)[:40]!r}")
	return style, explode


def _allow_reserved(param: Mapping[str, Any], place: str) -> bool:
	"""A query parameter's ``allowReserved``: its reserved characters are sent unencoded.

	Raises:
		ConfigurationError: It is no boolean.
	"""
	given = param.get("allowReserved", False)
	if not isinstance(given, bool):
		raise ConfigurationError(f"{place}/allowReserved: true or false, not {str(given)[:40]!r}")
	return given


def _may_be(schema: Mapping[str, Any], kinds: tuple[str, ...]) -> bool:
	"""Whether a converted schema may hold a value of one of ``kinds`` (no type: anything)."""
	branches = schema.get("anyOf")
	if isinstance(branches, list):
		return any(isinstance(b, Mapping) and _may_be(b, kinds) for b in branches)
	given = schema.get("type")
	if given is None:
		return True
	return any(k in kinds for k in (given if isinstance(given, list) else [given]))


def _json_content(param: Mapping[str, Any]) -> bool:
	"""Whether a parameter is given as JSON ``content`` (sent as JSON text) rather than a schema."""
	content = param.get("content")
	return (
		param.get("schema") is None
		and isinstance(content, Mapping)
		and any(_JSON.match(str(media)) for media in content)
	)


# security -----------------------------------------------------------------------------------


def _check_name(name: Any, where: Any, place: str) -> str:
	"""A parameter's or API key's name, refused where it cannot be sent as the document says.

	Raises:
		ConfigurationError: It is no text or empty, or, in a header or a cookie, no token
			(RFC 9110: letters, digits and ``!#$%&'*+-.^_`|~``), so a line break or ``;`` in it
			cannot add a header or a cookie of its own.
	"""
	if not isinstance(name, str) or not name:
		raise ConfigurationError(f"{place}: a name is needed, and this one is empty or missing")
	if where in ("header", "cookie") and not is_token(name):
		raise ConfigurationError(
			f"{place}: {name[:60]!r} is not a {where} name (letters, digits and "
			"!#$%&'*+-.^_`|~ only)"
		)
	return name


def _credentials(
	document: Mapping[str, Any],
	internal: InternalHosts,
	base: str,
	allowed: frozenset[str] = frozenset(),
) -> tuple[list[Credential], dict[str, str], list[str]]:
	"""The credentials, the OAuth2 scopes (integration scopes) and the config keys, documented.

	``base`` is the base URL, which relative OAuth2 URLs are resolved against; a token URL on
	another site must have its host in ``allowed`` (`check_token_host`).
	"""
	schemes: dict[str, Any] = dict((document.get("components") or {}).get("securitySchemes") or {})
	order: list[str] = []
	for requirement in document.get("security") or []:
		order += [name for name in requirement if name in schemes and name not in order]
	order += [name for name in schemes if name not in order]
	keys = [
		schemes[n]
		for n in order
		if schemes[n].get("type") == "apiKey"
		and schemes[n].get("in") in ("header", "query", "cookie")
	]
	headers: dict[str, str] = {}
	query: dict[str, str] = {}
	cookies: list[str] = []
	creds: list[Credential] = []
	scopes: dict[str, str] = {}
	notes: list[str] = []
	custom_at: int | None = None
	for name in order:
		scheme = schemes[name]
		kind = scheme.get("type")
		if kind == "apiKey" and scheme.get("in") not in ("header", "query", "cookie"):
			notes.append(
				f"scheme {name!r} (apiKey in {str(scheme.get('in'))[:40]!r}) is not mapped: an "
				"API key goes in a header, the query or a cookie; add a credential by hand"
			)
		elif kind == "apiKey":
			key = "apiKey" if len(keys) == 1 else _camel(name)
			where, param = scheme.get("in"), scheme.get("name")
			at_name = pointer(("components", "securitySchemes", name, "name"))
			no_liquid(_check_name(param, where, at_name), at_name)
			value = f"{{{{ config.{key} }}}}"
			if where == "header":
				headers[param] = value
			elif where == "query":
				query[param] = value
			elif where == "cookie":
				cookies.append(f"{param}={value}")
			notes.append(f"`config.{key}`: the API key {param!r} ({where}; scheme {name!r})")
			if custom_at is None:
				custom_at = len(creds)
				creds.append(
					CustomCredential(type="custom")
				)  # filled below, once every key is known
		elif kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
			creds.append(
				BearerCredential(
					type="bearer", headers={"Authorization": "Bearer {{ config.token }}"}
				)
			)
			notes.append(f"`config.token`: the bearer token (scheme {name!r})")
		elif kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
			creds.append(
				BasicCredential(
					type="basic", username="{{ config.username }}", password="{{ config.password }}"
				)
			)
			notes.append(f"`config.username`, `config.password`: HTTP basic auth (scheme {name!r})")
		elif kind == "oauth2":
			flows = scheme.get("flows") or {}
			kind_of_flow = next(
				(
					f
					for f in ("authorizationCode", "clientCredentials", "implicit", "password")
					if f in flows
				),
				None,
			)
			flow: Mapping[str, Any] = flows[kind_of_flow] if kind_of_flow else {}
			at = pointer(("components", "securitySchemes", name, "flows", kind_of_flow or ""))
			# Relative ones are resolved against the base URL; both are checked like a
			# server's: the token URL gets the client's secrets, a browser opens the other.
			urls = {
				field: check_url(
					resolved(str(flow[field]), base, f"{at}/{field}"), f"{at}/{field}", internal
				)
				for field in ("tokenUrl", "authorizationUrl")
				if flow.get(field)
			}
			if "tokenUrl" in urls:  # it gets the client secret: the API's own site only
				try:
					check_token_host(urls["tokenUrl"], base, f"{at}/tokenUrl", allowed)
				except ConfigurationError as exc:
					# The rest of the document imports; the secret goes where the user says.
					del urls["tokenUrl"]
					notes.append(f"{exc}; until then the token URL is `config.tokenUrl`")
			for flow_value in flows.values():
				for scope, text in (flow_value.get("scopes") or {}).items():
					scopes.setdefault(scope, short(text, 120) or scope)
			creds.append(
				OAuth2Credential(
					type="oauth2",
					auth_url=urls.get("authorizationUrl"),
					# An implicit flow has no token URL: it can then come from the config.
					token_url=urls.get("tokenUrl") or "{{ config.tokenUrl }}",
					client_id="{{ config.clientId }}",
					client_secret="{{ config.clientSecret }}",
					refresh_token="{{ config.refreshToken }}",
					scopes=sorted({s for f in flows.values() for s in (f.get("scopes") or {})}),
				)
			)
			notes.append(
				f"`config.accessToken` (and `clientId`, `clientSecret`, `refreshToken` to refresh "
				f"it): OAuth2 (scheme {name!r})"
			)
		else:
			notes.append(f"scheme {name!r} ({kind}) is not mapped; add a credential by hand")
	if custom_at is not None:
		if cookies:
			headers["Cookie"] = "; ".join(cookies)
		creds[custom_at] = CustomCredential(type="custom", headers=headers, query_params=query)
	return creds, scopes, notes


def _api_key_places(document: Mapping[str, Any], op: Mapping[str, Any]) -> set[tuple[str, str]]:
	"""Where an operation always sends an API key: (name, place), a header's name in lower case.

	A key counts when every security requirement of the operation (its own, else the
	document's) names a scheme sending it there: whichever is met, the credential sends it.
	"""
	schemes = (document.get("components") or {}).get("securitySchemes") or {}
	requirements = op.get("security", document.get("security")) or []
	if not isinstance(requirements, list) or not all(isinstance(r, Mapping) for r in requirements):
		return set()  # said when the operation's scopes are read
	by_place: dict[tuple[str, str], set[str]] = {}
	for scheme_name, scheme in schemes.items():
		if not isinstance(scheme, Mapping) or scheme.get("type") != "apiKey":
			continue
		where, name = scheme.get("in"), scheme.get("name")
		if where in ("header", "query", "cookie") and isinstance(name, str):
			key = (name.lower() if where == "header" else name, str(where))
			by_place.setdefault(key, set()).add(scheme_name)
	return {
		place
		for place, names in by_place.items()
		if requirements and all(names & set(requirement) for requirement in requirements)
	}


# operations ---------------------------------------------------------------------------------


def _base_url(document: Mapping[str, Any], override: str | None, internal: InternalHosts) -> str:
	if override:
		return check_url(override, "base_url", internal)
	servers = document.get("servers") or []
	if not servers:
		raise ConfigurationError("the document names no server; pass base_url= (--base-url)")
	url = server_url(as_list(servers, "#/servers")[0], "#/servers/0")
	if not is_web_url(url):
		raise ConfigurationError(
			f"the document's server URL {shown(url)!r} is not absolute; pass base_url= (--base-url)"
		)
	return check_url(url, "#/servers/0/url", internal)


def _tool_base(
	path: str,
	method: str,
	op: Mapping[str, Any],
	item: Mapping[str, Any],
	internal: InternalHosts,
	base: _Base,
) -> str | None:
	"""The base URL of an operation's own servers (per operation, else per path), checked.

	It must be on the base URL's origin, or on a host the user allowed (`check_same_origin`). A
	relative server URL (``/v2``, ``beta``) is resolved against the base URL, as OpenAPI
	resolves one against where the document is served (the base URL stands for it): the
	operation does not silently stay on the base URL.
	"""
	for servers, where in (
		(op.get("servers"), pointer(("paths", path, method, "servers"))),
		(item.get("servers"), pointer(("paths", path, "servers"))),
	):
		if not servers:
			continue
		url = resolved(
			server_url(as_list(servers, where)[0], f"{where}/0"), base.url, f"{where}/0/url"
		)
		checked = check_url(url, f"{where}/0/url", internal)
		check_same_origin(checked, base.url, f"{where}/0/url", base.allowed)
		return checked
	return None


class _Base:
	"""The integration's base URL, and the other hosts its operations may be served by.

	Args:
		url: The base URL, checked.
		allowed: The hosts the user allowed (``allow_hosts``).
	"""

	__slots__ = ("allowed", "url")

	def __init__(self, url: str, allowed: frozenset[str]) -> None:
		self.url = url
		self.allowed = allowed


def _member(key: str, name: str) -> str:
	"""The template reading field ``name`` (an input name: `_rename_fields` made it one) of ``key``.

	A Liquid word (``limit``, ``in``...) is read by subscript, as `_ref` reads one.
	"""
	field = f'["{name}"]' if name in _LIQUID_WORDS else f".{name}"
	return f"{{{{ input.{key}{field} }}}}"


def _rename_fields(schema: dict[str, Any]) -> dict[str, str]:
	"""Give a body's fields that are no plain names an input name (in place); new -> document's.

	The model sees ``StartTime_before``-style names it can use; the request sends each field
	under the document's name. Nested objects keep their names.
	"""
	props = schema.get("properties")
	if not isinstance(props, dict) or all(is_plain(n) for n in props):
		return {}
	names = list(props)
	keys = field_names([(n, "body") for n in names])
	schema["properties"] = {}
	for name, key in zip(names, keys, strict=True):
		sub = props[name]
		if key != name and isinstance(sub, dict):
			sub = {
				**sub,
				"description": _sent_as(str(sub.get("description") or ""), key, name, "body"),
			}
		schema["properties"][key] = sub
	renamed = dict(zip(names, keys, strict=True))
	if isinstance(schema.get("required"), list):
		schema["required"] = [renamed.get(n, n) for n in schema["required"]]
	return {key: name for name, key in renamed.items() if key != name}


def _body_format(content: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]] | None:
	"""The request format, media type and Media Type Object of a request body (JSON first).

	Form bodies use the formats that follow the document's ``encoding`` (``openapi-form``,
	``openapi-multipart``), not the built-in ``form-data`` and ``multipart``, whose nested keys
	(``tags[0]=x``) are Stripe's convention and not OpenAPI's defaults.
	"""
	ranked: list[tuple[str, Callable[[str], bool]]] = [
		("json", lambda m: bool(_JSON.match(m))),
		("openapi-form", lambda m: m.startswith("application/x-www-form-urlencoded")),
		("openapi-multipart", lambda m: m.startswith("multipart/form-data")),
		("text", lambda m: m.startswith("text/")),
		("binary", lambda m: True),
	]
	for fmt, test in ranked:
		for media, spec in content.items():
			if test(media.lower()):
				return fmt, media, spec if isinstance(spec, Mapping) else {}
	return None


def _encoding(given: Any, fields: Iterable[str], place: str) -> dict[str, FieldEncoding]:
	"""A form body's ``encoding``, checked: field name to how it is written.

	Entries for no field of the body are left out (the specification ignores them), and so are
	entries that say nothing the engine uses (only ``headers``, which it does not send).

	Raises:
		ConfigurationError: The map or an entry is no object, a style is not a query style, or
			``explode``, ``allowReserved`` or ``contentType`` has the wrong type or form.
	"""
	if given is None:
		return {}
	if not isinstance(given, Mapping):
		raise ConfigurationError(f"{place}: an object of Encoding Objects by field name")
	out: dict[str, FieldEncoding] = {}
	known = set(fields)
	for name, entry in given.items():
		at = f"{place}/{segment(str(name))}"
		if not isinstance(entry, Mapping):
			raise ConfigurationError(f"{at}: an Encoding Object must be an object")
		if name not in known:
			continue
		style = entry.get("style")
		if style is not None and style not in _STYLES["query"]:
			raise ConfigurationError(
				f"{at}/style: {str(style)[:40]!r} is not a style of a form field; use "
				f"{', '.join(_STYLES['query'])}"
			)
		for flag in ("explode", "allowReserved"):
			if flag in entry and not isinstance(entry[flag], bool):
				raise ConfigurationError(
					f"{at}/{flag}: true or false, not {str(entry[flag])[:40]!r}"
				)
		kind = entry.get("contentType")
		if kind is not None and not isinstance(kind, str):
			raise ConfigurationError(f"{at}/contentType: a media type, not {str(kind)[:40]!r}")
		try:
			field = FieldEncoding(
				content_type=kind,
				style=style,
				explode=entry.get("explode"),
				# In multipart it still chooses the style (nothing is percent-encoded there).
				allow_reserved=entry.get("allowReserved"),
			)
		except ValueError as exc:
			raise ConfigurationError(f"{at}/contentType: {_first_error(exc)}") from None
		if field.by_style or field.content_type is not None:
			out[str(name)] = field
	return out


def _first_error(exc: ValueError) -> str:
	errors = getattr(exc, "errors", None)
	if callable(errors):
		found = errors()
		if found:
			return str(found[0].get("msg", exc)).removeprefix("Value error, ")
	return str(exc)


def _response_format(responses: Mapping[str, Any], schemas: Schemas) -> str:
	for status in sorted(responses, key=lambda s: (not str(s).startswith("2"), str(s))):
		if not (str(status).startswith("2") or status == "default"):
			continue
		response = schemas.deref(responses[status]) or {}
		content = response.get("content") or {}
		if not content:
			continue
		media = next(iter(content)).lower()
		if any(_JSON.match(m.lower()) for m in content):
			return "json"
		if media.startswith("text/"):
			return "text"
		if "xml" in media:
			return "xml"
		return "binary"
	return "json"


def _operations(
	document: Mapping[str, Any], schemas: Schemas
) -> Iterable[tuple[str, str, dict[str, Any], Mapping[str, Any]]]:
	"""Each operation: its path, method, object and path item (a ``$ref`` to one followed)."""
	for path, given in (document.get("paths") or {}).items():
		item = given
		if isinstance(given, Mapping) and "$ref" in given:
			try:  # 3.1's #/components/pathItems, or anywhere in the document
				target = schemas.deref(given)
			except ConfigurationError as exc:
				raise ConfigurationError(f"{pointer(('paths', path))}: {exc}") from None
			if not isinstance(target, Mapping):
				raise ConfigurationError(
					f"{pointer(('paths', path))}: {given['$ref']!r} is not a path item"
				)
			item = {**target, **{k: v for k, v in given.items() if k != "$ref"}}
		if not isinstance(item, Mapping):
			continue
		for method in _METHODS:
			op = item.get(method)
			if isinstance(op, Mapping):
				yield path, method, dict(op), item


def _tool(
	path: str,
	method: str,
	op: Mapping[str, Any],
	item: Mapping[str, Any],
	schemas: Schemas,
	document: Mapping[str, Any],
	handle: str,
	internal: InternalHosts,
	base: _Base,
	notes: list[str],
) -> HttpTool:
	"""One operation as a tool; what was left out of it is said in ``notes``."""
	schemas.parts = 0
	at = pointer(("paths", path, method))
	no_liquid(path, pointer(("paths", path)))
	if not path.startswith("/") or path.startswith("//"):
		raise ConfigurationError(
			f"{pointer(('paths', path))}: {path[:100]!r} is not a path; an OpenAPI path starts "
			"with a single '/' and is appended to the server URL (servers choose the host)"
		)
	if "#" in path:
		# Some documents list one path twice as '/cookies#form' and '/cookies#label'; the
		# fragment is never sent (RFC 3986, 3.5), so the tool asks for what a client would.
		notes.append(
			f"`{handle}`: the path {path[:100]!r} has a fragment ('#...'), which is never sent; "
			f"the tool requests {path.partition('#')[0][:100]!r}"
		)
	sent_path = path.partition("#")[0]
	params: dict[tuple[str, str], Any] = {}
	places: dict[tuple[str, str], str] = {}
	common = list(item.get("parameters") or [])
	listed = [(f"{pointer(('paths', path))}/parameters/{i}", p) for i, p in enumerate(common)]
	listed += [(f"{at}/parameters/{i}", p) for i, p in enumerate(op.get("parameters") or [])]
	for place, raw in listed:
		param = schemas.deref(raw)
		if not isinstance(param, Mapping):
			raise ConfigurationError(f"{place}: a parameter must be an object")
		where = param.get("in")
		if where not in ("path", "query", "header", "cookie"):
			raise ConfigurationError(
				f"{place}/in: {str(where)[:40] if where is not None else None!r} is not where a "
				"parameter goes: path, query, header or cookie (a body is the requestBody)"
			)
		name = _check_name(param.get("name"), where, f"{place}/name")
		params[(name, where)] = param
		places[(name, where)] = place
	in_path = set(re.findall(r"\{([^}{]+)\}", sent_path))
	for name, where in list(params):
		if where == "path" and name not in in_path:
			# An input the request could never send; OpenAPI requires the path to name it.
			del params[(name, where)]
			notes.append(
				f"`{handle}`: path parameter {name[:60]!r} ({places[(name, where)]}) is not in "
				f"the path {path[:100]!r}, so no request could send it; left out of the tool"
			)
	keyed = _api_key_places(document, op)
	for name, where in list(params):
		place = places[(name, where)]
		if (name.lower() if where == "header" else name, where) in keyed:
			# The credential sends it on every request: the model would be asked for the key,
			# and its value would go beside the real one.
			del params[(name, where)]
			notes.append(
				f"`{handle}`: {where} parameter {name[:60]!r} ({place}) is the API key, which "
				"the credential sends; it is no input of the tool"
			)
		elif where == "cookie" and params[(name, where)].get("style", "form") == "cookie":
			# OpenAPI 3.2's cookie style sends values unencoded: said, not sent another way.
			needed = ", required" if params.pop((name, where)).get("required") else ""
			notes.append(
				f"`{handle}`: cookie parameter {name[:60]!r} ({place}{needed}) is not sent: "
				"the 'cookie' style (values sent unencoded) is not supported; the importer "
				"writes cookies in the 'form' style"
			)
	properties: dict[str, Any] = {}
	required: list[str] = []
	endpoint = sent_path
	query: dict[str, Any] = {}
	headers: dict[str, str] = {}
	cookies: dict[str, str] = {}
	sent = [
		(name, where)
		for (name, where) in params
		if not (where == "header" and name.lower() in _SKIP_HEADERS)
	]
	declared = {name for (name, where) in params if where == "path"}
	undeclared = [
		m for m in dict.fromkeys(re.findall(r"\{([^}{]+)\}", sent_path)) if m not in declared
	]
	taken: set[str] = set()
	keys = field_names([*sent, *((m, "path") for m in undeclared)], taken)
	for (name, where), key in zip(sent, keys, strict=False):
		param = params[(name, where)]
		schema = param.get("schema")
		if schema is None and param.get("content"):
			schema = next(iter(param["content"].values())).get("schema")
		converted = schemas.convert(
			schema or {"type": "string"}, request=True, where=f"{places[(name, where)]}/schema"
		)
		described = _sent_as(
			short(param.get("description"), MAX_DESCRIPTION_CHARS // 2), key, name, where
		)
		if described:
			converted = {**converted, "description": described}
		properties[key] = converted
		if where == "path" or param.get("required"):
			required.append(key)
		place = places[(name, where)]
		if _json_content(param):
			template = _ref(key, "json")  # content: application/json is JSON text
		else:
			style, explode = _style_of(param, where, place)
			reserved = where == "query" and _allow_reserved(param, place)
			# Where the engine's own rendering is the style's (a primitive; an exploded form
			# array repeats its key; deepObject's brackets for an object), the template stays
			# plain. A deepObject array is styled: its keys get indices (expand[0]=a), as
			# Stripe reads them, where the plain rendering would repeat the key.
			plain = not reserved and (
				(style == "deepObject" and not _may_be(converted, ("array",)))
				or (style in ("simple", "form") and not _may_be(converted, ("array", "object")))
				or (style == "form" and explode and not _may_be(converted, ("object",)))
			)
			if style == "matrix" and not re.fullmatch(r'[^"\\{}]+', name):
				raise ConfigurationError(
					f"{place}/name: {name[:60]!r} cannot name a matrix parameter (it holds a "
					"quote, a backslash or a brace)"
				)
			template = (
				_ref(key)
				if plain
				else _styled(key, style, explode, name if style == "matrix" else None, reserved)
			)
		if where == "path":
			endpoint = endpoint.replace(f"{{{name}}}", template)
		elif where == "query":
			query[name] = template
		elif where == "header":
			headers[name] = template
		elif where == "cookie":
			cookies[name] = template
	for missing, key in zip(undeclared, keys[len(sent) :], strict=True):
		properties[key] = {"type": "string"}
		if key != missing:
			properties[key]["description"] = _sent_as("", key, missing, "path")
		required.append(key)
		endpoint = endpoint.replace(f"{{{missing}}}", _ref(key))
	body: Any = None
	files: dict[str, str] = {}
	encoding: dict[str, FieldEncoding] = {}
	request_format = None
	request = schemas.deref(op.get("requestBody")) if op.get("requestBody") else None
	if request:
		chosen = _body_format(request.get("content") or {})
		if chosen:
			fmt, media, media_object = chosen
			raw_schema = media_object.get("schema", {})
			# A text body's media type becomes its Content-Type header, a template.
			no_liquid(media, f"{at}/requestBody/content/{segment(media)}")
			key = request_body_name(taken)
			converted = schemas.convert(
				raw_schema, request=True, where=f"{at}/requestBody/content/{segment(media)}/schema"
			)
			if fmt == "binary":
				converted = {
					"type": "string",
					"description": "A file reference (openmolt-file:..., a data: URL, fileSystem:path).",
				}
			described = short(request.get("description"), MAX_DESCRIPTION_CHARS // 2)
			if described and "description" not in converted:
				converted["description"] = described
			properties[key] = converted
			if request.get("required"):
				required.append(key)
			request_format = fmt
			wire = _rename_fields(converted) if fmt != "binary" else {}
			place = f"{at}/requestBody"
			if fmt in ("openapi-form", "openapi-multipart"):
				sent_names = [wire.get(n, n) for n in converted.get("properties") or {}]
				encoding = _encoding(
					media_object.get("encoding"),
					sent_names,
					f"{place}/content/{segment(media)}/encoding",
				)
			if fmt == "openapi-multipart" and isinstance(converted.get("properties"), dict):
				raw = schemas.deref(raw_schema) or {}
				binary = {
					n for n, s in (raw.get("properties") or {}).items()
					if isinstance(schemas.deref(s), Mapping) and schemas.deref(s).get("format") == "binary"
				}  # fmt: skip
				names = {wire.get(n, n): n for n in converted["properties"]}
				for sent in names:
					if not sent.isprintable():  # a part's header would lose or break on it
						raise ConfigurationError(
							f"{place}: the multipart field name {sent[:80]!r} cannot be sent in "
							"a part's header (it holds a line break or another control character)"
						)
				body = {w: _member(key, n) for w, n in names.items() if w not in binary}
				files = {w: _member(key, n) for w, n in names.items() if w in binary}
			elif wire:  # each field sent under the document's name
				body = {wire.get(n, n): _member(key, n) for n in converted["properties"]}
			else:
				body = _ref(key)
			if fmt == "text" and media != "text/plain":
				headers.setdefault("Content-Type", media)
	raw_summary, raw_detail = op.get("summary"), op.get("description")
	summary = raw_summary if isinstance(raw_summary, str) else ""
	detail = raw_detail if isinstance(raw_detail, str) else ""
	text = _summary_and_detail(summary, detail)
	description = short(text, MAX_DESCRIPTION_CHARS) or f"{method.upper()} {path}"
	if op.get("deprecated"):
		description = f"(deprecated) {description}"
	own = "security" in op
	requirements = op.get("security", document.get("security")) or []
	oauth = {
		name
		for name, scheme in (
			(document.get("components") or {}).get("securitySchemes") or {}
		).items()
		if scheme.get("type") == "oauth2"
	}
	found: set[str] = set()
	for index, requirement in enumerate(as_list(requirements, "security")):
		for name, listed_scopes in requirement.items():
			if not isinstance(listed_scopes, list):
				where = f"{at}/security" if own else "#/security"
				raise ConfigurationError(
					f"{where}/{index}/{segment(str(name))}: a list of scopes ([] for none), not "
					f"{str(listed_scopes)[:40]!r}"
				)
			if name in oauth:
				found.update(str(scope) for scope in listed_scopes)
	scopes = sorted(found)
	input_schema: dict[str, Any] = {"type": "object", "properties": properties}
	if required:
		input_schema["required"] = required
	base_url = _tool_base(path, method, op, item, internal, base)
	from openmolt_core._support.jsonschema import unchecked_patterns

	# A pattern no regex engine supports is said at import, not at the tool's first call.
	unchecked_patterns(input_schema, f"OpenAPI operation {handle!r}: input")
	return HttpTool(
		handle=handle,
		description=description,
		scopes=scopes,
		method=method.upper(),
		endpoint=endpoint,
		query_params=query,
		headers=headers,
		cookies=cookies,
		body=body,
		files=files,
		encoding=encoding,
		input_schema=input_schema,
		request_format=request_format,
		response_format=_response_format(op.get("responses") or {}, schemas),
		base_url=base_url,
	)


WRITE_SCOPE = "write"
"""The scope an imported operation that changes something needs besides the document's read scopes."""


def _write_scope(
	tools: list[HttpTool], scopes: dict[str, str]
) -> tuple[list[HttpTool], dict[str, str]]:
	"""The tools and integration scopes, each operation that changes something in a write scope.

	A document's scope names are its word, the method is what the request does: a ``POST
	/transfers`` the document puts under ``read:payments`` would be granted to an agent given
	only ``read:payments`` and left alone by ``*:writes``. So an operation whose method is not
	``GET``, ``HEAD`` or ``OPTIONS`` (`openmolt_core.policy.is_read_method`) and whose scopes are
	all read scopes (`openmolt_core.policy.is_read_scope`) also needs `WRITE_SCOPE`, decided
	here so that the exported module and JSON keep it. So does such an operation that names no
	scope at all (``security: []``) in a document that defines scopes: a grant is a list of what
	an agent may do, and a tool that needs no scope was granted by every list, a grant of the
	read scopes included. A document that defines no scope has no grant to narrow: its
	operations are left as they are (``*:writes`` holds their changes by their method). The
	scope is no OAuth scope: it is never asked of the service (the credential's ``scopes`` are
	the document's), and a tool's scopes decide no token.
	"""
	out = [
		tool.model_copy(update={"scopes": sorted({*tool.scopes, WRITE_SCOPE})})
		if not is_read_method(tool.method)
		and (tool.scopes or scopes)
		and all(is_read_scope(s) for s in tool.scopes)
		else tool
		for tool in tools
	]
	# A document that lists no scope in its flows defines none: its tools' are not checked.
	if scopes and WRITE_SCOPE not in scopes and any(WRITE_SCOPE in t.scopes for t in out):
		scopes = {
			**scopes,
			WRITE_SCOPE: "Operations that change something (a method other than GET, HEAD or "
			"OPTIONS) whose document names only read scopes, or no scope",
		}
	return out, scopes


def default_labels(method: str, *, takes_input: bool = True) -> list[Label]:
	"""The labels an imported operation gets when the user's ``labels`` do not name it.

	An operation whose request carries model input (a path, query, header or cookie parameter,
	or a body) can carry data out, whatever its method: ``GET /search?q=...`` sends what the
	model wrote to the API's server, as ``httpRequest`` can (`openmolt_core.taint`). The
	importer cannot tell whose server that is, so such an operation is ``outbound``, as the
	kernel treats a tool whose labels are unknown (fail closed); the user who knows the API is
	their own says so in ``labels``. GET and HEAD read what the service returns:
	``untrusted`` (``outbound`` too with input). POST, PUT, PATCH and DELETE: ``outbound``. Any
	other method: both.

	Args:
		method: The HTTP method.
		takes_input: Whether the operation's request carries model input; when not told, it
			is assumed to (the unsafe case).
	"""
	upper = method.upper()
	if upper in ("GET", "HEAD"):
		return ["untrusted", "outbound"] if takes_input else ["untrusted"]
	if upper in ("POST", "PUT", "PATCH", "DELETE"):
		return ["outbound"]
	return ["untrusted", "outbound"]


def _labels(
	tools: Sequence[HttpTool], given: Mapping[str, Sequence[str]] | None
) -> dict[str, list[Label]]:
	"""Each tool's labels from its method and input, except the tools a given key names (those win)."""
	import fnmatch

	chosen = {
		key: list(check_labels(labels, f"labels[{key!r}]")) for key, labels in (given or {}).items()
	}
	handles = [t.handle for t in tools]
	for key in chosen:  # said with the tools there are, not as the model's validation error
		if not any(fnmatch.fnmatchcase(h, key) for h in handles):
			from openmolt_core._hints import close_match

			near = close_match(key, handles)
			hint = f"did you mean {near!r}? " if near else ""
			shown = ", ".join(handles[:20]) + (
				f" and {len(handles) - 20} more" if len(handles) > 20 else ""
			)
			raise ConfigurationError(
				f"labels: {key!r} names no tool of the imported API; {hint}its tools: {shown} (a pattern such "
				"as 'send*' names several)"
			)
	table: dict[str, list[Label]] = {}
	for tool in tools:
		if not any(fnmatch.fnmatchcase(tool.handle, key) for key in chosen):
			# Every input of an imported tool is sent: a parameter or the body.
			takes_input = bool(tool.input_schema.get("properties"))
			table[tool.handle] = default_labels(tool.method, takes_input=takes_input)
	return {**table, **chosen}


def build(
	make: Callable[..., _I],
	document: str | Path | Mapping[str, Any],
	*,
	id: str | None = None,
	operations: Sequence[str] | None = None,
	tags: Sequence[str] | None = None,
	base_url: str | None = None,
	name: str | None = None,
	labels: Mapping[str, Sequence[str]] | None = None,
	allow_internal_hosts: Sequence[str] = (),
	allow_hosts: Sequence[str] = (),
) -> _I:
	"""The integration of an OpenAPI 3 document, made by ``make`` from its fields.

	`openmolt_core.integrations.openapi.from_openapi` documents the options.

	Args:
		make: The integration class (``Integration``, or a subclass), called with the fields.
		document: The document: a dict, or the path of a JSON or YAML file.
		id: The integration id.
		operations: Only these operations (operationIds or tool handles).
		tags: Only operations with one of these tags.
		base_url: The API's base URL (default: the document's first server).
		name: The display name (default: the document's title).
		labels: Taint labels by tool handle or pattern.
		allow_internal_hosts: Internal hosts or networks the tools may reach.
		allow_hosts: Hosts other than the base URL's that operations may be served by.

	Raises:
		ConfigurationError: The document cannot be read, an option is wrong, or an operation
			cannot be expressed; the message names the place.
	"""
	doc = load_document(document)
	internal = internal_hosts(list(allow_internal_hosts))
	allowed = other_hosts(list(allow_hosts))
	try:
		return _integration(
			make,
			doc,
			id=id,
			operations=operations,
			tags=tags,
			base_url=base_url,
			name=name,
			labels=labels,
			internal=internal,
			allowed=allowed,
		)
	except (AttributeError, TypeError, KeyError, IndexError) as exc:
		raise ConfigurationError(
			f"the document is malformed (a value has the wrong type: {type(exc).__name__}: "
			f"{str(exc)[:200]}); validate it with an OpenAPI linter"
		) from None
	except RecursionError:
		raise ConfigurationError(
			"the document's schemas nest too deeply to import; flatten them"
		) from None


MAX_OPERATIONS = 2_000
"""The most operations one import makes tools of (after ``operations=`` and ``tags=``): each is
a few milliseconds and kilobytes to build, and a line of the tool list each model request
carries (a provider takes at most a few hundred tools). Published APIs hold fewer (GitHub's
about 1,100, Stripe's about 600); a larger document is imported in parts, by tag."""


@contextlib.contextmanager
def _at_operation(op_id: str, method: str, path: str) -> Iterator[None]:
	"""Name the operation in an error its reading raises."""
	try:
		yield
	except (ValueError, ConfigurationError) as exc:
		raise ConfigurationError(
			f"operation {op_id[:100]!r} ({method.upper()} {path[:100]}): {exc}"
		) from None
	except (AttributeError, TypeError, KeyError) as exc:
		raise ConfigurationError(
			f"operation {op_id[:100]!r} ({method.upper()} {path[:100]}): the document is "
			f"malformed here, a value has the wrong type ({type(exc).__name__}: "
			f"{str(exc)[:200]}); validate it with an OpenAPI linter"
		) from None


def _integration(
	make: Callable[..., _I],
	doc: Mapping[str, Any],
	*,
	id: str | None,
	operations: Sequence[str] | None,
	tags: Sequence[str] | None,
	base_url: str | None,
	name: str | None,
	labels: Mapping[str, Sequence[str]] | None,
	internal: InternalHosts,
	allowed: frozenset[str],
) -> _I:
	schemas = Schemas(doc)
	base = _Base(_base_url(doc, base_url, internal), allowed)
	info = doc.get("info") or {}
	wanted = set(operations or ())
	seen_ids: set[str] = set()
	seen_tags: set[str] = set()
	handles: set[str] = set()
	tries: dict[str, int] = {}
	chosen: list[tuple[str, str, dict[str, Any], Mapping[str, Any], str, str]] = []
	for path, method, op, item in _operations(doc, schemas):
		op_id = str(op.get("operationId") or f"{method} {path}")
		with _at_operation(op_id, method, path):
			# Every operation takes its handle, selected or not: a handle never depends on
			# what else is imported (rules, labels and --operation name the full import's).
			handle = _handle(op_id, handles, tries)
			handles.add(handle)
			op_tags = {str(t) for t in as_list(op.get("tags") or [], "tags")}
			seen_ids.update((op_id, handle))
			seen_tags |= op_tags
			if wanted and op_id not in wanted and handle not in wanted:
				continue
			if tags and not op_tags & set(tags):
				continue
			chosen.append((path, method, op, item, handle, op_id))
	unknown = sorted(wanted - seen_ids)
	if unknown:
		import difflib

		hints = {u: difflib.get_close_matches(u, sorted(seen_ids), n=1) for u in unknown}
		listed = ", ".join(
			f"{u!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for u, h in hints.items()
		)
		raise ConfigurationError(f"no operation {listed} in the document")
	missing_tags = sorted(set(tags or ()) - seen_tags)
	if missing_tags:
		raise ConfigurationError(
			f"no operation has tag(s) {missing_tags}; the document's tags: {', '.join(sorted(seen_tags))}"
		)
	if not chosen:
		raise ConfigurationError("the selection matches no operation")
	if len(chosen) > MAX_OPERATIONS:  # said before any tool is built (milliseconds each)
		raise ConfigurationError(
			f"the document has {len(chosen):,} operations to import, more than {MAX_OPERATIONS:,} "
			"operations (the most one integration imports); choose the ones the agent needs with "
			"operations=[...] or tags=[...] (--operation, --tag), or import the API as several "
			"integrations"
		)
	tools: list[HttpTool] = []
	dropped: list[str] = []
	for path, method, op, item, handle, op_id in chosen:
		with _at_operation(op_id, method, path):
			tools.append(
				_tool(path, method, op, item, schemas, doc, handle, internal, base, dropped)
			)
	credentials, scopes, notes = _credentials(doc, internal, base.url, base.allowed)
	tools, scopes = _write_scope(tools, scopes)
	title = str(info.get("title") or id or "API")
	docs = "\n".join(
		[
			f"Imported from the OpenAPI document of {title} {info.get('version', '')}.".replace(
				" .", "."
			),
			"",
		]
		+ [f"- {n}" for n in [*notes, *dropped]]
	)
	try:
		return make(
			id=id,
			name=name or title,
			description=short(info.get("description"), MAX_DESCRIPTION_CHARS)
			or f"The {title} API.",
			api_version=str(info["version"]) if info.get("version") else None,
			api_setup=ApiSetup(
				base_url=base.url,
				guard_every_request=True,
				allow_internal_hosts=list(internal.entries),
			),
			credential_setup=credentials,
			scopes=scopes,
			tools=tools,
			docs=docs,
			labels=_labels(tools, labels),
		)
	except ValueError as exc:
		raise ConfigurationError(f"the imported integration is invalid: {exc}") from None
