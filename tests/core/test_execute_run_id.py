"""A durable engine's ``execute(None, run_id=...)``: the new run has that id from its first hook on."""

from __future__ import annotations

from typing import ClassVar

import pytest

from openmolt import Capability, OpenMolt
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, finish
from tests.core.test_durability import JournalPort

pytestmark = pytest.mark.anyio


class Notes(Capability):
	"""Notes the id of each new run it is shown (as a ledger kept outside would)."""

	name: ClassVar[str] = "notes"

	def __init__(self) -> None:
		self.seen: list[tuple[str, str]] = []

	def new_root_run(self, agent: str, state: RunState) -> None:
		self.seen.append(("root", state.run_id))

	def new_run(self, agent: str, state: RunState) -> None:
		self.seen.append(("new", state.run_id))


async def test_the_new_run_hooks_see_the_id_the_engine_gives() -> None:
	"""``new_root_run`` and ``new_run`` see ``run_id``, as ``agent.start(run_id=...)``'s do."""
	notes = Notes()
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([finish("done")]), capabilities=[notes]
	)
	result = await agent.execute(None, port=JournalPort(), input="go", run_id="run-fixed")
	assert result.status == "success" and result.state.run_id == "run-fixed"
	assert notes.seen == [("root", "run-fixed"), ("new", "run-fixed")]
