"""Connection limits of our web servers: slow or half-sent requests do not hold them open.

uvicorn reads a request's headers without a deadline and accepts any number of connections, so
300 clients sending a request a byte at a time would be held open for as long as they like. The
run viewer and `openmolt serve`'s trigger server (which imports this from here, its dependency)
speak HTTP/1.1 through `guarded_protocol`, uvicorn's h11 protocol with:

- a header deadline: a connection whose request headers are not complete ``header_timeout``
  seconds after it opened (or after its previous response) is answered ``408`` and closed;
- a connection cap: past ``max_connections`` open connections a new one is answered ``503``
  and closed at once.

The body has its own deadline, in the routes (`openmolt_serve._body.read_body`, the viewer's
``_json``: ``408``); an idle kept-alive connection is closed after uvicorn's
``timeout_keep_alive``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from openmolt_core._support.webheaders import SECURITY_HEADERS

__all__ = [
	"DEFAULT_HEADER_TIMEOUT",
	"DEFAULT_MAX_CONNECTIONS",
	"GuardedH11Protocol",
	"guarded_protocol",
]

log: logging.Logger = logging.getLogger("openmolt")

DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a request's headers may take to arrive."""

DEFAULT_MAX_CONNECTIONS = 200
"""The most connections open at once."""


def _response(status: str, text: str, *extra: str) -> bytes:
	head = [f"HTTP/1.1 {status}", "content-type: text/plain", "connection: close", *extra]
	head += [f"{name.lower()}: {value}" for name, value in SECURITY_HEADERS]  # as every answer
	head.append(f"content-length: {len(text)}")
	return ("\r\n".join(head) + "\r\n\r\n" + text).encode()


_TIMEOUT = _response("408 Request Timeout", "the request's headers did not arrive in time")
_BUSY = _response("503 Service Unavailable", "too many open connections", "retry-after: 1")


class GuardedH11Protocol(H11Protocol):
	"""uvicorn's h11 protocol with a header deadline and a cap on open connections.

	Set the limits with `guarded_protocol`, which makes a subclass holding them.
	"""

	header_timeout: float = DEFAULT_HEADER_TIMEOUT
	max_connections: int = DEFAULT_MAX_CONNECTIONS
	who: str = "openmolt serve"

	def __init__(self, *args: Any, **kwargs: Any) -> None:
		super().__init__(*args, **kwargs)
		self._header_timer: asyncio.TimerHandle | None = None
		self._refused = False

	def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn narrows BaseTransport
		"""Count the connection; refuse it past the cap, else start the header deadline.

		Its socket sends each write at once (``TCP_NODELAY``), whatever the listening socket
		was made with: uvicorn writes a response's head and body apart, and with Nagle's
		algorithm on, the body waited for the client's delayed ACK (about 40 ms a response).
		"""
		_no_delay(transport)
		super().connection_made(transport)
		if len(self.connections) > self.max_connections:
			self._refused = True
			log.warning(
				"%s: %d connections are open (the most is %d); refusing a new one",
				self.who,
				len(self.connections) - 1,
				self.max_connections,
			)
			transport.write(_BUSY)
			transport.close()
			return
		self._arm()

	def _arm(self) -> None:
		if self._header_timer is None:
			self._header_timer = self.loop.call_later(self.header_timeout, self._too_slow)

	def _disarm(self) -> None:
		if self._header_timer is not None:
			self._header_timer.cancel()
			self._header_timer = None

	def _too_slow(self) -> None:
		self._header_timer = None
		if self.cycle is not None and not self.cycle.response_complete:
			return  # its headers came: the body has the routes' own deadline
		if not self.transport.is_closing():
			self.transport.write(_TIMEOUT)
			self.transport.close()

	def data_received(self, data: bytes) -> None:
		"""Read data; the header deadline ends once the request's headers are complete."""
		if self._refused:
			return
		before = self.cycle
		waiting = before is None or before.response_complete
		if waiting:
			self._arm()
		super().data_received(data)
		if waiting and self.cycle is not before:
			self._disarm()

	def on_response_complete(self) -> None:
		"""A response went out: the next request's headers have a new deadline."""
		super().on_response_complete()
		self._disarm()
		if not self.transport.is_closing():
			self._arm()

	def connection_lost(self, exc: Exception | None) -> None:
		"""Stop the deadline with the connection."""
		self._disarm()
		super().connection_lost(exc)


def _no_delay(transport: asyncio.BaseTransport) -> None:
	"""Turn Nagle's algorithm off on a TCP connection (a Unix socket or a test's pipe: nothing)."""
	sock = transport.get_extra_info("socket")
	if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
		try:
			sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
		except OSError:  # closed already: the protocol finds out soon enough
			pass


def guarded_protocol(
	*,
	header_timeout: float = DEFAULT_HEADER_TIMEOUT,
	max_connections: int = DEFAULT_MAX_CONNECTIONS,
	who: str = "openmolt serve",
) -> type[GuardedH11Protocol]:
	"""The protocol class to give uvicorn (``uvicorn.Config(http=...)``) with these limits.

	Args:
		header_timeout: Seconds a request's headers may take to arrive (else ``408``, closed).
		max_connections: The most connections open at once (past it: ``503``, closed).
		who: The server, for the log line when the cap refuses a connection.
	"""
	return type(
		"GuardedH11Protocol",
		(GuardedH11Protocol,),
		{"header_timeout": header_timeout, "max_connections": max_connections, "who": who},
	)
