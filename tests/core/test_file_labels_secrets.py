"""A file's name and media type show no secret, wherever the file goes: the store's record on
disk, the reference a tool or the model reads, the files sent with a run's input (what the
provider is sent, the state, the session, the run store).

The bytes were screened at the store's one seam, but their labels were kept as given: a tool's
file named with a token refreshed mid-run was written to the store's metadata as is, and an
attachment's name (``note-<key>.txt``) or media type (``image/png; x=<key>``) went to the model
(OpenAI is sent the name as ``filename``), into the run's state and its events, and the media
type into the session's items.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.files import WITHHELD, save_screened
from openmolt_core.filestore import keep_attachments
from openmolt_core.integrations import (
	ApiSetup,
	FunctionTool,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.llm import Attachment
from openmolt_core.sessions import SQLiteSession
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import ToolContext
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

KEY = "sk-Labels/Key+0123456789"
REFRESHED = "ya29.Labels-refreshed/Tok+42"
PNG = b"\x89PNG\r\n\x1a\nclean pixels"


def _rows(path: Path) -> str:
	"""Every row of every table of a SQLite file, as text."""
	with sqlite3.connect(path) as db:
		tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
		return "\n".join(repr(row) for t in tables for row in db.execute(f"SELECT * FROM {t}"))


def _store_bytes(folder: Path) -> str:
	return "\n".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())


async def test_a_tool_s_file_named_with_a_token_refreshed_mid_run_keeps_no_token(
	tmp_path: Path,
) -> None:
	"""The store's metadata and the record the model reads mask a name and a media type."""

	def api(request: httpx.Request) -> httpx.Response:
		tokens = {"access_token": REFRESHED, "refresh_token": "rotated-refresh-0001"}
		return httpx.Response(200, json={**tokens, "expires_in": 3600})

	async def export(arguments: dict[str, Any], context: ToolContext) -> Any:
		return await context.files.save(
			PNG, media_type=f"image/png; note={REFRESHED}", name=f"export-{REFRESHED}.png"
		)

	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		files_dir=tmp_path / "files",
	)
	om.register_integration(
		"crm",
		Integration(
			name="CRM",
			api_setup=ApiSetup(base_url="https://api.example"),
			credential_setup=[OAuth2Credential(type="oauth2", token_url="https://api.example/t")],
			tools=[
				HttpTool(handle="me", description="d", endpoint="/me"),  # refreshes the token
				FunctionTool(handle="export", description="d", function=export),
			],
		),
	)
	model = ScriptedModel(
		[call_tool("crm.me"), call_tool("crm.export"), finish({"result": "done"})]
	)
	config = {
		"accessToken": "expired-access-0001",
		"expiryDate": "2000-01-01T00:00:00Z",
		"refreshToken": "old-refresh-token-0001",
		"clientId": "client",
	}
	agent = om.create_agent(
		name="Exporter",
		model=model,
		integrations=[{"integration": "crm", "credential": {"config": config}}],
	)
	result = await agent.run("export")
	assert result.status == "success"
	record = json.loads(model.requests[2].messages[-1].content)
	assert "[redacted]" in json.dumps(record)
	shown = _store_bytes(tmp_path / "files")
	assert "export-[redacted].png" in shown and "image/png; note=[redacted]" in shown
	assert not leaks(shown, REFRESHED)
	await om.aclose()


async def test_a_run_s_attachments_show_no_secret_in_their_names_or_media_types(
	tmp_path: Path,
) -> None:
	"""What the provider is sent, the state, the events, the session and the run store."""
	om = OpenMolt(
		{"openai": {"api_key": KEY}},
		entry_points=False,
		run_store=tmp_path / "runs.db",
		files_dir=tmp_path / "files",
	)
	model = ScriptedModel([finish({"result": "seen"})])
	agent = om.create_agent(name="Reader", model=model)
	events: list[str] = []
	agent.on("llmOutput", lambda e: events.append(repr(e)))
	agent.on("finish", lambda e: events.append(repr(e)))
	files = [
		Attachment(f"image/png; x={KEY}", base64.b64encode(PNG).decode(), f"shot-{KEY}.png"),
		Attachment("text/plain", base64.b64encode(b"plain words").decode(), f"note-{KEY}.txt"),
	]
	session = SQLiteSession("s", tmp_path / "sessions.db")
	result = await agent.run("look", attachments=files, session=session)
	sent = model.requests[0].messages[0].attachments
	assert [a.name for a in sent] == ["shot-[redacted].png", "note-[redacted].txt"]
	assert sent[0].media_type == "image/png; x=[redacted]"
	assert sent[1].data == files[1].data  # the bytes, clean, as given
	await om.aclose()
	seen = [
		repr(model.requests),
		repr(result),
		json.dumps(result.state.to_dict()),
		*events,
		_rows(tmp_path / "sessions.db"),
		_rows(tmp_path / "runs.db"),
		_store_bytes(tmp_path / "files"),
	]
	assert not [(n, leaks(t, KEY)) for n, t in enumerate(seen) if leaks(t, KEY)]


class _PlainStore:
	"""A store an application gives that screens nothing itself (no ``screens``)."""

	def __init__(self) -> None:
		self.saved: list[dict[str, Any]] = []

	async def save(
		self, data: bytes, *, media_type: str = "application/octet-stream", name: str = ""
	) -> dict[str, Any]:
		self.saved.append({"mediaType": media_type, "name": name, "data": data})
		return {"file": "openmolt-file:x", "mediaType": media_type, "name": name, "size": len(data)}

	async def open(self, reference: str, *, max_bytes: int | None = None) -> Any:
		raise AssertionError("not read")


async def test_a_store_that_does_not_screen_gets_masked_labels_and_a_masked_withheld_record() -> (
	None
):
	"""`save_screened` masks the labels it hands a plain store, and those of a file withheld."""
	store = _PlainStore()
	kept = await save_screened(
		store, PNG, media_type=f"image/png; x={KEY}", name=f"a-{KEY}.png", secrets=[KEY]
	)
	withheld = await save_screened(
		store,
		PNG + KEY.encode(),
		media_type=f"image/png; x={KEY}",
		name=f"b-{KEY}.png",
		secrets=[KEY],
	)
	assert withheld["withheld"] == WITHHELD
	assert not leaks(repr([kept, withheld, store.saved]), KEY)
	shown, records = await keep_attachments(
		store,
		[Attachment(f"image/png; x={KEY}", base64.b64encode(PNG).decode(), f"c-{KEY}.png")],
		secrets=[KEY],
	)
	assert not leaks(repr([shown, records, store.saved]), KEY)
	assert shown[0].data == base64.b64encode(PNG).decode()


def later(question: str) -> str:
	raise HumanInputUnavailable("asked later")


async def test_a_state_saved_before_a_secret_was_known_is_resumed_with_its_labels_masked(
	tmp_path: Path,
) -> None:
	"""A parked state kept where the key was not a secret yet: its files' labels are masked when
	an instance that knows it resumes the run (as its turns are)."""
	files = [Attachment(f"image/png; x={KEY}", base64.b64encode(PNG).decode(), f"shot-{KEY}.png")]
	before = OpenMolt(entry_points=False, files_dir=tmp_path / "before")
	asking = before.create_agent(
		name="Asker", model=ScriptedModel([ask_human("which one?")]), on_human_input_request=later
	)
	parked = await asking.run("look", attachments=files)
	assert parked.status == "human_input_required"
	assert parked.state.messages[0].attachments[0].name == f"shot-{KEY}.png"  # not a secret there
	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False, files_dir=tmp_path / "after")
	model = ScriptedModel([finish({"result": "that one"})])
	agent = om.create_agent(name="Asker", model=model, on_human_input_request=later)
	result = await agent.run("the first", history=parked.state.to_dict())
	assert result.status == "success"
	(sent,) = model.requests[0].messages[0].attachments
	assert (sent.name, sent.media_type) == ("shot-[redacted].png", "image/png; x=[redacted]")
	assert sent.data == files[0].data
	assert not leaks(repr(model.requests), KEY)
	assert result.state.messages[0].attachments == [sent]
