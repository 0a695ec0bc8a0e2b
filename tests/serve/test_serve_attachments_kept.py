"""A caller's files (A2A file parts, AG-UI media parts, ``agent.run(attachments=...)``) enter the
file store through the kernel's one seam before the model sees them.

They went straight to the model: a caller's PNG whose metadata held a secret of the instance was
sent on to the provider as it came, nothing was kept, no owner was written, and the run's tools
could not read the file. Now every new run's files are saved through
`openmolt_core.filestore.keep_attachments` (screened by the store, owned by the run's user): the model
is shown what was kept, and the first turn lists each file's reference (or why it was withheld).
"""

from __future__ import annotations

import base64
import json
import struct
import uuid
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

from openmolt import Attachment, OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.files import WITHHELD
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

pytestmark = pytest.mark.anyio

TOKEN = "attach-token-for-tests-0123456789"
SECRET = "sk-attach-0123456789abcdef"


def _chunk(kind: bytes, body: bytes) -> bytes:
	return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(text: bytes) -> bytes:
	"""A 1x1 PNG whose tEXt chunk holds ``text`` (uncompressed: a secret there shows)."""
	ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
	return (
		b"\x89PNG\r\n\x1a\n"
		+ _chunk(b"IHDR", ihdr)
		+ _chunk(b"tEXt", text)
		+ _chunk(b"IDAT", zlib.compress(b"\x00\x00"))
		+ _chunk(b"IEND", b"")
	)


LEAKY = png(b"Comment\x00token=" + SECRET.encode())
CLEAN = png(b"Comment\x00a receipt")


def b64(data: bytes) -> str:
	return base64.b64encode(data).decode()


def first_turn(model: ScriptedModel) -> tuple[dict[str, Any], list[bytes]]:
	"""The first turn the model read, and the bytes of the files it was shown."""
	first = model.requests[0].messages[0]
	return json.loads(first.content), [base64.b64decode(a.data) for a in first.attachments]


def stored(folder: Path) -> list[bytes]:
	return [p.read_bytes() for p in folder.rglob("*") if p.is_file()]


def a2a_message(parts: list[Part]) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=parts)
	)


async def a2a_send(tmp_path: Path, parts: list[Part]) -> tuple[OpenMolt, ScriptedModel, Any]:
	"""Serve the agent Helper over A2A, send one message, return the task the client read."""
	model = ScriptedModel([finish({"result": "Seen."})])
	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		client = await create_client(
			f"{server.url}/a2a/Helper",
			client_config=ClientConfig(httpx_client=http, streaming=False),
		)
		try:
			(answer,) = [r async for r in client.send_message(a2a_message(parts))]
		except Exception as exc:  # the SDK's error, for a test to read
			return om, model, exc
	return om, model, answer.task


async def test_an_a2a_caller_s_images_are_kept_screened_and_the_leaky_one_never_reaches_the_model(
	tmp_path: Path,
) -> None:
	"""The clean PNG is shown and kept (its reference in the first turn); the leaky one is withheld."""
	parts = [
		Part(text="Look"),
		Part(raw=LEAKY, media_type="image/png", filename="leaky.png"),
		Part(raw=CLEAN, media_type="image/png", filename="clean.png"),
	]
	om, model, task = await a2a_send(tmp_path, parts)
	assert task.status.state == TaskState.TASK_STATE_COMPLETED
	turn, shown = first_turn(model)
	assert shown == [CLEAN]
	withheld, kept = turn["files"]
	assert withheld == {
		"mediaType": "image/png",
		"size": len(LEAKY),
		"name": "leaky.png",
		"withheld": WITHHELD,
	}
	assert (kept["name"], kept["mediaType"]) == ("clean.png", "image/png")
	assert (await om.files.open(kept["file"])).data == CLEAN
	assert not any(SECRET.encode() in data for data in stored(tmp_path))
	await om.aclose()


async def test_an_a2a_file_larger_than_a_message_takes_fails_the_task_saying_so(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A file past `MAX_ATTACHMENT_BYTES` is refused with its size and the fix; nothing runs."""
	monkeypatch.setattr("openmolt_serve.a2a.MAX_ATTACHMENT_BYTES", 64)
	om, model, task = await a2a_send(
		tmp_path, [Part(raw=CLEAN, media_type="image/png", filename="big.png")]
	)
	assert task.status.state == TaskState.TASK_STATE_FAILED
	(note,) = [p.text for p in task.status.message.parts]
	assert f"'big.png' is {len(CLEAN)} bytes, more than the 64" in note
	assert model.requests == []
	await om.aclose()


async def test_an_a2a_image_type_the_card_does_not_list_is_refused_before_any_run(
	tmp_path: Path,
) -> None:
	"""An image/bmp part is the SDK's -32005 (content type not supported): no run, nothing kept."""
	om, model, refused = await a2a_send(
		tmp_path, [Part(raw=CLEAN, media_type="image/bmp", filename="x.bmp")]
	)
	assert "image/bmp" in str(refused) and "not supported" in str(refused).lower()
	assert model.requests == []
	await om.aclose()
	assert stored(tmp_path) == []


async def agui_run(tmp_path: Path, content: list[dict[str, Any]]) -> tuple[OpenMolt, Any, Any]:
	"""Serve the agent Helper over AG-UI, POST one user message; the model and the response."""
	model = ScriptedModel([finish({"result": "Seen."})])
	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	body = {
		"threadId": "t-1",
		"runId": uuid.uuid4().hex,
		"state": {},
		"messages": [{"id": "m1", "role": "user", "content": content}],
		"tools": [],
		"context": [],
		"forwardedProps": {},
	}
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(base_url=server.url, headers=headers, timeout=20) as http,
	):
		response = await http.post("/agui/Helper", json=body)
	return om, model, response


def image(data: bytes, media_type: str) -> dict[str, Any]:
	return {"type": "image", "source": {"type": "data", "value": b64(data), "mimeType": media_type}}


async def test_agui_images_the_model_takes_are_shown_others_kept_for_the_tools(
	tmp_path: Path,
) -> None:
	"""A PNG is shown and kept; a BMP is kept only (its reference in the input); a leaky one neither."""
	bmp = b"BM" + b"\x00" * 60
	content = [
		{"type": "text", "text": "Look"},
		image(CLEAN, "image/png"),
		image(bmp, "image/bmp"),
		image(LEAKY, "image/png"),
	]
	om, model, response = await agui_run(tmp_path, content)
	assert response.status_code == 200
	turn, shown = first_turn(model)
	assert shown == [CLEAN]
	kept_png, withheld = turn["files"]
	assert (await om.files.open(kept_png["file"])).data == CLEAN
	assert withheld["withheld"] == WITHHELD
	(kept_bmp,) = turn["input"]["files"]
	assert kept_bmp["mediaType"] == "image/bmp"
	assert (await om.files.open(kept_bmp["file"])).data == bmp
	assert not any(SECRET.encode() in data for data in stored(tmp_path))
	await om.aclose()


async def test_an_agui_file_larger_than_a_message_takes_is_413(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A media part past `MAX_ATTACHMENT_BYTES` is refused before any run, naming the limit."""
	monkeypatch.setattr("openmolt_serve.agui.MAX_ATTACHMENT_BYTES", 64)
	om, model, response = await agui_run(tmp_path, [image(CLEAN, "image/png")])
	assert response.status_code == 413
	assert "more than the 64 bytes" in response.json()["error"]
	assert model.requests == []
	await om.aclose()


async def test_a_run_s_tools_read_its_files_by_reference_and_another_user_s_run_cannot(
	tmp_path: Path,
) -> None:
	"""Alice's run reads the file it was given; Bob's run, given the same reference, finds none."""

	@tool(labels=[])
	async def peek(context: ToolContext, file: str) -> int:
		"""Read a file.

		Args:
			file: Its reference.
		"""
		assert context.files is not None
		return len((await context.files.open(file)).data)

	def peek_first(request: Any) -> dict[str, Any]:
		(kept,) = json.loads(request.messages[0].content)["files"]
		seen.append(kept["file"])
		return call_tool("local.peek", file=kept["file"])

	seen: list[str] = []
	model = ScriptedModel(
		[peek_first, finish("read"), lambda _: call_tool("local.peek", file=seen[0]), finish("no")]
	)
	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	agent = om.create_agent(name="A", model=model, tools=[peek])
	given = [Attachment("image/png", b64(CLEAN), "c.png")]
	await agent.run("Look", attachments=given, user="alice")
	await agent.run("Look", user="bob")
	(alice,) = json.loads(model.requests[1].messages[-1].content)["results"]
	(bob,) = json.loads(model.requests[3].messages[-1].content)["results"]
	assert alice["ok"] is True and alice["result"] == len(CLEAN)
	assert bob["ok"] is False and "unknown file reference" in json.dumps(bob)
	await om.aclose()


async def test_agent_run_attachments_are_screened_too_and_a_text_file_is_shown_masked(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The Python path goes through the same seam; bad base64 and a file too large name the field."""
	model = ScriptedModel([finish("ok")])
	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	agent = om.create_agent(name="A", model=model)
	note = f"key {SECRET}".encode()
	given = [
		Attachment("image/png", b64(LEAKY), "l.png"),
		Attachment("text/plain", b64(note), "n.txt"),
	]
	await agent.run("Look", attachments=given)
	turn, shown = first_turn(model)
	assert shown == [b"key [redacted]"]
	assert [("withheld" in f, f["name"]) for f in turn["files"]] == [
		(True, "l.png"),
		(False, "n.txt"),
	]
	with pytest.raises(ConfigurationError, match=r"attachments\[0\] \('x.png'\)\.data: not base64"):
		await agent.run("Look", attachments=[Attachment("image/png", "%%%", "x.png")])
	monkeypatch.setattr("openmolt_core.filestore.MAX_ATTACHMENT_BYTES", 8)
	with pytest.raises(ConfigurationError, match=r"attachments\[0\]: more than the 8 bytes"):
		await agent.run("Look", attachments=[Attachment("image/png", b64(CLEAN))])
	assert len(model.requests) == 1
	await om.aclose()
