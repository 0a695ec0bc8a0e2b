"""A JSON server on 127.0.0.1 for the command's tests: each POST answered by a function."""

from __future__ import annotations

import json
from collections.abc import Callable
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Respond = Callable[[str, Message, bytes], tuple[int, Any]]
"""``(path, headers, body) -> (status, reply)``: the reply is sent as JSON."""


def json_server(respond: Respond) -> ThreadingHTTPServer:
	"""A server (not yet serving) that answers each POST with ``respond``'s status and JSON.

	Args:
		respond: Gives each request's answer from its path, headers and body's bytes.
	"""

	class Handler(BaseHTTPRequestHandler):
		def do_POST(self) -> None:
			body = self.rfile.read(int(self.headers["Content-Length"]))
			status, reply = respond(self.path, self.headers, body)
			data = json.dumps(reply).encode()
			self.send_response(status)
			self.send_header("Content-Type", "application/json")
			self.send_header("Content-Length", str(len(data)))
			self.end_headers()
			self.wfile.write(data)

		def log_message(self, *args: Any) -> None:
			pass

	return ThreadingHTTPServer(("127.0.0.1", 0), Handler)
