"""What ``agent.resume(state, given=...)`` delivers to the capability that parked: JSON only, as kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from openmolt import Capability, OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.hooks import Park, Proceed, Run
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests.core.test_capabilities import Till

pytestmark = pytest.mark.anyio


class Clerk(Capability):
	"""Parks each payment; goes on once given anything, noting what it was given."""

	name: ClassVar[str] = "clerk"

	def __init__(self) -> None:
		self.given: list[Any] = []

	async def before_tool(self, run: Run, call: Any, tool: Any) -> Any:
		return Proceed() if run.state.ext.get("clerk") else Park("the clerk decides", {"n": 1})

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		self.given.append(given)
		run.state.ext["clerk"] = {"ok": True}


async def _parked(clerk: Clerk) -> tuple[Any, Any, Till]:
	till = Till()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("paid")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[clerk]
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	return agent, parked, till


def _deep(levels: int) -> Any:
	value: Any = "bottom"
	for _ in range(levels):
		value = [value]
	return value


@pytest.mark.parametrize(
	"given",
	[float("nan"), {"amount": float("inf")}, "\ud800", {"a": {1, 2}}, b"bytes", _deep(100_000)],
	ids=["nan", "infinity", "lone-surrogate", "set", "bytes", "too-deep"],
)
async def test_given_that_json_cannot_hold_is_refused_before_anything_runs(given: Any) -> None:
	"""A value JSON cannot hold (a journal could not keep it) is refused, naming ``given``."""
	clerk = Clerk()
	agent, parked, till = await _parked(clerk)
	with pytest.raises(ConfigurationError, match=r"resume: given must be JSON"):
		await agent.resume(parked.state, given=given)
	assert clerk.given == [] and till.ran == []
	done = await agent.resume(parked.state, given="yes")  # still parked: it goes on when given JSON
	assert done.status == "success" and till.ran == [{"amount": 5}]


async def test_given_reaches_the_capability_as_a_journal_gives_it_back() -> None:
	"""Keys become strings and tuples lists at once: a recovered run's capability decides the same."""
	clerk = Clerk()
	agent, parked, _ = await _parked(clerk)
	done = await agent.resume(parked.state, given={1: (2, 3), "k": None})
	assert done.status == "success"
	assert clerk.given and all(g == {"1": [2, 3], "k": None} for g in clerk.given)


async def test_approval_requests_of_a_run_a_capability_parked_names_it_and_given() -> None:
	"""Its status is approval_required, yet it waits for ``given=``: the error says so, not "no approval"."""
	agent, parked, _ = await _parked(Clerk())
	assert parked.status == "approval_required"
	with pytest.raises(ConfigurationError) as caught:
		agent.approval_requests(parked.state)
	message = str(caught.value)
	assert "capability 'clerk'" in message and "given=" in message
	assert "not approval_required" not in message
