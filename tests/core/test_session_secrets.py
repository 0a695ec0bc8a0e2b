"""A session's store holds no spelling of a secret: what runs wrote, and what was kept before."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from openmolt import InMemorySession, OpenMolt, SQLiteSession
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import CompactionConfig, estimate_tokens
from openmolt_core.testing import finish, update_memory
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

SECRET = "sk-live-7Qp2Zr9XwLm4Tb8Nc1Vd"
SPELLED = [
	SECRET,
	quote(SECRET, safe=""),
	base64.b64encode(SECRET.encode()).decode(),
	json.dumps(json.dumps(SECRET))[1:-1],
]


class Leaky:
	"""Says, outputs and notes the secret in several spellings; records what it was sent."""

	name = "leaky"

	def __init__(self) -> None:
		self.sent: list[str] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.sent.append(request.system or "")
		self.sent.extend(m.content for m in request.messages)
		n = len(self.sent)
		spelled = SPELLED[n % len(SPELLED)]
		commands = [
			update_memory(f"key {spelled}", mode="replace"),
			finish({"key": spelled, "n": n}, human_message=f"the key is {spelled}"),
		]
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(text=json.dumps({"commands": commands}), usage=Usage(tokens, 9))


class Summariser:
	name = "summariser"

	def __init__(self, sent: list[str]) -> None:
		self.sent = sent

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.sent.extend(m.content for m in request.messages)
		return ModelResponse(text=f"they spoke of {SECRET}", usage=Usage(50, 10))


def _read_all(folder: Path) -> list[bytes]:
	return [p.read_bytes() for p in folder.rglob("*") if p.is_file()]


def _agent(om: OpenMolt, model: Leaky) -> Any:
	agent = om.create_agent(
		name="Keys", model=model, compaction=CompactionConfig(threshold_tokens=1500)
	)
	agent.compactor = lambda: (Summariser(model.sent), "cheap")
	return agent


async def test_a_sqlite_session_file_holds_no_spelling_of_a_secret(tmp_path: Path) -> None:
	"""Inputs, replies, outputs, notes and summaries are masked in every spelling in the file."""
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)
	model = Leaky()
	agent = _agent(om, model)
	path = tmp_path / "sessions.db"
	session = SQLiteSession("keys", path)
	for i in range(60):
		await agent.run(f"turn {i}: use {SPELLED[i % len(SPELLED)]}", session=session, user="ada")
	items = await session.get_items()
	assert any(i["role"] == "summary" and i["content"] for i in items)
	stored = b"".join(_read_all(tmp_path))
	assert leaks(stored, SECRET) == []
	assert leaks(json.dumps(items), SECRET) == []


async def test_a_secret_known_after_its_turn_was_kept_reaches_no_model_nor_new_item() -> None:
	"""Turns stored before a value became a secret: masked in requests, summaries and notes."""
	om = OpenMolt(entry_points=False)
	model = Leaky()
	session = InMemorySession("before")
	await session.add_items(
		[
			{"role": "user", "content": f"my key is {SECRET}", "run_id": "r0"},
			{"role": "agent", "content": "noted", "status": "success", "run_id": "r0"},
			{"role": "memory", "content": f"key {SECRET}", "run_id": "r0", "user": "bob"},
		]
	)
	om.secrets.add(SECRET)  # known only now
	agent = _agent(om, model)
	for i in range(40):
		await agent.run(f"turn {i}", session=session, user="ada")
	assert leaks("\n".join(model.sent), SECRET) == []
	items = await session.get_items()
	assert any(i["role"] == "summary" and i.get("notes") for i in items)
	assert leaks(json.dumps(items[3:]), SECRET) == []  # all but the three kept before
