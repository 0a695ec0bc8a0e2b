"""An MCP server's bytes go through the store's one seam.

Blobs were masked in the MCP package before the store kept them; the store screens every file now
(`openmolt_core.files.screen`), so the package no longer does.
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
from openmolt_mcp import MCP

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

	return made


def _stored(folder: Path) -> list[bytes]:
	return [p.read_bytes() for p in folder.rglob("*") if p.is_file()]


def _results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
	found: list[dict[str, Any]] = json.loads(model.requests[request].messages[-1].content)[
		"results"
	]
	return found


async def test_mcp_blobs_are_screened_by_the_store(tmp_path: Path) -> None:
	"""Texts are kept masked (UTF-16 stays UTF-16), the image with the secret is withheld."""
	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	om.register_integration("h", MCP.server(server(), labels={"*": []}))
	model = ScriptedModel([call_tool("h.blobs"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	try:
		with anyio.fail_after(30):
			await agent.run("go")
		(entry,) = _results(model, 1)
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
