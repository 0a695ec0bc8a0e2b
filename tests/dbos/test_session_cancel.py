"""A durable session turn under cancellation: recorded once, never twice, never half.

A cancelled run's turn (the question it was asked, and that it ended without an answer) is
appended to its session: by its caller, which hears of the cancel, or by the session's next run
when the caller is gone. The turn and the removal of the run's ``pending`` item go together: a
caller cancelled while they are written leaves both done or neither.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import HumanInputUnavailable, OpenMolt, SQLiteSession
from openmolt_core.errors import ConfigurationError
from openmolt_core.sessions import SQLAlchemySession
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def _store(url: str, tmp_path: Path, session_id: str) -> Any:
	"""The session store beside the durable store: PostgreSQL's database, or a SQLite file."""
	if url.startswith("postgres"):
		return SQLAlchemySession(session_id, url)
	return SQLiteSession(session_id, tmp_path / "sessions.db")


def _turns(items: Sequence[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
	return [(i["role"], i.get("content"), i.get("status")) for i in items]


def _later(question: str) -> str:
	raise HumanInputUnavailable(question)


async def test_a_session_run_cancelled_while_it_runs_records_its_turn_once(
	url: str, tmp_path: Path
) -> None:
	"""Cancelled in its tool: the caller hears it, and the session holds the question and a reply
	that says the run ended without an answer, once; the next run reads them.

	The caller got a plain error and appended nothing: the session kept only the run's
	``pending`` item, which no later run could settle (the backend answered "was cancelled")."""
	began = anyio.Event()

	@tool
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		began.set()
		await anyio.sleep(60)
		return "paid"

	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([call_tool("local.pay", amount=1), finish("next", human_message="Next.")])
	agent = om.create_agent(name="Payer", model=model, tools=[pay])
	session = _store(url, tmp_path, "rent")
	caught: list[BaseException] = []
	try:

		async def ask() -> None:
			try:
				await agent.run("pay the rent", session=session)
			except Exception as exc:
				caught.append(exc)

		async with anyio.create_task_group() as tg:
			tg.start_soon(ask)
			with anyio.fail_after(30):
				await began.wait()
			[marker] = await session.get_items()
			await om.cancel(str(marker["run_id"]))
		assert len(caught) == 1 and isinstance(caught[0], ConfigurationError), caught
		assert "was cancelled" in str(caught[0])
		assert _turns(await session.get_items()) == [
			("user", "pay the rent", None),
			("agent", None, "error"),
		]
		await agent.run("and now?", session=session)
	finally:
		await om.aclose()
	turn = json.loads(model.requests[-1].messages[0].content)
	assert [e["content"] for e in turn["earlier"]] == ["pay the rent", None]
	assert [i["role"] for i in await session.get_items()] == ["user", "agent", "user", "agent"]


async def test_a_turn_parked_then_cancelled_gets_its_end_from_the_next_run_once(
	url: str, tmp_path: Path
) -> None:
	"""Parked on an approval, then cancelled from elsewhere: the next run appends that the turn
	ended, once, and takes its ``pending`` item back; the run after it appends nothing more."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			call_tool("local.pay", amount=1),
			finish("next", human_message="Next."),
			finish("again", human_message="Again."),
		]
	)

	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		return "paid"

	agent = om.create_agent(name="Payer", model=model, tools=[pay], requires_approval=["local.pay"])
	session = _store(url, tmp_path, "parked")
	try:
		parked = await agent.run("pay the rent", session=session)
		assert parked.status == "approval_required"
		assert [i["role"] for i in await session.get_items()] == ["user", "agent", "pending"]
		await om.cancel(parked.state.run_id)
		await agent.run("and now?", session=session)
		await agent.run("again?", session=session)
	finally:
		await om.aclose()
	assert [(role, status) for role, _, status in _turns(await session.get_items())] == [
		("user", None),
		("agent", "approval_required"),
		("agent", "error"),
		("user", None),
		("agent", "success"),
		("user", None),
		("agent", "success"),
	]


class _SlowStore:
	"""A third party's session store (no atomic write of its own), whose appends take a while."""

	def __init__(self, inner: Any) -> None:
		self.session_id = inner.session_id
		self.inner = inner
		self.slow = False
		self.writing = anyio.Event()

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		return list(await self.inner.get_items(limit))

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		if self.slow:
			self.writing.set()
			await anyio.sleep(0.5)
		await self.inner.add_items(items)

	async def pop_item(self) -> dict[str, Any] | None:
		found: dict[str, Any] | None = await self.inner.pop_item()
		return found

	async def clear(self) -> None:
		await self.inner.clear()


@pytest.mark.parametrize("third_party", [False, True], ids=["own-store", "third-party-store"])
async def test_a_caller_cancelled_while_a_turn_is_settled_leaves_it_whole(
	url: str, tmp_path: Path, third_party: bool
) -> None:
	"""A run's caller is cancelled while the turn of a run that ended elsewhere is appended: the
	turn is there once and its ``pending`` item is gone, whatever the moment.

	The item was taken back first and the turn appended after: cancelled in between, the turn was
	lost for good (no item left to find it by)."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[ask_human("which size?")],
			[finish("two", human_message="A mug, size M.")],
			[finish("three", human_message="Yes.")],
		]
	)
	agent = om.create_agent(name="Host", model=model, on_human_input_request=_later)
	inner = _store(url, tmp_path, f"slow-{third_party}")
	session = _SlowStore(inner)
	try:
		parked = await agent.run("buy a mug", session=session)
		await om.durability.answer(parked.state.run_id, "M")  # type: ignore[union-attr]
		with anyio.fail_after(60):
			await om.durability.result(parked.state.run_id)  # type: ignore[union-attr]
		session.slow = True
		target: Any = session if third_party else _OwnStore(session, inner)
		with anyio.move_on_after(30) as scope:
			async with anyio.create_task_group() as tg:

				async def cut() -> None:
					await session.writing.wait()
					scope.cancel()

				tg.start_soon(cut)
				await agent.run("is that all?", session=target)
		assert scope.cancelled_caught
		session.slow = False
		await agent.run("thanks", session=session)
	finally:
		await om.aclose()
	said = [e["content"] for e in json.loads(model.requests[-1].messages[0].content)["earlier"]]
	assert said == ["buy a mug", "which size?", "A mug, size M."]
	assert [i["role"] for i in await inner.get_items()].count("pending") == 0


class _OwnStore(_SlowStore):
	"""The slow store with the built-in stores' atomic write (its inner store's), slowed too."""

	def __init__(self, slow: _SlowStore, inner: Any) -> None:
		super().__init__(inner)
		self.outer = slow

	async def replace_pending(
		self, run_ids: Sequence[str], items: Sequence[dict[str, Any]]
	) -> None:
		self.outer.writing.set()
		await anyio.sleep(0.5)
		await self.inner.replace_pending(run_ids, items)
