"""A small MCP server built with the official SDK, run over stdio by the tests.

``python stdio_server.py`` serves: ``whoami`` (its pid and the value of $DEMO_TOKEN), ``sleep``
(waits), ``fail`` (raises) and ``send`` (appends its text to the file $SENT_LOG names: what a real
server would send out; no annotations, so its labels are unknown).
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


@server.tool()
def send(text: str) -> str:
	"""Send a text out (to the file $SENT_LOG names)."""
	with open(os.environ["SENT_LOG"], "a", encoding="utf-8") as out:
		out.write(text + "\n")
	return "sent"


if __name__ == "__main__":
	server.run("stdio")
