"""The listening socket of a local web server (the run viewer, `openmolt serve`)."""

from __future__ import annotations

import socket

from openmolt_core.errors import ConfigurationError

__all__ = ["listen"]


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
