"""The HTTP tool engine: one generic executor for every `HttpTool` of every integration.

A call goes through these steps:

1. merge the integration's ``api_setup`` with the tool (URL, query, headers, formats, timeout);
   the endpoint is joined into the base URL's path, a query the base URL holds stays the query
   (first; a parameter the tool sends replaces its namesake), and a URL that cannot be sent as
   written (a fragment, a ``.``/``..`` segment) is refused (`openmolt_core.integrations._url`);
2. render every template of the definition with ``input`` and ``config`` (`templating`): values
   from the model are data, endpoint values (and input in a base URL's path after a fixed
   origin) are encoded path segments, header values with line breaks are refused; a tool using a file filter (``file_base64``) renders in a worker thread;
   a JSON body keeps the explicit null of an input whose schema takes null (it clears a field:
   `templating.null_inputs`), every other null is left out;
3. encode the body in the request format (`_encode`, or the integration's own ``encoders``),
   resolving file references; headers an encoder computes from the body (a checksum, S3
   metadata) are checked like any other; a POST gets an idempotency key derived from its call
   id (the same when a durable run replays the call) when the API setup names an
   ``idempotency_header`` the call did not set; a template ``{{ call.idempotency_key }}``
   (`templating.IDEMPOTENCY_KEY`) puts that same key where the service reads it otherwise (a
   body field, a GraphQL variable), and makes the POST as safe to repeat;
4. send with the shared ``httpx.AsyncClient`` and the credential's ``httpx.Auth``
   (`credentials`), retrying under the instance's `openmolt_core.retry.RetryPolicy` (the one the
   providers use too: ``Retry-After`` and ``X-RateLimit-Reset`` honoured, bounded in attempts,
   per-wait and total time). 429 is always retried (the request was not
   processed); 5xx, timeouts and broken connections only when repeating is safe: an idempotent
   method, or a request with an idempotency key. A request that never reached the service (no
   connection) is always retried;
5. follow redirects by hand: never to another origin when the request carries credentials
   (httpx strips only ``Authorization`` and ``Cookie`` across origins; a key in a custom header or
   the query would follow), and never for a status the tool lists in ``accept_statuses``. A hop
   to another origin, or from https to http, keeps only the headers of
   `openmolt_core.integrations._headers.SAFE_HEADERS` and never carries a body. Every redirect
   hop, a first request whose host comes from the input (a tool with ``input_origins``), and
   every request of an integration whose API setup sets ``guard_every_request`` (one imported
   from an OpenAPI document) goes through the SSRF guard (`openmolt_core.integrations._ssrf`):
   resolved once, every address checked, connected to the checked address. Every header of
   every hop is checked for control characters (`openmolt_core.integrations._headers`);
6. read the body with a cap on its decoded size (`openmolt_core.integrations._body`), all of it
   (connection, hops, retries, body) within the tool's timeout as one total deadline;
7. decode the response in the response format (`_decode`); a non-2xx reply that the tool does not
   accept raises a `ToolError`
   with the status, the service's message and a trimmed body, and so does a 200 reply in which
   one of the integration's ``response_checks`` finds a failure. Secrets are redacted from errors.

What one vendor needs (a Liquid filter, a body format, a check, an auth) is registered on its
`openmolt_core.integrations.Integration`, never written here (see
`openmolt_core.integrations.extensions`).

Where a URL's origin may come from is decided when the integration is defined
(`openmolt_core.integrations._origin`): ``config`` may choose it, ``input`` only within a tool's
``input_origins``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import httpx

from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.integrations._body import ACCEPT_ENCODING, read_body
from openmolt_core.integrations._decode import (
	decode,
	error_message,
	throttle_finder,
	trimmed_details,
)
from openmolt_core.integrations._encode import append_query, encode_body, query_pairs
from openmolt_core.integrations._headers import (
	SAFE_HEADERS,
	CheckedAuth,
	check_headers,
	check_tool_header,
	cookie_pairs,
	is_token,
)
from openmolt_core.integrations._httptool import IDEMPOTENT_METHODS
from openmolt_core.integrations._origin import (
	check_fixed_origin,
	check_input_origin,
	is_absolute,
	origin_part,
	origin_problem,
	uses_input,
)
from openmolt_core.integrations._ssrf import SsrfGuard, internal_hosts, parse_ip
from openmolt_core.integrations._url import (
	check_dot_segments,
	check_empty_segments,
	is_web_url,
	split_base,
	with_base_query,
)
from openmolt_core.integrations.config import EngineConfig
from openmolt_core.integrations.templating import (
	FILE_FILTERS,
	MISSING,
	Filters,
	Styled,
	null_inputs,
	reading_files,
	render,
	render_endpoint,
	render_string,
	uses_filter,
)
from openmolt_core.retry import DEFAULT_RETRY, RetryPolicy, retry_after
from openmolt_core.secrets import redactor_for

if TYPE_CHECKING:
	from openmolt_core.integrations.model import ApiSetup, HttpTool, Integration
	from openmolt_core.tools import Retries, ToolContext

__all__ = [
	"DEFAULT_RETRY",
	"MAX_DOWNLOAD_BYTES",
	"MAX_REDIRECTS",
	"MAX_RESPONSE_BYTES",
	"RetryPolicy",
	"build_request",
	"check_text",
	"execute_http_tool",
	"guard_for",
	"host_from_input",
	"replay_safe",
	"send",
]

MAX_REDIRECTS = 10
"""Redirects followed before a request is given up."""

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The largest decoded response body read by default (a tool can set ``max_response_bytes``)."""

MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024
"""The default cap of a tool whose response format is ``binary`` (saved to the file store)."""

_IDEMPOTENCY_HEADERS = ("idempotency-key", "x-idempotency-key")
# Failures before anything was sent: always safe to retry.
_NOT_SENT: tuple[type[Exception], ...] = (
	httpx.ConnectError,
	httpx.ConnectTimeout,
	httpx.PoolTimeout,
)
_CONTENT_HEADERS = ("content-type", "content-length", "transfer-encoding", "content-md5")


_Throttled = Callable[[httpx.Response, bytes], float | None]
"""Whether a 2xx reply turned the request away for a rate limit, without applying it: the
seconds to wait (0: the retry policy's backoff), or None (see
`openmolt_core.integrations.extensions.ThrottleCheck`)."""


class _Retryable(Exception):
	def __init__(self, response: httpx.Response, data: bytes, wait: float | None = None) -> None:
		self.response = response
		self.data = data
		self.wait = wait


def _hint(exc: BaseException) -> float | None:
	"""Seconds the service asks us to wait: a throttled reply's figure, else its headers.

	The headers are read by `openmolt_core.retry.retry_after`.
	"""
	if not isinstance(exc, _Retryable):
		return None
	return exc.wait or retry_after(exc.response.headers)


def replay_safe(
	request: httpx.Request, idempotency_header: str | None = None, *, keyed: bool = False
) -> bool:
	"""Whether sending a request twice cannot apply it twice.

	True for idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS), for requests carrying an
	idempotency key (``idempotency_header``, ``Idempotency-Key`` or ``X-Idempotency-Key``), and
	when ``keyed``: the request carries the call's key elsewhere (its body; an `HttpTool` whose
	``sends_call_key`` is true).
	"""
	if keyed or request.method in IDEMPOTENT_METHODS:
		return True
	names = (*_IDEMPOTENCY_HEADERS, *((idempotency_header,) if idempotency_header else ()))
	return any(request.headers.get(name) for name in names)


def _place(url: httpx.URL) -> str:
	"""Where a request went, for an error: the host and port, never the path or the query."""
	default = {"http": 80, "https": 443}.get(url.scheme)
	port = f":{url.port}" if url.port is not None and url.port != default else ""
	return f"the service at {url.host}{port}"


def _bad_location(exc: BaseException) -> bool:
	"""Whether httpx failed on a redirect whose Location does not parse (it builds them all)."""
	return isinstance(exc, httpx.RemoteProtocolError) and "location header" in str(exc).lower()


async def _send_retrying(
	client: httpx.AsyncClient,
	request: httpx.Request,
	auth: httpx.Auth | None,
	policy: Retries,
	safe: bool,
	max_bytes: int,
	throttled: _Throttled | None = None,
) -> tuple[httpx.Response, bytes]:
	transport_errors: tuple[type[Exception], ...] = (httpx.TransportError,) if safe else _NOT_SENT

	def worth_it(exc: BaseException) -> bool:
		return isinstance(exc, (_Retryable, *transport_errors)) and not _bad_location(exc)

	retrying = policy.retrying(worth_it, _hint)
	try:
		async for attempt in retrying:
			with attempt:
				response = await client.send(request, auth=auth, stream=True)
				data = await read_body(response, max_bytes)
				if response.status_code == 429 or (safe and response.status_code >= 500):
					raise _Retryable(response, data)
				# A 2xx that applied nothing (Shopify's THROTTLED) is a 429 in all but status.
				wait = throttled(response, data) if throttled and response.is_success else None
				if wait is not None:
					raise _Retryable(response, data, wait)
				return response, data
	except _Retryable as exc:
		return exc.response, exc.data
	raise AssertionError("unreachable: tenacity either returns or reraises")


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
	return url.scheme, url.host, url.port


_HOST_LABELS = re.compile(
	r"^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.?$"
)


def _valid_host(url: httpx.URL) -> bool:
	"""Whether a URL names a host that can be connected to: an IP or DNS name, a real port."""
	if url.port is not None and not 0 < url.port < 65536:
		return False
	host = url.raw_host.decode("ascii", "replace").lower()
	return bool(host) and (parse_ip(host) is not None or bool(_HOST_LABELS.match(host)))


def _next_request(
	client: httpx.AsyncClient, request: httpx.Request, response: httpx.Response
) -> httpx.Request:
	"""The request a redirect asks for, or a `ToolError` when it cannot be followed safely."""
	status = response.status_code
	try:
		url = request.url.join(response.headers["location"])
		url.netloc.decode("ascii")  # an unrepresentable host fails here, not in the transport
	except (httpx.InvalidURL, ValueError, UnicodeError):
		raise ToolError(
			"the service redirected to a malformed URL; not followed", status_code=status
		) from None
	if url.scheme not in ("http", "https"):
		raise ToolError(
			f"redirect to a {url.scheme or 'relative'} URL refused; only http and https are "
			"followed",
			status_code=status,
		)
	if url.userinfo:
		raise ToolError(
			"the service redirected to a URL with a user name or password; not followed",
			status_code=status,
		)
	if not _valid_host(url):
		raise ToolError(
			"the service redirected to a URL without a valid host or port; not followed",
			status_code=status,
		)
	method = request.method
	content: bytes | None = request.content
	if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
		method, content = "GET", None
	cross = _origin(url) != _origin(request.url)
	if cross and content:
		raise ToolError(
			f"the service redirected a {method} with a body to another origin ({url.host}); "
			"not followed, since a body is never re-sent elsewhere",
			status_code=status,
		)
	if cross:
		# Another origin, or https to http: keep only headers that say nothing about the caller.
		headers = httpx.Headers(
			[(k, v) for k, v in request.headers.multi_items() if k.lower() in SAFE_HEADERS]
		)
	else:
		headers = httpx.Headers(request.headers)
		headers.pop("host", None)
		if content is None:
			for name in _CONTENT_HEADERS:
				headers.pop(name, None)
	extensions = {k: v for k, v in request.extensions.items() if k != "sni_hostname"}
	try:
		return client.build_request(
			method, url, headers=headers, content=content, extensions=extensions
		)
	except (httpx.InvalidURL, ValueError, UnicodeError):
		raise ToolError(
			"the service redirected to a malformed URL; not followed", status_code=status
		) from None


async def send(
	client: httpx.AsyncClient,
	request: httpx.Request,
	*,
	auth: httpx.Auth | None = None,
	follow_redirects: bool = True,
	credentialed: bool = False,
	guard: SsrfGuard | None = None,
	guard_first: bool = False,
	retry: Retries = DEFAULT_RETRY,
	idempotency_header: str | None = None,
	keyed: bool = False,
	accept_statuses: Collection[int] = (),
	strip_credentials: Collection[str] | None = None,
	deadline: float | None = None,
	max_bytes: int = MAX_RESPONSE_BYTES,
	throttled: _Throttled | None = None,
) -> tuple[httpx.Response, bytes]:
	"""Send a request with retries, following redirects by hand, within one total deadline.

	429 is retried for every method, and so is a 2xx that ``throttled`` finds turned away; 5xx
	replies, timeouts and dropped connections only when `replay_safe` says so; failures to
	connect always.

	Args:
		client: The shared client.
		request: The request (its URL is the logical one redirects are resolved against).
		auth: The credential's auth, applied on every hop (hops never leave the origin with it);
			every header it sets is checked (`openmolt_core.integrations._headers.CheckedAuth`).
		follow_redirects: Whether to follow redirects.
		credentialed: The request carries credentials: a redirect to another origin is refused.
		guard: The SSRF guard for redirect hops (and the first request with ``guard_first``);
			default: one that refuses every non-public address.
		guard_first: The first request's host came from the input: guard it too.
		retry: The retry policy.
		idempotency_header: The header that carries an idempotency key, if the API has one.
		keyed: The request carries the call's idempotency key in its body (`replay_safe`).
		accept_statuses: Statuses that are an answer, never a redirect to follow (Google's
			``308 Resume Incomplete``), even with a ``Location`` header.
		strip_credentials: When given, a cross-origin redirect of a credentialed request is
			followed without the auth (and, like every cross-origin hop, with safe headers only);
			a redirect URL holding one of these secrets is refused.
		deadline: Seconds for everything: connecting, every hop, retries and their waits, and
			reading the bodies. None: no total deadline.
		max_bytes: The largest decoded body read (`openmolt_core.integrations._body`).
		throttled: Finds a 2xx reply that turned the request away for a rate limit (the seconds
			to wait, 0 for the policy's backoff, or None); such a reply is retried like a 429.

	Returns:
		The final response (closed) and its body.

	Raises:
		ToolError: Too many redirects, a redirect that cannot be followed safely, a refused
			address or header, a body over ``max_bytes``, no reply, or the deadline passed.
	"""
	guard = guard or SsrfGuard()
	checked = CheckedAuth(auth) if auth is not None else None
	scope = anyio.fail_after(deadline) if deadline is not None else nullcontext()
	try:
		with scope:
			return await _hops(
				client,
				request,
				auth=checked,
				follow_redirects=follow_redirects,
				credentialed=credentialed,
				guard=guard,
				guard_first=guard_first,
				retry=retry,
				idempotency_header=idempotency_header,
				keyed=keyed,
				accept_statuses=accept_statuses,
				strip_credentials=strip_credentials,
				max_bytes=max_bytes,
				throttled=throttled,
			)
	except TimeoutError:
		raise ToolError(
			f"the service did not finish answering within {deadline:g} s", retryable=True
		) from None


async def _hops(
	client: httpx.AsyncClient,
	request: httpx.Request,
	*,
	auth: httpx.Auth | None,
	follow_redirects: bool,
	credentialed: bool,
	guard: SsrfGuard,
	guard_first: bool,
	retry: Retries,
	idempotency_header: str | None,
	keyed: bool,
	accept_statuses: Collection[int],
	strip_credentials: Collection[str] | None,
	max_bytes: int,
	throttled: _Throttled | None,
) -> tuple[httpx.Response, bytes]:
	for hop in range(MAX_REDIRECTS + 1):
		outgoing = await guard(request) if hop or guard_first else request
		check_headers(outgoing.headers)
		try:
			# A redirect may drop the body (303), and the key with it: only the first request
			# counts as keyed by its body.
			safe = replay_safe(outgoing, idempotency_header, keyed=keyed and not hop)
			response, data = await _send_retrying(
				client, outgoing, auth, retry, safe, max_bytes, throttled
			)
		except httpx.TimeoutException as exc:
			raise ToolError("the service did not answer in time", retryable=True) from exc
		except httpx.RemoteProtocolError as exc:
			if _bad_location(exc):
				raise ToolError(
					"the service answered with a redirect to a malformed URL; not followed"
				) from None
			raise ToolError(
				f"could not reach {_place(outgoing.url)} ({type(exc).__name__})", retryable=True
			) from exc
		except httpx.ConnectError as exc:
			raise ToolError(
				f"could not connect to {_place(outgoing.url)} (connection refused, unreachable, "
				"or the name does not resolve)",
				retryable=True,
			) from exc
		except httpx.TransportError as exc:
			raise ToolError(
				f"could not reach {_place(outgoing.url)} ({type(exc).__name__})", retryable=True
			) from exc
		except (httpx.InvalidURL, ValueError):
			# httpx builds the next request of any redirect, followed or not, and its URL
			# parser raises these (UnicodeError and IDNA errors included) on a malformed one;
			# the aiohttp transport raises ValueError for a URL it cannot send.
			raise ToolError(
				"the URL, or the one the service redirected to, is malformed or not supported"
			) from None
		# has_redirect_location, not is_redirect: a 3xx without Location (Google's 308 Resume
		# Incomplete, 304 Not Modified) is an answer, not a redirect.
		if not (follow_redirects and response.has_redirect_location) or (
			response.status_code in accept_statuses
		):
			return response, data
		nxt = _next_request(client, request, response)
		if credentialed and _origin(nxt.url) != _origin(request.url):
			if strip_credentials is None:
				raise ToolError(
					f"the service redirected to another origin ({nxt.url.host}); not followed "
					"because the request carries credentials",
					status_code=response.status_code,
				)
			target = str(nxt.url)
			if any(secret and secret in target for secret in strip_credentials):
				raise ToolError(
					"the service redirected to another origin with a credential in the URL; "
					"not followed",
					status_code=response.status_code,
				)
			# Follow to the other host as a stranger: no auth, and only safe headers.
			auth, credentialed = None, False
		request = nxt
	raise ToolError(f"more than {MAX_REDIRECTS} redirects; giving up")


def _reads_files(tool: HttpTool, setup: ApiSetup) -> bool:
	parts = (
		tool.body,
		tool.headers,
		tool.cookies,
		tool.query_params,
		setup.headers,
		setup.query_params,
	)
	return any(uses_filter(part, *FILE_FILTERS) for part in parts)


def check_text(value: Any, where: str = "input") -> None:
	"""Refuse text that cannot be sent: a lone surrogate anywhere in a tool input.

	JSON can spell a lone surrogate (a ``u+d800`` escape on its own), which no encoder accepts; here it is
	a clear error naming the field instead of a crash in whatever encodes it first.

	Args:
		value: The input (dicts and lists walked).
		where: Its name, for the message.

	Raises:
		ToolError: A string (or key) holds a lone surrogate.
	"""
	if isinstance(value, str):
		try:
			value.encode("utf-8")
		except UnicodeEncodeError:
			raise ToolError(
				f"{where} is not valid Unicode text (it holds a lone surrogate); send valid text"
			) from None
	elif isinstance(value, Mapping):
		for key, item in value.items():
			check_text(key, where)
			check_text(
				item, f"{where}.{key}" if isinstance(key, str) and key.isprintable() else where
			)
	elif isinstance(value, (list, tuple)):
		for index, item in enumerate(value):
			check_text(item, f"{where}[{index}]")


def _encoded_headers(extra: Mapping[str, str]) -> list[tuple[str, str]]:
	"""Check the headers an encoder computed from the body (a checksum, S3 metadata)."""
	pairs: list[tuple[str, str]] = []
	for name, value in extra.items():
		if not is_token(name):
			raise ToolError(f"{name[:60]!r} is not a valid header name")
		pairs.append((name, check_tool_header(name, value)))
	return pairs


def _check_url_keys(tool: HttpTool, context: ToolContext) -> None:
	"""Name the config key (and its variable) a tool's URL needs, instead of an empty path part."""
	from openmolt_core._envvars import env_var
	from openmolt_core.integrations.preflight import tool_url_keys

	config = context.config or {}
	for key in tool_url_keys(tool):
		if config.get(key) in (None, ""):
			iid = context.integration
			raise ToolError(
				f"{iid}: this tool needs config {key!r}, which is not set; the user must set "
				f"{env_var(iid, key)} or give {key!r} in the integration's config"
			)


def _render_base(source: str, data: Mapping[str, Any], filters: Filters) -> Any:
	"""Render a base URL: input after a fixed origin is encoded like an endpoint's values.

	Its path after the origin is rendered as an endpoint (each value one path segment, ``.``
	and ``..`` refused; after a ``?``, percent-encoded query values) when it uses ``input``,
	so a value cannot climb the path or add a query. A base URL whose origin itself comes
	from the input (an upload URL the service returned, checked against ``input_origins``) is
	taken as it is, and so is one using config alone (a self-hosted path prefix keeps its
	slashes).
	"""
	part = origin_part(source)
	rest = source[len(part) :]
	if not rest or origin_problem(part) is not None:
		return render_string(source, data, filters=filters)
	if not uses_input(rest):
		rendered = render_string(source, data, filters=filters)
		if isinstance(rendered, str):
			check_empty_segments(source, rendered, "the base URL")
		return rendered
	head = render_string(part, data, filters=filters)
	return f"{'' if head is MISSING else head}{render_endpoint(rest, data, filters=filters)}"


async def build_request(
	tool: HttpTool,
	integration: Integration,
	input: Mapping[str, Any],
	context: ToolContext,
	client: httpx.AsyncClient,
	*,
	idempotency_key: str | None = None,
) -> httpx.Request:
	"""Render a tool call into an ``httpx.Request`` (no auth applied yet).

	Args:
		tool: The tool definition.
		integration: Its integration (API setup, filters, encoders).
		input: The validated tool input.
		context: The agent's context (config, file store).
		client: The client that builds the request.
		idempotency_key: The call's key, which ``{{ call.idempotency_key }}`` renders to
			(`openmolt_core.integrations.templating.IDEMPOTENCY_KEY`); default: the context's.

	Raises:
		ToolError: A template failed, a value was refused, or a file could not be resolved.
	"""
	setup = integration.api_setup
	call = {"idempotency_key": idempotency_key or context.idempotency_key}
	data = {"input": input, "config": context.config, "call": call}
	store = context.files
	filters = integration.filters
	_check_url_keys(tool, context)

	def render_all() -> tuple[str, Any, Any, Any, Any, Any, Any]:
		base = _render_base(tool.base_url or setup.base_url, data, filters)
		endpoint = render_endpoint(tool.endpoint, data, filters=filters) if tool.endpoint else ""
		query = render({**setup.query_params, **tool.query_params}, data, filters=filters)
		headers = render({**setup.headers, **tool.headers}, data, filters=filters)
		cookies = render(tool.cookies, data, filters=filters)
		body = None
		if tool.body is not None:
			# A null is sent only in a body, and only for an input whose schema takes null.
			nulls = null_inputs(tool.input_schema)
			body = render(tool.body, data, filters=filters, nulls=nulls)
		files = render(tool.files, data, filters=filters)
		return endpoint, base, query, headers, cookies, body, files

	if _reads_files(tool, setup):

		def render_reading() -> tuple[str, Any, Any, Any, Any, Any, Any]:
			with reading_files(store):
				return render_all()

		rendered = await anyio.to_thread.run_sync(render_reading)
	else:
		rendered = render_all()
	endpoint, base, query, rendered_headers, rendered_cookies, body, rendered_files = rendered
	absolute = bool(tool.endpoint) and is_absolute(tool.endpoint)
	url_source = tool.endpoint if absolute else tool.base_url or setup.base_url
	url, base_query = split_base("" if base is MISSING else str(base), endpoint, absolute=absolute)
	if not is_web_url(url):
		raise ToolError("the tool's URL is not an absolute http(s) URL; set base_url")
	check_dot_segments(url, "the tool's URL")
	if host_from_input(tool, setup):
		try:
			parsed = httpx.URL(url)
		except (httpx.InvalidURL, ValueError, UnicodeError):
			raise ToolError("the tool's URL is not a valid URL; check the input") from None
		check_input_origin(parsed, tool.input_origins or setup.input_origins, context.config)
	else:
		check_fixed_origin(url, origin_part(url_source), context.config)
	headers: dict[str, tuple[str, str]] = {}
	for name, value in rendered_headers.items():
		if value is not MISSING and value is not None and value != "":
			headers[name.lower()] = (name, check_tool_header(name, value))
	crumbs = _cookies(rendered_cookies)
	if crumbs:
		given = headers.get("cookie")
		text = "; ".join([*([given[1]] if given else []), *crumbs])
		headers["cookie"] = (given[0] if given else "Cookie", check_tool_header("Cookie", text))
	fmt = tool.request_format or setup.request_format
	files = {k: v for k, v in rendered_files.items() if v not in (None, "")}
	encoded = await encode_body(
		fmt,
		None if body is MISSING else body,
		files,
		store,
		encoders=integration.encoders,
		encoding=tool.encoding,
	)
	content, content_type = encoded.content, encoded.content_type
	if content_type and (content_type.startswith("multipart/") or "content-type" not in headers):
		headers["content-type"] = ("Content-Type", content_type)
	for name, value in _encoded_headers(encoded.headers):
		headers[name.lower()] = (name, value)
	headers.setdefault("accept-encoding", ("Accept-Encoding", ACCEPT_ENCODING))
	try:
		return client.build_request(
			tool.method,
			with_base_query(append_query(httpx.URL(url), query_pairs(query)), base_query),
			headers=[pair for pair in headers.values()],
			content=content,
			timeout=httpx.Timeout(setup.timeout, connect=min(10.0, setup.timeout)),
		)
	except (httpx.InvalidURL, ValueError, UnicodeError):
		raise ToolError("the tool's URL is not a valid URL; check the input") from None


def _cookies(rendered: Mapping[str, Any]) -> list[str]:
	"""A tool's rendered cookies as ``name=value`` pairs (`cookie_pairs`); unset ones left out.

	A value ``param_style: "form"`` wrote keeps its explode; one another style wrote is its text.
	"""
	pairs: list[str] = []
	for name, value in rendered.items():
		if value is MISSING:
			continue
		if isinstance(value, Styled):
			if value.style == "form":
				pairs += cookie_pairs(name, value.value, value.explode)
				continue
			value = str(value)
		pairs += cookie_pairs(name, value)
	return pairs


def host_from_input(tool: HttpTool, setup: ApiSetup) -> bool:
	"""Whether the input may choose a tool's host (its origin template uses ``input``).

	Such a tool must list ``input_origins``; `Integration` refuses it otherwise.
	"""
	if tool.endpoint and is_absolute(tool.endpoint):
		source = tool.endpoint
	else:
		source = tool.base_url or setup.base_url
	return origin_problem(origin_part(source)) is not None


def guard_for(context: ToolContext, setup: ApiSetup | None = None) -> SsrfGuard:
	"""The SSRF guard for a tool call: the integration config's ``allowInternalHosts``.

	Args:
		context: The tool's context (``config["allowInternalHosts"]``, and
			``extras["resolver"]``, a `openmolt_core.integrations._ssrf.Resolver`, if any).
		setup: The integration's API setup: its ``allow_internal_hosts`` are allowed too.

	Raises:
		ToolError: ``allowInternalHosts`` is malformed.
	"""
	try:
		allowed = internal_hosts(EngineConfig.of(context.config).allow_internal_hosts)
		if setup is not None and setup.allow_internal_hosts:
			allowed = internal_hosts(setup.allow_internal_hosts) + allowed
		return SsrfGuard(internal=allowed, resolver=context.extras.get("resolver"))
	except ConfigurationError as exc:
		raise ToolError(f"{context.integration}: {exc}") from None


async def execute_http_tool(
	tool: HttpTool, integration: Integration, input: dict[str, Any], context: ToolContext
) -> Any:
	"""Run one HTTP tool call: render, authenticate, send, decode.

	Args:
		tool: The tool definition.
		integration: Its integration (API setup).
		input: The validated tool input (data, never rendered as a template).
		context: The agent's context: config, shared client, auth, secrets, file store.

	Returns:
		The decoded response (see `openmolt_core.integrations._decode.decode`).

	Raises:
		ToolError: The request could not be built or sent, or the service answered non-2xx.
	"""
	redact = redactor_for([context])
	handle = f"{context.integration}.{tool.handle}"
	try:
		if context.http is None:
			raise ToolError("HTTP tools need the shared client; run them through an agent")
		client = context.http()
		check_text(input)
		# One key per tool call: the engine's retries resend this same request, and a durable
		# run that replays the call after a crash derives the same key again.
		key = context.idempotency_key
		request = await build_request(
			tool, integration, input, context, client, idempotency_key=key
		)
		setup = integration.api_setup
		key_header = setup.idempotency_header
		if key_header and request.method == "POST" and not request.headers.get(key_header):
			request.headers[key_header] = key
		policy = context.retry or context.extras.get("retry_policy") or DEFAULT_RETRY
		fmt = tool.response_format or setup.response_format
		limit = tool.max_response_bytes or (
			MAX_DOWNLOAD_BYTES if fmt == "binary" else MAX_RESPONSE_BYTES
		)
		throttled = throttle_finder(integration.throttle_checks)
		response, data = await send(
			client,
			request,
			auth=context.auth,
			follow_redirects=bool(tool.follow_redirects),
			credentialed=context.auth is not None or bool(context.redact),
			guard=guard_for(context, setup),
			guard_first=setup.guard_every_request
			or context.config_from_user
			or host_from_input(tool, setup),
			strip_credentials=redact.secrets
			if tool.follow_redirects == "without-credentials"
			else None,
			retry=policy,
			idempotency_header=key_header,
			keyed=tool.sends_call_key,
			accept_statuses=tool.accept_statuses,
			deadline=setup.timeout,
			max_bytes=limit,
			throttled=throttled,
		)
		if throttled is not None and response.is_success and throttled(response, data) is not None:
			details = trimmed_details(response, data, redact.secrets)
			raise ToolError(
				"the service is rate limiting and turned the request away, nothing applied; "
				f"try again later: {error_message(details) or 'throttled'}",
				status_code=response.status_code,
				details=details,
				retryable=True,
			)
		if not response.is_success and response.status_code not in tool.accept_statuses:
			details = trimmed_details(response, data, redact.secrets)
			message = error_message(details) or response.reason_phrase or "error"
			if response.status_code >= 500 and not replay_safe(request, key_header):
				message += (
					" (not retried: the request may have been applied; check before repeating it)"
				)
			raise ToolError(
				f"{tool.method} {request.url.path} answered {response.status_code}: {message}",
				status_code=response.status_code,
				details=details,
				retryable=response.status_code == 429 or response.status_code >= 500,
			)
		return await decode(
			response,
			data,
			fmt,
			store=context.files,
			response_headers=tool.response_headers,
			response_files=tool.response_files,
			checks=integration.response_checks,
			secrets=redact.secrets,
		)
	except (httpx.HTTPError, httpx.InvalidURL) as exc:
		raise ToolError(
			redact(f"the request failed: {type(exc).__name__}: {exc}"), tool=handle
		) from None
	except ToolError as exc:
		exc.tool = exc.tool or handle
		exc.message = redact(exc.message)
		exc.args = (exc.message,)
		exc.details = redact.deep(exc.details)
		raise
