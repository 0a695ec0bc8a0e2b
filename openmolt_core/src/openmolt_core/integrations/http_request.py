"""The ``httpRequest`` integration: one generic HTTP request tool, guarded against SSRF.

Available by default (entry point ``httpRequest``). Every hop (the first request and each redirect)
goes through `openmolt_core.integrations._ssrf.SsrfGuard`: the host is resolved, refused unless
every address is public, and the connection is pinned to the checked address. A hop to another
origin, or from https to http, keeps only safe headers and never re-sends a body. The tool's
``timeout`` bounds the whole call (every hop and the body), and the decoded body is capped.

The model chooses everything here, so nothing internal is reachable by default. An application
that wants its agents to reach some internal hosts lists them, and only them:
``om.register_integration("httpRequest",
OpenMolt.HttpRequestIntegration(allow_internal_hosts=["wiki.corp.example", "10.20.0.0/16"]))``,
or the config ``OpenMolt(integrations={"httpRequest": {"allowInternalHosts": [...]}})``. See
`openmolt_core.integrations._ssrf.InternalHosts` (never "everything").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from openmolt_core._markers import hookimpl
from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.functiontools import FunctionTool
from openmolt_core.integrations._body import ACCEPT_ENCODING
from openmolt_core.integrations._decode import decode, error_message, trimmed_details
from openmolt_core.integrations._encode import append_query, encode_body, query_pairs
from openmolt_core.integrations._headers import check_tool_header
from openmolt_core.integrations._ssrf import InternalHosts, Resolver, SsrfGuard, internal_hosts
from openmolt_core.integrations.config import EngineConfig
from openmolt_core.integrations.http import (
	DEFAULT_RETRY,
	MAX_RESPONSE_BYTES,
	check_text,
	send,
)
from openmolt_core.integrations.model import Integration
from openmolt_core.secrets import redactor_for
from openmolt_core.tools import ToolContext

__all__ = ["http_request_integration", "register_integrations"]

MAX_TIMEOUT = 120.0
"""The longest timeout a model may ask for, in seconds."""

_FORMATS = {"json": "json", "form": "form-data", "text": "text", "binary": "binary"}
_HIDDEN_HEADERS = frozenset({"set-cookie", "set-cookie2"})

INPUT_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"method": {
			"type": "string",
			"enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
			"default": "GET",
		},
		"url": {"type": "string", "description": "An absolute http(s) URL on a public host."},
		"headers": {"type": "object", "additionalProperties": {"type": "string"}},
		"query": {"type": "object", "description": "Query parameters (lists repeat the key)."},
		"body": {"description": "The body: an object for json/form, a string for text, a file "
			"reference for binary."},
		"bodyFormat": {"type": "string", "enum": list(_FORMATS), "default": "json"},
		"responseFormat": {
			"type": "string",
			"enum": ["auto", "json", "text", "xml", "binary"],
			"default": "auto",
			"description": "auto picks by Content-Type; binary saves the body as a file reference.",
		},
		"followRedirects": {"type": "boolean", "default": True},
		"timeout": {"type": "number", "minimum": 1, "maximum": MAX_TIMEOUT, "default": 30},
	},
	"required": ["url"],
	"additionalProperties": False,
}  # fmt: skip

OUTPUT_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"status": {"type": "integer"},
		"headers": {"type": "object"},
		"body": {"description": "Parsed JSON or XML, text, or a file reference for binary."},
	},
}


def _auto_format(response: httpx.Response) -> str:
	ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
	if ctype.endswith(("/json", "+json")):
		return "json"
	if ctype.endswith(("/xml", "+xml")):
		return "xml"
	if ctype.startswith("text/") or ctype in ("application/x-www-form-urlencoded", ""):
		return "text"
	return "binary"


def _guard(context: ToolContext, internal: InternalHosts, resolver: Resolver | None) -> SsrfGuard:
	try:
		config = EngineConfig.of(context.config)
	except ConfigurationError as exc:
		raise ToolError(f"httpRequest: {exc}") from None
	if config.allow_private:
		raise ToolError(
			"httpRequest: allowPrivate is no longer supported, since it opened every internal "
			"address to the model; list the internal hosts or networks in allowInternalHosts"
		)
	listed = config.allow_internal_hosts
	try:
		extra = internal_hosts(listed)
	except ConfigurationError as exc:
		raise ToolError(f"httpRequest: {exc}") from None
	return SsrfGuard(internal=internal + extra, resolver=resolver or context.extras.get("resolver"))


async def _request(
	i: dict[str, Any],
	context: ToolContext,
	*,
	internal: InternalHosts,
	resolver: Resolver | None,
	max_bytes: int,
) -> dict[str, Any]:
	if context.http is None:
		raise ToolError("httpRequest needs the shared client; run it through an agent")
	check_text(i)
	guard = _guard(context, internal, resolver)
	client = context.http()
	method = i.get("method", "GET").upper()
	headers = [(k, check_tool_header(k, v)) for k, v in (i.get("headers") or {}).items()]
	encoded = await encode_body(
		_FORMATS[i.get("bodyFormat", "json")], i.get("body"), {}, context.files
	)
	content, ctype = encoded.content, encoded.content_type
	if ctype and not any(k.lower() == "content-type" for k, _ in headers):
		headers.append(("Content-Type", ctype))
	if not any(k.lower() == "accept-encoding" for k, _ in headers):
		headers.append(("Accept-Encoding", ACCEPT_ENCODING))
	timeout = min(float(i.get("timeout", 30)), MAX_TIMEOUT)
	try:
		url = httpx.URL(i["url"])
		if url.userinfo:
			raise ToolError(
				"the URL holds a user name or password; send credentials in a header instead"
			)
		request = client.build_request(
			method,
			append_query(url, query_pairs(i.get("query") or {})),
			headers=headers,
			content=content,
			timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
		)
	except (httpx.InvalidURL, ValueError, UnicodeError):
		raise ToolError("invalid URL; give an absolute http(s) URL") from None
	response, data = await send(
		client,
		request,
		follow_redirects=i.get("followRedirects", True),
		guard=guard,
		guard_first=True,
		retry=context.retry or context.extras.get("retry_policy") or DEFAULT_RETRY,
		deadline=timeout,
		max_bytes=max_bytes,
	)
	shown = {k: v for k, v in response.headers.items() if k.lower() not in _HIDDEN_HEADERS}
	if not response.is_success:
		details = trimmed_details(response, data, context.redact)
		raise ToolError(
			f"{method} {request.url.host} answered {response.status_code}: "
			f"{error_message(details) or response.reason_phrase or 'error'}",
			status_code=response.status_code,
			details=details,
			retryable=response.status_code == 429 or response.status_code >= 500,
		)
	fmt = i.get("responseFormat", "auto")
	body = await decode(
		response, data, _auto_format(response) if fmt == "auto" else fmt, store=context.files
	)
	return {"status": response.status_code, "headers": shown, "body": body}


def http_request_integration(
	*,
	allow_internal_hosts: Sequence[str] = (),
	resolver: Resolver | None = None,
	max_response_bytes: int = MAX_RESPONSE_BYTES,
	allow_private: bool | None = None,
) -> Integration:
	"""Build the httpRequest integration.

	Args:
		allow_internal_hosts: Internal host names (``wiki.corp.example``, ``*.corp.example``)
			and networks (``10.20.0.0/16``) the model may reach; none by default. A network must
			lie inside one non-public block, so it can never mean "everything"; a cloud metadata
			endpoint is reachable only when listed by its exact address.
		resolver: Resolves host names (default: ``anyio.getaddrinfo``); tests pass a fake.
		max_response_bytes: The largest decoded response body read.
		allow_private: Removed (it opened every internal address); passing True raises.

	Raises:
		ConfigurationError: ``allow_internal_hosts`` holds something that is not a host name or
			a network of internal addresses, or ``allow_private`` is set.
	"""
	if allow_private:
		raise ConfigurationError(
			"HttpRequestIntegration(allow_private=True) is no longer supported, since it opened "
			"every internal address to the model; list the hosts or networks the agents may "
			"reach in allow_internal_hosts=[...] (e.g. ['wiki.corp.example', '10.20.0.0/16'])"
		)
	internal = internal_hosts(list(allow_internal_hosts))

	async def run(i: dict[str, Any], context: ToolContext) -> dict[str, Any]:
		redact = redactor_for([context])
		try:
			return await _request(
				i, context, internal=internal, resolver=resolver, max_bytes=max_response_bytes
			)
		except ToolError as exc:
			exc.message = redact(exc.message)
			exc.args = (exc.message,)
			exc.details = redact.deep(exc.details)
			exc.tool = exc.tool or f"{context.integration}.request"
			raise

	return Integration(
		name="HTTP Request",
		description="Send any HTTP request to a public address and read the reply.",
		scopes={"request": "Send HTTP requests to public addresses."},
		tools=[
			FunctionTool(
				handle="request",
				description="Send an HTTP request (method, url, headers, query, body) and return "
				"status, headers and body. Only public hosts are reachable.",
				function=run,
				input_schema=INPUT_SCHEMA,
				output_schema=OUTPUT_SCHEMA,
				scopes=("request",),
			)
		],
		# A fetched page is outside content; any request can carry data out (in its URL too).
		labels={"request": ["untrusted", "outbound"]},
	)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register ``httpRequest`` (no internal address reachable)."""
	register(http_request_integration(), id="httpRequest")
