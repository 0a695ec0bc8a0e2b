"""The listening socket and the uvicorn server of a local web server (the run viewer, `openmolt serve`)."""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import socket
from collections.abc import Iterator

import anyio
import uvicorn

from openmolt_core.errors import ConfigurationError

__all__ = ["EmbeddedServer", "check_remote", "is_loopback", "listen"]


def is_loopback(host: str) -> bool:
	"""Whether ``host`` is a loopback address (``127.0.0.1``, ``::1``, ``localhost``)."""
	if host == "localhost":
		return True
	try:
		return ipaddress.ip_address(host.strip("[]")).is_loopback
	except ValueError:
		return False


def check_remote(host: str, *, allow_remote: bool, who: str, option: str = "--host") -> str | None:
	"""Refuse a non-loopback address unless allowed; when allowed, say what that exposes.

	Args:
		host: The address to bind.
		allow_remote: Whether ``--allow-remote`` (``allow_remote=True``) was given.
		who: What listens (``openmolt ui``), for the messages.
		option: The option that named the address.

	Returns:
		None for a loopback address, else the warning to print: the token travels in clear.

	Raises:
		ConfigurationError: A non-loopback address without ``allow_remote``.
	"""
	if is_loopback(host):
		return None
	if not allow_remote:
		raise ConfigurationError(
			f"{who}: {option} {host} is not a loopback address: the page's token, the runs and "
			"the approvals would be reachable from the network; keep 127.0.0.1 (reach it "
			"through an SSH tunnel), or pass --allow-remote to expose it on purpose"
		)
	return (
		f"{who} listens on {host} over plain HTTP: the token travels in clear, so anyone on the "
		"network path can read it and use it (answer questions, decide approvals); put a TLS "
		"proxy (HTTPS) in front, or use an SSH tunnel"
	)


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


def listen(
	host: str, port: int, *, who: str, options: tuple[str, str] = ("--host", "--port")
) -> socket.socket:
	"""A TCP socket bound to ``host:port`` (port 0: any free one), ready for uvicorn.

	Args:
		host: The address (IPv6 when it holds a colon).
		port: The port, 0 for any free one (read it back with ``getsockname``).
		who: What listens, for the message (``the run viewer``).
		options: The command's options that give the host and the port, named by the message
			(``openmolt serve``'s viewer: ``--ui-host``, ``--ui-port``).

	Raises:
		ConfigurationError: The port is taken (the message says to pick another), or the host is
			no address of this machine (it says to give one).
	"""
	family = socket.AF_INET6 if ":" in host else socket.AF_INET
	# IPPROTO_TCP named: asyncio sets TCP_NODELAY only on connections of a socket that says so
	# (with proto 0, each response waited about 40 ms for the client's delayed ACK).
	sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
	sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	try:
		sock.bind((host, port))
	except OSError as exc:
		sock.close()
		host_option, port_option = options
		if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
			fix = f"give a name or address of this machine ({host_option})"
		else:
			fix = f"choose another port ({port_option})"
		raise ConfigurationError(
			f"{who} cannot listen on {host}:{port}: {exc.strerror}; {fix}"
		) from exc
	return sock
