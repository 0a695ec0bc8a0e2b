"""The HTTP tool as data: `HttpTool`, the `ApiSetup` its integration shares, and their formats.

They live apart from `openmolt_core.integrations.model.Integration`, which holds them, so that the
OpenAPI importer (`openmolt_core.integrations._openapi_build`) builds them without importing the
integration that calls it (`Integration.from_openapi`). `openmolt_core.integrations.model`
re-exports every name here.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations._form import FieldEncoding
from openmolt_core.integrations._headers import is_token
from openmolt_core.integrations._ssrf import internal_hosts
from openmolt_core.integrations.templating import (
	CALL_FIELDS,
	IDEMPOTENCY_KEY,  # noqa: F401 - the docstrings' references resolve here
	check_call_reads,
	liquid_text,
)
from openmolt_core.options import Options, options_config

__all__ = ["ApiSetup", "FieldEncoding", "HttpTool", "RequestFormat", "ResponseFormat"]

RequestFormat = str
"""How a request body is encoded: a built-in format, or one the integration registers.

Built in (`openmolt_core.integrations.extensions.BUILTIN_FORMATS`): ``json``, a JSON body;
``form-data``, application/x-www-form-urlencoded with nested keys the way Stripe expects
(``metadata[key]=v``, ``items[0][price]=p``), multipart when a file is sent; ``multipart``,
multipart/form-data (``files`` name the file fields) with the same nested keys;
``openapi-form`` and ``openapi-multipart``, the same two media types with each field written as
an OpenAPI document's ``encoding`` says (the tool's ``encoding``; without one, an array repeats
its key, ``tags=x&tags=y``, and an object is JSON text, or in multipart a JSON part; see
`openmolt_core.integrations._form`), which imported operations use; ``text``, the rendered body
as text; ``binary``, raw bytes (the body renders to a file reference). An integration adds formats (or
replaces a built-in one for its own tools) in ``Integration.encoders``: Google's
``multipart-related`` upload lives in the Google integrations, Twilio's repeated form keys in
Twilio's.
"""

ResponseFormat = Literal["json", "text", "xml", "binary"]
"""How a response body is read. ``binary`` saves the body as a file reference, never as text."""


class _Spec(Options):
	"""Base of the integration models: frozen, closed, each field in snake_case or camelCase."""

	model_config: ClassVar[ConfigDict] = options_config(arbitrary_types_allowed=True)


class ApiSetup(_Spec):
	"""What every HTTP tool of an integration shares.

	Attributes:
		base_url: Prefix of every tool endpoint (Liquid with ``config.*``, e.g. a shop domain).
		headers: Headers sent with every request (Liquid with ``config.*``).
		query_params: Query parameters sent with every request.
		request_format: Default body encoding (see `RequestFormat`).
		response_format: Default response decoding.
		timeout: Seconds before a request is abandoned.
		idempotency_header: A header that makes a POST safe to repeat (``Idempotency-Key``):
			each POST call that does not set it gets a UUID derived from its call id, kept
			across retries and across a durable run's replay of the call after a crash. A
			service that reads its key elsewhere (a body field, a GraphQL variable) gets it
			from a tool template instead: `IDEMPOTENCY_KEY` (``{{ call.idempotency_key }}``).
		idempotency_key_lifetime: Seconds the service keeps an idempotency key (Stripe prunes
			keys once they are 24 h old, and makes a request whose key it forgot again). A
			keyed call a durable run finds in doubt after a crash (`openmolt_core.capabilities.indoubt`)
			is repeated with its key only while the key is younger than this; an older one
			could take effect twice, so a person is asked whether it did (``ask``). None: the
			service keeps its keys for good, or says nothing of how long.
		input_origins: The origins a tool whose host comes from ``input`` may reach (see
			`HttpTool`); tools that list their own use theirs.
		guard_every_request: Send every request, the first one too, through the SSRF guard
			(`openmolt_core.integrations._ssrf`), as ``httpRequest`` does. Set for integrations
			imported from a document someone else wrote (`openmolt_core.integrations.openapi`),
			whose URLs the application did not choose.
		allow_internal_hosts: Internal hosts or networks this integration's tools may reach
			through the guard (``allowInternalHosts``; the integration's config may add more);
			what the user allowed when importing.
	"""

	base_url: str = ""
	headers: dict[str, str] = Field(default_factory=dict)
	query_params: dict[str, Any] = Field(default_factory=dict)
	request_format: RequestFormat = "json"
	response_format: ResponseFormat = "json"
	timeout: float = Field(default=60.0, gt=0)
	idempotency_header: str | None = None
	idempotency_key_lifetime: float | None = Field(default=None, gt=0)
	input_origins: list[str] = Field(default_factory=list)
	guard_every_request: bool = False
	allow_internal_hosts: list[str] = Field(default_factory=list)

	@model_validator(mode="after")
	def _call_fields(self) -> ApiSetup:
		"""Refuses a ``call`` field the engine does not fill (every tool's request reads these)."""
		check_call_reads([self.base_url, self.headers, self.query_params], CALL_FIELDS, "api_setup")
		return self

	@field_validator("allow_internal_hosts")
	@classmethod
	def _internal(cls, value: list[str]) -> list[str]:
		try:
			internal_hosts(value)
		except ConfigurationError as exc:
			raise ValueError(str(exc)) from None
		return value


# How templates read the input: ``input.name``, ``input["name"]`` (also JSON-escaped), and the
# whole input (``{{ input }}``, ``{{ input | rfc2822 }}``), whose readers may take any key.
_READ_INPUT = re.compile(r"(?<![.\w$])input\.([A-Za-z_$][\w$-]*)")
_READ_INPUT_KEY = re.compile(r'\binput\[\\?"([^"\\]*)\\?"\]')
_WHOLE_INPUT = re.compile(r"(?<![.\w$])input\b(?![.\[\w])")


def _branch_properties(schema: dict[str, Any]) -> set[str]:
	"""The properties an object schema's allOf, anyOf and oneOf branches declare."""
	return {
		name
		for keyword in ("allOf", "anyOf", "oneOf")
		for branch in schema.get(keyword) or ()
		if isinstance(branch, dict)
		for name in (branch.get("properties") or {})
	}


IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
"""The HTTP methods a request of which is safe to send twice (the engine's retries, a durable
run's in-doubt calls: `HttpTool.in_doubt_for`, `openmolt_core.integrations.http.replay_safe`)."""


class HttpTool(_Spec):
	"""A tool that is one HTTP request, described as data.

	Every string is a Liquid template over ``input.*`` (the validated tool input), ``config.*``
	(the credential config) and ``call.idempotency_key`` (`IDEMPOTENCY_KEY`: the call's own
	idempotency key, never an input the model sees). A value that is exactly
	``"{{ input.field }}"`` is replaced by the input value itself, keeping its type; a missing
	optional field drops its key. A POST that sends ``call.idempotency_key`` anywhere is safe to
	repeat, as one with the integration's ``idempotency_header`` is: the engine retries it after
	a 5xx or a timeout, and a durable run retries it when it is in doubt.

	Attributes:
		handle: The tool's name inside its integration.
		description: What the tool does, written for a model.
		scopes: Scopes an agent needs to see and call this tool.
		method: The HTTP method.
		endpoint: The path after ``base_url`` (or a full URL).
		query_params: Query parameters.
		body: The request body (dict, list or string).
		headers: Extra headers for this tool.
		cookies: Cookies for this tool: cookie name (an RFC 6265 token) to a template. A cookie
			whose value is missing, null, empty, or an empty array or object is not sent. Each
			value is written in OpenAPI's ``form`` style for cookies (`cookie_pairs`): text
			percent-encoded but for letters, digits and ``-._~`` (so no value can end the cookie
			or add one), an array ``ids=1,2`` or, through ``param_style: "form", true``, one
			pair per item, an object one pair per property. They are joined into one
			``Cookie`` header after any ``Cookie`` the tool's ``headers`` give; a credential's
			cookie is added at request time, before them (a tool cookie of the same name is not
			sent), never replacing them.
		input_schema: JSON Schema of the input (a pydantic model class is converted).
		output_schema: JSON Schema of the output, a guide for the model.
		request_format: Overrides the integration's request format.
		response_format: Overrides the integration's response format.
		base_url: Overrides the integration's base URL (e.g. a separate upload host).
		files: Multipart file fields: field name to a template giving a file reference.
		encoding: How each field of an ``openapi-form`` or ``openapi-multipart`` body is
			written, by the name the request sends it under (OpenAPI's Encoding Object: a
			`FieldEncoding` each); a field not named takes the defaults.
		follow_redirects: Whether to follow redirects. A credentialed request never takes its
			credentials to another origin: by default such a redirect is refused; with
			``"without-credentials"`` it is followed with every credential removed (for download
			URLs that redirect to a storage host).
		response_headers: Response headers to include in the tool's output (e.g. ``Location``);
			a name ending in ``*`` (``x-amz-meta-*``) includes every header with that prefix.
		response_files: Paths into a JSON response to inline base64 payloads (Gemini
			``candidates[].content.parts[].inlineData``, Gmail attachment ``data``); each is saved to
			the file store and replaced by a file reference, so large media never reach the model.
		accept_statuses: Non-2xx statuses (300-499) that are a normal answer of this tool, not a
			failure: Google answers each non-final chunk of a resumable upload with
			``308 Resume Incomplete`` and a ``Range`` header. Such a reply is never followed as
			a redirect; it is decoded like a 2xx (an empty body gives ``{"ok": true, "status"}``
			plus the listed ``response_headers``).
		input_origins: The origins this tool may reach when its URL's host comes from the input
			(an upload URL the API returned, an S3 bucket host): ``https://files.slack.com``, or
			``https://*.s3.{{ config.region }}.amazonaws.com`` where ``*.`` is one or more DNS
			labels (templates over ``config``). A tool whose scheme, host, port or user info
			depends on ``input`` is refused at registration unless it lists them; such a request
			also goes through the SSRF guard. See `openmolt_core.integrations._origin`.
		max_response_bytes: The largest decoded response body read (default: 8 MiB, or 100 MiB
			when the response format is ``binary``); reading stops at the cap.
		in_doubt: What a durable run does with a call found started but not finished after a
			crash: ``retry``, ``ask`` or ``fail`` (default: ``retry`` for reads and keyed
			POSTs, ``ask`` for other writes; see `openmolt_core.capabilities.indoubt`).
	"""

	needs_integration: ClassVar[bool] = True
	"""It runs with its integration's base URL and credential: never given alone."""

	handle: str
	description: str
	scopes: list[str] = Field(default_factory=list)
	method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] = "GET"
	endpoint: str
	query_params: dict[str, Any] = Field(default_factory=dict)
	body: Any = None
	headers: dict[str, str] = Field(default_factory=dict)
	cookies: dict[str, str] = Field(default_factory=dict)
	input_schema: dict[str, Any] = Field(
		default_factory=lambda: {"type": "object", "properties": {}}
	)
	output_schema: dict[str, Any] | None = None
	request_format: RequestFormat | None = None
	response_format: ResponseFormat | None = None
	base_url: str | None = None
	files: dict[str, str] = Field(default_factory=dict)
	encoding: dict[str, FieldEncoding] = Field(default_factory=dict)
	follow_redirects: bool | Literal["without-credentials"] = True
	response_headers: list[str] = Field(default_factory=list)
	response_files: list[str] = Field(default_factory=list)
	accept_statuses: list[int] = Field(default_factory=list)
	input_origins: list[str] = Field(default_factory=list)
	max_response_bytes: int | None = Field(default=None, gt=0)
	in_doubt: Literal["retry", "ask", "fail"] | None = None
	_sends_call_key: bool = PrivateAttr(default=False)

	def _templates(self) -> list[Any]:
		"""Every template of the tool."""
		return [
			self.base_url,
			self.endpoint,
			self.query_params,
			self.body,
			self.headers,
			self.cookies,
			self.files,
		]

	def _template_text(self) -> str:
		"""The Liquid of every template of the tool, joined (text outside ``{{ }}`` left out)."""
		return liquid_text(self._templates())

	@model_validator(mode="after")
	def _call_fields(self) -> HttpTool:
		"""Refuses a ``call`` field the engine does not fill; notes whether the key is sent."""
		read = check_call_reads(self._templates(), CALL_FIELDS, f"tool {self.handle!r}")
		self._sends_call_key = "idempotency_key" in read
		return self

	@property
	def sends_call_key(self) -> bool:
		"""Whether a template sends the call's idempotency key (`IDEMPOTENCY_KEY`).

		Such a POST is safe to repeat: the engine retries it on a 5xx or a timeout, and a
		durable run retries it when in doubt, as it does a POST with the integration's
		``idempotency_header``.
		"""
		return self._sends_call_key

	def in_doubt_for(self, integration: Any) -> Literal["retry", "ask"]:
		"""What a durable run does with a call found in doubt when the tool declares nothing.

		``retry`` for an idempotent method (GET, HEAD, OPTIONS, PUT, DELETE), for a POST to
		which its integration adds an idempotency key (the engine puts it on POSTs only:
		`openmolt_core.integrations.http.execute_http_tool`), and for a request whose template
		sends the call's key (`sends_call_key`), whatever its method: a durable replay derives
		the same key. ``ask`` for the rest (a PATCH carries no key).

		Args:
			integration: The integration the tool is bound with (its ``api_setup``), or None.
		"""
		method = self.method.upper()
		if method in IDEMPOTENT_METHODS or self._sends_call_key:
			return "retry"
		setup = getattr(integration, "api_setup", None)
		keyed = method == "POST" and getattr(setup, "idempotency_header", None)
		return "retry" if keyed else "ask"

	def key_lifetime_for(self, integration: Any) -> float | None:
		"""How long the service keeps the key that makes this tool's calls safe to repeat.

		The integration's ``idempotency_key_lifetime`` (seconds) when a call is repeated in
		doubt only because it carries a key (a POST with the integration's idempotency header,
		or a template that sends the call's key); None for an idempotent method, an unkeyed
		call or a service that keeps keys for good. A call found in doubt longer ago than this
		is not repeated with its key (`openmolt_core.capabilities.indoubt`).

		Args:
			integration: The integration the tool is bound with (its ``api_setup``), or None.
		"""
		setup = getattr(integration, "api_setup", None)
		lifetime = getattr(setup, "idempotency_key_lifetime", None)
		method = self.method.upper()
		if lifetime is None or method in IDEMPOTENT_METHODS:
			return None
		keyed = self._sends_call_key or (
			method == "POST" and getattr(setup, "idempotency_header", None)
		)
		return float(lifetime) if keyed else None

	def checked_input_schema(self) -> dict[str, Any]:
		"""The schema a call's input is checked against: an input no one reads is refused.

		An input the schema does not declare and no template reads would be dropped without a
		word (a misspelt ``lables`` opens the issue without its labels), so it is refused, as a
		function tool refuses it. The schema is kept as it is when it says what to do with
		other properties itself, declares none, or a template reads an undeclared input or the
		whole input (``{{ input }}``).
		"""
		schema = self.input_schema
		props = schema.get("properties")
		if (
			schema.get("type") != "object"
			or not isinstance(props, dict)
			or "additionalProperties" in schema
			or "patternProperties" in schema
			or _branch_properties(schema) - set(props)
		):
			return schema
		# Only Liquid reads the input: text outside {{ }} and {% %} (a GraphQL $input) does not.
		text = self._template_text()
		if _WHOLE_INPUT.search(text):
			return schema
		read = set(_READ_INPUT.findall(text)) | set(_READ_INPUT_KEY.findall(text))
		if read - set(props):
			return schema
		return {**schema, "additionalProperties": False}

	@field_validator("accept_statuses")
	@classmethod
	def _statuses(cls, value: list[int]) -> list[int]:
		wrong = [code for code in value if not 300 <= code <= 499 or code == 429]
		if wrong:
			raise ValueError(
				f"accept_statuses takes 3xx and 4xx codes other than 429 (2xx always succeed); "
				f"got {wrong}"
			)
		return value

	@field_validator("cookies")
	@classmethod
	def _cookie_names(cls, value: dict[str, str]) -> dict[str, str]:
		for name in value:
			if not is_token(name):
				shown = repr(name[:60]) if name.isprintable() else "a name"
				raise ValueError(
					f"cookies: {shown} is not a cookie name (letters, digits and "
					"!#$%&'*+-.^_`|~ only, not empty); a ';', '=' or space would add cookies of "
					"its own"
				)
		return value

	@field_validator("method", mode="before")
	@classmethod
	def _upper(cls, value: Any) -> Any:
		return value.upper() if isinstance(value, str) else value

	@field_validator("input_schema", "output_schema", mode="before")
	@classmethod
	def _schema(cls, value: Any) -> Any:
		return schema_of(value) if value is not None else None


def schema_of(schema: type[BaseModel] | dict[str, Any] | None) -> dict[str, Any] | None:
	"""Return a JSON Schema for a pydantic model class or a JSON Schema dict.

	The integrations' tools take either (`openmolt_core.tools` re-exports it, its old home).

	Args:
		schema: A pydantic model class, a JSON Schema dict, or None.
	"""
	if schema is None:
		return None
	if isinstance(schema, dict):
		return schema
	if isinstance(schema, type) and issubclass(schema, BaseModel):
		return schema.model_json_schema()
	raise TypeError(f"expected a pydantic model class or a JSON Schema dict, got {schema!r}")
