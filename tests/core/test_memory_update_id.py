"""A memory ``on_update`` callback may take the update's id: stable across a replay, one per update.

A durable run calls the callback at least once (a crash while it runs, before its step is
journaled, calls it again): the id lets the callback apply each update once. The crash itself is
tested on DBOS (tests/dbos/test_memory_crash.py); here, in process, what the callback is given.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._support.sync import takes
from openmolt_core.testing import ScriptedModel, finish, update_memory

from ._journal import Journal, drive

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def _script() -> list[Any]:
	return [
		[update_memory("a"), update_memory("b", memory="longTerm")],
		[update_memory("c", mode="replace")],
		finish("done"),
	]


async def test_a_callback_that_takes_update_id_gets_one_per_update() -> None:
	got: list[tuple[str, str]] = []

	async def short(text: str, update_id: str) -> None:
		got.append((text, update_id))

	def long(text: str, **extra: Any) -> None:  # **kwargs takes it too (a thread: sync)
		got.append((text, extra["update_id"]))

	agent = OpenMolt(entry_points=False).create_agent(
		name="M",
		model=ScriptedModel(_script()),
		memory={"short_term": {"on_update": short}, "long_term": {"on_update": long}},
	)
	result = await agent.run("go")
	run = result.state.run_id
	assert got == [
		("a", f"{run}/memory:1:0"),
		("b", f"{run}/memory:1:1"),
		("c", f"{run}/memory:2:0"),
	]


async def test_a_callback_of_the_text_alone_is_called_as_before() -> None:
	texts: list[str] = []
	agent = OpenMolt(entry_points=False).create_agent(
		name="M",
		model=ScriptedModel(_script()),
		memory={"short_term": {"on_update": texts.append}},  # a builtin: no readable signature
	)
	assert (await agent.run("go")).status == "success"
	assert texts == ["a", "c"]


async def test_the_update_id_is_the_same_when_the_step_runs_again() -> None:
	"""A run whose memory step was not journaled (the crash case) calls again with the same id."""
	got: list[str] = []

	async def note(text: str, update_id: str) -> None:
		got.append(update_id)

	def agent() -> Any:
		return OpenMolt(entry_points=False).create_agent(
			name="M",
			model=ScriptedModel(_script()),
			memory={"short_term": {"on_update": note}},
		)

	first = Journal()
	await drive(agent(), first, "run-1")
	lost = {k: v for k, v in first.values.items() if not k.startswith("memory:2:")}

	class Partial(Journal):
		"""Replays what was journaled; runs the step the crash lost."""

		async def step(self, key: str, fn: Any, **codec: Any) -> Any:
			if key in lost:
				return lost[key] if not codec.get("decode") else codec["decode"](lost[key])
			return await fn()

	before = list(got)
	await drive(agent(), Partial(), "run-1")
	assert before == ["run-1/memory:1:0", "run-1/memory:2:0"]
	assert got[len(before) :] == ["run-1/memory:2:0"]


def test_which_callbacks_take_the_id() -> None:
	def text_only(text: str) -> None: ...
	def named(text: str, update_id: str) -> None: ...
	def keyword(text: str, *, update_id: str = "") -> None: ...
	def anything(*args: Any, **kwargs: Any) -> None: ...
	def positional_only(text: str, update_id: str, /) -> None: ...

	assert not takes(text_only, "update_id")
	assert takes(named, "update_id") and takes(keyword, "update_id")
	assert takes(anything, "update_id") and not takes(anything, "update_id", kwargs=False)
	assert not takes(positional_only, "update_id")
	assert not takes([].append, "update_id")
