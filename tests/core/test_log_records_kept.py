"""A record masked by the logging filter keeps what its handlers read, and HTTP/2 headers are masked.

Every logger at DEBUG, as ``logging.basicConfig(level=logging.DEBUG)`` sets it: uvicorn's access
lines (a viewer's ``?token=``) are masked and still formatted by uvicorn's own formatter, which
unpacks the record's arguments; the HPACK header blocks the ``hpack`` library logs for HTTP/2
show no secret Huffman-coded. Local servers on 127.0.0.1 only.
"""

from __future__ import annotations

import ast
import logging
import re
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from openmolt_core.secrets import register_key
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

SECRET = "CANARYkeptArgs-0123456789abcdef"


class _Owner:
	"""Holds a registered key while a test runs."""


class Kept(logging.Handler):
	"""Keeps every record and the text its formatter makes; counts handling errors."""

	def __init__(self, formatter: logging.Formatter | None = None) -> None:
		super().__init__(logging.DEBUG)
		self.setFormatter(formatter or logging.Formatter("%(name)s %(levelname)s %(message)s"))
		self.records: list[logging.LogRecord] = []
		self.lines: list[str] = []
		self.errors = 0

	def emit(self, record: logging.LogRecord) -> None:
		self.records.append(record)
		try:
			self.lines.append(self.format(record))
		except Exception:  # as logging's own handlers do: the error is reported, not raised
			self.handleError(record)

	def handleError(self, record: logging.LogRecord) -> None:
		self.errors += 1


@pytest.fixture
def debug() -> Iterator[Kept]:
	"""Every logger at DEBUG, every record kept by a handler on the root logger."""
	owner = _Owner()
	register_key(owner, SECRET)
	kept = Kept()
	root = logging.getLogger()
	level = root.level
	root.setLevel(logging.DEBUG)
	root.addHandler(kept)
	try:
		yield kept
	finally:
		root.removeHandler(kept)
		root.setLevel(level)
		del owner


def _text(kept: Kept) -> str:
	return "\n".join(kept.lines) + "\n".join(repr(r.__dict__) for r in kept.records)


async def test_an_access_line_with_a_token_in_its_query_is_masked_and_still_formatted(
	debug: Kept,
) -> None:
	"""uvicorn's access formatter unpacks the arguments: masked, they are still five (was None)."""
	import uvicorn
	from uvicorn.logging import AccessFormatter

	from openmolt_ui._listen import EmbeddedServer
	from openmolt_ui.app import create_app
	from openmolt_ui.viewer import Viewer

	viewer = Viewer(token=SECRET)
	access = Kept(AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s'))
	logger = logging.getLogger("uvicorn.access")
	# As an application that logs access lines has it (another test's logging config may have
	# disabled it or raised its level in this process).
	was = (logger.disabled, logger.level)
	logger.disabled = False
	logger.setLevel(logging.INFO)
	logger.addHandler(access)
	sock = socket.socket()
	sock.bind(("127.0.0.1", 0))
	port = sock.getsockname()[1]
	config = uvicorn.Config(create_app(viewer), access_log=True, log_config=None, lifespan="off")
	server = EmbeddedServer(config)
	server.ready = anyio.Event()
	try:
		async with anyio.create_task_group() as group:
			group.start_soon(server.serve, [sock])
			await server.ready.wait()
			async with httpx.AsyncClient() as client:
				response = await client.get(f"http://127.0.0.1:{port}/api/runs?token={SECRET}")
			server.should_exit = True
	finally:
		logger.removeHandler(access)
		logger.disabled, _ = was
		logger.setLevel(was[1])
		sock.close()
	assert response.status_code == 200
	assert access.errors == 0 and debug.errors == 0
	(line,) = access.lines
	assert line.endswith('"GET /api/runs?token=[redacted] HTTP/1.1" 200 OK')
	(record,) = access.records
	assert isinstance(record.args, tuple) and len(record.args) == 5 and record.args[4] == 200
	assert leaks(_text(access) + _text(debug), SECRET) == []


class _Holder:
	def __init__(self, value: str) -> None:
		self.value = value

	def __repr__(self) -> str:
		return f"_Holder({self.value!r})"


def test_a_masked_record_keeps_its_format_and_the_arguments_that_show_no_secret(
	debug: Kept,
) -> None:
	"""Only the arguments that show a secret change: numbers stay numbers, ``%r`` is masked."""
	log = logging.getLogger("an.application.module")
	log.info("%s asked %d times with %r", f"key={SECRET}", 3, _Holder(SECRET))
	log.info("%(who)s: %(key)s", {"who": "ann", "key": SECRET.encode()})
	first, second = debug.records
	assert first.msg == "%s asked %d times with %r" and isinstance(first.args, tuple)
	assert first.args[1] == 3 and type(first.args[1]) is int
	assert first.getMessage() == "key=[redacted] asked 3 times with _Holder('[redacted]')"
	assert second.msg == "%(who)s: %(key)s" and second.getMessage() == "ann: b'[redacted]'"
	assert leaks(_text(debug), SECRET) == []


@pytest.mark.parametrize(
	("msg", "args"),
	[
		(f"key={SECRET[:12]}%s", (SECRET[12:],)),  # the secret spans the format and an argument
		("%s%s", (SECRET[:12], SECRET[12:])),  # ... or two arguments
		("%d tries", (SECRET,)),  # arguments that do not fit the format
		(f"key={SECRET} %s", ("x",)),  # the format shows it
	],
)
def test_a_record_that_cannot_be_masked_argument_by_argument_is_rewritten(
	msg: str, args: tuple[Any, ...], debug: Kept
) -> None:
	"""When masking each argument is not enough, the whole message is masked, as before."""
	logging.getLogger("httpx").warning(msg, *args)
	(record,) = debug.records
	assert record.args is None and "[redacted]" in record.getMessage()
	assert leaks(_text(debug), SECRET) == []


def _huffman(value: str) -> bytes:
	"""The HPACK Huffman code of a value (hpack's own encoder: not the masking's)."""
	from hpack.huffman import HuffmanEncoder
	from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

	return bytes(HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH).encode(value.encode()))


def _blocks(text: str) -> list[bytes]:
	"""The ``bytes`` literals a log text shows."""
	found = re.findall(r"b'(?:[^'\\\n]|\\.)*'|b\"(?:[^\"\\\n]|\\.)*\"", text)
	return [ast.literal_eval(literal) for literal in found]


async def _h2_server(stream: Any) -> None:
	"""Answer each HTTP/2 request (prior knowledge) with its ``x-api-key`` echoed in a header."""
	import h2.config
	import h2.connection
	import h2.events

	conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
	conn.initiate_connection()
	async with stream:
		await stream.send(conn.data_to_send())
		while True:
			try:
				data = await stream.receive()
			except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
				return
			for event in conn.receive_data(data):
				if isinstance(event, h2.events.RequestReceived):
					key = dict(event.headers)[b"x-api-key"].decode()
					conn.send_headers(event.stream_id, [(":status", "200"), ("x-echo", key)])
					conn.send_data(event.stream_id, b"{}", end_stream=True)
			if out := conn.data_to_send():
				await stream.send(out)


async def test_http2_header_blocks_show_no_secret_huffman_coded(debug: Kept) -> None:
	"""hpack logs each header block Huffman-coded at DEBUG: a secret's code is masked in it."""
	pytest.importorskip("h2")
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	async with listener, anyio.create_task_group() as group:
		group.start_soon(listener.serve, _h2_server)
		async with httpx.AsyncClient(http1=False, http2=True) as client:
			response = await client.get(
				f"http://127.0.0.1:{port}/x",
				headers={"X-Api-Key": SECRET, "Authorization": f"Bearer {SECRET}"},
			)
		group.cancel_scope.cancel()
	assert response.http_version == "HTTP/2" and response.headers["x-echo"] == SECRET
	text = _text(debug)
	assert "Encoded header block to b" in text and "[redacted]" in text
	assert leaks(text, SECRET) == []
	code = _huffman(SECRET)[:-1]  # its last byte may hold the next header's bits
	middle = _huffman(f"Bearer {SECRET}")[6:-1]  # the secret's bits, after "Bearer "
	blocks = _blocks(text)
	assert blocks and not any(code in block or middle in block for block in blocks)
