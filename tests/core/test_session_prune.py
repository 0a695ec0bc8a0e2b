"""Pruning sessions: turns a summary covers go, idle sessions go, and no run reads otherwise."""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import InMemorySession, OpenMolt, SQLiteSession
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import CompactionConfig, estimate_tokens
from openmolt_core.sessions import Pruned, SQLAlchemySession, _window, history_of
from openmolt_core.testing import finish, update_memory

pytestmark = pytest.mark.anyio

POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
KINDS = ["memory", "sqlite", "sqlalchemy", "postgres"]


class Group:
	"""A group chat's model: each sender's notes now and then, a dict output (its user's only)."""

	name = "group"

	def __init__(self) -> None:
		self.gate: anyio.Event | None = None
		self.called = anyio.Event()

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.called.set()
		if self.gate is not None:
			await self.gate.wait()
		body = json.loads(request.messages[0].content)
		said = str(body["input"])
		who, _, n = said.partition(" ")
		commands = [update_memory(f"{who} said {n}", mode="replace")] if int(n) % 7 == 0 else []
		commands.append(finish({"order": f"order {said}"}, human_message=f"ok {n}"))
		tokens = estimate_tokens(request.messages, request.system)
		return ModelResponse(text=json.dumps({"commands": commands}), usage=Usage(tokens, 9))


class Summariser:
	name = "summariser"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		turns = json.loads(request.messages[0].content)["turns"]
		return ModelResponse(text=f"summary of {len(turns)} turns", usage=Usage(50, 10))


def store(kind: str, tmp_path: Path, name: str, url: str | None = None) -> Any:
	if kind == "memory":
		return InMemorySession(name)
	if kind == "sqlite":
		return SQLiteSession(name, tmp_path / "sessions.db")
	pytest.importorskip("sqlalchemy")
	if kind == "postgres":
		if not POSTGRES_URL:
			pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
		return SQLAlchemySession(f"{name}-{uuid.uuid4().hex}", url or POSTGRES_URL)
	return SQLAlchemySession(name, f"sqlite:///{tmp_path / 'sa.db'}")


@pytest.fixture
def own_database() -> Iterator[str | None]:
	"""A PostgreSQL database of this test's own (a whole-store prune reaches every session in
	it: in the shared one it would prune the sessions of tests running beside it)."""
	if not POSTGRES_URL:
		yield None
		return
	psycopg = pytest.importorskip("psycopg")
	name = f"om_prune_{uuid.uuid4().hex[:12]}"
	with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
		conn.execute(f'CREATE DATABASE "{name}"')
	try:
		yield f"{POSTGRES_URL.rpartition('/')[0]}/{name}"
	finally:
		with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
			conn.execute(
				"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
			)
			conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def group_agent(model: Group | None = None) -> Any:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Group", model=model or Group(), compaction=CompactionConfig(threshold_tokens=2500)
	)
	agent.compactor = lambda: (Summariser(), "cheap")
	return agent


PEOPLE = ["ada", "bob", "cy", None]


def who_at(i: int) -> str | None:
	return PEOPLE[i % 4] if i < 120 else PEOPLE[i % 2]  # cy and no one fall silent


async def histories(session: Any) -> list[tuple[Any, ...]]:
	"""What a run of each user reads of the session now."""
	found = []
	for who in PEOPLE:
		skipped, items = await _window(session, who)
		h = history_of(items, who, skipped=skipped)
		found.append((who, h.earlier, h.memory, h.tainted, h.count))
	return found


@pytest.mark.parametrize("kind", KINDS)
async def test_pruning_drops_covered_turns_and_every_run_reads_the_same(
	kind: str, tmp_path: Path
) -> None:
	"""Pruned as it goes, a session is a fraction of one never pruned, and every user's runs
	read of it what they read of the other (summaries' ``through`` counted past the pruned)."""
	agent = group_agent()
	pruned, whole = store(kind, tmp_path, "pruned"), store(kind, tmp_path, "whole")
	removed = 0
	for i in range(240):
		for session in (pruned, whole):
			await agent.run(f"{who_at(i)} {i}", session=session, user=who_at(i))
		if i % 50 == 49:
			removed += await pruned.prune()
			assert await histories(pruned) == await histories(whole)
	removed += await pruned.prune()
	assert removed > 0
	assert await pruned.prune() == 0  # nothing more until the next summary
	kept, held = len(await pruned.get_items()), len(await whole.get_items())
	assert kept + removed == held
	assert kept < held / 2
	assert await histories(pruned) == await histories(whole)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_dry_run_counts_what_it_would_remove_and_removes_nothing(
	kind: str, tmp_path: Path
) -> None:
	"""``dry_run``: the count a prune would remove; the store keeps every item."""
	agent = group_agent()
	session = store(kind, tmp_path, "dry")
	for i in range(150):
		await agent.run(f"{who_at(i)} {i}", session=session, user=who_at(i))
	before = await session.get_items()
	would = await session.prune(dry_run=True)
	assert would > 0
	assert await session.get_items() == before
	assert await session.prune() == would
	assert len(await session.get_items()) == len(before) - would


def summarised(turns: int, *, pending_at: int | None = None) -> list[dict[str, Any]]:
	"""``turns`` turns, then a summary of all but the latest two (with notes)."""
	items: list[dict[str, Any]] = []
	for n in range(turns):
		if n == pending_at:
			items.append({"role": "pending", "run_id": "away", "new": True, "content": "later"})
		items.append({"role": "user", "content": f"q{n}", "run_id": f"r{n}"})
		items.append({"role": "agent", "content": f"a{n}", "status": "success", "run_id": f"r{n}"})
	items.append(
		{"role": "summary", "content": "s", "through": len(items) - 4, "notes": [{"content": "n"}]}
	)
	return items


@pytest.mark.parametrize("kind", KINDS)
async def test_pruning_stops_at_a_pending_turn(kind: str, tmp_path: Path) -> None:
	"""A durable run's ``pending`` item (its turn still to append) and what follows it stay."""
	session = store(kind, tmp_path, "pending")
	await session.add_items(summarised(20, pending_at=5))
	assert await session.prune() == 10  # the five turns before the pending item
	items = await session.get_items()
	assert items[0] == {"role": "pending", "run_id": "away", "new": True, "content": "later"}
	skipped, latest = await session.get_latest(10)
	assert skipped + len(latest) == 42  # positions still count the pruned items


@pytest.mark.parametrize("kind", KINDS)
async def test_a_private_or_noteless_summary_does_not_move_the_cut(
	kind: str, tmp_path: Path
) -> None:
	"""Only a summary every run reads (not one user's) counts, and never past the latest notes."""
	session = store(kind, tmp_path, "private")
	items = summarised(10)
	items.append({"role": "user", "content": "q10", "run_id": "r10"})
	items.append(
		{"role": "summary", "content": "ada's", "through": 20, "private": True, "user": "ada"}
	)
	await session.add_items(items)
	assert await session.prune() == 16  # the public summary's through, not ada's
	skipped, latest = await _window(session, "bob")
	assert history_of(latest, "bob", skipped=skipped).earlier[0]["content"] == "s"


def age(kind: str, tmp_path: Path, session: Any, days: float) -> None:
	"""Make every item of ``session`` ``days`` old."""
	then = time.time() - days * 86400
	if kind == "sqlite":
		with sqlite3.connect(tmp_path / "sessions.db") as conn:
			conn.execute(
				"UPDATE session_items SET created = ? WHERE session_id = ?",
				(then, session.session_id),
			)
		return
	sa = pytest.importorskip("sqlalchemy")
	with session.engine.begin() as conn:
		conn.execute(
			sa.text("UPDATE openmolt_session_items SET created = :t WHERE session_id = :s"),
			{"t": then, "s": session.session_id},
		)


def prune_store(kind: str, tmp_path: Path, session: Any, **options: Any) -> Any:
	if kind == "sqlite":
		return SQLiteSession.prune_store(tmp_path / "sessions.db", **options)
	return SQLAlchemySession.prune_store(engine=session.engine, **options)


@pytest.mark.parametrize("kind", ["sqlite", "sqlalchemy", "postgres"])
async def test_idle_sessions_are_deleted_unless_a_turn_needs_them(
	kind: str, tmp_path: Path, own_database: str | None
) -> None:
	"""Retention: a session idle past the limit goes; one in a run's turn or with a pending
	durable turn stays (said busy); one in use stays; a dry run deletes nothing."""
	old, held, waiting, fresh = (
		store(kind, tmp_path, n, own_database) for n in ("old", "held", "waiting", "fresh")
	)
	for session in (old, held, waiting, fresh):
		await session.add_items(summarised(3))
	await waiting.add_items([{"role": "pending", "run_id": "away", "new": False}])
	for session in (old, held, waiting):
		age(kind, tmp_path, session, 40)
	dry: Pruned = await prune_store(kind, tmp_path, old, idle_days=30, dry_run=True)
	assert old.session_id in dry.deleted and dry.dry_run
	assert len(await old.get_items()) == 7
	async with held.turn():
		report: Pruned = await prune_store(kind, tmp_path, old, idle_days=30)
	assert old.session_id in report.deleted
	assert {held.session_id, waiting.session_id} <= set(report.busy)
	assert fresh.session_id not in report.deleted + report.busy
	assert await old.get_items() == []
	assert len(await held.get_items()) == 7
	assert len(await waiting.get_items()) == 8
	assert len(await fresh.get_items()) == 7 - 2  # compacted: two turns the summary covers


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
async def test_pruning_beside_a_running_turn_keeps_what_it_reads_and_writes(
	kind: str, tmp_path: Path
) -> None:
	"""A prune while a run is under way (it read the session, its model is answering) neither
	waits for it nor breaks the summary it writes after: the history matches one never pruned."""
	model = Group()
	agent, other = group_agent(model), group_agent()
	pruned, whole = store(kind, tmp_path, "busy"), store(kind, tmp_path, "calm")
	for i in range(100):
		for session in (pruned, whole):
			await agent.run(f"{who_at(i)} {i}", session=session, user=who_at(i))
	await other.run("ada 100", session=whole, user="ada")
	model.gate, model.called = anyio.Event(), anyio.Event()
	async with anyio.create_task_group() as tg:
		tg.start_soon(lambda: agent.run("ada 100", session=pruned, user="ada"))
		await model.called.wait()
		with anyio.fail_after(5):
			assert await pruned.prune() > 0
		model.gate.set()
	model.gate = None
	for i in range(101, 130):
		for session in (pruned, whole):
			await agent.run(f"{who_at(i)} {i}", session=session, user=who_at(i))
	assert await histories(pruned) == await histories(whole)
