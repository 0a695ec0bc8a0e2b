"""The HTTP tool engine: one generic executor for every `HttpTool` of every integration.

A call goes through these steps:

1. merge the integration's ``api_setup`` with the tool (URL, query, headers, formats, timeout);
2. render every template of the definition with ``input`` and ``config`` (`templating`): values
   from the model are data, endpoint values are encoded path segments, header values with line
   breaks are refused; a tool using a file filter (``file_base64``) renders in a worker thread;
3. encode the body in the request format (`_encode`), resolving file references; add the
   tool's ``checksum`` header over the encoded body and its ``prefixed_headers``; a POST gets a
   fresh idempotency key when the API setup names an ``idempotency_header`` the call did not set;
4. send with the shared ``httpx.AsyncClient`` and the credential's ``httpx.Auth``
   (`credentials`), retrying with tenacity (``Retry-After`` and ``X-RateLimit-Reset`` honoured,
   bounded in attempts, per-wait and total time). 429 is always retried (the request was not
   processed); 5xx, timeouts and broken connections only when repeating is safe: an idempotent
   method, or a request with an idempotency key. A request that never reached the service (no
   connection) is always retried;
5. follow redirects by hand: never to another origin when the request carries credentials
   (httpx strips only ``Authorization`` and ``Cookie`` across origins; a key in a custom header or
   the query would follow), and never for a status the tool lists in ``accept_statuses``;
6. decode the response in the response format (`_decode`); a non-2xx reply that the tool does not
   accept raises a `ToolError`
   with the status, the service's message and a trimmed body, and so does a 200 reply that the
   API setup's ``error_check`` finds reporting a failure. Secrets are redacted from errors.
"""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import httpx
from tenacity import (
	AsyncRetrying,
	RetryCallState,
	retry_if_exception_type,
	stop_after_attempt,
	stop_after_delay,
)
from tenacity.stop import stop_base

from openmolt_core._redact import redactor_for
from openmolt_core.errors import ToolError
from openmolt_core.integrations._decode import decode, error_message, trimmed_details
from openmolt_core.integrations._encode import append_query, encode_body, query_pairs
from openmolt_core.integrations.templating import (
	FILE_FILTERS,
	MISSING,
	reading_files,
	render,
	render_endpoint,
	render_string,
	uses_filter,
)

if TYPE_CHECKING:
	from openmolt_core.integrations.model import ApiSetup, HttpTool, Integration
	from openmolt_core.tools import ToolContext

__all__ = [
	"DEFAULT_RETRY",
	"MAX_BODY_BYTES",
	"MAX_REDIRECTS",
	"RetryPolicy",
	"build_request",
	"execute_http_tool",
	"replay_safe",
	"send",
]

MAX_REDIRECTS = 10
"""Redirects followed before a request is given up."""

MAX_BODY_BYTES = 100 * 1024 * 1024
"""The largest response body read (binary responses included)."""

_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_IDEMPOTENCY_HEADERS = ("idempotency-key", "x-idempotency-key")
# Failures before anything was sent: always safe to retry.
_NOT_SENT: tuple[type[Exception], ...] = (
	httpx.ConnectError,
	httpx.ConnectTimeout,
	httpx.PoolTimeout,
)
_CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 header field name


@dataclass(frozen=True, slots=True)
class RetryPolicy:
	"""How 429 and 5xx replies (and connection failures) are retried.

	Args:
		attempts: Tries in all, the first included.
		max_total: Seconds after which no new attempt starts.
		max_wait: The longest single wait; a service asking for more is not retried.
		backoff: The first exponential backoff wait, when the service gives no hint.
		sleep: The sleep function (tests pass one that does not sleep).
	"""

	attempts: int = 4
	max_total: float = 60.0
	max_wait: float = 30.0
	backoff: float = 0.5
	sleep: Callable[[float], Awaitable[Any]] = anyio.sleep


DEFAULT_RETRY = RetryPolicy()
"""The policy used unless ``context.extras["retry_policy"]`` holds another."""


class _Retryable(Exception):
	def __init__(self, response: httpx.Response, data: bytes) -> None:
		self.response = response
		self.data = data


def _hint(response: httpx.Response) -> float | None:
	"""Seconds the service asks us to wait, from Retry-After or X-RateLimit-Reset style headers."""
	value = response.headers.get("retry-after")
	if value:
		try:
			return max(float(value), 0.0)
		except ValueError:
			try:
				when = parsedate_to_datetime(value)
			except (TypeError, ValueError):
				return None
			import datetime as dt

			return max((when - dt.datetime.now(dt.UTC)).total_seconds(), 0.0)
	for name in ("x-ratelimit-reset", "x-rate-limit-reset", "ratelimit-reset"):
		value = response.headers.get(name)
		if value:
			try:
				reset = float(value)
			except ValueError:
				continue
			if reset > 1e9:  # an epoch timestamp (GitHub, X); else seconds from now
				import time

				reset -= time.time()
			return max(reset, 0.0)
	return None


def _wait_for(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
	def wait(state: RetryCallState) -> float:
		exc = state.outcome.exception() if state.outcome else None
		hint = _hint(exc.response) if isinstance(exc, _Retryable) else None
		if hint is not None:
			return min(hint, policy.max_wait)
		return min(policy.backoff * 2.0 ** (state.attempt_number - 1), policy.max_wait)

	return wait


class _TooLong(stop_base):
	"""Stop when the service asks for a wait longer than the policy allows."""

	def __init__(self, policy: RetryPolicy) -> None:
		self.policy = policy

	def __call__(self, retry_state: RetryCallState) -> bool:
		exc = retry_state.outcome.exception() if retry_state.outcome else None
		hint = _hint(exc.response) if isinstance(exc, _Retryable) else None
		return hint is not None and hint > self.policy.max_wait


async def _read(response: httpx.Response) -> bytes:
	chunks: list[bytes] = []
	size = 0
	try:
		async for chunk in response.aiter_bytes():
			size += len(chunk)
			if size > MAX_BODY_BYTES:
				raise ToolError(f"the response is larger than {MAX_BODY_BYTES} bytes; not read")
			chunks.append(chunk)
	finally:
		await response.aclose()
	return b"".join(chunks)


def replay_safe(request: httpx.Request, idempotency_header: str | None = None) -> bool:
	"""Whether sending a request twice cannot apply it twice.

	True for idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS) and for requests carrying an
	idempotency key (``idempotency_header``, ``Idempotency-Key`` or ``X-Idempotency-Key``).
	"""
	if request.method in _IDEMPOTENT:
		return True
	names = (*_IDEMPOTENCY_HEADERS, *((idempotency_header,) if idempotency_header else ()))
	return any(request.headers.get(name) for name in names)


async def _send_retrying(
	client: httpx.AsyncClient,
	request: httpx.Request,
	auth: httpx.Auth | None,
	policy: RetryPolicy,
	safe: bool,
) -> tuple[httpx.Response, bytes]:
	transport_errors: tuple[type[Exception], ...] = (httpx.TransportError,) if safe else _NOT_SENT
	retrying = AsyncRetrying(
		sleep=policy.sleep,
		stop=stop_after_attempt(policy.attempts)
		| stop_after_delay(policy.max_total)
		| _TooLong(policy),
		wait=_wait_for(policy),
		retry=retry_if_exception_type((_Retryable, *transport_errors)),
		reraise=True,
	)
	try:
		async for attempt in retrying:
			with attempt:
				response = await client.send(request, auth=auth, stream=True)
				data = await _read(response)
				if response.status_code == 429 or (safe and response.status_code >= 500):
					raise _Retryable(response, data)
				return response, data
	except _Retryable as exc:
		return exc.response, exc.data
	raise AssertionError("unreachable: tenacity either returns or reraises")


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
	return url.scheme, url.host, url.port


def _next_request(
	client: httpx.AsyncClient, request: httpx.Request, response: httpx.Response
) -> httpx.Request:
	url = request.url.join(response.headers["location"])
	if url.scheme not in ("http", "https"):
		raise ToolError(f"redirect to a {url.scheme or 'relative'} URL refused")
	method = request.method
	content: bytes | None = request.content
	if (response.status_code == 303 and method != "HEAD") or (
		response.status_code in (301, 302) and method == "POST"
	):
		method, content = "GET", None
	headers = httpx.Headers(request.headers)
	headers.pop("host", None)
	if content is None:
		for name in ("content-type", "content-length", "transfer-encoding"):
			headers.pop(name, None)
	if _origin(url) != _origin(request.url):
		for name in _CREDENTIAL_HEADERS:
			headers.pop(name, None)
	return client.build_request(
		method, url, headers=headers, content=content, extensions=request.extensions
	)


async def send(
	client: httpx.AsyncClient,
	request: httpx.Request,
	*,
	auth: httpx.Auth | None = None,
	follow_redirects: bool = True,
	credentialed: bool = False,
	before_send: Callable[[httpx.Request], Awaitable[httpx.Request]] | None = None,
	retry: RetryPolicy = DEFAULT_RETRY,
	idempotency_header: str | None = None,
	accept_statuses: Collection[int] = (),
	strip_credentials: Collection[str] | None = None,
) -> tuple[httpx.Response, bytes]:
	"""Send a request with retries, following redirects by hand.

	429 is retried for every method; 5xx replies, timeouts and dropped connections only when
	`replay_safe` says so; failures to connect always.

	Args:
		client: The shared client.
		request: The request (its URL is the logical one redirects are resolved against).
		auth: The credential's auth, applied on every hop (hops never leave the origin with it).
		follow_redirects: Whether to follow redirects.
		credentialed: The request carries credentials: a redirect to another origin is refused.
		before_send: Checks or rewrites each hop just before it is sent (the SSRF guard pins it).
		retry: The retry policy.
		idempotency_header: The header that carries an idempotency key, if the API has one.
		accept_statuses: Statuses that are an answer, never a redirect to follow (Google's
			``308 Resume Incomplete``), even with a ``Location`` header.
		strip_credentials: When given, a cross-origin redirect of a credentialed request is
			followed without the auth and without any header holding one of these secrets.

	Returns:
		The final response (closed) and its body.

	Raises:
		ToolError: Too many redirects, a cross-origin redirect with credentials, or no reply.
	"""
	for _ in range(MAX_REDIRECTS + 1):
		outgoing = await before_send(request) if before_send else request
		try:
			safe = replay_safe(outgoing, idempotency_header)
			response, data = await _send_retrying(client, outgoing, auth, retry, safe)
		except httpx.TimeoutException as exc:
			raise ToolError("the service did not answer in time", retryable=True) from exc
		except httpx.TransportError as exc:
			raise ToolError(
				f"could not reach the service ({type(exc).__name__})", retryable=True
			) from exc
		# has_redirect_location, not is_redirect: a 3xx without Location (Google's 308 Resume
		# Incomplete, 304 Not Modified) is an answer, not a redirect.
		if not (follow_redirects and response.has_redirect_location) or (
			response.status_code in accept_statuses
		):
			return response, data
		nxt = _next_request(client, request, response)
		if (
			credentialed
			and strip_credentials is not None
			and _origin(nxt.url) != _origin(request.url)
		):
			# Follow to the other host as a stranger: no auth, no header carrying a secret.
			for name, value in list(nxt.headers.items()):
				if any(secret in value for secret in strip_credentials):
					del nxt.headers[name]
			auth, credentialed, request = None, False, nxt
			continue
		if credentialed and _origin(nxt.url) != _origin(request.url):
			raise ToolError(
				f"the service redirected to another origin ({nxt.url.host}); not followed "
				"because the request carries credentials",
				status_code=response.status_code,
			)
		request = nxt
	raise ToolError(f"more than {MAX_REDIRECTS} redirects; giving up")


def _reads_files(tool: HttpTool, setup: ApiSetup) -> bool:
	parts = (
		tool.body,
		tool.headers,
		tool.prefixed_headers,
		tool.query_params,
		setup.headers,
		setup.query_params,
	)
	return any(uses_filter(part, *FILE_FILTERS) for part in parts)


def _check_header(name: str, value: Any) -> str:
	if isinstance(value, bool):
		text = "true" if value else "false"
	else:
		text = value if isinstance(value, str) else str(value)
	if any(c in text or c in name for c in "\r\n\x00"):
		raise ToolError(f"header {name!r} would contain a line break; refused")
	if not (text.isascii() and name.isascii()):
		raise ToolError(
			f"header {name!r} would contain non-ASCII text, which HTTP headers cannot carry; "
			"use ASCII (or percent-encode the value)"
		)
	return text


def _prefixed(rendered: Mapping[str, Any]) -> list[tuple[str, str]]:
	"""Expand ``prefixed_headers``: each key of a rendered object becomes ``<prefix><key>``."""
	pairs: list[tuple[str, str]] = []
	for prefix, values in rendered.items():
		if values is MISSING or values is None or values == "":
			continue
		if not isinstance(values, Mapping):
			raise ToolError(
				f"headers prefixed {prefix!r} need an object of names to values, "
				f"got {type(values).__name__}"
			)
		for key, value in values.items():
			if value is None:
				continue
			if isinstance(value, (Mapping, list, tuple)):
				raise ToolError(f"header {prefix}{key} needs a text value, not a list or object")
			name = f"{prefix}{key}"
			if not _TOKEN.fullmatch(name):
				raise ToolError(f"{name!r} is not a valid header name")
			pairs.append((name, _check_header(name, value)))
	return pairs


def _checksum(kind: str, content: bytes | None) -> tuple[str, str]:
	digest = hashlib.md5(content or b"", usedforsecurity=False).digest()
	if kind == "content-md5":
		return "Content-MD5", base64.b64encode(digest).decode("ascii")
	raise ToolError(f"unknown checksum {kind!r}")


async def build_request(
	tool: HttpTool,
	integration: Integration,
	input: Mapping[str, Any],
	context: ToolContext,
	client: httpx.AsyncClient,
) -> httpx.Request:
	"""Render a tool call into an ``httpx.Request`` (no auth applied yet).

	Raises:
		ToolError: A template failed, a value was refused, or a file could not be resolved.
	"""
	setup = integration.api_setup
	data = {"input": input, "config": context.config}
	store = context.files

	def render_all() -> tuple[str, Any, Any, Any, Any, Any, Any]:
		base = render_string(tool.base_url or setup.base_url, data)
		endpoint = render_endpoint(tool.endpoint, data) if tool.endpoint else ""
		query = render({**setup.query_params, **tool.query_params}, data)
		headers = render({**setup.headers, **tool.headers}, data)
		prefixed = render(tool.prefixed_headers, data)
		body = render(tool.body, data) if tool.body is not None else None
		files = render(tool.files, data)
		return endpoint, base, query, headers, prefixed, body, files

	if _reads_files(tool, setup):

		def render_reading() -> tuple[str, Any, Any, Any, Any, Any, Any]:
			with reading_files(store):
				return render_all()

		(
			endpoint,
			base,
			query,
			rendered_headers,
			prefixed,
			body,
			rendered_files,
		) = await anyio.to_thread.run_sync(render_reading)
	else:
		endpoint, base, query, rendered_headers, prefixed, body, rendered_files = render_all()
	if endpoint.startswith(("http://", "https://")):
		url = endpoint
	elif endpoint:
		url = f"{str(base).rstrip('/')}/{endpoint.lstrip('/')}"
	else:
		url = str(base)
	if not url.startswith(("http://", "https://")):
		raise ToolError(f"the tool's URL {url[:80]!r} is not absolute; set base_url")
	headers: dict[str, tuple[str, str]] = {}
	for name, value in rendered_headers.items():
		if value is not MISSING and value is not None and value != "":
			headers[name.lower()] = (name, _check_header(name, value))
	for name, value in _prefixed(prefixed):
		headers.setdefault(name.lower(), (name, value))
	fmt = tool.request_format or setup.request_format
	files = {k: v for k, v in rendered_files.items() if v not in (None, "")}
	content, content_type = await encode_body(
		fmt,
		None if body is MISSING else body,
		files,
		store,
		arrays=tool.form_arrays or setup.form_arrays,
	)
	if content_type and (content_type.startswith("multipart/") or "content-type" not in headers):
		headers["content-type"] = ("Content-Type", content_type)
	if tool.checksum:
		name, digest = _checksum(tool.checksum, content)
		headers[name.lower()] = (name, digest)
	return client.build_request(
		tool.method,
		append_query(httpx.URL(url), query_pairs(query)),
		headers=[pair for pair in headers.values()],
		content=content,
		timeout=httpx.Timeout(setup.timeout, connect=min(10.0, setup.timeout)),
	)


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
		request = await build_request(tool, integration, input, context, client)
		setup = integration.api_setup
		key_header = setup.idempotency_header
		if key_header and request.method == "POST" and not request.headers.get(key_header):
			# One key per tool call: the engine's retries resend this same request.
			request.headers[key_header] = str(uuid.uuid4())
		policy = context.extras.get("retry_policy", DEFAULT_RETRY)
		response, data = await send(
			client,
			request,
			auth=context.auth,
			follow_redirects=bool(tool.follow_redirects),
			credentialed=context.auth is not None or bool(context.redact),
			strip_credentials=redact.secrets
			if tool.follow_redirects == "without-credentials"
			else None,
			retry=policy,
			idempotency_header=key_header,
			accept_statuses=tool.accept_statuses,
		)
		if not response.is_success and response.status_code not in tool.accept_statuses:
			details = trimmed_details(response, data)
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
		fmt = tool.response_format or setup.response_format
		return await decode(
			response,
			data,
			fmt,
			store=context.files,
			response_headers=tool.response_headers,
			response_files=tool.response_files,
			error_check=setup.error_check,
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
