"""The ``httpRequest`` integration: one generic HTTP request tool, guarded against SSRF.

Available by default (entry point ``httpRequest``). Every hop (the first request and each redirect)
goes through `openmolt_core.integrations._ssrf.SsrfGuard`: the host is resolved, refused unless
every address is public, and the connection is pinned to the checked address. Allow private
addresses explicitly with
``om.register_integration("httpRequest", OpenMolt.HttpRequestIntegration(allow_private=True))`` or
the config ``OpenMolt(integrations={"httpRequest": {"allowPrivate": True}})``.
"""

from __future__ import annotations

from typing import Any

import httpx

from openmolt_core._redact import redactor_for
from openmolt_core.errors import ToolError
from openmolt_core.hookspecs import hookimpl
from openmolt_core.integrations._decode import decode, error_message, trimmed_details
from openmolt_core.integrations._encode import append_query, encode_body, query_pairs
from openmolt_core.integrations._ssrf import Resolver, SsrfGuard
from openmolt_core.integrations.http import DEFAULT_RETRY, _check_header, send
from openmolt_core.integrations.model import Integration
from openmolt_core.tools import FunctionTool, ToolContext

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


async def _request(
	i: dict[str, Any], context: ToolContext, *, allow_private: bool, resolver: Resolver | None
) -> dict[str, Any]:
	if context.http is None:
		raise ToolError("httpRequest needs the shared client; run it through an agent")
	allowed = allow_private or bool(
		context.config.get("allowPrivate") or context.config.get("allow_private")
	)
	guard = SsrfGuard(allow_private=allowed, resolver=resolver)
	client = context.http()
	method = i.get("method", "GET").upper()
	headers = [(k, _check_header(k, v)) for k, v in (i.get("headers") or {}).items()]
	content, ctype = await encode_body(
		_FORMATS[i.get("bodyFormat", "json")], i.get("body"), {}, context.files
	)
	if ctype and not any(k.lower() == "content-type" for k, _ in headers):
		headers.append(("Content-Type", ctype))
	timeout = min(float(i.get("timeout", 30)), MAX_TIMEOUT)
	try:
		request = client.build_request(
			method,
			append_query(httpx.URL(i["url"]), query_pairs(i.get("query") or {})),
			headers=headers,
			content=content,
			timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
		)
	except (httpx.InvalidURL, ValueError) as exc:
		raise ToolError(f"invalid URL or headers: {exc}") from None
	response, data = await send(
		client,
		request,
		follow_redirects=i.get("followRedirects", True),
		before_send=guard,
		retry=context.extras.get("retry_policy", DEFAULT_RETRY),
	)
	shown = {k: v for k, v in response.headers.items() if k.lower() not in _HIDDEN_HEADERS}
	if not response.is_success:
		details = trimmed_details(response, data)
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
	*, allow_private: bool = False, resolver: Resolver | None = None
) -> Integration:
	"""Build the httpRequest integration.

	Args:
		allow_private: Allow loopback, private, link-local and metadata addresses.
		resolver: Resolves host names (default: ``anyio.getaddrinfo``); tests pass a fake.
	"""

	async def run(i: dict[str, Any], context: ToolContext) -> dict[str, Any]:
		redact = redactor_for([context])
		try:
			return await _request(i, context, allow_private=allow_private, resolver=resolver)
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
	)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register ``httpRequest`` (private addresses refused)."""
	register(http_request_integration(), id="httpRequest")
