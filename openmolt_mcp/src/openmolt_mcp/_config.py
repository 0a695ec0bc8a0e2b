"""How an MCP server is reached: the ``mcpServers`` entries, as pydantic models.

The shape is the one MCP clients share (Claude Desktop, VS Code, Claude Code, Gemini CLI): a
server has ``command``, ``args``, ``env`` and ``cwd`` (stdio), or ``url`` and ``headers``
(Streamable HTTP), with an optional ``type``. OpenMolt adds ``includeTools`` / ``excludeTools``
(the allow and deny lists), ``scopes``, ``labels`` (what each tool does with data, see
`openmolt_core.taint`), ``timeout`` and ``startupTimeout`` (seconds, like every OpenMolt timeout),
``trustDescriptions`` (the listing is the user's word, not untrusted content), and for a stdio
server ``maxMessageBytes`` (the longest line of its stdout read). ``${VAR}`` and
``${VAR:-default}`` in ``args``, ``env``, ``url`` and ``headers`` read the environment when the
server is defined, so secrets stay out of agent files.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from openmolt_core._support.masking import header_secrets, named_secrets, secret_name
from openmolt_core._support.words import json_kind
from openmolt_core.errors import ConfigurationError
from openmolt_core.secrets import MASK, Redactor, mask, url_secrets

__all__ = [
	"MAX_MESSAGE_BYTES",
	"UNSCOPED",
	"HttpServer",
	"Masker",
	"ServerConfig",
	"ServerOptions",
	"StdioServer",
	"expand",
	"parse_server",
	"secrets_of",
]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

UNSCOPED = "unscoped"
"""The scope of a tool no pattern of a server's ``scopes`` maps: granted only by its name, or by
every scope (an agent that names no scopes), never by granting the others."""

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The longest message read from a stdio server by default (``maxMessageBytes``): an image or a
document of a few MB in base64 fits; a server that writes without end is stopped there."""


class ServerOptions(BaseModel):
	"""What every MCP server entry may set besides its transport: tool filters, scopes, timeouts."""

	model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

	include_tools: list[str] | None = Field(
		default=None,
		alias="includeTools",
		description="Only these tools (names or glob patterns); default: all.",
	)
	exclude_tools: list[str] = Field(
		default_factory=list,
		alias="excludeTools",
		description="Never these tools (names or glob patterns); wins over includeTools.",
	)
	scopes: dict[str, list[str]] | None = Field(
		default=None,
		description="Scope name to tool name patterns (a tool no pattern matches needs "
		"'unscoped'); default: 'read' for the tools a trusted server (trustDescriptions) marks "
		"read-only, 'write' for the others.",
	)
	timeout: float = Field(default=60.0, gt=0, description="Seconds a tool call may take.")
	startup_timeout: float = Field(
		default=30.0,
		gt=0,
		alias="startupTimeout",
		description="Seconds to start the server and list its tools.",
	)
	labels: dict[str, list[Literal["private", "untrusted", "outbound"]]] | None = Field(
		default=None,
		description="Tool name pattern to its taint labels (private, untrusted, outbound); "
		"[] declares a tool safe. A matching entry wins over the server's annotations; a tool "
		"gets the labels of every entry it matches.",
	)
	in_doubt: dict[str, Literal["retry", "ask", "fail"]] | None = Field(
		default=None,
		alias="inDoubt",
		description="Tool name pattern to what a durable run does with a call found started "
		"but unfinished after a crash (retry, ask, fail); the strictest matching entry wins. "
		"Default: retry for tools the server marks read-only or idempotent and that declare no "
		"outbound effect, else ask.",
	)
	trust_descriptions: bool = Field(
		default=False,
		alias="trustDescriptions",
		description="Trust the names, descriptions, input schemas and annotations the server "
		"lists, as you trust your own configuration. By default they are untrusted content: a "
		"run of an agent that may call one of its tools is tainted from its first model call, "
		"and no annotation (readOnlyHint, openWorldHint) spares a tool an approval rule, a "
		"scope grant or a taint gate.",
	)
	name: str | None = Field(default=None, description="A display name.")
	description: str = ""
	_from_env: frozenset[str] = PrivateAttr(default_factory=frozenset)
	"""The secret values ``${VAR}`` references brought in (set by `parse_server`)."""

	def __repr_args__(self) -> Any:
		# A pydantic repr would print args, env, url and headers as they are.
		secrets = secrets_of(self) if isinstance(self, (StdioServer, HttpServer)) else frozenset()
		for name, value in super().__repr_args__():
			if name in ("env", "headers") and isinstance(value, dict):
				yield name, {k: MASK for k in value}
			elif secrets and isinstance(value, str):
				yield name, mask(value, secrets)
			elif secrets and isinstance(value, list):
				yield name, [mask(v, secrets) if isinstance(v, str) else v for v in value]
			else:
				yield name, value

	def admits(self, tool: str) -> bool:
		"""Whether the allow and deny lists let a tool of this name through."""
		if any(fnmatch.fnmatchcase(tool, p) for p in self.exclude_tools):
			return False
		if self.include_tools is None:
			return True
		return any(fnmatch.fnmatchcase(tool, p) for p in self.include_tools)

	def labels_of(self, tool: str) -> frozenset[str] | None:
		"""A tool's labels from the ``labels`` entries it matches, or None when none matches."""
		if not self.labels:
			return None
		found = [
			labels for pattern, labels in self.labels.items() if fnmatch.fnmatchcase(tool, pattern)
		]
		if not found:
			return None
		return frozenset(label for labels in found for label in labels)

	def in_doubt_of(self, tool: str) -> Literal["retry", "ask", "fail"] | None:
		"""A tool's in-doubt policy from the ``inDoubt`` entries it matches (the strictest), or None."""
		if not self.in_doubt:
			return None
		found = {
			policy
			for pattern, policy in self.in_doubt.items()
			if fnmatch.fnmatchcase(tool, pattern)
		}
		for policy in ("fail", "ask", "retry"):
			if policy in found:
				return policy
		return None

	def scopes_of(self, tool: str, read_only: bool) -> list[str]:
		"""The scopes a tool needs: the user's mapping, else read or write by its annotation.

		Args:
			tool: The server's name for the tool.
			read_only: Whether the tool is taken to only read: a trusted server marks it
				read-only (an untrusted server's ``readOnlyHint`` is a claim, not proof).
		"""
		if self.scopes is None:
			return ["read" if read_only else "write"]
		mapped = [
			s for s, pats in self.scopes.items() if any(fnmatch.fnmatchcase(tool, p) for p in pats)
		]
		# A tool no pattern maps (one the server adds later too) is unknown: it needs a scope of
		# its own, not none (which an agent granted any scope would have had).
		return mapped or [UNSCOPED]

	def scope_names(self) -> dict[str, str]:
		"""The integration's scopes with their descriptions."""
		if self.scopes is None:
			return {
				"read": "Tools the server marks read-only (readOnlyHint), when you trust it "
				"(trustDescriptions); an untrusted server's tools are all 'write'.",
				"write": "Every other tool of the server (it may change things).",
			}
		named = {s: f"Tools matching {', '.join(p)}." for s, p in self.scopes.items()}
		named.setdefault(
			UNSCOPED,
			"Every tool no scope's patterns match (granted by its name, or with every scope).",
		)
		return named


class StdioServer(ServerOptions):
	"""A server the client starts as a subprocess and talks to over its stdin and stdout.

	The process gets a minimal environment (``HOME``, ``PATH``, ``USER``... as the MCP SDK
	chooses), plus ``env``: your API keys are not passed along unless you list them.
	"""

	type: Literal["stdio"] = "stdio"
	command: str = Field(min_length=1, description="The executable, e.g. 'uvx' or 'npx'.")
	args: list[str] = Field(default_factory=list)
	env: dict[str, str] = Field(default_factory=dict)
	cwd: str | None = None
	max_message_bytes: int = Field(
		default=MAX_MESSAGE_BYTES,
		ge=1024,
		alias="maxMessageBytes",
		description="The longest message (a line of its stdout) read from the server, in bytes; "
		"a longer one stops the server and fails the call that waited for it. Default: 16 MiB.",
	)

	def describe(self) -> str:
		"""The command line, for messages (arguments are shown; env values never are)."""
		return " ".join([self.command, *self.args])


class HttpServer(ServerOptions):
	"""A server reached over Streamable HTTP.

	Its URL and every redirect go through the SSRF guard ``httpRequest`` uses (`openmolt_mcp._guard`):
	a server on a loopback, private, link-local or cloud metadata address is refused unless
	``allowInternalHosts`` lists it (``["127.0.0.1"]``, ``["mcp.corp.example"]``,
	``["10.20.0.0/16"]``).
	"""

	type: Literal["http", "streamable-http", "streamableHttp"] = "http"
	url: str = Field(pattern=r"^https?://", description="The MCP endpoint, e.g. https://host/mcp.")
	headers: dict[str, str] = Field(default_factory=dict)
	allow_internal_hosts: list[str] = Field(
		default_factory=list,
		alias="allowInternalHosts",
		description="Internal hosts or networks this server may be on (none by default).",
	)

	@field_validator("allow_internal_hosts")
	@classmethod
	def _internal(cls, value: list[str]) -> list[str]:
		from openmolt_core.integrations._ssrf import InternalHosts

		try:
			InternalHosts(value)
		except ConfigurationError as exc:
			raise ValueError(str(exc)) from None
		return value

	def describe(self) -> str:
		"""The URL, for messages (header values never are shown)."""
		return self.url


ServerConfig = StdioServer | HttpServer
"""One MCP server's configuration."""


def expand(value: str, where: str, found: dict[str, str] | None = None) -> str:
	"""Replace ``${VAR}`` and ``${VAR:-default}`` with the environment's values.

	Args:
		value: The text.
		where: Where it sits, for the error.
		found: Receives each variable read and its value (to tell which are secrets).

	Raises:
		ConfigurationError: A variable without a default is not set; the message names it.
	"""

	def one(match: re.Match[str]) -> str:
		name, default = match.group(1), match.group(2)
		found = os.environ.get(name)
		if found is None:
			if default is None:
				raise ConfigurationError(
					f"{where}: the environment variable {name} is not set; set it, or write "
					f"${{{name}:-default}}"
				)
			return default
		if seen is not None:
			seen[name] = found
		return found

	seen = found
	return _VAR.sub(one, value)


def _text(value: Any, where: str) -> str:
	# A number is written as JSON writes it ("PORT": 8080); anything else is no argument.
	if isinstance(value, str):
		return value
	if isinstance(value, int | float) and not isinstance(value, bool):
		return json.dumps(value)
	raise ConfigurationError(f"{where} must be a string, not {json_kind(value)}")


def _strings(value: Any, where: str) -> list[str]:
	"""A list of strings (a command's arguments); none: empty."""
	if value is None:
		return []
	if not isinstance(value, list):
		raise ConfigurationError(
			f"{where} must be a list of strings (the command's arguments, one item each), "
			f"not {json_kind(value)}"
		)
	return [_text(item, f"{where}[{i}]") for i, item in enumerate(value)]


def _named(value: Any, where: str) -> dict[str, str]:
	"""An object of named strings (environment variables, headers); none: empty."""
	if value is None:
		return {}
	if not isinstance(value, Mapping):
		raise ConfigurationError(
			f"{where} must be an object of names and string values, not {json_kind(value)}"
		)
	return {str(k): _text(v, f"{where}.{k}") for k, v in value.items()}


def parse_server(id: str, value: Mapping[str, Any], *, where: str = "mcpServers") -> ServerConfig:
	"""Read one ``mcpServers`` entry, expanding ``${VAR}`` references.

	Args:
		id: The server's key (the integration id).
		value: The entry.
		where: Where the entry sits, for messages.

	Raises:
		ConfigurationError: The entry is wrong; the message names the field and the fix.
	"""
	place = f"{where}.{id}"
	if not isinstance(value, Mapping):
		raise ConfigurationError(f"{place} must be an object with 'command' or 'url'")
	data = dict(value)
	kind = data.get("type")
	if kind == "sse":
		raise ConfigurationError(
			f"{place}.type 'sse' is the deprecated HTTP+SSE transport; use the server's Streamable "
			"HTTP endpoint with type 'http'"
		)
	if "command" in data and "url" in data:
		raise ConfigurationError(f"{place}: give 'command' (stdio) or 'url' (HTTP), not both")
	model: type[StdioServer] | type[HttpServer]
	read: dict[str, str] = {}
	in_url: dict[str, str] = {}
	if "command" in data or kind == "stdio":
		model = StdioServer
		data["args"] = [
			expand(a, f"{place}.args", read) for a in _strings(data.get("args"), f"{place}.args")
		]
		data["env"] = {
			k: expand(v, f"{place}.env.{k}", read)
			for k, v in _named(data.get("env"), f"{place}.env").items()
		}
	elif "url" in data or kind in ("http", "streamable-http", "streamableHttp"):
		model = HttpServer
		if isinstance(data.get("url"), str):
			data["url"] = expand(data["url"], f"{place}.url", in_url)
		data["headers"] = {
			k: expand(v, f"{place}.headers.{k}", read)
			for k, v in _named(data.get("headers"), f"{place}.headers").items()
		}
	else:
		raise ConfigurationError(
			f"{place} needs 'command' (a server started over stdio) or 'url' (Streamable HTTP)"
		)
	try:
		config = model.model_validate(data)
	except ValidationError as exc:
		problems = "; ".join(
			f"{place}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
		)
		raise ConfigurationError(problems) from None
	secret = named_secrets(read)  # the core's rule for named values, URLs' passwords included
	for part in in_url.values():  # a part of the URL: secret, unless it is a URL (then its parts)
		if "://" in part:
			secret |= url_secrets(part)
		elif part and not part.isdigit():
			secret.add(part)
	config._from_env = frozenset(secret)
	return config


def _arg_secrets(args: list[str]) -> set[str]:
	"""The secrets in a command line: values of flags named like secrets, secret URLs' parts."""
	out: set[str] = set()
	hinted_flag = False
	for arg in args:
		if hinted_flag and not arg.startswith("-"):
			out.add(arg)
		name, sep, value = arg.partition("=")
		hinted_flag = arg.startswith("-") and not sep and secret_name(arg)
		if sep and value and secret_name(name):
			out.add(value)
		# A URL alone, or a flag's value (``--database-url=postgresql://user:PASSWORD@db``,
		# ``--db=//user:PASSWORD@db``): the core's one rule finds it, whatever the flag's name.
		if "//" in arg:
			out |= url_secrets(arg)
	return out


def secrets_of(config: ServerConfig) -> frozenset[str]:
	"""The values of a server's configuration that must never be shown.

	An env value is secret when its name hints at one (key, token, secret, password...) or, if
	it has 6+ characters, unless its name says it is a path, a directory, a URL, a host, a port,
	a region, a level or a mode, and a URL's password and secret query values are whatever its
	name (the core's rule: `openmolt_core.secrets.named_secrets`); the same rule holds for every
	``${VAR}`` read into ``args``, ``env``, ``url`` or ``headers``. Every header value is secret except a few standard ones, and
	so are its parts (the core's `header_secrets`: ``Bearer <token>`` gives the token, a
	``Cookie`` its values, ``Basic`` its password). In ``args``, the value of
	a flag named like a secret (``--api-key X``, ``--token=X``); in a URL (the server's, or one in
	``args``, alone or as any flag's value: ``--database-url=postgresql://...``), the userinfo
	and the query values named like secrets.
	"""
	out: set[str] = set(config._from_env)
	if isinstance(config, StdioServer):
		out |= named_secrets(config.env)
		out |= _arg_secrets(config.args)
	else:
		for key, value in config.headers.items():
			out |= header_secrets(key, value)  # the value, its token, a cookie's values...
		out |= url_secrets(config.url)
	return frozenset(v for v in out if v.strip())


class Masker(Redactor):
	"""Masks secret values, in every spelling, in text and in JSON-like values (the core's redactor).

	Args:
		secrets: The values to mask.
	"""

	def __init__(self, secrets: frozenset[str]) -> None:
		super().__init__(frozenset(secrets))
