"""An MCP server's bytes go through the store's one seam; its references show only its own files.

Blobs were masked in the MCP package before the store kept them; the store screens every file now
(`openmolt_core.files.screen`), so the package no longer does. And an image block was attached to
the model's next request whatever file its reference named: a server that echoed a reference (the
model's, or one it saw in another end user's run) had that file shown to the model. Now an image
is shown only when the call whose result names it kept it, and a run for one end user cannot read
a file another user's run kept.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.server import MCPServer

from openmolt import OpenMolt
from openmolt_core.files import WITHHELD
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool
from openmolt_mcp import MCP
from tests._results import results_at

pytestmark = pytest.mark.anyio

SECRET = "sk-seam-0123456789abcdef"
CLEAN_PNG = base64.b64decode(
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_WITH_SECRET = (
	CLEAN_PNG[:33] + b"\x00\x00\x00\x20tEXtComment\x00" + SECRET.encode() + CLEAN_PNG[33:]
)
TEXT = f"config dump\napi_key={SECRET}\n".encode()
UTF16 = f"réglages\nclé={SECRET}\n".encode("utf-16")


def server() -> MCPServer:
	made = MCPServer("seam")

	@made.tool()
	def blobs() -> types.CallToolResult:
		"""A text, a UTF-16 text and an image whose metadata hold the secret; a clean image."""

		def blob(data: bytes, uri: str) -> types.EmbeddedResource:
			encoded = base64.b64encode(data).decode()
			contents = types.BlobResourceContents(uri=uri, blob=encoded, mime_type="text/plain")
			return types.EmbeddedResource(resource=contents)

		return types.CallToolResult(
			content=[
				blob(TEXT, "file:///a.txt"),
				blob(UTF16, "file:///b.txt"),
				types.ImageContent(
					data=base64.b64encode(PNG_WITH_SECRET).decode(), mime_type="image/png"
				),
				types.ImageContent(
					data=base64.b64encode(CLEAN_PNG).decode(), mime_type="image/png"
				),
			]
		)

	@made.tool()
	def show(ref: str) -> types.CallToolResult:
		"""Echo a file reference as an image block (a server pointing at a file it did not keep)."""
		block = {"type": "image", "file": ref, "mediaType": "image/png"}
		return types.CallToolResult(content=[], structured_content=block)

	@made.tool()
	def show_among(ref: str) -> types.CallToolResult:
		"""The echoed reference in a result shaped as media beside structured content."""
		blocks = [{"type": "image", "file": ref, "mediaType": "image/png"}]
		return types.CallToolResult(
			content=[], structured_content={"structuredContent": {}, "content": blocks}
		)

	return made


def _stored(folder: Path) -> list[bytes]:
	return [p.read_bytes() for p in folder.rglob("*") if p.is_file()]


async def test_mcp_blobs_are_screened_by_the_store(tmp_path: Path) -> None:
	"""Texts are kept masked (UTF-16 stays UTF-16), the image with the secret is withheld."""
	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	om.register_integration("h", MCP.server(server(), labels={"*": []}))
	model = ScriptedModel([call_tool("h.blobs"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	try:
		with anyio.fail_after(30):
			await agent.run("go")
		(entry,) = results_at(model, 1)
		text, utf16, image, clean = entry["result"]
		assert (await om.files.open(text["file"])).data == b"config dump\napi_key=[redacted]\n"
		kept = (await om.files.open(utf16["file"])).data
		assert kept.decode("utf-16") == "réglages\nclé=[redacted]\n"
		assert image["withheld"] == WITHHELD and "file" not in image
		assert (await om.files.open(clean["file"])).data == CLEAN_PNG
		(shown,) = model.requests[1].messages[-1].attachments  # the server's own clean image
		assert base64.b64decode(shown.data) == CLEAN_PNG
		for data in _stored(tmp_path):
			assert SECRET.encode() not in data and SECRET.encode("utf-16-le") not in data
	finally:
		await om.aclose()


@tool(labels=[])
async def snap(context: ToolContext) -> Any:
	"""Take a private photo (kept in the store)."""
	assert context.files is not None
	return await context.files.save(CLEAN_PNG, media_type="image/png", name="photo.png")


@tool(labels=[])
async def peek(ref: str, context: ToolContext) -> str:
	"""Read a stored file.

	Args:
		ref: The file reference.
	"""
	assert context.files is not None
	return f"{len((await context.files.open(ref)).data)} bytes"


def _agent(om: OpenMolt, model: ScriptedModel) -> Any:
	return om.create_agent(
		name="A",
		model=model,
		integrations=[{"integration": "h"}],
		tools=[snap, peek],
		taint_policy="allow",
	)


@pytest.mark.parametrize("tool_name", ["show", "show_among"])
async def test_an_echoed_reference_is_not_shown_in_the_same_run(
	tool_name: str, tmp_path: Path
) -> None:
	"""The model's own file, echoed back by the server as an image block, is not attached."""
	om = OpenMolt(entry_points=False, files_dir=tmp_path)
	om.register_integration("h", MCP.server(server(), labels={"*": []}))

	def echo(request: Any) -> dict[str, Any]:
		(taken,) = _results_of(request)
		return call_tool(f"h.{tool_name}", ref=taken["result"]["file"])

	model = ScriptedModel([call_tool("local.snap"), echo, finish(result="ok")])
	try:
		with anyio.fail_after(30):
			await _agent(om, model).run("go")
		assert model.requests[2].messages[-1].attachments == []
		(entry,) = results_at(model, 2)
		assert entry["ok"] is True  # the reference is still the model's to read: only not shown
	finally:
		await om.aclose()


def _results_of(request: Any) -> list[dict[str, Any]]:
	found: list[dict[str, Any]] = json.loads(request.messages[-1].content)["results"]
	return found


async def test_another_end_user_s_file_is_neither_shown_nor_read(tmp_path: Path) -> None:
	"""Two end users of one instance: a reference to alice's photo, echoed by the server in bob's
	run, is not attached to bob's request, and bob's tools cannot read it; alice's can, and so
	can the application."""
	om = OpenMolt(entry_points=False, files_dir=tmp_path)
	om.register_integration("h", MCP.server(server(), labels={"*": []}))
	alice = ScriptedModel([call_tool("local.snap"), finish(result="ok")])
	try:
		with anyio.fail_after(30):
			assert (await _agent(om, alice).run("photo", user="alice")).ok
		(taken,) = results_at(alice, 1)
		ref = taken["result"]["file"]
		bob = ScriptedModel(
			[
				call_tool("h.show", ref=ref),
				call_tool("local.peek", ref=ref),
				finish(result="ok"),
			]
		)
		with anyio.fail_after(30):
			await _agent(om, bob).run("look", user="bob")
		assert bob.requests[1].messages[-1].attachments == []
		(read,) = results_at(bob, 2)
		assert read["ok"] is False and "unknown file reference" in read["error"], read
		operator = ScriptedModel([call_tool("local.peek", ref=ref), finish(result="ok")])
		with anyio.fail_after(30):
			await _agent(om, operator).run("look")
		(read,) = results_at(operator, 1)
		assert read["ok"] is False and "unknown file reference" in read["error"], read
		again = ScriptedModel([call_tool("local.peek", ref=ref), finish(result="ok")])
		with anyio.fail_after(30):
			await _agent(om, again).run("look", user="alice")
		(read,) = results_at(again, 1)
		assert read == {**read, "ok": True, "result": f"{len(CLEAN_PNG)} bytes"}
		assert (await om.files.open(ref)).data == CLEAN_PNG
	finally:
		await om.aclose()
