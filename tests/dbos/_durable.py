"""The fake model and tool server of the durable tests: a thread in the test process, 127.0.0.1 only.

Models: ``POST /model`` with ``{"scenario", "turn"}`` answers the scenario's reply for that turn
(the agent's provider, `tests/dbos/agents.py`, sends it). Tools: ``POST /tool/<name>`` with a JSON
body; ``hold`` tools block until the test releases them (the crash happens while they hold).
Everything is logged with the time, so tests wait on what the server saw instead of sleeping.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Entry:
	kind: str  # model | tool | memory | event
	name: str
	body: dict[str, Any]
	headers: dict[str, str]
	at: float = field(default_factory=time.time)


class FakeServer:
	"""Scripted replies per scenario, tool side effects, and a log of everything."""

	def __init__(self) -> None:
		self.scripts: dict[str, list[Any]] = {}
		self.log: list[Entry] = []
		self.holds: dict[str, threading.Event] = {}
		self.fail: set[tuple[str, int]] = set()  # (scenario, turn) answered 500
		self.jitter: float = 0.0
		self._lock = threading.Lock()
		self._changed = threading.Condition(self._lock)
		server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
		server.daemon_threads = True
		self._server = server
		self.url = f"http://127.0.0.1:{server.server_address[1]}"
		self._thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
		self._thread.start()

	def close(self) -> None:
		for event in self.holds.values():
			event.set()
		self._server.shutdown()
		self._server.server_close()

	# the log ------------------------------------------------------------------------------

	def record(self, entry: Entry) -> None:
		with self._changed:
			self.log.append(entry)
			self._changed.notify_all()

	def entries(self, kind: str | None = None, **match: Any) -> list[Entry]:
		with self._lock:
			out = list(self.log)
		return [
			e
			for e in out
			if (kind is None or e.kind == kind)
			and all((e.name if k == "name" else e.body.get(k)) == v for k, v in match.items())
		]

	def wait_for(self, what: Callable[[], Any], timeout: float = 60.0, message: str = "") -> Any:
		"""Wait until ``what()`` is truthy (re-checked whenever the server logs something)."""
		deadline = time.time() + timeout
		with self._changed:
			while True:
				self._lock.release()
				try:
					value = what()
				finally:
					self._lock.acquire()
				if value:
					return value
				left = deadline - time.time()
				if left <= 0:
					raise AssertionError(f"timed out waiting for {message or what}")
				self._changed.wait(min(left, 0.2))

	# requests -----------------------------------------------------------------------------

	def _handler(self) -> type[BaseHTTPRequestHandler]:
		server = self

		class Handler(BaseHTTPRequestHandler):
			protocol_version = "HTTP/1.1"

			def log_message(self, format: str, *args: Any) -> None:
				pass

			def do_POST(self) -> None:
				length = int(self.headers.get("content-length") or 0)
				raw = self.rfile.read(length) if length else b"{}"
				try:
					body = json.loads(raw or b"{}")
				except json.JSONDecodeError:
					body = {"raw": raw.decode(errors="replace")}
				headers = {k.lower(): v for k, v in self.headers.items()}
				status, reply = server.handle(self.path, body, headers)
				data = json.dumps(reply).encode()
				try:
					self.send_response(status)
					self.send_header("content-type", "application/json")
					self.send_header("content-length", str(len(data)))
					self.end_headers()
					self.wfile.write(data)
				except OSError:
					pass  # the client was killed

		return Handler

	def handle(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
		if path == "/model":
			scenario, turn = str(body.get("scenario")), int(body.get("turn", 0))
			self.record(Entry("model", scenario, body, headers))
			if (scenario, turn) in self.fail:
				return 500, {"error": {"message": "the model server broke"}}
			script = self.scripts[scenario]
			reply = script[min(turn, len(script) - 1)]
			commands = reply if isinstance(reply, list) else [reply]
			return 200, {
				"text": json.dumps({"commands": commands}),
				"usage": {"input_tokens": 100 + turn, "output_tokens": 10 + turn},
			}
		if path.startswith("/tool/"):
			name = path.removeprefix("/tool/")
			self.record(Entry("tool", name, body, headers))
			hold = self.holds.get(str(body.get("hold") or ""))
			if hold is not None:
				hold.wait(120)
			if self.jitter:
				time.sleep(random.uniform(0, self.jitter))
			self.record(Entry("tool-done", name, body, headers))
			return 200, {"ok": True, "tool": name, "echo": body.get("value")}
		if path == "/memory":
			self.record(Entry("memory", str(body.get("scenario")), body, headers))
			hold = self.holds.get(str(body.get("hold") or ""))
			if hold is not None:
				hold.wait(120)
			self.record(Entry("memory-done", str(body.get("scenario")), body, headers))
			return 200, {"ok": True}
		return 404, {"error": "no such path"}


async def stop_process() -> None:
	"""This process stops its engine, as a process that ends would: its runs stay pending.

	A test's phases each run on their own event loop, as two processes would; the next phase
	recovers the runs this one left.
	"""
	from dbos import DBOS

	from openmolt_dbos import _engine

	engine = _engine._ENGINE
	if engine is not None and engine.launched:
		await engine.shutdown()  # the run stays pending, to be recovered
	DBOS.destroy()
	_engine.reset_engine()
