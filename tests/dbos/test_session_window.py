"""A durable instance's session of thousands of turns: a run reads its tail, never every item.

`SessionRun.reconcile` (at every new run's start) and `SessionRun.record` (a chat server's turn
appended after the run) read the latest summary and the turns after it, as `read_history` does:
what a run reads does not grow with the session.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from openmolt import OpenMolt, SQLiteSession
from openmolt_core.sessions import SessionRun
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio

TURNS = 5000


class Counted:
	"""Wraps a store and counts the items (and their bytes) each read hands back."""

	def __init__(self, inner: Any) -> None:
		self.inner = inner
		self.session_id = inner.session_id
		self.items = 0
		self.bytes = 0

	def _count(self, items: list[dict[str, Any]]) -> None:
		self.items += len(items)
		self.bytes += sum(len(json.dumps(i)) for i in items)

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		items: list[dict[str, Any]] = await self.inner.get_items(limit)
		self._count(items)
		return items

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		skipped, items = await self.inner.get_latest(limit)
		self._count(items)
		return skipped, items

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		await self.inner.add_items(items)

	async def replace_pending(
		self, run_ids: Sequence[str], items: Sequence[dict[str, Any]]
	) -> None:
		await self.inner.replace_pending(run_ids, items)

	async def pop_item(self) -> dict[str, Any] | None:
		return await self.inner.pop_item()  # type: ignore[no-any-return]

	async def clear(self) -> None:
		await self.inner.clear()


def long_session(turns: int) -> list[dict[str, Any]]:
	"""``turns`` turns, summarised every 100 turns (the latest 10 left verbatim each time)."""
	items: list[dict[str, Any]] = []
	for n in range(turns):
		run = f"old-{n}"
		items.append({"role": "user", "content": f"question {n} " + "x" * 200, "run_id": run})
		items.append(
			{"role": "agent", "content": f"answer {n}", "status": "success", "run_id": run}
		)
		if n % 100 == 99:
			items.append(
				{
					"role": "summary",
					"content": f"the first {n - 9} turns",
					"through": len(items) - 20,
					"notes": [{"content": "likes tea"}],
				}
			)
	return items


def store_for(url: str, tmp_path: Path) -> Any:
	if url.startswith("sqlite"):
		return SQLiteSession("long", tmp_path / "sessions.db")
	from openmolt_core.sessions import SQLAlchemySession

	return SQLAlchemySession("long", url)


async def test_a_durable_run_of_a_long_session_reads_its_tail(url: str, tmp_path: Path) -> None:
	"""5,000 turns: a durable run's reconcile and a chat's record read a few hundred items."""
	inner = store_for(url, tmp_path)
	await inner.add_items(long_session(TURNS))
	session = Counted(inner)
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([[finish("ok", human_message="Noted.")]])
	agent = om.create_agent(name="Host", model=model)
	try:
		result = await agent.run("one more", session=session)
		assert result.status == "success", result.error
		ran = session.items, session.bytes
		session.items = session.bytes = 0
		await SessionRun(agent, session).record(result, asked="one more", asked_tainted=False)
		recorded = session.items
	finally:
		await om.aclose()
	held = await inner.get_items()
	assert len(held) > 2 * TURNS
	# the run's reads: the latest summary and the turns after it, in a window, not 10,000 items
	assert ran[0] <= 300, ran
	assert ran[1] <= 60_000, ran
	assert recorded <= 300, recorded
	# appended once: the record found the turn the run appended
	assert [i["content"] for i in held[-2:]] == ["one more", "Noted."]
	turn = json.loads(model.requests[0].messages[0].content)
	assert turn["earlier"][0]["content"] == f"the first {TURNS - 10} turns"
	assert turn["memory"]["shortTerm"] == "likes tea"
