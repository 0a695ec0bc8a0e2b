"""Reading a response body with a cap on its decoded size, decompressing as it streams.

httpx decodes ``gzip`` and ``deflate`` one network chunk at a time without a bound on what one
chunk may expand to, so a small compressed reply can cost hundreds of megabytes before any size
check runs. Here the raw bytes are read and decompressed with ``zlib``'s ``max_length``, so no
more than the cap (plus one byte, to notice the excess) is ever produced; reading stops there.
The engine asks for ``gzip, deflate`` only. A reply compressed with ``br`` or ``zstd`` anyway is
refused: httpx decodes them (when ``brotli`` or ``zstandard`` is installed) without a bound on
what one network chunk expands to, and without them the body would be unreadable bytes. An
encoding nobody knows (``x-custom``) is skipped, as httpx skips it, while the ``gzip`` and
``deflate`` layers around it are still decoded here, with the bound: never by httpx's decoders.
A reply naming more than `MAX_ENCODINGS` encodings is refused (as curl does since
CVE-2022-32206): thousands of ``gzip`` layers cost seconds of CPU and hundreds of megabytes of
decoder state, whatever the cap.

The response is always closed, also when the read is cancelled by an outer deadline: the close
runs shielded, bounded by `CLOSE_TIMEOUT`.
"""

from __future__ import annotations

import zlib

import anyio
import httpx

from openmolt_core.errors import ToolError

__all__ = ["ACCEPT_ENCODING", "CLOSE_TIMEOUT", "MAX_ENCODINGS", "read_body"]

MAX_ENCODINGS = 5
"""The most content encodings (compression layers) a reply may name."""

_INFLATED = frozenset({"gzip", "x-gzip", "deflate"})
"""Encodings decoded here, with a bound on what they produce."""

_UNBOUNDED = frozenset({"br", "zstd"})
"""Encodings httpx can decode, but only without a bound on the output of one chunk."""

ACCEPT_ENCODING = "gzip, deflate"
"""What the engine asks services for: the encodings read here with a bounded decoder."""

CLOSE_TIMEOUT = 2.0
"""Seconds a response may take to close after its read ended or was cancelled."""


class _Inflate:
	"""A zlib/gzip/raw-deflate decoder that never produces more than it is allowed."""

	def __init__(self, encoding: str) -> None:
		self.gzip = encoding in ("gzip", "x-gzip")
		self.raw_tried = False
		self.started = False
		self.decoder = zlib.decompressobj(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)

	def feed(self, data: bytes, room: int) -> bytes:
		"""Decompress ``data``, producing at most ``room`` bytes (more input is kept)."""
		try:
			out = self.decoder.decompress(data, room)
		except zlib.error:
			if self.gzip or self.started or self.raw_tried:
				raise
			# "deflate" is meant to be zlib-wrapped, but some servers send raw deflate.
			self.raw_tried = True
			self.decoder = zlib.decompressobj(-zlib.MAX_WBITS)
			out = self.decoder.decompress(data, room)
		self.started = True
		return out

	@property
	def pending(self) -> bytes:
		return self.decoder.unconsumed_tail


def _too_large(limit: int) -> ToolError:
	return ToolError(
		f"the response is larger than {limit} bytes once decoded; not read (ask for less, or "
		"use a tool that saves downloads to the file store)"
	)


async def _close(response: httpx.Response) -> None:
	with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
		await response.aclose()


async def read_body(response: httpx.Response, limit: int) -> bytes:
	"""Read a streamed response's decoded body, refusing more than ``limit`` bytes.

	Args:
		response: A response sent with ``stream=True``.
		limit: The largest decoded body accepted.

	Returns:
		The decoded body.

	Raises:
		ToolError: The decoded body is larger than ``limit``, or it does not decompress.
	"""
	if response.is_stream_consumed:
		# Built in memory (httpx reads such a body when the response is made): nothing to stream.
		await _close(response)
		if len(response.content) > limit:
			raise _too_large(limit)
		return response.content
	header = response.headers.get("content-encoding", "")
	encodings = [e.strip().lower() for e in header.split(",") if e.strip()]
	encodings = [e for e in encodings if e != "identity"]
	refused = next((e for e in encodings if e in _UNBOUNDED), None)
	if refused is not None:
		await _close(response)
		raise ToolError(
			f"the service compressed its reply with {refused!r}, which was not asked for (only "
			f"{ACCEPT_ENCODING}); not read"
		)
	if len(encodings) > MAX_ENCODINGS:
		await _close(response)
		raise ToolError(
			f"the service's reply names {len(encodings)} content encodings (at most "
			f"{MAX_ENCODINGS} are read); not read"
		)
	# Applied in order, so decoded in reverse; unknown encodings are skipped, as httpx does.
	decoders = [_Inflate(e) for e in reversed(encodings) if e in _INFLATED]
	chunks: list[bytes] = []
	size = 0
	try:
		async for raw in response.aiter_raw():
			for piece in _decode(decoders, raw, limit - size + 1):
				size += len(piece)
				if size > limit:
					raise _too_large(limit)
				chunks.append(piece)
	except _TooLarge:
		raise _too_large(limit) from None
	except zlib.error:
		raise ToolError("the service sent a compressed body that does not decompress") from None
	finally:
		await _close(response)
	return b"".join(chunks)


class _TooLarge(Exception):
	pass


def _decode(decoders: list[_Inflate], data: bytes, room: int) -> list[bytes]:
	"""Run ``data`` through the decoders; no stage may produce ``room`` bytes or more."""
	pieces = [data]
	for decoder in decoders:
		out: list[bytes] = []
		produced = 0
		for piece in pieces:
			chunk = decoder.feed(piece, room - produced)
			while True:
				produced += len(chunk)
				out.append(chunk)
				if produced >= room:
					raise _TooLarge
				if not decoder.pending:
					break
				chunk = decoder.feed(decoder.pending, room - produced)
				if not chunk:
					break
		pieces = out
	return pieces
