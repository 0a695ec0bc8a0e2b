"""The run store keeps a run's files as files: their base64 is screened as bytes, never as text.

The stored state was masked as text, the base64 of the files sent with the first turn included: a
secret known by the time the run ended (one learned during the run, a key added to the instance),
spelled in a file's bytes, left base64 that was base64 no more, and a run resumed from the store
sent the model a broken file. Now `openmolt_core.filestore.masked_state` screens each file's bytes:
kept, masked (a text), or left out of the stored state.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from openmolt import Attachment, OpenMolt
from openmolt_core.runstore import RunStore
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio

LATER = "learned-during-the-run-0123456789"


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


async def test_a_file_showing_a_secret_learned_later_is_left_out_not_broken(tmp_path: Path) -> None:
	"""The leaky PNG is dropped from the stored state, the clean one kept whole, the text masked."""
	path = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=path, files_dir=tmp_path / "files")
	leaky, clean = png(b"C\x00" + LATER.encode()), png(b"C\x00a receipt")

	def learn(_: Any) -> dict[str, Any]:
		om.secrets.add(LATER)  # a token the run obtained: known from now on
		return finish("ok")

	agent = om.create_agent(name="A", model=ScriptedModel([learn]))
	given = [
		Attachment("image/png", base64.b64encode(leaky).decode(), "l.png"),
		Attachment("image/png", base64.b64encode(clean).decode(), "c.png"),
		Attachment("text/plain", base64.b64encode(f"see {LATER}".encode()).decode(), "t.txt"),
	]
	await agent.run("Look", attachments=given)
	store = RunStore(path)
	(row,) = await store.runs()
	state = await store.state(row.run_id)
	assert state is not None
	kept = state.messages[0].attachments
	try:
		data = [base64.b64decode(a.data, validate=True) for a in kept]
	except binascii.Error as exc:  # what a text mask of the base64 left
		pytest.fail(f"a stored file is base64 no more: {exc}")
	assert [a.name for a in kept] == ["c.png", "t.txt"]
	assert data == [clean, b"see [redacted]"]
	await om.aclose()
