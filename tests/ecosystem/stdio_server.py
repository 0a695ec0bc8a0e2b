"""A small MCP server built with the official SDK, run over stdio by the tests.

``python stdio_server.py`` serves: ``whoami`` (its pid and the value of $DEMO_TOKEN), ``sleep``
(waits) and ``fail`` (raises).
"""

from __future__ import annotations

import os

import anyio
from mcp.server import MCPServer

server = MCPServer("openmolt-test-stdio")


@server.tool()
def whoami() -> dict[str, str | int]:
	"""The server's pid and the token it was given."""
	return {"pid": os.getpid(), "token": os.environ.get("DEMO_TOKEN", "")}


@server.tool()
async def sleep(seconds: float) -> str:
	"""Wait, then answer."""
	await anyio.sleep(seconds)
	return "awake"


@server.tool()
def fail() -> str:
	"""Always fails."""
	raise RuntimeError("the database is down")


if __name__ == "__main__":
	server.run("stdio")
