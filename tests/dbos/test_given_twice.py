"""A run a capability parked, resumed twice with different words: the second is not dropped unsaid.

The first delivery (``given="yes"``) goes on from the park in a segment of its own; the same word
again (a retry) attaches to it and gets what came of it. Another word (``given="no"``) was
attached to it too, and its caller got the first one's result as if its own word had been used.
It is refused now, as a second decision on a decided call is.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from tests.dbos._segments import Clerk

pytestmark = pytest.mark.anyio


def _agent(om: OpenMolt, looked: list[str], gate: Any = None, began: Any = None) -> Any:
	@tool
	async def look(what: str) -> str:
		"""Look.

		Args:
			what: What.
		"""
		looked.append(what)
		if began is not None:
			began.set()
		if gate is not None:
			await gate.wait()
		return "seen"

	model = ScriptedModel([call_tool("local.look", what="x"), finish("done"), finish("again")])
	return om.create_agent(
		name="Looker", model=model, tools=[look], capabilities=[Clerk(only="local.look")]
	)


async def test_another_word_for_a_park_that_went_on_is_refused(url: str) -> None:
	"""After "yes" went on: "yes" again gets its result; "no" is refused, naming the run."""
	looked: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	agent = _agent(om, looked)
	try:
		parked = await agent.run("look")
		saved = json.loads(json.dumps(parked.state.to_dict()))
		first = await agent.resume(saved, given="yes")
		assert first.status == "success" and looked == ["x"]
		again = await agent.resume(saved, given="yes")  # a retried delivery
		assert again.status == "success" and again.output == first.output
		with pytest.raises(ConfigurationError, match="another word"):
			await agent.resume(saved, given="no")  # before: the first's result, "no" unused
		assert looked == ["x"]
	finally:
		await om.aclose()


async def test_another_word_while_the_first_goes_on_is_refused(url: str) -> None:
	"""Two words at once: the one that starts the segment goes on; the other is refused."""
	looked: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	gate, began = anyio.Event(), anyio.Event()
	agent = _agent(om, looked, gate, began)
	try:
		parked = await agent.run("look")
		saved = json.loads(json.dumps(parked.state.to_dict()))
		ended: list[Any] = []

		async def deliver(word: str) -> None:
			try:
				ended.append((word, (await agent.resume(saved, given=word)).status))
			except ConfigurationError as exc:
				ended.append((word, str(exc)))

		async with anyio.create_task_group() as tg:
			tg.start_soon(deliver, "yes")
			with anyio.fail_after(30):
				await began.wait()
			tg.start_soon(deliver, "no")  # while the first's segment runs
			await anyio.sleep(1.0)
			gate.set()
		assert ("yes", "success") in ended
		[said] = [e[1] for e in ended if e[0] == "no"]
		assert "another word" in said
	finally:
		await om.aclose()
