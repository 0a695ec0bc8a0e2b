"""``openmolt mcp AGENT_FILE``: serve an agent as an MCP server over stdio, registered with the command.

```
openmolt mcp AGENT_FILE [--env-file PATH] [--verbose]
```

The ``openmolt.commands`` entry point ``mcp`` names this module; the agent file is loaded with the
core's public `openmolt_core.agentfile` API, as ``openmolt`` itself loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from openmolt_core import hookimpl
from openmolt_core.agentfile import CommandParser

if TYPE_CHECKING:
	from openmolt_core.plugins import CommandRegistrar

__all__ = ["main", "register_commands"]


def main(args: Sequence[str]) -> int:
	"""Run ``openmolt mcp`` with the arguments after its name; returns the exit code."""
	import anyio

	from openmolt_core.agentfile import check_ready, load
	from openmolt_mcp import serve_stdio

	parser = CommandParser(
		prog="openmolt mcp",
		description="Serve an agent as an MCP server over stdio (one tool: the agent).",
	)
	parser.add_argument("file", help="the agent file: agent.json or agent.py")
	parser.add_argument("--env-file", help="the .env file to read (default: ./.env if present)")
	parser.add_argument("--verbose", "-v", action="store_true", help="log steps to stderr")
	ns = parser.parse_args(args)
	loaded = load(ns.file, env_file=ns.env_file, verbose=ns.verbose)
	check_ready(loaded, strict=True)  # a missing key fails now, not at the first call
	anyio.run(serve_stdio, loaded.agent)
	return 0


@hookimpl
def register_commands(register: CommandRegistrar) -> None:
	"""Register ``openmolt mcp``."""
	register("mcp", lambda args: main(args), summary="serve an agent file as an MCP server (stdio)")
