"""OpenMolt and the Model Context Protocol: MCP servers as integrations, agents as MCP servers.

```python
from openmolt import OpenMolt
from openmolt_mcp import MCP

om = OpenMolt()
om.register_integration("time", MCP.stdio("uvx", ["mcp-server-time"]))
om.register_integration("docs", MCP.http("https://mcp.example.com/mcp", headers={...}))
agent = om.create_agent(name="Clock", model="openai:gpt-5-mini", integrations=["time"])
```

The server starts when an agent first runs, its tools appear as ``time.<tool>``, and
``await om.aclose()`` (or leaving ``async with om:``) stops it. In agent files, an
``mcpServers`` block does the same (see docs/guides/mcp.md). ``openmolt mcp AGENT_FILE`` serves
an agent to MCP clients (`openmolt_mcp.server`).

Built on the official MCP SDK (``mcp``), the reference implementation, rather than a protocol
of our own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openmolt_core.integrations import Integration
from openmolt_mcp._config import (
	HttpServer,
	ServerConfig,
	ServerOptions,
	StdioServer,
	parse_server,
)
from openmolt_mcp._source import MCPToolSource
from openmolt_mcp._tools import MCPTool

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = [
	"MCP",
	"HttpServer",
	"MCPTool",
	"MCPToolSource",
	"ServerConfig",
	"ServerOptions",
	"StdioServer",
	"integrations_from_config",
	"serve_stdio",
]


def _integration(id: str, options: ServerOptions, *, server: Any = None) -> Integration:
	source = MCPToolSource(id, options, server=server)
	return Integration(
		id=id,
		name=options.name or id,
		description=options.description or f"The tools of the MCP server {source.describe()}.",
		scopes=options.scope_names(),
		source=source,
	)


class MCP:
	"""Make integrations from MCP servers (each method returns an `Integration` to register)."""

	@staticmethod
	def stdio(
		command: str,
		args: Sequence[str] = (),
		*,
		env: Mapping[str, str] | None = None,
		cwd: str | None = None,
		id: str = "mcp",
		**options: Any,
	) -> Integration:
		"""A server started as a subprocess, spoken to over its stdin and stdout.

		Args:
			command: The executable (``uvx``, ``npx``, ``python``...).
			args: Its arguments.
			env: Extra environment variables (the process gets only a minimal environment
				besides these); their secret values are redacted everywhere.
			cwd: The working directory.
			id: The integration's id; ``register_integration`` gives it the id it registers (and
				the name, unless ``name`` is given).
			**options: `ServerOptions` fields: ``include_tools``, ``exclude_tools``, ``scopes``,
				``labels``, ``in_doubt``, ``trust_descriptions``, ``timeout``,
				``startup_timeout``, ``name``, ``description``; and ``max_message_bytes``.

		Raises:
			ConfigurationError: An option is wrong.
		"""
		config = {"command": command, "args": list(args), "env": dict(env or {}), "cwd": cwd}
		return _integration(id, parse_server(id, {**config, **options}, where="MCP.stdio"))

	@staticmethod
	def http(
		url: str,
		*,
		headers: Mapping[str, str] | None = None,
		id: str = "mcp",
		**options: Any,
	) -> Integration:
		"""A server reached over Streamable HTTP.

		Args:
			url: The MCP endpoint (``https://host/mcp``).
			headers: Headers for every request (an ``Authorization`` token...), redacted
				everywhere.
			id: The integration's id; ``register_integration`` gives it the id it registers (and
				the name, unless ``name`` is given).
			**options: `ServerOptions` fields (see `stdio`).

		Raises:
			ConfigurationError: An option is wrong.
		"""
		config = {"url": url, "headers": dict(headers or {})}
		return _integration(id, parse_server(id, {**config, **options}, where="MCP.http"))

	@staticmethod
	def server(server: Any, *, id: str = "mcp", **options: Any) -> Integration:
		"""An MCP server object of the official SDK (``MCPServer`` or ``Server``), in process.

		Args:
			server: The server object.
			id: The integration's id; ``register_integration`` gives it the id it registers (and
				the name, unless ``name`` is given).
			**options: `ServerOptions` fields (see `stdio`).
		"""
		return _integration(id, ServerOptions.model_validate(options), server=server)

	@staticmethod
	def from_config(id: str, entry: Mapping[str, Any]) -> Integration:
		"""One entry of an ``mcpServers`` block (``{"command", "args", "env"}`` or ``{"url"}``).

		Args:
			id: The server's key, the integration id.
			entry: The entry, in the shape MCP clients use (plus OpenMolt's options).

		Raises:
			ConfigurationError: The entry is wrong; the message names the field.
		"""
		return _integration(id, parse_server(id, entry))


def integrations_from_config(servers: Mapping[str, Mapping[str, Any]]) -> dict[str, Integration]:
	"""The integrations of an ``mcpServers`` block, by id (the agent files' loader calls this).

	Raises:
		ConfigurationError: An entry is wrong; the message names the field.
	"""
	return {id: MCP.from_config(id, entry) for id, entry in servers.items()}


async def serve_stdio(agent: Agent) -> None:
	"""Serve an agent as an MCP server over stdin and stdout (``openmolt mcp AGENT_FILE``)."""
	from openmolt_mcp.server import serve_stdio as serve

	await serve(agent)
