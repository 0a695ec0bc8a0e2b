"""The TLS context of the shared HTTP client: httpx's settings, its CA bundle read when first needed.

httpx's default context (``httpx.create_ssl_context()``) reads the whole CA bundle when it is
made: one C call that holds the GIL for about 20 ms, a tenth of the CPU time of a one-shot run,
paid even by a program whose only requests go to a local model server over plain HTTP.
`client_context` makes the same context, and reads the same bundle when the first TLS
connection wraps its socket (``wrap_bio`` for asyncio, anyio and trio streams, ``wrap_socket``
for blocking sockets): a program that never speaks TLS never reads it.

The bundle is httpx's choice: ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's, read
from the environment at that first connection.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from typing import Any

__all__ = ["client_context"]


class _DeferredTrust(ssl.SSLContext):
	"""A client context that reads its CA bundle at its first handshake, once, from any thread."""

	_trusted = False
	_lock = threading.Lock()

	def trust(self) -> None:
		"""Read the CA bundle now, unless it was read already."""
		if self._trusted:
			return
		with self._lock:
			if not self._trusted:
				_load_bundle(self)
				self._trusted = True

	def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
		"""Wrap a socket, with the CA bundle read first."""
		self.trust()
		return super().wrap_socket(*args, **kwargs)

	def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
		"""Wrap a pair of memory buffers (what event loops do), with the CA bundle read first."""
		self.trust()
		return super().wrap_bio(*args, **kwargs)


def _load_bundle(context: ssl.SSLContext) -> None:
	if cafile := os.environ.get("SSL_CERT_FILE"):
		context.load_verify_locations(cafile=cafile)
	elif capath := os.environ.get("SSL_CERT_DIR"):
		context.load_verify_locations(capath=capath)
	else:
		import certifi

		context.load_verify_locations(cafile=certifi.where())


def client_context() -> ssl.SSLContext:
	"""The default client context of httpx, with its CA bundle read at the first TLS handshake.

	The settings are those of ``ssl.create_default_context()`` for a client (a test compares
	them with ``httpx.create_ssl_context()`` on the running Python).
	"""
	context = _DeferredTrust(ssl.PROTOCOL_TLS_CLIENT)  # certificates and host names checked
	if sys.version_info >= (3, 13):  # what ssl.create_default_context() adds since 3.13
		context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
	keylog = os.environ.get("SSLKEYLOGFILE")
	if keylog and not sys.flags.ignore_environment:
		context.keylog_filename = keylog
	return context
