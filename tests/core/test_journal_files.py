"""A durable journal keeps a state's files as files: their base64 is screened as bytes.

`RedactedPort` masked every journaled value as text, a state's too (the step ``start`` journals
the new run's state): a secret known by then (one learned during the run, an integration bound
later), spelled in the bytes of a file sent with a turn, left base64 that was base64 no more, and
the run read the broken file back from its journal. A state is now masked as the run store masks
one (`openmolt_core.filestore.masked_state`): each file kept, kept masked (a text), or left out.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from openmolt_core._redacted_port import RedactedPort
from openmolt_core.durability import LOCAL_PORT, ForwardingPort
from openmolt_core.filestore import FileStore
from openmolt_core.llm import Attachment, Message
from openmolt_core.result import RunState
from openmolt_core.secrets import Redactor, SecretSet

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


class Journal(ForwardingPort):
	"""Journals each step's encoded value as JSON and returns it decoded, as DBOS does."""

	def __init__(self) -> None:
		super().__init__(LOCAL_PORT)
		self.kept: dict[str, Any] = {}

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		value = await fn()
		stored = json.loads(json.dumps(value if encode is None else encode(value)))
		self.kept[key] = stored
		return stored if decode is None else decode(stored)


def _b64(data: bytes) -> str:
	return base64.b64encode(data).decode()


async def test_a_journaled_state_keeps_its_files_valid() -> None:
	"""A leaky PNG is left out of the journaled state, the clean one kept whole, the text masked."""
	known = SecretSet()
	redactor = Redactor(known=known)
	journal = Journal()
	port = RedactedPort(journal, lambda: redactor, FileStore)
	leaky, clean = png(b"C\x00" + LATER.encode()), png(b"C\x00a receipt")
	state = RunState()
	files = [
		Attachment("image/png", _b64(leaky), "l.png"),
		Attachment("image/png", _b64(clean), "c.png"),
		Attachment("text/plain", _b64(f"see {LATER}".encode()), "t.txt"),
	]
	state.messages.append(Message("user", f"Look ({LATER})", files))

	async def start() -> RunState:
		known.add(LATER)  # a token the run obtained: known from now on
		return state

	read = await port.step("start", start, encode=RunState.to_dict, decode=RunState.from_dict)
	journaled = journal.kept["start"]["messages"][0]
	try:
		data = [base64.b64decode(a["data"], validate=True) for a in journaled["attachments"]]
	except binascii.Error as exc:  # what a text mask of the base64 left
		pytest.fail(f"a journaled file is base64 no more: {exc}")
	assert [a["name"] for a in journaled["attachments"]] == ["c.png", "t.txt"]
	assert data == [clean, b"see [redacted]"]
	assert LATER not in json.dumps(journal.kept)
	assert read.messages[0].content == "Look ([redacted])"  # the run reads what was journaled
	assert [a.name for a in read.messages[0].attachments] == ["c.png", "t.txt"]


async def test_other_journaled_values_are_masked_as_text() -> None:
	"""A step's value that is no state (a tool's result) is masked as before, keys and all."""
	redactor = Redactor(frozenset({LATER}))
	journal = Journal()
	port = RedactedPort(journal, lambda: redactor, FileStore)

	async def call() -> dict[str, Any]:
		return {"result": f"echo {LATER}", LATER: 1}

	read = await port.step("tool:1:0:t", call)
	assert read == {"result": "echo [redacted]", "[redacted]": 1}
	assert journal.kept["tool:1:0:t"] == read


async def test_a_kept_spend_passes_the_redactor_too() -> None:
	"""What a tool call spent so far reaches the backend redacted, as a step's value does."""
	redactor = Redactor(frozenset({LATER}))
	kept: dict[str, Any] = {}

	class Keeping(Journal):
		async def record_spent(self, key: str, entry: Any) -> None:
			kept[key] = entry

	port = RedactedPort(Keeping(), lambda: redactor, FileStore)
	await port.record_spent("tool:1:0:t", {"_usage": {"calls": 1}, "model": f"m-{LATER}"})
	assert kept == {"tool:1:0:t": {"_usage": {"calls": 1}, "model": "m-[redacted]"}}
