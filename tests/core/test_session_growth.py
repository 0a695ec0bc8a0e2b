"""A long session: each run reads a bounded tail of its store, not every turn it ever had."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from openmolt import InMemorySession, OpenMolt, SQLiteSession
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import CompactionConfig, estimate_tokens
from openmolt_core.sessions import SQLAlchemySession, _window, history_of
from openmolt_core.testing import finish, update_memory

pytestmark = pytest.mark.anyio


class Counted:
	"""Wraps a store and counts the items each read hands back."""

	def __init__(self, inner: Any) -> None:
		self.inner = inner
		self.session_id = inner.session_id
		self.read = 0

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		items: list[dict[str, Any]] = await self.inner.get_items(limit)
		self.read += len(items)
		return items

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		skipped, items = await self.inner.get_latest(limit)
		self.read += len(items)
		return skipped, items

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		await self.inner.add_items(items)

	async def pop_item(self) -> dict[str, Any] | None:
		return await self.inner.pop_item()  # type: ignore[no-any-return]

	async def clear(self) -> None:
		await self.inner.clear()


class Chat:
	"""Answers each turn with its input; notes what it is told to note; records requests."""

	name = "chat"

	def __init__(self, notes: dict[str, str]) -> None:
		self.notes = notes
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(replace(request, messages=list(request.messages)))
		body = json.loads(request.messages[0].content)
		said = str(body["input"])
		commands: list[dict[str, Any]] = []
		if said in self.notes:
			commands.append(update_memory(self.notes[said]))
		commands.append(finish(f"you said {said}", human_message=f"you said {said}"))
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(text=json.dumps({"commands": commands}), usage=Usage(tokens, 9))


class Summariser:
	name = "summariser"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		turns = json.loads(request.messages[0].content)["turns"]
		return ModelResponse(text=f"summary of {len(turns)} turns", usage=Usage(50, 10))


def store(kind: str, tmp_path: Path) -> Any:
	if kind == "memory":
		return InMemorySession("long")
	if kind == "sqlite":
		return SQLiteSession("long", tmp_path / "sessions.db")
	pytest.importorskip("sqlalchemy")
	if kind == "postgres":
		if not POSTGRES_URL:
			pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
		return SQLAlchemySession(f"long-{uuid.uuid4().hex}", POSTGRES_URL)
	return SQLAlchemySession("long", f"sqlite:///{tmp_path / 'sa.db'}")


POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlalchemy", "postgres"])
async def test_a_long_session_run_reads_a_bounded_tail(kind: str, tmp_path: Path) -> None:
	"""Past its first summaries, a run reads a few hundred items however many the store holds."""
	model = Chat({"turn 3": "ada likes tea", "turn 5": "bob likes coffee"})
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Chat", model=model, compaction=CompactionConfig(threshold_tokens=3000)
	)
	agent.compactor = lambda: (Summariser(), "cheap")
	session = Counted(store(kind, tmp_path))
	for i in range(700):
		user = "bob" if i == 5 else "ada"
		session.read = 0
		await agent.run(f"turn {i}", session=session, user=user)
	held = len(await session.inner.get_items())
	assert held > 1400
	assert session.read <= 600  # the last run's reads: a window, not every item
	last = json.loads(model.requests[-1].messages[0].content)
	# the notes of turn 3 (ada's), hundreds of turns and many summaries back, still read
	assert last["memory"]["shortTerm"] == "ada likes tea"
	assert "turn 698" in last["earlier"][-1]["content"]
	# and what a run reads of the window is what it would read of every item
	everything = history_of(await session.inner.get_items(), "ada")
	assert everything.memory == "ada likes tea"
	bob = await agent.run("turn bob", session=session, user="bob")
	assert bob.status == "success"
	assert json.loads(model.requests[-1].messages[0].content)["memory"]["shortTerm"] == (
		"bob likes coffee"
	)


class Group:
	"""A group chat's model: a dict output (its user's only) and a note for each sender."""

	name = "group"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		body = json.loads(request.messages[0].content)
		said = str(body["input"])
		who, _, n = said.partition(" ")
		commands = [update_memory(f"{who} said {n}", mode="replace")] if int(n) % 7 == 0 else []
		commands.append(finish({"order": f"secret {said}"}))
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(text=json.dumps({"commands": commands}), usage=Usage(tokens, 9))


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_each_user_reads_of_the_window_what_they_would_of_every_item(
	kind: str, tmp_path: Path
) -> None:
	"""Group chat, private outputs and summaries: the window gives each user the full history."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Group", model=Group(), compaction=CompactionConfig(threshold_tokens=2500)
	)
	agent.compactor = lambda: (Summariser(), "cheap")
	session = store(kind, tmp_path)
	people = ["ada", "bob", "cy", None]
	for i in range(400):
		who = people[i % 4] if i < 200 else people[i % 2]  # cy and no one fall silent
		await agent.run(f"{who} {i}", session=session, user=who)
	everything = await session.get_items()
	assert any(i["role"] == "summary" and i.get("private") for i in everything)
	for who in people:
		full = history_of(everything, who)
		skipped, window = await _window(session, who)
		part = history_of(window, who, skipped=skipped)
		assert (part.earlier, part.memory, part.tainted, part.count) == (
			full.earlier,
			full.memory,
			full.tainted,
			full.count,
		), who
		if who in ("ada", "bob"):
			assert skipped > 0  # those who speak read a window
	# cy's notes were written before hundreds of turns and many summaries
	cy = history_of(everything, "cy")
	assert cy.memory is not None and cy.memory.startswith("cy said")
