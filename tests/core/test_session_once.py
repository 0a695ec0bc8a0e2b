"""A session's turns are recorded once and read in order, whatever summaries, prunes or retries do.

Each store (in memory, SQLite, SQLAlchemy on SQLite, PostgreSQL when
``OPENMOLT_TEST_POSTGRES_URL`` is set): a durable run's ``pending`` item taken back after a
summary counted it keeps every later position; a turn appended, then summarised, is not appended
again by a retried `SessionRun.record` nor by `SessionRun.reconcile`; a dry-run prune changes
nothing on disk. Costs are counted in rows read and written, never in time.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from openmolt import HumanInputUnavailable, InMemorySession, OpenMolt, SQLiteSession
from openmolt_core.sessions import SessionRun, SQLAlchemySession, _window, history_of
from openmolt_core.testing import ScriptedModel, ask_human, finish

pytestmark = pytest.mark.anyio

POSTGRES_URL = os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
KINDS = ["memory", "sqlite", "sqlalchemy", "postgres"]


def store(kind: str, tmp_path: Path, name: str = "chat") -> Any:
	if kind == "memory":
		return InMemorySession(name)
	if kind == "sqlite":
		return SQLiteSession(name, tmp_path / "sessions.db")
	pytest.importorskip("sqlalchemy")
	if kind == "postgres":
		if not POSTGRES_URL:
			pytest.skip("PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL")
		return SQLAlchemySession(f"{name}-{uuid.uuid4().hex}", POSTGRES_URL)
	return SQLAlchemySession(name, f"sqlite:///{tmp_path / 'sa.db'}")


class Counted:
	"""Wraps a store and counts the rows each read hands back and each write appends."""

	def __init__(self, inner: Any) -> None:
		self.inner = inner
		self.session_id = inner.session_id
		self.read = 0
		self.written = 0

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		items: list[dict[str, Any]] = await self.inner.get_items(limit)
		self.read += len(items)
		return items

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		skipped, items = await self.inner.get_latest(limit)
		self.read += len(items)
		return skipped, items

	async def get_run(self, run_id: str) -> list[dict[str, Any]]:
		items: list[dict[str, Any]] = await self.inner.get_run(run_id)
		self.read += len(items)
		return items

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		self.written += len(items)
		await self.inner.add_items(items)

	async def replace_pending(
		self, run_ids: Sequence[str], items: Sequence[dict[str, Any]]
	) -> None:
		self.written += len(items)
		await self.inner.replace_pending(run_ids, items)

	async def pop_item(self) -> dict[str, Any] | None:
		return await self.inner.pop_item()  # type: ignore[no-any-return]

	async def clear(self) -> None:
		await self.inner.clear()


def turn(name: str) -> list[dict[str, Any]]:
	return [
		{"role": "user", "content": f"{name}?", "run_id": name},
		{"role": "agent", "content": f"{name}.", "status": "success", "run_id": name},
	]


def summary(through: int) -> dict[str, Any]:
	return {"role": "summary", "content": "before", "through": through, "notes": []}


async def read(session: Any) -> list[Any]:
	"""What a run for no one reads of the session: the summary, then the turns verbatim."""
	skipped, items = await _window(session, None)
	return [e["content"] for e in history_of(items, skipped=skipped).earlier]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_pending_item_taken_back_after_a_summary_keeps_every_turn_in_place(
	kind: str, tmp_path: Path
) -> None:
	"""A summary counted a pending item: its turn appended later shifts no turn out of view."""
	session = store(kind, tmp_path)
	pending = {"role": "pending", "run_id": "d", "content": "d?", "new": True}
	await session.add_items([*turn("a"), pending, *turn("b"), *turn("c")])
	await session.add_items([summary(5)])  # a, the pending item and b summarised
	assert await read(session) == ["before", "c?", "c."]
	await session.replace_pending(["d"], turn("d"))
	assert await read(session) == ["before", "c?", "c.", "d?", "d."]
	items = await session.get_items()
	assert [i["role"] for i in items].count("pending") == 0
	assert len(items) == 10  # the pending item's place is kept, the turn appended after all


@pytest.mark.parametrize("kind", KINDS)
async def test_a_trailing_pending_item_taken_back_leaves_nothing_behind(
	kind: str, tmp_path: Path
) -> None:
	"""A pending item nothing follows goes whole: the turn takes its place, no row stays."""
	session = store(kind, tmp_path)
	await session.add_items([*turn("a"), {"role": "pending", "run_id": "d", "new": True}])
	await session.replace_pending(["d"], turn("d"))
	assert [i["content"] for i in await session.get_items()] == ["a?", "a.", "d?", "d."]


@pytest.mark.parametrize("kind", KINDS)
async def test_prune_beside_a_pending_durable_turn_keeps_positions(
	kind: str, tmp_path: Path
) -> None:
	"""A prune stops at a pending item; its turn appended after reads in order, and the next
	prune takes the kept place with the turns the summary covers."""
	session = store(kind, tmp_path)
	pending = {"role": "pending", "run_id": "d", "content": "d?", "new": True}
	await session.add_items([*turn("a"), pending, *turn("b"), *turn("c"), summary(5)])
	assert await session.prune() == 2  # up to the pending item
	assert await read(session) == ["before", "c?", "c."]
	await session.replace_pending(["d"], turn("d"))
	assert await read(session) == ["before", "c?", "c.", "d?", "d."]
	assert await session.prune() == 3  # the pending item's place and b
	assert await read(session) == ["before", "c?", "c.", "d?", "d."]
	assert len(await session.get_items()) == 5


async def a_result(prompt: str, *steps: dict[str, Any]) -> Any:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Host", model=ScriptedModel([list(steps)]))
	agent.on_human_input_request = later
	return agent, await agent.run(prompt)


def later(question: str) -> str:
	"""A person is not there now: the run parks on its question."""
	raise HumanInputUnavailable(question)


def filler(turns: int) -> list[dict[str, Any]]:
	items = [i for n in range(turns) for i in turn(f"old-{n}")]
	return items


@pytest.mark.parametrize("kind", KINDS)
async def test_a_record_retried_after_its_turn_was_summarised_appends_nothing(
	kind: str, tmp_path: Path
) -> None:
	"""A record, then 300 turns and a summary of them, then the record again: one turn, and
	the retry reads the window and the run's own rows, not the session."""
	inner = store(kind, tmp_path)
	session = Counted(inner)
	agent, result = await a_result("once?", finish("ok", human_message="Once."))
	await SessionRun(agent, session).record(result, asked="once?", asked_tainted=False)
	await inner.add_items(filler(300))
	await inner.add_items([summary(602)])
	session.read = session.written = 0
	await SessionRun(agent, session).record(result, asked="once?", asked_tainted=False)
	run_id = result.state.run_id
	mine = [i for i in await inner.get_items() if i.get("run_id") == run_id]
	assert [i["content"] for i in mine] == ["once?", "Once."]
	assert session.written == 0
	assert session.read <= 256 + 2, session.read


class Backend:
	"""A durable backend that knows one run's result (the run parked, as the session says)."""

	def __init__(self, result: Any) -> None:
		self.found = result

	async def result(self, run_id: str, wait: bool = False) -> Any:
		return self.found if run_id == self.found.state.run_id else None


@pytest.mark.parametrize("kind", KINDS)
async def test_a_parked_turn_summarised_is_not_reconciled_again(kind: str, tmp_path: Path) -> None:
	"""A parked run's reply, summarised and before the window, is found: the next run's
	reconcile appends nothing while the run stays parked."""
	inner = store(kind, tmp_path)
	session = Counted(inner)
	agent, result = await a_result("wait?", ask_human("Which one?"))
	assert result.status == "human_input_required"
	agent.om._durability = Backend(result)
	await SessionRun(agent, session).record(result, asked="wait?", asked_tainted=False)
	run_id = result.state.run_id
	# Its turn, its new pending item, 127 turns and a summary of the turn: the window of the
	# latest 256 items reaches back to the pending item, not to the reply before it.
	await inner.add_items(filler(127))
	await inner.add_items([summary(2)])
	session.read = session.written = 0
	await SessionRun(agent, session).reconcile()
	mine = [i for i in await inner.get_items() if i.get("run_id") == run_id]
	assert [i["role"] for i in mine] == ["user", "agent", "pending"]
	assert session.written == 0
	assert session.read <= 256 + 3, session.read


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
	return {
		str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
		for p in sorted(folder.rglob("*"))
		if not p.name.endswith(("-wal", "-shm"))
	}


@pytest.mark.parametrize("kind", ["sqlite", "sqlalchemy"])
async def test_a_dry_run_prune_changes_nothing_on_disk(kind: str, tmp_path: Path) -> None:
	"""Idle sessions counted by a dry run: no lock file made, no folder, no row touched."""
	session = store(kind, tmp_path, "idle")
	await session.add_items([*turn("a"), *turn("b"), summary(2)])
	before = snapshot(tmp_path)
	assert not any(".turns" in name for name in before)
	if kind == "sqlite":
		report = await SQLiteSession.prune_store(
			tmp_path / "sessions.db", idle_days=0, dry_run=True
		)
	else:
		report = await SQLAlchemySession.prune_store(
			engine=session.engine, idle_days=0, dry_run=True
		)
	assert report.deleted == ("idle",) and report.dry_run
	assert snapshot(tmp_path) == before
	assert len(await session.get_items()) == 5


async def parked_twice() -> tuple[Any, Any, Any, Any]:
	"""A run that parks on a question, is answered, parks on another (the same status), and
	ends once answered again: the agent and the three results."""
	om = OpenMolt(entry_points=False)
	model = ScriptedModel(
		[[ask_human("Which day?")], [ask_human("Which time?")], [finish("ok", human_message="8.")]]
	)
	agent = om.create_agent(name="Host", model=model)
	agent.on_human_input_request = later
	first = await agent.run("book it")
	second = await agent.resume(first.state.to_dict(), answer="Friday")  # a copy: first stays
	ended = await agent.resume(second.state.to_dict(), answer="8 pm")
	assert first.status == second.status == "human_input_required"
	assert ended.status == "success"
	return agent, first, second, ended


@pytest.mark.parametrize("kind", KINDS)
async def test_a_run_that_parks_twice_records_both_questions(kind: str, tmp_path: Path) -> None:
	"""A run parked twice with the same status: its second question is appended, once."""
	session = store(kind, tmp_path)
	agent, first, second, _ = await parked_twice()
	agent.om._durability = Backend(second)
	await SessionRun(agent, session).record(first, asked="book it", asked_tainted=False)
	await SessionRun(agent, session).record(second, asked="Friday", asked_tainted=False)
	await SessionRun(agent, session).record(second, asked="Friday", asked_tainted=False)
	replies = [i["content"] for i in await session.get_items() if i["role"] == "agent"]
	assert replies == ["Which day?", "Which time?"]


@pytest.mark.parametrize("kind", KINDS)
async def test_reconcile_appends_a_second_park_with_the_same_status(
	kind: str, tmp_path: Path
) -> None:
	"""The session says the first question; the run parked again elsewhere: the next run's
	reconcile appends the second question, and a later reconcile nothing more."""
	session = store(kind, tmp_path)
	agent, first, second, _ = await parked_twice()
	agent.om._durability = Backend(first)
	await SessionRun(agent, session).record(first, asked="book it", asked_tainted=False)
	agent.om._durability = Backend(second)  # answered through the store, parked again there
	await SessionRun(agent, session).reconcile()
	await SessionRun(agent, session).reconcile()
	replies = [i["content"] for i in await session.get_items() if i["role"] == "agent"]
	assert replies == ["Which day?", "Which time?"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_record_retried_after_its_turn_was_summarised_and_pruned_appends_nothing(
	kind: str, tmp_path: Path
) -> None:
	"""A durable run's last turn recorded, summarised and pruned away: recording it again
	(a retry after a timeout) appends nothing."""
	session = store(kind, tmp_path)
	agent, first, second, ended = await parked_twice()
	agent.om._durability = Backend(ended)
	await SessionRun(agent, session).record(first, asked="book it", asked_tainted=False)
	await SessionRun(agent, session).record(second, asked="Friday", asked_tainted=False)
	await SessionRun(agent, session).record(ended, asked="8 pm", asked_tainted=False)
	await session.add_items(filler(3))
	await session.add_items([summary(len(await session.get_items()))])
	assert await session.prune() > 0
	assert not any(i.get("run_id") == ended.state.run_id for i in await session.get_items())
	await SessionRun(agent, session).record(ended, asked="8 pm", asked_tainted=False)
	assert not any(i.get("run_id") == ended.state.run_id for i in await session.get_items())


@pytest.mark.parametrize("kind", KINDS)
async def test_a_parked_record_retried_after_a_prune_appends_nothing(
	kind: str, tmp_path: Path
) -> None:
	"""A park's reply pruned (its pending item stays): its record retried appends nothing."""
	session = store(kind, tmp_path)
	agent, first, _, _ = await parked_twice()
	agent.om._durability = Backend(first)
	await SessionRun(agent, session).record(first, asked="book it", asked_tainted=False)
	await session.add_items(filler(3))
	await session.add_items([summary(len(await session.get_items()))])
	await session.prune()
	assert [i["role"] for i in await session.get_items() if i.get("run_id")][:1] == ["pending"]
	await SessionRun(agent, session).record(first, asked="book it", asked_tainted=False)
	mine = [i for i in await session.get_items() if i.get("run_id") == first.state.run_id]
	assert [i["role"] for i in mine] == ["pending"]


async def test_a_dry_run_prune_of_a_file_without_sessions_writes_nothing(tmp_path: Path) -> None:
	"""A dry run against a SQLite file that holds no sessions (another store's) makes no table,
	and one against a missing file makes no file."""
	import sqlite3

	other = tmp_path / "runs.db"
	conn = sqlite3.connect(other)
	conn.execute("CREATE TABLE runs (id TEXT)")
	conn.commit()
	conn.close()
	before = snapshot(tmp_path)
	report = await SQLiteSession.prune_store(other, idle_days=0, dry_run=True)
	assert (report.sessions, report.items) == (0, 0)
	assert await SQLiteSession("chat", other).prune(dry_run=True) == 0
	assert await SQLiteSession("chat", tmp_path / "none.db").prune(dry_run=True) == 0
	assert snapshot(tmp_path) == before
	conn = sqlite3.connect(other)
	tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
	conn.close()
	assert tables == {"runs"}


async def test_a_dry_run_prune_of_a_database_without_the_tables_creates_none(
	tmp_path: Path,
) -> None:
	"""SQLAlchemy: a dry run against a database without the session tables leaves it without."""
	sa = pytest.importorskip("sqlalchemy")
	url = f"sqlite:///{tmp_path / 'empty.db'}"
	report = await SQLAlchemySession.prune_store(url, idle_days=0, dry_run=True)
	assert (report.sessions, report.items) == (0, 0)
	assert await SQLAlchemySession("chat", url).prune(dry_run=True) == 0
	engine = sa.create_engine(url)
	try:
		assert sa.inspect(engine).get_table_names() == []
	finally:
		engine.dispose()


@pytest.mark.parametrize("kind", KINDS)
async def test_a_parked_turn_pruned_is_not_reconciled_again(kind: str, tmp_path: Path) -> None:
	"""A park's reply pruned (its pending item stays): the next run's reconcile, the run still
	parked there, appends nothing."""
	session = store(kind, tmp_path)
	agent, first, _, _ = await parked_twice()
	agent.om._durability = Backend(first)
	await SessionRun(agent, session).record(first, asked="book it", asked_tainted=False)
	await session.add_items(filler(3))
	await session.add_items([summary(2)])  # the question summarised, not its pending item
	assert await session.prune() == 2
	await SessionRun(agent, session).reconcile()
	mine = [i for i in await session.get_items() if i.get("run_id") == first.state.run_id]
	assert [i["role"] for i in mine] == ["pending"]


@pytest.mark.parametrize("kind", ["sqlite", "sqlalchemy"])
async def test_a_dry_run_counts_a_store_made_before_pruned_counts_were_kept(
	kind: str, tmp_path: Path
) -> None:
	"""A store without the table of pruned counts (made by an older version): a dry run counts
	what a prune would remove, and makes that table no more than it removes rows."""
	import sqlite3

	session = store(kind, tmp_path, "old")
	await session.add_items([*turn("a"), *turn("b"), summary(2)])
	path = tmp_path / ("sessions.db" if kind == "sqlite" else "sa.db")
	table = "session_pruned" if kind == "sqlite" else "openmolt_session_pruned"
	conn = sqlite3.connect(path)
	conn.execute(f"DROP TABLE {table}")
	conn.commit()
	conn.close()
	if kind == "sqlite":
		report = await SQLiteSession.prune_store(path, dry_run=True)
		fresh = SQLiteSession("old", path)
	else:
		session.engine.dispose()
		SQLAlchemySession._tables.discard(session.engine)
		report = await SQLAlchemySession.prune_store(engine=session.engine, dry_run=True)
		fresh = SQLAlchemySession("old", engine=session.engine)
	assert (report.sessions, report.items) == (1, 2)
	assert await fresh.prune(dry_run=True) == 2
	conn = sqlite3.connect(path)
	tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
	conn.close()
	assert table not in tables
	assert len(await session.get_items()) == 5
