"""The HTTP engine against hostile replies and hostile file references (review r9e)."""

import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ToolError
from openmolt_core.filestore import MAX_READ_BYTES, FileStore
from openmolt_core.integrations import HttpTool, OAuth2Credential
from openmolt_core.integrations._body import MAX_ENCODINGS
from openmolt_core.integrations._client import new_client
from openmolt_core.integrations.credentials import MAX_TOKEN_REPLY_BYTES, make_auth
from openmolt_core.integrations.filesystem import file_system_integration, sandbox_of
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.integrations.oauth import Consent, exchange_code
from openmolt_core.tools import ToolContext
from tests._scaling import FACTOR, assert_linear, cpu_async
from tests.core.integrations.test_engine_security import (
	Chunks,
	context,
	http_request_tool,
	spec,
)

pytestmark = pytest.mark.anyio


async def fetch(handler: Any, **extra: Any) -> Any:
	return await http_request_tool().function(
		{"url": "https://api.example.com/x", **extra}, context(handler)
	)


@pytest.mark.parametrize(
	"charset", ["bogus-xx", "base64", "zlib", "rot13", "idna", "punycode", "x-user-defined"]
)
@pytest.mark.parametrize("status", [200, 500])
async def test_a_charset_the_service_names_never_breaks_or_stalls_decoding(
	charset: str, status: int
) -> None:
	"""An unknown, non-text or pathological charset reads as UTF-8: the text, or a ToolError.

	Before, an unknown charset raised LookupError (not a tool error, unredacted), idna raised
	UnicodeError, and punycode decodes in quadratic time: a reply of a few megabytes held the
	event loop (every agent of the process) for hours.
	"""
	costs = []
	for size in (400_000 // FACTOR, 400_000):
		body = b"a-" + b"9" * size

		def handler(request: httpx.Request, body: bytes = body) -> httpx.Response:
			ctype = f"text/plain; charset={charset}"
			return httpx.Response(status, headers={"content-type": ctype}, content=body)

		async def read(handler: Any = handler, body: bytes = body) -> None:
			if status == 200:
				out = await fetch(handler)
				assert out["body"] == body.decode()
			else:
				with pytest.raises(ToolError, match="answered 500"):
					await fetch(handler)

		cost, _ = await cpu_async(read)
		costs.append(cost)
	assert_linear(*costs, f"decoding a reply in {charset}")


async def test_a_known_charset_is_still_honoured() -> None:
	"""latin-1 and UTF-16 replies decode in their charset."""

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(
			200,
			headers={"content-type": "text/plain; charset=latin-1"},
			content="café".encode("latin-1"),
		)

	assert (await fetch(handler))["body"] == "café"


@pytest.fixture
def huge(tmp_path: Path) -> tuple[Path, FileStore]:
	"""A sparse file of MAX_READ_BYTES + 1 bytes inside a FileSystem root (no disk used)."""
	root = tmp_path / "root"
	root.mkdir()
	with (root / "huge.iso").open("wb") as out:
		out.truncate(MAX_READ_BYTES + 1)
	box = sandbox_of(file_system_integration(root))
	return root, FileStore(tmp_path / "store", file_system=box.file)


async def test_an_upload_of_a_huge_file_is_refused_before_it_is_read(
	huge: tuple[Path, FileStore],
) -> None:
	"""A binary body naming a file over MAX_READ_BYTES is refused, not read into memory.

	Before, the whole file was read (a sparse or huge file in the FileSystem root exhausted the
	process's memory); a byte range of it is still sent.
	"""
	_, store = huge
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={})

	ctx = context(handler)
	ctx.files = store
	tool = HttpTool(
		handle="t", description="d", method="PUT", endpoint="/up", request_format="binary",
		body="{{ input.file }}",
	)  # fmt: skip
	tracemalloc.start()
	try:
		with pytest.raises(ToolError, match=r"more than the \d+ allowed here; send it in parts"):
			await execute_http_tool(tool, spec(tool), {"file": "fileSystem:huge.iso"}, ctx)
		peak = tracemalloc.get_traced_memory()[1]
	finally:
		tracemalloc.stop()
	assert not seen and peak < 16 * 1024 * 1024
	await execute_http_tool(tool, spec(tool), {"file": "fileSystem:huge.iso#bytes=0-9"}, ctx)
	assert seen[0].content == bytes(10)


async def test_writing_a_huge_file_reference_is_refused_before_it_is_read(
	huge: tuple[Path, FileStore],
) -> None:
	"""FileSystem.write from a reference over MAX_READ_BYTES is refused, not read into memory."""
	root, store = huge
	write = {t.handle: t for t in file_system_integration(root).tools}["write"]
	ctx = ToolContext(agent="a", integration="fileSystem", files=store)
	with pytest.raises(ToolError, match="allowed here"):
		await write.execute({"path": "copy.iso", "file": "fileSystem:huge.iso"}, ctx)
	assert not (root / "copy.iso").exists()


@pytest.mark.parametrize("encoding", ["br", "zstd", "gzip, br", "BR"])
async def test_a_reply_in_an_encoding_not_asked_for_is_refused(encoding: str) -> None:
	"""br and zstd are refused (httpx would decode them with no bound per chunk when brotli or
	zstandard is installed: a brotli bomb of a few kilobytes expands to gigabytes at once)."""

	def handler(request: httpx.Request) -> httpx.Response:
		assert request.headers["accept-encoding"] == "gzip, deflate"
		headers = {"content-encoding": encoding}
		return httpx.Response(200, headers=headers, stream=Chunks(b"\x1b" * 64))

	with pytest.raises(ToolError, match="which was not asked for"):
		await fetch(handler)


async def test_an_unknown_encoding_is_passed_through() -> None:
	"""An encoding httpx does not decode (nor this engine) leaves the bytes as they came."""

	def handler(request: httpx.Request) -> httpx.Response:
		headers = {"content-encoding": "x-custom", "content-type": "text/plain"}
		return httpx.Response(200, headers=headers, stream=Chunks(b"plain"))

	assert (await fetch(handler))["body"] == "plain"


async def test_a_cookie_one_call_got_is_not_sent_on_another_agents_calls() -> None:
	"""The shared client keeps no cookie: a session one agent's credentialed call got is not sent
	by another agent's tool, nor by the model's httpRequest, to the same host."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		cookie = "session=user1-session-abcdef; Path=/; Secure"
		return httpx.Response(200, headers={"set-cookie": cookie}, json={})

	client = new_client(httpx.MockTransport(handler))  # type: ignore[arg-type]
	first, second = context(handler), context(handler, integration_id="other")
	first.http = second.http = lambda: client
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	await execute_http_tool(tool, spec(tool), {}, first)
	await execute_http_tool(tool, spec(tool), {}, second)
	await http_request_tool().function({"url": "https://api.example.com/y"}, second)
	assert [r.headers.get("cookie") for r in seen] == [None, None, None]


class Endless(httpx.AsyncByteStream):
	"""A reply body of 64 MiB of blanks, as if endless (counts what was taken)."""

	def __init__(self) -> None:
		self.sent = 0

	async def __aiter__(self) -> AsyncIterator[bytes]:
		while self.sent < 64 * 1024 * 1024:
			self.sent += 65536
			yield b" " * 65536


async def test_an_endless_token_reply_fails_the_refresh_within_a_bound() -> None:
	"""An OAuth2 token endpoint that streams forever fails the refresh after MAX_TOKEN_REPLY_BYTES.

	Before, the refresh read the whole reply into memory (client.send without a cap): a token
	URL (an imported document's, or a hostile one) could exhaust the process's memory.
	"""
	endless = Endless()
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if request.url.path == "/token":
			return httpx.Response(200, headers={"content-type": "application/json"}, stream=endless)
		return httpx.Response(200, json={})

	cred = OAuth2Credential(
		type="oauth2",
		token_url="https://auth.example.com/token",
		refresh_token="{{ config.refreshToken }}",
	)
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	integration = spec(tool, credentials=[cred])
	config = {"refreshToken": "rtoken-123456"}
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	auth = make_auth(integration, cred, config, on_token_refresh=None, http=lambda: client)
	ctx = context(handler, config=config, auth=auth)
	ctx.http = lambda: client
	with pytest.raises(ToolError, match="token refresh failed: the response is larger than"):
		await execute_http_tool(tool, integration, {}, ctx)
	assert endless.sent <= MAX_TOKEN_REPLY_BYTES + 2 * 65536
	assert seen[0].headers["accept-encoding"] == "gzip, deflate"
	assert len(seen) == 1


def gzipped(blocks: Iterable[bytes]) -> bytes:
	packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
	return b"".join([*(packer.compress(block) for block in blocks), packer.flush()])


@pytest.mark.parametrize(
	"encoding", ["gzip, gzip, x-custom", "x-custom, gzip, gzip", "gzip, compress, gzip"]
)
async def test_an_unknown_encoding_does_not_hand_a_bomb_to_httpx(encoding: str) -> None:
	"""A nested gzip bomb whose Content-Encoding also names an unknown encoding stays bounded.

	Before, any unknown name in the list sent the body through httpx's decoders, which inflate a
	whole chunk at once: 600 bytes of twice-gzipped zeros took over 500 MB before the cap.
	"""
	inner = gzipped(bytes(1 << 20) for _ in range(256))  # 256 MiB of zeros
	payload = gzipped([inner])

	def handler(request: httpx.Request) -> httpx.Response:
		headers = {"content-encoding": encoding, "content-type": "application/json"}
		return httpx.Response(200, headers=headers, stream=Chunks(payload))

	tool = HttpTool(handle="t", description="d", endpoint="/x", max_response_bytes=2 * 1024 * 1024)
	tracemalloc.start()
	try:
		with pytest.raises(ToolError, match="larger than 2097152 bytes"):
			await execute_http_tool(tool, spec(tool), {}, context(handler))
		peak = tracemalloc.get_traced_memory()[1]
	finally:
		tracemalloc.stop()
	assert peak < 32 * 1024 * 1024


async def test_an_endless_reply_to_the_code_exchange_fails_within_a_bound() -> None:
	"""The authorization-code exchange (``openmolt auth``, an end user's consent) reads its reply
	with the same cap as a refresh; before, it read all of it into memory."""
	endless = Endless()

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, headers={"content-type": "application/json"}, stream=endless)

	cred = OAuth2Credential(type="oauth2", token_url="https://auth.example.com/token")
	consent = Consent("https://auth.example.com/authorize", "st", None, "http://127.0.0.1/cb", [])
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	with pytest.raises(ToolError, match="larger than"):
		await exchange_code(
			cred,
			{"clientId": "cid", "clientSecret": "csecret-1"},
			"code",
			consent,
			client=client,
			integration="svc",
			guard=None,
		)
	assert endless.sent <= MAX_TOKEN_REPLY_BYTES + 2 * 65536


async def test_a_reply_with_thousands_of_gzip_layers_is_refused_at_once() -> None:
	"""More than MAX_ENCODINGS content encodings are refused before any is decoded (curl's
	CVE-2022-32206). Before, 5,000 gzip layers made 5,000 decoders and took 150 MB and a third
	of a second of the event loop; 12,000 took seconds."""
	layers = 2000
	payload = b"{}"
	for _ in range(layers):
		payload = gzipped([payload])

	def handler(request: httpx.Request) -> httpx.Response:
		headers = {"content-encoding": ", ".join(["gzip"] * layers)}
		return httpx.Response(200, headers=headers, stream=Chunks(payload))

	async def refused() -> None:
		with pytest.raises(ToolError, match="names 2000 content encodings"):
			await fetch(handler)

	cost, _ = await cpu_async(refused)
	assert cost < 0.5  # CPU seconds of this thread: refused before any layer is decoded


async def test_a_few_layers_are_still_read() -> None:
	"""MAX_ENCODINGS gzip layers decode as before."""
	payload = b'{"ok": 1}'
	for _ in range(MAX_ENCODINGS):
		payload = gzipped([payload])

	def handler(request: httpx.Request) -> httpx.Response:
		headers = {"content-encoding": ", ".join(["gzip"] * MAX_ENCODINGS)}
		return httpx.Response(
			200, headers={**headers, "content-type": "application/json"}, stream=Chunks(payload)
		)

	assert (await fetch(handler))["body"] == {"ok": 1}
