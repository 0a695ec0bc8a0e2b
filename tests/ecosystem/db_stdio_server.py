"""A stdio MCP server built with the official SDK whose tool fails as a database driver does.

``python db_stdio_server.py`` serves ``connect``, whose error names the connection URL it was
given in $DATABASE_URL (password and all), as a driver's "could not connect" message does.
"""

from __future__ import annotations

import os

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("openmolt-test-db")


@server.tool()
def connect() -> str:
	"""Connect to the database (it always fails, naming the URL)."""
	raise ToolError(f"could not connect to server at {os.environ.get('DATABASE_URL', '')}")


if __name__ == "__main__":
	server.run("stdio")
