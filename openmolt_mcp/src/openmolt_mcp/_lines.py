"""A bound on the lines a stdio server writes, which the SDK reads whole however long they are.

Over stdio every MCP message is one line of the server's stdout. The official SDK's transport
(``mcp.client.stdio.stdio_client``) decodes the pipe with an incremental decoder and joins the
pieces until a newline comes: a server that writes a gigabyte without one makes this process hold
all of it, copied again at every 64 KiB piece (a 400 MB line had grown the client by 145 MB and
was still being read 43 s later, every call of the server timing out meanwhile).

The SDK has no setting for it, and its reader cannot be replaced through its public API. What it
takes is the pipe's text encoding (``StdioServerParameters.encoding``), looked up with `codecs`;
so the pipe is decoded by a codec of ours, `encoding` names it: UTF-8, counting the bytes since
the last newline, and failing with `MessageTooLong` once a line passes the limit. The SDK's
reader task then ends with that error, the session's pending requests fail as a closed
connection, the transport stops the server (stdin closed, then its process group terminated),
and what was read of the line is dropped. The decoder tells the connection it belongs to
(`WATCH`, set by the task that opens the connection, whose child tasks the reader is one of),
which closes at once (the SDK's failed reader would drain the pipe until the server closes it,
holding every call to its timeout), and the call that was waiting says why.
"""

from __future__ import annotations

import codecs
import functools
import re
from contextvars import ContextVar
from typing import Any

__all__ = ["WATCH", "MessageTooLong", "encoding"]

_PREFIX = "openmolt_mcp_lines_"
_NAME = re.compile(rf"^{_PREFIX}(\d+)$")

WATCH: ContextVar[Any] = ContextVar("openmolt_mcp_watch", default=None)
"""The connection whose pipe is being decoded: its ``cut()`` is called when a line passes."""


class MessageTooLong(ValueError):
	"""A stdio server wrote a line (one MCP message) longer than its limit.

	Args:
		limit: The limit, in bytes.
	"""

	def __init__(self, limit: int) -> None:
		super().__init__(f"the server wrote a message longer than {limit} bytes")
		self.limit = limit


class _Decoder(codecs.IncrementalDecoder):
	"""UTF-8 that fails once a line (the bytes between two newlines) passes ``limit`` bytes."""

	def __init__(self, limit: int, errors: str = "strict") -> None:
		super().__init__(errors)
		self.limit = limit
		self._utf8 = codecs.getincrementaldecoder("utf-8")(errors)
		self._line = 0
		self._watch = WATCH.get()  # created in the reader task, a child of the connection's

	def decode(self, input: Any, final: bool = False) -> str:
		data = bytes(input)
		line, start = self._line, 0
		while (end := data.find(b"\n", start)) >= 0:
			if line + end - start > self.limit:
				self._cut()
			line, start = 0, end + 1
		line += len(data) - start
		if line > self.limit:
			self._cut()
		self._line = line
		return self._utf8.decode(data, final)

	def _cut(self) -> None:
		if self._watch is not None:
			self._watch.cut()
		raise MessageTooLong(self.limit)

	def reset(self) -> None:
		self._utf8.reset()
		self._line = 0


def _search(name: str) -> codecs.CodecInfo | None:
	found = _NAME.match(name)
	if found is None:
		return None
	utf8 = codecs.lookup("utf-8")
	return codecs.CodecInfo(
		name=name,
		encode=utf8.encode,
		decode=utf8.decode,
		incrementalencoder=utf8.incrementalencoder,
		incrementaldecoder=functools.partial(_Decoder, int(found[1])),
		streamreader=utf8.streamreader,
		streamwriter=utf8.streamwriter,
	)


_REGISTERED: list[bool] = []


def encoding(limit: int) -> str:
	"""The name of the codec that reads a stdio server's pipe, its lines bounded by ``limit`` bytes.

	Codec lookups are cached by name for the life of the process: one name per limit.

	Args:
		limit: The longest line, in bytes.
	"""
	if not _REGISTERED:
		codecs.register(_search)
		_REGISTERED.append(True)
	return f"{_PREFIX}{limit}"
