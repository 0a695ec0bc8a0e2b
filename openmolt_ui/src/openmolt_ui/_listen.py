"""The listening socket and the uvicorn server of a local web server (the run viewer, `openmolt serve`)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import anyio
import uvicorn

from openmolt_core.errors import ConfigurationError

__all__ = ["EmbeddedServer", "listen"]


class EmbeddedServer(uvicorn.Server):
	"""uvicorn's server without its signal handlers: the program that embeds it owns those.

	``ready``, when set before serving, is set once the server accepts connections.
	"""

	ready: anyio.Event | None = None

	@contextlib.contextmanager
	def capture_signals(self) -> Iterator[None]:
		"""Leave the signals to the embedding program."""
		yield

	async def startup(self, sockets: list[socket.socket] | None = None) -> None:
		"""Start, then say so through ``ready``."""
		await super().startup(sockets=sockets)
		if self.ready is not None:
			self.ready.set()


def listen(host: str, port: int, *, who: str) -> socket.socket:
	"""A TCP socket bound to ``host:port`` (port 0: any free one), ready for uvicorn.

	Args:
		host: The address (IPv6 when it holds a colon).
		port: The port, 0 for any free one (read it back with ``getsockname``).
		who: What listens, for the message (``the run viewer``).

	Raises:
		ConfigurationError: The address is taken or not ours; the message says to pick another
			port.
	"""
	family = socket.AF_INET6 if ":" in host else socket.AF_INET
	sock = socket.socket(family, socket.SOCK_STREAM)
	sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	try:
		sock.bind((host, port))
	except OSError as exc:
		sock.close()
		raise ConfigurationError(
			f"{who} cannot listen on {host}:{port}: {exc.strerror}; choose another port (--port)"
		) from exc
	return sock
