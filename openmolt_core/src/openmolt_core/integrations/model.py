"""Integrations as plain data: the spec's ``registerIntegration`` shape, as pydantic models.

Every built-in integration and every user integration is an `Integration`: an API setup shared by
its tools, the credential types it accepts, the scopes it defines, and its tools. A tool is either
an `HttpTool` (an HTTP request described as data and rendered with Liquid) or a Python function
(the spec's ``execute`` form, see `openmolt_core.functiontools.FunctionTool`).

Dicts in the spec's camelCase (``apiSetup``, ``baseUrl``, ``inputSchema``) are accepted everywhere,
as are snake_case names: every model derives from `openmolt_core.options.Options`.

What one vendor needs and no other (a Liquid filter, a body format, a check of 200 replies, an
auth scheme) is registered on its `Integration` (``filters``, ``encoders``, ``response_checks``,
``throttle_checks``, ``auths``; see `openmolt_core.integrations.extensions`), never added to the
engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import (
	Field,
	SkipValidation,
	ValidationError,
	field_validator,
	model_validator,
)

from openmolt_core._support.words import problems, shown
from openmolt_core.errors import ToolError
from openmolt_core.functiontools import FunctionTool
from openmolt_core.integrations._credential import (
	BUILTIN_CREDENTIAL_TYPES,
	AuthCredential,
	BasicCredential,
	BearerCredential,
	Credential,
	CredentialType,
	CustomCredential,
	OAuth2Credential,
)
from openmolt_core.integrations._httptool import (
	ApiSetup,
	FieldEncoding,
	HttpTool,
	RequestFormat,
	ResponseFormat,
	_Spec,
	schema_of,
)
from openmolt_core.integrations._origin import is_absolute, origin_part, origin_problem, uses_input
from openmolt_core.integrations._url import fragment_written
from openmolt_core.integrations.extensions import BUILTIN_FORMATS
from openmolt_core.integrations.templating import holds_markup, parse_template
from openmolt_core.tools import Tool

__all__ = [
	"ApiSetup",
	"AuthCredential",
	"BasicCredential",
	"BearerCredential",
	"Credential",
	"CredentialType",
	"CustomCredential",
	"FieldEncoding",
	"HttpTool",
	"Integration",
	"OAuth2Credential",
	"RequestFormat",
	"ResponseFormat",
]


_ENCODED_FORMATS = ("openapi-form", "openapi-multipart")
"""The built-in request formats that read a tool's ``encoding``."""

ToolSpec = HttpTool | FunctionTool
"""A tool as declared in an integration's data: an HTTP request, or Python code."""


def _template_strings(value: Any, where: str) -> list[tuple[str, str]]:
	"""Every Liquid string in a definition value, with where it sits (``body.parent.id``)."""
	if isinstance(value, str):
		return [(where, value)] if holds_markup(value) else []
	found: list[tuple[str, str]] = []
	if isinstance(value, Mapping):
		for key, item in value.items():
			found += _template_strings(item, f"{where}.{key}")
	elif isinstance(value, (list, tuple)):
		for index, item in enumerate(value):
			found += _template_strings(item, f"{where}[{index}]")
	return found


def _parse_all(
	strings: list[tuple[str, str]],
	owner: str,
	filters: Mapping[str, Any] | None = None,
	*,
	path_field: str = "",
) -> None:
	for where, source in strings:
		try:
			parse_template(source, path=where == path_field, filters=filters)
		except ToolError as exc:
			word = re.search(r"found (\w+)", str(exc))
			lookup = word and re.search(rf"\b(input|config)\.{word.group(1)}\b", source)
			if word and lookup:
				name = f"{lookup.group(1)}.{word.group(1)}"
				bracketed = f'{lookup.group(1)}["{word.group(1)}"]'
				raise ValueError(
					f"{owner}, field {where}: {word.group(1)!r} is a Liquid keyword, so "
					f"{name} does not parse; write {bracketed} instead ({exc})"
				) from None
			raise ValueError(f"{owner}, field {where}: {exc}") from None


def _check_fragment(template: str | None, owner: str, where: str) -> None:
	"""Refuse a URL template whose text writes a fragment (`_url.fragment_written`)."""
	if template and fragment_written(template):
		shown = re.split(r"[?#]", template, maxsplit=1)[0][:100]  # a key may sit in the query
		raise ValueError(
			f"{owner}, field {where}: {shown!r} has a fragment ('#...'), which is never "
			"sent to the server (RFC 3986, 3.5) and would swallow an endpoint joined after it; "
			"remove it"
		)


def _check_templates(tool: HttpTool, filters: Mapping[str, Any]) -> None:
	"""Parse every template of an HTTP tool, naming the tool and field of a broken one."""
	_check_fragment(tool.endpoint, f"tool {tool.handle!r}", "endpoint")
	_check_fragment(tool.base_url, f"tool {tool.handle!r}", "base_url")
	fields: dict[str, Any] = {
		"endpoint": tool.endpoint,
		"base_url": tool.base_url,
		"query_params": tool.query_params,
		"headers": tool.headers,
		"cookies": tool.cookies,
		"body": tool.body,
		"files": tool.files,
	}
	strings = [s for name, value in fields.items() for s in _template_strings(value, name)]
	strings += _template_strings(tool.input_origins, "input_origins")
	_parse_all(strings, f"tool {tool.handle!r}", filters, path_field="endpoint")
	_check_patterns(tool.input_origins, f"tool {tool.handle!r}, field input_origins")


def _check_patterns(patterns: list[str], where: str) -> None:
	for pattern in patterns:
		if uses_input(pattern):
			raise ValueError(f"{where}: {pattern!r} uses input; origins may use config only")
		if "://" not in pattern:
			raise ValueError(
				f"{where}: {pattern!r} is not an origin; write https://host (or https://*.domain)"
			)


def _check_origin(tool: HttpTool, setup: ApiSetup, integration: str) -> None:
	"""Refuse a tool whose URL origin depends on ``input`` unless it lists ``input_origins``."""
	if tool.endpoint and is_absolute(tool.endpoint):
		where, source = "endpoint", tool.endpoint
	elif tool.base_url:
		where, source = "base_url", tool.base_url
	else:
		where, source = "api_setup.base_url", setup.base_url
	problem = origin_problem(origin_part(source))
	if problem and not (tool.input_origins or setup.input_origins):
		raise ValueError(
			f"integration {integration!r}, tool {tool.handle!r}, field {where}: the scheme, host, "
			f"port or user info of the URL may not come from the model's input, and {problem} "
			f"({origin_part(source)[:100]!r}); build it from config values, or list the origins "
			"the input may choose in input_origins"
		)


def _check_setup_templates(integration: Integration) -> None:
	setup = integration.api_setup
	_check_fragment(setup.base_url, f"integration {integration.name!r}", "api_setup.base_url")
	strings = [
		*_template_strings(setup.base_url, "api_setup.base_url"),
		*_template_strings(setup.headers, "api_setup.headers"),
		*_template_strings(setup.query_params, "api_setup.query_params"),
		*_template_strings(setup.input_origins, "api_setup.input_origins"),
	]
	_check_patterns(
		setup.input_origins, f"integration {integration.name!r}, api_setup.input_origins"
	)
	for tool in integration.tools:
		if isinstance(tool, HttpTool):
			_check_origin(tool, setup, integration.name)
	for index, cred in enumerate(integration.credential_setup):
		strings += _template_strings(
			cred.model_dump(exclude={"type", "scopes"}), f"credential_setup[{index}]"
		)
	_parse_all(strings, f"integration {integration.name!r}", integration.filters)


def _check_extensions(integration: Integration) -> None:
	"""Refuse a request format or credential type that is neither built in nor registered."""
	known = {*BUILTIN_FORMATS, *integration.encoders}
	setup = integration.api_setup
	for tool in integration.tools:
		fmt = (tool.request_format if isinstance(tool, HttpTool) else None) or setup.request_format
		if fmt not in known:
			raise ValueError(
				f"tool {getattr(tool, 'handle', '?')!r}: request format {fmt!r} is neither built "
				f"in ({', '.join(BUILTIN_FORMATS)}) nor in the integration's encoders"
			)
		if (
			isinstance(tool, HttpTool)
			and tool.encoding
			and fmt in BUILTIN_FORMATS
			and fmt not in _ENCODED_FORMATS
			and fmt not in integration.encoders
		):
			raise ValueError(
				f"tool {tool.handle!r}: encoding applies to the {' and '.join(_ENCODED_FORMATS)} "
				f"request formats only, and this tool's is {fmt!r}; set request_format to one of "
				"them, or leave encoding out"
			)
	if setup.request_format not in known:
		raise ValueError(
			f"api_setup.request_format {setup.request_format!r} is neither built in nor in the "
			"integration's encoders"
		)
	for cred in integration.credential_setup:
		if cred.type not in BUILTIN_CREDENTIAL_TYPES and cred.type not in integration.auths:
			raise ValueError(
				f"credential type {cred.type!r} is neither built in "
				f"({', '.join(BUILTIN_CREDENTIAL_TYPES)}) nor in the integration's auths"
			)


_EXECUTE_KEYS = (
	"description",
	"execute",
	"handle",
	"inputSchema",
	"input_schema",
	"outputSchema",
	"output_schema",
	"scopes",
)


def _schema_field(value: dict[str, Any], where: str, names: tuple[str, str], tool: str) -> Any:
	given = [n for n in names if n in value]
	if len(given) > 1:
		raise ValueError(f"{where}{tool}: give {names[0]} or {names[1]}, not both")
	schema = value.get(given[0]) if given else None
	try:
		return schema_of(schema)
	except TypeError:
		raise ValueError(
			f"{where}.{given[0]}{tool} must be a JSON Schema dict or a pydantic model class, got "
			f"{type(schema).__name__}"
		) from None


def _function_tool(value: dict[str, Any], where: str) -> FunctionTool:
	unknown = sorted(k for k in value if k not in _EXECUTE_KEYS)
	if unknown:
		raise ValueError(
			f"{where}: unknown key(s) {unknown} in an execute-style tool; allowed: "
			f"{', '.join(_EXECUTE_KEYS)}"
		)
	handle = value.get("handle")
	if not isinstance(handle, str) or not handle:
		raise ValueError(
			f"{where}.handle is missing; give the tool a name, e.g. 'handle': 'search'"
		)
	tool = f" (tool {handle!r})"
	if not callable(value["execute"]):
		raise ValueError(f"{where}.execute{tool} must be a function (input, context) -> result")
	description = value.get("description", "")
	if not isinstance(description, str):
		raise ValueError(f"{where}.description{tool} must be a string")
	scopes = value.get("scopes", ())
	if not isinstance(scopes, (list, tuple)) or not all(isinstance(x, str) for x in scopes):
		raise ValueError(f"{where}.scopes{tool} must be a list of scope names")
	return FunctionTool(
		handle=handle,
		description=description,
		function=value["execute"],
		input_schema=_schema_field(value, where, ("inputSchema", "input_schema"), tool)
		or {"type": "object", "properties": {}},
		output_schema=_schema_field(value, where, ("outputSchema", "output_schema"), tool),
		scopes=tuple(scopes),
	)


def _tool_from(value: Any, index: int) -> HttpTool | Tool:
	where = f"tools[{index}]"
	if isinstance(value, (HttpTool, FunctionTool, Tool)):
		return value
	if not isinstance(value, dict):
		raise ValueError(
			f"{where} must be a dict, an HttpTool or a FunctionTool, got {shown(value)}"
		)
	if "execute" in value:
		return _function_tool(value, where)
	try:
		return HttpTool.model_validate(value)
	except ValidationError as exc:
		handle = value.get("handle")
		name = f" (tool {handle!r})" if isinstance(handle, str) and handle else ""
		raise ValueError(f"{where}{name}: {problems(exc)}") from None


class Integration(_Spec):
	"""A service an agent can use: API setup, credential types, scopes and tools.

	Attributes:
		id: The id agents use (``notion``); set by ``register_integration`` when omitted.
		name: A display name (``Notion``).
		description: One line on what the integration does.
		api_version: The API version the tools target, for docs and errors.
		api_setup: What all HTTP tools share (base URL, headers, formats).
		credential_setup: The credential types the integration accepts, first is the default.
		scopes: Scope name to description; tools list the scopes they need.
		tools: The tools.
		docs: Markdown with how to get a token, for the generated docs.
		labels: What its tools do with data (`openmolt_core.taint`): tool name, or a shell-style
			pattern of names (``send*``), to its labels (``private``, ``untrusted``,
			``outbound``). A tool gets the labels of every key it matches.
		source: Where the tools come from when they are only known at run time (an MCP server):
			a `openmolt_core.capabilities.sources.ToolSource`, listed at the start of each run; not serialized.
		filters: The integration's own Liquid filters, a
			`openmolt_core.integrations.extensions.LiquidFilter` by name (Gmail's ``rfc2822``); see
			`openmolt_core.integrations.extensions`. Not serialized, like the three below.
		encoders: The integration's own request formats, a
			`openmolt_core.integrations.extensions.BodyEncoder` by name (Google's
			``multipart-related``); one under a built-in name replaces it for this integration.
		response_checks: `openmolt_core.integrations.extensions.ResponseCheck` functions run on
			every decoded 2xx JSON reply, for services that report
			failures inside a 200 (Slack's ``"ok": false``, GraphQL ``errors``).
		throttle_checks: `openmolt_core.integrations.extensions.ThrottleCheck` functions run on
			every 2xx JSON reply, for services that turn a request away for a rate limit
			inside a 200 (Shopify's ``THROTTLED``): such a reply is retried like a 429.
		auths: The integration's own credential types, an
			`openmolt_core.integrations.extensions.AuthFactory` by type (AWS Signature
			V4 for S3); one under a built-in type (``oauth2``) replaces it for this integration.
	"""

	id: str | None = None
	name: str
	description: str = ""
	api_version: str | None = None
	api_setup: ApiSetup = Field(default_factory=ApiSetup)
	credential_setup: list[Credential] = Field(default_factory=list)
	scopes: dict[str, str] = Field(default_factory=dict)
	tools: Annotated[list[HttpTool | Tool], SkipValidation] = Field(default_factory=list)
	docs: str = ""
	labels: dict[str, list[Literal["private", "untrusted", "outbound"]]] = Field(
		default_factory=dict
	)
	source: Any = Field(default=None, exclude=True, repr=False)
	# Plain callables for pydantic (it cannot check a Protocol); the docs name the protocols.
	filters: dict[str, Callable[..., Any]] = Field(default_factory=dict, exclude=True, repr=False)
	encoders: dict[str, Callable[..., Any]] = Field(default_factory=dict, exclude=True, repr=False)
	response_checks: list[Callable[[Any], str | None]] = Field(
		default_factory=list, exclude=True, repr=False
	)
	throttle_checks: list[Callable[[Any], float | None]] = Field(
		default_factory=list, exclude=True, repr=False
	)
	auths: dict[str, Callable[..., Any]] = Field(default_factory=dict, exclude=True, repr=False)

	@classmethod
	def from_openapi(cls, document: Any, **options: Any) -> Self:
		"""An integration with one `HttpTool` per operation of an OpenAPI 3.x document.

		See `openmolt_core.integrations.openapi.from_openapi` for the options (``id``,
		``operations``, ``tags``, ``base_url``...).

		Args:
			document: The document: a dict, or the path of a JSON or YAML file.
			**options: Passed to `openmolt_core.integrations.openapi.from_openapi`.

		Raises:
			ConfigurationError: The document cannot be read or an option is wrong.
		"""
		from openmolt_core.integrations._openapi_build import build

		return build(cls, document, **options)

	@field_validator("tools", mode="before")
	@classmethod
	def _tools(cls, value: Any) -> Any:
		if not isinstance(value, (list, tuple)):
			raise ValueError(f"tools must be a list of tools, got {type(value).__name__}")
		return [_tool_from(v, i) for i, v in enumerate(value)]

	@model_validator(mode="after")
	def _check(self) -> Integration:
		_check_extensions(self)
		seen: set[str] = set()
		for tool in self.tools:
			if tool.handle in seen:
				raise ValueError(f"tool handle {tool.handle!r} is defined twice")
			seen.add(tool.handle)
			if isinstance(tool, HttpTool):
				_check_templates(tool, self.filters)
			unknown = [s for s in tool.scopes if s not in self.scopes]
			if unknown and self.scopes:
				raise ValueError(
					f"tool {tool.handle!r} needs scopes {unknown} that the integration does not "
					f"define; define them in scopes={{...}} (known: {sorted(self.scopes)})"
				)
		_check_setup_templates(self)
		if self.tools and self.source is None:
			import fnmatch

			names = {t.handle for t in self.tools}
			for key in self.labels:
				# A plain name is looked up: a table for every tool (an imported API) stays linear.
				if key not in names and not any(fnmatch.fnmatchcase(n, key) for n in names):
					raise ValueError(
						f"labels: {key!r} names no tool of this integration; use a tool name "
						"or a pattern such as 'send*'"
					)
		return self

	def credential(self, type: str | None) -> Credential | None:
		"""Return the credential setup of a type (the first one when ``type`` is None).

		Args:
			type: The credential type the agent chose, or None for the default.
		"""
		if not self.credential_setup:
			return None
		if type is None:
			return self.credential_setup[0]
		for cred in self.credential_setup:
			if cred.type == type:
				return cred
		return None
