"""An A2A answer's file bytes are kept through the store's seam: one that shows a secret is not.

The answer to an ``input-required`` task may carry files, whose bytes the executor saves to the
file store and passes on as references. They were kept as they came: a PNG whose metadata held a
secret of the run went into the store, for the model's tools to read and send on. The store
screens every file now (`openmolt_core.files.screen`).
"""

from __future__ import annotations

import json
import struct
import uuid
import zlib
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

from openmolt import OpenMolt
from openmolt_core.files import WITHHELD
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions

pytestmark = pytest.mark.anyio

TOKEN = "a2a-token-for-tests-0123456789"
SECRET = "sk-seam-0123456789abcdef"


def _chunk(kind: bytes, body: bytes) -> bytes:
	return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(text: bytes) -> bytes:
	ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
	return (
		b"\x89PNG\r\n\x1a\n"
		+ _chunk(b"IHDR", ihdr)
		+ _chunk(b"tEXt", text)
		+ _chunk(b"IDAT", zlib.compress(b"\x00\x00"))
		+ _chunk(b"IEND", b"")
	)


def _stored(folder: Any) -> list[bytes]:
	return [p.read_bytes() for p in folder.rglob("*") if p.is_file()]


def message(parts: list[Part], **ids: str) -> SendMessageRequest:
	return SendMessageRequest(
		message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=parts, **ids)
	)


async def test_an_answer_s_file_holding_a_secret_is_withheld_and_a_clean_one_kept(
	tmp_path: Any,
) -> None:
	"""The PNG whose tEXt chunk holds the secret is withheld (the run reads why); the clean is kept."""
	model = ScriptedModel([ask_human("Which receipt?"), finish({"result": "Got it."})])
	om = OpenMolt(entry_points=False, files_dir=tmp_path, secrets=[SECRET])
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	park_questions(agent)
	triggers = Triggers.model_validate({"a2a": {"token": TOKEN}})
	clean = png(b"Comment\x00a receipt")
	leaky = png(b"Comment\x00token=" + SECRET.encode())
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		client = await create_client(
			f"{server.url}/a2a/Helper",
			client_config=ClientConfig(httpx_client=http, streaming=False),
		)
		(first,) = [r async for r in client.send_message(message([Part(text="Refund me")]))]
		task = first.task
		assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
		parts = [
			Part(text="These"),
			Part(raw=leaky, media_type="image/png", filename="leaky.png"),
			Part(raw=clean, media_type="image/png", filename="clean.png"),
		]
		answer = message(parts, task_id=task.id, context_id=task.context_id)
		# The official client reads the task that echoes the answer: the leaky file's part is a
		# note there (`openmolt_serve._a2a_parts`), not base64 broken by masking.
		(second,) = [r async for r in client.send_message(answer)]
		assert second.task.status.state == TaskState.TASK_STATE_COMPLETED
	assert model.requests[1:], "the answer did not resume the run"
	(answered,) = json.loads(model.requests[1].messages[-1].content)["results"]
	said = json.loads(answered["result"])
	withheld, kept = said["files"]
	assert withheld["withheld"] == WITHHELD and "file" not in withheld
	assert (await om.files.open(kept["file"])).data == clean
	assert not any(SECRET.encode() in data for data in _stored(tmp_path))
	await om.aclose()
