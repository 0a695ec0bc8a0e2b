import base64
import email
import email.policy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore, split_range
from openmolt_core.integrations import ApiSetup, HttpTool, Integration, file_info_tool
from openmolt_core.integrations.file_info import plan_chunks
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.integrations.templating import render_string
from openmolt_core.tools import ToolContext
from openmolt_integrations._mime import rfc2822

pytestmark = pytest.mark.anyio


async def no_sleep(_: float) -> None:
	return None


def context(handler: Any, files: FileStore | None) -> ToolContext:
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	return ToolContext(
		agent="a",
		integration="svc",
		config={},
		http=lambda: client,
		files=files,
		extras={"retry_policy": RetryPolicy(sleep=no_sleep)},
	)


def integration(tool: HttpTool) -> Integration:
	return Integration(
		id="svc", name="Svc", api_setup=ApiSetup(base_url="https://api.example.com"), tools=[tool]
	)


def recorder(seen: list[httpx.Request], payload: Any = None) -> Any:
	def handler(request: httpx.Request) -> httpx.Response:
		request.read()
		seen.append(request)
		return httpx.Response(200, json=payload if payload is not None else {"ok": True})

	return handler


# rfc2822 (Gmail's filter)

GMAIL_FILTERS = {"rfc2822": rfc2822}


def parse_mail(raw: str) -> email.message.EmailMessage:
	message = email.message_from_bytes(raw.encode("ascii"), policy=email.policy.default)
	assert isinstance(message, email.message.EmailMessage)
	return message


def test_rfc2822_keeps_non_ascii_body_subject_and_names() -> None:
	"""Non-ASCII text survives: UTF-8 body with a transfer encoding, encoded-word headers."""
	raw = render_string(
		"{{ input | rfc2822 }}",
		filters=GMAIL_FILTERS,
		data={
			"input": {
				"from": "Zoë Ämbré <zoe@example.com>",
				"to": ["Bø Ünï <bo@example.com>", "cy@example.com"],
				"subject": "Re: Facture — payée ✓",
				"body": "Paid today — thanks! Ça va.",
				"html": "<p>Paid — 日本</p>",
			}
		},
	)
	raw.encode("ascii")  # the message itself is pure ASCII
	assert "Content-Transfer-Encoding: quoted-printable" in raw or "base64" in raw
	assert "=?utf-8?" in raw
	message = parse_mail(raw)
	assert message["Subject"] == "Re: Facture — payée ✓"
	assert message["From"] == "Zoë Ämbré <zoe@example.com>"
	assert message["To"] == "Bø Ünï <bo@example.com>, cy@example.com"
	plain = message.get_body(preferencelist=("plain",))
	html = message.get_body(preferencelist=("html",))
	assert plain is not None and html is not None
	assert plain.get_content().strip() == "Paid today — thanks! Ça va."
	assert html.get_content().strip() == "<p>Paid — 日本</p>"


def test_rfc2822_refuses_header_injection() -> None:
	"""A line break in a header value is a ToolError, not an extra header."""
	with pytest.raises(ToolError, match="could not build the email"):
		render_string(
			"{{ input | rfc2822 }}",
			{"input": {"to": "a@example.com", "subject": "hi\nBcc: evil@example.com", "body": "x"}},
			filters=GMAIL_FILTERS,
		)


def test_rfc2822_is_gmails_own_filter() -> None:
	"""The filter is registered by Gmail, not built into the engine: elsewhere it is unknown."""
	from openmolt_integrations import gmail

	assert gmail.INTEGRATION.filters == GMAIL_FILTERS
	with pytest.raises(ToolError):
		render_string("{{ input | rfc2822 }}", {"input": {"to": "a@example.com"}})


# response_files


async def test_response_files_replace_inline_base64_with_file_references(tmp_path: Path) -> None:
	"""Each payload at a listed path is saved and replaced; other parts and paths are untouched."""
	png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
	answer = {
		"candidates": [
			{
				"content": {
					"parts": [
						{"text": "Here."},
						{
							"inlineData": {
								"mimeType": "image/png",
								"data": base64.b64encode(png).decode(),
							}
						},
					]
				}
			},
			{"content": {"parts": [{"inlineData": {"mimeType": "image/png", "data": "%%%"}}]}},
		],
		"data": base64.urlsafe_b64encode(b"\xfb\xff attachment").decode().rstrip("="),
	}
	store = FileStore(tmp_path)
	tool = HttpTool(
		handle="gen",
		description="d",
		endpoint="/gen",
		response_files=["candidates[].content.parts[].inlineData", "data", "missing[].path"],
	)
	out = await execute_http_tool(tool, integration(tool), {}, context(recorder([], answer), store))
	parts = out["candidates"][0]["content"]["parts"]
	assert parts[0] == {"text": "Here."}
	image = parts[1]["inlineData"]
	assert image["file"].startswith("openmolt-file:") and image["mediaType"] == "image/png"
	assert image["size"] == len(png)
	assert (await store.open(image["file"])).data == png
	# Not base64: left as it was rather than guessed at.
	assert out["candidates"][1]["content"]["parts"][0]["inlineData"]["data"] == "%%%"
	attachment = out["data"]
	assert attachment["mediaType"] == "application/octet-stream"
	assert (await store.open(attachment["file"])).data == b"\xfb\xff attachment"


async def test_response_files_apply_inside_response_headers_output(tmp_path: Path) -> None:
	"""With response_headers the payload is replaced inside the body."""
	store = FileStore(tmp_path)

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, json={"data": "aGk="}, headers={"X-Id": "7"})

	tool = HttpTool(
		handle="att",
		description="d",
		endpoint="/a",
		response_files=["data"],
		response_headers=["X-Id"],
	)
	out = await execute_http_tool(tool, integration(tool), {}, context(handler, store))
	assert out["headers"] == {"X-Id": "7"}
	assert (await store.open(out["body"]["data"]["file"])).data == b"hi"


# file_base64


async def test_file_base64_embeds_a_file_in_a_json_body(tmp_path: Path) -> None:
	"""A file reference becomes the base64 of its bytes inside the JSON body."""
	store = FileStore(tmp_path)
	saved = await store.save(b"\x00\x01image-bytes", media_type="image/png", name="a.png")
	seen: list[httpx.Request] = []
	tool = HttpTool(
		handle="up",
		description="d",
		method="POST",
		endpoint="/up",
		body={"image": {"bytes": "{{ input.image | file_base64 }}", "mime": "image/png"}},
	)
	await execute_http_tool(
		tool, integration(tool), {"image": saved["file"]}, context(recorder(seen), store)
	)
	body = json.loads(seen[0].content)
	assert base64.b64decode(body["image"]["bytes"]) == b"\x00\x01image-bytes"


async def test_file_base64_refuses_files_over_the_cap(tmp_path: Path) -> None:
	"""The cap given to the filter is checked before reading, with a message naming both sizes."""
	store = FileStore(tmp_path)
	saved = await store.save(b"x" * 2000)
	seen: list[httpx.Request] = []
	tool = HttpTool(
		handle="up",
		description="d",
		method="POST",
		endpoint="/up",
		body={"contentBytes": "{{ input.file | file_base64: 1000 }}"},
	)
	with pytest.raises(ToolError, match="2000 bytes, more than the 1000 allowed") as info:
		await execute_http_tool(
			tool, integration(tool), {"file": saved["file"]}, context(recorder(seen), store)
		)
	assert info.value.tool == "svc.up"
	assert seen == []


async def test_file_base64_with_a_range_and_without_a_store(tmp_path: Path) -> None:
	"""A ranged data: URL embeds the slice; without a file store the filter fails clearly."""
	seen: list[httpx.Request] = []
	tool = HttpTool(
		handle="up",
		description="d",
		method="POST",
		endpoint="/up",
		body={"b": "{{ input.file | file_base64 }}"},
	)
	ref = "data:text/plain;base64," + base64.b64encode(b"0123456789").decode() + "#bytes=2-4"
	await execute_http_tool(
		tool, integration(tool), {"file": ref}, context(recorder(seen), FileStore(tmp_path))
	)
	assert base64.b64decode(json.loads(seen[0].content)["b"]) == b"234"
	with pytest.raises(ToolError, match="file_base64"):
		await execute_http_tool(tool, integration(tool), {"file": ref}, context(recorder([]), None))


async def test_a_missing_file_drops_the_object_describing_it(tmp_path: Path) -> None:
	"""An exact file filter over a missing input drops its object; given, it fills type and bytes."""
	store = FileStore(tmp_path)
	saved = await store.save(b"\x89PNG frame", media_type="image/png")
	seen: list[httpx.Request] = []
	tool = HttpTool(
		handle="gen",
		description="d",
		method="POST",
		endpoint="/gen",
		headers={"X-Type": "{{ input.image | file_media_type }}"},
		body={
			"instances": [
				{
					"prompt": "{{ input.prompt }}",
					"image": {
						"bytesBase64Encoded": "{{ input.image | file_base64 }}",
						"mimeType": "{{ input.image | file_media_type }}",
					},
				}
			],
			"top": "{{ input.image | file_base64: 100 }}",
		},
	)
	ctx = context(recorder(seen), store)
	await execute_http_tool(tool, integration(tool), {"prompt": "a cat"}, ctx)
	assert json.loads(seen[0].content) == {"instances": [{"prompt": "a cat"}]}
	assert "x-type" not in seen[0].headers
	await execute_http_tool(
		tool, integration(tool), {"prompt": "a cat", "image": saved["file"]}, ctx
	)
	body = json.loads(seen[1].content)
	image = body["instances"][0]["image"]
	assert image["mimeType"] == "image/png"
	assert base64.b64decode(image["bytesBase64Encoded"]) == b"\x89PNG frame"
	assert base64.b64decode(body["top"]) == b"\x89PNG frame"
	assert seen[1].headers["x-type"] == "image/png"


# byte ranges


def test_split_range() -> None:
	"""A trailing #bytes=a-b is split off; open ends and reversed ranges are handled."""
	assert split_range("openmolt-file:abcdefgh#bytes=0-99") == ("openmolt-file:abcdefgh", (0, 99))
	assert split_range("fileSystem:v.mp4#bytes=100-") == ("fileSystem:v.mp4", (100, None))
	assert split_range("openmolt-file:abcdefgh") == ("openmolt-file:abcdefgh", None)
	with pytest.raises(ToolError, match="ends before it starts"):
		split_range("openmolt-file:abcdefgh#bytes=9-3")


async def test_ranges_of_stored_and_file_system_files(tmp_path: Path) -> None:
	"""Store and fileSystem references resolve to the slice; out-of-range offsets are refused."""
	store_dir, fs_dir = tmp_path / "store", tmp_path / "fs"
	fs_dir.mkdir()
	(fs_dir / "clip.mp4").write_bytes(bytes(range(100)))
	store = FileStore(store_dir, file_system=lambda p: fs_dir / p)
	saved = await store.save(b"abcdefghij", media_type="text/plain", name="t.txt")
	part = await store.open(f"{saved['file']}#bytes=3-5")
	assert (part.data, part.media_type, part.name) == (b"def", "text/plain", "t.txt")
	assert (await store.open(f"{saved['file']}#bytes=7-")).data == b"hij"
	clip = await store.open("fileSystem:clip.mp4#bytes=90-99")
	assert clip.data == bytes(range(90, 100)) and clip.media_type == "video/mp4"
	with pytest.raises(ToolError, match="has 10 bytes"):
		await store.open(f"{saved['file']}#bytes=5-10")
	with pytest.raises(ToolError, match="has 100 bytes"):
		await store.open("fileSystem:clip.mp4#bytes=100-")
	assert await store.info("fileSystem:clip.mp4") == {
		"file": "fileSystem:clip.mp4",
		"size": 100,
		"mediaType": "video/mp4",
		"name": "clip.mp4",
	}
	assert (await store.info(f"{saved['file']}#bytes=0-3"))["size"] == 4


async def test_binary_body_sends_a_byte_range_chunk(tmp_path: Path) -> None:
	"""A binary tool body of '<ref>#bytes=a-b' sends exactly that chunk."""
	store = FileStore(tmp_path)
	saved = await store.save(bytes(range(50)), media_type="video/mp4")
	seen: list[httpx.Request] = []
	tool = HttpTool(
		handle="chunk",
		description="d",
		method="PUT",
		endpoint="/upload",
		request_format="binary",
		headers={"Content-Range": "bytes {{ input.first }}-{{ input.last }}/{{ input.total }}"},
		body="{{ input.file }}#bytes={{ input.first }}-{{ input.last }}",
	)
	await execute_http_tool(
		tool,
		integration(tool),
		{"file": saved["file"], "first": 20, "last": 29, "total": 50},
		context(recorder(seen), store),
	)
	assert seen[0].content == bytes(range(20, 30))
	assert seen[0].headers["content-range"] == "bytes 20-29/50"
	assert seen[0].headers["content-type"] == "video/mp4"


# fileInfo


def test_plan_chunks() -> None:
	"""Chunks cover the file exactly; mergeRemainder folds the tail into the last chunk."""
	plain = plan_chunks("openmolt-file:abcdefgh", 25, 10)
	assert [(c["start"], c["end"]) for c in plain] == [(0, 9), (10, 19), (20, 24)]
	assert plain[2]["file"] == "openmolt-file:abcdefgh#bytes=20-24" and plain[2]["size"] == 5
	merged = plan_chunks("r", 25, 10, merge_remainder=True)
	assert [(c["start"], c["end"]) for c in merged] == [(0, 9), (10, 24)]
	assert [(c["start"], c["end"]) for c in plan_chunks("r", 7, 10, merge_remainder=True)] == [
		(0, 6)
	]
	with pytest.raises(ToolError, match="at most 1000"):
		plan_chunks("r", 5000, 2)
	with pytest.raises(ToolError, match="empty"):
		plan_chunks("r", 0, 10)


async def test_file_info_tool_reports_size_and_chunks(tmp_path: Path) -> None:
	"""fileInfo tells the size and plans ranged references the store can open."""
	store = FileStore(tmp_path)
	saved = await store.save(bytes(range(30)), media_type="video/mp4", name="v.mp4")
	tool = file_info_tool(scopes=["upload"])
	ctx = context(recorder([]), store)
	info = await tool.execute({"file": saved["file"]}, ctx)
	assert info == {"file": saved["file"], "size": 30, "mediaType": "video/mp4", "name": "v.mp4"}
	planned = await tool.execute({"file": saved["file"], "chunkSize": 12}, ctx)
	assert planned["chunkCount"] == 3
	joined = b"".join([(await store.open(c["file"])).data for c in planned["chunks"]])
	assert joined == bytes(range(30))
	with pytest.raises(ToolError, match="without #bytes"):
		await tool.execute({"file": f"{saved['file']}#bytes=0-9", "chunkSize": 5}, ctx)
	assert tool.scopes == ("upload",)
