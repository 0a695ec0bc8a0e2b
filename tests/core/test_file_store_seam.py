"""Bytes enter the file store through one seam, which masks or withholds a secret the run knows.

Before, only MCP blobs were masked (in the MCP package): a binary HTTP reply, base64 media a
JSON reply carried (``response_files``), a generated image, a function tool's own file and a
stored large result went into the store as they came, the secret with them, for the model or
another tool to read back. Now `FileStore.save` screens every file (`openmolt_core.files.screen`):
text is kept masked (in its own encoding), any other file that shows a secret is not kept, and
what the model reads says so (``withheld``). The tests find every caller that saves bytes, so a
new one cannot be forgotten, and drive each with a secret the run knows in a text body, a PNG
``tEXt`` chunk and UTF-16 text.
"""

from __future__ import annotations

import ast
import base64
import json
import struct
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.files import WITHHELD, screen, textual
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-seam-0123456789abcdef"


def _chunk(kind: bytes, body: bytes) -> bytes:
	return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_with_text(text: bytes) -> bytes:
	"""A valid 1x1 PNG with a ``tEXt`` chunk (where tools write metadata: a comment, a prompt)."""
	ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
	pixels = zlib.compress(b"\x00\x00")
	return (
		b"\x89PNG\r\n\x1a\n"
		+ _chunk(b"IHDR", ihdr)
		+ _chunk(b"tEXt", text)
		+ _chunk(b"IDAT", pixels)
		+ _chunk(b"IEND", b"")
	)


CLEAN_PNG = png_with_text(b"Comment\x00made by a test")
PAYLOADS: dict[str, tuple[bytes, str]] = {
	"text": (f"config dump\napi_key={SECRET}\n".encode(), "text/plain"),
	"png-text-chunk": (png_with_text(b"Comment\x00token=" + SECRET.encode()), "image/png"),
	"utf-16": (f"réglages\nclé={SECRET}\n".encode("utf-16"), "text/plain"),
}
KEPT = {  # what a text payload is kept as
	"text": b"config dump\napi_key=[redacted]\n",
	"utf-16": "réglages\nclé=[redacted]\n".encode("utf-16"),
}


def spellings(secret: str) -> list[str]:
	data = secret.encode()
	return [
		secret,
		base64.b64encode(data).decode(),
		base64.urlsafe_b64encode(data).decode().rstrip("="),
		data.hex(),
	]


def assert_no_secret(*texts: str) -> None:
	for text in texts:
		for spelling in spellings(SECRET):
			assert spelling not in text, text[:300]


def stored_texts(folder: Path) -> list[str]:
	"""Every file of a store folder, read as Latin-1 and as UTF-16 (where a secret may hide)."""
	found = [p.read_bytes() for p in folder.rglob("*") if p.is_file()]
	return [d.decode("latin-1") for d in found] + [
		d.decode("utf-16-le", errors="replace") for d in found
	]


async def check_block(om: OpenMolt, block: dict[str, Any], payload: str, media_type: str) -> None:
	"""A text is kept masked (its encoding kept); any other file holding the secret is withheld."""
	if textual(media_type):
		assert "withheld" not in block, block
		kept = await om.files.open(block["file"])
		assert kept.data == KEPT[payload]
		assert block["size"] == len(KEPT[payload])
	else:
		assert "file" not in block and block["withheld"] == WITHHELD, block
		assert block["size"] == len(PAYLOADS[payload][0])


# the callers ----------------------------------------------------------------------------------

# Every call in the packages that hands bytes to a store (``.save(..., media_type=...)``), and
# what drives it in a test. A new caller fails here until a test drives it too.
CALLERS = {
	"openmolt_core/src/openmolt_core/_binding.py:CallFiles.save": "every tool (test_sources)",
	"openmolt_core/src/openmolt_core/files.py:save_screened": "every tool, a run's attachments",
	"openmolt_core/src/openmolt_core/filestore.py:keep_attachments": (
		"tests/serve/test_serve_attachments_kept.py"
	),
	"openmolt_serve/src/openmolt_serve/agui.py:AguiEndpoint._keep": (
		"tests/serve/test_serve_attachments_kept.py"
	),
	"openmolt_core/src/openmolt_core/assembly.py:AgentFiles.save": "every tool (test_sources)",
	"openmolt_core/src/openmolt_core/capabilities/offload.py:store": "test_offload_bytes",
	"openmolt_core/src/openmolt_core/integrations/_decode.py:_save_payload": "response_files",
	"openmolt_core/src/openmolt_core/integrations/_decode.py:decode": "http binary",
	"openmolt_integrations/src/openmolt_integrations/openai_image.py:_save_images": "openai image",
	"openmolt_mcp/src/openmolt_mcp/_tools.py:_save": "tests/ecosystem/test_file_store_seam_mcp.py",
	"openmolt_serve/src/openmolt_serve/a2a.py:OpenMoltExecutor._answer": (
		"tests/serve/test_serve_a2a_files_screened.py"
	),
}


SAVES = ("save", "save_screened")
"""A store's ``save``, and the seam every save of a run's goes through (`files.save_screened`)."""


def _savers(path: Path) -> set[str]:
	found: set[str] = set()

	def walk(node: ast.AST, where: list[str]) -> None:
		for child in ast.iter_child_nodes(node):
			name = getattr(child, "name", None)
			inner = (
				[*where, name]
				if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and name
				else where
			)
			if (
				isinstance(child, ast.Call)
				and isinstance(child.func, ast.Attribute | ast.Name)
				and getattr(child.func, "attr", getattr(child.func, "id", "")) in SAVES
				and any(k.arg == "media_type" for k in child.keywords)
			):
				found.add(f"{path.relative_to(ROOT)}:{'.'.join(where)}")
			walk(child, inner)

	walk(ast.parse(path.read_text("utf-8")), [])
	return found


def test_every_caller_that_saves_bytes_is_known_and_driven() -> None:
	"""The callers of a store's ``save`` in every package are the ones the tests drive."""
	found: set[str] = set()
	for package in sorted(ROOT.glob("openmolt_*/src")):
		for path in package.rglob("*.py"):
			found |= _savers(path)
	assert found == set(CALLERS), sorted(found ^ set(CALLERS))


def test_only_the_store_s_save_writes_a_file() -> None:
	"""In the store, the one writer of files is `FileStore.save`: every byte kept was screened."""
	path = ROOT / "openmolt_core/src/openmolt_core/filestore.py"
	tree = ast.parse(path.read_text("utf-8"))
	writers: set[str] = set()
	for node in ast.walk(tree):
		if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
			for inner in ast.walk(node):
				if isinstance(inner, ast.Name) and inner.id == "_write_private":
					writers.add(node.name)
	assert writers == {"save", "write"}  # `write` is save's worker-thread body


# screening --------------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_screen_masks_text_and_withholds_other_files(payload: str) -> None:
	"""Text is kept masked, in its own encoding; a PNG whose metadata holds the secret is not kept."""
	data, media_type = PAYLOADS[payload]
	kept = screen(data, media_type, frozenset({SECRET}))
	assert kept == KEPT.get(payload)
	assert screen(CLEAN_PNG, "image/png", frozenset({SECRET})) is CLEAN_PNG


def test_screen_reads_a_declared_charset_and_refuses_codecs_no_body_may_choose() -> None:
	"""``charset=utf-16-be`` without a BOM is read as such; punycode or base64 fall back to UTF-8."""
	data = f"key={SECRET}".encode("utf-16-be")
	kept = screen(data, "text/plain; charset=utf-16-be", frozenset({SECRET}))
	assert kept == b"\x00k\x00e\x00y\x00=" + "[redacted]".encode("utf-16-be")
	for charset in ("punycode", "base64", "no-such-codec"):
		out = screen(f"k={SECRET}".encode(), f"text/plain; charset={charset}", frozenset({SECRET}))
		assert out == b"k=[redacted]"


# the sources, through an agent ------------------------------------------------------------------

Driver = Callable[[bytes, str, Path], Awaitable[tuple[OpenMolt, dict[str, Any], ScriptedModel]]]


def _first_result(model: ScriptedModel) -> Any:
	(entry,) = json.loads(model.requests[1].messages[-1].content)["results"]
	assert entry["ok"] is True, entry
	return entry["result"]


async def _function_tool(data: bytes, media_type: str, tmp: Path) -> Any:
	@tool(labels=[])
	async def keep(context: ToolContext) -> Any:
		"""Keep a file."""
		assert context.files is not None
		return await context.files.save(data, media_type=media_type, name="f")

	om = OpenMolt(entry_points=False, files_dir=tmp, secrets=[SECRET])
	model = ScriptedModel([call_tool("local.keep"), finish("done")])
	await om.create_agent(name="A", model=model, tools=[keep]).run("go")
	return om, _first_result(model), model


def _service(data: bytes, media_type: str, *, files: bool) -> Any:
	from openmolt_core.integrations import ApiSetup, BearerCredential, HttpTool, Integration

	def api(request: httpx.Request) -> httpx.Response:
		assert request.headers["authorization"] == f"Bearer {SECRET}"
		if files:
			body = {"data": {"data": base64.b64encode(data).decode(), "mimeType": media_type}}
			return httpx.Response(200, json=body)
		return httpx.Response(200, content=data, headers={"content-type": media_type})

	spec = Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.svc.example"),
		credential_setup=[
			BearerCredential(headers={"Authorization": "Bearer {{ config.apiKey }}"})
		],
		labels={"*": []},
		tools=[
			HttpTool(
				handle="get",
				description="d",
				endpoint="/f",
				**({"response_files": ["data"]} if files else {"response_format": "binary"}),
			)
		],
	)
	return spec, httpx.AsyncClient(transport=httpx.MockTransport(api))


async def _http(data: bytes, media_type: str, tmp: Path, *, files: bool) -> Any:
	spec, http = _service(data, media_type, files=files)
	om = OpenMolt(entry_points=False, files_dir=tmp, http_client=http)
	om.register_integration("svc", spec)
	model = ScriptedModel([call_tool("svc.get"), finish("done")])
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[{"integration": "svc", "credential": {"config": {"apiKey": SECRET}}}],
	)
	await agent.run("go")
	result = _first_result(model)
	return om, (result["data"] if files else result), model


async def _http_binary(data: bytes, media_type: str, tmp: Path) -> Any:
	return await _http(data, media_type, tmp, files=False)


async def _http_response_files(data: bytes, media_type: str, tmp: Path) -> Any:
	return await _http(data, media_type, tmp, files=True)


async def _openai_image(data: bytes, media_type: str, tmp: Path) -> Any:
	from openmolt_integrations import openai_image

	def api(request: httpx.Request) -> httpx.Response:
		body = {"data": [{"b64_json": base64.b64encode(data).decode()}], "output_format": "png"}
		return httpx.Response(200, json=body)

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(plugins=[openai_image], entry_points=False, files_dir=tmp, http_client=http)
	model = ScriptedModel([call_tool("openaiImage.generateImage", prompt="a fox"), finish("ok")])
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[{"integration": "openaiImage", "credential": {"config": {"apiKey": SECRET}}}],
	)
	await agent.run("go")
	(image,) = _first_result(model)["images"]
	return om, image, model


async def _application(data: bytes, media_type: str, tmp: Path) -> Any:
	om = OpenMolt(entry_points=False, files_dir=tmp, secrets=[SECRET])
	model = ScriptedModel([])
	return om, await om.files.save(data, media_type=media_type, name="upload"), model


SOURCES: dict[str, tuple[Driver, str | None]] = {
	# name: (driver, the media type it keeps the file under; None: the payload's own)
	"function tool": (_function_tool, None),
	"http binary": (_http_binary, None),
	"response_files": (_http_response_files, None),
	"openai image": (_openai_image, "image/png"),
	"application": (_application, None),
}


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
@pytest.mark.parametrize("source", sorted(SOURCES))
async def test_sources(source: str, payload: str, tmp_path: Path) -> None:
	"""Each source's file with the secret is kept masked (text) or withheld; nothing holds it."""
	driver, kept_as = SOURCES[source]
	data, media_type = PAYLOADS[payload]
	om, block, model = await driver(data, media_type, tmp_path)
	try:
		await check_block(om, block, payload, kept_as or media_type)
		sent = " ".join(repr(m) for r in model.requests for m in r.messages)
		assert_no_secret(sent, *stored_texts(tmp_path))
	finally:
		await om.aclose()


@pytest.mark.parametrize("source", sorted(SOURCES))
async def test_a_clean_file_is_kept_as_it_came(source: str, tmp_path: Path) -> None:
	"""A file that shows no secret is kept byte for byte, whatever its source."""
	driver, _ = SOURCES[source]
	om, block, _ = await driver(CLEAN_PNG, "image/png", tmp_path)
	try:
		assert (await om.files.open(block["file"])).data == CLEAN_PNG
	finally:
		await om.aclose()


async def test_offload_bytes(tmp_path: Path) -> None:
	"""A large bytes result holding the secret is not stored; the model reads why, not the bytes."""
	data = PAYLOADS["png-text-chunk"][0] + b"\x00" * 4000

	@tool(labels=[])
	def dump() -> bytes:
		"""A large binary result."""
		return data

	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	model = ScriptedModel([call_tool("local.dump"), finish("done")])
	agent = om.create_agent(name="A", model=model, tools=[dump], config={"max_result_chars": 1_000})
	try:
		await agent.run("go")
		result = _first_result(model)
		assert result["withheld"] == WITHHELD and "file" not in result
		sent = " ".join(repr(m) for r in model.requests for m in r.messages)
		assert_no_secret(sent, *stored_texts(tmp_path))
	finally:
		await om.aclose()


async def test_a_store_the_application_gives_gets_screened_bytes(tmp_path: Path) -> None:
	"""A tool's store that is not OpenMolt's (an application's, a test double) gets screened bytes.

	Through the loop's own per-call step (`for_call`): a store the kernel does not know is
	wrapped like the instance's, never handed to the tool as it is (fail closed).
	"""
	from openmolt_core._binding import for_call
	from openmolt_core.filestore import FileStore

	class Plain:
		"""A store with only save and open: no screening, no origin."""

		def __init__(self) -> None:
			self.store = FileStore(tmp_path)

		async def save(self, data: bytes, *, media_type: str = "", name: str = "") -> Any:
			return await self.store.save(data, media_type=media_type, name=name)

	plain: Any = Plain()
	run: Any = type("Run", (), {"run_id": "r", "call": "tool:1:0:x", "user": None})()
	context = ToolContext("a", "x", redact=frozenset({"sk-only-this-call-99"}), files=plain)
	files: Any = for_call(context, {}, run).files
	assert files is not plain
	import gc

	gc.collect()  # instances other tests left in cycles: their secrets (a "k") are known until then
	text = await files.save(b"kept-note=sk-only-this-call-99", media_type="text/plain")
	assert (await plain.store.open(text["file"])).data == b"kept-note=[redacted]"
	image = await files.save(png_with_text(b"c\x00sk-only-this-call-99"), media_type="image/png")
	assert image["withheld"] == WITHHELD
