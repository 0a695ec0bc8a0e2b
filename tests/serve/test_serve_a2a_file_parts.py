"""A2A answers and kept tasks screen a file part's bytes as bytes, never its base64 as text.

The server masks every answer with the secrets it knows. A file part's bytes travel as base64, and
masking a secret's base64 spelling inside it left no base64 at all: the official a2a-sdk client
failed to read the task ("Invalid base64-encoded string") whenever a caller's file showed a secret,
and the task store kept the caller's file, secret and all. Now each part is screened by its kind
(`openmolt_serve._a2a_parts`): text and data masked as text, a file's bytes kept, kept masked
(text) or replaced by a note saying a file was withheld.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import struct
import uuid
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import (
	GetTaskRequest,
	ListTasksRequest,
	Message,
	Part,
	Role,
	SendMessageRequest,
	Task,
)

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve._a2a_parts import screened

pytestmark = pytest.mark.anyio

TOKEN = "a2a-token-for-tests-0123456789"
SECRET = "sk-parts-0123456789abcdef"


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


def request(parts: list[Part], **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=parts, **ids)
	)


@asynccontextmanager
async def serving(tmp_path: Path, **options: Any) -> AsyncIterator[tuple[OpenMolt, str, Any]]:
	model = ScriptedModel([finish({"result": "Seen."}) for _ in range(4)])
	om = OpenMolt(entry_points=False, files_dir=tmp_path / "files", secrets=[SECRET], **options)
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		yield om, f"{server.url}/a2a/Helper", http
	await om.aclose()


async def client_for(url: str, http: httpx.AsyncClient, *, streaming: bool) -> Any:
	return await create_client(
		url, client_config=ClientConfig(httpx_client=http, streaming=streaming)
	)


def sent_parts(task: Task) -> list[Part]:
	"""The parts of the caller's message, as the task's history keeps them."""
	(said,) = [m for m in task.history if m.role == Role.ROLE_USER]
	return list(said.parts)


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_file_showing_a_secret_is_withheld_and_the_official_client_reads_the_task(
	tmp_path: Path, streaming: bool
) -> None:
	"""The leaky PNG becomes a note, the clean PNG comes back byte for byte, the text file masked."""
	note = f"see token={SECRET}".encode()
	async with serving(tmp_path) as (_, url, http):
		client = await client_for(url, http, streaming=streaming)
		parts = [
			Part(text="Look"),
			Part(raw=LEAKY, media_type="image/png", filename="leaky.png"),
			Part(raw=CLEAN, media_type="image/png", filename="clean.png"),
			Part(raw=note, media_type="text/plain", filename="note.txt"),
		]
		answers = [r async for r in client.send_message(request(parts))]
		task_id = answers[0].task.id  # the first event is the task (the whole task, unstreamed)
		for task in (
			await client.get_task(GetTaskRequest(id=task_id)),
			(await client.list_tasks(ListTasksRequest())).tasks[0],
		):
			text, withheld, clean, masked = sent_parts(task)
			assert text.text == "Look"
			assert withheld.WhichOneof("content") == "text"
			assert "'leaky.png'" in withheld.text and "not kept" in withheld.text
			assert clean.raw == CLEAN and clean.filename == "clean.png"
			assert masked.raw == b"see token=[redacted]"
	assert all(SECRET not in str(a) for a in answers)


async def test_the_task_store_keeps_no_secret_a_file_part_showed(tmp_path: Path) -> None:
	"""The task file of the run store holds the screened task: neither the secret nor its base64."""
	store = tmp_path / "runs.db"
	async with serving(tmp_path, run_store=store) as (_, url, http):
		client = await client_for(url, http, streaming=False)
		parts = [Part(text="Look"), Part(raw=LEAKY, media_type="image/png", filename="l.png")]
		[r async for r in client.send_message(request(parts))]
	with sqlite3.connect(store) as db:
		rows = [row[0] for row in db.execute("SELECT task FROM openmolt_a2a_tasks")]
	assert rows
	for row in rows:
		task = Task()
		task.ParseFromString(row)
		assert SECRET.encode() not in row
		assert all(p.WhichOneof("content") == "text" for p in sent_parts(task))


async def test_a_secret_known_only_after_the_task_was_kept_still_leaves_a_readable_task(
	tmp_path: Path,
) -> None:
	"""The answer is screened when it is sent: a file kept clean, now showing a secret, is a note."""
	later = "later-known-secret-0123456789"
	image = png(b"Comment\x00" + later.encode())
	async with serving(tmp_path) as (om, url, http):
		client = await client_for(url, http, streaming=False)
		parts = [Part(text="Look"), Part(raw=image, media_type="image/png")]
		(sent,) = [r async for r in client.send_message(request(parts))]
		assert sent_parts(sent.task)[1].raw == image  # no secret in it yet
		om.secrets.add(later)
		task = await client.get_task(GetTaskRequest(id=sent.task.id))
		assert "not kept" in sent_parts(task)[1].text


async def test_a_0_3_client_gets_valid_base64_or_a_note(tmp_path: Path) -> None:
	"""A2A 0.3's ``file.bytes`` is screened too: the clean file decodes, the leaky one is a note."""

	def file(data: bytes, name: str) -> dict[str, Any]:
		encoded = base64.b64encode(data).decode()
		return {"kind": "file", "file": {"bytes": encoded, "mimeType": "image/png", "name": name}}

	said = {
		"kind": "message",
		"role": "user",
		"messageId": "m1",
		"parts": [{"kind": "text", "text": "Look"}, file(LEAKY, "l.png"), file(CLEAN, "c.png")],
	}
	call = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": said}}
	async with serving(tmp_path) as (_, url, http):
		sent = await http.post(f"{url}/", json=call, headers={"A2A-Version": "0.3"})
	task = sent.json()["result"]
	(history,) = [m for m in task["history"] if m["role"] == "user"]
	_, withheld, clean = history["parts"]
	assert withheld["kind"] == "text" and "not kept" in withheld["text"]
	assert base64.b64decode(clean["file"]["bytes"], validate=True) == CLEAN


def test_a_data_part_is_the_application_s_json_never_read_as_a_file() -> None:
	"""A data part's key named ``raw`` is masked as text; a file part's bytes are screened."""
	secrets = frozenset({SECRET})
	leaky = base64.b64encode(LEAKY).decode()
	answer = {"result": {"parts": [{"data": {"raw": f"x {SECRET}"}}, {"raw": leaky}]}}
	data, file = screened(answer, secrets)["result"]["parts"]
	assert data == {"data": {"raw": "x [redacted]"}}
	assert set(file) == {"text"} and "not kept" in file["text"]
	assert json.dumps(screened(answer, frozenset())) == json.dumps(answer)
